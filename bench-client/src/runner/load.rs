//! `load`: preflight one URL, run the engine against it (at once, or from a
//! start barrier shared with other clients), print a summary and write the
//! figures, optionally serving live metrics and lingering after.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use url::Url;

use super::Linger;
use crate::engine::{Live, Load, LoadSettings, Protocol, Target};
use crate::measure::{self, Barrier, Observers, Start};
use crate::preflight;
use crate::report::load_summary;
use crate::results::{LoadReport, Objective, SCHEMA_VERSION};
use crate::sys::{CpuList, affinity_of, process_name};
use crate::telemetry::{Identity, Serve, Telemetry};

/// A checked `load` invocation.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// The URL as given.
    pub url: Url,
    /// Its resolved address, `Host` header and path.
    pub target: Target,
    /// Connections, threads, timings (the expected body is filled by preflight).
    pub settings: LoadSettings,
    /// CPUs to pin to.
    pub cpus: Option<CpuList>,
    /// JSON output file.
    pub json: Option<PathBuf>,
    /// Server pid to sample.
    pub server_pid: Option<u32>,
    /// The start barrier to wait for after preflight.
    pub barrier: Option<Barrier>,
    /// This client's name in the results.
    pub label: String,
    /// Where to serve live metrics.
    pub metrics_addr: Option<SocketAddr>,
    /// How long to stay up after the run.
    pub linger: Linger,
    /// Connections closed by the server do not fail the run.
    pub allow_churn: bool,
    /// The status of a successful response (`--expect-status`, 200 by default).
    pub expect_status: u16,
    /// `--slo`: bounds judged once the run has ended.
    pub slo: Vec<Objective>,
}

/// Starts the metrics endpoint of `plan`, if it asks for one, and says where.
///
/// # Errors
/// When its address cannot be bound.
fn telemetry(plan: &LoadPlan) -> anyhow::Result<Option<Telemetry>> {
    let Some(addr) = plan.metrics_addr else { return Ok(None) };
    let s = &plan.settings;
    let serve = Serve {
        identity: Identity {
            command: "load",
            url: plan.url.to_string(),
            mode: if s.rate.is_some() { "open" } else { "closed" },
            clients: s.segment.count(),
            segment: (s.segment.count() > 1).then_some(s.segment.index()),
            label: plan.label.clone(),
        },
        engine_threads: Some(s.threads.get()),
        server: plan.server_pid.map(|pid| (pid, process_name(pid).unwrap_or_else(|| pid.to_string()))),
        planned_unix_ms: plan.barrier.map(|b| b.at_unix_ms),
    };
    let t = Telemetry::serve(addr, serve).with_context(|| format!("--metrics-addr {addr}: cannot listen"))?;
    eprintln!("metrics on http://{}/metrics", t.addr());
    Ok(Some(t))
}

/// Runs `plan`; returns the report (also written to `--json` when given)
/// after printing the summary on stdout.
///
/// # Errors
/// Preflight failures; a missed start barrier or Ctrl-C while waiting for it
/// ([`crate::measure::BarrierError`]); engine start failures; an unwritable
/// JSON file.
pub fn run(plan: &LoadPlan, stop: &AtomicBool) -> anyhow::Result<LoadReport> {
    if let Some(cpus) = &plan.cpus {
        cpus.pin_current_thread()?;
    }
    // After pinning: its thread shares the client's CPUs.
    let telemetry = telemetry(plan)?;
    let s = plan.settings;
    let route = preflight::expected(plan.url.as_str(), &plan.target, plan.expect_status, stop)?;
    let load = Load::new(route, s);
    if let Some(t) = &telemetry {
        t.ready();
    }
    let start = match &plan.barrier {
        Some(barrier) => barrier.wait(stop)?,
        None => Start::now(),
    };
    // Said once the start is certain: a missed barrier is a one-line refusal.
    eprintln!("{}", loading_line(plan));
    if let Some(t) = &telemetry {
        t.started(start.instant + s.timing.warmup(), start.unix_ms);
    }
    let servers: Vec<u32> = plan.server_pid.into_iter().collect();
    // The live line on a terminal reads the engine's live counters: those of
    // the metrics endpoint, or its own.
    let terminal = std::io::stderr().is_terminal();
    let own = (terminal && telemetry.as_ref().and_then(Telemetry::live).is_none()).then(|| Live::new(s.threads.get()));
    let live = telemetry.as_ref().and_then(Telemetry::live).or(own.as_ref());
    let run = super::progress::during(live.filter(|_| terminal), start.instant, s.timing, || {
        measure::run(&load, Observers { servers: &servers, perf: None, live }, start, stop)
    })?;
    let server_cpus = plan.server_pid.and_then(|pid| affinity_of(pid).ok()).map(|cpus| cpus.len());
    let mut figures = measure::RunFigures::new(&run, &s, server_cpus);
    figures.label.clone_from(&plan.label);
    figures.churn_allowed = plan.allow_churn;
    figures.protocol = plan.target.protocol;
    let report = LoadReport {
        schema_version: SCHEMA_VERSION,
        url: plan.url.to_string(),
        threads: s.threads.get(),
        warmup_s: s.timing.warmup().as_secs_f64(),
        clients: s.segment.count(),
        segment: (s.segment.count() > 1).then_some(s.segment.index()),
        merge: None,
        slo: plan.slo.iter().map(|o| o.judge(&figures)).collect(),
        requests_asked: s.requests.map(std::num::NonZeroU64::get),
        figures,
    };
    load_summary(&mut std::io::stdout().lock(), &report)?;
    print_verdicts(plan, &report);
    super::conclude(&report, plan.json.as_deref(), telemetry.as_ref(), plan.linger, stop)?;
    Ok(report)
}

/// The line that says what is loaded: the method and URL, the protocol,
/// connections, the loop, the warm-up and the measured windows.
fn loading_line(plan: &LoadPlan) -> String {
    let s = plan.settings;
    let mode = s.rate.map_or_else(
        || "closed loop".to_owned(),
        |r| format!("open loop at {} requests/s", crate::report::per_s(r.per_s())),
    );
    let method = plan.target.request.method();
    let method = if method == "GET" { String::new() } else { format!("{method} ") };
    let protocol = match plan.target.protocol {
        Protocol::Http1 => String::new(),
        Protocol::Http2 => format!(" over HTTP/2 (streams per connection: {})", s.pipeline),
    };
    let until = s.requests.map_or_else(String::new, |n| format!(", or until {n} successful requests"));
    format!(
        "loading {method}{}{protocol} · {} connections · {mode} · {} warm-up, then {} measured in windows of {}{until}",
        plan.url,
        s.connections,
        humantime::format_duration(s.timing.warmup()),
        humantime::format_duration(s.timing.duration()),
        humantime::format_duration(s.timing.window())
    )
}

/// The run's verdicts: `SHORT` when `-n` was not reached, then each `--slo`
/// bound, met or violated.
fn print_verdicts(plan: &LoadPlan, report: &LoadReport) {
    let s = plan.settings;
    if let Some((asked, reached)) = report.short_of_requests_asked() {
        println!(
            "SHORT: -n {asked}: {reached} successful requests when --duration {} ended the run",
            humantime::format_duration(s.timing.duration())
        );
    }
    for (objective, verdict) in plan.slo.iter().zip(&report.slo) {
        let actual =
            verdict.actual.map_or_else(|| "nothing to judge".to_owned(), |a| format!("{a:.1} {}", objective.unit()));
        println!("SLO {objective}: {actual}, {}", if verdict.met { "met" } else { "VIOLATED" });
    }
}
