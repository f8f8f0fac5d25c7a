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
    let figures = RunFigures::new(&outcome, &s, server_cpus);
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
    let mode = match f.rate_per_s {
        Some(rate) => format!("open loop at {rate:.0} requests/s"),
        None => "closed loop".to_owned(),
    };
    let incomplete = if f.complete {
        ""
    } else if f.server_lost {
        " (INCOMPLETE: the server exited; the run ended with that window)"
    } else if f.failed.connect > 0 {
        " (INCOMPLETE: connections failed; the server may have died)"
    } else {
        " (interrupted)"
    };
    println!(
        "{} · {} connections · pipeline {} · {mode} · {:.1} s measured{incomplete}",
        cmd.target.url, f.connections_requested, f.pipeline, f.duration_s
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
    if f.rate_per_s.is_some() {
        println!(
            "  late sends           {:>12}   (written over {} ms after due); never written by the end: {}",
            f.late_sends,
            engine::LATE_SEND_TOLERANCE.as_millis(),
            f.unsent_at_deadline
        );
    }
    println!(
        "  connections          {:>12} established of {} requested, {} reconnections",
        f.connections_established, f.connections_requested, f.reconnects
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
    println!(
        "  client CPU           {:>11.1} %   {} per 1,000 successful requests; peak RSS {:.1} MiB",
        f.client_cpu_percent,
        f.client_cpu_ms_per_1k.map_or_else(|| "-".to_owned(), |ms| format!("{ms:.2} ms")),
        f.client_peak_rss_bytes as f64 / (1024.0 * 1024.0)
    );
    let ms = |us: u64| us as f64 / 1e3;
    let line = |name: &str, l: &crate::stats::LatencySummary| {
        println!(
            "  {name:<20} p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  max {:.3}",
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.p999),
            ms(l.max)
        );
    };
    match &f.latency_uncorrected_us {
        None => line("latency (ms)", &f.latency_us),
        Some(uncorrected) => {
            line("latency (ms)", &f.latency_us);
            println!("  {:<20} (from when each request was due: corrected for coordinated omission)", "");
            line("uncorrected (ms)", uncorrected);
        }
    }
}
