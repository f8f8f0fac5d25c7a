//! The suite: build the servers, then for each framework start its server
//! pinned to the server CPUs, check it, and measure every scenario's two
//! variants back to back in each round (order alternating by round), with the
//! `/plaintext` floor once per round; then compute the deltas and write the
//! results folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use clap::ValueEnum;
use common::{Route, RouteId};
use reqwest::Url;

use crate::affinity::CpuList;
use crate::calibrate::{self, CalibratePlan};
use crate::engine::{self, LoadPlan, RunOutcome};
use crate::plan::{FlamegraphPlan, Framework, SuitePlan};
use crate::plan::{LoadSettings, Profile};
use crate::preflight;
use crate::profiler::{self, Perf};
use crate::progress::Progress;
use crate::results::{self, FrameworkFailure, Meta, Results, RunFigures, RunRecord, SCHEMA_VERSION};
use crate::server::ServerProcess;
use crate::{charts, report};

/// What one scenario compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scenario {
    /// `/api/devices` (serialized per request) → `/api/devices/preserialized`
    /// (serialized once at start-up) and → `/api/devices/cached` (serialized
    /// once per change of the list).
    Payload,
    /// `/state/fat` (35-field state cloned per use) → `/state/arc` (one `Arc`).
    State,
}

impl Scenario {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Payload => "payload",
            Self::State => "state",
        }
    }

    /// The baseline variant first, then each changed one: (variant name, route).
    pub fn variants(self) -> &'static [(&'static str, RouteId)] {
        match self {
            Self::Payload => &[
                ("per_request", RouteId::Devices),
                ("preserialized", RouteId::DevicesPreserialized),
                ("cached", RouteId::DevicesCached),
            ],
            Self::State => &[("fat", RouteId::StateFat), ("arc", RouteId::StateArc)],
        }
    }
}

/// What every run of a suite shares.
#[derive(Clone, Copy)]
struct RunContext<'a> {
    dir: &'a Path,
    perf: Option<&'a Perf>,
    progress: &'a Progress,
    stop: &'a AtomicBool,
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
}

impl SuiteOutcome {
    /// Whether every framework completed and every run was free of failures.
    pub fn clean(&self) -> bool {
        self.results.complete && self.results.runs.iter().all(|r| !r.figures.is_failure())
    }
}

/// The workspace root (where `Cargo.toml` and `target/` are).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| workspace_root().join("target"), PathBuf::from)
}

/// Where Cargo puts `framework`'s server binary of `profile`.
fn server_binary(profile: Profile, framework: Framework) -> PathBuf {
    target_dir().join(profile.target_dir()).join(framework.binary())
}

/// Extra `RUSTFLAGS` of the `profiling` profile's servers: frame pointers, so
/// that `perf record -g` can walk the stacks of optimized code (Cargo
/// profiles cannot set rustflags on stable Rust).
pub const PROFILING_RUSTFLAGS: &str = "-C force-frame-pointers=yes";

/// Builds the servers of `frameworks` in `profile` (`cargo build --locked`).
///
/// Runs `$CARGO`, or `cargo` when `CARGO` is unset.
///
/// # Errors
/// When cargo cannot be run or the build fails; the message quotes the command.
pub fn build(profile: Profile, frameworks: &[Framework]) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(&cargo);
    command.current_dir(workspace_root()).args(["build", "--locked", "--profile", profile.cargo_name()]);
    for f in frameworks {
        command.args(["-p", &f.binary()]);
    }
    if profile == Profile::Profiling {
        let mut flags = std::env::var("RUSTFLAGS").unwrap_or_default();
        flags.push(' ');
        flags.push_str(PROFILING_RUSTFLAGS);
        command.env("RUSTFLAGS", flags.trim());
    }
    let shown = std::iter::once(cargo.as_os_str())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!("building the servers ({} profile)…", profile.cargo_name());
    let status = command.status().with_context(|| format!("cannot run `{shown}`"))?;
    if !status.success() {
        bail!("`{shown}` failed ({status}): the servers were not built");
    }
    Ok(())
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .current_dir(workspace_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

fn meta(plan: &SuitePlan, started: SystemTime) -> Meta {
    let mut commit = command_line("git", &["rev-parse", "HEAD"]);
    let status = command_line("git", &["status", "--porcelain", "--untracked-files=no"]);
    if commit != "unknown" && status != "unknown" && !status.is_empty() {
        commit.push_str("-dirty");
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_owned()))
        .unwrap_or_else(|| "unknown".to_owned());
    let s = &plan.settings;
    Meta {
        commit,
        rustc: command_line("rustc", &["--version"]),
        profile: plan.profile,
        cpu_model,
        cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown".to_owned(), |k| k.trim().to_owned()),
        started_utc: humantime::format_rfc3339_seconds(started).to_string(),
        connections: s.connections.get() as u64,
        duration_s: s.duration.as_secs_f64(),
        warmup_s: s.warmup.as_secs_f64(),
        window_s: s.window.as_secs_f64(),
        timeout_s: s.timeout.as_secs_f64(),
        rounds: plan.rounds,
        layers: plan.layers.clone(),
        server_cpus: plan.server_cpus.cpus().to_vec(),
        client_cpus: plan.client_cpus.cpus().to_vec(),
        server_workers: plan.server_cpus.len(),
        client_threads: s.threads.get(),
        frameworks: plan.frameworks.clone(),
        scenarios: plan.scenarios.iter().map(|s| s.name().to_owned()).collect(),
        profiler: None,
        client_ceiling_per_s: None,
    }
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
            eprintln!("{}", ceiling.summary());
            (ceiling.figures.usable()).then(|| ceiling.requests_per_s())
        }
        Err(e) => {
            eprintln!("warning: client ceiling not measured: {e:#}");
            None
        }
    }
}

/// The folder `OUT/<UTC timestamp>-<profile>`, created new (never reused).
fn create_run_dir(plan: &SuitePlan, started: SystemTime) -> anyhow::Result<PathBuf> {
    let stamp: String =
        humantime::format_rfc3339_seconds(started).to_string().chars().filter(|c| *c != '-' && *c != ':').collect();
    std::fs::create_dir_all(&plan.out).with_context(|| format!("cannot create {}", plan.out.display()))?;
    let dir = plan.out.join(format!("{stamp}-{}", plan.profile.cargo_name()));
    std::fs::create_dir(&dir).with_context(|| format!("cannot create {} (it must not exist yet)", dir.display()))?;
    Ok(dir)
}

/// Points `OUT/latest` at `dir` (replacing the link atomically).
fn link_latest(out: &Path, dir: &Path) -> anyhow::Result<()> {
    let name = dir.file_name().context("run folder has a name")?;
    let tmp = out.join(".latest.tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(name, &tmp)?;
    std::fs::rename(&tmp, out.join("latest"))?;
    Ok(())
}

/// `bench-client flamegraph`: profiles the plan's server on its route for
/// its duration after a 1 s warm-up, writes
/// `out/flamegraph-<framework>-<route>-<UTC timestamp>.svg`, prints its path
/// and the top 10 of self time.
///
/// # Errors
/// perf unavailable, an unknown route, a server that does not start, or a
/// recording that fails.
pub fn flamegraph_command(plan: &FlamegraphPlan, stop: &AtomicBool) -> anyhow::Result<PathBuf> {
    let perf = Perf::detect()?;
    let (framework, route, profile, out) = (plan.framework, plan.route, plan.profile, &plan.out);
    build(profile, &[framework])?;
    plan.client_cpus.pin_current_thread()?;
    let server = start_server(profile, framework, &plan.server_cpus, plan.layers)?;
    let load = load_plan(&plan.settings, &server, route);
    let progress = Progress::new(1);
    let label = format!("{} {}", framework.name(), route.path);
    let (outcome, folded) = measure(&load, Some(&perf), &progress, &label, stop)?;
    progress.finish();
    anyhow::ensure!(!outcome.interrupted, "interrupted before the recording ended");
    anyhow::ensure!(outcome.stats.successful() > 0, "no successful request: nothing worth a flame graph");
    let folded = folded.context("the profiler did not run")??;
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
        outcome.stats.successful()
    );
    profiler::flamegraph(&profiler::lines(&stacks), &title, &svg)?;
    println!("top self time ({:.0} ms of server CPU sampled):", stacks.values().sum::<u64>() as f64 / 1e6);
    for (function, percent) in profiler::top_self(&stacks, 10) {
        println!("  {percent:5.1} %  {function}");
    }
    Ok(svg)
}

/// The newest readable `results.json` of each profile other than `profile`
/// under `out` (run folders are named `<UTC timestamp>-<profile>`, so the
/// greatest name is the newest), and why each newer one was skipped (a
/// missing, truncated or corrupted file, or another schema version; each
/// error names the file).
pub fn latest_of_other_profiles(out: &Path, profile: crate::plan::Profile) -> (Vec<Results>, Vec<anyhow::Error>) {
    let (mut found, mut skipped) = (Vec::new(), Vec::new());
    let Ok(entries) = std::fs::read_dir(out) else { return (found, skipped) };
    let mut names: Vec<String> = entries.filter_map(|e| e.ok()?.file_name().into_string().ok()).collect();
    names.sort();
    for &other in Profile::value_variants() {
        if other == profile {
            continue;
        }
        let suffix = format!("-{}", other.cargo_name());
        let newest = names
            .iter()
            .rev()
            .filter(|n| n.ends_with(&suffix))
            .find_map(|n| results::load(&out.join(n)).map_err(|e| skipped.push(e)).ok());
        found.extend(newest);
    }
    (found, skipped)
}

/// One measured run: what to load and how to label it.
struct RunSpec {
    scenario: &'static str,
    variant: &'static str,
    route: RouteId,
    round: u32,
    position: u32,
}

/// The runs of `round` (from 1): the floor, then each scenario's variants,
/// baseline first in odd rounds and second in even rounds.
fn round_specs(scenarios: &[Scenario], round: u32) -> Vec<RunSpec> {
    let mut specs =
        vec![RunSpec { scenario: "floor", variant: "plaintext", route: RouteId::Plaintext, round, position: 1 }];
    for &scenario in scenarios {
        let mut variants = scenario.variants().to_vec();
        if round.is_multiple_of(2) {
            variants.reverse();
        }
        for (variant, route) in variants {
            let position = u32::try_from(specs.len()).unwrap_or(u32::MAX) + 1;
            specs.push(RunSpec { scenario: scenario.name(), variant, route, round, position });
        }
    }
    specs
}

/// Starts `framework`'s server of `profile` pinned to `cpus` (workers = their
/// count) with `layers` state layers, waits until it is healthy and checks
/// every route.
///
/// # Errors
/// A missing binary, a server that does not start, or a preflight mismatch
/// (the message names server, route and difference).
pub fn start_server(
    profile: Profile,
    framework: Framework,
    cpus: &CpuList,
    layers: u16,
) -> anyhow::Result<ServerProcess> {
    let binary = server_binary(profile, framework);
    let args = [
        "--addr".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--workers".to_owned(),
        cpus.len().to_string(),
        "--layers".to_owned(),
        layers.to_string(),
    ];
    let server = ServerProcess::start(&binary, &args, cpus)?;
    let base = Url::parse(&format!("http://{}/", server.addr))?;
    preflight::wait_healthy(&base, Duration::from_secs(10))
        .with_context(|| format!("{} is not healthy", server.name()))?;
    preflight::check_routes(server.name(), &base)?;
    Ok(server)
}

/// The load plan of one run of `route` against `server`.
pub fn load_plan(settings: &LoadSettings, server: &ServerProcess, route: &Route) -> LoadPlan {
    let addr = server.addr;
    settings.plan(addr, addr.to_string(), route.path.to_owned(), route.expected_body(), Some(server.pid()))
}

/// Runs `load` with the progress display, and with `perf` (when given)
/// recording the server during the measured windows only. Returns the
/// outcome and, when profiled, the folded stacks (or why there are none).
///
/// # Errors
/// When the engine cannot start.
pub fn measure(
    load: &LoadPlan,
    perf: Option<&Perf>,
    progress: &Progress,
    label: &str,
    stop: &AtomicBool,
) -> anyhow::Result<(RunOutcome, Option<anyhow::Result<String>>)> {
    let start = Instant::now();
    let windows = u32::try_from(load.windows()).unwrap_or(u32::MAX);
    let (outcome, folded) = std::thread::scope(|scope| {
        let recorder = scope.spawn(|| {
            let perf = perf?;
            let pid = load.server_pid?;
            let file = std::env::temp_dir().join(format!("bench-{}-{pid}.perf.data", std::process::id()));
            if !crate::cpu::sleep_until(start + load.settings.warmup, stop) {
                return None;
            }
            let recording = match perf.attach(pid, &file) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            crate::cpu::sleep_until(start + load.settings.warmup + load.settings.duration, stop);
            Some(recording.finish())
        });
        let outcome =
            progress.during(label, load.settings.warmup, load.settings.window, windows, || engine::run(load, stop));
        (outcome, recorder.join().unwrap_or_else(|_| Some(Err(anyhow::anyhow!("the profiler thread panicked")))))
    });
    Ok((outcome?, folded))
}

/// Writes the flame graph and folded stacks of each profiled variant of
/// `framework` under `dir/flamegraphs/`, prints each one's top 10 self time,
/// and returns the SVG paths relative to `dir`.
fn write_flamegraphs(
    dir: &Path,
    framework: Framework,
    profiles: &BTreeMap<String, BTreeMap<String, u64>>,
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
        let cpu_ms = stacks.values().sum::<u64>() as f64 / 1e6;
        let mut text =
            format!("  top self time, {} {variant} ({cpu_ms:.0} ms of server CPU sampled):", framework.name());
        for (function, percent) in profiler::top_self(stacks, 10) {
            text.push_str(&format!("\n    {percent:5.1} %  {function}"));
        }
        progress.line(&text);
    }
    written
}

/// Measures one framework; pushes its runs as they complete, and the paths
/// of its flame graphs when profiled.
fn measure_framework(
    plan: &SuitePlan,
    framework: Framework,
    context: &RunContext<'_>,
    runs: &mut Vec<RunRecord>,
    flamegraphs: &mut Vec<String>,
) -> anyhow::Result<()> {
    let RunContext { dir, perf, progress, stop } = *context;
    let s = &plan.settings;
    let mut profiles: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for &layers in &plan.layers {
        let mut server = start_server(plan.profile, framework, &plan.server_cpus, layers)?;
        progress.line(&format!("  {} pid {} on http://{}, {layers} layers", server.name(), server.pid(), server.addr));
        let sweep = if plan.layers.len() > 1 { format!(" {layers} layers") } else { String::new() };
        for round in 1..=plan.rounds {
            for spec in round_specs(&plan.scenarios, round) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let route = Route::get(spec.route);
                let load = load_plan(s, &server, route);
                let label = format!(
                    "{}{sweep} round {round}/{} {}/{}",
                    framework.name(),
                    plan.rounds,
                    spec.scenario,
                    spec.variant
                );
                let (outcome, folded) = measure(&load, perf, progress, &label, stop)?;
                match folded {
                    Some(Ok(folded)) => profiler::merge(profiles.entry(spec.variant.to_owned()).or_default(), &folded),
                    Some(Err(e)) => progress.line(&format!("warning: profiling {label} failed: {e:#}")),
                    None => {}
                }
                let figures = RunFigures::new(&outcome, s, Some(plan.server_cpus.len()));
                progress.line(&format!(
                "  {:<6}{sweep} round {round}/{} {:<8} {:<13} {:>9} successful {:>9.0}/s  {:>5} failed  p99 {:>7.2} ms  server CPU {:>5.1} %{}",
                framework.name(),
                plan.rounds,
                spec.scenario,
                spec.variant,
                figures.successful,
                figures.requests_per_s,
                figures.failed_total,
                figures.latency_us.p99 as f64 / 1000.0,
                figures.server_cpu_percent.unwrap_or(f64::NAN),
                if figures.client_bound { "  CLIENT-BOUND" } else { "" }
            ));
                runs.push(RunRecord {
                    framework,
                    scenario: spec.scenario.to_owned(),
                    variant: spec.variant.to_owned(),
                    route: route.path.to_owned(),
                    profile: plan.profile,
                    layers,
                    round: spec.round,
                    position: spec.position,
                    figures,
                });
                if stop.load(Ordering::Relaxed) {
                    return Ok(());
                }
                if server.has_exited() {
                    bail!("{} exited during the run", server.name());
                }
            }
        }
        match server.stop() {
            Some(status) if !status.success() => eprintln!("note: {} stopped with {status}", server.name()),
            _ => {}
        }
    }
    flamegraphs.extend(write_flamegraphs(dir, framework, &profiles, progress));
    Ok(())
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
    let dir = create_run_dir(plan, started)?;
    let mut results = Results {
        schema_version: SCHEMA_VERSION,
        complete: false,
        meta: meta(plan, started),
        runs: Vec::new(),
        deltas: Vec::new(),
        failures: Vec::new(),
    };
    let json = dir.join("results.json");
    eprintln!("measuring into {}", dir.display());
    let runs_per_round = round_specs(&plan.scenarios, 1).len() as u64;
    let progress = Progress::new(
        plan.frameworks.len() as u64 * plan.layers.len() as u64 * u64::from(plan.rounds) * runs_per_round,
    );
    let perf = if plan.profiler {
        match Perf::detect() {
            Ok(perf) => {
                eprintln!(
                    "profiling each server with perf record -e cpu-clock -g -F {} during the measured windows",
                    profiler::FREQUENCY_HZ
                );
                Some(perf)
            }
            Err(e) => {
                eprintln!("note: running without the profiler: {e:#}");
                None
            }
        }
    } else {
        None
    };
    results.meta.profiler = perf.as_ref().map(|_| format!("perf record -e cpu-clock -g -F {}", profiler::FREQUENCY_HZ));
    results.meta.client_ceiling_per_s = client_ceiling(plan, stop);
    let context = RunContext { dir: &dir, perf: perf.as_ref(), progress: &progress, stop };
    let mut flamegraphs = Vec::new();
    let mut stopped_by_error = false;
    for &framework in &plan.frameworks {
        if stop.load(Ordering::Relaxed) || stopped_by_error {
            break;
        }
        progress.line(&format!("{}:", framework.binary()));
        if let Err(e) = measure_framework(plan, framework, &context, &mut results.runs, &mut flamegraphs) {
            let error = format!("{e:#}");
            progress.line(&format!("error: {error}"));
            stopped_by_error = e.downcast_ref::<preflight::Mismatch>().is_some();
            results.failures.push(FrameworkFailure { framework, error });
        }
        results.deltas = results::deltas(&results.runs, &plan.frameworks, &plan.scenarios, &plan.layers);
        results::write_json(&json, &results)?;
    }
    progress.finish();
    let interrupted = stop.load(Ordering::Relaxed);
    results.complete = !interrupted && results.failures.is_empty();
    results.deltas = results::deltas(&results.runs, &plan.frameworks, &plan.scenarios, &plan.layers);
    results::write_json(&json, &results)?;
    let charts = charts::suite_charts(&dir, &results).unwrap_or_else(|e| {
        eprintln!("warning: charts not drawn: {e:#}");
        Vec::new()
    });
    let (others, skipped) = latest_of_other_profiles(&plan.out, plan.profile);
    for e in skipped {
        eprintln!("warning: {e:#}; left out of the profiles side by side");
    }
    std::fs::write(dir.join("report.md"), report::report(&results, &others, &charts, &flamegraphs))
        .with_context(|| format!("cannot write {}", dir.join("report.md").display()))?;
    link_latest(&plan.out, &dir)?;
    Ok(SuiteOutcome { dir, results, other_profiles: others, interrupted })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_which_variant_goes_first() {
        let odd = round_specs(&[Scenario::Payload, Scenario::State], 1);
        let even = round_specs(&[Scenario::Payload, Scenario::State], 2);
        let names = |s: &[RunSpec]| s.iter().map(|r| r.variant).collect::<Vec<_>>();
        assert_eq!(names(&odd), ["plaintext", "per_request", "preserialized", "cached", "fat", "arc"]);
        assert_eq!(names(&even), ["plaintext", "cached", "preserialized", "per_request", "arc", "fat"]);
        assert_eq!(even.iter().map(|r| r.position).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn other_profiles_skip_unreadable_results_and_name_them() {
        let out = std::env::temp_dir().join(format!("bench-other-profiles-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let write = |name: &str, text: &str| {
            std::fs::create_dir_all(out.join(name)).unwrap();
            std::fs::write(out.join(name).join("results.json"), text).unwrap();
        };
        let valid = serde_json::to_string(&results::fixtures::results(Vec::new())).unwrap();
        write("20260101T000000Z-release", &valid);
        write("20260201T000000Z-release", &valid[..valid.len() / 2]);
        write("20260301T000000Z-profiling", "{\"schema_version\": 3, \"runs\": [");
        write("20260401T000000Z-dev", "not even json");

        let (found, skipped) = latest_of_other_profiles(&out, Profile::Dev);
        assert_eq!(found.len(), 1, "the older readable release run");
        assert_eq!(found[0].meta.profile, Profile::Release);
        let errors: Vec<String> = skipped.iter().map(|e| format!("{e:#}")).collect();
        assert_eq!(errors.len(), 2, "{errors:#?}");
        for (error, folder) in errors.iter().zip(["20260201T000000Z-release", "20260301T000000Z-profiling"]) {
            let file = out.join(folder).join("results.json");
            assert!(error.starts_with(&format!("{} is not valid JSON", file.display())), "{error}");
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}
