//! The contract of `count`'s file (`count.json`): what a request costs each
//! framework on each route, counted under callgrind, with every repeat kept
//! so a reader can recompute each interval.

use serde::{Deserialize, Serialize};

use crate::analysis;

/// Version of `count.json`'s shape.
pub const COUNT_SCHEMA_VERSION: u32 = 2;

/// What one `count` session measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountReport {
    /// [`COUNT_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The commit measured (`-dirty` with uncommitted changes), the machine and the date.
    pub commit: String,
    /// The CPU model (instructions compare builds on one kind of CPU).
    pub cpu_model: String,
    /// When the session started, RFC 3339, UTC.
    pub started_utc: String,
    /// The servers' Cargo profile.
    pub profile: String,
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
    /// System calls per request (absent in files of version 1).
    #[serde(default)]
    pub system_calls: Option<CountChange>,
}

impl CountDelta {
    /// `after` against `before` on their route: each count's change with
    /// Welch's interval over the repeats (system calls when both have them).
    pub fn of(before: &CountRow, after: &CountRow) -> Self {
        let calls = (!before.system_calls_per_request.is_empty() && !after.system_calls_per_request.is_empty())
            .then(|| CountChange::of(&before.system_calls_per_request, &after.system_calls_per_request));
        Self {
            route: before.route.clone(),
            before: before.framework.clone(),
            after: after.framework.clone(),
            instructions: CountChange::of(&before.instructions_per_request, &after.instructions_per_request),
            allocations: CountChange::of(&before.allocations_per_request, &after.allocations_per_request),
            system_calls: calls,
        }
    }
}

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
    /// sides are equal and exact (allocations often are), the change is 0 %
    /// with an interval of width 0.
    pub fn of(before: &[f64], after: &[f64]) -> Self {
        let c = analysis::unpaired_change(before, after);
        let exact = before.len() >= 2
            && after.len() >= 2
            && before.iter().chain(after).all(|v| *v == before[0])
            && before[0] > 0.0;
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
    /// Per repeat: system calls per request, the same way (callgrind's
    /// `sysCount`; empty in files of version 1).
    #[serde(default)]
    pub system_calls_per_request: Vec<f64>,
    /// Per repeat: the instructions of a connection opened and closed with
    /// no request (accepting it, its buffers, closing it, and the
    /// measurement's own commands): the per-connection cost, apart.
    pub instructions_per_connection: Vec<f64>,
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
