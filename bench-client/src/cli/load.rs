//! `bench-client load URL`: preflight one URL, run the engine against it,
//! print a summary and optionally write the figures as JSON.

use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use clap::Args;
use url::Url;

use super::args::{duration, nonzero, positive_duration, rate, timing};
use crate::engine::{DEFAULT_NAP, Load, LoadSettings, Rate, Target};
use crate::measure::{self, Observers, RunFigures};
use crate::preflight;
use crate::report::load_summary;
use crate::results::{self, LoadReport, SCHEMA_VERSION};
use crate::sys::{CpuList, affinity_of};

/// Flags of `load`, as typed.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// URL to load, `http://host:port/path`; loopback only unless --allow-remote.
    pub url: String,
    /// Keep-alive connections, each with --pipeline requests in flight (closed loop).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// Measured duration (a whole number of windows), e.g. 10s.
    #[arg(long, default_value = "10s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up before the first window, e.g. 2s (0s allowed).
    #[arg(long, default_value = "2s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Length of one counting window, e.g. 1s.
    #[arg(long, default_value = "1s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub window: Duration,
    /// Engine threads (one event loop each).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: u16,
    /// Per-request timeout, e.g. 2s.
    #[arg(long, default_value = "2s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Requests outstanding per connection (HTTP/1.1 pipelining); 1 = none.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub pipeline: u16,
    /// Open loop: requests per second due over all connections, on a fixed schedule; latency counts
    /// from when each request was due (corrected for coordinated omission, as wrk2 does). Without
    /// it the loop is closed: a connection writes its next request when a response completes.
    #[arg(long = "rate-per-s", visible_alias = "rate", value_parser = rate)]
    pub rate_per_s: Option<Rate>,
    /// Between events, poll and nap this many microseconds instead of waiting in epoll (default 50 in
    /// the closed loop, 0 in the open loop): a client waiting in epoll makes a loopback server pay for
    /// waking it. 0 waits in epoll.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub nap_us: Option<u32>,
    /// CPUs to pin the client to, e.g. 1 or 2-3 (default: not pinned).
    #[arg(long)]
    pub cpus: Option<CpuList>,
    /// Write the figures to this JSON file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Pid of the server process, to record its CPU use per window and flag
    /// runs where it was not saturated.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Allow a target outside the loopback range.
    #[arg(long)]
    pub allow_remote: bool,
}

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
}

/// Parses and resolves `text` into the URL and the engine's target.
///
/// # Errors
/// A URL that does not parse, is not `http`, has no host, does not resolve,
/// or (without `allow_remote`) is not on loopback.
fn resolve(text: &str, allow_remote: bool) -> anyhow::Result<(Url, Target)> {
    let url = Url::parse(text).with_context(|| format!("'{text}' is not a URL"))?;
    ensure!(url.scheme() == "http", "'{text}': only http:// URLs are supported (no TLS)");
    let Some(host) = url.host_str() else { bail!("'{text}' has no host") };
    let port = url.port_or_known_default().unwrap_or(80);
    let addr = (host, port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {host}"))?
        .next()
        .with_context(|| format!("{host} resolves to no address"))?;
    ensure!(
        allow_remote || addr.ip().is_loopback(),
        "{addr} is not a loopback address; pass --allow-remote to load another host"
    );
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let target = Target { addr, host: format!("{host}:{port}"), path };
    Ok((url, target))
}

impl LoadArgs {
    /// Checks the flags into a [`LoadPlan`].
    ///
    /// # Errors
    /// See `resolve`; a duration that is not a whole number of windows.
    pub fn plan(self) -> anyhow::Result<LoadPlan> {
        let timing = timing(self.warmup, self.duration, self.window)?;
        let (url, target) = resolve(&self.url, self.allow_remote)?;
        Ok(LoadPlan {
            url,
            target,
            settings: LoadSettings {
                connections: nonzero(self.connections),
                threads: nonzero(u32::from(self.threads)),
                timing,
                timeout: self.timeout,
                pipeline: nonzero(u32::from(self.pipeline)),
                rate: self.rate_per_s,
                segment: crate::engine::Segment::WHOLE,
                nap: match (self.nap_us, self.rate_per_s) {
                    (Some(us), _) => Duration::from_micros(u64::from(us)),
                    (None, Some(_)) => Duration::ZERO,
                    (None, None) => DEFAULT_NAP,
                },
            },
            cpus: self.cpus,
            json: self.json,
            server_pid: self.server_pid,
        })
    }
}

/// Runs `plan`; returns the figures (also written to `--json` when given)
/// after printing the summary on stdout.
///
/// # Errors
/// Preflight failures, engine start failures, an unwritable JSON file.
pub(super) fn run(plan: &LoadPlan, stop: &AtomicBool) -> anyhow::Result<RunFigures> {
    if let Some(cpus) = &plan.cpus {
        cpus.pin_current_thread()?;
    }
    let s = plan.settings;
    let expected_body = preflight::expected_body(plan.url.as_str(), &plan.target)?;
    let load = Load { target: plan.target.clone(), expected_body, settings: s };
    let run = measure::run(&load, Observers { server_pid: plan.server_pid, perf: None }, measure::Start::now(), stop)?;
    let server_cpus = plan.server_pid.and_then(|pid| affinity_of(pid).ok()).map(|cpus| cpus.len());
    let figures = RunFigures::new(&run, &s, server_cpus);
    load_summary(&mut std::io::stdout().lock(), plan.url.as_str(), &figures)?;
    if let Some(path) = &plan.json {
        let report = LoadReport {
            schema_version: SCHEMA_VERSION,
            url: plan.url.to_string(),
            threads: s.threads.get(),
            warmup_s: s.timing.warmup().as_secs_f64(),
            figures: figures.clone(),
        };
        results::write(path, &report)?;
    }
    Ok(figures)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::{Cli, Commands};
    use super::*;

    fn load(argv: &[&str]) -> anyhow::Result<LoadPlan> {
        let mut full = vec!["bench-client", "load"];
        full.extend_from_slice(argv);
        match Cli::try_parse_from(full)?.command {
            Commands::Load(args) => args.plan(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn load_defaults_and_target() {
        let plan = load(&["http://127.0.0.1:8080/api/devices?x=1"]).unwrap();
        assert_eq!(plan.target.addr, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(plan.target.host, "127.0.0.1:8080");
        assert_eq!(plan.target.path, "/api/devices?x=1");
        assert_eq!(plan.settings.connections.get(), 64);
        assert_eq!(plan.settings.timing.duration(), Duration::from_secs(10));
        assert_eq!(plan.settings.timing.warmup(), Duration::from_secs(2));
        assert_eq!(plan.settings.nap, DEFAULT_NAP);
        let open = load(&["http://127.0.0.1:8080/", "--rate", "500"]).unwrap();
        assert_eq!(open.settings.rate.map(Rate::per_s), Some(500.0));
        assert_eq!(open.settings.nap, Duration::ZERO, "the open loop does not nap by default");
    }

    #[test]
    fn bad_load_input_is_refused_with_the_reason() {
        let err = |argv: &[&str]| format!("{:#}", load(argv).unwrap_err());
        assert!(err(&["https://127.0.0.1/"]).contains("only http://"));
        assert!(err(&["http://:8080/plaintext"]).contains("not a URL"), "empty host");
        assert!(err(&["/plaintext"]).contains("not a URL"), "no scheme, no host");
        assert!(err(&["not a url"]).contains("not a URL"));
        assert!(err(&["http://192.0.2.1/"]).contains("--allow-remote"));
        assert!(err(&["http://127.0.0.1/", "--duration", "1500ms"]).contains("whole number"));
        assert!(err(&["http://127.0.0.1/", "--connections", "0"]).contains("connections"));
        assert!(err(&["http://127.0.0.1/", "--duration", "0s"]).contains("longer than zero"));
        assert!(err(&["http://127.0.0.1/", "--duration", "-1s"]).contains("-1s"));
        assert!(err(&["http://127.0.0.1/", "--rate", "0"]).contains("not a rate"));
        assert!(load(&["http://192.0.2.1/", "--allow-remote"]).is_ok());
    }
}
