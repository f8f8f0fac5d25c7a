//! `count`: what a request costs each framework on each route, counted
//! rather than timed. Each route gets a server process of its own under
//! callgrind, alone on its CPUs; per repeat it answers a short and a long
//! stretch of requests (N and 2N, the order alternating), and the
//! difference over N is what one request costs: whatever a stretch pays
//! once (its connection, the measurement's own commands) cancels, as
//! rustc-perf's and gungraun's counts cancel their harness. The spread of a
//! route's repeats is its own noise floor, measured.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use anyhow::{Context, bail};
use common::Route;

use super::build::{build, server_binary};
use super::command;
use super::servers::route_load;
use crate::measure::{Callgrind, Counted, exchange};
use crate::model::{Framework, Profile};
use crate::preflight;
use crate::results::{COUNT_SCHEMA_VERSION, CountDelta, CountReport, CountRow};
use crate::sys::CpuList;

/// How long a server under valgrind may take to listen.
const START_UNDER_VALGRIND: Duration = Duration::from_secs(120);
/// Requests each route answers before anything is counted (uninstrumented):
/// lazy statics, caches and the runtime's first allocations are made; as
/// many again are counted to size the stretches.
const WARMUP_REQUESTS: u64 = 50;
/// Instructions a short stretch is sized to: at 12,000 instructions per
/// request, 2,000 requests, whose repeats agree within ±0.1 % here.
const STRETCH_INSTRUCTIONS: u64 = 24_000_000;
/// The fewest requests a short stretch has, however heavy the route.
const MIN_REQUESTS: u64 = 200;

/// A checked `count` session.
#[derive(Debug, Clone)]
pub struct CountPlan {
    /// The servers' Cargo profile.
    pub profile: Profile,
    /// The servers counted, in order: the workspace's frameworks, or any
    /// commands (`count --cmd`), each a program started under callgrind.
    pub servers: Vec<CountedServer>,
    /// The routes counted on each.
    pub routes: Vec<&'static Route>,
    /// Requests of the short stretch (the long one has twice as many).
    pub requests: u64,
    /// Repeats of every stretch (at least 2, for an interval).
    pub repeats: usize,
    /// State layers of the servers.
    pub layers: u16,
    /// CPUs the servers run on (one worker each).
    pub server_cpus: CpuList,
    /// Build the servers first.
    pub build: bool,
    /// Where the session's folder goes.
    pub out: PathBuf,
    /// CPUs the client (this thread, sending the requests) is pinned to.
    pub client_cpus: Option<CpuList>,
    /// With two servers: an increase beyond this many percent (significant) is a regression.
    pub threshold_percent: f64,
    /// The servers compared, as (before, after) indexes into `servers`:
    /// the second against the first of two `--cmd`, each framework's two
    /// builds in `ab --count`; none otherwise.
    pub pairs: Vec<(usize, usize)>,
}

/// A server to count: its name in the table, and the program and
/// arguments that start it, `{addr}` where it is to listen (run under
/// callgrind with `exec`, so one program, no shell constructs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountedServer {
    /// Its name in the table (`axum`, or the name given to `--cmd`).
    pub name: String,
    /// Its command line, with `{addr}`.
    pub command: String,
    /// The workspace's framework it is, built by `count` unless `--no-build`.
    pub framework: Option<Framework>,
}

impl CountedServer {
    /// `framework`'s server of `profile` with `layers` state layers, one worker.
    pub fn framework(framework: Framework, profile: Profile, layers: u16) -> Self {
        let binary = server_binary(profile, framework);
        Self {
            name: framework.name().to_owned(),
            command: format!("{} --addr {{addr}} --workers 1 --layers {layers}", binary.display()),
            framework: Some(framework),
        }
    }
}

/// What a session counted, and where it was written.
#[derive(Debug)]
pub struct CountOutcome {
    /// The report, as written.
    pub report: CountReport,
    /// Its `count.json`.
    pub file: PathBuf,
}

/// Checks that valgrind and vgdb can run, before anything is built or started.
///
/// # Errors
/// One line naming what is missing and how to install it.
pub fn check_tools() -> anyhow::Result<()> {
    // `vgdb --help` exits 0 (it knows no `--version`).
    for (tool, flag) in [("valgrind", "--version"), ("vgdb", "--help")] {
        let runs = std::process::Command::new(tool).arg(flag).output().is_ok_and(|o| o.status.success());
        if !runs {
            bail!("{tool} is not installed: counting runs the servers under callgrind (apt-get install valgrind)");
        }
    }
    Ok(())
}

/// Runs `plan`: builds (unless told not to), then counts every route of
/// every server, writing `count.json` into a new folder under `plan.out`
/// after each route, so an interruption or a failure keeps what was
/// counted (`complete: false`, the error naming the file).
///
/// # Errors
/// A tool missing, a build that fails, a server that does not start under
/// valgrind or answers a request wrongly, a file that cannot be written, or `stop`.
pub fn count(plan: &CountPlan, stop: &AtomicBool) -> anyhow::Result<CountOutcome> {
    check_tools()?;
    let frameworks: Vec<Framework> = plan.servers.iter().filter_map(|s| s.framework).collect();
    if plan.build && !frameworks.is_empty() {
        build(plan.profile, &frameworks)?;
    }
    let started = SystemTime::now();
    let dir = crate::results::create_run_dir(&plan.out, plan.profile, started)?;
    let file = dir.join("count.json");
    let mut report = CountReport {
        schema_version: COUNT_SCHEMA_VERSION,
        commit: super::meta::commit(),
        cpu_model: super::meta::cpu_model(),
        started_utc: humantime::format_rfc3339_seconds(started).to_string(),
        profile: plan.profile.cargo_name().to_owned(),
        requests: plan.requests,
        connections: 1,
        complete: false,
        rows: Vec::new(),
        deltas: Vec::new(),
    };
    if let Some(cpus) = &plan.client_cpus {
        cpus.pin_current_thread()?;
    }
    // Route by route, every server in turn: two builds compared are counted
    // side by side in time, so a change in what the machine does between
    // routes reaches both (a count moves with the load by up to 1 % here).
    let mut counted: Vec<(usize, usize, CountRow)> = Vec::new();
    for (r, route) in plan.routes.iter().enumerate() {
        for (s, spec) in plan.servers.iter().enumerate() {
            let dumps = dir.join(format!("callgrind-{}", spec.name.replace(|c: char| !c.is_ascii_alphanumeric(), "-")));
            let row = std::fs::create_dir_all(&dumps)
                .with_context(|| format!("cannot create {}", dumps.display()))
                .and_then(|()| {
                    if stop.load(Ordering::Relaxed) {
                        bail!("interrupted");
                    }
                    count_route(plan, spec, route, &dumps, stop)
                });
            match row {
                Ok(row) => {
                    counted.push((s, r, row));
                    // The table reads server by server, each in the routes' order.
                    counted.sort_by_key(|(s, r, _)| (*s, *r));
                    report.rows = counted.iter().map(|(_, _, row)| row.clone()).collect();
                    report.deltas = count_deltas(&report.rows, &plan.servers, &plan.pairs);
                    crate::results::write(&file, &report)?;
                }
                Err(e) => {
                    crate::results::write(&file, &report)?;
                    return Err(e.context(format!("what was counted is in {}", file.display())));
                }
            }
        }
    }
    report.complete = true;
    crate::results::write(&file, &report)?;
    Ok(CountOutcome { report, file })
}

/// Each pair's after against its before on every route both counted: the
/// change of each count, with Welch's interval over the repeats.
fn count_deltas(rows: &[CountRow], servers: &[CountedServer], pairs: &[(usize, usize)]) -> Vec<CountDelta> {
    let of = |name: &str, route: &str| rows.iter().find(|r| r.framework == name && r.route == route);
    pairs
        .iter()
        .filter_map(|&(b, a)| Some((servers.get(b)?, servers.get(a)?)))
        .flat_map(|(before, after)| {
            rows.iter()
                .filter(|r| r.framework == before.name)
                .filter_map(move |b| of(&after.name, &b.route).map(|a| CountDelta::of(b, a)))
        })
        .collect()
}

/// Counts `route` on a new process of `spec` under callgrind (a process
/// per route, so that no route's count carries another's history: the
/// allocator's state after a route that allocates hundreds of times per
/// request moved the next routes' counts by 1 to 4 % in one process): a
/// warm-up, a probe that sizes the stretches, then the repeats.
fn count_route(
    plan: &CountPlan,
    spec: &CountedServer,
    route: &Route,
    dumps: &std::path::Path,
    stop: &AtomicBool,
) -> anyhow::Result<CountRow> {
    if let Some(framework) = spec.framework {
        crate::sys::ServerProcess::check_binary(&server_binary(plan.profile, framework))?;
    }
    let shell = format!("exec {} {}", Callgrind::wrapper(dumps).join(" "), spec.command);
    let name = format!("{} (callgrind)", spec.name);
    let mut server = command::start(&name, &shell, &plan.server_cpus, START_UNDER_VALGRIND, stop)?;
    let counted = (|| {
        preflight::wait_healthy(&crate::engine::Target::new(server.addr, "/"), START_UNDER_VALGRIND)
            .with_context(|| format!("{name} is not healthy"))?;
        let load = route_load(server.addr, route);
        exchange(&load, WARMUP_REQUESTS, stop).with_context(|| format!("{name}: warm-up of {}", route.path))?;
        let mut callgrind = Callgrind::attach(server.pid(), dumps);
        callgrind.instrument()?;
        // A heavy route needs fewer requests for the same precision: each stretch of N is sized
        // to about STRETCH_INSTRUCTIONS, between MIN_REQUESTS and --requests.
        let probe = callgrind.count(|| exchange(&load, WARMUP_REQUESTS, stop))?;
        let per_request = (probe.instructions / WARMUP_REQUESTS).max(1);
        let n = (STRETCH_INSTRUCTIONS / per_request).clamp(MIN_REQUESTS.min(plan.requests), plan.requests);
        let mut row = CountRow {
            framework: spec.name.clone(),
            route: route.path.to_owned(),
            requests: n,
            instructions_per_request: Vec::new(),
            allocations_per_request: Vec::new(),
            system_calls_per_request: Vec::new(),
            instructions_per_connection: Vec::new(),
        };
        for repeat in 0..plan.repeats {
            if stop.load(Ordering::Relaxed) {
                bail!("interrupted");
            }
            let mut stretch = |requests| callgrind.count(|| exchange(&load, requests, stop));
            // The order alternates, so a drift over the session favours neither stretch.
            let (short, long): (Counted, Counted) = if repeat % 2 == 0 {
                let short = stretch(n)?;
                (short, stretch(2 * n)?)
            } else {
                let long = stretch(2 * n)?;
                (stretch(n)?, long)
            };
            if long.instructions <= short.instructions {
                bail!(
                    "{} requests counted {} instructions, {n} counted {}: a stretch was not counted whole",
                    2 * n,
                    long.instructions,
                    short.instructions
                );
            }
            let per = |a: u64, b: u64| (b as f64 - a as f64) / n as f64;
            row.instructions_per_request.push(per(short.instructions, long.instructions));
            row.allocations_per_request.push(per(short.allocations, long.allocations));
            row.system_calls_per_request.push(per(short.system_calls, long.system_calls));
            // A connection opened and closed with no request: what a connection costs, apart.
            row.instructions_per_connection.push(stretch(0)?.instructions as f64);
        }
        Ok(row)
    })();
    let status = server.stop();
    counted.with_context(|| format!("{name} on {}: {}", route.path, server_said(status)))
}

/// How the server ended, for an error's context.
fn server_said(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) if s.success() => "stopped".to_owned(),
        Some(s) => format!("the server ended with {s}"),
        None => "stopped".to_owned(),
    }
}
