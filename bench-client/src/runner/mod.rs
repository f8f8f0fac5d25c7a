//! The use cases of the commands that measure one target, below the command
//! line that checks their flags: `load` (one URL under load) and `watch`
//! (one process's CPU). Each takes a checked plan and returns what it wrote.
//!
//! Imports the layers below it (`report`, `results`, `measure`,
//! `preflight`, `telemetry`, `engine`, `sys`); only the command line is above.

mod load;
mod progress;
mod watch;

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use self::load::{LoadPlan, run as load};
pub use self::watch::{WatchPlan, Watched, one_named, run as watch};
use crate::results;
use crate::sys::sleep_until;
use crate::telemetry::Telemetry;

/// How long a process stays up after its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linger {
    /// This long.
    For(Duration),
    /// Until stopped (Ctrl-C, SIGTERM).
    Forever,
}

impl Linger {
    /// Sleeps as long as this says, or until `stop` is set.
    pub fn wait(self, stop: &AtomicBool) {
        match self {
            Self::For(d) if d.is_zero() => {}
            Self::For(d) => {
                sleep_until(Instant::now() + d, stop);
            }
            Self::Forever => while sleep_until(Instant::now() + Duration::from_secs(3600), stop) {},
        }
    }
}

/// What `load` and `watch` do once measured: write `report` to `json` when
/// given, tell the metrics endpoint the run is done, and linger.
///
/// # Errors
/// An unwritable JSON file.
fn conclude<T: Serialize>(
    report: &T,
    json: Option<&Path>,
    telemetry: Option<&Telemetry>,
    linger: Linger,
    stop: &AtomicBool,
) -> anyhow::Result<()> {
    if let Some(path) = json {
        results::emit(path, report)?;
    }
    if let Some(t) = telemetry {
        t.done();
    }
    linger.wait(stop);
    Ok(())
}
