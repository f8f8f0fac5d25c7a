//! The suite's progress display: overall runs done and time left, and the
//! current run's phase (warm-up, window k of n). Drawn on stderr only when
//! stdout is a terminal; per-run result lines go to stderr either way,
//! through [`Progress::line`], so they never tear the bars.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::engine::Timing;

/// The two bars of the suite.
#[derive(Debug)]
pub(super) struct Progress {
    multi: MultiProgress,
    overall: ProgressBar,
    run: ProgressBar,
}

impl Progress {
    /// A display for `total_runs` runs; hidden when stdout is not a terminal.
    pub(super) fn new(total_runs: u64) -> Self {
        let target =
            if std::io::stdout().is_terminal() { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let multi = MultiProgress::with_draw_target(target);
        let overall = multi.add(ProgressBar::new(total_runs));
        overall.set_style(
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {pos}/{len} runs · {elapsed} elapsed · ~{eta} left")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        overall.set_prefix("suite");
        let run = multi.add(ProgressBar::new(1));
        run.set_style(
            ProgressStyle::with_template("{prefix:>8} [{bar:30}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        run.set_prefix("run");
        Self { multi, overall, run }
    }

    /// Prints a result line above the bars.
    pub(super) fn line(&self, text: &str) {
        self.multi.suspend(|| eprintln!("{text}"));
    }

    /// Shows `label`'s phase while `work` runs: a run of `timing`, starting now.
    pub(super) fn during<T>(&self, label: &str, timing: Timing, work: impl FnOnce() -> T) -> T {
        let windows = u32::try_from(timing.windows()).unwrap_or(u32::MAX);
        let start = Instant::now();
        let total = timing.warmup() + timing.window() * windows;
        self.run.set_length(u64::try_from(total.as_millis()).unwrap_or(u64::MAX).max(1));
        self.run.set_position(0);
        let done = AtomicBool::new(false);
        let out = std::thread::scope(|scope| {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    let elapsed = start.elapsed();
                    self.run.set_message(format!("{label} · {}", timing.phase(elapsed)));
                    self.run.set_position(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
            let out = work();
            done.store(true, Ordering::Relaxed);
            out
        });
        self.overall.inc(1);
        out
    }

    /// Removes the bars.
    pub(super) fn finish(&self) {
        self.run.finish_and_clear();
        self.overall.finish_and_clear();
    }
}
