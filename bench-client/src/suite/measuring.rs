//! One run under the progress display: what the session's steps and
//! `bench-client flamegraph` share, in a file of its own so that the
//! profiler and the session, which both measure, need not import each other.

use std::sync::atomic::AtomicBool;

use super::progress::Progress;
use crate::engine::Load;
use crate::measure::{self, Measured, Observers, Perf, Start};

/// Runs `load` against the `servers` (pids) with the progress display, and
/// with `perf` (when given) recording the first during the measured windows.
///
/// # Errors
/// When the engine cannot start.
pub(super) fn measure_run(
    load: &Load,
    servers: &[u32],
    perf: Option<&Perf>,
    progress: &Progress,
    label: &str,
    stop: &AtomicBool,
) -> anyhow::Result<Measured> {
    let observers = Observers { servers, perf, live: None };
    progress.during(label, load.settings.timing, || measure::run(load, observers, Start::now(), stop))
}
