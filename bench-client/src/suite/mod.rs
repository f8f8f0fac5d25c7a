//! The suite: build the servers, then for each framework start its server
//! pinned to the server CPUs, check it, and measure every scenario's
//! variants back to back in each round (order alternating by round), with
//! the `/plaintext` floor once per round; then compute the deltas and write
//! the results folder. Also `bench-client flamegraph` ([`flamegraph`]).
//!
//! Imports every layer below it (`report`, `results`, `calibrate`,
//! `measure`, `engine`, `preflight`, `sys`, `model`); only the command line
//! is above it.

pub mod ab;
mod build;
mod meta;
mod profiling;
mod progress;
mod schedule;
mod servers;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use common::Route;

pub use self::build::{PROFILING_RUSTFLAGS, build, server_binary, workspace_root};
pub use self::profiling::{Flamegraph, FlamegraphPlan, flamegraph};
use self::profiling::{Profiler, Profiles};
use self::progress::Progress;
pub use self::schedule::{Sliced, Slot, Step, round, steps};
pub use self::servers::{load_of, route_load, start_server};
use crate::calibrate::{self, CalibratePlan};
use crate::engine::{Load, LoadSettings};
use crate::measure::CallGraph;
use crate::measure::{self, Measured, Observers, Perf, RunFigures, Start};
use crate::model::{Framework, Pairing, Profile, Scenario};
use crate::report::flames::FlameGraphs;
use crate::report::{self, ceiling_line, charts, run_line};
use crate::results::{self, FrameworkFailure, Results, RunRecord, SCHEMA_VERSION};
use crate::sys::{CpuList, ServerProcess};

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
    /// Measure until every delta is this precise (rounds then ignored).
    pub target: Option<PrecisionTarget>,
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
    /// Attach perf to each server during the measured windows, walking
    /// stacks this way; `None`: no profiler.
    pub profiler: Option<CallGraph>,
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
    /// Whether every framework completed and every run was free of failures.
    pub fn clean(&self) -> bool {
        self.results.complete && self.results.runs.iter().all(|r| !r.figures.is_failure())
    }
}

/// What every run of a suite shares.
#[derive(Clone, Copy)]
struct RunContext<'a> {
    dir: &'a std::path::Path,
    profiler: &'a Profiler,
    progress: &'a Progress,
    stop: &'a AtomicBool,
}

/// Runs `load` against the `servers` (pids) with the progress display, and
/// with `perf` (when given) recording the first during the measured windows.
///
/// # Errors
/// When the engine cannot start.
fn measure_run(
    load: &Load,
    servers: &[u32],
    perf: Option<&Perf>,
    progress: &Progress,
    label: &str,
    stop: &AtomicBool,
) -> anyhow::Result<Measured> {
    let observers = Observers { servers, perf, live: None };
    progress.during(label, load.settings.timing, || measure::run(load, observers, Start::now(), stop))
}

/// Measures and prints the client's ceiling (see [`calibrate`]) with the
/// suite's connections, timings and CPUs; `None` (with a warning) when the
/// responder cannot run.
fn client_ceiling(plan: &SuitePlan, stop: &AtomicBool) -> Option<f64> {
    let calibration = CalibratePlan {
        settings: plan.settings,
        server_cpus: plan.server_cpus.clone(),
        client_cpus: plan.client_cpus.clone(),
    };
    match calibrate::measure(&calibration, stop) {
        Ok(ceiling) => {
            eprintln!("{}", ceiling_line(&ceiling));
            (ceiling.figures.usable()).then(|| ceiling.requests_per_s())
        }
        Err(e) => {
            eprintln!("warning: client ceiling not measured: {e:#}");
            None
        }
    }
}

/// The alternating load of `sliced` against `server`: route `i` is its slot
/// `i`'s variant, each slice `plan.slice` long, each variant getting the
/// plan's duration of its own slices.
fn sliced_load(plan: &SuitePlan, server: &ServerProcess, sliced: &Sliced) -> anyhow::Result<Load> {
    let routes = sliced.slots.iter().map(|s| route_load(server.addr, Route::get(s.variant.route()))).collect();
    let own = plan.settings.timing.duration();
    Ok(Load::sliced(routes, sliced.block.clone(), plan.settings, own, plan.slice)?)
}

/// Measures one step of a round: its variants' figures, in the order of its
/// slots; profiled stacks are added to `profiles` per variant.
fn measure_step(
    plan: &SuitePlan,
    server: &ServerProcess,
    step: &Step,
    label: &str,
    context: &RunContext<'_>,
    profiles: &mut Profiles,
) -> anyhow::Result<Vec<(Slot, RunFigures)>> {
    let RunContext { profiler, progress, stop, .. } = *context;
    let cpus = Some(plan.server_cpus.len());
    match step {
        Step::Single(slot) => {
            let load = load_of(plan.settings, server, Route::get(slot.variant.route()));
            let run = measure_run(&load, &[server.pid()], profiler.perf(), progress, label, stop)?;
            let figures = RunFigures::new(&run, &load.settings, cpus);
            profiler.take(&run, &figures, slot.variant, profiles, label, progress);
            Ok(vec![(*slot, figures)])
        }
        Step::Sliced(sliced) => {
            let load = sliced_load(plan, server, sliced)?;
            let slicing = load.slicing.as_ref().context("a sliced load has its slicing")?;
            let run = measure_run(&load, &[server.pid()], None, progress, label, stop)?;
            Ok(sliced
                .slots
                .iter()
                .enumerate()
                .map(|(route, slot)| (*slot, RunFigures::of_route(&run, &load.settings, cpus, route, slicing)))
                .collect())
        }
    }
}

/// Measures one framework; pushes its runs as they complete, and the paths
/// of its flame graphs when profiled.
fn measure_framework(
    plan: &SuitePlan,
    framework: Framework,
    context: &RunContext<'_>,
    runs: &mut Vec<RunRecord>,
    flamegraphs: &mut FlameGraphs,
) -> anyhow::Result<()> {
    let RunContext { dir, profiler, progress, stop } = *context;
    let mut profiles = Profiles::new();
    for &layers in &plan.layers {
        let mut server = start_server(plan.profile, framework, &plan.server_cpus, layers)?;
        progress.line(&format!("  {} pid {} on http://{}, {layers} layers", server.name(), server.pid(), server.addr));
        let sweep = if plan.layers.len() > 1 { format!(" {layers} layers") } else { String::new() };
        let started = Instant::now();
        let shares = u32::try_from(plan.frameworks.len() * plan.layers.len()).unwrap_or(u32::MAX).max(1);
        let last_round = if plan.target.is_some() { u32::MAX } else { plan.rounds };
        for round in 1..=last_round {
            if let Some(target) = plan.target
                && round > 2
            {
                let ours: Vec<RunRecord> =
                    runs.iter().filter(|r| r.framework == framework && r.layers == layers).cloned().collect();
                let deltas = results::deltas(&ours, &[framework], &plan.scenarios, &[layers], plan.pairing);
                if deltas.iter().all(|d| target.reached(&d.change)) {
                    progress.line(&format!(
                        "  {} {layers} layers: every delta within ±{} points after {} rounds",
                        framework.name(),
                        target.half_width_percent,
                        round - 1
                    ));
                    break;
                }
                if started.elapsed() >= target.budget / shares {
                    progress.line(&format!(
                        "  {} {layers} layers: budget spent after {} rounds",
                        framework.name(),
                        round - 1
                    ));
                    break;
                }
            }
            for step in steps(&plan.scenarios, round, plan.pairing) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let what = match &step {
                    Step::Single(slot) => format!("{}/{}", slot.scenario, slot.variant),
                    Step::Sliced(sliced) => format!("{} sliced", sliced.slots[0].scenario),
                };
                let label = format!("{}{sweep} round {round}/{} {what}", framework.name(), plan.rounds);
                for (slot, figures) in measure_step(plan, &server, &step, &label, context, &mut profiles)? {
                    let columns = format!(
                        "{:<6}{sweep} round {round}/{} {:<8} {:<13}",
                        framework.name(),
                        plan.rounds,
                        slot.scenario.name(),
                        slot.variant.name()
                    );
                    progress.line(&run_line(&columns, &figures));
                    runs.push(RunRecord {
                        framework,
                        scenario: slot.scenario,
                        variant: slot.variant,
                        route: slot.variant.path().to_owned(),
                        profile: plan.profile,
                        layers,
                        round: slot.round,
                        position: slot.position,
                        figures,
                    });
                }
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                if server.has_exited() {
                    bail!("{} exited during the run", server.name());
                }
            }
        }
        match server.stop() {
            Some(status) if !status.success() => {
                progress.line(&format!("note: {} stopped with {status}", server.name()))
            }
            _ => {}
        }
    }
    let command = profiler.command().unwrap_or_else(|| "perf".to_owned());
    let written = profiling::write_flamegraphs(dir, framework, &plan.scenarios, &profiles, &command, progress);
    flamegraphs.graphs.extend(written.graphs);
    flamegraphs.differentials.extend(written.differentials);
    Ok(())
}

/// `meta.profiler`: the profiler's command when it recorded at least one
/// run (each run says whether it did), else none.
fn profiler_seen(results: &Results, profiler: &Profiler) -> Option<String> {
    results.runs.iter().any(|r| r.figures.profiled).then(|| profiler.command()).flatten()
}

/// Runs the suite of `plan`; stops early (keeping what was measured) when
/// `stop` becomes true.
///
/// # Errors
/// Before anything is measured: a failed build, a missing binary, an output
/// folder that cannot be created. Later errors are recorded per framework in
/// the results (a preflight mismatch ends the suite there), which are always
/// written.
pub fn run(plan: &SuitePlan, stop: &AtomicBool) -> anyhow::Result<SuiteOutcome> {
    if plan.server_cpus.overlaps(&plan.client_cpus) {
        eprintln!(
            "warning: server CPUs {} and client CPUs {} overlap: the client competes with the server",
            plan.server_cpus, plan.client_cpus
        );
    }
    if plan.build {
        build(plan.profile, &plan.frameworks)?;
    }
    for &f in &plan.frameworks {
        ServerProcess::check_binary(&server_binary(plan.profile, f))?;
    }
    plan.client_cpus.pin_current_thread()?;
    let started = SystemTime::now();
    let dir = results::create_run_dir(&plan.out, plan.profile, started)?;
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        complete: false,
        meta: meta::capture(plan, started),
        runs: Vec::new(),
        deltas: Vec::new(),
        failures: Vec::new(),
    };
    let json = dir.join("results.json");
    eprintln!("measuring into {}", dir.display());
    let runs_per_round = steps(&plan.scenarios, 1, plan.pairing).len() as u64;
    let profiler = Profiler::detect(plan.profiler);
    results.meta.client_ceiling_per_s = client_ceiling(plan, stop);
    let progress = Progress::new(
        plan.frameworks.len() as u64 * plan.layers.len() as u64 * u64::from(plan.rounds) * runs_per_round,
    );
    let context = RunContext { dir: &dir, profiler: &profiler, progress: &progress, stop };
    let mut flamegraphs = FlameGraphs::default();
    let mut stopped_by_error = false;
    for &framework in &plan.frameworks {
        if stop.load(Ordering::Relaxed) || stopped_by_error {
            break;
        }
        progress.line(&format!("{}:", framework.binary()));
        if let Err(e) = measure_framework(plan, framework, &context, &mut results.runs, &mut flamegraphs) {
            let error = format!("{e:#}");
            progress.line(&format!("error: {error}"));
            stopped_by_error = e.downcast_ref::<crate::preflight::Error>().is_some_and(|e| e.is_mismatch());
            results.failures.push(FrameworkFailure { framework, error });
        }
        results.deltas = results::deltas(&results.runs, &plan.frameworks, &plan.scenarios, &plan.layers, plan.pairing);
        results.meta.profiler = profiler_seen(&results, &profiler);
        results::write(&json, &results)?;
    }
    progress.finish();
    let interrupted = stop.load(Ordering::Relaxed);
    results.complete = !interrupted && results.failures.is_empty();
    results.deltas = results::deltas(&results.runs, &plan.frameworks, &plan.scenarios, &plan.layers, plan.pairing);
    if let Some(target) = plan.target {
        for d in &mut results.deltas {
            d.target_reached = Some(target.reached(&d.change));
        }
    }
    results.meta.profiler = profiler_seen(&results, &profiler);
    results::write(&json, &results)?;
    let charts = charts::suite_charts(&dir, &results).unwrap_or_else(|e| {
        eprintln!("warning: charts not drawn: {e:#}");
        Vec::new()
    });
    let (others, skipped) = results::latest_of_other_profiles(&plan.out, plan.profile);
    for e in skipped {
        eprintln!("warning: {e:#}; left out of the profiles side by side");
    }
    std::fs::write(dir.join("report.md"), report::report(&results, &others, &charts, &flamegraphs))
        .with_context(|| format!("cannot write {}", dir.join("report.md").display()))?;
    results::link_latest(&plan.out, &dir)?;
    Ok(SuiteOutcome { dir, results, other_profiles: others, interrupted, flamegraphs })
}
