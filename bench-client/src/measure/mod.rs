//! One measured run: the engine's load with every observer around it, in one
//! thread scope: the per-window CPU sampler of the server and the client
//! (which also watches the server's pid), and optionally `perf` recording
//! the server during the measured windows, its samples folded (`perf.rs`;
//! what folded stacks are drawn into is the report's). The result is turned
//! into [`RunFigures`].
//!
//! A run starts at once or at a realtime barrier shared by several clients
//! ([`Barrier`]); either way it is timed from one monotonic [`Start`].
//!
//! Imports the engine and `sys` below it; the suite, `load`, `watch` and
//! `calibrate` call [`run`] from above.

mod barrier;
mod blocks;
mod counted;
mod cpu;
mod events;
mod figures;
mod heap;
mod judged;
mod perf;

use std::sync::atomic::{AtomicBool, Ordering};

pub use self::barrier::{Barrier, BarrierError, MAX_BARRIER_AHEAD, STEP_TOLERANCE, Start, unix_ms_now};
pub use self::blocks::{BLOCK_PERCENTILES, BlockLatency};
pub use self::counted::{Callgrind, Counted, ensure_under_valgrind, exchange};
pub use self::cpu::{CpuWindows, sample_windows};
pub use self::events::{Kernel, PerfStat};
pub use self::figures::{PERCENTILE_LADDER, PercentilePoint, RunFigures, SATURATED_PERCENT};
pub use self::heap::{Heap, Memcheck};
pub use self::judged::{OFFERED_SHORTFALL_PERCENT, Shortfall};
pub use self::perf::{CallGraph, DEFAULT_FREQUENCY_HZ, Perf, SAMPLE_PERIOD_NS, Sampling, fold};
use crate::engine::{self, Live, Load, Outcome, Slicing};
use crate::sys::{monotonic_ns, peak_rss_bytes, sleep_until};

/// What is watched during a run besides the load itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Observers<'a> {
    /// The servers' pids (one, or two for `ab`): their CPU use is sampled
    /// per window (summed), and the run ends with the window in which one is
    /// seen gone.
    pub servers: &'a [u32],
    /// Records the (first) server during the measured windows; with
    /// slices, every route's samples apart.
    pub perf: Option<&'a Perf>,
    /// Where the engine threads publish their totals during the run, for a
    /// metrics endpoint (`--metrics-addr`).
    pub live: Option<&'a Live>,
}

/// A run with what its observers saw.
#[derive(Debug)]
pub struct Measured {
    /// The engine's counts.
    pub outcome: Outcome,
    /// The stop flag ended the run early.
    pub interrupted: bool,
    /// The server process (known pid) exited: the run ended at the end of
    /// the window in which that was seen.
    pub server_lost: bool,
    /// CPU use of the server and of this client per measured window.
    pub cpu: CpuWindows,
    /// Peak resident set size of this process so far, bytes (`VmHWM`).
    pub client_peak_rss_bytes: u64,
    /// With `perf`: the folded stacks recorded, one profile per route of
    /// the load (a sample goes to the route whose slice it was taken in), or
    /// why there are none.
    pub folded: Option<anyhow::Result<Vec<String>>>,
    /// When the run started (its warm-up), and the barrier it waited for.
    pub start: Start,
}

/// Runs `load` with its observers from `start` (`Start::now()`, or what a
/// [`Barrier`] returned) until its deadline, `stop`, or the loss of the
/// server.
///
/// # Errors
/// When the engine cannot start or its event loop fails.
pub fn run(load: &Load, observers: Observers<'_>, start: Start, stop: &AtomicBool) -> anyhow::Result<Measured> {
    let timing = load.settings.timing;
    let measure_start = start.instant + timing.warmup();
    let lost = AtomicBool::new(false);
    // The observers' stop: set once the engine has returned before its
    // deadline (`stop`, the server lost, `-n` reached, an error), so they end
    // with it; at the deadline they take their last samples.
    let halt = AtomicBool::new(false);
    let (outcome, cpu, folded) = std::thread::scope(|scope| {
        let halt = &halt;
        let sampler = scope
            .spawn(|| sample_windows(observers.servers, measure_start, timing.window(), timing.windows(), halt, &lost));
        let recorder = scope.spawn(|| {
            let perf = observers.perf?;
            let pid = *observers.servers.first()?;
            let file = std::env::temp_dir().join(format!("bench-{}-{pid}.perf.data", std::process::id()));
            if !sleep_until(measure_start, halt) {
                return None;
            }
            let recording = match perf.attach(pid, &file) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            sleep_until(measure_start + timing.duration(), halt);
            let start_ns = monotonic_ns(measure_start);
            let window_ns = Slicing::slice_ns(timing.window());
            let offset =
                |t: i128| i64::try_from(t - start_ns).unwrap_or(if t < start_ns { i64::MIN } else { i64::MAX });
            let part_of = |t: i128| load.slicing.as_ref().map_or(0, |s| s.route_at(offset(t), window_ns));
            Some(recording.finish(load.routes.len(), &part_of))
        });
        let outcome = engine::run_live(load, start.instant, &[stop, &lost], observers.live);
        if !matches!(&outcome, Ok(o) if !o.stopped && !o.reached) {
            halt.store(true, Ordering::Relaxed);
        }
        let cpu = sampler.join().unwrap_or_default();
        let folded = recorder.join().unwrap_or_else(|_| Some(Err(anyhow::anyhow!("the profiler thread panicked"))));
        (outcome, cpu, folded)
    });
    let outcome = outcome?;
    let interrupted = outcome.stopped && stop.load(Ordering::Relaxed);
    let server_lost = !interrupted && lost.load(Ordering::Relaxed);
    Ok(Measured { outcome, interrupted, server_lost, cpu, client_peak_rss_bytes: peak_rss_bytes(), folded, start })
}
