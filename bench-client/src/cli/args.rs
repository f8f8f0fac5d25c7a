//! Flag groups several subcommands share, and the parsers of flag values.
//! Values are parsed strictly and the original text is quoted in errors.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::engine::{Rate, Timing};
use crate::measure::profiler::CallGraph;
use crate::sys::CpuList;

/// Where the server (or `calibrate`'s responder) and the client run.
#[derive(Debug, Clone, Args)]
pub struct CpuArgs {
    /// CPUs the server is pinned to, e.g. 0 or 0-1; server workers = their count.
    #[arg(long, default_value = "0")]
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to, e.g. 1 or 2-3; engine threads = their count.
    #[arg(long, default_value = "1")]
    pub client_cpus: CpuList,
}

impl CpuArgs {
    /// Checks that this process may use both lists.
    ///
    /// # Errors
    /// A CPU outside this process's affinity, named with its flag.
    pub fn check(&self) -> anyhow::Result<()> {
        self.server_cpus.check_available().context("--server-cpus")?;
        self.client_cpus.check_available().context("--client-cpus")
    }

    /// Engine threads: one per client CPU.
    pub fn client_threads(&self) -> NonZeroUsize {
        NonZeroUsize::new(self.client_cpus.len()).unwrap_or(NonZeroUsize::MIN)
    }
}

/// Where results go.
#[derive(Debug, Clone, Args)]
pub struct OutArgs {
    /// Folder results are written under.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// How perf walks the sampled stacks (`--call-graph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CallGraphChoice {
    /// DWARF call frame information over 64 KiB of stack per sample: stacks reach their
    /// thread entry through the C library; heavier to record and to fold.
    Dwarf,
    /// Frame pointers: light, but stacks sampled in glibc (send, recv, malloc) are cut there.
    Fp,
}

impl From<CallGraphChoice> for CallGraph {
    fn from(choice: CallGraphChoice) -> Self {
        match choice {
            CallGraphChoice::Dwarf => Self::Dwarf,
            CallGraphChoice::Fp => Self::FramePointers,
        }
    }
}

/// A percentage such as `2` or `2.5%`.
pub(super) fn percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("'{text}' is not a percentage such as 2 or 2.5")),
    }
}

/// A duration such as `10s` or `500ms` (zero allowed).
pub(super) fn duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("'{text}' is not a duration such as 10s or 500ms: {e}"))
}

/// A duration longer than zero.
pub(super) fn positive_duration(text: &str) -> Result<Duration, String> {
    let d = duration(text)?;
    if d.is_zero() { Err(format!("'{text}' must be longer than zero")) } else { Ok(d) }
}

/// An open-loop rate, requests per second.
pub(super) fn rate(text: &str) -> Result<Rate, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(Rate::new)
        .ok_or_else(|| format!("'{text}' is not a rate in requests per second such as 20000 (above 0, at most 1e9)"))
}

/// The timing of a run, checked once: `--window` must divide `--duration`.
///
/// # Errors
/// A duration that is not a whole number of windows (both quoted).
pub(super) fn timing(warmup: Duration, duration: Duration, window: Duration) -> anyhow::Result<Timing> {
    Timing::new(warmup, duration, window).map_err(|_| {
        anyhow::anyhow!(
            "--duration {} is not a whole number of --window {}",
            humantime::format_duration(duration),
            humantime::format_duration(window)
        )
    })
}

/// A count the parser already kept at 1 or more.
pub(super) fn nonzero(n: u32) -> NonZeroUsize {
    NonZeroUsize::new(n as usize).unwrap_or(NonZeroUsize::MIN)
}
