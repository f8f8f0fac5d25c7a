//! `bench-client watch --pid PID | --process NAME`: one process's CPU use
//! per window, on the server's own host, on the same planned windows as the
//! clients' (`--start-at`, `--warmup`, `--duration`, `--window`); `merge
//! --server` puts it beside the clients' windows. The two-host counterpart
//! of `load --server-pid`, which sees only processes on the client's host.
//! In a Kubernetes server pod it runs as a sidecar (`--process`, with
//! `--wait-for-process` since the containers start together, and `--linger
//! forever` so that the pod does not restart it after its output).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use clap::Args;

use super::Outcome;
use super::args::{Linger, MetricsArgs, StartArgs, TimingArgs, duration};
use crate::engine::Timing;
use crate::measure::{Barrier, Start, sample_windows};
use crate::report::watch_summary;
use crate::results::{SCHEMA_VERSION, WatchReport};
use crate::sys::{affinity_of, hostname, pids_named, process_alive, process_name};
use crate::telemetry::{Identity, Serve, Telemetry};

/// Flags of `watch`, as typed.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Pid of the process to watch (on this host).
    #[arg(long, required_unless_present = "process", conflicts_with = "process")]
    pub pid: Option<u32>,
    /// Or its command name (/proc/PID/comm, e.g. server-axum); exactly one process may have it.
    #[arg(long)]
    pub process: Option<String>,
    /// Duration, warm-up and window: the clients'.
    #[command(flatten)]
    pub timing: TimingArgs,
    /// The clients' start.
    #[command(flatten)]
    pub start: StartArgs,
    /// This host's name in the results (default: the host name).
    #[arg(long)]
    pub label: Option<String>,
    /// Write the windows to this JSON file, for `merge --server`; `-`: to stdout, between marker
    /// lines (a sidecar's log carries it).
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// With --process: wait this long for the process to appear (a sidecar starts with the server's
    /// container, not after it), e.g. 60s.
    #[arg(long, default_value = "0s", value_parser = duration)]
    pub wait_for_process: Duration,
    /// Live metrics (the server's CPU time) and lingering.
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

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
fn one_named(name: &str) -> anyhow::Result<u32> {
    match pids_named(name).as_slice() {
        [] => bail!("no process named {name} on this host"),
        [pid] => Ok(*pid),
        pids => bail!("{} processes named {name} (pids {pids:?}); pass --pid", pids.len()),
    }
}

impl WatchArgs {
    /// Checks the flags into a [`WatchPlan`].
    ///
    /// # Errors
    /// No such process (or several of that name); bad timing; a start barrier
    /// missed or over an hour ahead.
    pub fn plan(self) -> anyhow::Result<WatchPlan> {
        let timing = self.timing.timing()?;
        ensure!(
            self.wait_for_process.is_zero() || self.process.is_some(),
            "--wait-for-process waits for --process NAME, not for a --pid"
        );
        let watched = match (self.pid, self.process) {
            (Some(pid), _) => Watched::Pid(pid),
            (None, Some(name)) if self.wait_for_process.is_zero() => Watched::Pid(one_named(&name)?),
            (None, Some(name)) => Watched::Named(name, self.wait_for_process),
            (None, None) => bail!("--pid or --process is required"),
        };
        if let Watched::Pid(pid) = watched {
            ensure!(process_alive(pid), "no process with pid {pid} on this host");
        }
        Ok(WatchPlan {
            watched,
            timing,
            barrier: self.start.barrier()?,
            label: self.label.unwrap_or_else(hostname),
            json: self.json,
            metrics_addr: self.metrics.metrics_addr,
            linger: self.metrics.linger,
        })
    }
}

/// Waits for the barrier, samples the windows, prints and writes them.
///
/// # Errors
/// A missed barrier or Ctrl-C while waiting ([`crate::measure::BarrierError`]); an
/// unwritable JSON file.
pub(super) fn run(plan: &WatchPlan, stop: &AtomicBool) -> anyhow::Result<Outcome> {
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
    if let Some(path) = &plan.json {
        super::write_json(path, &report)?;
    }
    if let Some(telemetry) = &telemetry {
        telemetry.done();
    }
    plan.linger.wait(stop);
    Ok(if interrupted {
        Outcome::Interrupted
    } else if report.complete {
        Outcome::Success
    } else {
        Outcome::Failed
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Commands};
    use super::*;

    fn watch(argv: &[&str]) -> anyhow::Result<WatchPlan> {
        let mut full = vec!["bench-client", "watch"];
        full.extend_from_slice(argv);
        match Cli::try_parse_from(full)?.command {
            Commands::Watch(args) => args.plan(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn watch_finds_its_process_by_pid_or_name_or_says_why_not() {
        let me = std::process::id().to_string();
        let plan = watch(&["--pid", &me, "--duration", "3s", "--window", "1s"]).unwrap();
        assert_eq!(plan.watched, Watched::Pid(std::process::id()));
        let later = watch(&["--process", "server-axum", "--wait-for-process", "60s"]).unwrap();
        assert_eq!(later.watched, Watched::Named("server-axum".into(), Duration::from_secs(60)));
        assert_eq!(plan.timing.windows(), 3);
        let err = |argv: &[&str]| format!("{:#}", watch(argv).unwrap_err());
        assert!(err(&["--process", "no-such-process-here"]).contains("no process named"));
        assert!(err(&["--pid", &u32::MAX.to_string()]).contains("no process with pid"));
        assert!(err(&[]).contains("--pid"), "one of the two is required");
        assert!(err(&["--pid", &me, "--process", "x"]).contains("cannot be used with"));
        assert!(err(&["--pid", &me, "--duration", "1500ms"]).contains("whole number"));
        assert!(err(&["--pid", &me, "--wait-for-process", "5s"]).contains("--process"));
    }
}
