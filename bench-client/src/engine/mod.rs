//! The load loop: HTTP/1.1 or HTTP/2 over keep-alive connections, every
//! response verified, in one of two modes of the same loop: closed loop (each
//! connection keeps `pipeline` requests outstanding, the next written as soon
//! as a response completes) or open loop (`--rate`: requests are due on a
//! fixed schedule and latency is measured from the time each was due).
//!
//! Design: one engine thread per client CPU, each with its own `mio` event
//! loop (epoll, edge-triggered) over the connections it owns; nothing is
//! shared between threads until the final merge. The request is pre-built
//! bytes; responses are framed by the target's [`Protocol`] (`wire/`:
//! HTTP/1.1 over `httparse`, or HTTP/2's session of each connection) straight
//! from the connection's read buffer and the body is compared with the
//! expected bytes in place.
//! A connection is registered once for both readiness kinds, so the common
//! case costs one `read` and one `write` per request; wrk's `ae` loop also
//! arms and disarms write interest around every request (two `epoll_ctl`
//! calls, wrk `src/wrk.c`), which is the main reason this loop needs less CPU
//! per request. Timeouts, connect retries and the open-loop schedule are
//! handled by the loop's timer, never on the per-request path.
//!
//! Accounting: a request belongs to the window in which its response
//! completed; responses completing during the warm-up are counted apart; a
//! request whose response has not completed by the deadline (or completes
//! after it) is reported as in flight, never as a success.
//!
//! Open loop, after wrk2 (giltene/wrk2, "coordinated omission" in its
//! README): request k of the run is due at `start + k / rate`, the requests
//! dealt to the clients of a load split over several ([`Segment`]) and
//! within a client to its engine threads, in turn (`schedule.rs`); a request
//! that finds no free connection waits, and its latency still counts from
//! when it was due (corrected), while the latency from the actual write is
//! kept apart (uncorrected). Requests written later than
//! [`LATE_SEND_TOLERANCE`] after they were due are counted as late sends.
//!
//! The nap: between readiness events the loop polls without waiting, and
//! when nothing is ready sleeps [`LoadSettings::nap`] on its own timer, for
//! as long as events keep coming (within 1 ms). On loopback, every response
//! a server writes to a client *waiting in epoll* also costs the server the
//! wake-up of the client's thread (an inter-processor interrupt, a VM exit
//! on a virtual machine), work a server writing to a network card never does
//! and that a busy client (wrk is busy nearly all the time) rarely causes. A
//! napping client is not waiting in epoll, so the server's writes only mark
//! its connections ready. The price: a response may wait up to one nap
//! before it is read and timed. Zero blocks in `epoll_wait` at once. The
//! open loop does not nap between events by default, but `epoll_wait`
//! sleeps in whole milliseconds, so once the next request is due within one
//! it naps at most 50 µs at a time (`SCHEDULE_NAP`): requests are written within
//! about 50 µs of when they are due, not up to a millisecond late (which
//! would read as latency: at 3,000 requests/s to `/plaintext` of a pinned
//! release axum, a median of 620 µs where it now reads 92 µs).
//!
//! This layer is the bottom of the client: it knows sockets, HTTP/1.1 and
//! windows, and nothing of suites, files, reports or the processes it loads
//! (CPU sampling and profiling wrap it from [`crate::measure`]). It imports
//! nothing else of the crate.

mod conn;
mod counters;
mod exchange;
mod hdr;
mod live;
mod schedule;
mod shape;
mod slicing;
mod stats;
mod timing;
mod tls;
mod wire;
mod worker;

use std::net::SocketAddr;
use std::num::{NonZeroU64, NonZeroUsize};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

pub use self::counters::{COUNTERS, Clean, Counter, Counts, Metric, Scope, Spec};
pub use self::exchange::{Exchange, ExchangeError, Reply};
pub use self::hdr::{EncodedHistogram, HdrError};
pub use self::live::{LIVE_LATENCY_BUCKETS_S, Live, LiveTotals};
pub use self::schedule::Segment;
pub use self::shape::{Misshapen, Shape};
pub use self::slicing::{Slicing, SlicingError};
pub use self::stats::{
    FailureKind, Failures, KINDS, Kind, LATENCY_SIGNIFICANT_DIGITS, LatencySummary, MAX_LATENCY_US, RunStats, Window,
    latency_histogram,
};
pub use self::timing::{MAX_DURATION, MAX_WINDOWS, MIN_WINDOW, Rate, Timing, TimingError};
pub use self::tls::{TlsClient, Trust};
pub use self::wire::{FrameError, Framed, Protocol, Request, RequestError, http1, http2};
use self::worker::{Finished, Times, Worker};

/// Pause after a failed connection attempt before the next, so a refused
/// port is not hammered in a tight loop.
const CONNECT_BACKOFF: Duration = Duration::from_millis(10);
/// Initial size of a connection's read buffer, bytes; it doubles when one
/// response (or a pipelined batch) does not fit.
const READ_BUFFER_BYTES: usize = 4 * 1024;
/// New connections one engine thread keeps unconfirmed at once; the rest
/// wait their turn. A connection is confirmed by its first response (or, in
/// the open loop with nothing due, once established): only then has the
/// server surely accepted it. Opening thousands at once overflows the
/// server's accept backlog (128 for listeners bound by Rust's std and mio,
/// 1024 for tokio's; the kernel completes handshakes faster than a busy
/// server accepts), and a dropped SYN is sent again only after 1 s.
const UNCONFIRMED_AT_ONCE: usize = 100;
/// A new connection of a pool whose slice it is not has nothing to send
/// that a response would confirm; it counts as confirmed once established
/// this long (at the next timer scan after), time for a busy server to
/// accept it: confirming it at once let several pools' connections overflow
/// the accept backlog together (`http2` scenario: 8 pools of 64).
const ACCEPT_GRACE: Duration = Duration::from_millis(10);
/// The closed loop's nap between polls (see [`LoadSettings::nap`]).
pub const DEFAULT_NAP: Duration = Duration::from_micros(50);
/// Napping stops, and the loop blocks in `epoll_wait`, when no readiness
/// event came for this long (a stalled or idle server).
const NAP_WINDOW: Duration = Duration::from_millis(1);
/// Timer slack of an engine thread that naps, nanoseconds: Linux lets a
/// sleep overrun by the thread's slack, 50 µs by default.
const NAP_TIMER_SLACK_NS: u64 = 1_000;
/// A connection the server closes with no request outstanding, after at
/// least this long with nothing to do, was closed by its keep-alive timeout
/// (actix-web's and Rocket's default 5 s; any timeout longer than this), not
/// churned: counted as `closed_idle`, not a shortfall. A close sooner after
/// the last response is the server closing after answering: churn.
const KEEP_ALIVE_IDLE: Duration = Duration::from_millis(20);
/// `epoll_wait`'s timeout is whole milliseconds (mio rounds up): an
/// open-loop request due sooner than this is waited for in naps.
const EPOLL_GRANULARITY: Duration = Duration::from_millis(1);
/// Longest nap of the open loop while a request is due within
/// [`EPOLL_GRANULARITY`]: a request is written, and a response read, at
/// most this late on that account.
const SCHEDULE_NAP: Duration = Duration::from_micros(50);
/// Readiness events taken from the kernel per `epoll_wait`.
const EVENTS_PER_POLL: usize = 1024;
/// An open-loop request written more than this after it was due counts as a
/// late send: well beyond the loop's own jitter (a 50 µs nap, and the
/// scheduler's wake-up of a thread that slept).
pub const LATE_SEND_TOLERANCE: Duration = Duration::from_millis(2);

/// The timing and concurrency half of a load, shared by `load`, `suite`,
/// `calibrate` and `flamegraph`.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    /// Keep-alive connections held open (by this client: its share when the
    /// load is split over several, see [`Segment::share`]).
    pub connections: NonZeroUsize,
    /// Engine threads (one event loop each); connections are dealt to them
    /// round-robin.
    pub threads: NonZeroUsize,
    /// Warm-up, measured duration, window.
    pub timing: Timing,
    /// A request without a complete response after this long fails as a
    /// timeout and its connection is replaced; also the connect timeout.
    pub timeout: Duration,
    /// Requests outstanding per connection: HTTP/1.1 pipelining (1 = none),
    /// or HTTP/2's concurrent streams (`--streams`, within what the server grants).
    pub pipeline: NonZeroUsize,
    /// Open loop: requests per second due over all connections of all
    /// clients (the whole schedule; this client sends its [`Segment`] of
    /// it); `None` for the closed loop.
    pub rate: Option<Rate>,
    /// This client's slice of a load split over several clients
    /// ([`Segment::WHOLE`] when it runs alone).
    pub segment: Segment,
    /// Nap between polls (see the module doc); zero waits in `epoll_wait`.
    pub nap: Duration,
    /// Churn of the client's own: each connection is closed by the client
    /// after this many responses and opened again (a TLS connection then
    /// pays a handshake, full or resumed); `None`: keep-alive throughout.
    pub requests_per_connection: Option<NonZeroUsize>,
    /// End the run once this many requests succeeded in the measured
    /// windows (`load -n`, closed loop, one route), dealt to the engine
    /// threads with connections as the connections are; `None`: the run
    /// lasts its duration. See [`Outcome::reached`].
    pub requests: Option<NonZeroU64>,
}

impl LoadSettings {
    /// Closed-loop settings without pipelining, with the default nap.
    pub fn closed(connections: NonZeroUsize, threads: NonZeroUsize, timing: Timing, timeout: Duration) -> Self {
        Self {
            connections,
            threads,
            timing,
            timeout,
            pipeline: NonZeroUsize::MIN,
            rate: None,
            segment: Segment::WHOLE,
            nap: DEFAULT_NAP,
            requests_per_connection: None,
            requests: None,
        }
    }

    /// This client's share of the open-loop rate: the whole schedule's rate
    /// divided by the clients; `None` in the closed loop.
    pub fn rate_share_per_s(&self) -> Option<f64> {
        self.rate.map(|r| r.per_s() / f64::from(self.segment.count()))
    }
}

/// Where every request of a run goes: one URL on one address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Server address to connect to.
    pub addr: SocketAddr,
    /// `Host` header value (`host:port`).
    pub host: String,
    /// Path (and query) of the one URL every request fetches.
    pub path: String,
    /// Method, added headers and body ([`Request::get`] unless `load` says).
    pub request: Request,
    /// `https://`: the TLS client its connections share.
    pub tls: Option<TlsClient>,
    /// What its connections speak.
    pub protocol: Protocol,
}

impl Target {
    /// `path` on `addr` over plain HTTP, with `addr` as the `Host` header.
    pub fn new(addr: SocketAddr, path: &str) -> Self {
        Self {
            addr,
            host: addr.to_string(),
            path: path.to_owned(),
            request: Request::get(),
            tls: None,
            protocol: Protocol::Http1,
        }
    }

    /// The bytes of its request, as its protocol writes them (built once).
    pub fn request_bytes(&self) -> Vec<u8> {
        self.protocol.request(self.scheme(), &self.host, &self.path, &self.request)
    }

    /// This target speaking `protocol`, its TLS client (if any) offering it
    /// by ALPN.
    #[must_use]
    pub fn speaking(self, protocol: Protocol) -> Self {
        Self { protocol, tls: self.tls.map(|tls| tls.for_protocol(protocol)), ..self }
    }

    /// This target over TLS with `client`.
    #[must_use]
    pub fn with_tls(self, client: TlsClient) -> Self {
        Self { tls: Some(client), ..self }
    }

    /// Its URL's scheme.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }
}

/// One route of a load: where its requests go, and the status and exact
/// body a successful response carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteLoad {
    /// Server, `Host` and path.
    pub target: Target,
    /// The status of a successful response: 200 unless the route answers
    /// another on purpose (`--expect-status`).
    pub expected_status: u16,
    /// The exact body of a successful response.
    pub expected_body: Vec<u8>,
    /// What it carries beyond: plain, or a gzip body and headers added by
    /// middleware (checked over HTTP/1.1; the suite loads middleware over
    /// HTTP/1.1 only).
    pub shape: Shape,
}

impl RouteLoad {
    /// `target`, successful with status 200 and `body`.
    pub fn ok(target: Target, body: Vec<u8>) -> Self {
        Self { target, expected_status: 200, expected_body: body, shape: Shape::default() }
    }

    /// `route` of the table at `target`'s server: the table's request
    /// ([`Request::of_table`]), successful with status 200 and the table's body.
    pub fn of_table(target: Target, route: &common::Route) -> Self {
        let target = Target { path: route.path.to_owned(), request: Request::of_table(route.request()), ..target };
        Self::ok(target, route.expected_body())
    }
}

/// A checked description of one load run: what to fetch, what every
/// successful response carries, and how hard to push.
#[derive(Debug, Clone)]
pub struct Load {
    /// The routes: one, or with a [`Slicing`] those it alternates. When
    /// they are on more than one server, every route gets its own pool of
    /// `connections` connections to its server, and only the pool of the
    /// current slice's route sends (the others stay idle): two servers
    /// compared side by side, each loaded alone in its slices.
    pub routes: Vec<RouteLoad>,
    /// Connections, threads, timings and mode.
    pub settings: LoadSettings,
    /// The routes alternate in slices of the timing's window; `None`: one route.
    pub slicing: Option<Slicing>,
}

impl Load {
    /// A load of `route` alone.
    pub fn new(route: RouteLoad, settings: LoadSettings) -> Self {
        Self { routes: vec![route], settings, slicing: None }
    }

    /// `routes` alternating in blocks `block` of slices, each route getting
    /// `own` of its own slices of `slice` after `settings`' warm-up (the
    /// timing's window becomes the slice).
    ///
    /// # Errors
    /// A block that does not name every route ([`Slicing::new`]), or a timing
    /// out of bounds.
    pub fn sliced(
        routes: Vec<RouteLoad>,
        block: Vec<usize>,
        settings: LoadSettings,
        own: Duration,
        slice: Duration,
    ) -> Result<Self, SlicingError> {
        let slicing = Slicing::new(routes.len(), block)?;
        let timing = slicing.timing(settings.timing.warmup(), own, slice)?;
        Ok(Self { routes, settings: LoadSettings { timing, ..settings }, slicing: Some(slicing) })
    }
}

/// What [`run`] returns.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// All threads' measurements, merged (every route).
    pub stats: RunStats,
    /// With a slicing: per route, the request-level counts (windows,
    /// failures, latency, the counters of [`Scope::Request`]); the
    /// connection-level ones are in `stats` only. Empty with one route.
    pub by_route: Vec<RunStats>,
    /// Measured time actually covered (shorter than planned when stopped).
    pub measured: Duration,
    /// One of the stop flags ended the run before its deadline.
    pub stopped: bool,
    /// [`LoadSettings::requests`] successful requests were counted before
    /// the deadline: every thread ended once its share succeeded, writing
    /// no request beyond it (none left in flight). `measured` ends with the
    /// last thread; the windows after it are empty, its own is partial.
    pub reached: bool,
}

/// Why [`run`] could not run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An engine thread or its event loop could not be started.
    #[error("cannot start the load engine: {0}")]
    Setup(#[source] std::io::Error),
    /// `epoll_wait` failed during the run.
    #[error("epoll_wait failed: {0}")]
    Poll(#[source] std::io::Error),
    /// An engine thread panicked.
    #[error("an engine thread panicked")]
    Panicked,
}

/// Runs `load` from `start` (the warm-up begins then, the first window
/// `warmup` later; pass `Instant::now()` or an instant a start barrier
/// chose) until its deadline, or until one of the `stop` flags becomes true
/// (at the next loop turn; the outcome says so).
///
/// # Errors
/// [`Error`]: a thread or event loop that cannot start, a failing `epoll_wait`.
pub fn run(load: &Load, start: Instant, stop: &[&AtomicBool]) -> Result<Outcome, Error> {
    run_live(load, start, stop, None)
}

/// [`run`], with every engine thread publishing its totals into `live` on
/// its timer (see [`Live`]) for a metrics endpoint to read during the run.
///
/// # Errors
/// As [`run`].
pub fn run_live(load: &Load, start: Instant, stop: &[&AtomicBool], live: Option<&Live>) -> Result<Outcome, Error> {
    let s = &load.settings;
    let measure_start = start + s.timing.warmup();
    let end = measure_start + s.timing.duration();
    let threads = s.threads.get();
    let results: Vec<Result<Finished, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let connections = (s.connections.get() + threads - 1 - t) / threads;
                // The threads with connections share this client's segment
                // of the open-loop schedule in turn (schedule.rs).
                let stream = s.segment.stream(t as u64, threads.min(s.connections.get()) as u64);
                let quota = s.requests.map(|n| {
                    let (n, k) = (n.get(), threads.min(s.connections.get()) as u64);
                    n / k + u64::from((t as u64) < n % k)
                });
                std::thread::Builder::new().name(format!("load-{t}")).spawn_scoped(scope, move || {
                    let times = Times { start, measure_start, end };
                    Worker::new(load, connections, stream, times, live.map(|l| l.slot(t)))?.run(stop, quota)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or(Err(Error::Panicked)),
                Err(e) => Err(Error::Setup(e)),
            })
            .collect()
    });
    let mut merged = RunStats::new(s.timing.windows(), s.rate.is_some());
    let mut by_route: Vec<RunStats> = Vec::new();
    let mut stopped = false;
    let mut reached = s.requests.is_some();
    let mut ended = measure_start;
    for r in results {
        let finished = r?;
        merged += &finished.stats;
        if by_route.is_empty() {
            by_route = finished.by_route;
        } else {
            for (total, more) in by_route.iter_mut().zip(&finished.by_route) {
                *total += more;
            }
        }
        stopped |= finished.stopped;
        reached &= finished.reached;
        ended = ended.max(finished.ended);
    }
    let measured =
        if stopped || reached { ended.min(end).saturating_duration_since(measure_start) } else { s.timing.duration() };
    Ok(Outcome { stats: merged, by_route, measured, stopped, reached })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_outside_the_bounds_are_refused_by_kind() {
        let (ms, s) = (Duration::from_millis(1), Duration::from_secs(1));
        assert!(Timing::new(s, 3 * s, s).is_ok());
        assert!(Timing::new(Duration::ZERO, 100 * s, ms).is_ok(), "100,000 windows of 1 ms");
        assert!(matches!(Timing::new(s, 3 * s, Duration::from_nanos(1)), Err(TimingError::WindowTooShort { .. })));
        assert!(matches!(Timing::new(s, 3 * s, Duration::from_micros(999)), Err(TimingError::WindowTooShort { .. })));
        assert_eq!(Timing::new(s, 101 * s, ms), Err(TimingError::TooManyWindows { windows: 101_000 }));
        assert!(matches!(Timing::new(s, MAX_DURATION + s, s), Err(TimingError::TooLong { what: "the duration", .. })));
        assert!(matches!(Timing::new(MAX_DURATION + s, s, s), Err(TimingError::TooLong { what: "the warm-up", .. })));
        assert!(Timing::new(MAX_DURATION, MAX_DURATION, s).is_ok());
        assert!(matches!(Timing::new(s, 3 * s, 2 * s), Err(TimingError::NotWholeWindows { .. })));
        assert!(matches!(Timing::new(s, s, 2 * s), Err(TimingError::NotWholeWindows { .. })));
    }

    #[test]
    fn the_phase_is_the_warm_up_then_each_window_in_turn() {
        let ms = Duration::from_millis;
        let t = Timing::new(ms(500), ms(3000), ms(1000)).unwrap();
        let phases: Vec<String> = [0, 499, 500, 1499, 1500, 3499, 9000].iter().map(|&e| t.phase(ms(e))).collect();
        assert_eq!(
            phases,
            ["warm-up", "warm-up", "window 1/3", "window 1/3", "window 2/3", "window 3/3", "window 3/3"]
        );
    }
}
