//! `bench-client calibrate`: the client's own ceiling on these CPUs.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::Args;

use super::Outcome;
use super::args::{CpuArgs, duration, nonzero, positive_duration, timing};
use crate::calibrate::{self, CalibratePlan};
use crate::engine::LoadSettings;
use crate::report::ceiling_line;

/// Flags of `calibrate`, as typed.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Keep-alive connections.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// Measured duration (one window), e.g. 3s.
    #[arg(long, default_value = "3s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up, e.g. 1s.
    #[arg(long, default_value = "1s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Requests outstanding per connection.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub pipeline: u16,
    /// Where the responder and the client run.
    #[command(flatten)]
    pub cpus: CpuArgs,
}

impl CalibrateArgs {
    /// Checks the flags into a [`CalibratePlan`].
    ///
    /// # Errors
    /// CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<CalibratePlan> {
        self.cpus.check()?;
        let mut settings = LoadSettings::closed(
            nonzero(self.connections),
            self.cpus.client_threads(),
            timing(self.warmup, self.duration, self.duration)?,
            Duration::from_secs(2),
        );
        settings.pipeline = NonZeroUsize::new(usize::from(self.pipeline)).unwrap_or(NonZeroUsize::MIN);
        Ok(CalibratePlan { settings, server_cpus: self.cpus.server_cpus, client_cpus: self.cpus.client_cpus })
    }
}

/// Measures the ceiling and prints its line on stdout (not when interrupted).
///
/// # Errors
/// See [`calibrate::measure`].
pub(super) fn run(plan: &CalibratePlan, stop: &AtomicBool) -> anyhow::Result<Outcome> {
    let ceiling = calibrate::measure(plan, stop)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(Outcome::Interrupted);
    }
    println!("{}", ceiling_line(&ceiling));
    Ok(if ceiling.figures.is_failure() { Outcome::Failed } else { Outcome::Success })
}
