//! `bench-client watch --pid PID | --process NAME`: one process's CPU use
//! per window, on the server's own host, on the same planned windows as the
//! clients' (`--start-at`, `--warmup`, `--duration`, `--window`); `merge
//! --server` puts it beside the clients' windows. The two-host counterpart
//! of `load --server-pid`, which sees only processes on the client's host.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail, ensure};
use clap::Args;

use super::Outcome;
use super::args::{StartArgs, TimingArgs};
use crate::engine::Timing;
use crate::measure::{Barrier, Start, sample_windows};
use crate::report::watch_summary;
use crate::results::{self, SCHEMA_VERSION, WatchReport};
use crate::sys::{affinity_of, hostname, pids_named, process_alive, process_name};

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
    /// Write the windows to this JSON file, for `merge --server`.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// A checked `watch` invocation.
#[derive(Debug, Clone)]
pub struct WatchPlan {
    /// The process.
    pub pid: u32,
    /// Its command name.
    pub process: String,
    /// Warm-up, duration, window.
    pub timing: Timing,
    /// The barrier to wait for.
    pub barrier: Option<Barrier>,
    /// This host's name.
    pub label: String,
    /// JSON output file.
    pub json: Option<PathBuf>,
}

impl WatchArgs {
    /// Checks the flags into a [`WatchPlan`].
    ///
    /// # Errors
    /// No such process (or several of that name); bad timing; a start barrier
    /// missed or over an hour ahead.
    pub fn plan(self) -> anyhow::Result<WatchPlan> {
        let timing = self.timing.timing()?;
        let pid = match (self.pid, &self.process) {
            (Some(pid), _) => pid,
            (None, Some(name)) => match pids_named(name).as_slice() {
                [] => bail!("no process named {name} on this host"),
                [pid] => *pid,
                pids => bail!("{} processes named {name} (pids {pids:?}); pass --pid", pids.len()),
            },
            (None, None) => bail!("--pid or --process is required"),
        };
        ensure!(process_alive(pid), "no process with pid {pid} on this host");
        let process = process_name(pid).with_context(|| format!("no process with pid {pid} on this host"))?;
        Ok(WatchPlan {
            pid,
            process,
            timing,
            barrier: self.start.barrier()?,
            label: self.label.unwrap_or_else(hostname),
            json: self.json,
        })
    }
}

/// Waits for the barrier, samples the windows, prints and writes them.
///
/// # Errors
/// A missed barrier or Ctrl-C while waiting ([`crate::measure::BarrierError`]); an
/// unwritable JSON file.
pub(super) fn run(plan: &WatchPlan, stop: &AtomicBool) -> anyhow::Result<Outcome> {
    let start = match &plan.barrier {
        Some(barrier) => barrier.wait(stop)?,
        None => Start::now(),
    };
    let t = plan.timing;
    let lost = AtomicBool::new(false);
    let cpu = sample_windows(&[plan.pid], start.instant + t.warmup(), t.window(), t.windows(), stop, &lost);
    let interrupted = stop.load(Ordering::Relaxed);
    let server_lost = lost.load(Ordering::Relaxed);
    let windows = cpu.server;
    let report = WatchReport {
        schema_version: SCHEMA_VERSION,
        label: plan.label.clone(),
        pid: plan.pid,
        process: plan.process.clone(),
        server_cpus: affinity_of(plan.pid).ok().map(|cpus| cpus.len()),
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
        results::write(path, &report)?;
    }
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
        assert_eq!(plan.pid, std::process::id());
        assert_eq!(plan.timing.windows(), 3);
        let err = |argv: &[&str]| format!("{:#}", watch(argv).unwrap_err());
        assert!(err(&["--process", "no-such-process-here"]).contains("no process named"));
        assert!(err(&["--pid", &u32::MAX.to_string()]).contains("no process with pid"));
        assert!(err(&[]).contains("--pid"), "one of the two is required");
        assert!(err(&["--pid", &me, "--process", "x"]).contains("cannot be used with"));
        assert!(err(&["--pid", &me, "--duration", "1500ms"]).contains("whole number"));
    }
}
