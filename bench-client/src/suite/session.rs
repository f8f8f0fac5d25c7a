//! The one orchestrator of `suite` and `ab`: for each framework, start the
//! round's servers, measure the round's steps, record every run, compute the
//! deltas after each framework, and write the results folder. What differs
//! between the two commands is said once, by the [`Design`] (`design.rs`)
//! each implements in its own file (`variants.rs`, `ab.rs`): which servers a round measures,
//! which steps it runs, how its deltas are taken and what `meta` records.
//! This file names neither, so `ab` and the suite share the session without
//! importing each other.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use super::design::{Design, ServerStart, Servers, Unit};
use super::measuring::measure_run;
use super::meta;
use super::plan::{SuiteOutcome, SuitePlan};
use super::profiling::{self, Profiler, Profiles};
use super::progress::Progress;
use super::schedule::{Slot, Step};
use super::servers::{Started, stop_servers};
use crate::engine::{Load, LoadSettings, Rate, RouteLoad, Timing};
use crate::measure::RunFigures;
use crate::model::{Framework, Scenario};
use crate::report::flames::FlameGraphs;
use crate::report::{self, run_line};
use crate::results::{self, FrameworkFailure, Results, RunRecord, SCHEMA_VERSION};
use crate::sys::noise_check;

/// What every run of a session shares.
#[derive(Clone, Copy)]
struct RunContext<'a> {
    plan: &'a SuitePlan,
    dir: &'a Path,
    profiler: &'a Profiler,
    progress: &'a Progress,
    stop: &'a AtomicBool,
}

/// Measures one step of a round: its slots' figures, in order; profiled
/// stacks are added to `profiles` per variant.
fn measure_step(
    context: &RunContext<'_>,
    servers: &Servers,
    step: &Step,
    label: &str,
    profiles: &mut Profiles,
) -> anyhow::Result<Vec<(Slot, RunFigures)>> {
    let RunContext { plan, profiler, progress, stop, .. } = *context;
    let cpus = Some(plan.server_cpus.len());
    let pids: Vec<u32> = servers.iter().map(|s| s.process.pid()).collect();
    match step {
        Step::Single(slot) => {
            let server = &servers[slot.server];
            let load =
                Load::new(server.route_load(slot.request_path(), slot.variant, plan.tls_resumption)?, plan.settings);
            let run = measure_run(&load, &[server.process.pid()], profiler.perf_in(slot.round), progress, label, stop)?;
            let protocol = load.routes[0].target.protocol;
            let figures = RunFigures { protocol, ..RunFigures::new(&run, &load.settings, cpus) };
            profiler.take(&run, 0, &figures, slot.variant, profiles, label, progress);
            Ok(vec![(*slot, figures)])
        }
        Step::Sliced(sliced) => {
            let routes: Vec<RouteLoad> = sliced
                .slots
                .iter()
                .map(|s| servers[s.server].route_load(s.request_path(), s.variant, plan.tls_resumption))
                .collect::<anyhow::Result<_>>()?;
            // Head to head, every server runs in the closed loop: one rate would not suit them all.
            let open = plan.load_percent.filter(|_| sliced.slots[0].scenario != Scenario::Frameworks);
            let settings = match open {
                Some(percent) => open_loop_at(context, &servers[sliced.slots[0].server], &routes, percent, label)?,
                None => plan.settings,
            };
            let own = plan.settings.timing.duration();
            let load = Load::sliced(routes, sliced.block.clone(), settings, own, plan.slice)?;
            let slicing = load.slicing.as_ref().context("a sliced load has its slicing")?;
            // perf records one process: the alternation of one server's routes.
            let one_server = sliced.slots.iter().all(|s| s.server == sliced.slots[0].server);
            let perf = profiler.perf_in(sliced.slots[0].round).filter(|_| one_server);
            let run = measure_run(&load, &pids, perf, progress, label, stop)?;
            let mut measured = Vec::with_capacity(sliced.slots.len());
            for (route, slot) in sliced.slots.iter().enumerate() {
                let figures = RunFigures {
                    protocol: load.routes[route].target.protocol,
                    ..RunFigures::of_route(&run, &load.settings, cpus, route, slicing)
                };
                profiler.take(&run, route, &figures, slot.variant, profiles, label, progress);
                measured.push((*slot, figures));
            }
            Ok(measured)
        }
    }
}

/// Closed-loop time in which a round measures its baseline's rate before
/// the open-loop alternation (`--load-percent`), after the plan's warm-up.
const BASELINE_RATE_TIME: Duration = Duration::from_secs(2);

/// The plan's settings in the open loop at `percent` of the closed-loop rate
/// of `routes[0]` (the baseline) on `baseline`, measured now; says so.
fn open_loop_at(
    context: &RunContext<'_>,
    baseline: &Started,
    routes: &[RouteLoad],
    percent: f64,
    label: &str,
) -> anyhow::Result<LoadSettings> {
    let RunContext { plan, progress, stop, .. } = *context;
    let timing = Timing::new(plan.settings.timing.warmup(), BASELINE_RATE_TIME, BASELINE_RATE_TIME)?;
    let probe = Load::new(routes[0].clone(), LoadSettings { timing, ..plan.settings });
    let label = format!("{label} closed-loop rate");
    let run = measure_run(&probe, &[baseline.process.pid()], None, progress, &label, stop)?;
    let closed_per_s = run.outcome.stats.successful() as f64 / BASELINE_RATE_TIME.as_secs_f64();
    let rate = Rate::new(closed_per_s * percent / 100.0)
        .with_context(|| format!("{label}: no successful request to take {percent} % of"))?;
    progress.line(&format!(
        "  {label}: {closed_per_s:.0}/s; the variants alternate in the open loop at {:.0}/s ({percent} %)",
        rate.per_s()
    ));
    Ok(LoadSettings { rate: Some(rate), nap: Duration::ZERO, ..plan.settings })
}

/// Whether the precision target of the plan is reached (or its budget
/// spent) for `framework` at `layers` before `round`; says which.
fn target_met(
    context: &RunContext<'_>,
    design: &dyn Design,
    runs: &[RunRecord],
    framework: Framework,
    layers: u16,
    round: u32,
) -> bool {
    let RunContext { plan, progress, .. } = *context;
    let Some(target) = plan.target.filter(|_| round > 2) else { return false };
    let ours: Vec<RunRecord> =
        runs.iter().filter(|r| r.framework == framework && r.layers == layers).cloned().collect();
    let deltas = design.deltas(plan, &ours, &[framework]);
    let name = framework.name();
    if deltas.iter().all(|d| target.reached(&d.change)) {
        let within = target.half_width_percent;
        progress
            .line(&format!("  {name} {layers} layers: every delta within ±{within} points after {} rounds", round - 1));
        return true;
    }
    false
}

/// Measures one unit (a framework, or the frameworks head to head); pushes
/// its runs as they complete, and the paths of its flame graphs when profiled.
fn measure_unit(
    context: &RunContext<'_>,
    design: &mut dyn Design,
    unit: Unit,
    runs: &mut Vec<RunRecord>,
    flamegraphs: &mut FlameGraphs,
) -> anyhow::Result<()> {
    let RunContext { plan, dir, profiler, progress, stop } = *context;
    let mut profiles = Profiles::new();
    let sweeps = design.sweeps(plan, unit);
    let shares = u32::try_from(design.units(plan).len() * sweeps.len()).unwrap_or(u32::MAX).max(1);
    for &sweep in &sweeps {
        let sweep_text = match sweep {
            Some(layers) if sweeps.len() > 1 => format!(" {layers} layers"),
            _ => String::new(),
        };
        let started = Instant::now();
        let last_round = if plan.target.is_some() { u32::MAX } else { plan.rounds };
        let mut servers: Servers = Vec::new();
        for round in 1..=last_round {
            if let (Some(layers), Unit::One(framework)) = (sweep, unit)
                && target_met(context, design, runs, framework, layers, round)
            {
                break;
            }
            if let Some(target) = plan.target
                && round > 2
                && started.elapsed() >= target.budget / shares
            {
                progress.line(&format!("  {}{sweep_text}: budget spent after {} rounds", unit.name(), round - 1));
                break;
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if servers.is_empty() || plan.server_per_round {
                stop_servers(&mut servers, progress);
                servers = design.start(plan, ServerStart { unit, sweep, round }, stop)?;
                progress.line(&design.started_line(unit, &servers, round));
                for line in design.note_started(unit, &servers) {
                    progress.line(&line);
                }
            }
            if !measure_round(context, design, unit, &mut servers, round, &sweep_text, &mut profiles, runs)? {
                return Ok(());
            }
        }
        stop_servers(&mut servers, progress);
    }
    profiler.say_pending(progress);
    // Head to head, perf records no run (it records one process, and a run alternates several).
    if let Unit::One(framework) = unit {
        let written = profiling::write_flamegraphs(dir, framework, &plan.scenarios, &profiles, profiler, progress);
        flamegraphs.graphs.extend(written.graphs);
        flamegraphs.differentials.extend(written.differentials);
    }
    Ok(())
}

/// Every step of `round` of `unit` on `servers`, each run measured (once
/// more when only the client fell behind its schedule), printed and kept
/// in `runs`: false once stopped.
///
/// # Errors
/// A run that cannot be measured, a server that exited during it.
#[allow(clippy::too_many_arguments)]
fn measure_round(
    context: &RunContext<'_>,
    design: &mut dyn Design,
    unit: Unit,
    servers: &mut Servers,
    round: u32,
    sweep_text: &str,
    profiles: &mut Profiles,
    runs: &mut Vec<RunRecord>,
) -> anyhow::Result<bool> {
    let RunContext { plan, progress, stop, .. } = *context;
    for step in design.steps(plan, unit, round) {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let what = match &step {
            Step::Single(slot) => format!("{}/{}", slot.scenario, slot.variant),
            Step::Sliced(s) if matches!(s.slots[0].scenario, Scenario::Before | Scenario::Frameworks) => {
                s.slots[0].path.to_owned()
            }
            Step::Sliced(s) => format!("{} sliced", s.slots[0].scenario),
        };
        let label = format!("{}{sweep_text} round {round}/{} {what}", unit.name(), plan.rounds);
        let mut measured = measure_step(context, servers, &step, &label, profiles)?;
        if measured.iter().any(|(_, f)| f.short_of_schedule_only()) && !stop.load(Ordering::Relaxed) {
            // The client's thread fell behind its schedule (the
            // machine's hiccup, not the server's latency): once more.
            progress.line(&format!("  {label}: short of its schedule, the client behind: measured again"));
            measured = measure_step(context, servers, &step, &label, profiles)?;
        }
        for (slot, figures) in measured {
            // The slot's server says whose run it is (head to head, each its own framework).
            let framework = servers[slot.server].framework;
            let columns = format!(
                "{:<6}{sweep_text} round {round}/{} {}",
                framework.name(),
                plan.rounds,
                design.slot_columns(&slot)
            );
            progress.line(&run_line(&columns, &figures));
            runs.push(RunRecord {
                framework,
                scenario: slot.scenario,
                variant: slot.variant,
                route: slot.path.to_owned(),
                profile: plan.profile,
                layers: servers[slot.server].layers,
                round: slot.round,
                position: slot.position,
                figures,
            });
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(false);
        }
        for Started { process, .. } in servers.iter_mut() {
            if process.has_exited() {
                bail!("{} exited during the run", process.name());
            }
        }
    }
    Ok(true)
}

/// `meta.profiler`: the profiler's command when it recorded at least one
/// run (each run says whether it did), else none.
fn profiler_seen(results: &Results, profiler: &Profiler) -> Option<String> {
    results.runs.iter().any(|r| r.figures.profiled).then(|| profiler.command()).flatten()
}

/// Runs a session of `plan` as `design` says, its binaries already built;
/// stops early (keeping what was measured) when `stop` becomes true.
///
/// # Errors
/// Before anything is measured: CPUs that cannot be pinned, an output folder
/// that cannot be created. Later errors are recorded per framework in the
/// results (a preflight mismatch ends the session there), which are always
/// written.
pub(super) fn run(plan: &SuitePlan, design: &mut dyn Design, stop: &AtomicBool) -> anyhow::Result<SuiteOutcome> {
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
        counted: None,
        memory: None,
        rivals: Vec::new(),
    };
    design.record(&mut results.meta);
    let json = dir.join("results.json");
    eprintln!("measuring into {}", dir.display());
    let profiler = Profiler::detect(plan.profiler);
    results.meta.noise = noise_check(&plan.server_cpus, &plan.client_cpus);
    for line in &results.meta.noise {
        eprintln!("noise: {line}");
    }
    results.meta.client_ceiling_per_s = meta::client_ceiling(plan, stop);
    let units = design.units(plan);
    let per_round: u64 =
        units.iter().map(|&u| design.steps(plan, u, 1).len() as u64 * design.sweeps(plan, u).len() as u64).sum();
    let progress = Progress::new(per_round * u64::from(plan.rounds));
    let context = RunContext { plan, dir: &dir, profiler: &profiler, progress: &progress, stop };
    let flamegraphs = measure_units(&context, design, units, &mut results, &json)?;
    progress.finish();
    let interrupted = stop.load(Ordering::Relaxed);
    results.complete = !interrupted && results.failures.is_empty();
    compare_runs(&mut results, design, plan);
    if let Some(settings) = plan.count.filter(|_| !interrupted) {
        // The timed results are written first: a count that fails or is interrupted loses nothing timed.
        results::write(&json, &results)?;
        eprintln!("counting every delta's routes (--count)");
        match super::counted_suite::count_suite(plan, settings, &dir, &mut results.deltas, stop) {
            Ok(report) => results.counted = Some(report),
            Err(e) => {
                eprintln!("error: count: {e:#}");
                results.complete = false;
            }
        }
    }
    if plan.memory && !interrupted && !stop.load(Ordering::Relaxed) {
        // What was timed and counted is written first: a memory run that fails loses none of it.
        results::write(&json, &results)?;
        super::memory::memory_scenario(plan, &dir, &mut results, stop);
    }
    // Ctrl-C during the count or the memory run: the timed results stand, the session ends as interrupted.
    let interrupted = interrupted || stop.load(Ordering::Relaxed);
    if let Some(target) = plan.target {
        for d in &mut results.deltas {
            d.target_reached = Some(target.reached(&d.change));
        }
    }
    results.meta.profiler = profiler_seen(&results, &profiler);
    results::write(&json, &results)?;
    let others = design.others(plan);
    report::write_reports(&dir, &results, &others, &flamegraphs)?;
    results::link_latest(&plan.out, &dir)?;
    Ok(SuiteOutcome { dir, results, other_profiles: others, interrupted, flamegraphs })
}

/// Measures each unit in turn, the results written after each; a unit's
/// error is recorded as its framework's failure, and a preflight mismatch
/// ends the session there. The flame graphs drawn.
///
/// # Errors
/// A results file that cannot be written.
fn measure_units(
    context: &RunContext<'_>,
    design: &mut dyn Design,
    units: Vec<Unit>,
    results: &mut Results,
    json: &Path,
) -> anyhow::Result<FlameGraphs> {
    let (plan, progress, stop) = (context.plan, context.progress, context.stop);
    let mut flamegraphs = FlameGraphs::default();
    let mut stopped_by_error = false;
    for unit in units {
        if stop.load(Ordering::Relaxed) || stopped_by_error {
            break;
        }
        progress.line(&format!("{}:", unit.heading()));
        if let Err(e) = measure_unit(context, design, unit, &mut results.runs, &mut flamegraphs) {
            let error = format!("{e:#}");
            progress.line(&format!("error: {error}"));
            stopped_by_error = e.downcast_ref::<crate::preflight::Error>().is_some_and(|e| e.is_mismatch());
            // Head to head, the failure is the session's first framework's, and says it was head to head.
            let (framework, error) = match unit {
                Unit::One(framework) => (framework, error),
                Unit::Rivals => (plan.frameworks[0], format!("frameworks head to head: {error}")),
            };
            results.failures.push(FrameworkFailure { framework, error });
        }
        compare_runs(results, design, plan);
        results.meta.profiler = profiler_seen(results, context.profiler);
        design.record(&mut results.meta);
        results::write(json, results)?;
    }
    Ok(flamegraphs)
}

/// Sets the results' deltas and head-to-head pairs from their runs.
fn compare_runs(results: &mut Results, design: &dyn Design, plan: &SuitePlan) {
    results.deltas = design.deltas(plan, &results.runs, &plan.frameworks);
    results.rivals = results::rivals(&results.runs, plan.tie_margin_percent);
}
