//! The files of single runs, beside `results.json`: what `load --json`
//! writes (one client's run, or several clients' runs merged by `merge`),
//! and what `watch --json` writes (the server's CPU on its own host).
//! Layouts in `docs/RESULTS.md`.

use serde::{Deserialize, Serialize};

use super::SloVerdict;
use crate::measure::RunFigures;

/// What `load --json FILE` (and `merge --json FILE`) writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Version of the results layout.
    pub schema_version: u32,
    /// URL loaded.
    pub url: String,
    /// Engine threads (merged: over all clients).
    pub threads: usize,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// Clients the load was split over (`--clients`); 1 for a client alone.
    #[serde(default = "one")]
    pub clients: u32,
    /// This client's segment (`--segment`), from 0; `None` for a client
    /// alone and for a merged report.
    #[serde(default)]
    pub segment: Option<u32>,
    /// A merged report: how it was merged, and each client's figures; `None`
    /// for one client's own run.
    #[serde(default)]
    pub merge: Option<MergeInfo>,
    /// The measurements (merged: summed counts and windows, percentiles of
    /// the added histograms).
    #[serde(flatten)]
    pub figures: RunFigures,
    /// `--slo`: each bound and what the run made of it (empty without).
    #[serde(default)]
    pub slo: Vec<SloVerdict>,
    /// `-n`: the successful requests this client was to reach before its
    /// `--duration` ended (absent without `-n`, and in a merged report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_asked: Option<u64>,
}

impl LoadReport {
    /// `-n` asked for more successful requests than the run reached before
    /// its `--duration` ended it: `(asked, reached)`.
    pub fn short_of_requests_asked(&self) -> Option<(u64, u64)> {
        let asked = self.requests_asked?;
        (self.figures.successful < asked).then_some((asked, self.figures.successful))
    }
}

fn one() -> u32 {
    1
}

/// How a merged report was made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeInfo {
    /// False when `--force` merged inputs that would otherwise be refused.
    pub aligned: bool,
    /// `--force` was given.
    pub forced: bool,
    /// The refusals `--force` overrode, one line each (empty when aligned).
    pub overridden: Vec<String>,
    /// Largest start spread accepted (`--tolerance`), milliseconds.
    pub tolerance_ms: u64,
    /// Latest minus earliest `measure_start_unix_ms` over the inputs
    /// (clients, and the server's `watch`), milliseconds.
    pub start_spread_ms: u64,
    /// One row per client, in the order given.
    pub clients: Vec<ClientRow>,
    /// The `watch` file the server's CPU came from (`merge --server`).
    pub server: Option<ServerRow>,
}

/// One client of a merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRow {
    /// The file it was read from, as given.
    pub file: String,
    /// Its label (host or pod name).
    pub label: String,
    /// Its segment.
    pub segment: Option<u32>,
    /// Connections it held.
    pub connections_requested: u64,
    /// Its successful requests.
    pub successful: u64,
    /// Its failed requests.
    pub failed_total: u64,
    /// Its successful requests per second; `None` over no measured time.
    pub requests_per_s: Option<f64>,
    /// Its own p99 latency, microseconds; `None` without a successful
    /// request (files before schema 12 wrote 0, read as `None`).
    #[serde(deserialize_with = "zero_absent")]
    pub latency_p99_us: Option<u64>,
    /// Its own CPU use, percent of one CPU; `None` when not sampled.
    pub client_cpu_percent: Option<f64>,
    /// Its `measure_start_unix_ms` minus the earliest input's, milliseconds.
    pub start_offset_ms: u64,
    /// Whether its run was complete.
    pub complete: bool,
}

/// Reads a latency, a 0 (files before schema 12: nothing measured, since
/// every latency is recorded as at least 1 µs) as `None`.
fn zero_absent<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.filter(|&us| us > 0))
}

/// The server side of a merged report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ServerRow {
    /// The `watch` file, as given.
    pub file: String,
    /// Its label (host or pod name).
    pub label: String,
    /// The process watched.
    pub process: String,
    /// Its pid on its host.
    pub pid: u32,
}

/// What `watch --json FILE` writes: one process's CPU use per window, on
/// the same planned windows as the clients' runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchReport {
    /// Version of the results layout.
    pub schema_version: u32,
    /// The host it ran on (`--label`; by default the host name).
    pub label: String,
    /// The process watched.
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`).
    pub process: String,
    /// CPUs the process may run on; `None` when unreadable.
    pub server_cpus: Option<usize>,
    /// The start barrier (`--start-at`), milliseconds since the Unix epoch.
    pub start_at_unix_ms: Option<u64>,
    /// The realtime clock when the first window began, milliseconds since
    /// the Unix epoch.
    pub measure_start_unix_ms: u64,
    /// Warm-up before the first window, seconds.
    pub warmup_s: f64,
    /// Length of one window, seconds.
    pub window_s: f64,
    /// Planned measured duration, seconds (a whole number of windows).
    pub duration_s: f64,
    /// Mean of the windows, percent of one CPU; `None` without a window.
    pub server_cpu_percent: Option<f64>,
    /// CPU use per window, percent of one CPU (fewer than planned when the
    /// process exited or `watch` was interrupted).
    pub server_cpu_percent_windows: Vec<f64>,
    /// The process exited during the windows; sampling ended with the
    /// window in which that was seen.
    pub server_lost: bool,
    /// Every planned window was sampled.
    pub complete: bool,
}

impl WatchReport {
    /// Planned windows: `duration_s / window_s`.
    pub fn planned_windows(&self) -> usize {
        if self.window_s > 0.0 { (self.duration_s / self.window_s).round() as usize } else { 0 }
    }
}
