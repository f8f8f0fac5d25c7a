//! The results file `results.json` (layout in `docs/RESULTS.md`, JSON Schema
//! in `docs/results.schema.json`): the per-run figures, the deltas with their
//! confidence intervals, and reading and writing the file.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::analysis::{self, Change};
use crate::engine::{LoadSettings, RunOutcome};
use crate::plan::{Framework, Profile};
use crate::stats::{Failures, LatencySummary};
use crate::suite::Scenario;
use common::Route;

/// Version of the `results.json` layout; bumped on every change to it.
pub const SCHEMA_VERSION: u32 = 4;

/// Oldest layout [`load`] still reads: version 4 only added keys, each with
/// a default when missing.
pub const OLDEST_READABLE_SCHEMA_VERSION: u32 = 3;

/// Percentiles recorded for latency curves, percent: from 90 % on, the
/// classic HDR ladder steps (90, 95, 99, 99.5, 99.9, …), the tail in detail.
pub const PERCENTILE_LADDER: [f64; 11] = [0.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0];

/// Latency at one percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentilePoint {
    /// Percentile, percent (100 is the maximum).
    pub percentile: f64,
    /// Latency, microseconds.
    pub latency_us: u64,
}

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
    /// Requests outstanding per connection (1: no pipelining).
    #[serde(default = "one")]
    pub pipeline: usize,
    /// Open loop: the requests per second that were due; `None`: closed loop.
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    /// The engine's nap between polls, microseconds (0: it waited in epoll).
    #[serde(default)]
    pub nap_us: u64,
    /// Open loop: requests written more than 2 ms after they were due.
    #[serde(default)]
    pub late_sends: u64,
    /// Open loop: requests due by the deadline and never written.
    #[serde(default)]
    pub unsent_at_deadline: u64,
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
    /// Latency at the percentiles of [`PERCENTILE_LADDER`], microseconds.
    pub latency_percentiles_us: Vec<PercentilePoint>,
    /// Open loop only: latency from the actual write instead of from when
    /// the request was due (not corrected for coordinated omission).
    #[serde(default)]
    pub latency_uncorrected_us: Option<LatencySummary>,
    /// Coefficient of variation of `windows`, percent (`None` under two windows).
    pub window_cv_percent: Option<f64>,
    /// The last third of the windows averaged 5 % or more below the first
    /// third, with a significantly negative slope (see [`analysis::drifts`]).
    pub drift: bool,
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
    /// Client CPU time (user + system) per 1,000 successful requests,
    /// milliseconds; `None` without successful requests.
    #[serde(default)]
    pub client_cpu_ms_per_1k: Option<f64>,
    /// Peak resident set size of the client process, bytes.
    #[serde(default)]
    pub client_peak_rss_bytes: u64,
    /// The server process (pid known) exited during the run, which ended at
    /// the end of the window in which that was seen.
    #[serde(default)]
    pub server_lost: bool,
    /// False when the run was interrupted before its deadline, or lost its
    /// server: the process exited, or any connection attempt failed
    /// (refused, timed out, or no file descriptor left).
    pub complete: bool,
}

fn one() -> usize {
    1
}

impl RunFigures {
    /// Whether the run counts in deltas, sweeps, comparisons and charts: it
    /// ran to its deadline and had successful requests.
    pub fn usable(&self) -> bool {
        self.complete && self.successful > 0
    }

    /// Whether the run failed: failed requests, connection failures, no
    /// successful request, or cut short.
    pub fn is_failure(&self) -> bool {
        self.failed_total > 0 || self.failed.connect > 0 || self.successful == 0 || !self.complete
    }

    /// Figures of `outcome`, a run with `settings` against a server allowed
    /// `server_cpus` CPUs.
    pub fn new(outcome: &RunOutcome, settings: &LoadSettings, server_cpus: Option<usize>) -> Self {
        let s = &outcome.stats;
        let window_s = settings.window.as_secs_f64();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let server_cpu_percent = mean(&outcome.cpu.server);
        let duration_s = outcome.measured.as_secs_f64();
        let successful = s.successful();
        // Only whole windows the run lived through (all of them unless interrupted).
        let lived = if outcome.interrupted || outcome.server_lost {
            usize::try_from((duration_s / window_s.max(1e-9)).floor() as u64).unwrap_or(0).min(s.windows.len())
        } else {
            s.windows.len()
        };
        let measured_windows: Vec<u64> = s.windows[..lived].iter().map(|w| w.successful).collect();
        let client_cpu_percent = mean(&outcome.cpu.client).unwrap_or(0.0);
        Self {
            successful,
            failed_total: s.failures.requests(),
            failed: s.failures.clone(),
            sent: s.sent,
            warmup_completed: s.warmup_completed,
            in_flight_at_deadline: s.in_flight_at_deadline,
            connections_requested: settings.connections.get() as u64,
            connections_established: s.connections_established,
            reconnects: s.reconnects,
            pipeline: settings.pipeline.get(),
            rate_per_s: settings.rate_per_s,
            nap_us: u64::try_from(settings.nap.as_micros()).unwrap_or(u64::MAX),
            late_sends: s.late_sends,
            unsent_at_deadline: s.unsent_at_deadline,
            duration_s,
            requests_per_s: if duration_s > 0.0 { successful as f64 / duration_s } else { 0.0 },
            window_s,
            windows: s.windows.iter().map(|w| w.successful).collect(),
            windows_failed: s.windows.iter().map(|w| w.failed).collect(),
            latency_us: s.latency_summary(),
            latency_percentiles_us: PERCENTILE_LADDER
                .iter()
                .map(|&percentile| PercentilePoint {
                    percentile,
                    latency_us: s.latency_us.value_at_quantile(percentile / 100.0),
                })
                .collect(),
            latency_uncorrected_us: s.latency_uncorrected_us.as_ref().map(LatencySummary::of),
            window_cv_percent: analysis::cv_percent(&measured_windows.iter().map(|&w| w as f64).collect::<Vec<_>>()),
            drift: analysis::drifts(&measured_windows),
            server_cpu_percent,
            server_cpu_percent_windows: outcome.cpu.server.clone(),
            server_cpus,
            client_bound: match (server_cpu_percent, server_cpus) {
                (Some(p), Some(n)) => p < crate::cpu::SATURATED_PERCENT * n as f64,
                _ => false,
            },
            client_cpu_percent,
            client_cpu_percent_windows: outcome.cpu.client.clone(),
            client_cpu_ms_per_1k: (successful > 0)
                .then(|| client_cpu_percent / 100.0 * duration_s * 1e3 / (successful as f64 / 1e3)),
            client_peak_rss_bytes: outcome.client_peak_rss_bytes,
            server_lost: outcome.server_lost,
            complete: !outcome.interrupted && !outcome.server_lost && s.failures.connect == 0,
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
    /// State layers the server ran with (`--layers`).
    pub layers: u16,
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
    /// State layers the server ran with.
    pub layers: u16,
    /// Rounds in which both variants were measured.
    pub rounds: u32,
    /// Median over rounds of the baseline's successful requests.
    pub before_successful: f64,
    /// Median over rounds of the changed variant's successful requests.
    pub after_successful: f64,
    /// Paired change over rounds with its 95 % interval and verdict
    /// (`change_percent`, `ci_low_percent`, `ci_high_percent`, `verdict`).
    #[serde(flatten)]
    pub change: Change,
    /// Smallest of the per-round paired changes, percent.
    pub change_min_percent: f64,
    /// Largest of the per-round paired changes, percent.
    pub change_max_percent: f64,
    /// Coefficient of variation of the baseline's successful requests across rounds, percent.
    pub before_cv_percent: Option<f64>,
    /// The same for the changed variant.
    pub after_cv_percent: Option<f64>,
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
    /// Server state layers: one value, or the values of a sweep, ascending.
    pub layers: Vec<u16>,
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
    /// The profiler attached during the measured windows, if any.
    pub profiler: Option<String>,
    /// The client's ceiling measured by `calibrate` at the start, successful
    /// requests per second against the built-in responder with these
    /// connections and CPUs; `None` when it could not be measured.
    #[serde(default)]
    pub client_ceiling_per_s: Option<f64>,
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

/// The paired deltas of every framework, layer count and scenario measured
/// in `runs`: for each round with both variants, the baseline and the
/// changed run.
pub fn deltas(runs: &[RunRecord], frameworks: &[Framework], scenarios: &[Scenario], layers: &[u16]) -> Vec<Delta> {
    let mut out = Vec::new();
    for (&framework, &layers) in frameworks.iter().flat_map(|f| layers.iter().map(move |l| (f, l))) {
        for (&scenario, &(after_name, after_route)) in
            scenarios.iter().flat_map(|s| s.variants().iter().skip(1).map(move |v| (s, v)))
        {
            let (before_name, before_route) = scenario.variants()[0];
            let of_scenario =
                |r: &&RunRecord| r.framework == framework && r.layers == layers && r.scenario == scenario.name();
            let pairs: Vec<(&RunRecord, &RunRecord)> = runs
                .iter()
                .filter(of_scenario)
                .filter(|r| r.variant == before_name)
                .filter_map(|b| {
                    runs.iter()
                        .filter(of_scenario)
                        .find(|a| a.round == b.round && a.variant == after_name)
                        .map(|a| (b, a))
                })
                .filter(|(b, a)| b.figures.usable() && a.figures.usable())
                .collect();
            if pairs.is_empty() {
                continue;
            }
            let before: Vec<f64> = pairs.iter().map(|p| p.0.figures.successful as f64).collect();
            let after: Vec<f64> = pairs.iter().map(|p| p.1.figures.successful as f64).collect();
            let per_round: Vec<f64> = before.iter().zip(&after).map(|(b, a)| (a / b - 1.0) * 100.0).collect();
            let p99 = |runs: &mut dyn Iterator<Item = &RunRecord>| {
                median(&runs.map(|r| r.figures.latency_us.p99 as f64).collect::<Vec<_>>())
            };
            out.push(Delta {
                framework,
                scenario: scenario.name().to_owned(),
                from: Route::get(before_route).path.to_owned(),
                to: Route::get(after_route).path.to_owned(),
                layers,
                rounds: u32::try_from(pairs.len()).unwrap_or(u32::MAX),
                before_successful: median(&before),
                after_successful: median(&after),
                change: analysis::paired_change(&before, &after),
                change_min_percent: per_round.iter().copied().fold(f64::INFINITY, f64::min),
                change_max_percent: per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                before_cv_percent: analysis::cv_percent(&before),
                after_cv_percent: analysis::cv_percent(&after),
                before_p99_us: p99(&mut pairs.iter().map(|p| p.0)),
                after_p99_us: p99(&mut pairs.iter().map(|p| p.1)),
            });
        }
    }
    out
}

/// One layer count of a [`SweepLine`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// State layers.
    pub layers: u16,
    /// Successful requests per second, geometric mean over rounds.
    pub rate_per_s: f64,
    /// Server CPU time per successful request, µs: the server's measured
    /// CPU use (or its CPU count when unknown) over the rate, geometric mean
    /// over rounds.
    pub cost_us: f64,
}

/// One framework and variant across the layer counts of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepLine {
    /// Framework.
    pub framework: Framework,
    /// Variant (`fat`, `arc`, `plaintext`, …).
    pub variant: String,
    /// One point per layer count, ascending.
    pub points: Vec<SweepPoint>,
    /// Least-squares slope of the cost per request over the layer count:
    /// what one layer adds, µs per request (`None` under two layer counts).
    pub added_per_layer_us: Option<f64>,
}

/// The layer sweep of `results`: one line per framework and variant with
/// runs at more than one layer count.
pub fn sweep(results: &Results) -> Vec<SweepLine> {
    let cpus = results.meta.server_cpus.len().max(1) as f64;
    let cost_us = |f: &RunFigures| f.server_cpu_percent.map_or(cpus, |p| p / 100.0) * 1e6 / f.requests_per_s;
    let mut keys: Vec<(Framework, String)> = results.runs.iter().map(|r| (r.framework, r.variant.clone())).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|(framework, variant)| {
            let points: Vec<SweepPoint> = results
                .meta
                .layers
                .iter()
                .filter_map(|&layers| {
                    let runs: Vec<&RunFigures> = results
                        .runs
                        .iter()
                        .filter(|r| r.framework == framework && r.variant == variant && r.layers == layers)
                        .map(|r| &r.figures)
                        .filter(|f| f.usable())
                        .collect();
                    let rates: Vec<f64> = runs.iter().map(|f| f.requests_per_s).collect();
                    let costs: Vec<f64> = runs.iter().map(|f| cost_us(f)).collect();
                    let rate_per_s = analysis::geometric_mean_interval(&rates).0;
                    (rate_per_s > 0.0).then(|| SweepPoint {
                        layers,
                        rate_per_s,
                        cost_us: analysis::geometric_mean_interval(&costs).0,
                    })
                })
                .collect();
            if points.len() < 2 {
                return None;
            }
            let xs: Vec<f64> = points.iter().map(|p| f64::from(p.layers)).collect();
            let ys: Vec<f64> = points.iter().map(|p| p.cost_us).collect();
            Some(SweepLine { framework, variant, added_per_layer_us: analysis::slope(&xs, &ys), points })
        })
        .collect()
}

/// Reads a `results.json`, given as the file or the run folder holding it.
///
/// # Errors
/// A missing, unreadable, truncated or corrupted file, or one of another
/// schema version; the message names the file.
pub fn load(path: &Path) -> anyhow::Result<Results> {
    let file = if path.is_dir() { path.join("results.json") } else { path.to_path_buf() };
    let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
    let value: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not valid JSON (truncated or corrupted?)", file.display()))?;
    let version = value.get("schema_version").and_then(serde_json::Value::as_u64);
    anyhow::ensure!(
        version.is_some_and(|v| (u64::from(OLDEST_READABLE_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&v)),
        "{} has schema_version {}, this bench-client reads {OLDEST_READABLE_SCHEMA_VERSION} to {SCHEMA_VERSION}",
        file.display(),
        version.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
    );
    serde_json::from_value(value).with_context(|| format!("{} does not match the results layout", file.display()))
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

/// Builders of synthetic runs for unit tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::time::Duration;

    use super::*;
    use crate::cpu::CpuWindows;
    use crate::stats::RunStats;

    /// A run of `framework`/`scenario`/`variant` in `round` with `successful`
    /// requests over one 1 s window, complete or interrupted.
    pub(crate) fn run(
        f: Framework,
        scenario: &str,
        variant: &str,
        round: u32,
        successful: u64,
        complete: bool,
    ) -> RunRecord {
        let mut stats = RunStats::new(1, false);
        for _ in 0..successful {
            stats.record_success(0, 100, 100);
        }
        stats.sent = successful;
        let outcome = RunOutcome {
            stats,
            measured: Duration::from_secs(1),
            interrupted: !complete,
            server_lost: false,
            cpu: CpuWindows { server: vec![100.0], client: vec![50.0] },
            client_peak_rss_bytes: 0,
        };
        let one = std::num::NonZeroUsize::MIN;
        let second = Duration::from_secs(1);
        let settings = LoadSettings::closed(one, one, Duration::ZERO, second, second, second);
        RunRecord {
            framework: f,
            scenario: scenario.to_owned(),
            variant: variant.to_owned(),
            route: "/".to_owned(),
            profile: Profile::Release,
            layers: 10,
            round,
            position: 1,
            figures: RunFigures::new(&outcome, &settings, Some(1)),
        }
    }

    /// A results file around `runs`, with its deltas.
    pub(crate) fn results(runs: Vec<RunRecord>) -> Results {
        let deltas = deltas(&runs, &[Framework::Actix, Framework::Axum], &[Scenario::Payload, Scenario::State], &[10]);
        Results {
            schema_version: SCHEMA_VERSION,
            complete: true,
            meta: Meta {
                commit: "c".to_owned(),
                rustc: "r".to_owned(),
                profile: Profile::Release,
                cpu_model: "cpu".to_owned(),
                cores: 2,
                kernel: "k".to_owned(),
                started_utc: "2026-11-30T00:00:00Z".to_owned(),
                connections: 1,
                duration_s: 1.0,
                warmup_s: 0.0,
                window_s: 1.0,
                timeout_s: 2.0,
                rounds: 3,
                layers: vec![10],
                server_cpus: vec![0],
                client_cpus: vec![1],
                server_workers: 1,
                client_threads: 1,
                frameworks: vec![Framework::Actix, Framework::Axum],
                scenarios: vec!["payload".to_owned(), "state".to_owned()],
                profiler: None,
                client_ceiling_per_s: None,
            },
            runs,
            deltas,
            failures: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::run;
    use super::*;

    #[test]
    fn deltas_pair_by_round_one_per_changed_variant_and_skip_unusable_runs() {
        let f = Framework::Axum;
        let mut runs = Vec::new();
        for (round, base) in [(1, 1000), (2, 2000), (3, 1500)] {
            runs.push(run(f, "payload", "per_request", round, base, true));
            runs.push(run(f, "payload", "preserialized", round, base * 11 / 10, true));
            runs.push(run(f, "payload", "cached", round, base, true));
        }
        // An interrupted round-4 pair with an absurd ratio must not count.
        runs.push(run(f, "payload", "per_request", 4, 5000, true));
        runs.push(run(f, "payload", "preserialized", 4, 10, false));
        let d = deltas(&runs, &[f], &[Scenario::Payload], &[10]);
        assert_eq!(d.len(), 2, "preserialized and cached, each from per_request");
        let pre = d.iter().find(|d| d.to == "/api/devices/preserialized").unwrap();
        assert_eq!(pre.rounds, 3);
        assert!((pre.change.change_percent - 10.0).abs() < 1e-9, "{pre:?}");
        assert_eq!(pre.change.verdict, crate::analysis::Verdict::Faster);
        assert_eq!(pre.before_successful, 1500.0);
        let cached = d.iter().find(|d| d.to == "/api/devices/cached").unwrap();
        assert_eq!(cached.change.change_percent, 0.0);
        assert_eq!(cached.rounds, 3, "round 4 had no cached run");
    }

    #[test]
    fn interrupted_runs_judge_only_the_windows_they_lived() {
        let r = run(Framework::Axum, "floor", "plaintext", 1, 0, false);
        assert!(!r.figures.usable() && r.figures.is_failure());
        assert_eq!(r.figures.window_cv_percent, None);
        assert!(!r.figures.drift);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
