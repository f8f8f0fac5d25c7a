//! The command line, and its conversion into checked plans.
//!
//! clap parses flags into plain values ([`Cli`]); [`LoadArgs::plan`] and
//! [`SuiteArgs::plan`] check them against each other and the machine and
//! produce the plans the engine and the suite run. Neither sees clap types.

use std::net::{SocketAddr, ToSocketAddrs};
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use clap::{Args, Parser, Subcommand, ValueEnum};
use reqwest::Url;

use crate::affinity::CpuList;

/// Closed-loop HTTP/1.1 load generator and benchmark suite for the workspace's servers.
///
/// Exit codes: 0 success; 1 a run failed (errors, preflight mismatch, server
/// died); 2 bad input; 130 interrupted.
#[derive(Debug, Parser)]
#[command(version, propagate_version = true)]
pub struct Cli {
    /// What to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Load one URL and report successful requests per window and latency.
    Load(LoadArgs),
    /// Build, start and measure every framework and scenario, interleaved over rounds.
    Suite(SuiteArgs),
    /// Profile one server on one route with perf and write its flame graph (SVG).
    Flamegraph(FlamegraphArgs),
    /// Measure the client's own ceiling against a built-in canned responder pinned like a server.
    Calibrate(CalibrateArgs),
    /// The canned responder `calibrate` starts (internal).
    #[command(hide = true)]
    Responder(ResponderArgs),
    /// Compare two results (files or run folders): per run type, the change from A to B with its 95 % CI.
    ///
    /// Exit codes: 0 no significant regression beyond --threshold; 1 at least one; 2 bad input or
    /// different settings without --force.
    Compare(CompareArgs),
}

fn percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("'{text}' is not a percentage such as 2 or 2.5")),
    }
}

/// Flags of `flamegraph`, as typed.
#[derive(Debug, Args)]
pub struct FlamegraphArgs {
    /// Framework whose server to profile.
    #[arg(long, value_enum)]
    pub framework: Framework,
    /// Route to load, one of the route table's paths.
    #[arg(long, default_value = "/api/devices")]
    pub route: String,
    /// Cargo profile of the server binary (built by this command).
    #[arg(long, value_enum, default_value_t = Profile::Profiling)]
    pub profile: Profile,
    /// Recorded duration, e.g. 5s.
    #[arg(long, default_value = "5s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Keep-alive connections.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// State layers (server --layers).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
    /// CPUs the server is pinned to.
    #[arg(long, default_value = "0")]
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to.
    #[arg(long, default_value = "1")]
    pub client_cpus: CpuList,
    /// Folder the SVG is written to.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

/// A checked `flamegraph` invocation.
#[derive(Debug, Clone)]
pub struct FlamegraphPlan {
    /// Profile of the server binary.
    pub profile: Profile,
    /// Framework.
    pub framework: Framework,
    /// Route loaded.
    pub route: &'static common::Route,
    /// Server `--layers`.
    pub layers: u16,
    /// Connections and timings (1 s warm-up, one window of `--duration`).
    pub settings: LoadSettings,
    /// Server CPUs.
    pub server_cpus: CpuList,
    /// Client CPUs.
    pub client_cpus: CpuList,
    /// Output folder.
    pub out: PathBuf,
}

impl FlamegraphArgs {
    /// Checks the flags into a [`FlamegraphPlan`].
    ///
    /// # Errors
    /// A route outside the route table; CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<FlamegraphPlan> {
        let route = common::Route::by_path(&self.route).with_context(|| {
            let paths: Vec<&str> = common::ROUTES.iter().map(|r| r.path).collect();
            format!("--route {} is not in the route table ({})", self.route, paths.join(", "))
        })?;
        self.server_cpus.check_available().context("--server-cpus")?;
        self.client_cpus.check_available().context("--client-cpus")?;
        Ok(FlamegraphPlan {
            profile: self.profile,
            framework: self.framework,
            route,
            layers: self.layers,
            settings: LoadSettings::closed(
                nonzero(self.connections),
                NonZeroUsize::new(self.client_cpus.len()).unwrap_or(NonZeroUsize::MIN),
                Duration::from_secs(1),
                self.duration,
                self.duration,
                Duration::from_secs(2),
            ),
            server_cpus: self.server_cpus,
            client_cpus: self.client_cpus,
            out: self.out,
        })
    }
}

/// Flags of `calibrate`, as typed.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Keep-alive connections.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// Measured duration (one window), e.g. 3s.
    #[arg(long, default_value = "3s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up, e.g. 1s.
    #[arg(long, default_value = "1s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Requests outstanding per connection.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub pipeline: u16,
    /// CPUs the responder is pinned to.
    #[arg(long, default_value = "0")]
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to; engine threads = their count.
    #[arg(long, default_value = "1")]
    pub client_cpus: CpuList,
}

impl CalibrateArgs {
    /// Checks the flags into a [`CalibratePlan`](crate::calibrate::CalibratePlan).
    ///
    /// # Errors
    /// CPUs this process may not use.
    pub fn plan(self) -> anyhow::Result<crate::calibrate::CalibratePlan> {
        self.server_cpus.check_available().context("--server-cpus")?;
        self.client_cpus.check_available().context("--client-cpus")?;
        let mut settings = LoadSettings::closed(
            nonzero(self.connections),
            NonZeroUsize::new(self.client_cpus.len()).unwrap_or(NonZeroUsize::MIN),
            self.warmup,
            self.duration,
            self.duration,
            Duration::from_secs(2),
        );
        settings.pipeline = nonzero(u32::from(self.pipeline));
        Ok(crate::calibrate::CalibratePlan { settings, server_cpus: self.server_cpus, client_cpus: self.client_cpus })
    }
}

/// Flags of the internal `responder`.
#[derive(Debug, Args)]
pub struct ResponderArgs {
    /// Address to listen on (port 0: any free port, printed on the first line).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: SocketAddr,
}

/// Flags of `compare`, as typed.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a results.json or the run folder holding it.
    pub a: PathBuf,
    /// The candidate: a results.json or the run folder holding it.
    pub b: PathBuf,
    /// Smallest significant slowdown, percent, that counts as a regression.
    #[arg(long, default_value = "2", value_parser = percent)]
    pub threshold: f64,
    /// Compare even when the settings (duration, connections, profile, machine, …) differ.
    #[arg(long)]
    pub force: bool,
}

fn duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("'{text}' is not a duration such as 10s or 500ms: {e}"))
}

fn rate(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1e9 => Ok(r),
        _ => Err(format!("'{text}' is not a rate in requests per second such as 20000 (above 0, at most 1e9)")),
    }
}

fn positive_duration(text: &str) -> Result<Duration, String> {
    let d = duration(text)?;
    if d.is_zero() { Err(format!("'{text}' must be longer than zero")) } else { Ok(d) }
}

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
    pub rate_per_s: Option<f64>,
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

/// A URL resolved to the address the engine connects to.
#[derive(Debug, Clone)]
pub struct Target {
    /// The URL as given.
    pub url: Url,
    /// Resolved address.
    pub addr: SocketAddr,
    /// `Host` header value.
    pub host: String,
    /// Path and query.
    pub path: String,
}

impl Target {
    /// Parses and resolves `text`.
    ///
    /// # Errors
    /// A URL that does not parse, is not `http`, has no host, does not
    /// resolve, or (without `allow_remote`) is not on loopback.
    pub fn parse(text: &str, allow_remote: bool) -> anyhow::Result<Self> {
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
        Ok(Self { host: format!("{host}:{port}"), addr, path, url })
    }
}

/// `--window` must divide `--duration`.
fn check_windows(duration: Duration, window: Duration) -> anyhow::Result<()> {
    ensure!(
        duration >= window && duration.as_nanos().is_multiple_of(window.as_nanos()),
        "--duration {} is not a whole number of --window {}",
        humantime::format_duration(duration),
        humantime::format_duration(window)
    );
    Ok(())
}

/// A checked `load` invocation.
#[derive(Debug, Clone)]
pub struct LoadCommand {
    /// Where to send the load.
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

pub use crate::engine::LoadSettings;

fn nonzero(n: u32) -> NonZeroUsize {
    NonZeroUsize::new(n as usize).unwrap_or(NonZeroUsize::MIN)
}

impl LoadArgs {
    /// Checks the flags into a [`LoadCommand`].
    ///
    /// # Errors
    /// See [`Target::parse`]; a duration that is not a whole number of windows.
    pub fn plan(self) -> anyhow::Result<LoadCommand> {
        check_windows(self.duration, self.window)?;
        Ok(LoadCommand {
            target: Target::parse(&self.url, self.allow_remote)?,
            settings: LoadSettings {
                connections: nonzero(self.connections),
                threads: nonzero(u32::from(self.threads)),
                warmup: self.warmup,
                duration: self.duration,
                window: self.window,
                timeout: self.timeout,
                pipeline: nonzero(u32::from(self.pipeline)),
                rate_per_s: self.rate_per_s,
                nap: match (self.nap_us, self.rate_per_s) {
                    (Some(us), _) => Duration::from_micros(u64::from(us)),
                    (None, Some(_)) => Duration::ZERO,
                    (None, None) => crate::engine::DEFAULT_NAP,
                },
            },
            cpus: self.cpus,
            json: self.json,
            server_pid: self.server_pid,
        })
    }
}

/// A Cargo profile the servers are built and measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Optimized, as shipped.
    Release,
    /// Release with `debug = true`: the "debug" build of performance write-ups.
    Profiling,
    /// Cargo's unoptimized default; not representative of production.
    Dev,
}

impl Profile {
    /// The name Cargo knows it by (`--profile NAME`).
    pub fn cargo_name(self) -> &'static str {
        match self {
            Self::Release => "release",
            Self::Profiling => "profiling",
            Self::Dev => "dev",
        }
    }

    /// The folder of `target/` its binaries land in.
    pub fn target_dir(self) -> &'static str {
        match self {
            Self::Dev => "debug",
            other => other.cargo_name(),
        }
    }
}

/// A web framework with a server crate in this workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    /// actix-web (`server-actix`).
    Actix,
    /// axum (`server-axum`).
    Axum,
    /// Rocket (`server-rocket`).
    Rocket,
}

impl Framework {
    /// Lower-case name, e.g. `axum`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Actix => "actix",
            Self::Axum => "axum",
            Self::Rocket => "rocket",
        }
    }

    /// Its package and binary name, e.g. `server-axum`.
    pub fn binary(self) -> String {
        format!("server-{}", self.name())
    }
}

/// Flags of `suite`, as typed.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Cargo profile to build and measure.
    #[arg(long, value_enum, default_value_t = Profile::Release)]
    pub profile: Profile,
    /// Frameworks to measure, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "actix,axum,rocket")]
    pub frameworks: Vec<Framework>,
    /// Scenarios to measure, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "payload,state")]
    pub scenarios: Vec<crate::suite::Scenario>,
    /// Measured duration of each run (a whole number of windows), e.g. 3s.
    #[arg(long, default_value = "3s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up before each run, e.g. 1s.
    #[arg(long, default_value = "1s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Length of one counting window.
    #[arg(long, default_value = "1s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub window: Duration,
    /// Rounds; each runs every scenario's two variants, order alternating.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub rounds: u32,
    /// Keep-alive connections per run.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// State layers in front of the /state routes (server --layers); a comma-separated list
    /// (e.g. 0,1,5,10,20) sweeps them, restarting each server per layer count.
    #[arg(long, value_delimiter = ',', default_value = "10", value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: Vec<u16>,
    /// Per-request timeout.
    #[arg(long, default_value = "2s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// CPUs the servers are pinned to; workers = their count.
    #[arg(long, default_value = "0")]
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to; engine threads = their count.
    #[arg(long, default_value = "1")]
    pub client_cpus: CpuList,
    /// Folder the run folders are written under.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Use the binaries already built instead of running cargo build first.
    #[arg(long)]
    pub no_build: bool,
    /// Sampling profiler attached to each server during the measured windows
    /// (auto: perf in the profiling profile, none otherwise).
    #[arg(long, value_enum, default_value_t = ProfilerChoice::Auto)]
    pub profiler: ProfilerChoice,
}

/// Whether to attach a profiler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProfilerChoice {
    /// `perf` in the `profiling` profile, none otherwise.
    Auto,
    /// `perf record -e cpu-clock -g` (skipped, with a note, when unavailable).
    Perf,
    /// No profiler.
    None,
}

/// A checked `suite` invocation.
#[derive(Debug, Clone)]
pub struct SuitePlan {
    /// Profile.
    pub profile: Profile,
    /// Frameworks, deduplicated, in the order given.
    pub frameworks: Vec<Framework>,
    /// Scenarios, deduplicated, in the order given.
    pub scenarios: Vec<crate::suite::Scenario>,
    /// Timings and connections of every run (threads = client CPUs).
    pub settings: LoadSettings,
    /// Rounds.
    pub rounds: u32,
    /// Server `--layers` values, ascending, each measured with its own server start.
    pub layers: Vec<u16>,
    /// Server CPUs.
    pub server_cpus: CpuList,
    /// Client CPUs.
    pub client_cpus: CpuList,
    /// Output folder.
    pub out: PathBuf,
    /// Run cargo build first.
    pub build: bool,
    /// Attach perf to each server during the measured windows.
    pub profiler: bool,
}

fn dedup<T: PartialEq + Copy>(items: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(items.len());
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

impl SuiteArgs {
    /// Checks the flags into a [`SuitePlan`].
    ///
    /// # Errors
    /// A duration that is not a whole number of windows; CPUs this process may
    /// not use.
    pub fn plan(self) -> anyhow::Result<SuitePlan> {
        check_windows(self.duration, self.window)?;
        self.server_cpus.check_available().context("--server-cpus")?;
        self.client_cpus.check_available().context("--client-cpus")?;
        Ok(SuitePlan {
            profile: self.profile,
            frameworks: dedup(self.frameworks),
            scenarios: dedup(self.scenarios),
            settings: LoadSettings::closed(
                nonzero(self.connections),
                NonZeroUsize::new(self.client_cpus.len()).unwrap_or(NonZeroUsize::MIN),
                self.warmup,
                self.duration,
                self.window,
                self.timeout,
            ),
            rounds: self.rounds,
            layers: {
                let mut layers = self.layers;
                layers.sort_unstable();
                layers.dedup();
                layers
            },
            server_cpus: self.server_cpus,
            client_cpus: self.client_cpus,
            out: self.out,
            build: !self.no_build,
            profiler: match self.profiler {
                ProfilerChoice::Auto => self.profile == Profile::Profiling,
                ProfilerChoice::Perf => true,
                ProfilerChoice::None => false,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    fn load(argv: &[&str]) -> anyhow::Result<LoadCommand> {
        let mut full = vec!["bench-client", "load"];
        full.extend_from_slice(argv);
        match Cli::try_parse_from(full)?.command {
            Command::Load(args) => args.plan(),
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
        assert_eq!(plan.settings.duration, Duration::from_secs(10));
        assert_eq!(plan.settings.warmup, Duration::from_secs(2));
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
        assert!(load(&["http://192.0.2.1/", "--allow-remote"]).is_ok());
    }

    #[test]
    fn suite_plan_deduplicates_and_sizes_threads_by_client_cpus() {
        let cli = Cli::try_parse_from(["b", "suite", "--frameworks", "axum,axum,actix", "--client-cpus", "0"]).unwrap();
        let Command::Suite(args) = cli.command else { unreachable!() };
        let plan = args.plan().unwrap();
        assert_eq!(plan.frameworks, [Framework::Axum, Framework::Actix]);
        assert_eq!(plan.settings.threads.get(), 1);
        assert_eq!(plan.rounds, 6);
        assert_eq!(plan.layers, [10]);
        let cli = Cli::try_parse_from(["b", "suite", "--layers", "20,0,5,5", "--client-cpus", "0"]).unwrap();
        let Command::Suite(args) = cli.command else { unreachable!() };
        assert_eq!(args.plan().unwrap().layers, [0, 5, 20]);
        assert!(Cli::try_parse_from(["b", "suite", "--layers", "1,x"]).is_err());
        assert_eq!(Profile::Dev.target_dir(), "debug");
    }
}
