//! `bench-client flamegraph`: one server on one route under perf, its flame
//! graph written as SVG.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::args::{CpuArgs, OutArgs, PerfArgs, nonzero, positive_duration, timing};
use crate::engine::LoadSettings;
use crate::model::{Framework, Profile};
use crate::report;
use crate::suite::{self, FlamegraphPlan};

/// Flags of `flamegraph`, as typed.
#[derive(Debug, Args)]
pub struct FlamegraphArgs {
    /// Framework whose server to profile.
    #[arg(long, value_enum)]
    pub framework: Framework,
    /// Route to load, one of the route table's paths.
    #[arg(long, default_value = "/api/devices")]
    pub route: String,
    /// Cargo profile of the server binary (built by this command).
    #[arg(long, value_enum, default_value_t = Profile::Profiling)]
    pub profile: Profile,
    /// Recorded duration, e.g. 5s.
    #[arg(long, default_value = "5s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// State layers (server --layers).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
    /// Where the server and the client run.
    #[command(flatten)]
    pub cpus: CpuArgs,
    /// Where the SVG goes.
    #[command(flatten)]
    pub out: OutArgs,
    /// How perf samples.
    #[command(flatten)]
    pub perf: PerfArgs,
}

impl FlamegraphArgs {
    /// Checks the flags into a [`FlamegraphPlan`].
    ///
    /// # Errors
    /// A route outside the route table; CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<FlamegraphPlan> {
        let route = common::Route::by_path(&self.route).with_context(|| {
            let paths: Vec<&str> = common::ROUTES.iter().map(|r| r.path).collect();
            format!("--route {} is not in the route table ({})", self.route, paths.join(", "))
        })?;
        self.cpus.check()?;
        Ok(FlamegraphPlan {
            profile: self.profile,
            framework: self.framework,
            route,
            layers: self.layers,
            settings: LoadSettings::closed(
                nonzero(self.connections),
                self.cpus.client_threads(),
                timing(Duration::from_secs(1), self.duration, self.duration)?,
                Duration::from_secs(2),
            ),
            server_cpus: self.cpus.server_cpus,
            client_cpus: self.cpus.client_cpus,
            out: self.out.checked()?,
            sampling: self.perf.sampling(self.profile),
        })
    }
}

/// Profiles, then prints the top of self time, the flame graph's figures and
/// the SVG's path on stdout.
///
/// # Errors
/// See [`suite::flamegraph`].
pub(super) fn run(plan: &FlamegraphPlan, stop: &AtomicBool) -> anyhow::Result<()> {
    let written = suite::flamegraph(plan, stop)?;
    println!("{}", written.top_self_time);
    println!("flame graph: {}", report::shape_line(&written.shape));
    println!("{}", written.svg.display());
    Ok(())
}
