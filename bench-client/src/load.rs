//! The `load` command: preflight one URL, run the engine, print a summary and
//! optionally write the figures as JSON.

use std::sync::atomic::AtomicBool;

use anyhow::{Context, bail};
use serde::Serialize;

use crate::affinity::affinity_of;
use crate::engine;
use crate::plan::LoadCommand;
use crate::preflight;
use crate::results::{self, RunFigures, SCHEMA_VERSION};

/// What `load --json FILE` writes.
#[derive(Debug, Serialize)]
pub struct LoadReport {
    /// Version of the results layout.
    pub schema_version: u32,
    /// URL loaded.
    pub url: String,
    /// Engine threads.
    pub threads: usize,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// The measurements.
    #[serde(flatten)]
    pub figures: RunFigures,
}

/// The body every response must carry: the route table's, after checking
/// that the server answers it; for a path outside the table, the body fetched
/// once now (status 200 required).
///
/// # Errors
/// Unreachable server (naming the address), or a mismatch with the table.
pub fn expected_body(cmd: &LoadCommand) -> anyhow::Result<Vec<u8>> {
    let target = &cmd.target;
    let fetched = preflight::fetch(&target.url).with_context(|| format!("cannot reach {}", target.addr))?;
    match common::Route::by_path(&target.path) {
        Some(route) => match preflight::difference(route, &fetched) {
            None => Ok(route.expected_body()),
            Some(diff) => bail!("preflight {}: {diff}", target.url),
        },
        None if fetched.status == 200 => Ok(fetched.body),
        None => bail!("preflight {}: status {} instead of 200", target.url, fetched.status),
    }
}

/// Runs `cmd`; returns the figures (also written to `--json` when given).
///
/// # Errors
/// Preflight failures, engine start failures, an unwritable JSON file.
pub fn run(cmd: &LoadCommand, stop: &AtomicBool) -> anyhow::Result<RunFigures> {
    if let Some(cpus) = &cmd.cpus {
        cpus.pin_current_thread()?;
    }
    let s = cmd.settings;
    let t = &cmd.target;
    let plan = s.plan(t.addr, t.host.clone(), t.path.clone(), expected_body(cmd)?, cmd.server_pid);
    let outcome = engine::run(&plan, stop)?;
    let server_cpus = cmd.server_pid.and_then(|pid| affinity_of(pid).ok()).map(|cpus| cpus.len());
    let figures = RunFigures::new(&outcome, s.connections.get(), s.window.as_secs_f64(), server_cpus);
    print_summary(cmd, &figures);
    if let Some(path) = &cmd.json {
        let report = LoadReport {
            schema_version: SCHEMA_VERSION,
            url: cmd.target.url.to_string(),
            threads: s.threads.get(),
            warmup_s: s.warmup.as_secs_f64(),
            figures: figures.clone(),
        };
        results::write_json(path, &report)?;
    }
    Ok(figures)
}

fn print_summary(cmd: &LoadCommand, f: &RunFigures) {
    let l = &f.latency_us;
    println!(
        "{} · {} connections · {:.1} s measured{}",
        cmd.target.url,
        f.connections_requested,
        f.duration_s,
        if f.complete { "" } else { " (interrupted)" }
    );
    println!("  successful requests  {:>12}   ({:.0} requests/s)", f.successful, f.requests_per_s);
    println!(
        "  failed requests      {:>12}   (io {}, timeout {}, status {:?}, body {}, protocol {}; connect errors {})",
        f.failed_total,
        f.failed.io,
        f.failed.timeout,
        f.failed.status,
        f.failed.body,
        f.failed.protocol,
        f.failed.connect
    );
    println!("  in flight at end     {:>12}", f.in_flight_at_deadline);
    println!(
        "  connections          {:>12} established of {} requested",
        f.connections_established, f.connections_requested
    );
    println!("  per window           {:?}", f.windows);
    match f.server_cpu_percent {
        Some(p) => println!(
            "  server CPU           {p:>11.1} %   of {} CPU(s){}",
            f.server_cpus.unwrap_or(0),
            if f.client_bound { "  CLIENT-BOUND: the server was not saturated" } else { "  (saturated)" }
        ),
        None => println!("  server CPU                 unknown   (pass --server-pid to check saturation)"),
    }
    println!("  client CPU           {:>11.1} %", f.client_cpu_percent);
    println!(
        "  latency (ms)         p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
        l.p50 as f64 / 1e3,
        l.p90 as f64 / 1e3,
        l.p99 as f64 / 1e3,
        l.p999 as f64 / 1e3,
        l.max as f64 / 1e3
    );
}
