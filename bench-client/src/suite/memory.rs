//! `bench-client memory`: what a connection costs each server in memory.
//! Per server and repeat, a fresh process: its baseline with no
//! connection, then keep-alive connections opened up to each count, every
//! one carrying one verified request and then held idle; then a second
//! fresh process: its baseline, a closed-loop load over each count of
//! connections read at the end of its stretch, and what is kept once the
//! load has ended. Each of these points
//! is `/proc`'s account of the process ([`crate::sys::resident`]). Unless
//! `--no-heap`, a third fresh process runs under valgrind's memcheck and
//! holds idle connections as the first does: its live heap bytes, counted
//! block by block, at each count ([`crate::measure::Memcheck`]).
//! `memory.json` is written after every repeat, so a stop or a server that
//! dies keeps what was measured.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use common::Route;

use super::build;
use super::command;
use super::counted::{CountedServer, START_UNDER_VALGRIND};
use super::plan::SuitePlan;
use super::servers::route_load;
use crate::engine::{Exchange, Load, LoadSettings, Request, RouteLoad, Target, Timing};
use crate::measure::{self, Memcheck, Observers, Start};
use crate::model::{Framework, Profile};
use crate::preflight;
use crate::results::{HeapPoints, MEMORY_SCHEMA_VERSION, MemoryRepeat, MemoryReport, MemoryServer, Results};
use crate::sys::{CpuList, Resident, ServerProcess, open_fds, resident, sleep_until};

/// How long a server may take to listen and answer its health check.
const START: Duration = Duration::from_secs(30);
/// A request without its whole answer after this long fails the repeat.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Let the server finish with what the client just did (accepted
/// connections registered, closed ones dropped) before it is read.
const SETTLE: Duration = Duration::from_millis(300);

/// `--connections` of `memory`: one, then counts a server holds in production.
pub const MEMORY_CONNECTIONS: [usize; 4] = [1, 64, 1024, 4096];

/// Fresh processes per server of `memory` (and of the suite's `memory` scenario).
pub const MEMORY_REPEATS: usize = 3;
/// How long each busy point is loaded by default.
pub const MEMORY_BUSY: Duration = Duration::from_secs(2);
/// Each busy point's warm-up per 512 connections by default.
pub const MEMORY_WARMUP: Duration = Duration::from_secs(1);

/// A checked `memory` session.
#[derive(Debug, Clone)]
pub struct MemoryPlan {
    /// The servers' Cargo profile.
    pub profile: Profile,
    /// The servers measured, in order: frameworks or `--cmd` commands.
    pub servers: Vec<CountedServer>,
    /// The route each connection's requests ask for.
    pub route: &'static Route,
    /// Each idle connection's first request a `PUT /api/devices` of this
    /// many bytes (the device list padded with spaces), before its verified
    /// one: what a large request leaves in a connection's buffers.
    pub put_body_bytes: Option<usize>,
    /// Connection counts, ascending and distinct, at least two.
    pub connections: Vec<usize>,
    /// Count the live heap of a third process per repeat, under memcheck.
    pub heap: bool,
    /// Fresh processes per server (at least 2, for an interval).
    pub repeats: usize,
    /// How long each busy point's connections have to open and warm up
    /// before its stretch, per 512 of them.
    pub warmup: Duration,
    /// How long each busy point is loaded before it is read.
    pub busy: Duration,
    /// CPUs the servers run on (a worker each).
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to: an engine thread each.
    pub client_cpus: CpuList,
    /// Build the servers first.
    pub build: bool,
    /// Where the session's folder goes.
    pub out: PathBuf,
}

impl MemoryPlan {
    /// The suite's `memory` scenario: `memory` with its defaults over the
    /// suite's frameworks, built already, on its CPUs, its folder in `dir`.
    pub(super) fn of_suite(suite: &SuitePlan, dir: &Path) -> Self {
        let workers = suite.server_cpus.len();
        let servers = suite
            .frameworks
            .iter()
            .map(|&f| CountedServer {
                name: f.name().to_owned(),
                command: format!(
                    "{} --addr {{addr}} --workers {workers}",
                    super::build::server_binary(suite.profile, f).display()
                ),
                framework: Some(f),
                middleware: None,
                filler_routes: 0,
            })
            .collect();
        Self {
            profile: suite.profile,
            servers,
            route: common::Route::get(common::RouteId::Plaintext),
            put_body_bytes: None,
            connections: MEMORY_CONNECTIONS.to_vec(),
            heap: true,
            repeats: MEMORY_REPEATS,
            warmup: MEMORY_WARMUP,
            busy: MEMORY_BUSY,
            server_cpus: suite.server_cpus.clone(),
            client_cpus: suite.client_cpus.clone(),
            build: false,
            out: dir.to_owned(),
        }
    }
}

/// The suite's `memory` scenario, after its timed rounds: a `memory`
/// session of [`MemoryPlan::of_suite`] into `results` (and its own folder
/// in `dir`); one that fails or is not complete leaves `results` incomplete.
pub(super) fn memory_scenario(plan: &SuitePlan, dir: &Path, results: &mut Results, stop: &AtomicBool) {
    eprintln!("what a connection costs in memory (the memory scenario)");
    match memory(&MemoryPlan::of_suite(plan, dir), stop) {
        Ok(outcome) => {
            results.complete &= outcome.report.complete;
            results.memory = Some(outcome.report);
        }
        Err(e) => {
            eprintln!("error: memory: {e:#}");
            results.complete = false;
        }
    }
}

/// What a session measured, and where it was written.
#[derive(Debug)]
pub struct MemoryOutcome {
    /// The report, as written.
    pub report: MemoryReport,
    /// Its `memory.json`.
    pub file: PathBuf,
}

/// Measures every server of `plan`, writing `memory.json` after every
/// repeat. A server that dies or answers wrongly ends its own measurement
/// (its error in the file); the others go on.
///
/// # Errors
/// A build that fails, a folder or file that cannot be written, or `stop`
/// (what was measured is in the file the error names).
pub fn memory(plan: &MemoryPlan, stop: &AtomicBool) -> anyhow::Result<MemoryOutcome> {
    let frameworks: Vec<Framework> = plan.servers.iter().filter_map(|s| s.framework).collect();
    let (started, dir) = build::start_session(&frameworks, plan.build, plan.profile, &plan.out)?;
    let file = dir.join("memory.json");
    let mut report = MemoryReport {
        schema_version: MEMORY_SCHEMA_VERSION,
        provenance: super::meta::provenance(
            if frameworks.is_empty() { "command" } else { plan.profile.cargo_name() },
            started,
        ),
        route: plan.route.path.to_owned(),
        put_body_bytes: plan.put_body_bytes,
        connections: plan.connections.clone(),
        busy_ms: u64::try_from(plan.busy.as_millis()).unwrap_or(u64::MAX),
        complete: false,
        servers: Vec::new(),
    };
    plan.client_cpus.pin_current_thread()?;
    for spec in &plan.servers {
        report.servers.push(MemoryServer { name: spec.name.clone(), repeats: Vec::new(), error: None });
        for i in 1..=plan.repeats {
            let heap = if plan.heap { ", heap under memcheck" } else { "" };
            eprintln!("{}: repeat {i} of {}: idle, busy{heap}", spec.name, plan.repeats);
            let (repeat, result) = measure_repeat(plan, spec, &dir, stop);
            let server = report.servers.last_mut().expect("pushed above");
            server.repeats.extend(repeat);
            if let Err(e) = result {
                server.error = Some(format!("{e:#}"));
                crate::results::write(&file, &report)?;
                if stop.load(Ordering::Relaxed) {
                    return Err(e.context(format!("what was measured is in {}", file.display())));
                }
                break;
            }
            crate::results::write(&file, &report)?;
        }
    }
    report.complete = report.servers.iter().all(|s| s.error.is_none());
    crate::results::write(&file, &report)?;
    Ok(MemoryOutcome { report, file })
}

/// One repeat of `spec`: a fresh process holding idle connections, then a
/// fresh one under load, then (with `plan.heap`) one under memcheck whose
/// pipes and trees go in a folder of `dir`; what each held at each point reached
/// (`None` before the first baseline), and why the repeat ended early, if
/// it did.
fn measure_repeat(
    plan: &MemoryPlan,
    spec: &CountedServer,
    dir: &Path,
    stop: &AtomicBool,
) -> (Option<MemoryRepeat>, anyhow::Result<()>) {
    let mut repeat = None;
    let result = on_fresh_server(plan, spec, &[], stop, &mut |server, route, read| {
        let points = repeat.insert(MemoryRepeat {
            idle_baseline: read("before any connection")?,
            idle: Vec::new(),
            busy_baseline: None,
            busy: Vec::new(),
            busy_held: Vec::new(),
            kept: None,
            heap: None,
            idle_held: Vec::new(),
        });
        hold_idle(plan, server, route, stop, &mut |n, held| {
            points.idle.push(read(&format!("with {n} idle connections"))?);
            points.idle_held.push(held);
            Ok(())
        })
    });
    let Some(points) = repeat.as_mut().filter(|_| result.is_ok()) else { return (repeat, result) };
    let result = on_fresh_server(plan, spec, &[], stop, &mut |server, route, read| {
        points.busy_baseline = Some(read("before any connection")?);
        let idle_fds = open_fds(server.pid()).context("the server exited before the load")?;
        for &n in &plan.connections {
            let (at, held) = busy(plan, route, (server.pid(), idle_fds), n, stop)
                .with_context(|| format!("under load with {n} connections"))?;
            points.busy.push(at);
            points.busy_held.push(held);
        }
        settle(stop)?;
        points.kept = Some(read("after the load")?);
        Ok(())
    });
    if result.is_err() || !plan.heap {
        return (repeat, result);
    }
    // Memcheck's pipes and heap trees, removed once the process has ended.
    let dumps = dir.join("memcheck");
    if let Err(e) = std::fs::create_dir_all(&dumps) {
        return (repeat, Err(e).with_context(|| format!("cannot create {}", dumps.display())));
    }
    let result = on_fresh_server(plan, spec, &Memcheck::wrapper(&dumps), stop, &mut |server, route, _| {
        let mut memcheck = Memcheck::attach(server.pid(), &dumps);
        let heap = points.heap.insert(HeapPoints { baseline_bytes: memcheck.live_bytes()?, ..HeapPoints::default() });
        hold_idle(plan, server, route, stop, &mut |_, held| {
            heap.idle_bytes.push(memcheck.live_bytes()?);
            heap.idle_held.push(held);
            Ok(())
        })
    })
    .context("under memcheck (--no-heap leaves it out)");
    let _ = std::fs::remove_dir_all(&dumps);
    (repeat, result)
}

/// Opens keep-alive connections to `server` up to each count of
/// `plan.connections`, every one verified and then held idle, and calls
/// `at` with the count and the connections the server still holds (its
/// open descriptors over those it had before: a server whose keep-alive
/// timeout passes while the others open closes the first ones) once it
/// has settled.
fn hold_idle(
    plan: &MemoryPlan,
    server: &ServerProcess,
    route: &RouteLoad,
    stop: &AtomicBool,
    at: &mut dyn FnMut(usize, usize) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let fds = || open_fds(server.pid()).context("the server exited");
    let before = fds()?;
    let put = plan.put_body_bytes.map(|bytes| put_devices(server.addr, bytes));
    let mut held: Vec<Exchange> = Vec::with_capacity(plan.connections.last().copied().unwrap_or(0));
    for &n in &plan.connections {
        while held.len() < n {
            held.push(
                open_verified(route, put.as_ref(), stop).with_context(|| {
                    format!("connection {} of {n} held idle on {}", held.len() + 1, route.target.path)
                })?,
            );
        }
        settle(stop)?;
        at(n, fds()?.saturating_sub(before).min(n))?;
    }
    Ok(())
}

/// What reads the server's memory now, `at` a point named for the error
/// when it has gone.
type Read<'a> = &'a dyn Fn(&str) -> anyhow::Result<Resident>;

/// Starts `spec` anew (under `wrapper`, valgrind's arguments, when there
/// are any), waits until it is healthy and settled, hands it, its route and
/// a reader of its memory to `measure`, and stops it.
fn on_fresh_server(
    plan: &MemoryPlan,
    spec: &CountedServer,
    wrapper: &[String],
    stop: &AtomicBool,
    measure: &mut dyn FnMut(&ServerProcess, &RouteLoad, Read<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let name = spec.name.as_str();
    let ready = if wrapper.is_empty() { START } else { START_UNDER_VALGRIND };
    // `exec`: the process measured is the server, not a shell waiting for it.
    let shell = format!("exec {} {}", wrapper.join(" "), spec.command);
    let mut server = command::start(name, &shell, &plan.server_cpus, ready, stop)?;
    let result = (|| -> anyhow::Result<()> {
        if !wrapper.is_empty() {
            measure::ensure_under_valgrind(server.pid())?;
        }
        preflight::wait_healthy(&Target::new(server.addr, "/"), ready)
            .with_context(|| format!("{name} is not healthy"))?;
        let pid = server.pid();
        let read = |at: &str| resident(pid).with_context(|| format!("the server exited {at}"));
        settle(stop)?;
        measure(&server, &route_load(server.addr, plan.route), &read)
    })();
    let status = server.stop();
    result.map_err(|e| match status {
        Some(s) if !s.success() => e.context(format!("the server ended with {s}")),
        _ => e,
    })
}

/// A new keep-alive connection that has carried one verified request of
/// `route`, after `put`'s (answered 204) when there is one.
fn open_verified(route: &RouteLoad, put: Option<&Target>, stop: &AtomicBool) -> anyhow::Result<Exchange> {
    if stop.load(Ordering::Relaxed) {
        bail!("interrupted");
    }
    let mut exchange = Exchange::open(put.unwrap_or(&route.target), false, TIMEOUT, Some(stop))?;
    if let Some(put) = put {
        exchange.succeed(1, 204, b"", Some(stop)).with_context(|| format!("PUT {}", put.path))?;
        exchange.ask(&route.target);
    }
    exchange.succeed(1, route.expected_status, &route.expected_body, Some(stop))?;
    Ok(exchange)
}

/// `PUT /api/devices` at `addr` with a body of `bytes`: the device list
/// the server holds from its start, padded with spaces (JSON's own), so
/// that it replaces the list with the same and is answered 204.
fn put_devices(addr: std::net::SocketAddr, bytes: usize) -> Target {
    let mut body = common::devices_json();
    body.resize(bytes.max(body.len()), b' ');
    let headers = ["Content-Type: application/json".to_owned()];
    let request = Request::new("PUT", &headers, Some(body)).expect("a PUT with a JSON body is a request");
    Target { request, ..Target::new(addr, common::RouteId::Devices.path()) }
}

/// Connections per [`MemoryPlan::warmup`] of a busy point's warm-up.
const WARMUP_CONNECTIONS: usize = 512;

/// What the server `pid` holds under a closed-loop load of `route` over
/// `n` connections, every response verified, read near the end of the busy
/// stretch, with how many connections it held then (its open descriptors
/// over `idle_fds`, those it had before any load, which it is first let
/// get back to): a server already under load accepts
/// a burst past its listen backlog (1024 in tokio) only as the client's
/// SYNs are sent again, so it may hold fewer than `n` yet.
fn busy(
    plan: &MemoryPlan,
    route: &RouteLoad,
    (pid, idle_fds): (u32, usize),
    n: usize,
    stop: &AtomicBool,
) -> anyhow::Result<(Resident, usize)> {
    // The previous point's connections closed first: the server holds only what it held idle.
    let deadline = Instant::now() + START;
    while open_fds(pid).context("the server exited before the load")? > idle_fds {
        if Instant::now() >= deadline {
            bail!(
                "the server still holds connections of the previous load after {}",
                humantime::format_duration(START)
            );
        }
        settle(stop)?;
    }
    // A warm-up per 512 connections: 8 of them for 4096 let most of a burst be accepted.
    let warmup = plan.warmup * u32::try_from(n.div_ceil(WARMUP_CONNECTIONS)).unwrap_or(u32::MAX);
    let timing = Timing::new(warmup, plan.busy, plan.busy)?;
    let threads = NonZeroUsize::new(plan.client_cpus.len()).unwrap_or(NonZeroUsize::MIN);
    let connections = NonZeroUsize::new(n).context("no connection")?;
    let load = Load::new(route.clone(), LoadSettings::closed(connections, threads, timing, TIMEOUT));
    let start = Start::now();
    let read_at = start.instant + warmup + plan.busy.mul_f64(0.9);
    let (measured, held) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            sleep_until(read_at, stop).then_some(())?;
            let accepted = open_fds(pid)?.saturating_sub(idle_fds);
            Some((resident(pid)?, accepted))
        });
        let measured = measure::run(&load, Observers { servers: &[pid], ..Observers::default() }, start, stop);
        (measured, reader.join().ok().flatten())
    });
    let measured = measured?;
    if measured.interrupted {
        bail!("interrupted");
    }
    if measured.server_lost {
        bail!("the server exited");
    }
    let stats = &measured.outcome.stats;
    let failed: u64 = stats.failures.by_kind().iter().sum();
    if stats.successful() == 0 || failed > 0 {
        bail!("{} successful requests, {failed} failed: not a load every connection carried", stats.successful());
    }
    let (at, accepted) = held.context("the server could not be read under load")?;
    if accepted < n.div_ceil(2) {
        bail!(
            "the server held {accepted} of the {n} connections near the end of the load: a longer --warmup lets it accept them"
        );
    }
    Ok((at, accepted.min(n)))
}

/// Sleeps [`SETTLE`]; `Err` when `stop` cuts it short.
fn settle(stop: &AtomicBool) -> anyhow::Result<()> {
    if !sleep_until(Instant::now() + SETTLE, stop) {
        bail!("interrupted");
    }
    Ok(())
}
