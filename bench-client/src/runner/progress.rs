//! `load`'s live line on a terminal: the run's phase, its successful
//! requests so far, their rate over the last second and its failures, read
//! from the engine's live counters four times a second (as wrk and oha
//! show a run in progress). Nothing is drawn when stderr is not a terminal.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::{Live, Timing};

/// How often the line is redrawn.
const TICK: Duration = Duration::from_millis(250);

/// Runs `work` (a run of `timing` starting at `start`) while `live`'s totals
/// are drawn on one line of stderr; the line is cleared when it ends.
pub(super) fn during<T>(live: Option<&Live>, start: Instant, timing: Timing, work: impl FnOnce() -> T) -> T {
    let Some(live) = live else { return work() };
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").unwrap_or_else(|_| ProgressStyle::default_spinner()));
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // (instant, successful) a second back, for the rate.
            let mut history: std::collections::VecDeque<(Instant, u64)> = std::collections::VecDeque::new();
            while !done.load(Ordering::Relaxed) {
                let now = Instant::now();
                let totals = live.totals();
                history.push_back((now, totals.successful));
                while history.len() > 1 && history[0].0 + Duration::from_secs(1) < now {
                    history.pop_front();
                }
                let (then, before) = history[0];
                let span = now.saturating_duration_since(then).as_secs_f64();
                let rate =
                    if span > 0.0 { (totals.successful - before.min(totals.successful)) as f64 / span } else { 0.0 };
                bar.set_message(format!(
                    "{} · {} successful · {rate:.0}/s · {} failed",
                    timing.phase(now.saturating_duration_since(start)),
                    totals.successful,
                    totals.failed()
                ));
                bar.tick();
                std::thread::sleep(TICK);
            }
        });
        let out = work();
        done.store(true, Ordering::Relaxed);
        bar.finish_and_clear();
        out
    })
}
