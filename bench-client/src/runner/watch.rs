//! `watch`: one process's CPU use per window, on the server's own host, on
//! the same planned windows as the clients'.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::Linger;
use crate::engine::Timing;
use crate::measure::{Barrier, Start, sample_windows};
use crate::report::watch_summary;
use crate::results::{SCHEMA_VERSION, WatchReport};
use crate::sys::{affinity_of, pids_named, process_name};
use crate::telemetry::{Identity, Serve, Telemetry};

/// The process to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watched {
    /// This pid, alive when checked.
    Pid(u32),
    /// The one process of this name, to be found within the duration.
    Named(String, Duration),
}

/// A checked `watch` invocation.
#[derive(Debug, Clone)]
pub struct WatchPlan {
    /// The process.
    pub watched: Watched,
    /// Warm-up, duration, window.
    pub timing: Timing,
    /// The barrier to wait for.
    pub barrier: Option<Barrier>,
    /// This host's name.
    pub label: String,
    /// JSON output file.
    pub json: Option<PathBuf>,
    /// Where to serve live metrics.
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// How long to stay up after the run.
    pub linger: Linger,
}

/// The one process named `name`, if exactly one has that name.
///
/// # Errors
/// None, or several, named so.
pub fn one_named(name: &str) -> anyhow::Result<u32> {
    match pids_named(name).as_slice() {
        [] => bail!("no process named {name} on this host"),
        [pid] => Ok(*pid),
        pids => bail!("{} processes named {name} (pids {pids:?}); pass --pid", pids.len()),
    }
}

/// Waits for the barrier, samples the windows, prints and writes them;
/// `complete` in the report says whether every window was sampled.
///
/// # Errors
/// A missed barrier or Ctrl-C while waiting ([`crate::measure::BarrierError`]); an
/// unwritable JSON file.
pub fn run(plan: &WatchPlan, stop: &AtomicBool) -> anyhow::Result<WatchReport> {
    let pid = match &plan.watched {
        Watched::Pid(pid) => *pid,
        Watched::Named(name, within) => {
            let deadline = Instant::now() + *within;
            loop {
                match one_named(name) {
                    Ok(pid) => break pid,
                    Err(_) if Instant::now() < deadline && !stop.load(Ordering::Relaxed) => {
                        std::thread::sleep(Duration::from_millis(100));
                    }
                    Err(e) => {
                        return Err(e.context(format!("--wait-for-process {}", humantime::format_duration(*within))));
                    }
                }
            }
        }
    };
    let process = process_name(pid).with_context(|| format!("no process with pid {pid} on this host"))?;
    let telemetry = match plan.metrics_addr {
        None => None,
        Some(addr) => {
            let serve = Serve {
                identity: Identity { command: "watch", clients: 1, label: plan.label.clone(), ..Identity::default() },
                engine_threads: None,
                server: Some((pid, process.clone())),
                planned_unix_ms: plan.barrier.map(|b| b.at_unix_ms),
            };
            let t = Telemetry::serve(addr, serve).with_context(|| format!("--metrics-addr {addr}: cannot listen"))?;
            eprintln!("metrics on http://{}/metrics", t.addr());
            t.ready();
            Some(t)
        }
    };
    let start = match &plan.barrier {
        Some(barrier) => barrier.wait(stop)?,
        None => Start::now(),
    };
    let t = plan.timing;
    if let Some(telemetry) = &telemetry {
        telemetry.started(start.instant + t.warmup(), start.unix_ms);
    }
    let lost = AtomicBool::new(false);
    let cpu = sample_windows(&[pid], start.instant + t.warmup(), t.window(), t.windows(), stop, &lost);
    let interrupted = stop.load(Ordering::Relaxed);
    let server_lost = lost.load(Ordering::Relaxed);
    let windows = cpu.server;
    let report = WatchReport {
        schema_version: SCHEMA_VERSION,
        label: plan.label.clone(),
        pid,
        process,
        server_cpus: affinity_of(pid).ok().map(|cpus| cpus.len()),
        start_at_unix_ms: start.planned_unix_ms,
        measure_start_unix_ms: start.unix_ms + u64::try_from(t.warmup().as_millis()).unwrap_or(u64::MAX),
        warmup_s: t.warmup().as_secs_f64(),
        window_s: t.window().as_secs_f64(),
        duration_s: t.duration().as_secs_f64(),
        server_cpu_percent: (!windows.is_empty()).then(|| windows.iter().sum::<f64>() / windows.len() as f64),
        complete: !interrupted && !server_lost && windows.len() == t.windows(),
        server_cpu_percent_windows: windows,
        server_lost,
    };
    watch_summary(&mut std::io::stdout().lock(), &report)?;
    super::conclude(&report, plan.json.as_deref(), telemetry.as_ref(), plan.linger, stop)?;
    Ok(report)
}
