//! `count`: what a request costs each framework on each route, counted
//! rather than timed. Each framework's server runs under callgrind, alone on
//! its CPUs; per repeat and route it answers a short and a long stretch of
//! requests (N and 2N, the order alternating), and the difference over N is
//! what one request costs: whatever a stretch pays once (its connection, the
//! measurement's own commands) cancels, as rustc-perf's and gungraun's
//! counts cancel their harness. Repeats interleave the routes, so each
//! route's spread over the repeats is its own noise floor, measured.

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
use crate::results::{COUNT_SCHEMA_VERSION, CountReport, CountRow};
use crate::sys::CpuList;

/// How long a server under valgrind may take to listen.
const START_UNDER_VALGRIND: Duration = Duration::from_secs(120);
/// Requests each route answers before anything is counted (uninstrumented):
/// lazy statics, caches and the runtime's first allocations are made.
const WARMUP_REQUESTS: u64 = 50;

/// A checked `count` session.
#[derive(Debug, Clone)]
pub struct CountPlan {
    /// The servers' Cargo profile.
    pub profile: Profile,
    /// The frameworks counted, in order.
    pub frameworks: Vec<Framework>,
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

/// Runs `plan`: builds (unless told not to), counts each framework, and
/// writes `count.json` into a new folder under `plan.out` after each one, so
/// an interruption keeps what was counted.
///
/// # Errors
/// A tool missing, a build that fails, a server that does not start under
/// valgrind or answers a request wrongly, a file that cannot be written, or `stop`.
pub fn count(plan: &CountPlan, stop: &AtomicBool) -> anyhow::Result<CountOutcome> {
    check_tools()?;
    if plan.build {
        build(plan.profile, &plan.frameworks)?;
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
        rows: Vec::new(),
    };
    for &framework in &plan.frameworks {
        let rows = count_framework(plan, framework, &dir, stop)?;
        report.rows.extend(rows);
        crate::results::write(&file, &report)?;
    }
    Ok(CountOutcome { report, file })
}

/// Counts every route of `plan` on `framework`'s server, started under callgrind.
fn count_framework(
    plan: &CountPlan,
    framework: Framework,
    dir: &std::path::Path,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<CountRow>> {
    let binary = server_binary(plan.profile, framework);
    crate::sys::ServerProcess::check_binary(&binary)?;
    let dumps = dir.join(format!("callgrind-{}", framework.name()));
    std::fs::create_dir_all(&dumps).with_context(|| format!("cannot create {}", dumps.display()))?;
    let shell = format!(
        "exec {} {} --addr {{addr}} --workers 1 --layers {}",
        Callgrind::wrapper(&dumps).join(" "),
        binary.display(),
        plan.layers
    );
    let name = format!("{} (callgrind)", framework.name());
    let mut server = command::start(&name, &shell, &plan.server_cpus, START_UNDER_VALGRIND, stop)?;
    let counted = (|| {
        preflight::wait_healthy(&crate::engine::Target::new(server.addr, "/"), START_UNDER_VALGRIND)
            .with_context(|| format!("{name} is not healthy"))?;
        let loads: Vec<_> = plan.routes.iter().map(|r| route_load(server.addr, r)).collect();
        for load in &loads {
            exchange(load, WARMUP_REQUESTS).with_context(|| format!("{name}: warm-up"))?;
        }
        let mut callgrind = Callgrind::attach(server.pid(), &dumps);
        let mut rows: Vec<CountRow> = plan
            .routes
            .iter()
            .map(|r| CountRow {
                framework: framework.name().to_owned(),
                route: r.path.to_owned(),
                instructions_per_request: Vec::new(),
                allocations_per_request: Vec::new(),
                instructions_per_connection: Vec::new(),
            })
            .collect();
        let n = plan.requests;
        for repeat in 0..plan.repeats {
            for (load, row) in loads.iter().zip(&mut rows) {
                if stop.load(Ordering::Relaxed) {
                    bail!("interrupted");
                }
                let mut stretch = |requests| callgrind.count(|| exchange(load, requests));
                // The order alternates, so a drift over the session favours neither stretch.
                let (short, long): (Counted, Counted) = if repeat % 2 == 0 {
                    let short = stretch(n)?;
                    (short, stretch(2 * n)?)
                } else {
                    let long = stretch(2 * n)?;
                    (stretch(n)?, long)
                };
                let per = |a: u64, b: u64| (b as f64 - a as f64) / n as f64;
                let instructions = per(short.instructions, long.instructions);
                row.instructions_per_request.push(instructions);
                row.allocations_per_request.push(per(short.allocations, long.allocations));
                row.instructions_per_connection.push(short.instructions as f64 - n as f64 * instructions);
            }
        }
        Ok(rows)
    })();
    let status = server.stop();
    let rows = counted.with_context(|| format!("{name}: {}", server_said(status)))?;
    Ok(rows)
}

/// How the server ended, for an error's context.
fn server_said(status: Option<std::process::ExitStatus>) -> String {
    match status {
        Some(s) if s.success() => "stopped".to_owned(),
        Some(s) => format!("the server ended with {s}"),
        None => "stopped".to_owned(),
    }
}
