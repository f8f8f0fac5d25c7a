//! What a results file records of where it was measured: git commit,
//! `rustc`, CPU model, kernel, the client's ceiling, and the suite's
//! settings.

use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::SystemTime;

use super::build::workspace_root;
use super::plan::SuitePlan;
use crate::calibrate::{self, CalibratePlan};
use crate::model::{Pairing, Scenario};
use crate::report::ceiling_line;
use crate::results::Meta;

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .current_dir(workspace_root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The commit measured: `git rev-parse HEAD`, with `-dirty` when tracked
/// files have changes.
pub(super) fn commit() -> String {
    let mut commit = command_line("git", &["rev-parse", "HEAD"]);
    let status = command_line("git", &["status", "--porcelain", "--untracked-files=no"]);
    if commit != "unknown" && status != "unknown" && !status.is_empty() {
        commit.push_str("-dirty");
    }
    commit
}

/// The machine's CPU model (`/proc/cpuinfo`'s first `model name`).
pub(super) fn cpu_model() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')).map(|(_, m)| m.trim().to_owned()))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The `meta` of a suite's results: commit (with `-dirty`), toolchain,
/// machine, and the plan's settings; no profiler or ceiling yet.
pub(super) fn capture(plan: &SuitePlan, started: SystemTime) -> Meta {
    let commit = commit();
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpu_model();
    let s = &plan.settings;
    Meta {
        commit,
        rustc: command_line("rustc", &["--version"]),
        profile: plan.profile,
        cpu_model,
        // Online CPUs of the machine, not of this thread: the client is pinned by now.
        cores: cpuinfo.lines().filter(|l| l.starts_with("processor")).count(),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map_or_else(|_| "unknown".to_owned(), |k| k.trim().to_owned()),
        started_utc: humantime::format_rfc3339_seconds(started).to_string(),
        connections: s.connections.get() as u64,
        duration_s: s.timing.duration().as_secs_f64(),
        warmup_s: s.timing.warmup().as_secs_f64(),
        window_s: s.timing.window().as_secs_f64(),
        timeout_s: s.timeout.as_secs_f64(),
        rounds: plan.rounds,
        layers: plan.layers.clone(),
        server_cpus: plan.server_cpus.cpus().to_vec(),
        client_cpus: plan.client_cpus.cpus().to_vec(),
        server_workers: plan.server_cpus.len(),
        client_threads: s.threads.get(),
        frameworks: plan.frameworks.clone(),
        scenarios: plan.scenarios.clone(),
        profiler: None,
        pairing: plan.pairing,
        slice_s: (plan.pairing == Pairing::Slices).then_some(plan.slice.as_secs_f64()),
        target_ci_percent: plan.target.map(|t| t.half_width_percent),
        ab: None,
        server_per_round: plan.server_per_round,
        load_percent: plan.load_percent,
        threshold_percent: Some(plan.threshold_percent),
        requests_per_connection: s.requests_per_connection.map(|n| n.get() as u64),
        tls_resumption: plan
            .scenarios
            .iter()
            .any(|s| matches!(s, Scenario::Tls | Scenario::Http2))
            .then_some(plan.tls_resumption),
        tcp_nodelay: plan.tcp_nodelay,
        noise: Vec::new(),
        http2_settings: Vec::new(),
        client_ceiling_per_s: None,
    }
}

/// Measures and prints the client's ceiling (see [`calibrate`]) with the
/// suite's connections, timings and CPUs; `None` (with a warning) when the
/// responder cannot run.
pub(super) fn client_ceiling(plan: &SuitePlan, stop: &AtomicBool) -> Option<f64> {
    let calibration = CalibratePlan {
        settings: plan.settings,
        server_cpus: plan.server_cpus.clone(),
        client_cpus: plan.client_cpus.clone(),
    };
    match calibrate::measure(&calibration, stop) {
        Ok(ceiling) => {
            eprintln!("{}", ceiling_line(&ceiling));
            ceiling.requests_per_s().filter(|_| ceiling.figures.usable())
        }
        Err(e) => {
            eprintln!("warning: client ceiling not measured: {e:#}");
            None
        }
    }
}

/// Where and when a `count` or `memory` session that `started` measures,
/// of the servers' build `profile`.
pub(super) fn provenance(profile: &str, started: std::time::SystemTime) -> crate::results::Provenance {
    crate::results::Provenance {
        commit: commit(),
        cpu_model: cpu_model(),
        started_utc: humantime::format_rfc3339_seconds(started).to_string(),
        profile: profile.to_owned(),
    }
}
