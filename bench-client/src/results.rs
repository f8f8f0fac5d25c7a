//! The results files: `results.json` (schema in `docs/RESULTS.md`), the
//! per-run figures inside it, the deltas, and the tables printed to the
//! terminal and written to `report.md`.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::engine::RunOutcome;
use crate::plan::{Framework, Profile};
use crate::stats::{Failures, LatencySummary};

/// Version of the `results.json` layout; bumped on every change to it.
pub const SCHEMA_VERSION: u32 = 1;

/// The figures of one measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Successful requests over the measured windows (status 200, exact body).
    pub successful: u64,
    /// Failed requests over the measured windows (`failed.connect` excluded).
    pub failed_total: u64,
    /// Failures by kind.
    pub failed: Failures,
    /// Requests written, warm-up included.
    pub sent: u64,
    /// Requests completed during the warm-up (not measured).
    pub warmup_completed: u64,
    /// Requests without a complete response at the deadline.
    pub in_flight_at_deadline: u64,
    /// Connections asked for.
    pub connections_requested: u64,
    /// Connections established, reconnections included.
    pub connections_established: u64,
    /// Reconnections (server closed, or after an error).
    pub reconnects: u64,
    /// Measured time, seconds.
    pub duration_s: f64,
    /// Successful requests per second over `duration_s`.
    pub requests_per_s: f64,
    /// Length of one window, seconds.
    pub window_s: f64,
    /// Successful requests per window, in order; they add up to `successful`.
    pub windows: Vec<u64>,
    /// Failed requests per window, in order; they add up to `failed_total`.
    pub windows_failed: Vec<u64>,
    /// Latency of successful requests, microseconds.
    pub latency_us: LatencySummary,
    /// Server CPU use over the measured windows, percent of one CPU
    /// (mean of the windows); `None` when the server pid was unknown.
    pub server_cpu_percent: Option<f64>,
    /// Server CPU use per window, percent of one CPU.
    pub server_cpu_percent_windows: Vec<f64>,
    /// CPUs the server may run on (100 % each when saturated).
    pub server_cpus: Option<usize>,
    /// The server's CPUs were under 95 % busy: the client, not the server,
    /// may have limited this run.
    pub client_bound: bool,
    /// This client's CPU use over the measured windows, percent of one CPU.
    pub client_cpu_percent: f64,
    /// Client CPU use per window, percent of one CPU.
    pub client_cpu_percent_windows: Vec<f64>,
    /// False when the run was interrupted before its deadline.
    pub complete: bool,
}

impl RunFigures {
    /// Figures of `outcome`, a run of `connections` connections and
    /// `window_s` windows against a server allowed `server_cpus` CPUs.
    pub fn new(outcome: &RunOutcome, connections: usize, window_s: f64, server_cpus: Option<usize>) -> Self {
        let s = &outcome.stats;
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let server_cpu_percent = mean(&outcome.cpu.server);
        let duration_s = outcome.measured.as_secs_f64();
        let successful = s.successful();
        Self {
            successful,
            failed_total: s.failures.requests(),
            failed: s.failures.clone(),
            sent: s.sent,
            warmup_completed: s.warmup_completed,
            in_flight_at_deadline: s.in_flight_at_deadline,
            connections_requested: connections as u64,
            connections_established: s.connections_established,
            reconnects: s.reconnects,
            duration_s,
            requests_per_s: if duration_s > 0.0 { successful as f64 / duration_s } else { 0.0 },
            window_s,
            windows: s.windows.iter().map(|w| w.successful).collect(),
            windows_failed: s.windows.iter().map(|w| w.failed).collect(),
            latency_us: s.latency_summary(),
            server_cpu_percent,
            server_cpu_percent_windows: outcome.cpu.server.clone(),
            server_cpus,
            client_bound: match (server_cpu_percent, server_cpus) {
                (Some(p), Some(n)) => p < crate::cpu::SATURATED_PERCENT * n as f64,
                _ => false,
            },
            client_cpu_percent: mean(&outcome.cpu.client).unwrap_or(0.0),
            client_cpu_percent_windows: outcome.cpu.client.clone(),
            complete: !outcome.interrupted,
        }
    }
}

/// One run of the suite: a framework, a route, a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Framework measured.
    pub framework: Framework,
    /// `payload`, `state` or `floor` (`/plaintext`).
    pub scenario: String,
    /// Variant within the scenario: `per_request`/`preserialized`, `fat`/`arc`, `plaintext`.
    pub variant: String,
    /// Path loaded.
    pub route: String,
    /// Build profile of the server.
    pub profile: Profile,
    /// Round, from 1.
    pub round: u32,
    /// Position of the run within its round, from 1.
    pub position: u32,
    /// The measurements.
    #[serde(flatten)]
    pub figures: RunFigures,
}

/// A scenario's change in one framework, from its first variant to its second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Framework.
    pub framework: Framework,
    /// Scenario.
    pub scenario: String,
    /// Route of the baseline variant.
    pub from: String,
    /// Route of the changed variant.
    pub to: String,
    /// Rounds in which both variants were measured.
    pub rounds: u32,
    /// Median over rounds of the baseline's successful requests.
    pub before_successful: f64,
    /// Median over rounds of the changed variant's successful requests.
    pub after_successful: f64,
    /// `after / before − 1` of the medians, percent.
    pub change_percent: f64,
    /// Smallest of the per-round paired changes, percent.
    pub change_min_percent: f64,
    /// Largest of the per-round paired changes, percent.
    pub change_max_percent: f64,
    /// Median over rounds of the baseline's p99 latency, microseconds.
    pub before_p99_us: f64,
    /// Median over rounds of the changed variant's p99 latency, microseconds.
    pub after_p99_us: f64,
}

/// Where and how the suite ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// `git rev-parse HEAD` of the workspace (with `-dirty` when modified).
    pub commit: String,
    /// `rustc --version`.
    pub rustc: String,
    /// Build profile of the servers.
    pub profile: Profile,
    /// CPU model from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Logical CPUs online.
    pub cores: usize,
    /// Kernel release.
    pub kernel: String,
    /// Start, UTC, RFC 3339.
    pub started_utc: String,
    /// Connections per run.
    pub connections: u64,
    /// Measured duration per run, seconds.
    pub duration_s: f64,
    /// Warm-up per run, seconds.
    pub warmup_s: f64,
    /// Window length, seconds.
    pub window_s: f64,
    /// Per-request timeout, seconds.
    pub timeout_s: f64,
    /// Rounds.
    pub rounds: u32,
    /// Server state layers.
    pub layers: u16,
    /// CPUs the servers were pinned to.
    pub server_cpus: Vec<usize>,
    /// CPUs the client was pinned to.
    pub client_cpus: Vec<usize>,
    /// Server worker threads.
    pub server_workers: usize,
    /// Client engine threads.
    pub client_threads: usize,
    /// Frameworks asked for.
    pub frameworks: Vec<Framework>,
    /// Scenarios asked for.
    pub scenarios: Vec<String>,
}

/// A framework whose runs could not be completed, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameworkFailure {
    /// Framework.
    pub framework: Framework,
    /// One-line reason.
    pub error: String,
}

/// The whole `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// False when the suite was interrupted or a framework failed.
    pub complete: bool,
    /// Settings and machine.
    pub meta: Meta,
    /// Every run, in the order measured.
    pub runs: Vec<RunRecord>,
    /// Per framework and scenario.
    pub deltas: Vec<Delta>,
    /// Frameworks that failed.
    pub failures: Vec<FrameworkFailure>,
}

/// Median of `values` (mean of the middle two for an even count); 0 if empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Writes `value` as pretty JSON to `path` atomically (temporary file, then rename).
///
/// # Errors
/// When the file cannot be written.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(value)?;
    std::fs::write(&tmp, text + "\n").with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))
}

fn signed(p: f64) -> String {
    format!("{p:+.1} %")
}

fn ms(us: f64) -> String {
    format!("{:.2} ms", us / 1000.0)
}

/// The delta table (and each framework's floor), as Markdown.
pub fn delta_table(results: &Results) -> String {
    let m = &results.meta;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Profile `{}` · {} connections · {} s measured after {} s warm-up · median of {} rounds · server on CPU {:?}, client on CPU {:?}\n",
        serde_json::to_value(m.profile).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default(),
        m.connections,
        m.duration_s,
        m.warmup_s,
        m.rounds,
        m.server_cpus,
        m.client_cpus
    );
    out.push_str("| framework | scenario | before (successful) | after (successful) | change | per-round range | p99 before | p99 after |\n");
    out.push_str("|---|---|--:|--:|--:|--:|--:|--:|\n");
    for d in &results.deltas {
        let _ = writeln!(
            out,
            "| {} | {} ({} → {}) | {:.0} | {:.0} | **{}** | {} … {} | {} | {} |",
            d.framework.name(),
            d.scenario,
            d.from,
            d.to,
            d.before_successful,
            d.after_successful,
            signed(d.change_percent),
            signed(d.change_min_percent),
            signed(d.change_max_percent),
            ms(d.before_p99_us),
            ms(d.after_p99_us),
        );
    }
    let floors: Vec<_> = results.runs.iter().filter(|r| r.scenario == "floor").collect();
    if !floors.is_empty() {
        out.push_str("\nFloor (`/plaintext`), median over rounds:\n\n| framework | successful | requests/s | p99 |\n|---|--:|--:|--:|\n");
        let mut frameworks: Vec<Framework> = floors.iter().map(|r| r.framework).collect();
        frameworks.dedup();
        for f in frameworks {
            let runs: Vec<_> = floors.iter().filter(|r| r.framework == f).collect();
            let successful = median(&runs.iter().map(|r| r.figures.successful as f64).collect::<Vec<_>>());
            let rate = median(&runs.iter().map(|r| r.figures.requests_per_s).collect::<Vec<_>>());
            let p99 = median(&runs.iter().map(|r| r.figures.latency_us.p99 as f64).collect::<Vec<_>>());
            let _ = writeln!(out, "| {} | {successful:.0} | {rate:.0} | {} |", f.name(), ms(p99));
        }
    }
    let busy: Vec<f64> = results.runs.iter().filter_map(|r| r.figures.server_cpu_percent).collect();
    if !busy.is_empty() {
        let bound = results.runs.iter().filter(|r| r.figures.client_bound).count();
        let min = busy.iter().copied().fold(f64::INFINITY, f64::min);
        let _ = writeln!(
            out,
            "\nServer CPU busy over the measured windows: median {:.1} %, lowest {min:.1} % ({} CPU(s)); {}",
            median(&busy),
            m.server_cpus.len(),
            if bound == 0 {
                "every run saturated the server: the figures measure the server, not the client.".to_owned()
            } else {
                format!(
                    "**{bound} run(s) client-bound** (server under {} % busy): their figures may measure the client.",
                    crate::cpu::SATURATED_PERCENT
                )
            }
        );
    }
    for failure in &results.failures {
        let _ = writeln!(out, "\n**{} failed:** {}", failure.framework.name(), failure.error);
    }
    if m.profile == Profile::Dev {
        out.push_str("\n> Warning: `dev` builds are unoptimized and do not represent production.\n");
    }
    out
}

/// The whole `report.md`: the tables, every run, and the metadata.
pub fn report(results: &Results) -> String {
    let m = &results.meta;
    let mut out = String::from("# Benchmark report\n\n");
    if !results.complete {
        out.push_str("> **Incomplete**: interrupted, or a framework failed (see below).\n\n");
    }
    out.push_str(&delta_table(results));
    out.push_str("\n## Runs\n\n| framework | scenario | variant | round | successful | failed | requests/s | p50 | p99 | max | in flight at deadline | server CPU | client CPU |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
    for r in &results.runs {
        let f = &r.figures;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.0} | {} | {} | {} | {} | {} | {:.1} % |",
            r.framework.name(),
            r.scenario,
            r.variant,
            r.round,
            f.successful,
            f.failed_total,
            f.requests_per_s,
            ms(f.latency_us.p50 as f64),
            ms(f.latency_us.p99 as f64),
            ms(f.latency_us.max as f64),
            f.in_flight_at_deadline,
            f.server_cpu_percent.map_or_else(
                || "?".to_owned(),
                |p| format!("{p:.1} %{}", if f.client_bound { " (client-bound)" } else { "" })
            ),
            f.client_cpu_percent
        );
    }
    let _ = write!(
        out,
        "\n## Machine and settings\n\n- commit: `{}`\n- rustc: `{}`\n- CPU: {} ({} logical CPUs), kernel {}\n- started: {}\n- connections {}, duration {} s, warm-up {} s, window {} s, timeout {} s, rounds {}, layers {}\n- server CPUs {:?} ({} workers), client CPUs {:?} ({} engine threads)\n",
        m.commit,
        m.rustc,
        m.cpu_model,
        m.cores,
        m.kernel,
        m.started_utc,
        m.connections,
        m.duration_s,
        m.warmup_s,
        m.window_s,
        m.timeout_s,
        m.rounds,
        m.layers,
        m.server_cpus,
        m.server_workers,
        m.client_cpus,
        m.client_threads
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
