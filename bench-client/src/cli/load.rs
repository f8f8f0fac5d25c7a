//! `bench-client load URL`: preflight one URL, run the engine against it
//! (at once, or from a start barrier shared with other clients, with this
//! client's segment of a load split over several), print a summary and
//! optionally write the figures as JSON (to a file, or to stdout between
//! marker lines for a pod's log), optionally serving live metrics. An
//! `https://` URL is loaded over TLS (`--insecure` or `--ca FILE`).

use std::num::NonZeroU64;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use clap::Args;
use common::address::{Authority, Host, Reach, first_accepting};
use url::Url;

use super::args::{MetricsArgs, StartArgs, TimingArgs, nonzero, on_off, rate, timeout};
use crate::engine::{DEFAULT_NAP, LoadSettings, Protocol, Rate, Request, Segment, Target, TlsClient, Trust};
use crate::results::parse_slo;
use crate::runner::LoadPlan;
use crate::sys::{CpuList, hostname};

/// The variable the Kubernetes Job controller sets in every pod of an
/// Indexed Job to the pod's completion index: `--segment auto` reads it.
pub const JOB_COMPLETION_INDEX: &str = "JOB_COMPLETION_INDEX";

/// `--segment`: an index, or `auto` (from [`JOB_COMPLETION_INDEX`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentArg {
    /// The index given.
    Index(u32),
    /// The index of this Kubernetes Indexed Job pod.
    Auto,
}

fn segment_arg(text: &str) -> Result<SegmentArg, String> {
    match text.trim() {
        "auto" => Ok(SegmentArg::Auto),
        t => {
            t.parse().map(SegmentArg::Index).map_err(|_| format!("'{text}' is not a segment index such as 0, or auto"))
        }
    }
}

/// `-n`: a whole number of requests, at least 1.
fn request_count(text: &str) -> Result<NonZeroU64, String> {
    text.trim().parse().map_err(|_| format!("'{text}' is not a number of requests of at least 1"))
}

/// Flags of `load`, as typed.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// URL to load, `http://host:port/path` or `https://…`; loopback only unless --allow-remote.
    pub url: String,
    /// Keep-alive connections, each with --pipeline requests in flight (closed loop).
    #[arg(help_heading = "Load", short = 'c', long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// Duration, warm-up and window.
    #[command(flatten, next_help_heading = "Load")]
    pub timing: TimingArgs,
    /// End the run once N requests succeeded in the measured windows (closed loop only), or at the end
    /// of --duration if sooner: a cap, so raise -d for a slow server. No request is written beyond N
    /// (none is left in flight); the last window is partial, those after it empty.
    #[arg(help_heading = "Load", short = 'n', long, value_name = "N", value_parser = request_count)]
    pub requests: Option<NonZeroU64>,
    /// Engine threads (one event loop each).
    #[arg(help_heading = "Load", short = 't', long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: u16,
    /// Per-request timeout, e.g. 2s.
    #[arg(help_heading = "Load", long, default_value = "2s", value_parser = timeout, allow_hyphen_values = true)]
    pub timeout: Duration,
    /// Requests outstanding per connection (HTTP/1.1 pipelining); 1 = none.
    #[arg(help_heading = "Load", long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub pipeline: u16,
    /// Speak HTTP/2: with prior knowledge (h2c) to an http:// URL, by ALPN `h2` over TLS to an https:// one.
    #[arg(help_heading = "Load", long)]
    pub http2: bool,
    /// HTTP/2: concurrent streams per connection (h2load's -m), never more than the server grants.
    #[arg(help_heading = "Load", long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub streams: Option<u16>,
    /// Close each connection after this many responses and open it again (churn): over TLS each new
    /// connection pays a handshake, full or resumed (--tls-resumption). Default: keep-alive throughout.
    #[arg(help_heading = "Load", long, value_parser = clap::value_parser!(u32).range(1..=1_000_000_000))]
    pub requests_per_connection: Option<u32>,
    /// Open loop: requests per second due over all connections, on a fixed schedule; latency counts
    /// from when each request was due (corrected for coordinated omission, as wrk2 does). Without
    /// it the loop is closed: a connection writes its next request when a response completes.
    #[arg(help_heading = "Load", short = 'R', long = "rate-per-s", visible_alias = "rate", value_parser = rate)]
    pub rate_per_s: Option<Rate>,
    /// Between events, poll and nap this many microseconds instead of waiting in epoll (default 50 in
    /// the closed loop, 0 in the open loop): a client waiting in epoll makes a loopback server pay for
    /// waking it. 0 waits in epoll.
    #[arg(help_heading = "Load", long, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    pub nap_us: Option<u32>,
    /// Method, headers and body of every request.
    #[command(flatten, next_help_heading = "Request")]
    pub request: RequestArgs,
    /// CPUs to pin the client to, e.g. 1 or 2-3 (default: not pinned).
    #[arg(help_heading = "Target and checks", long)]
    pub cpus: Option<CpuList>,
    /// Write the figures to this JSON file; `-`: to stdout after the summary, between marker lines
    /// with a checksum (`-----BEGIN BENCH RESULT-----`), for a pod's log to carry to `merge`.
    #[arg(help_heading = "Output", long)]
    pub json: Option<PathBuf>,
    /// Pid of the server process, to record its CPU use per window and flag
    /// runs where it was not saturated.
    #[arg(help_heading = "Target and checks", long)]
    pub server_pid: Option<u32>,
    /// Allow a target outside the loopback range.
    #[arg(help_heading = "Target and checks", long)]
    pub allow_remote: bool,
    /// The server may close connections (`Connection: close`, a keep-alive limit): connections it
    /// closes and the requests written again because of it are counted and shown, but do not fail
    /// the run (exit 0).
    #[arg(help_heading = "Target and checks", long)]
    pub allow_churn: bool,
    /// The status a successful response carries (e.g. 201, 204, 302 for a route that answers it on
    /// purpose); every response is still verified byte for byte against the body preflight fetched.
    #[arg(help_heading = "Target and checks", long, default_value_t = 200, value_parser = clap::value_parser!(u16).range(200..=599))]
    pub expect_status: u16,
    /// Service-level objectives judged when the run ends, comma-separated, e.g.
    /// 'p99<2ms,p99.9<10ms,success>=99.9%' (p50, p90, p99, p99.9, max in us, ms or s; success in %):
    /// each verdict printed and in the JSON, exit 1 when one is violated.
    #[arg(help_heading = "Target and checks", long, value_name = "LIST")]
    pub slo: Option<String>,
    /// Clients the load is split over (one process each, usually on several hosts): --connections and
    /// --rate-per-s are the totals over all of them, and each runs its --segment.
    #[arg(help_heading = "Several clients", long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub clients: u32,
    /// This client's segment, 0 to --clients minus 1, or `auto`: the index of this Kubernetes Indexed
    /// Job pod (JOB_COMPLETION_INDEX).
    #[arg(help_heading = "Several clients", long, value_parser = segment_arg)]
    pub segment: Option<SegmentArg>,
    /// The shared start.
    #[command(flatten, next_help_heading = "Several clients")]
    pub start: StartArgs,
    /// This client's name in the results and in `merge` (default: the host name; a pod's name in
    /// Kubernetes).
    #[arg(help_heading = "Several clients", long)]
    pub label: Option<String>,
    /// Live metrics and lingering.
    #[command(flatten, next_help_heading = "Output")]
    pub metrics: MetricsArgs,
    /// TLS for an https:// URL.
    #[command(flatten, next_help_heading = "TLS")]
    pub tls: TlsArgs,
}

/// What every request of `load` says, as typed.
#[derive(Debug, Args)]
pub struct RequestArgs {
    /// Request method, e.g. POST. Preflight sends the very same request (three times for an answer
    /// not in the route table) before the load: a request that changes the server's state (a POST
    /// that creates) changes it then too, and an answer that differs each time is refused.
    #[arg(short = 'm', long, default_value = "GET")]
    pub method: String,
    /// A header, 'Name: value' (repeatable, sent in order). `Host` replaces the URL's authority;
    /// Content-Length, Transfer-Encoding and Connection are the client's own and refused.
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Request body, sent with its Content-Length (the method stays GET unless -m says); `@FILE`
    /// reads it from FILE.
    #[arg(long, value_name = "TEXT|@FILE", allow_hyphen_values = true, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from FILE (oha's -D; -d is the duration, as in wrk).
    #[arg(short = 'D', long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
}

impl RequestArgs {
    /// The checked request, its body read.
    ///
    /// # Errors
    /// A body file that cannot be read; what [`Request::new`] refuses.
    fn request(&self) -> anyhow::Result<Request> {
        let file = match (&self.body, &self.body_file) {
            (Some(text), _) => text.strip_prefix('@').map(PathBuf::from),
            (None, file) => file.clone(),
        };
        let body = match (file, &self.body) {
            (Some(path), _) => {
                Some(std::fs::read(&path).with_context(|| format!("cannot read the body file {}", path.display()))?)
            }
            (None, text) => text.as_ref().map(|t| t.as_bytes().to_vec()),
        };
        Ok(Request::new(&self.method, &self.headers, body)?)
    }
}

/// How an `https://` target's certificate is checked and whether sessions resume.
#[derive(Debug, Args)]
pub struct TlsArgs {
    /// Accept any certificate (the handshake's signatures are still checked): for a server under
    /// test with a certificate of its own making, as `--tls` servers generate.
    #[arg(long, conflicts_with = "ca")]
    pub insecure: bool,
    /// Trust the certificates of this PEM file (no system trust store is read).
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Resume TLS sessions (tickets, session IDs) on new connections: matters when connections are
    /// closed and opened again.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = on_off, action = clap::ArgAction::Set)]
    pub tls_resumption: bool,
}

impl TlsArgs {
    /// The TLS client for `host` of an `https://` URL.
    ///
    /// # Errors
    /// Neither `--insecure` nor `--ca`; a CA file that cannot be used.
    fn client(&self, host: &Host) -> anyhow::Result<TlsClient> {
        let trust = match (&self.ca, self.insecure) {
            (Some(ca), _) => Trust::Ca(ca.display().to_string()),
            (None, true) => Trust::Any,
            (None, false) => bail!("an https:// URL needs --ca FILE or --insecure (no system trust store is read)"),
        };
        TlsClient::new(&host.unbracketed(), trust, self.tls_resumption)
    }
}

/// Parses and resolves `text` into the URL and the engine's target: its
/// host and port checked and resolved by `common::address` (the loopback
/// rule, `localhost`), the `Host` header as RFC 3986 writes the authority
/// (`[::1]:8080`), and over TLS the server name the host gives (none for an
/// IP address).
///
/// # Errors
/// A URL that does not parse, is neither `http` nor `https`, has no host,
/// does not resolve, or (without `allow_remote`) is not on loopback; TLS
/// flags that cannot be used.
fn resolve(text: &str, allow_remote: bool, tls: &TlsArgs) -> anyhow::Result<(Url, Target)> {
    let url = Url::parse(text).with_context(|| format!("'{text}' is not a URL"))?;
    ensure!(matches!(url.scheme(), "http" | "https"), "'{text}': only http:// and https:// URLs are supported");
    let host = match url.host() {
        Some(url::Host::Ipv4(v4)) => Host::Ip(v4.into()),
        Some(url::Host::Ipv6(v6)) => Host::Ip(v6.into()),
        Some(url::Host::Domain(name)) => Host::Name(name.to_ascii_lowercase()),
        None => bail!("'{text}' has no host"),
    };
    let authority = Authority { host, port: url.port_or_known_default().unwrap_or(80) };
    let reach = if allow_remote { Reach::Any } else { Reach::Loopback };
    let addrs = authority.targets(reach)?;
    let addr = first_accepting(&addrs).context("no address")?;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    };
    let target = Target { host: authority.to_string(), path, ..Target::new(addr, "") };
    let target = match url.scheme() {
        "https" => target.with_tls(tls.client(&authority.host)?),
        _ => target,
    };
    Ok((url, target))
}

impl LoadArgs {
    /// Checks the flags into a [`LoadPlan`].
    ///
    /// # Errors
    /// See `resolve`; a duration that is not a whole number of windows; a
    /// segment that is missing, out of range or not set by Kubernetes; more
    /// clients than connections; a start barrier missed or over an hour ahead.
    pub fn plan(self) -> anyhow::Result<LoadPlan> {
        self.plan_with(|name| std::env::var(name).ok())
    }

    /// [`LoadArgs::plan`], reading environment variables with `env`.
    fn plan_with(self, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<LoadPlan> {
        let timing = self.timing.timing()?;
        if let Some(cpus) = &self.cpus {
            cpus.check_available().context("--cpus")?;
        }
        ensure!(self.http2 || self.streams.is_none(), "--streams is HTTP/2's: add --http2 (HTTP/1.1 has --pipeline)");
        ensure!(!self.http2 || self.pipeline == 1, "--pipeline is HTTP/1.1's: with --http2, --streams N");
        let request = self.request.request()?;
        if self.http2 {
            request.check_http2()?;
        }
        let (url, target) = resolve(&self.url, self.allow_remote, &self.tls)?;
        let protocol = if self.http2 { Protocol::Http2 } else { Protocol::Http1 };
        let target = Target { request, ..target }.speaking(protocol);
        let pipeline = match protocol {
            Protocol::Http1 => self.pipeline,
            Protocol::Http2 => self.streams.unwrap_or(1),
        };
        let n = self.clients;
        let segment = segment_of(self.segment, n, env)?;
        ensure!(
            n <= self.connections,
            "--clients {n} exceeds --connections {}: every client needs at least one connection",
            self.connections
        );
        let connections = segment.share(u64::from(self.connections));
        if let Some(count) = self.requests {
            ensure!(self.rate_per_s.is_none(), "-n ends a closed loop; an open loop's length is its --duration");
            ensure!(count.get() >= u64::from(n), "-n {count} is below --clients {n}: every client needs a request");
        }
        if let Some(rate) = self.rate_per_s {
            let (from, to) = (timing.warmup(), timing.warmup() + timing.duration());
            ensure!(
                rate.due_within(from, to) > 0,
                "--rate {}: no request falls due in the measured windows ({} s to {} s; one every {} s from the \
                 start): raise the rate or lengthen --duration",
                crate::report::per_s(rate.per_s()),
                from.as_secs_f64(),
                to.as_secs_f64(),
                crate::report::per_s(1.0 / rate.per_s())
            );
        }
        let requests = self.requests.and_then(|r| NonZeroU64::new(segment.share(r.get())));
        let barrier = self.start.barrier()?;
        Ok(LoadPlan {
            url,
            target,
            settings: LoadSettings {
                connections: nonzero(u32::try_from(connections).unwrap_or(u32::MAX)),
                threads: nonzero(u32::from(self.threads)),
                timing,
                timeout: self.timeout,
                pipeline: nonzero(u32::from(pipeline)),
                rate: self.rate_per_s,
                segment,
                nap: match (self.nap_us, self.rate_per_s) {
                    (Some(us), _) => Duration::from_micros(u64::from(us)),
                    (None, Some(_)) => Duration::ZERO,
                    (None, None) => DEFAULT_NAP,
                },
                requests_per_connection: self.requests_per_connection.map(nonzero),
                requests,
            },
            cpus: self.cpus,
            json: super::args::checked_json(self.json)?,
            server_pid: self.server_pid,
            barrier,
            label: self.label.unwrap_or_else(hostname),
            metrics_addr: self.metrics.metrics_addr,
            linger: self.metrics.linger,
            allow_churn: self.allow_churn,
            expect_status: self.expect_status,
            slo: self.slo.as_deref().map(parse_slo).transpose()?.unwrap_or_default(),
        })
    }
}

/// This client's segment of a load over `n` clients: the whole when alone,
/// the index given, or with `auto` the one Kubernetes gives its pod (`env`
/// reads [`JOB_COMPLETION_INDEX`]).
fn segment_of(arg: Option<SegmentArg>, n: u32, env: impl Fn(&str) -> Option<String>) -> anyhow::Result<Segment> {
    Ok(match arg {
        None if n == 1 => Segment::WHOLE,
        None => bail!("--clients {n} needs --segment: an index from 0 to {} or auto", n - 1),
        Some(SegmentArg::Index(i)) => {
            Segment::new(i, n).with_context(|| format!("--segment {i} is not below --clients {n}"))?
        }
        Some(SegmentArg::Auto) => {
            let text = env(JOB_COMPLETION_INDEX).with_context(|| {
                format!("--segment auto: {JOB_COMPLETION_INDEX} is not set (Kubernetes sets it in Indexed Job pods)")
            })?;
            let i: u32 = text
                .trim()
                .parse()
                .with_context(|| format!("--segment auto: {JOB_COMPLETION_INDEX}='{text}' is not an index"))?;
            Segment::new(i, n)
                .with_context(|| format!("--segment auto: {JOB_COMPLETION_INDEX}={i} is not below --clients {n}"))?
        }
    })
}

#[cfg(test)]
mod tests {

    use super::super::{Commands, parsed};
    use super::*;

    fn load(argv: &[&str]) -> anyhow::Result<LoadPlan> {
        let Commands::Load(args) = parsed(&[&["load"], argv].concat())? else { unreachable!() };
        args.plan()
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
    fn an_ipv6_loopback_url_is_its_address_and_its_host_header_keeps_the_brackets() {
        let v6 = load(&["http://[::1]:8080/plaintext"]).unwrap();
        assert_eq!(v6.target.addr, "[::1]:8080".parse().unwrap());
        assert_eq!(v6.target.host, "[::1]:8080", "RFC 9110's Host: the authority as the URL writes it");
        assert_eq!(load(&["http://[::1]/"]).unwrap().target.host, "[::1]:80");
        let tls = load(&["https://[0:0:0:0:0:0:0:1]:8443/", "--insecure"]).unwrap();
        assert_eq!((tls.target.addr, tls.target.host.as_str()), ("[::1]:8443".parse().unwrap(), "[::1]:8443"));
        assert_eq!(tls.target.scheme(), "https", "an IP address's server name: no SNI, checked as an IP");
        let v4 = load(&["http://127.3.2.1:9/"]).unwrap();
        assert_eq!((v4.target.addr, v4.target.host.as_str()), ("127.3.2.1:9".parse().unwrap(), "127.3.2.1:9"));
        // localhost: both loopback addresses, the one that accepts (here: 127.0.0.1, which listens).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let name = load(&[&format!("http://LocalHost:{port}/")]).unwrap();
        assert_eq!(name.target.addr, listener.local_addr().unwrap());
        assert_eq!(name.target.host, format!("localhost:{port}"));
        let err = |url: &str| format!("{:#}", load(&[url]).unwrap_err());
        assert!(err("http://[2001:db8::1]/").contains("[2001:db8::1]:80 is not a loopback address"));
        assert!(err("http://[::]:80/").contains("--allow-remote"), "the unspecified address is no target");
    }

    #[test]
    fn bad_load_input_is_refused_with_the_reason() {
        let err = |argv: &[&str]| format!("{:#}", load(argv).unwrap_err());
        assert!(err(&["ftp://127.0.0.1/"]).contains("only http:// and https://"));
        assert!(err(&["https://127.0.0.1/"]).contains("needs --ca FILE or --insecure"));
        assert!(err(&["https://127.0.0.1/", "--ca", "/nonexistent.pem"]).contains("cannot read /nonexistent.pem"));
        assert!(err(&["https://127.0.0.1/", "--insecure", "--tls-resumption", "maybe"]).contains("'maybe'"));
        let tls = load(&["https://127.0.0.1/", "--insecure", "--tls-resumption", "off"]).unwrap();
        assert_eq!(tls.target.scheme(), "https");
        assert_eq!(tls.target.addr.port(), 443, "https's default port");
        assert!(!tls.target.tls.unwrap().resumption());
        assert_eq!(load(&["http://127.0.0.1/", "--insecure"]).unwrap().target.scheme(), "http");
        assert!(err(&["http://:8080/plaintext"]).contains("not a URL"), "empty host");
        assert!(err(&["/plaintext"]).contains("not a URL"), "no scheme, no host");
        assert!(err(&["not a url"]).contains("not a URL"));
        assert!(err(&["http://192.0.2.1/"]).contains("--allow-remote"));
        // Refused before any lookup (a lookup of .invalid would fail with "cannot resolve").
        let remote = err(&["http://bench.example.invalid/"]);
        assert!(remote.contains("not a loopback name") && remote.contains("--allow-remote"), "{remote}");
        assert!(load(&["http://localhost:8080/"]).is_ok(), "localhost is looked up and is loopback");
        assert!(err(&["http://127.0.0.1/", "--duration", "1500ms"]).contains("whole number"));
        assert!(err(&["http://127.0.0.1/", "--connections", "0"]).contains("connections"));
        assert!(err(&["http://127.0.0.1/", "--duration", "0s"]).contains("longer than zero"));
        assert!(err(&["http://127.0.0.1/", "--duration", "-1s"]).contains("-1s"));
        assert!(err(&["http://127.0.0.1/", "--rate", "0"]).contains("not a rate"));
        // Requests fall due at 0 s and 5 s: none in the windows from 1 s to 3 s.
        let none = err(&["http://127.0.0.1/", "--rate", "0.2", "--warmup", "1s", "--duration", "2s"]);
        assert_eq!(
            none,
            "--rate 0.2: no request falls due in the measured windows (1 s to 3 s; one every 5 s from the start): \
             raise the rate or lengthen --duration"
        );
        let slow = load(&["http://127.0.0.1/", "--rate", "0.5", "--warmup", "1s", "--duration", "4s"]).unwrap();
        assert_eq!(slow.settings.rate.map(|r| r.due_within(Duration::from_secs(1), Duration::from_secs(5))), Some(2));
        assert!(load(&["http://192.0.2.1/", "--allow-remote"]).is_ok());
    }

    fn with_env(argv: &[&str], index: Option<&str>) -> anyhow::Result<LoadPlan> {
        match parsed(&[&["load", "http://127.0.0.1:8080/"], argv].concat())? {
            Commands::Load(args) => {
                args.plan_with(|name| (name == JOB_COMPLETION_INDEX).then(|| index.map(str::to_owned)).flatten())
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn segments_take_their_share_of_the_connections_and_the_index_from_kubernetes() {
        let shares: Vec<usize> = (0..3)
            .map(|i| {
                let plan = with_env(&["--clients", "3", "--segment", &i.to_string()], None).unwrap();
                assert_eq!(plan.settings.segment, Segment::new(i, 3).unwrap());
                plan.settings.connections.get()
            })
            .collect();
        assert_eq!(shares, [22, 21, 21], "64 connections dealt round-robin");
        let auto = with_env(&["--clients", "4", "--segment", "auto"], Some("2")).unwrap();
        assert_eq!(auto.settings.segment, Segment::new(2, 4).unwrap());
        assert_eq!(auto.settings.connections.get(), 16);
        let alone = with_env(&[], None).unwrap();
        assert_eq!(alone.settings.segment, Segment::WHOLE);
        assert!(!alone.label.is_empty(), "the host name by default");
        let err = |argv: &[&str], index| format!("{:#}", with_env(argv, index).unwrap_err());
        assert!(err(&["--clients", "3"], None).contains("needs --segment"));
        assert!(err(&["--clients", "3", "--segment", "3"], None).contains("not below --clients 3"));
        assert!(err(&["--clients", "3", "--segment", "auto"], None).contains("JOB_COMPLETION_INDEX is not set"));
        assert!(err(&["--clients", "3", "--segment", "auto"], Some("x")).contains("'x' is not an index"));
        assert!(err(&["--clients", "3", "--segment", "auto"], Some("5")).contains("=5 is not below"));
        assert!(err(&["--clients", "300", "--segment", "0", "--connections", "256"], None).contains("exceeds"));
        assert!(err(&["--segment", "-1"], None).contains("'-1'"));
    }

    #[test]
    fn a_start_barrier_in_the_past_or_far_ahead_is_refused_before_anything_runs() {
        let now_s = crate::measure::unix_ms_now() / 1000;
        let err = |at: u64| format!("{:#}", with_env(&["--start-at", &at.to_string()], None).unwrap_err());
        assert!(err(now_s - 5).contains("missed the start barrier by"), "{}", err(now_s - 5));
        assert!(err(now_s + 7200).contains("ahead"), "{}", err(now_s + 7200));
        let plan = with_env(&["--start-at", &(now_s + 60).to_string(), "--label", "pod-1"], None).unwrap();
        assert_eq!(plan.barrier.map(|b| b.at_unix_ms), Some((now_s + 60) * 1000));
        assert_eq!(plan.label, "pod-1");
    }
}

#[cfg(test)]
mod request_tests {
    use std::num::NonZeroU64;
    use std::time::Duration;

    use super::super::{Commands, parsed};
    use crate::runner::LoadPlan;

    fn load(argv: &[&str]) -> anyhow::Result<LoadPlan> {
        let Commands::Load(args) = parsed(&[&["load", "http://127.0.0.1:8080/api"], argv].concat())? else {
            unreachable!()
        };
        args.plan()
    }

    fn request_text(plan: &LoadPlan) -> String {
        String::from_utf8(plan.target.request_bytes()).unwrap()
    }

    #[test]
    fn method_headers_and_body_reach_the_request_bytes() {
        let plan = load(&["-m", "POST", "-H", "Authorization: Bearer x", "-H", "X-B:2", "--body", "-a b"]).unwrap();
        assert_eq!(
            request_text(&plan),
            "POST /api HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer x\r\nX-B: 2\r\nContent-Length: 4\r\n\r\n-a b"
        );
        let file = std::env::temp_dir().join(format!("loadapi-body-{}.json", std::process::id()));
        std::fs::write(&file, b"{\"k\":1}\n").unwrap();
        let path = file.to_str().unwrap();
        for argv in [&["--body", &format!("@{path}")][..], &["-D", path], &["--body-file", path]] {
            let plan = load(argv).unwrap();
            assert!(request_text(&plan).ends_with("Content-Length: 8\r\n\r\n{\"k\":1}\n"), "{argv:?}");
            assert_eq!(plan.target.request.method(), "GET", "a body alone keeps GET, as oha and hey");
        }
        std::fs::remove_file(&file).unwrap();
        assert_eq!(load(&[]).unwrap().target.request, crate::engine::Request::get());
    }

    #[test]
    fn requests_and_z_are_parsed_and_dealt_to_the_clients() {
        assert_eq!(load(&["-n", "500"]).unwrap().settings.requests, NonZeroU64::new(500));
        assert_eq!(load(&[]).unwrap().settings.requests, None);
        let z = load(&["-z", "3s"]).unwrap().settings.timing;
        assert_eq!(z.duration(), Duration::from_secs(3));
        assert_eq!(z, load(&["-d", "3s"]).unwrap().settings.timing);
        let shares: Vec<u64> = (0..3)
            .map(|i| {
                let argv = ["-n", "500", "--clients", "3", "--segment", &i.to_string()];
                load(&argv).unwrap().settings.requests.unwrap().get()
            })
            .collect();
        assert_eq!(shares, [167, 167, 166]);
    }

    #[test]
    fn bad_requests_are_refused_with_the_reason() {
        let err = |argv: &[&str]| format!("{:#}", load(argv).unwrap_err());
        assert!(err(&["-m", "GET /x"]).contains("'GET /x' is not an HTTP method"));
        assert!(err(&["-H", "Authorization"]).contains("has no colon"));
        assert!(err(&["-H", "Content-Length: 9"]).contains("written by the client"));
        assert!(err(&["--body", "@/nonexistent/body"]).contains("cannot read the body file /nonexistent/body"));
        assert!(err(&["-D", "/nonexistent/body"]).contains("cannot read the body file"));
        assert!(err(&["-n", "0"]).contains("'0' is not a number of requests"));
        assert!(err(&["-n", "5", "-R", "100"]).contains("-n ends a closed loop"));
        assert!(err(&["-n", "2", "--clients", "3", "--segment", "0"]).contains("below --clients 3"));
        assert!(err(&["--body", "a", "-D", "/etc/hostname"]).contains("cannot be used with"));
    }
}
