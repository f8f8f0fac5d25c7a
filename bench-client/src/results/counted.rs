//! The contract of `count`'s file (`count.json`): what a request costs each
//! framework on each route, counted (instructions and allocations under
//! callgrind, bytes under memcheck, system calls, context switches and page
//! faults by perf on the native process), with every repeat kept so a
//! reader can recompute each interval. [`Count`] lists the counts once: the
//! table, the deltas and the CI files go through it.

use serde::{Deserialize, Serialize};

use crate::analysis;

/// Version of `count.json`'s shape (4: rows over h2c, `--http2-streams`).
pub const COUNT_SCHEMA_VERSION: u32 = 4;

/// Where and when a `count` or `memory` session measured, and of which
/// build: what a reader needs to set its figures beside another's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The workspace's commit (`-dirty` with uncommitted changes).
    pub commit: String,
    /// The CPU model (instructions and bytes compare builds on one kind of CPU).
    pub cpu_model: String,
    /// When the session started, RFC 3339, UTC.
    pub started_utc: String,
    /// The servers' Cargo profile (`release`, `dev`; in `memory`, `command`
    /// for `--cmd` servers).
    pub profile: String,
}

impl std::fmt::Display for Provenance {
    /// `release build, commit abc, CPU, 2026-12-03T08:00:00Z`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} build, commit {}, {}, {}", self.profile, self.commit, self.cpu_model, self.started_utc)
    }
}

/// What one `count` session measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountReport {
    /// [`COUNT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Where and when it was counted, and of which build.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// `--requests`: the most requests of a short stretch (each row says
    /// its own, sized to about 24 million instructions, at least 200).
    pub requests: u64,
    /// Connections the requests go over (one after another on each): the
    /// concurrency at which the counts hold.
    pub connections: u64,
    /// Every route of every server was counted (false: interrupted or
    /// failed, the rows are those counted before).
    #[serde(default)]
    pub complete: bool,
    /// Every server and route counted.
    pub rows: Vec<CountRow>,
    /// With two servers: the second against the first, per route.
    #[serde(default)]
    pub deltas: Vec<CountDelta>,
}

/// The second server against the first on one route.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountDelta {
    /// The route's path.
    pub route: String,
    /// The first server's name.
    pub before: String,
    /// The second server's name.
    pub after: String,
    /// Instructions per request.
    pub instructions: CountChange,
    /// Allocations per request.
    pub allocations: CountChange,
    /// System calls per request under callgrind (absent in files of version 1).
    #[serde(default)]
    pub system_calls: Option<CountChange>,
    /// Bytes allocated per request (from version 3, when both sides have them).
    #[serde(default)]
    pub bytes_allocated: Option<CountChange>,
    /// System calls per request of the native process, by perf.
    #[serde(default)]
    pub native_system_calls: Option<CountChange>,
    /// Context switches per request, by perf.
    #[serde(default)]
    pub context_switches: Option<CountChange>,
    /// Page faults per request, by perf.
    #[serde(default)]
    pub page_faults: Option<CountChange>,
}

impl CountDelta {
    /// `after` against `before` on their route: each count's change with
    /// Welch's interval over the repeats (system calls when both have them).
    pub fn of(before: &CountRow, after: &CountRow) -> Self {
        let change = |count: Count| {
            let (b, a) = (count.per_request(before), count.per_request(after));
            (!b.is_empty() && !a.is_empty()).then(|| CountChange::of(b, a))
        };
        Self {
            route: before.route.clone(),
            before: before.framework.clone(),
            after: after.framework.clone(),
            instructions: CountChange::of(&before.instructions_per_request, &after.instructions_per_request),
            allocations: CountChange::of(&before.allocations_per_request, &after.allocations_per_request),
            system_calls: change(Count::CallgrindSystemCalls),
            bytes_allocated: change(Count::BytesAllocated),
            native_system_calls: change(Count::SystemCalls),
            context_switches: change(Count::ContextSwitches),
            page_faults: change(Count::PageFaults),
        }
    }

    /// The change of `count`, where both sides counted it.
    pub fn change(&self, count: Count) -> Option<&CountChange> {
        match count {
            Count::Instructions => Some(&self.instructions),
            Count::Allocations => Some(&self.allocations),
            Count::BytesAllocated => self.bytes_allocated.as_ref(),
            Count::SystemCalls => self.native_system_calls.as_ref(),
            Count::CallgrindSystemCalls => self.system_calls.as_ref(),
            Count::ContextSwitches => self.context_switches.as_ref(),
            Count::PageFaults => self.page_faults.as_ref(),
        }
    }
}

/// One count of a request's cost: what it is, where it comes from, and
/// where a row keeps its repeats. Every table, delta and CI measure of
/// the counted session lists these, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// User-space instructions (callgrind's `Ir`).
    Instructions,
    /// Calls into the allocator (callgrind: calls of `malloc`, `calloc`, `realloc`, …).
    Allocations,
    /// Bytes asked of the allocator (memcheck's heap tree, `totB`).
    BytesAllocated,
    /// System calls of the native process (perf, `raw_syscalls:sys_enter`).
    SystemCalls,
    /// Context switches of the native process (perf).
    ContextSwitches,
    /// Page faults of the native process (perf).
    PageFaults,
    /// System calls under callgrind (`sysCount`), whose threads run one at a
    /// time: shown where perf's are not.
    CallgrindSystemCalls,
}

impl Count {
    /// Every count, in the order tables show them.
    pub const ALL: [Self; 7] = [
        Self::Instructions,
        Self::Allocations,
        Self::BytesAllocated,
        Self::SystemCalls,
        Self::ContextSwitches,
        Self::PageFaults,
        Self::CallgrindSystemCalls,
    ];

    /// Its key in the CI files (`instructions`, `bytes-allocated`, …).
    pub fn key(self) -> &'static str {
        match self {
            Self::Instructions => "instructions",
            Self::Allocations => "allocations",
            Self::BytesAllocated => "bytes-allocated",
            Self::SystemCalls => "system-calls",
            Self::ContextSwitches => "context-switches",
            Self::PageFaults => "page-faults",
            Self::CallgrindSystemCalls => "system-calls-under-callgrind",
        }
    }

    /// What one of it is, in words (`system calls`), for headers and units.
    pub fn noun(self) -> &'static str {
        match self {
            Self::Instructions => "instructions",
            Self::Allocations => "allocations",
            Self::BytesAllocated => "bytes allocated",
            Self::SystemCalls => "system calls",
            Self::ContextSwitches => "context switches",
            Self::PageFaults => "page faults",
            Self::CallgrindSystemCalls => "system calls under callgrind",
        }
    }

    /// Its unit in the CI files (`instructions/request`, …).
    pub fn unit(self) -> &'static str {
        match self {
            Self::Instructions => "instructions/request",
            Self::Allocations => "allocations/request",
            Self::BytesAllocated => "bytes/request",
            Self::SystemCalls => "system calls/request",
            Self::ContextSwitches => "context switches/request",
            Self::PageFaults => "page faults/request",
            Self::CallgrindSystemCalls => "system calls under callgrind/request",
        }
    }

    /// Decimals a table shows it with.
    pub fn decimals(self) -> usize {
        match self {
            Self::Instructions | Self::BytesAllocated => 0,
            _ => 2,
        }
    }

    /// A row's repeats of it, per request (empty where it was not counted).
    pub fn per_request(self, row: &CountRow) -> &[f64] {
        match self {
            Self::Instructions => &row.instructions_per_request,
            Self::Allocations => &row.allocations_per_request,
            Self::BytesAllocated => &row.bytes_allocated_per_request,
            Self::SystemCalls => &row.native_system_calls_per_request,
            Self::ContextSwitches => &row.context_switches_per_request,
            Self::PageFaults => &row.page_faults_per_request,
            Self::CallgrindSystemCalls => &row.system_calls_per_request,
        }
    }

    /// A row's repeats of it for a connection opened and closed with no
    /// request (counted for instructions, bytes and system calls; empty otherwise).
    pub fn per_connection(self, row: &CountRow) -> &[f64] {
        match self {
            Self::Instructions => &row.instructions_per_connection,
            Self::BytesAllocated => &row.bytes_allocated_per_connection,
            Self::SystemCalls => &row.system_calls_per_connection,
            _ => &[],
        }
    }

    /// The counts a table of `rows` shows: each some row has, and the
    /// system calls under callgrind only where no row has perf's.
    pub fn shown(rows: &[CountRow]) -> Vec<Self> {
        let has = |c: Self| rows.iter().any(|r| !c.per_request(r).is_empty());
        Self::ALL
            .into_iter()
            .filter(|&c| has(c) && (c != Self::CallgrindSystemCalls || !has(Self::SystemCalls)))
            .collect()
    }
}

/// The verdict of a change with no ratio: a side counted 0 (or less), the other not.
pub const NO_RATIO: &str = "no ratio: a side counted 0";

/// How one count changed: percent, with Welch's 95 % interval over the
/// repeats (on logs), and what the interval says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountChange {
    /// After over before, minus one, percent (geometric means).
    pub change_percent: f64,
    /// Lower bound of the 95 % interval, percent; `None` under two repeats a side.
    pub ci_low_percent: Option<f64>,
    /// Upper bound of the 95 % interval, percent.
    pub ci_high_percent: Option<f64>,
    /// `more` (the interval above zero: costlier), `fewer`, or
    /// `no significant change` (or `too few repeats`).
    pub verdict: String,
}

impl CountChange {
    /// The change from the repeats `before` to the repeats `after`. When both
    /// sides are equal and exact (allocations often are, page faults are
    /// often 0), the change is 0 % with an interval of width 0. A side with a
    /// repeat at or below 0 (nothing counted) and the other not equal to it
    /// has no ratio: [`NO_RATIO`], 0 % and no interval.
    pub fn of(before: &[f64], after: &[f64]) -> Self {
        let exact = before.len() >= 2
            && after.len() >= 2
            && before.iter().chain(after).all(|v| *v == before[0])
            && before[0] >= 0.0;
        if !exact && before.iter().chain(after).any(|v| *v <= 0.0) {
            return Self {
                change_percent: 0.0,
                ci_low_percent: None,
                ci_high_percent: None,
                verdict: NO_RATIO.to_owned(),
            };
        }
        let c = analysis::unpaired_change(before, after);
        let (low, high) = if exact { (Some(0.0), Some(0.0)) } else { (c.ci_low_percent, c.ci_high_percent) };
        let verdict = match (low, high) {
            (Some(l), _) if l > 0.0 => "more",
            (_, Some(h)) if h < 0.0 => "fewer",
            (Some(_), Some(_)) => "no significant change",
            _ => "too few repeats",
        };
        Self {
            change_percent: if exact { 0.0 } else { c.change_percent },
            ci_low_percent: low,
            ci_high_percent: high,
            verdict: verdict.to_owned(),
        }
    }

    /// As an [`analysis::Change`] whose verdict reads more as slower, for
    /// the one regression rule (`Better::Lower`).
    pub fn as_change(&self) -> analysis::Change {
        analysis::Change {
            change_percent: self.change_percent,
            ci_low_percent: self.ci_low_percent,
            ci_high_percent: self.ci_high_percent,
            verdict: match self.verdict.as_str() {
                "more" => analysis::Verdict::Slower,
                "fewer" => analysis::Verdict::Faster,
                "no significant change" => analysis::Verdict::NoSignificantChange,
                _ => analysis::Verdict::TooFewRounds,
            },
        }
    }
}

/// What one route of one framework costs, per repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountRow {
    /// The framework (`actix`, `axum`, `rocket`, or a command's name).
    pub framework: String,
    /// The route's path.
    pub route: String,
    /// Requests of its short stretch (the long one has twice as many):
    /// `--requests`, or fewer for a heavy route (sized to about 24 million
    /// instructions, at least 200 requests).
    #[serde(default)]
    pub requests: u64,
    /// Per repeat: user-space instructions per request, the slope between
    /// the short and the long stretch (what every stretch pays once cancels).
    pub instructions_per_request: Vec<f64>,
    /// Per repeat: calls into the allocator per request, the same way.
    pub allocations_per_request: Vec<f64>,
    /// Per repeat: system calls per request under callgrind, the same way
    /// (its `sysCount`; empty in files of version 1).
    #[serde(default)]
    pub system_calls_per_request: Vec<f64>,
    /// Per repeat: bytes allocated per request, the same slope on a process
    /// under memcheck (its heap tree's `totB`; from version 3).
    #[serde(default)]
    pub bytes_allocated_per_request: Vec<f64>,
    /// Per repeat: system calls per request of the native process, the same
    /// slope, by perf (`raw_syscalls:sys_enter`; from version 3, empty with `--no-perf`).
    #[serde(default)]
    pub native_system_calls_per_request: Vec<f64>,
    /// Per repeat: context switches per request of the native process, by perf.
    #[serde(default)]
    pub context_switches_per_request: Vec<f64>,
    /// Per repeat: page faults per request of the native process, by perf.
    #[serde(default)]
    pub page_faults_per_request: Vec<f64>,
    /// Per repeat: the instructions of a connection opened and closed with
    /// no request (accepting it, its buffers, closing it, and the
    /// measurement's own commands): the per-connection cost, apart.
    pub instructions_per_connection: Vec<f64>,
    /// Per repeat: bytes allocated by a connection opened and closed with no
    /// request, under memcheck (from version 3).
    #[serde(default)]
    pub bytes_allocated_per_connection: Vec<f64>,
    /// Per repeat: system calls of a connection opened and closed with no
    /// request, native, by perf (from version 3).
    #[serde(default)]
    pub system_calls_per_connection: Vec<f64>,
}

/// A figure over the repeats: the mean and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OverRepeats {
    /// Mean of the repeats.
    pub mean: f64,
    /// 95 % interval of the mean (Student's t), `None` under two repeats.
    pub interval: Option<(f64, f64)>,
}

impl OverRepeats {
    /// The mean and interval of `values`; `None` when there are none.
    pub fn of(values: &[f64]) -> Option<Self> {
        analysis::mean_interval(values).map(|(mean, interval)| Self { mean, interval })
    }

    /// The interval's half width, percent of the mean.
    pub fn half_width_percent(&self) -> Option<f64> {
        self.interval.filter(|_| self.mean != 0.0).map(|(lo, hi)| (hi - lo) / 2.0 / self.mean.abs() * 100.0)
    }
}
