//! The results contract: `results.json` (layout in `docs/RESULTS.md`, JSON
//! Schema in `docs/results.schema.json`), `load --json` and `watch --json`,
//! and what is computed from results: paired deltas, the layer sweep, every
//! route's cost in proportion, the comparison of two results, the exact
//! merge of several clients' runs. Nothing here runs a load or prints.
//!
//! Imports `measure` (one run's figures), `model`, `analysis` and `sys`
//! (the files it writes) below it.

mod block;
mod compare;
mod counted;
mod deltas;
mod file;
pub mod fixtures;
mod folder;
mod latency;
mod memory;
mod merge;
mod proportion;
mod reports;
mod rivals;
mod slo;
mod sweep;

use serde::{Deserialize, Serialize};

pub use self::block::{BEGIN_MARKER, Block, BlockError, FOLD_BYTES, blocks, write_block};
pub use self::compare::{Basis, Comparison, Row, SESSION_SD_PERCENT, compare};
pub use self::counted::{
    COUNT_SCHEMA_VERSION, Count, CountChange, CountDelta, CountReport, CountRow, NO_RATIO, OverRepeats, Provenance,
};
pub use self::deltas::{Over, ab_deltas, deltas};
pub use self::file::{emit, read, read_count, read_load, read_loads, read_memory, read_watch, results_file, write};
pub use self::folder::{create_run_dir, latest_of_other_profiles, link_latest};
pub use self::latency::{LatencyDelta, latency_deltas};
pub use self::memory::{HeapPoints, Held, MEMORY_SCHEMA_VERSION, MemoryRepeat, MemoryReport, MemoryServer};
pub use self::merge::{Input, MergeError, MergeOptions, Refusal, merge};
pub use self::proportion::{DeltaCost, RouteCost, cost_us, delta_costs, route_costs};
pub use self::reports::{ClientRow, LoadReport, MergeInfo, ServerRow, WatchReport};
pub use self::rivals::{Confirmed, Ratio, Rival, Standing, TIE_MARGIN_PERCENT, confirmed, rivals};
pub use self::slo::{Objective, SloError, SloVerdict, parse_slo};
pub use self::sweep::{SweepLine, SweepPoint, sweep};
use crate::analysis::Change;
use crate::measure::RunFigures;
use crate::model::{Framework, Pairing, Profile, RunKey, Scenario, Variant};

/// Version of the `results.json` layout (and of `load --json`, `merge
/// --json` and `watch --json`); bumped on every change to it. 6 added the
/// latency histograms, the start barrier, the realtime start of the
/// windows, the client's label and the split over clients; 7 the
/// `fortunes` scenario and its variants (values only); 8 the accounting of
/// retries, churn and the connection ramp (their counters and
/// `churn_allowed`); 9 a server per round, the
/// machine's noise and the µs saved per request; 10 `ab`'s own answers per
/// side (`meta.ab.expect_status`, `meta.ab.changes`) and `load --slo`'s verdicts (`slo`); 11 the
/// latency deltas at a fixed load (`meta.load_percent`, `block_latency_us`, `deltas[].latency`);
/// 12 null for a figure not measured; 13 the counted changes (`counted`, `deltas[].counted`);
/// 14 the `http2` scenario (its variants, `meta.http2_settings`); 15 the `frameworks` scenario
/// (`rivals`: every pair of frameworks head to head); 16 the `memory` scenario (`memory`); 17 the
/// `middleware` scenario (its variants, values only); 18 the `extractors` scenario (its
/// variants, values only); 19 the `routes` scenario (its variants, values only); 20 the warm-up's
/// protocol failures in `failed.protocol` (`warmup_failed_protocol`).
pub const SCHEMA_VERSION: u32 = 20;

/// Oldest layout [`read`] still reads: versions 4 to 6, 8 to 11, 13 to 17 and 20 only
/// added keys, each with a default when missing, and 7, 14, 17, 18 and 19 values (`merge` needs
/// version 6: histograms).
pub const OLDEST_READABLE_SCHEMA_VERSION: u32 = 3;

/// One run of the suite: a framework, a route, a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Framework measured.
    pub framework: Framework,
    /// `payload`, `state`, `fortunes` or `floor` (`/plaintext`).
    pub scenario: Scenario,
    /// Variant within the scenario: `per_request`/`preserialized`/`cached`, `fat`/`arc`,
    /// `fortunes`/`fortunes_cached`, `plaintext`.
    pub variant: Variant,
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
    pub scenario: Scenario,
    /// Route of the baseline variant.
    pub from: String,
    /// The baseline and the changed variant, in the session that measured
    /// them (not in the file: a delta read back names them by `from` and
    /// `to` alone).
    #[serde(skip)]
    pub variants: Option<(Variant, Variant)>,
    /// Route of the changed variant.
    pub to: String,
    /// State layers the server ran with.
    pub layers: u16,
    /// Rounds in which both variants were measured.
    pub rounds: u32,
    /// Pairs the change is computed from: `rounds` with pairing by rounds,
    /// the blocks of slices of those rounds with pairing by slices.
    #[serde(default)]
    pub pairs: u32,
    /// Median over rounds of the baseline's successful requests.
    pub before_successful: f64,
    /// Median over rounds of the changed variant's successful requests.
    pub after_successful: f64,
    /// Median over rounds of the baseline's successful requests per second
    /// (in an alternation, over its own slices; 0 in files before schema 11).
    #[serde(default)]
    pub before_per_s: f64,
    /// Median over rounds of the changed variant's successful requests per second.
    #[serde(default)]
    pub after_per_s: f64,
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
    /// With `--target-ci-points`: whether the interval reached the target (else
    /// the budget ran out first); `None` without a target.
    #[serde(default)]
    pub target_reached: Option<bool>,
    /// Server CPU saved per successful request, µs: the mean over rounds of
    /// the baseline's cost minus the changed route's (each the server's CPU
    /// in that route's own slices ÷ its successful requests); negative when
    /// the change costs more. Unlike the percentage it does not depend on
    /// how fast the machine runs the rest of the request. `None` without the
    /// server's CPU.
    #[serde(default)]
    pub saved_us: Option<f64>,
    /// Its 95 % Student-t interval over the rounds, µs; `None` under two rounds.
    #[serde(default)]
    pub saved_ci_us: Option<(f64, f64)>,
    /// With `--load-percent`: the change of each latency percentile at the
    /// offered rate, paired by blocks (`results/latency.rs`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<LatencyDelta>,
    /// With `--count`: the same change counted (instructions, allocations,
    /// bytes, system calls per request of `to` against `from`, each with
    /// Welch's interval over the repeats); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<CountDelta>,
}

impl Delta {
    /// Its route, as its rows name it: `to` when both sides load one route
    /// (`ab`), else `from → to`.
    pub fn from_to(&self) -> String {
        if self.from == self.to { self.to.clone() } else { format!("{} → {}", self.from, self.to) }
    }
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
    pub scenarios: Vec<Scenario>,
    /// The profiler attached during the measured windows, if any.
    pub profiler: Option<String>,
    /// How the variants were paired for the deltas (`rounds` in files
    /// written before pairing by slices existed).
    #[serde(default = "rounds")]
    pub pairing: Pairing,
    /// With `slices`: the length of one slice, seconds.
    #[serde(default)]
    pub slice_s: Option<f64>,
    /// `ab` only: the two sides compared.
    #[serde(default)]
    pub ab: Option<AbMeta>,
    /// With `--target-ci-points`: the half-width asked of every delta's interval,
    /// percentage points (rounds then ran until it or the budget was reached).
    #[serde(default)]
    pub target_ci_percent: Option<f64>,
    /// The client's ceiling measured by `calibrate` at the start, successful
    /// requests per second against the built-in responder with these
    /// connections and CPUs; `None` when it could not be measured.
    #[serde(default)]
    pub client_ceiling_per_s: Option<f64>,
    /// Every round started its servers anew, so the deltas' intervals span
    /// server processes (`false` in files written before it did).
    #[serde(default)]
    pub server_per_round: bool,
    /// With `--load-percent`: each scenario's variants ran in the open loop
    /// at this share of the baseline's closed-loop rate, measured at the
    /// start of each round; `None`: closed loop, the servers saturated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_percent: Option<f64>,
    /// `--threshold-percent` of the session: a "no significant change"
    /// whose interval reaches beyond it reads "inconclusive" (`None` in
    /// files before schema 11).
    #[serde(default)]
    pub threshold_percent: Option<f64>,
    /// With `--requests-per-connection`: each connection closed by the
    /// client after this many responses and opened again; `None`: keep-alive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_per_connection: Option<u64>,
    /// With the `tls` scenario: whether its TLS connections resumed sessions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_resumption: Option<bool>,
    /// The servers ran with `--tcp-nodelay`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tcp_nodelay: bool,
    /// What on the machine moves the numbers, one line each, read before the
    /// first run (pinned CPUs busy, governor, turbo, SMT, huge pages, a VM).
    #[serde(default)]
    pub noise: Vec<String>,
    /// With the `http2` scenario: what each framework's server granted in
    /// its first `SETTINGS` frame (h2c, read in preflight), its defaults.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub http2_settings: Vec<Http2Grant>,
}

/// The HTTP/2 settings a framework's server granted (RFC 9113 §6.5.2),
/// with what an absent setting means filled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Http2Grant {
    /// Framework.
    pub framework: Framework,
    /// Streams a client may have open at once per connection; `None`: unbounded.
    pub max_concurrent_streams: Option<u32>,
    /// Each stream's initial flow-control window, bytes.
    pub initial_window_size: u32,
    /// The largest frame payload it accepts, bytes.
    pub max_frame_size: u32,
    /// Its HPACK decoder's table, bytes.
    pub header_table_size: u32,
    /// The largest header list it accepts, bytes; `None`: unbounded.
    pub max_header_list_size: Option<u32>,
}

impl Http2Grant {
    /// What `framework`'s server granted in `settings`.
    pub fn of(framework: Framework, settings: &crate::engine::http2::Settings) -> Self {
        Self {
            framework,
            max_concurrent_streams: settings.max_concurrent_streams,
            initial_window_size: settings.initial_window_size,
            max_frame_size: settings.max_frame_size,
            header_table_size: settings.header_table_size,
            max_header_list_size: settings.max_header_list_size,
        }
    }
}

/// What `bench-client ab` compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbMeta {
    /// The BEFORE revision as given (`the working tree`, a ref).
    pub before: String,
    /// Its commit (`worktree` for the working tree).
    pub before_commit: String,
    /// Its servers' `--layers`.
    pub before_layers: u16,
    /// The AFTER revision as given.
    pub after: String,
    /// Its commit.
    pub after_commit: String,
    /// Its servers' `--layers`.
    pub after_layers: u16,
    /// The status every response of both sides carries (`--expect-status`).
    #[serde(default = "status_ok")]
    pub expect_status: u16,
    /// Where the sides answer differently, per framework and route (each
    /// side's responses are verified against its own answer); empty when
    /// they answer alike.
    #[serde(default)]
    pub changes: Vec<AbChange>,
}

fn status_ok() -> u16 {
    200
}

/// A route whose answer differs between BEFORE and AFTER, as preflight
/// fetched it from the servers of the first round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbChange {
    /// Framework.
    pub framework: Framework,
    /// Path.
    pub route: String,
    /// What differs: status, `Content-Type`, length and the first bytes
    /// that differ.
    pub change: String,
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
    /// With `--count`: what each delta's routes cost per request, counted
    /// (the `count.json` of the session's count, also written beside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counted: Option<CountReport>,
    /// With the `memory` scenario: what a connection costs each framework
    /// in memory (the `memory.json` of the session's memory run, also
    /// written beside).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryReport>,
    /// With the `frameworks` scenario: every route's pairs of frameworks
    /// head to head, their ratios and standings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rivals: Vec<Rival>,
}

fn rounds() -> Pairing {
    Pairing::Rounds
}

impl RunRecord {
    /// The run type it belongs to.
    pub fn key(&self) -> RunKey {
        RunKey { framework: self.framework, layers: self.layers, scenario: self.scenario, variant: self.variant }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::run;
    use super::*;

    #[test]
    fn interrupted_runs_judge_only_the_windows_they_lived() {
        let r = run(Framework::Axum, "floor", "plaintext", 1, 0, false);
        assert!(!r.figures.usable() && r.figures.is_failure());
        assert_eq!(r.figures.window_cv_percent, None);
        assert!(!r.figures.drift);
    }
}
