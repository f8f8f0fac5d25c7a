//! The one orchestrator of `suite` and `ab`: for each framework, start the
//! round's servers, measure the round's steps, record every run, compute the
//! deltas after each framework, and write the results folder. What differs
//! between the two commands is said once, by [`Design`]: which servers a
//! round measures, which steps it runs, and how its deltas are taken.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};

use super::ab::{Side, start_pair};
use super::profiling::{self, Profiler, Profiles};
use super::progress::Progress;
use super::schedule::{Sliced, Slot, Step, steps};
use super::servers::{ServerFlags, Started, start_server};
use super::{SuiteOutcome, SuitePlan, client_ceiling, meta};
use crate::engine::{Load, LoadSettings, Rate, RouteLoad, Timing};
use crate::measure::{self, Measured, Observers, Perf, RunFigures, Start};
use crate::model::{Framework, Scenario};
use crate::preflight;
use crate::report::flames::FlameGraphs;
use crate::report::{self, charts, run_line};
use crate::results::{self, AbChange, AbMeta, Delta, FrameworkFailure, Results, RunRecord, SCHEMA_VERSION};
use crate::sys::noise_check;

/// What a session compares, and so which servers a round measures.
pub(super) enum Design {
    /// The suite: every scenario's variants on one server of each framework
    /// and layer count, started anew every round (or once, with
    /// `server_per_round` off).
    Variants,
    /// `ab`: each route on a BEFORE and an AFTER server (slots 0 and 1),
    /// both started anew every round.
    Builds(Box<Builds>),
}

/// The two sides of an `ab` session, resolved to their binaries.
pub(super) struct Builds {
    /// Folders holding BEFORE's and AFTER's server binaries.
    pub bins: (PathBuf, PathBuf),
    /// BEFORE.
    pub before: Side,
    /// AFTER.
    pub after: Side,
    /// Paths compared, each on both sides.
    pub routes: Vec<&'static str>,
    /// The status every response carries (`--expect-status`).
    pub expect_status: u16,
    /// How long a side's command may take to listen.
    pub ready_timeout: std::time::Duration,
    /// What `meta.ab` records; its `changes` are added as each framework's
    /// first pair of servers answers.
    pub meta: std::sync::Mutex<AbMeta>,
}

impl Builds {
    /// Records where the first pair of `framework`'s servers answers
    /// differently; the lines that say so.
    fn note_changes(&self, framework: Framework, servers: &Servers) -> Vec<String> {
        let [before, after] = servers.as_slice() else { return Vec::new() };
        let mut meta = self.meta.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if meta.changes.iter().any(|c| c.framework == framework) {
            return Vec::new();
        }
        let mut lines = Vec::new();
        for ((path, b), (_, a)) in before.answers.iter().zip(&after.answers) {
            if let Some(change) = preflight::change(b, a) {
                lines.push(format!("  {} {path}: AFTER answers otherwise: {change}", framework.name()));
                meta.changes.push(AbChange { framework, route: (*path).to_owned(), change });
            }
        }
        lines
    }
}

/// The servers of one round; a slot's `server` indexes them.
type Servers = Vec<Started>;

impl Design {
    /// The server starts of a framework: one per layer count for the suite,
    /// one for `ab` (whose sides name their own).
    fn sweeps(&self, plan: &SuitePlan) -> Vec<Option<u16>> {
        match self {
            Self::Variants => plan.layers.iter().copied().map(Some).collect(),
            Self::Builds(_) => vec![None],
        }
    }

    /// Starts the servers of `framework` for `round`.
    fn start(
        &self,
        plan: &SuitePlan,
        framework: Framework,
        sweep: Option<u16>,
        round: u32,
        stop: &AtomicBool,
    ) -> anyhow::Result<Servers> {
        match self {
            Self::Variants => {
                let layers = sweep.context("the suite starts a server per layer count")?;
                let flags = ServerFlags { tls: plan.scenarios.contains(&Scenario::Tls), tcp_nodelay: plan.tcp_nodelay };
                let process = start_server(plan.profile, framework, &plan.server_cpus, layers, flags)?;
                Ok(vec![Started::of_table(process, layers)])
            }
            Self::Builds(b) => {
                let (before, after) = start_pair(plan, framework, b, round, stop)?;
                Ok(vec![before, after])
            }
        }
    }

    /// The line that says where the servers run.
    fn started_line(&self, framework: Framework, servers: &Servers, round: u32) -> String {
        match (self, servers.as_slice()) {
            (Self::Builds(_), [Started { process: before, .. }, Started { process: after, .. }]) => format!(
                "  {} round {round}: BEFORE pid {} on {}, AFTER pid {} on {}",
                framework.binary(),
                before.pid(),
                before.addr,
                after.pid(),
                after.addr
            ),
            _ => servers
                .iter()
                .map(|Started { process: s, layers, .. }| {
                    format!("  {} pid {} on http://{}, {layers} layers", s.name(), s.pid(), s.addr)
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// The steps of `round`.
    fn steps(&self, plan: &SuitePlan, round: u32) -> Vec<Step> {
        match self {
            Self::Variants => steps(&plan.scenarios, round, plan.pairing),
            Self::Builds(b) => b.routes.iter().map(|&p| Step::Sliced(Sliced::before_after(p, round))).collect(),
        }
    }

    /// The deltas of `runs`, of `frameworks`.
    fn deltas(&self, plan: &SuitePlan, runs: &[RunRecord], frameworks: &[Framework]) -> Vec<Delta> {
        match self {
            Self::Variants => {
                let over = results::Over { pairing: plan.pairing, processes: plan.server_per_round };
                results::deltas(runs, frameworks, &plan.scenarios, &plan.layers, over)
            }
            Self::Builds(b) => results::ab_deltas(runs, frameworks, &b.routes),
        }
    }

    /// How a slot reads in the terminal.
    fn slot_columns(&self, slot: &Slot) -> String {
        match self {
            Self::Variants => format!("{:<8} {:<13}", slot.scenario.name(), slot.variant.name()),
            Self::Builds(_) => format!("{:<6} {:<27}", slot.scenario.name(), slot.path),
        }
    }
}

/// What every run of a session shares.
#[derive(Clone, Copy)]
struct RunContext<'a> {
    plan: &'a SuitePlan,
    design: &'a Design,
    dir: &'a Path,
    profiler: &'a Profiler,
    progress: &'a Progress,
    stop: &'a AtomicBool,
}

/// Runs `load` against the `servers` (pids) with the progress display, and
/// with `perf` (when given) recording the first during the measured windows.
///
/// # Errors
/// When the engine cannot start.
pub(super) fn measure_run(
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
            let load = Load::new(
                server.route_load(slot.request_path(), slot.variant.tls(), plan.tls_resumption)?,
                plan.settings,
            );
            let run = measure_run(&load, &[server.process.pid()], profiler.perf_in(slot.round), progress, label, stop)?;
            let figures = RunFigures::new(&run, &load.settings, cpus);
            profiler.take(&run, 0, &figures, slot.variant, profiles, label, progress);
            Ok(vec![(*slot, figures)])
        }
        Step::Sliced(sliced) => {
            let routes: Vec<RouteLoad> = sliced
                .slots
                .iter()
                .map(|s| servers[s.server].route_load(s.request_path(), s.variant.tls(), plan.tls_resumption))
                .collect::<anyhow::Result<_>>()?;
            let settings = match plan.load_percent {
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
                let figures = RunFigures::of_route(&run, &load.settings, cpus, route, slicing);
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
fn target_met(context: &RunContext<'_>, runs: &[RunRecord], framework: Framework, layers: u16, round: u32) -> bool {
    let RunContext { plan, design, progress, .. } = *context;
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

/// Measures one framework; pushes its runs as they complete, and the paths
/// of its flame graphs when profiled.
fn measure_framework(
    context: &RunContext<'_>,
    framework: Framework,
    runs: &mut Vec<RunRecord>,
    flamegraphs: &mut FlameGraphs,
) -> anyhow::Result<()> {
    let RunContext { plan, design, dir, profiler, progress, stop } = *context;
    let mut profiles = Profiles::new();
    let sweeps = design.sweeps(plan);
    let shares = u32::try_from(plan.frameworks.len() * sweeps.len()).unwrap_or(u32::MAX).max(1);
    for &sweep in &sweeps {
        let sweep_text = match sweep {
            Some(layers) if sweeps.len() > 1 => format!(" {layers} layers"),
            _ => String::new(),
        };
        let started = Instant::now();
        let last_round = if plan.target.is_some() { u32::MAX } else { plan.rounds };
        let mut servers: Servers = Vec::new();
        for round in 1..=last_round {
            if let Some(layers) = sweep
                && target_met(context, runs, framework, layers, round)
            {
                break;
            }
            if let Some(target) = plan.target
                && round > 2
                && started.elapsed() >= target.budget / shares
            {
                progress.line(&format!("  {}{sweep_text}: budget spent after {} rounds", framework.name(), round - 1));
                break;
            }
            if stop.load(Ordering::Relaxed) {
                break;
            }
            if servers.is_empty() || plan.server_per_round {
                stop_servers(&mut servers, progress);
                servers = design.start(plan, framework, sweep, round, stop)?;
                progress.line(&design.started_line(framework, &servers, round));
                if let Design::Builds(b) = design {
                    for line in b.note_changes(framework, &servers) {
                        progress.line(&line);
                    }
                }
            }
            for step in design.steps(plan, round) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let what = match &step {
                    Step::Single(slot) => format!("{}/{}", slot.scenario, slot.variant),
                    Step::Sliced(s) if s.slots[0].scenario == Scenario::Before => s.slots[0].path.to_owned(),
                    Step::Sliced(s) => format!("{} sliced", s.slots[0].scenario),
                };
                let label = format!("{}{sweep_text} round {round}/{} {what}", framework.name(), plan.rounds);
                for (slot, figures) in measure_step(context, &servers, &step, &label, &mut profiles)? {
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
                    return Ok(());
                }
                for Started { process, .. } in &mut servers {
                    if process.has_exited() {
                        bail!("{} exited during the run", process.name());
                    }
                }
            }
        }
        stop_servers(&mut servers, progress);
    }
    profiler.say_pending(progress);
    let written = profiling::write_flamegraphs(dir, framework, &plan.scenarios, &profiles, profiler, progress);
    flamegraphs.graphs.extend(written.graphs);
    flamegraphs.differentials.extend(written.differentials);
    Ok(())
}

/// Stops `servers`, noting any that stopped with a failure status (ended
/// by the SIGTERM that stopped it is no failure: a server without a handler
/// for it ends so).
fn stop_servers(servers: &mut Servers, progress: &Progress) {
    use nix::sys::signal::Signal;
    use std::os::unix::process::ExitStatusExt;
    for Started { process: mut server, .. } in servers.drain(..) {
        match server.stop() {
            Some(status) if !status.success() && status.signal() != Some(Signal::SIGTERM as i32) => {
                progress.line(&format!("note: {} stopped with {status}", server.name()))
            }
            _ => {}
        }
    }
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
pub(super) fn run(plan: &SuitePlan, design: &Design, stop: &AtomicBool) -> anyhow::Result<SuiteOutcome> {
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
    if let Design::Builds(b) = design {
        results.meta.ab = Some(b.meta.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone());
    }
    let json = dir.join("results.json");
    eprintln!("measuring into {}", dir.display());
    let profiler = Profiler::detect(plan.profiler);
    results.meta.noise = noise_check(&plan.server_cpus, &plan.client_cpus);
    for line in &results.meta.noise {
        eprintln!("noise: {line}");
    }
    results.meta.client_ceiling_per_s = client_ceiling(plan, stop);
    let runs_per_round = design.steps(plan, 1).len() as u64;
    let sweeps = design.sweeps(plan).len() as u64;
    let progress = Progress::new(plan.frameworks.len() as u64 * sweeps * u64::from(plan.rounds) * runs_per_round);
    let context = RunContext { plan, design, dir: &dir, profiler: &profiler, progress: &progress, stop };
    let mut flamegraphs = FlameGraphs::default();
    let mut stopped_by_error = false;
    for &framework in &plan.frameworks {
        if stop.load(Ordering::Relaxed) || stopped_by_error {
            break;
        }
        progress.line(&format!("{}:", framework.binary()));
        if let Err(e) = measure_framework(&context, framework, &mut results.runs, &mut flamegraphs) {
            let error = format!("{e:#}");
            progress.line(&format!("error: {error}"));
            stopped_by_error = e.downcast_ref::<crate::preflight::Error>().is_some_and(|e| e.is_mismatch());
            results.failures.push(FrameworkFailure { framework, error });
        }
        results.deltas = design.deltas(plan, &results.runs, &plan.frameworks);
        results.meta.profiler = profiler_seen(&results, &profiler);
        if let Design::Builds(b) = design {
            results.meta.ab = Some(b.meta.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone());
        }
        results::write(&json, &results)?;
    }
    progress.finish();
    let interrupted = stop.load(Ordering::Relaxed);
    results.complete = !interrupted && results.failures.is_empty();
    results.deltas = design.deltas(plan, &results.runs, &plan.frameworks);
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
    let others = match design {
        Design::Variants => {
            let (others, skipped) = results::latest_of_other_profiles(&plan.out, plan.profile);
            for e in skipped {
                eprintln!("warning: {e:#}; left out of the profiles side by side");
            }
            others
        }
        Design::Builds(_) => Vec::new(),
    };
    let markdown = report::report(&results, &others, &charts, &flamegraphs);
    std::fs::write(dir.join("report.md"), &markdown)
        .with_context(|| format!("cannot write {}", dir.join("report.md").display()))?;
    std::fs::write(dir.join("report.html"), report::html_page(&markdown, &dir))
        .with_context(|| format!("cannot write {}", dir.join("report.html").display()))?;
    results::link_latest(&plan.out, &dir)?;
    Ok(SuiteOutcome { dir, results, other_profiles: others, interrupted, flamegraphs })
}
