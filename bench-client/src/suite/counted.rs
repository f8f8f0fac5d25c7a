//! `count`: what a request costs each framework on each route, counted
//! rather than timed. Each route gets three server processes of its own in
//! turn, alone on their CPUs: one under callgrind (instructions, calls into
//! the allocator), one under memcheck (bytes allocated), one native under
//! `perf stat` (system calls, context switches, page faults). Per repeat
//! each answers a short and a long stretch of requests (N and 2N, the order
//! alternating), and the difference over N is what one request costs:
//! whatever a stretch pays once (its connection, the measurement's own
//! commands) cancels, as rustc-perf's and gungraun's counts cancel their
//! harness. The spread of a route's repeats is its own noise floor, measured.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use common::Route;
use common::middleware::Middleware;

use super::build::server_binary;
use super::command;
use super::servers::{ServerFlags, layered_load, route_load};
use crate::engine::{Protocol, RouteLoad, Target};
use crate::measure::{Callgrind, Memcheck, PerfStat, exchange};
use crate::model::{Framework, Profile, Variant};
use crate::preflight;
use crate::results::{COUNT_SCHEMA_VERSION, CountDelta, CountReport, CountRow};
use crate::sys::CpuList;

/// How long a server under valgrind may take to listen.
pub(super) const START_UNDER_VALGRIND: Duration = Duration::from_secs(120);
/// Requests each route answers before anything is counted (uninstrumented):
/// lazy statics, caches and the runtime's first allocations are made; as
/// many again are counted to size the stretches.
const WARMUP_REQUESTS: u64 = 50;
/// Instructions a short stretch is sized to: at 12,000 instructions per
/// request, 2,000 requests, whose repeats agree within ±0.1 % here.
const STRETCH_INSTRUCTIONS: u64 = 24_000_000;
/// The fewest requests a short stretch has, however heavy the route.
const MIN_REQUESTS: u64 = 200;
/// Memcheck's stretches are a quarter of callgrind's, at least this many
/// requests: bytes allocated per request repeat exactly (±0.00 % over
/// three repeats of every route here), so fewer requests lose nothing and
/// save a third of the session.
const MIN_HEAP_REQUESTS: u64 = 50;

/// `n` requests rounded up to whole batches of `streams` (h2c), as they are sent.
fn whole_batches(n: u64, streams: Option<usize>) -> u64 {
    let batch = streams.map_or(1, |s| s.max(1) as u64);
    n.div_ceil(batch) * batch
}

/// The short stretch of memcheck for a route whose callgrind stretch is `n`.
fn heap_requests(n: u64) -> u64 {
    (n / 4).max(MIN_HEAP_REQUESTS).min(n)
}

/// `--requests` of `count` and `ab --count`, and what `suite --count` counts with.
pub const COUNT_REQUESTS: u64 = 2000;
/// `--repeats` of `count` and `ab --count`, and what `suite --count` counts with.
pub const COUNT_REPEATS: usize = 3;

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
    /// Count system calls, context switches and page faults of the native
    /// process with perf (`--no-perf`: not).
    pub perf: bool,
    /// Each route is also counted over HTTP/2 with prior knowledge (h2c),
    /// once per entry with that many streams at once (`--http2-streams`):
    /// a row each, labelled as `http2_label` says; empty: HTTP/1.1 only.
    pub http2_streams: Vec<usize>,
    /// The routes counted over h2c: `None`, every route (`count`); `suite
    /// --count` names those its deltas load over h2c.
    pub http2_routes: Option<Vec<&'static Route>>,
}

/// How a row counted over h2c with `streams` streams at once names its
/// route: `h2c /plaintext` (one stream, as the suite's `http2` scenario
/// names it), `h2c x16 /plaintext`.
pub(super) fn http2_label(path: &str, streams: usize) -> String {
    match streams {
        1 => format!("h2c {path}"),
        n => format!("h2c x{n} {path}"),
    }
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
    /// Its `--middleware` (`count --middleware`): its requests then send
    /// `common::middleware::REQUEST_HEADERS` and each answer is checked
    /// through the layers; `None`: the route table's answer, plain.
    pub middleware: Option<&'static [Middleware]>,
    /// Its `--filler-routes` (`count --filler-routes`; 0: none).
    pub filler_routes: u16,
}

impl CountedServer {
    /// `framework`'s server of `profile` with `layers` state layers, one worker.
    pub fn framework(framework: Framework, profile: Profile, layers: u16) -> Self {
        let binary = server_binary(profile, framework);
        Self {
            name: framework.name().to_owned(),
            command: format!("{} --addr {{addr}} --workers 1 --layers {layers}", binary.display()),
            framework: Some(framework),
            middleware: None,
            filler_routes: 0,
        }
    }

    /// `framework`'s server as [`CountedServer::framework`] with `fillers`
    /// routes of each kind ahead of the scale targets, named as
    /// [`crate::report::counted_name`] says (`axum 1000 ahead`).
    pub fn with_fillers(framework: Framework, profile: Profile, layers: u16, fillers: u16) -> Self {
        let plain = Self::framework(framework, profile, layers);
        Self {
            name: crate::report::counted_name(framework, fillers),
            command: format!(
                "{} {}",
                plain.command,
                ServerFlags { filler_routes: fillers, ..ServerFlags::default() }.args().join(" ")
            ),
            filler_routes: fillers,
            ..plain
        }
    }

    /// `framework`'s server as [`CountedServer::framework`], with `--middleware
    /// on` (empty: `none`), named `axum trace` after `variant`'s layer
    /// (`axum bare`, `axum stacked`).
    pub fn layered(framework: Framework, profile: Profile, layers: u16, variant: Variant) -> Option<Self> {
        let on = variant.middleware(framework)?;
        let names: Vec<&str> = on.iter().map(|m| m.name()).collect();
        let list = if names.is_empty() { "none".to_owned() } else { names.join(",") };
        let plain = Self::framework(framework, profile, layers);
        let layer = variant.label().split(' ').next().unwrap_or_default();
        Some(Self {
            name: format!("{} {layer}", framework.name()),
            command: format!("{} --middleware {list}", plain.command),
            middleware: Some(on),
            ..plain
        })
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

/// Checks that valgrind and vgdb can run, and with `perf` that perf may
/// count the software events, before anything is built or started.
///
/// # Errors
/// One line naming what is missing and how to install it.
pub fn check_tools(perf: bool) -> anyhow::Result<()> {
    check_valgrind("counting runs the servers under callgrind")?;
    if perf { PerfStat::check() } else { Ok(()) }
}

/// Checks that valgrind and vgdb can run; `why` says what needs them.
///
/// # Errors
/// One line naming what is missing, `why`, and how to install it.
pub fn check_valgrind(why: &str) -> anyhow::Result<()> {
    // `vgdb --help` exits 0 (it knows no `--version`).
    for (tool, flag) in [("valgrind", "--version"), ("vgdb", "--help")] {
        let runs = std::process::Command::new(tool).arg(flag).output().is_ok_and(|o| o.status.success());
        if !runs {
            bail!("{tool} is not installed: {why} (apt-get install valgrind)");
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
    check_tools(plan.perf)?;
    let frameworks: Vec<Framework> = plan.servers.iter().filter_map(|s| s.framework).collect();
    let (started, dir) = super::build::start_session(&frameworks, plan.build, plan.profile, &plan.out)?;
    let file = dir.join("count.json");
    let mut report = CountReport {
        schema_version: COUNT_SCHEMA_VERSION,
        provenance: super::meta::provenance(plan.profile.cargo_name(), started),
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
    let protocols: Vec<Option<usize>> =
        std::iter::once(None).chain(plan.http2_streams.iter().map(|&n| Some(n))).collect();
    let over_h2c =
        |route: &Route| plan.http2_routes.as_ref().is_none_or(|only| only.iter().any(|r| r.path == route.path));
    let runs = plan.routes.iter().flat_map(|route| {
        protocols.iter().filter(|s| s.is_none() || over_h2c(route)).map(move |&streams| (*route, streams))
    });
    for (r, (route, streams)) in runs.enumerate() {
        for (s, spec) in plan.servers.iter().enumerate() {
            let dumps = dir.join(format!("callgrind-{}", spec.name.replace(|c: char| !c.is_ascii_alphanumeric(), "-")));
            let row = std::fs::create_dir_all(&dumps)
                .with_context(|| format!("cannot create {}", dumps.display()))
                .and_then(|()| {
                    if stop.load(Ordering::Relaxed) {
                        bail!("interrupted");
                    }
                    count_route(plan, spec, route, streams, &dumps, stop)
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

/// Counts `route` on new processes of `spec`: under callgrind (which also
/// sizes the stretches), under memcheck, and natively under perf (a process
/// per route and tool, so that no route's count carries another's history:
/// the allocator's state after a route that allocates hundreds of times per
/// request moved the next routes' counts by 1 to 4 % in one process).
fn count_route(
    plan: &CountPlan,
    spec: &CountedServer,
    route: &Route,
    streams: Option<usize>,
    dumps: &std::path::Path,
    stop: &AtomicBool,
) -> anyhow::Result<CountRow> {
    let on_server = |wrapper: &[String], tool: &str, counted: &mut dyn FnMut(u32, &RouteLoad) -> anyhow::Result<()>| {
        on_server(plan, spec, route, streams, wrapper, tool, stop, counted)
    };
    let exchange = |load: &RouteLoad, requests: u64| exchange(load, requests, streams.unwrap_or(1), stop);
    if let Some(framework) = spec.framework {
        crate::sys::ServerProcess::check_binary(&server_binary(plan.profile, framework))?;
    }
    let mut row = CountRow {
        framework: spec.name.clone(),
        route: streams.map_or_else(|| route.path.to_owned(), |n| http2_label(route.path, n)),
        requests: 0,
        instructions_per_request: Vec::new(),
        allocations_per_request: Vec::new(),
        system_calls_per_request: Vec::new(),
        bytes_allocated_per_request: Vec::new(),
        native_system_calls_per_request: Vec::new(),
        context_switches_per_request: Vec::new(),
        page_faults_per_request: Vec::new(),
        instructions_per_connection: Vec::new(),
        bytes_allocated_per_connection: Vec::new(),
        system_calls_per_connection: Vec::new(),
    };
    on_server(&Callgrind::wrapper(dumps), "callgrind", &mut |pid, load| {
        let mut callgrind = Callgrind::attach(pid, dumps);
        callgrind.instrument()?;
        // A heavy route needs fewer requests for the same precision: each stretch of N is sized
        // to about STRETCH_INSTRUCTIONS, between MIN_REQUESTS and --requests.
        let probe = callgrind.count(|| exchange(load, WARMUP_REQUESTS))?;
        let per_request = (probe.instructions / WARMUP_REQUESTS).max(1);
        row.requests = (STRETCH_INSTRUCTIONS / per_request).clamp(MIN_REQUESTS.min(plan.requests), plan.requests);
        // Whole batches of streams, so the long stretch has twice the short one's.
        row.requests = whole_batches(row.requests, streams);
        let slopes = repeats(plan, row.requests, true, stop, |requests| {
            let c = callgrind.count(|| exchange(load, requests))?;
            Ok([c.instructions, c.allocations, c.system_calls])
        })?;
        let per_request =
            [&mut row.instructions_per_request, &mut row.allocations_per_request, &mut row.system_calls_per_request];
        record(slopes, per_request, &mut row.instructions_per_connection);
        Ok(())
    })?;
    on_server(&Memcheck::wrapper(dumps), "memcheck", &mut |pid, load| {
        let mut memcheck = Memcheck::attach(pid, dumps);
        let n = whole_batches(heap_requests(row.requests), streams);
        let slopes = repeats(plan, n, false, stop, |requests| {
            let heap = memcheck.count(|| exchange(load, requests))?;
            Ok([heap.bytes])
        })?;
        record(slopes, [&mut row.bytes_allocated_per_request], &mut row.bytes_allocated_per_connection);
        Ok(())
    })?;
    if plan.perf {
        on_server(&[], "native, perf stat", &mut |pid, load| {
            let mut perf = PerfStat::attach(pid, dumps);
            let slopes = repeats(plan, row.requests, true, stop, |requests| {
                let k = perf.count(|| exchange(load, requests))?;
                Ok([k.system_calls, k.context_switches, k.page_faults])
            })?;
            let per_request = [
                &mut row.native_system_calls_per_request,
                &mut row.context_switches_per_request,
                &mut row.page_faults_per_request,
            ];
            record(slopes, per_request, &mut row.system_calls_per_connection);
            Ok(())
        })?;
    }
    Ok(row)
}

/// Starts `spec` under `wrapper` (a tool's command line, or none: native),
/// waits until it is healthy, warms `route` up with requests nobody counts,
/// and hands its pid and the route's load to `counted`; stops it after.
#[allow(clippy::too_many_arguments)]
fn on_server(
    plan: &CountPlan,
    spec: &CountedServer,
    route: &Route,
    streams: Option<usize>,
    wrapper: &[String],
    tool: &str,
    stop: &AtomicBool,
    counted: &mut dyn FnMut(u32, &RouteLoad) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let shell = format!("exec {} {}", wrapper.join(" "), spec.command);
    let name = format!("{} ({tool})", spec.name);
    let mut server = command::start(&name, &shell, &plan.server_cpus, START_UNDER_VALGRIND, stop)?;
    let result = (|| {
        if !wrapper.is_empty() {
            crate::measure::ensure_under_valgrind(server.pid())?;
        }
        preflight::wait_healthy(&Target::new(server.addr, "/"), START_UNDER_VALGRIND)
            .with_context(|| format!("{name} is not healthy"))?;
        let load = match spec.middleware {
            Some(on) => layered_load(Target::new(server.addr, route.path), on, route.path)?,
            None => route_load(server.addr, route),
        };
        let load = match streams {
            None => load,
            Some(_) => RouteLoad { target: load.target.speaking(Protocol::Http2), ..load },
        };
        exchange(&load, WARMUP_REQUESTS, streams.unwrap_or(1), stop)
            .with_context(|| format!("{name}: warm-up of {}", route.path))?;
        counted(server.pid(), &load)
    })();
    let status = server.stop();
    result.with_context(|| format!("{name} on {}: {}", route.path, server_said(status)))
}

/// Per repeat, each of a stretch's `K` counts per request (the slope
/// between a stretch of `n` requests and one of `2n`, the order
/// alternating so that a drift over the session favours neither), and
/// what a connection with no request counts.
///
/// # Errors
/// A stretch's error; a long stretch that counts less of the first count
/// than the short one, or not more when it `grows` with every request (a
/// stretch not counted whole; bytes allocated may stay: a server that
/// allocates nothing per request counts 0); `stop`.
fn repeats<const K: usize>(
    plan: &CountPlan,
    n: u64,
    grows: bool,
    stop: &AtomicBool,
    mut stretch: impl FnMut(u64) -> anyhow::Result<[u64; K]>,
) -> anyhow::Result<Vec<([f64; K], [f64; K])>> {
    let mut out = Vec::with_capacity(plan.repeats);
    for repeat in 0..plan.repeats {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted");
        }
        let (short, long) = if repeat % 2 == 0 {
            let short = stretch(n)?;
            (short, stretch(2 * n)?)
        } else {
            let long = stretch(2 * n)?;
            (stretch(n)?, long)
        };
        if long[0] == 0 && grows {
            bail!(
                "the process counted ran none of {} requests: a server that serves from a child process (pre-fork \
                 workers) is not counted, valgrind follows no child; count one that serves from the process started",
                2 * n
            );
        }
        if long[0] < short[0] || (grows && long[0] == short[0]) {
            bail!("{} requests counted {}, {n} counted {}: a stretch was not counted whole", 2 * n, long[0], short[0]);
        }
        let per_request = std::array::from_fn(|i| (long[i] as f64 - short[i] as f64) / n as f64);
        // A connection opened and closed with no request: what a connection costs, apart.
        let connection = stretch(0)?.map(|v| v as f64);
        out.push((per_request, connection));
    }
    Ok(out)
}

/// Appends each repeat's `K` counts per request to `per_request`'s rows, in
/// order, and its first count per connection to `per_connection`.
fn record<const K: usize>(
    slopes: Vec<([f64; K], [f64; K])>,
    mut per_request: [&mut Vec<f64>; K],
    per_connection: &mut Vec<f64>,
) {
    for (counts, connection) in slopes {
        for (row, count) in per_request.iter_mut().zip(counts) {
            row.push(count);
        }
        per_connection.push(connection[0]);
    }
}

/// How the server ended, for an error's context.
fn server_said(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) if s.success() => "stopped".to_owned(),
        Some(s) => format!("the server ended with {s}"),
        None => "stopped".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h2c_rows_are_named_by_their_streams_and_batches_are_whole() {
        assert_eq!(http2_label("/plaintext", 1), "h2c /plaintext", "as the http2 scenario names it");
        assert_eq!(http2_label("/plaintext", 16), "h2c x16 /plaintext");
        assert_eq!(
            (whole_batches(612, Some(16)), whole_batches(608, Some(16)), whole_batches(612, None)),
            (624, 608, 612)
        );
    }
}
