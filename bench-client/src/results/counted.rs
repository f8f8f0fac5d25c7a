//! The contract of `count`'s file (`count.json`): what a request costs each
//! framework on each route, counted under callgrind, with every repeat kept
//! so a reader can recompute each interval.

use serde::{Deserialize, Serialize};

use crate::analysis;

/// Version of `count.json`'s shape.
pub const COUNT_SCHEMA_VERSION: u32 = 1;

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
    /// Requests of the short stretch; the long one has twice as many.
    pub requests: u64,
    /// Connections the requests go over (one after another on each): the
    /// concurrency at which the counts hold.
    pub connections: u64,
    /// Every framework and route counted.
    pub rows: Vec<CountRow>,
}

/// What one route of one framework costs, per repeat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountRow {
    /// The framework (`actix`, `axum`, `rocket`, or a command's name).
    pub framework: String,
    /// The route's path.
    pub route: String,
    /// Per repeat: user-space instructions per request, the slope between
    /// the short and the long stretch (what every stretch pays once cancels).
    pub instructions_per_request: Vec<f64>,
    /// Per repeat: calls into the allocator per request, the same way.
    pub allocations_per_request: Vec<f64>,
    /// Per repeat: instructions a stretch pays once whatever its requests
    /// (opening and closing its connection, the measurement's own commands):
    /// the per-connection cost, apart from the per-request one.
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
