//! Profiles: `bench-client flamegraph` for one server on one route, and the
//! flame graphs of a profiled suite's variants.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use anyhow::Context;
use common::Route;

use super::build::build;
use super::measure_run;
use super::progress::Progress;
use super::servers::{load_of, start_server};
use crate::engine::LoadSettings;
use crate::measure::profiler::{self, Perf};
use crate::model::{Framework, Profile};
use crate::report::top_self_time;
use crate::sys::CpuList;

/// A checked `flamegraph` invocation.
#[derive(Debug, Clone)]
pub struct FlamegraphPlan {
    /// Profile of the server binary (built by the command).
    pub profile: Profile,
    /// Framework whose server is profiled.
    pub framework: Framework,
    /// Route loaded.
    pub route: &'static Route,
    /// Server `--layers`.
    pub layers: u16,
    /// Connections and timings (1 s warm-up, one window of the duration).
    pub settings: LoadSettings,
    /// CPUs the server is pinned to.
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to.
    pub client_cpus: CpuList,
    /// Folder the SVG is written to.
    pub out: PathBuf,
}

/// What `flamegraph` wrote.
#[derive(Debug, Clone)]
pub struct Flamegraph {
    /// The SVG file.
    pub svg: PathBuf,
    /// The top 10 of self time, one function a line, under a heading.
    pub top_self_time: String,
}

/// `bench-client flamegraph`: profiles the plan's server on its route for
/// its duration after a 1 s warm-up, writes
/// `out/flamegraph-<framework>-<route>-<UTC timestamp>.svg`, and returns its
/// path with the top 10 of self time.
///
/// # Errors
/// perf unavailable, an unknown route, a server that does not start, or a
/// recording that fails.
pub fn flamegraph(plan: &FlamegraphPlan, stop: &AtomicBool) -> anyhow::Result<Flamegraph> {
    let perf = Perf::detect()?;
    let (framework, route, profile, out) = (plan.framework, plan.route, plan.profile, &plan.out);
    build(profile, &[framework])?;
    plan.client_cpus.pin_current_thread()?;
    let server = start_server(profile, framework, &plan.server_cpus, plan.layers)?;
    let load = load_of(plan.settings, &server, route);
    let progress = Progress::new(1);
    let label = format!("{} {}", framework.name(), route.path);
    let run = measure_run(&load, &[server.pid()], Some(&perf), &progress, &label, stop)?;
    progress.finish();
    anyhow::ensure!(!run.interrupted, "interrupted before the recording ended");
    let successful = run.outcome.stats.successful();
    anyhow::ensure!(successful > 0, "no successful request: nothing worth a flame graph");
    let folded = run.folded.context("the profiler did not run")??;
    let mut stacks = BTreeMap::new();
    profiler::merge(&mut stacks, &folded);
    let stamp: String = humantime::format_rfc3339_seconds(SystemTime::now())
        .to_string()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let slug: String = route.path.trim_matches('/').replace('/', "_");
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let svg = out.join(format!("flamegraph-{}-{slug}-{stamp}.svg", framework.name()));
    let title = format!(
        "{} {} ({} profile, {} successful requests)",
        framework.name(),
        route.path,
        profile.cargo_name(),
        successful
    );
    profiler::flamegraph(&profiler::lines(&stacks), &title, &svg)?;
    Ok(Flamegraph { svg, top_self_time: top_self_time("", &stacks, 10, 0) })
}

/// Writes the flame graph and folded stacks of each profiled variant of
/// `framework` under `dir/flamegraphs/`, prints each one's top 10 self time,
/// and returns the SVG paths relative to `dir`.
pub(super) fn write_flamegraphs(
    dir: &Path,
    framework: Framework,
    profiles: &BTreeMap<&'static str, BTreeMap<String, u64>>,
    progress: &Progress,
) -> Vec<String> {
    let mut written = Vec::new();
    for (variant, stacks) in profiles {
        let name = format!("flamegraphs/{}-{variant}.svg", framework.name());
        let lines = profiler::lines(stacks);
        let drawn = std::fs::create_dir_all(dir.join("flamegraphs")).map_err(anyhow::Error::from).and_then(|()| {
            std::fs::write(
                dir.join(format!("flamegraphs/{}-{variant}.folded", framework.name())),
                lines.join("\n") + "\n",
            )?;
            profiler::flamegraph(
                &lines,
                &format!("{} · {variant} (perf cpu-clock, measured windows)", framework.name()),
                &dir.join(&name),
            )
        });
        match drawn {
            Ok(()) => written.push(name),
            Err(e) => progress.line(&format!("warning: no flame graph for {} {variant}: {e:#}", framework.name())),
        }
        progress.line(&top_self_time(&format!(", {} {variant}", framework.name()), stacks, 10, 2));
    }
    written
}
