//! `bench-client watch --pid PID | --process NAME`: one process's CPU use
//! per window, on the server's own host, on the same planned windows as the
//! clients' (`--start-at`, `--warmup`, `--duration`, `--window`); `merge
//! --server` puts it beside the clients' windows. The two-host counterpart
//! of `load --server-pid`, which sees only processes on the client's host.
//! In a Kubernetes server pod it runs as a sidecar (`--process`, with
//! `--wait-for-process` since the containers start together, and `--linger
//! forever` so that the pod does not restart it after its output).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, ensure};
use clap::Args;

use super::args::{MetricsArgs, StartArgs, TimingArgs, duration};
use crate::runner::{WatchPlan, Watched, one_named};
use crate::sys::{hostname, process_alive};

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
            json: super::args::checked_json(self.json)?,
            metrics_addr: self.metrics.metrics_addr,
            linger: self.metrics.linger,
        })
    }
}

#[cfg(test)]
mod tests {

    use super::super::{Commands, parsed};
    use super::*;

    fn watch(argv: &[&str]) -> anyhow::Result<WatchPlan> {
        let Commands::Watch(args) = parsed(&[&["watch"], argv].concat())? else { unreachable!() };
        args.plan()
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
