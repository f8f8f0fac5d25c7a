//! Profiles: `bench-client flamegraph` for one server on one route; the
//! suite's profiler (perf while it works, said once when it does not); and
//! the flame graphs of a profiled suite's variants, with a differential
//! flame graph per delta.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use anyhow::Context;
use common::Route;

use super::build::build;
use super::measuring::measure_run;
use super::progress::Progress;
use super::servers::{ServerFlags, load_of, start_server};
use crate::engine::LoadSettings;
use crate::measure::{Measured, Perf, RunFigures, Sampling};
use crate::model::{Framework, Profile, Scenario, Variant};
use crate::report::flames::{self, Differential, FlameGraph, FlameGraphs, Shape, Widths};
use crate::report::{shape_line, top_self_time};
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
    /// How perf samples.
    pub sampling: Sampling,
}

/// What `flamegraph` wrote.
#[derive(Debug, Clone)]
pub struct Flamegraph {
    /// The SVG file.
    pub svg: PathBuf,
    /// Its samples and how many of them float.
    pub shape: Shape,
    /// The top 10 of self time, one function a line, under a heading.
    pub top_self_time: String,
}

/// `bench-client flamegraph`: profiles the plan's server on its route for
/// its duration after a 1 s warm-up, writes
/// `out/flamegraph-<framework>-<route>-<UTC timestamp>.svg` and its folded
/// stacks beside it, and returns its path with its shape and the top 10 of
/// self time.
///
/// # Errors
/// perf unavailable, an unknown route, a server that does not start, or a
/// recording that fails.
pub fn flamegraph(plan: &FlamegraphPlan, stop: &AtomicBool) -> anyhow::Result<Flamegraph> {
    let perf = Perf::detect(plan.sampling)?;
    let (framework, route, profile, out) = (plan.framework, plan.route, plan.profile, &plan.out);
    build(profile, &[framework])?;
    plan.client_cpus.pin_current_thread()?;
    let server = start_server(profile, framework, &plan.server_cpus, plan.layers, ServerFlags::default())?;
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
    for part in &folded {
        flames::merge(&mut stacks, part);
    }
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
    let shape = Shape::of(&stacks, plan.sampling.period_ns());
    let lines = flames::lines(&stacks);
    crate::sys::write_or_keep(&svg.with_extension("folded"), (lines.join("\n") + "\n").as_bytes())?;
    flames::flamegraph(&lines, &title, Some(&subtitle(&perf, &shape)), &svg)?;
    Ok(Flamegraph { svg, shape, top_self_time: top_self_time("", &stacks, 10, 0) })
}

/// The subtitle of a flame graph: how it was recorded and how much floats.
fn subtitle(perf: &Perf, shape: &Shape) -> String {
    format!("{} · {}", perf.command(), shape_line(shape))
}

/// The suite's profiler: perf while it records. A run it fails on is not
/// profiled and the next one tries again (perf at nice 19 once ended with
/// status 255 and no message in one run of a session); after two failures
/// in a row none, said once with perf's reason, so that a perf that may not
/// attach does not warn once per run.
pub(super) struct Profiler {
    perf: Option<Perf>,
    /// The run perf last failed at and why, until a run records again.
    failed_at: RefCell<Option<(String, String)>>,
    stopped: Cell<bool>,
}

impl Profiler {
    /// `perf` when asked for (`sampling`) and able to record (a note says
    /// why not otherwise).
    pub(super) fn detect(sampling: Option<Sampling>) -> Self {
        let perf = sampling.and_then(|sampling| match Perf::detect(sampling) {
            Ok(perf) => {
                eprintln!("profiling each server with {} during the measured windows", perf.command());
                Some(perf)
            }
            Err(e) => {
                eprintln!("note: running without the profiler: {e:#}");
                None
            }
        });
        Self { perf, failed_at: RefCell::new(None), stopped: Cell::new(false) }
    }

    /// The profiler for a run of `round`, if it still works: attached in
    /// the odd rounds; the even ones run without it, each on its own server
    /// process as every round does, so that the session measures what perf
    /// costs ([`crate::report::profiling_cost_table`]).
    pub(super) fn perf_in(&self, round: u32) -> Option<&Perf> {
        self.perf.as_ref().filter(|_| !self.stopped.get() && round % 2 == 1)
    }

    /// The recording command, for `meta.profiler`.
    pub(super) fn command(&self) -> Option<String> {
        self.perf.as_ref().map(Perf::command)
    }

    /// CPU time one sample stands for, nanoseconds.
    pub(super) fn period_ns(&self) -> u64 {
        self.perf.as_ref().map_or(crate::measure::SAMPLE_PERIOD_NS, |p| p.sampling().period_ns())
    }

    /// Takes in what the profiler gave for route `route` of run `label`:
    /// the stacks sampled in its slices (the whole run when it is the only
    /// route) are added to `variant`'s profile with the route's successful
    /// requests. A failure is kept until the next profiled run: recorded,
    /// it is noted; failed too, one warning quoting perf, and no profiler
    /// for the rest of the suite.
    #[allow(clippy::too_many_arguments)] // one run's route, its variant, and where its stacks go
    pub(super) fn take(
        &self,
        run: &Measured,
        route: usize,
        figures: &RunFigures,
        variant: Variant,
        profiles: &mut Profiles,
        label: &str,
        progress: &Progress,
    ) {
        match &run.folded {
            Some(Ok(folded)) => {
                if route == 0
                    && let Some((at, why)) = self.failed_at.take()
                {
                    progress.line(&format!("note: perf failed at {at} ({why}): that run is not profiled; {label} is"));
                }
                let Some(stacks) = folded.get(route) else { return };
                let profile = profiles.entry(variant.name()).or_default();
                flames::merge(&mut profile.stacks, stacks);
                profile.requests += figures.successful;
                profile.server_cpu_ns +=
                    figures.server_cpu_percent.map_or(0.0, |p| p / 100.0 * figures.duration_s * 1e9);
                profile.runs += 1;
            }
            Some(Err(e)) if route == 0 => {
                let first = self.failed_at.borrow_mut().replace((label.to_owned(), format!("{e:#}")));
                if let Some((at, why)) = first {
                    self.stopped.set(true);
                    self.failed_at.take();
                    progress.line(&format!(
                        "warning: profiling stopped at {at}: {why} (and again at the next run); the runs from here on are not profiled"
                    ));
                }
            }
            Some(Err(_)) | None => {}
        }
    }

    /// Says a failure no later run followed (the last profiled run of a
    /// framework failed): that run is not profiled.
    pub(super) fn say_pending(&self, progress: &Progress) {
        if let Some((at, why)) = self.failed_at.take() {
            progress.line(&format!("warning: perf failed at {at}: {why}; that run is not profiled"));
        }
    }
}

/// One variant's folded stacks over its profiled runs.
#[derive(Debug, Default)]
pub(super) struct VariantProfile {
    /// Stack → ns of server CPU sampled.
    stacks: BTreeMap<String, u64>,
    /// Successful requests of the runs they were recorded in.
    requests: u64,
    /// Server CPU measured over the same slices, ns (0 when not measured).
    server_cpu_ns: f64,
    /// Those runs.
    runs: u32,
}

impl VariantProfile {
    /// Sampled ns over measured server CPU ns, percent.
    fn kept_percent(&self) -> Option<f64> {
        let sampled = self.stacks.values().sum::<u64>() as f64;
        (self.server_cpu_ns > 0.0).then(|| 100.0 * sampled / self.server_cpu_ns)
    }

    /// Its stacks scaled so that they add up to the server CPU measured over
    /// its slices: samples perf lost (more where the client was busier) do
    /// not bias one variant's CPU per request against another's.
    fn stacks_as_measured(&self) -> BTreeMap<String, u64> {
        let sampled = self.stacks.values().sum::<u64>() as f64;
        let scale = if self.server_cpu_ns > 0.0 && sampled > 0.0 { self.server_cpu_ns / sampled } else { 1.0 };
        self.stacks.iter().map(|(stack, &ns)| (stack.clone(), (ns as f64 * scale).round() as u64)).collect()
    }
}

/// The profiles of one framework's variants, by variant name.
pub(super) type Profiles = BTreeMap<&'static str, VariantProfile>;

/// Writes the flame graph and folded stacks of each profiled variant of
/// `framework` under `dir/flamegraphs/`, prints each one's shape and top 10
/// of self time, draws two differential flame graphs per delta of
/// `scenarios` (per request; widths of before, then of after), and returns
/// what it wrote (paths relative to `dir`).
pub(super) fn write_flamegraphs(
    dir: &Path,
    framework: Framework,
    scenarios: &[Scenario],
    profiles: &Profiles,
    profiler: &Profiler,
    progress: &Progress,
) -> FlameGraphs {
    let command = profiler.command().unwrap_or_else(|| "perf".to_owned());
    let mut written = FlameGraphs::default();
    if profiles.is_empty() {
        return written;
    }
    if let Err(e) = std::fs::create_dir_all(dir.join("flamegraphs")) {
        progress.line(&format!("warning: no flame graphs for {}: {e}", framework.name()));
        return written;
    }
    let mut all_variants: Vec<Variant> = Vec::new();
    // `tls` and `http2` share `http` and `https`: one flame graph each.
    for variant in scenarios.iter().chain([&Scenario::Floor]).flat_map(|s| s.variants().iter().copied()) {
        if !all_variants.contains(&variant) {
            all_variants.push(variant);
        }
    }
    for variant in all_variants {
        let Some(profile) = profiles.get(variant.name()) else { continue };
        let what = format!("{} {variant}", framework.name());
        match flamegraph_of(dir, framework, variant, profile, profiler, &command) {
            Ok(graph) => {
                progress.line(&format!("  flame graph {what}: {} → {}", shape_line(&graph.shape), graph.svg));
                written.graphs.push(graph);
            }
            Err(e) => progress.line(&format!("warning: no flame graph for {what}: {e:#}")),
        }
        progress.line(&top_self_time(&format!(", {what}"), &profile.stacks, 10, 2));
    }
    written.differentials = differentials(dir, framework, scenarios, profiles, progress);
    written
}

/// Writes the folded stacks and draws the flame graph of `variant` of
/// `framework` from its `profile` (`command`: the profiler, in its subtitle).
fn flamegraph_of(
    dir: &Path,
    framework: Framework,
    variant: Variant,
    profile: &VariantProfile,
    profiler: &Profiler,
    command: &str,
) -> anyhow::Result<FlameGraph> {
    let name = format!("flamegraphs/{}-{variant}.svg", framework.name());
    let lines = flames::lines(&profile.stacks);
    let shape = Shape::of(&profile.stacks, profiler.period_ns());
    let folded = dir.join(format!("flamegraphs/{}-{variant}.folded", framework.name()));
    crate::sys::write_or_keep(&folded, (lines.join("\n") + "\n").as_bytes())?;
    flames::flamegraph(
        &lines,
        &format!("{} · {variant} (measured windows of {} runs)", framework.name(), profile.runs),
        Some(&format!("{command} · {}", shape_line(&shape))),
        &dir.join(&name),
    )?;
    Ok(FlameGraph {
        framework,
        variant,
        svg: name,
        shape,
        runs: profile.runs,
        requests: profile.requests,
        kept_percent: profile.kept_percent(),
    })
}

/// Draws the differential flame graphs of every delta of `scenarios` in
/// `framework`, saying each (or why not) on `progress`.
fn differentials(
    dir: &Path,
    framework: Framework,
    scenarios: &[Scenario],
    profiles: &Profiles,
    progress: &Progress,
) -> Vec<Differential> {
    let mut drawn = Vec::new();
    for &scenario in scenarios {
        for (from, to) in scenario.pairs() {
            match differential(dir, framework, scenario, from, to, profiles) {
                Ok(Some(d)) => {
                    progress.line(&format!(
                        "  differential {} {scenario} {from} → {to}: {:.2} → {:.2} µs of server CPU per request → {}",
                        framework.name(),
                        d.before_ns_per_request / 1e3,
                        d.after_ns_per_request / 1e3,
                        d.svg_before_widths
                    ));
                    drawn.push(d);
                }
                Ok(None) => {}
                Err(e) => progress.line(&format!(
                    "warning: no differential flame graph for {} {scenario} {from} → {to}: {e:#}",
                    framework.name()
                )),
            }
        }
    }
    drawn
}

/// Draws the two differential flame graphs of `from` → `to` (per 1,000
/// successful requests of each); `None` when either was not profiled.
fn differential(
    dir: &Path,
    framework: Framework,
    scenario: Scenario,
    from: Variant,
    to: Variant,
    profiles: &Profiles,
) -> anyhow::Result<Option<Differential>> {
    let (Some(before), Some(after)) = (profiles.get(from.name()), profiles.get(to.name())) else {
        return Ok(None);
    };
    if before.requests == 0 || after.requests == 0 {
        return Ok(None);
    }
    let (b, a) = (
        flames::per_thousand_requests(&before.stacks_as_measured(), before.requests),
        flames::per_thousand_requests(&after.stacks_as_measured(), after.requests),
    );
    let stem = format!("flamegraphs/diff-{}-{scenario}-{from}-to-{to}", framework.name());
    let title = format!("{} · {scenario}: {from} → {to}, server CPU per request", framework.name());
    let svg_before_widths = format!("{stem}-before-widths.svg");
    let svg_after_widths = format!("{stem}-after-widths.svg");
    flames::differential(&b, &a, Widths::Before, &title, &dir.join(&svg_before_widths))?;
    flames::differential(&b, &a, Widths::After, &title, &dir.join(&svg_after_widths))?;
    let per_request = |p: &VariantProfile| p.stacks_as_measured().values().sum::<u64>() as f64 / p.requests as f64;
    Ok(Some(Differential {
        framework,
        scenario,
        from,
        to,
        svg_before_widths,
        svg_after_widths,
        before_ns_per_request: per_request(before),
        after_ns_per_request: per_request(after),
    }))
}
