//! What a session is given and what it returns: the checked plan of `suite`
//! (and of `ab`, whose plan carries one), its precision target, and the
//! outcome. A file of its own below every other file of the suite that
//! names them, so that none of them imports the folder's door.

use std::path::PathBuf;
use std::time::Duration;

use crate::engine::LoadSettings;
use crate::measure::Sampling;
use crate::model::{Framework, Pairing, Profile, Scenario};
use crate::report::flames::FlameGraphs;
use crate::results::Results;
use crate::sys::CpuList;

/// A checked `suite` invocation.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// Build profile of the servers.
    pub profile: Profile,
    /// Frameworks, deduplicated, in the order given.
    pub frameworks: Vec<Framework>,
    /// Scenarios, deduplicated, in the order given.
    pub scenarios: Vec<Scenario>,
    /// Timings and connections of every run (threads = client CPUs).
    pub settings: LoadSettings,
    /// Rounds; each measures every scenario's variants once.
    pub rounds: u32,
    /// How the variants of a scenario are paired.
    pub pairing: Pairing,
    /// With pairing by slices: the length of one slice.
    pub slice: Duration,
    /// A new server process every round (the default), so that the layout a
    /// process draws varies between rounds and every delta's interval spans
    /// it; `false`: one process per framework and layer count.
    pub server_per_round: bool,
    /// Measure until every delta is this precise (rounds then ignored).
    pub target: Option<PrecisionTarget>,
    /// Latency at a fixed load: each round first measures the baseline's
    /// closed-loop rate, then runs every alternation in the open loop at
    /// this percentage of it (pairing by slices only); `None`: closed loop.
    pub load_percent: Option<f64>,
    /// The `tls` scenario: whether its TLS connections resume sessions
    /// (matters with `settings.requests_per_connection`).
    pub tls_resumption: bool,
    /// Start the servers with `--tcp-nodelay` (TCP_NODELAY on their connections).
    pub tcp_nodelay: bool,
    /// `--threshold-percent`: a change smaller than this does not matter to
    /// the user; an interval of no change that reaches beyond it reads "inconclusive".
    pub threshold_percent: f64,
    /// The `frameworks` scenario: a ratio whose 95 % interval lies within
    /// this margin of 1, percent, is a tie.
    pub tie_margin_percent: f64,
    /// Server `--layers` values, ascending, each measured with its own server start.
    pub layers: Vec<u16>,
    /// CPUs the servers are pinned to (workers = their count).
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to (engine threads = their count).
    pub client_cpus: CpuList,
    /// Folder the run folders are written under.
    pub out: PathBuf,
    /// Run cargo build first.
    pub build: bool,
    /// Attach perf to each server during the measured windows, sampling
    /// this way; `None`: no profiler.
    pub profiler: Option<Sampling>,
    /// `--count`: after the timed rounds, count every delta's two routes in
    /// each framework (as `count` does) and set each delta's counted change
    /// beside its timed one; `None`: time only.
    pub count: Option<CountSettings>,
    /// The `memory` scenario: after the timed rounds (and the count), what a
    /// connection costs each framework in memory, as `memory` measures it
    /// with its defaults; `false`: not measured.
    pub memory: bool,
}

/// How many requests and repeats `ab --count` and `suite --count` count, and whether with perf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountSettings {
    /// The most requests of a route's short stretch (`--requests`).
    pub requests: u64,
    /// Repeats of every route's two stretches (`--repeats`).
    pub repeats: usize,
    /// Count system calls, context switches and page faults with perf (not `--no-perf`).
    pub perf: bool,
}

/// Fixed-width stopping (after Chow & Robbins, "On the asymptotic theory of
/// fixed-width sequential confidence intervals for the mean", Ann. Math.
/// Statist. 36, 1965): rounds go on, per framework and layer count, until
/// every delta's 95 % interval is at most `half_width_percent` on each side
/// of its estimate (after two rounds at least), or the framework's share of
/// `budget` is spent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecisionTarget {
    /// Widest acceptable half-width of an interval, percentage points.
    pub half_width_percent: f64,
    /// Wall time for the whole suite's measurements, shared equally by the
    /// frameworks and layer counts.
    pub budget: Duration,
}

impl PrecisionTarget {
    /// Whether `change`'s interval is as narrow as asked.
    pub fn reached(&self, change: &crate::analysis::Change) -> bool {
        crate::analysis::half_width_points(change).is_some_and(|h| h <= self.half_width_percent)
    }
}

/// How the suite ended.
#[derive(Debug)]
pub struct SuiteOutcome {
    /// The run folder written.
    pub dir: PathBuf,
    /// Everything it wrote.
    pub results: Results,
    /// The newest readable results of the other profiles in the same folder.
    pub other_profiles: Vec<Results>,
    /// The stop flag cut it short.
    pub interrupted: bool,
    /// The flame graphs written, with their shapes (empty without a profiler).
    pub flamegraphs: FlameGraphs,
}

impl SuiteOutcome {
    /// Whether every framework completed and every run was free of failures
    /// (a run short of its schedule only, measured again and still short, is
    /// flagged `short` on its rows and does not fail the session).
    pub fn clean(&self) -> bool {
        self.results.complete
            && self.results.runs.iter().all(|r| !r.figures.is_failure() || r.figures.short_of_schedule_only())
    }
}
