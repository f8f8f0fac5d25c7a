//! Flag groups several subcommands share, and the parsers of flag values.
//! Values are parsed strictly and the original text is quoted in errors.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};

use crate::engine::{MAX_DURATION, MAX_LATENCY_US, MIN_WINDOW, Rate, Slicing, Timing, TimingError};
use crate::measure::{Barrier, unix_ms_now};
use crate::measure::{CallGraph, DEFAULT_FREQUENCY_HZ, Sampling};
use crate::model::Framework;
use crate::runner::Linger;
use crate::sys::CpuList;

/// The routes `ab` and `count` measure by default: the floor, the devices and the state.
pub(super) const DEFAULT_ROUTES: [&str; 6] =
    ["/plaintext", "/api/devices", "/api/devices/preserialized", "/api/devices/cached", "/state/fat", "/state/arc"];

/// `--routes` of the commands that count: paths of the route table (not
/// `/healthz`), each once, in order; without the flag, [`DEFAULT_ROUTES`].
///
/// # Errors
/// A path that is not a route of the table.
pub(super) fn counted_routes(routes: Option<Vec<String>>) -> anyhow::Result<Vec<&'static common::Route>> {
    let paths = routes.unwrap_or_else(|| DEFAULT_ROUTES.iter().map(|p| (*p).to_owned()).collect());
    let mut counted = Vec::new();
    for path in &paths {
        let route = common::Route::by_path(path)
            .filter(|r| r.path != common::RouteId::Healthz.path())
            .with_context(|| format!("--routes {path} is not a route of the table"))?;
        if !counted.contains(&route) {
            counted.push(route);
        }
    }
    Ok(counted)
}

/// Every framework, as `--frameworks` takes them (checked against [`Framework::ALL`] by a test).
const ALL_FRAMEWORKS: &str = "actix,axum,rocket";

/// `--frameworks`, as the suite, `ab` and `count` take it: every framework by default.
#[derive(Debug, Clone, Args)]
pub struct FrameworksArg {
    /// Frameworks to measure, comma-separated.
    #[arg(help_heading = "What to measure", long, value_enum, value_delimiter = ',', default_value = ALL_FRAMEWORKS)]
    pub frameworks: Vec<Framework>,
}

/// Where the server (or `calibrate`'s responder) and the client run.
#[derive(Debug, Clone, Args)]
pub struct CpuArgs {
    /// CPUs the server is pinned to, e.g. 0 or 0-1; server workers = their count.
    #[arg(long, default_value = "0")]
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to, e.g. 1 or 2-3; engine threads = their count.
    #[arg(long, default_value = "1")]
    pub client_cpus: CpuList,
}

impl CpuArgs {
    /// Checks that this process may use both lists.
    ///
    /// # Errors
    /// A CPU outside this process's affinity, named with its flag.
    pub fn check(&self) -> anyhow::Result<()> {
        self.server_cpus.check_available().context("--server-cpus")?;
        self.client_cpus.check_available().context("--client-cpus")
    }

    /// Engine threads: one per client CPU.
    pub fn client_threads(&self) -> NonZeroUsize {
        NonZeroUsize::new(self.client_cpus.len()).unwrap_or(NonZeroUsize::MIN)
    }
}

/// Where results go.
#[derive(Debug, Clone, Args)]
pub struct OutArgs {
    /// Folder results are written under (made if missing).
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
}

impl OutArgs {
    /// The folder, made if missing and checked writable before anything runs.
    ///
    /// # Errors
    /// A folder that cannot be made or written in ([`crate::sys::Unwritable`]).
    pub fn checked(&self) -> anyhow::Result<PathBuf> {
        crate::sys::prepare_folder("--out", &self.out)?;
        Ok(self.out.clone())
    }
}

/// `--json PATH` checked before anything runs ([`crate::sys::prepare_file`]):
/// `-` (stdout) as it is.
///
/// # Errors
/// A place that cannot be written, naming the flag.
pub(super) fn checked_json(json: Option<PathBuf>) -> anyhow::Result<Option<PathBuf>> {
    if let Some(path) = json.as_deref().filter(|p| p.as_os_str() != "-") {
        crate::sys::prepare_file("--json", path)?;
    }
    Ok(json)
}

/// What a command that starts the workspace's servers shares: where they and
/// the client run, where the run folders go, whether cargo builds first.
#[derive(Debug, Clone, Args)]
pub struct ServedArgs {
    /// Where the servers and the client run.
    #[command(flatten)]
    pub cpus: CpuArgs,
    /// Where the run folders go.
    #[command(flatten)]
    pub out: OutArgs,
    /// Use the binaries already built (`ab`: under target/ab/) instead of running cargo build first.
    #[arg(long)]
    pub no_build: bool,
}

/// How perf walks the sampled stacks (`--call-graph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CallGraphChoice {
    /// DWARF call frame information over 64 KiB of stack per sample: stacks reach their
    /// thread entry through the C library; heavier to record and to fold.
    Dwarf,
    /// Frame pointers: light, but stacks sampled in glibc (send, recv, malloc) are cut there.
    Fp,
}

/// How perf samples the servers: `--call-graph`, `--perf-frequency-hz`.
#[derive(Debug, Clone, Args)]
pub struct PerfArgs {
    /// How the profiler walks the stacks (docs/PROFILING.md gives what each costs and cuts).
    #[arg(long, value_enum, default_value_t = CallGraphChoice::Dwarf)]
    pub call_graph: CallGraphChoice,
    /// Samples per second of the server's CPU time (fewer cost the server less and give the
    /// flame graphs fewer samples).
    #[arg(long, default_value_t = DEFAULT_FREQUENCY_HZ, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub perf_frequency_hz: u32,
}

impl PerfArgs {
    /// The sampling these flags ask for, of a build of `profile` (inlined
    /// frames resolved but in the `dev` build, which inlines nothing of ours).
    pub fn sampling(&self, profile: crate::model::Profile) -> Sampling {
        Sampling {
            call_graph: self.call_graph.into(),
            frequency_hz: self.perf_frequency_hz,
            inline: profile != crate::model::Profile::Dev,
        }
    }
}

impl From<CallGraphChoice> for CallGraph {
    fn from(choice: CallGraphChoice) -> Self {
        match choice {
            CallGraphChoice::Dwarf => Self::Dwarf,
            CallGraphChoice::Fp => Self::FramePointers,
        }
    }
}

/// Warm-up, measured duration and window of `load` and `watch`.
#[derive(Debug, Clone, Args)]
pub struct TimingArgs {
    /// Measured duration (a whole number of windows), e.g. 10s (-z as oha has it).
    #[arg(short = 'd', visible_short_alias = 'z', long, default_value = "10s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub duration: Duration,
    /// Discarded warm-up before the first window, e.g. 2s (0s allowed).
    #[arg(long, default_value = "2s", value_parser = duration, allow_hyphen_values = true)]
    pub warmup: Duration,
    /// Length of one counting window, e.g. 1s.
    #[arg(long, default_value = "1s", value_parser = positive_duration, allow_hyphen_values = true)]
    pub window: Duration,
}

impl TimingArgs {
    /// The checked timing.
    ///
    /// # Errors
    /// See [`timing`].
    pub fn timing(&self) -> anyhow::Result<Timing> {
        timing(self.warmup, self.duration, self.window)
    }
}

/// A start shared by several clients (and `watch` on the server's host).
#[derive(Debug, Clone, Args)]
pub struct StartArgs {
    /// Wait until this realtime instant (for `load`: after preflight) and start then: RFC 3339 in UTC
    /// (2026-12-01T10:00:00Z) or Unix seconds (1796119200 or 1796119200.250). Give every client of one
    /// load (and `watch`) the same; their clocks must agree (NTP). A step of the realtime clock while
    /// waiting (beyond 50 ms of the monotonic clock) measures nothing and exits 2.
    #[arg(long, value_parser = unix_ms)]
    pub start_at: Option<u64>,
    /// How late a client may reach --start-at and still start; later, it measures nothing and exits 2.
    #[arg(long, default_value = "100ms", value_parser = duration, requires = "start_at")]
    pub start_tolerance: Duration,
}

impl StartArgs {
    /// The barrier, checked against the clock now: not missed yet, not more
    /// than an hour ahead.
    ///
    /// # Errors
    /// A barrier already missed or too far ahead.
    pub fn barrier(&self) -> anyhow::Result<Option<Barrier>> {
        let Some(at_unix_ms) = self.start_at else { return Ok(None) };
        let barrier = Barrier { at_unix_ms, tolerance: self.start_tolerance };
        barrier.check(unix_ms_now()).context("--start-at")?;
        Ok(Some(barrier))
    }
}

/// The live metrics endpoint of `load` and `watch`, and how long the
/// process stays up after its run.
#[derive(Debug, Clone, Args)]
pub struct MetricsArgs {
    /// Serve live Prometheus metrics (OpenMetrics text) on http://ADDR/metrics, and /ready (200 once
    /// preflight has passed), e.g. 127.0.0.1:9464 (port 0: any free port; the address is printed on
    /// stderr). In a pod, 0.0.0.0:9464; `[::1]:9464` and `localhost:9464` (127.0.0.1) too.
    #[arg(long, value_name = "ADDR", value_parser = common::address::listen_addr)]
    pub metrics_addr: Option<SocketAddr>,
    /// After the run and its output, stay up this long (serving --metrics-addr, so the last values
    /// get scraped), e.g. 15s, or `forever` (until stopped: a sidecar that must not exit).
    #[arg(long, visible_alias = "metrics-linger", default_value = "0s", value_parser = linger)]
    pub linger: Linger,
}

fn linger(text: &str) -> Result<Linger, String> {
    if text.trim() == "forever" {
        return Ok(Linger::Forever);
    }
    duration(text).map(Linger::For).map_err(|e| format!("{e}, or forever"))
}

/// An instant as milliseconds since the Unix epoch: RFC 3339 in UTC
/// (`2026-12-01T10:00:00Z`, fractions allowed) or Unix seconds with at most
/// three decimals (`1796119200.25`).
pub(super) fn unix_ms(text: &str) -> Result<u64, String> {
    let bad = || {
        format!("'{text}' is not an instant such as 2026-12-01T10:00:00Z (RFC 3339, UTC) or 1796119200 (Unix seconds)")
    };
    let t = text.trim();
    if t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let (whole, frac) = t.split_once('.').unwrap_or((t, ""));
        if whole.is_empty() || frac.len() > 3 || frac.contains('.') {
            return Err(bad());
        }
        let s: u64 = whole.parse().map_err(|_| bad())?;
        let ms: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<3}").parse().map_err(|_| bad())? };
        return s.checked_mul(1000).and_then(|v| v.checked_add(ms)).ok_or_else(bad);
    }
    let at = humantime::parse_rfc3339(t).map_err(|_| bad())?;
    let since = at.duration_since(std::time::UNIX_EPOCH).map_err(|_| bad())?;
    u64::try_from(since.as_millis()).map_err(|_| bad())
}

/// A percentage such as `2` or `2.5%`.
pub(super) fn percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(p),
        _ => Err(format!("'{text}' is not a percentage such as 2 or 2.5")),
    }
}

/// `--load-percent`: a share of the baseline's closed-loop rate, above 0
/// and at most 100 %.
pub(super) fn load_percent(text: &str) -> Result<f64, String> {
    match percent(text)? {
        p if p > 0.0 && p <= 100.0 => Ok(p),
        _ => Err(format!("'{text}' must be above 0 and at most 100 (a share of the baseline's closed-loop rate)")),
    }
}

/// A duration such as `10s` or `500ms` (zero allowed). A number without
/// a unit is refused with our example alone (humantime's would repeat it).
pub(super) fn duration(text: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(text).map_err(|e| match e {
        humantime::DurationError::UnknownUnit { unit, .. } if unit.is_empty() => {
            format!("'{text}' is not a duration such as 10s or 500ms: no unit")
        }
        e => format!("'{text}' is not a duration such as 10s or 500ms: {e}"),
    })?;
    if d > MAX_DURATION {
        return Err(format!("'{text}' is longer than {}", humantime::format_duration(MAX_DURATION)));
    }
    Ok(d)
}

/// A slice of pairing by slices: a window of the engine, at least
/// [`MIN_WINDOW`].
pub(super) fn slice(text: &str) -> Result<Duration, String> {
    let d = duration(text)?;
    if d < MIN_WINDOW {
        return Err(format!("'{text}' is shorter than a slice may be ({})", humantime::format_duration(MIN_WINDOW)));
    }
    Ok(d)
}

/// A duration longer than zero.
pub(super) fn positive_duration(text: &str) -> Result<Duration, String> {
    let d = duration(text)?;
    if d.is_zero() { Err(format!("'{text}' must be longer than zero")) } else { Ok(d) }
}

/// A request timeout: at least 1 ms (the loop's timer), at most the
/// latency histogram's top ([`MAX_LATENCY_US`], 60 s).
pub(super) fn timeout(text: &str) -> Result<Duration, String> {
    let d = duration(text)?;
    let top = Duration::from_micros(MAX_LATENCY_US);
    if d < Duration::from_millis(1) || d > top {
        Err(format!("'{text}' is not a timeout from 1ms to {}", humantime::format_duration(top)))
    } else {
        Ok(d)
    }
}

/// An open-loop rate, requests per second.
pub(super) fn rate(text: &str) -> Result<Rate, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .and_then(Rate::new)
        .ok_or_else(|| format!("'{text}' is not a rate in requests per second such as 20000 (above 0, at most 1e9)"))
}

/// The timing of a run, checked once (see [`Timing::new`]): `--window`
/// must divide `--duration`, within the engine's bounds.
///
/// # Errors
/// The refusal, naming the flags.
pub(super) fn timing(warmup: Duration, duration: Duration, window: Duration) -> anyhow::Result<Timing> {
    let text = |d: Duration| humantime::format_duration(d).to_string();
    Timing::new(warmup, duration, window).map_err(|e| match e {
        TimingError::NotWholeWindows { .. } => {
            anyhow::anyhow!("--duration {} is not a whole number of --window {}", text(duration), text(window))
        }
        TimingError::WindowTooShort { .. } => anyhow::anyhow!("--window {}: {e}", text(window)),
        TimingError::TooManyWindows { .. } => {
            anyhow::anyhow!("--duration {} in --window {}: {e}", text(duration), text(window))
        }
        TimingError::TooLong { .. } => anyhow::anyhow!("{e}"),
    })
}

/// Checks, before anything is built or run, that `variants` variants
/// alternating in slices of `slice` (blocks `0 1 … n n … 1 0`), each getting
/// `own` of its own time after `warmup`, make a timing the engine takes.
///
/// # Errors
/// The timing's refusal, naming `--duration` and `--slice`.
pub(super) fn sliced_timing(warmup: Duration, own: Duration, slice: Duration, variants: usize) -> anyhow::Result<()> {
    let text = |d: Duration| humantime::format_duration(d).to_string();
    Slicing::new(variants, Slicing::mirrored_block(variants, false))
        .and_then(|s| s.timing(warmup, own, slice))
        .map(drop)
        .map_err(|e| anyhow::anyhow!("--duration {} in --slice {}: {e}", text(own), text(slice)))
}

/// A count the parser already kept at 1 or more.
pub(super) fn nonzero(n: u32) -> NonZeroUsize {
    NonZeroUsize::new(n as usize).unwrap_or(NonZeroUsize::MIN)
}

/// `on` or `off`, as a flag's value.
pub(super) fn on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{text}' is not on or off")),
    }
}

/// `items` in their first order, each once (a flag's list given twice over).
pub(super) fn dedup<T: PartialEq + Copy>(items: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(items.len());
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// `--cmd NAME=COMMAND` flags (`count`, `memory`) as servers, in order.
///
/// # Errors
/// A flag without a name or without `{addr}` in its command; two of one name.
pub(super) fn command_servers(flags: &[String]) -> anyhow::Result<Vec<crate::suite::CountedServer>> {
    let mut servers: Vec<crate::suite::CountedServer> = Vec::new();
    for flag in flags {
        let (name, line) = flag
            .split_once('=')
            .filter(|(n, c)| !n.trim().is_empty() && c.contains("{addr}"))
            .with_context(|| format!("--cmd {flag}: expected NAME=COMMAND with {{addr}} in the command"))?;
        anyhow::ensure!(!servers.iter().any(|s| s.name == name.trim()), "--cmd {name}: two servers of one name");
        servers.push(crate::suite::CountedServer {
            name: name.trim().to_owned(),
            command: line.trim().to_owned(),
            framework: None,
            middleware: None,
            filler_routes: 0,
        });
    }
    Ok(servers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_frameworks_default_is_every_framework_in_order() {
        let names: Vec<&str> = Framework::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(ALL_FRAMEWORKS, names.join(","));
    }

    #[test]
    fn durations_slices_and_timeouts_have_bounds() {
        assert_eq!(duration("24h"), Ok(Duration::from_secs(86_400)));
        assert_eq!(duration("25h").unwrap_err(), "'25h' is longer than 1day");
        assert_eq!(duration("10").unwrap_err(), "'10' is not a duration such as 10s or 500ms: no unit");
        assert!(
            duration("10sex")
                .unwrap_err()
                .starts_with("'10sex' is not a duration such as 10s or 500ms: unknown time unit \"sex\"")
        );
        assert_eq!(slice("1ms"), Ok(Duration::from_millis(1)));
        assert!(slice("999us").unwrap_err().contains("shorter than a slice may be (1ms)"));
        assert!(slice("0s").is_err());
        assert_eq!(timeout("60s"), Ok(Duration::from_secs(60)));
        assert!(timeout("61s").unwrap_err().contains("from 1ms to 1m"));
        assert!(timeout("999us").is_err());
        let err = timing(Duration::ZERO, Duration::from_secs(3), Duration::from_nanos(1)).unwrap_err();
        assert_eq!(err.to_string(), "--window 1ns: a window of 1ns is shorter than 1ms");
        let err = timing(Duration::ZERO, Duration::from_secs(3), Duration::from_micros(1)).unwrap_err();
        assert_eq!(err.to_string(), "--window 1us: a window of 1us is shorter than 1ms");
        assert!(sliced_timing(Duration::ZERO, Duration::from_secs(3), Duration::from_millis(250), 3).is_ok());
        let err = sliced_timing(Duration::ZERO, Duration::from_secs(40), Duration::from_millis(1), 3).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--duration 40s in --slice 1ms: 120000 windows are more than 100000: make the window longer"
        );
        let err = timing(Duration::ZERO, Duration::from_secs(200), Duration::from_millis(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--duration 3m 20s in --window 1ms: 200000 windows are more than 100000: make the window longer"
        );
    }

    #[test]
    fn linger_is_a_duration_or_forever() {
        assert_eq!(linger("15s"), Ok(Linger::For(Duration::from_secs(15))));
        assert_eq!(linger("forever"), Ok(Linger::Forever));
        assert!(linger("always").unwrap_err().contains("or forever"));
    }

    #[test]
    fn instants_parse_strictly_to_milliseconds() {
        assert_eq!(unix_ms("2026-12-01T10:00:00Z"), Ok(1_796_119_200_000));
        assert_eq!(unix_ms("2026-12-01T10:00:00.250Z"), Ok(1_796_119_200_250));
        assert_eq!(unix_ms("1796119200"), Ok(1_796_119_200_000));
        assert_eq!(unix_ms("1796119200.25"), Ok(1_796_119_200_250));
        for bad in ["", ".5", "1.2345", "1.2.3", "-5", "2026-12-01", "2026-12-01T10:00:00+01:00", "tomorrow"] {
            let err = unix_ms(bad).unwrap_err();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }
}
