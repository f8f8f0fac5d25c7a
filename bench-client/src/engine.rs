//! The load loop: HTTP/1.1 over keep-alive connections, every response
//! verified, in one of two modes of the same loop: closed loop (each
//! connection keeps `pipeline` requests outstanding, the next written as soon
//! as a response completes) or open loop (`--rate`: requests are due on a
//! fixed schedule and latency is measured from the time each was due).
//!
//! Design: one engine thread per client CPU, each with its own `mio` event
//! loop (epoll, edge-triggered) over the connections it owns; nothing is
//! shared between threads until the final merge. The request is pre-built
//! bytes; responses are framed with `httparse` straight from the connection's
//! read buffer and the body is compared with the expected bytes in place.
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
//! README): request k of a thread is due at `start + k / rate`; a request
//! that finds no free connection waits, and its latency still counts from
//! when it was due (corrected), while the latency from the actual write is
//! kept apart (uncorrected). Requests written later than
//! [`LATE_SEND_TOLERANCE`] after they were due are counted as late sends.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::cpu::{self, CpuWindows};
use crate::http::{frame_response, get_request};
use crate::stats::{FailureKind, RunStats};

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
/// server accepts), and a dropped SYN is retried only after 1 s.
const UNCONFIRMED_AT_ONCE: usize = 100;
/// The closed loop's nap between polls (see [`LoadSettings::nap`]).
pub const DEFAULT_NAP: Duration = Duration::from_micros(50);
/// Napping stops, and the loop blocks in `epoll_wait`, when no readiness
/// event came for this long (a stalled or idle server).
const NAP_WINDOW: Duration = Duration::from_millis(1);
/// Timer slack of an engine thread that naps, nanoseconds: Linux lets a
/// sleep overrun by the thread's slack, 50 µs by default.
const NAP_TIMER_SLACK_NS: u64 = 1_000;
/// Readiness events taken from the kernel per `epoll_wait`.
const EVENTS_PER_POLL: usize = 1024;
/// An open-loop request written more than this after it was due counts as a
/// late send. The loop sleeps with `epoll_wait`, whose timeout has 1 ms
/// granularity, so sends up to about 1 ms late are the schedule's own jitter.
pub const LATE_SEND_TOLERANCE: Duration = Duration::from_millis(2);

/// The timing and concurrency half of a load plan, shared by `load`,
/// `suite`, `calibrate` and `flamegraph`.
#[derive(Debug, Clone, Copy)]
pub struct LoadSettings {
    /// Keep-alive connections held open.
    pub connections: NonZeroUsize,
    /// Engine threads (one event loop each); connections are dealt to them
    /// round-robin.
    pub threads: NonZeroUsize,
    /// Discarded warm-up before the first measured window.
    pub warmup: Duration,
    /// Measured duration: a whole number of windows.
    pub duration: Duration,
    /// Length of one window.
    pub window: Duration,
    /// A request without a complete response after this long fails as a
    /// timeout and its connection is replaced; also the connect timeout.
    pub timeout: Duration,
    /// Requests outstanding per connection (HTTP/1.1 pipelining); 1 = none.
    pub pipeline: NonZeroUsize,
    /// Open loop: requests per second due over all connections; `None` for
    /// the closed loop.
    pub rate_per_s: Option<f64>,
    /// Between readiness events the loop naps on its own timer instead of
    /// waiting in `epoll_wait`: it polls without waiting, and when nothing is
    /// ready sleeps this long, for as long as events keep coming (within
    /// 1 ms). On loopback, every response a server writes to a client
    /// *waiting in epoll* also costs the server the wake-up of the client's
    /// thread (an inter-processor interrupt, a VM exit on a virtual
    /// machine), work a server writing to a network card never does and
    /// that a busy client (wrk is busy nearly all the time) rarely causes.
    /// A napping client is not waiting in epoll, so the server's writes only
    /// mark its connections ready. The price: a response may wait up to one
    /// nap before it is read and timed. Zero blocks in `epoll_wait` at once;
    /// the open loop, which sleeps until requests are due, does not nap by
    /// default. Measured side by side in the README.
    pub nap: Duration,
}

impl LoadSettings {
    /// Closed-loop settings without pipelining, with the default nap.
    pub fn closed(
        connections: NonZeroUsize,
        threads: NonZeroUsize,
        warmup: Duration,
        duration: Duration,
        window: Duration,
        timeout: Duration,
    ) -> Self {
        Self {
            connections,
            threads,
            warmup,
            duration,
            window,
            timeout,
            pipeline: NonZeroUsize::MIN,
            rate_per_s: None,
            nap: DEFAULT_NAP,
        }
    }

    /// The plan for loading `path` on `addr` (with `host` as the `Host`
    /// header), expecting `expected_body`; `server_pid` to sample.
    pub fn plan(
        &self,
        addr: SocketAddr,
        host: String,
        path: String,
        expected_body: Vec<u8>,
        server_pid: Option<u32>,
    ) -> LoadPlan {
        LoadPlan { addr, host, path, expected_body, settings: *self, server_pid }
    }
}

/// A checked description of one load run.
#[derive(Debug, Clone)]
pub struct LoadPlan {
    /// Server address to connect to.
    pub addr: SocketAddr,
    /// `Host` header value (`host:port`).
    pub host: String,
    /// Path (and query) of the one URL every request fetches.
    pub path: String,
    /// The exact body a successful response carries (with status 200).
    pub expected_body: Vec<u8>,
    /// Connections, threads, timings and mode.
    pub settings: LoadSettings,
    /// The server's pid, to sample its CPU use per window.
    pub server_pid: Option<u32>,
}

impl LoadPlan {
    /// Number of measured windows (`duration / window`).
    pub fn windows(&self) -> usize {
        usize::try_from(self.settings.duration.as_nanos() / self.settings.window.as_nanos().max(1))
            .unwrap_or(usize::MAX)
    }
}

/// What [`run`] returns.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// All threads' measurements, merged.
    pub stats: RunStats,
    /// Measured time actually covered (shorter than planned when interrupted).
    pub measured: Duration,
    /// The stop flag ended the run early.
    pub interrupted: bool,
    /// The server process (known pid) exited: the run ended at the end of
    /// the window in which that was seen.
    pub server_lost: bool,
    /// CPU use of the server and of this client per measured window.
    pub cpu: CpuWindows,
    /// Peak resident set size of this process so far, bytes (`getrusage`).
    pub client_peak_rss_bytes: u64,
}

/// Runs the load described by `plan`; returns early when `stop` becomes true
/// (marked interrupted) or when the server's pid is known and it exits
/// (marked server lost, at the end of that window).
///
/// # Errors
/// When the duration is not a whole number of windows, the rate is not a
/// positive number, an engine thread or its event loop cannot be started, or
/// `epoll_wait` fails.
pub fn run(plan: &LoadPlan, stop: &AtomicBool) -> anyhow::Result<RunOutcome> {
    let s = &plan.settings;
    anyhow::ensure!(
        !s.window.is_zero() && s.duration.as_nanos().is_multiple_of(s.window.as_nanos()) && s.duration >= s.window,
        "the measured duration must be a whole number of windows"
    );
    anyhow::ensure!(s.rate_per_s.is_none_or(|r| r.is_finite() && r > 0.0), "the rate must be a positive number");
    let start = Instant::now();
    let measure_start = start + s.warmup;
    let end = measure_start + s.duration;
    let threads = s.threads.get();
    let lost = AtomicBool::new(false);
    let cut = [stop, &lost];
    let (results, cpu): (Vec<anyhow::Result<(RunStats, bool)>>, CpuWindows) = std::thread::scope(|scope| {
        let sampler =
            scope.spawn(|| cpu::sample_windows(plan.server_pid, measure_start, s.window, plan.windows(), stop, &lost));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let connections = (s.connections.get() + threads - 1 - t) / threads;
                std::thread::Builder::new().name(format!("load-{t}")).spawn_scoped(scope, move || {
                    let times = Times { start, measure_start, end };
                    Worker::new(plan, connections, times)?.run(&cut)
                })
            })
            .collect();
        let results = handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err(anyhow::anyhow!("an engine thread panicked"))),
                Err(e) => Err(anyhow::Error::new(e).context("cannot spawn an engine thread")),
            })
            .collect();
        (results, sampler.join().unwrap_or_default())
    });
    let mut merged = RunStats::new(plan.windows(), s.rate_per_s.is_some());
    let mut cut_short = false;
    for r in results {
        let (stats, stopped) = r?;
        merged.merge(&stats);
        cut_short |= stopped;
    }
    let interrupted = cut_short && stop.load(Ordering::Relaxed);
    let server_lost = !interrupted && lost.load(Ordering::Relaxed);
    let measured =
        if cut_short { Instant::now().min(end).saturating_duration_since(measure_start) } else { s.duration };
    Ok(RunOutcome { stats: merged, measured, interrupted, server_lost, cpu, client_peak_rss_bytes: peak_rss_bytes() })
}

/// Peak resident set size of this process, bytes (0 when unknown).
pub fn peak_rss_bytes() -> u64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF)
        .map(|u| u64::try_from(u.max_rss()).unwrap_or(0) * 1024)
        .unwrap_or(0)
}

/// The three instants every thread of a run shares.
#[derive(Debug, Clone, Copy)]
struct Times {
    start: Instant,
    measure_start: Instant,
    end: Instant,
}

/// One request written and not yet settled.
#[derive(Debug, Clone, Copy)]
struct Outstanding {
    /// When it was due: the write time in the closed loop, the schedule's
    /// time in the open loop. Latency counts from here.
    due: Instant,
    /// When it was written.
    sent: Instant,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for a turn to connect (see [`UNCONFIRMED_AT_ONCE`]).
    Queued,
    /// Waiting until this instant before connecting again.
    Backoff(Instant),
    /// Connect started at this instant.
    Connecting(Instant),
    /// Established.
    Open,
}

/// One connection slot.
struct Conn {
    stream: Option<TcpStream>,
    phase: Phase,
    /// The next established connection is a reconnection.
    reconnect: bool,
    /// Read buffer; unread response bytes lie in `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Requests written (or queued to write) and not yet settled, oldest
    /// first. After a clean close they wait here for the next connection.
    outstanding: VecDeque<Outstanding>,
    /// Responses completed on the current connection.
    served: u64,
    /// Counted in [`Worker::unconfirmed`].
    unconfirmed: bool,
    /// Bytes of queued requests not yet accepted by the socket.
    unwritten: usize,
    /// Listed among the connections free to take a due open-loop request.
    listed_free: bool,
}

/// Open-loop schedule of one thread: its request k is due at
/// `start + k × interval`.
struct Schedule {
    start: Instant,
    interval_ns: u128,
    /// Index of the next request to write.
    next: u64,
}

impl Schedule {
    fn due_at(&self, k: u64) -> Instant {
        let ns = u128::from(k) * self.interval_ns;
        self.start + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// Requests due by `now` and not yet written.
    fn pending(&self, now: Instant) -> u64 {
        let since = now.saturating_duration_since(self.start).as_nanos();
        let due = u64::try_from(since / self.interval_ns + 1).unwrap_or(u64::MAX);
        due.saturating_sub(self.next)
    }
}

/// Why a connection is dropped.
enum Disconnect {
    /// The server closed a keep-alive connection between responses (after
    /// `Connection: close`, or an end of stream or reset after at least one
    /// response and before any byte of the next): a reconnection, not an
    /// error. Outstanding requests are written again, once, on the next
    /// connection (GET is idempotent; HTTP clients retry this race too) and
    /// keep their due time.
    Closed,
    /// Its outstanding requests fail with this kind.
    Failed(FailureKind),
}

/// One engine thread: its connections, its event loop, its measurements.
struct Worker<'a> {
    plan: &'a LoadPlan,
    times: Times,
    poll: Poll,
    conns: Vec<Conn>,
    /// The request repeated `pipeline` times, so any number of queued
    /// requests is one suffix of it.
    requests: Vec<u8>,
    /// Bytes of one request.
    request_len: usize,
    window_ns: u128,
    last_window: usize,
    schedule: Option<Schedule>,
    /// Open loop: connections with room for another request.
    free: Vec<usize>,
    /// Connections started and not yet confirmed (see [`UNCONFIRMED_AT_ONCE`]).
    unconfirmed: usize,
    /// This thread's share of [`UNCONFIRMED_AT_ONCE`].
    unconfirmed_budget: usize,
    /// Connections in [`Phase::Queued`], in turn order.
    queued: VecDeque<usize>,
    /// Connections whose responses completed in this batch of events; their
    /// next requests are written after the batch (see [`Worker::run`]).
    answered: Vec<usize>,
    stats: RunStats,
}

impl<'a> Worker<'a> {
    fn new(plan: &'a LoadPlan, connections: usize, times: Times) -> anyhow::Result<Self> {
        let s = &plan.settings;
        let request = get_request(&plan.host, &plan.path);
        let schedule = s.rate_per_s.map(|rate| {
            // This thread's share of the rate, by its share of the connections.
            let share = rate * connections as f64 / s.connections.get() as f64;
            Schedule { start: times.start, interval_ns: ((1e9 / share).round() as u128).max(1), next: 0 }
        });
        Ok(Self {
            plan,
            times,
            poll: Poll::new()?,
            conns: (0..connections)
                .map(|_| Conn {
                    stream: None,
                    phase: Phase::Backoff(times.start),
                    reconnect: false,
                    buf: vec![0; READ_BUFFER_BYTES],
                    start: 0,
                    end: 0,
                    outstanding: VecDeque::with_capacity(s.pipeline.get()),
                    served: 0,
                    unconfirmed: false,
                    unwritten: 0,
                    listed_free: false,
                })
                .collect(),
            requests: request.repeat(s.pipeline.get()),
            request_len: request.len(),
            window_ns: s.window.as_nanos().max(1),
            last_window: plan.windows().saturating_sub(1),
            schedule,
            free: Vec::with_capacity(connections),
            unconfirmed: 0,
            unconfirmed_budget: (UNCONFIRMED_AT_ONCE / s.threads.get()).max(1),
            queued: VecDeque::with_capacity(connections),
            answered: Vec::with_capacity(connections),
            stats: RunStats::new(plan.windows(), s.rate_per_s.is_some()),
        })
    }

    /// Runs until the deadline (returns `false`) or until one of the `stop`
    /// flags is set (returns `true`), with the thread's measurements.
    fn run(mut self, stop: &[&AtomicBool]) -> anyhow::Result<(RunStats, bool)> {
        if self.conns.is_empty() {
            return Ok((self.stats, false));
        }
        let timeout = self.plan.settings.timeout;
        let tick = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
        let mut events = Events::with_capacity(EVENTS_PER_POLL);
        for i in 0..self.conns.len() {
            self.connect(i, self.times.start);
        }
        let mut next_scan = self.times.start + tick;
        let mut last_event = self.times.start;
        let nap = self.plan.settings.nap;
        if !nap.is_zero() {
            // Best effort: with the default slack a nap only lasts longer.
            let _ = nix::sys::prctl::set_timerslack(NAP_TIMER_SLACK_NS);
        }
        let stopped = loop {
            let now = Instant::now();
            if now >= self.times.end {
                break false;
            }
            if stop.iter().any(|s| s.load(Ordering::Relaxed)) {
                break true;
            }
            if now >= next_scan {
                self.scan(now);
                next_scan = now + tick;
            }
            self.dispatch(now);
            while self.unconfirmed < self.unconfirmed_budget
                && let Some(i) = self.queued.pop_front()
            {
                self.connect(i, now);
            }
            let mut wake = next_scan.min(self.times.end);
            if let Some(s) = &self.schedule
                && !self.free.is_empty()
            {
                wake = wake.min(s.due_at(s.next));
            }
            let napping = !nap.is_zero() && now.saturating_duration_since(last_event) < NAP_WINDOW;
            let timeout = if napping { Duration::ZERO } else { wake.saturating_duration_since(now) };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout))
                && e.kind() != ErrorKind::Interrupted
            {
                return Err(anyhow::Error::new(e).context("epoll_wait failed"));
            }
            if !events.is_empty() {
                last_event = now;
            } else if napping {
                std::thread::sleep(nap.min(wake.saturating_duration_since(now)));
            }
            for event in &events {
                let i = event.token().0;
                match self.conns[i].phase {
                    Phase::Connecting(_) => self.on_connect(i),
                    Phase::Open => {
                        if event.is_readable() || event.is_read_closed() || event.is_error() {
                            self.on_readable(i, event.is_read_closed() || event.is_error());
                        }
                        if event.is_writable() && self.conns[i].unwritten > 0 {
                            self.flush(i);
                        }
                    }
                    Phase::Backoff(_) | Phase::Queued => {}
                }
            }
            // The next requests of every connection answered in this batch
            // go out together, after all its responses were read: the server
            // finds them waiting at its next wake-up, as with wrk (whose
            // writes wait for the next loop turn).
            if !self.answered.is_empty() {
                let now = Instant::now();
                for k in 0..self.answered.len() {
                    let i = self.answered[k];
                    if matches!(self.conns[i].phase, Phase::Open) {
                        self.refill(i, now);
                    }
                }
                self.answered.clear();
            }
        };
        let stopped_at = Instant::now().min(self.times.end);
        self.stats.in_flight_at_deadline = self.conns.iter().map(|c| c.outstanding.len() as u64).sum();
        if let Some(s) = &self.schedule {
            self.stats.unsent_at_deadline += s.pending(stopped_at);
        }
        Ok((self.stats, stopped))
    }

    /// The window a completion at `at` belongs to; `None` during the warm-up.
    fn window_of(&self, at: Instant) -> Option<usize> {
        let since = at.checked_duration_since(self.times.measure_start)?;
        Some(usize::try_from(since.as_nanos() / self.window_ns).unwrap_or(usize::MAX).min(self.last_window))
    }

    /// Starts connecting slot `i`, or queues it while enough new connections
    /// are unconfirmed.
    fn connect(&mut self, i: usize, now: Instant) {
        self.confirm(i);
        if self.unconfirmed >= self.unconfirmed_budget {
            self.conns[i].phase = Phase::Queued;
            self.queued.push_back(i);
            return;
        }
        match TcpStream::connect(self.plan.addr) {
            Ok(mut stream) => {
                match self.poll.registry().register(&mut stream, Token(i), Interest::READABLE | Interest::WRITABLE) {
                    Ok(()) => {
                        let c = &mut self.conns[i];
                        c.stream = Some(stream);
                        c.phase = Phase::Connecting(now);
                        c.unconfirmed = true;
                        self.unconfirmed += 1;
                    }
                    Err(_) => self.connect_failed(i, now),
                }
            }
            Err(_) => self.connect_failed(i, now),
        }
    }

    /// A connection attempt failed: counted, retried after a pause; requests
    /// waiting for it (from a closed connection) fail as `io`.
    fn connect_failed(&mut self, i: usize, now: Instant) {
        self.confirm(i);
        if now >= self.times.end {
            return;
        }
        self.stats.record_failure(None, FailureKind::Connect);
        self.fail_outstanding(i, now, FailureKind::Io);
        let c = &mut self.conns[i];
        c.unwritten = 0;
        c.stream = None;
        c.phase = Phase::Backoff(now + CONNECT_BACKOFF);
    }

    /// Settles every request outstanding on connection `i` as a failure of
    /// `kind` in the window of `now` (during the warm-up: as warm-up).
    fn fail_outstanding(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let window = self.window_of(now);
        for _ in self.conns[i].outstanding.drain(..) {
            match window {
                None => self.stats.warmup_completed += 1,
                Some(w) => self.stats.record_failure(Some(w), kind),
            }
        }
    }

    /// Counts connection `i` as confirmed, or as no longer pending at all.
    fn confirm(&mut self, i: usize) {
        if std::mem::take(&mut self.conns[i].unconfirmed) {
            self.unconfirmed -= 1;
        }
    }

    /// A connecting socket became ready: established, or failed.
    fn on_connect(&mut self, i: usize) {
        let now = Instant::now();
        let Some(stream) = &self.conns[i].stream else { return };
        match (stream.take_error(), stream.peer_addr()) {
            (Ok(None), Ok(_)) => {}
            // Not connected yet: wait for the next readiness event.
            (Ok(None), Err(e)) if e.kind() == ErrorKind::NotConnected => return,
            _ => return self.connect_failed(i, now),
        }
        let _ = stream.set_nodelay(true);
        self.stats.connections_established += 1;
        let c = &mut self.conns[i];
        self.stats.reconnects += u64::from(c.reconnect);
        c.reconnect = true;
        c.phase = Phase::Open;
        c.start = 0;
        c.end = 0;
        c.served = 0;
        // Requests left by a cleanly closed connection are written first.
        for o in &mut c.outstanding {
            o.sent = now;
        }
        c.unwritten = c.outstanding.len() * self.request_len;
        self.refill(i, now);
        if matches!(self.conns[i].phase, Phase::Open) && self.conns[i].outstanding.is_empty() {
            // Nothing due to confirm it with.
            self.confirm(i);
        }
    }

    /// Queues as many requests as the mode allows on connection `i` and
    /// writes them.
    fn refill(&mut self, i: usize, now: Instant) {
        if now >= self.times.end {
            // Nothing is written after the deadline (nor due: the schedule ends there).
            return;
        }
        let pipeline = self.plan.settings.pipeline.get();
        let request_len = self.request_len;
        let c = &mut self.conns[i];
        let room = pipeline - c.outstanding.len();
        let n = match &self.schedule {
            None => room,
            Some(s) => room.min(usize::try_from(s.pending(now)).unwrap_or(usize::MAX)),
        };
        for _ in 0..n {
            let due = match &mut self.schedule {
                None => now,
                Some(s) => {
                    let due = s.due_at(s.next);
                    s.next += 1;
                    if due >= self.times.measure_start && now.saturating_duration_since(due) > LATE_SEND_TOLERANCE {
                        self.stats.late_sends += 1;
                    }
                    due
                }
            };
            c.outstanding.push_back(Outstanding { due, sent: now });
        }
        self.stats.sent += n as u64;
        c.unwritten += n * request_len;
        if self.schedule.is_some() && c.outstanding.len() < pipeline && !c.listed_free {
            c.listed_free = true;
            self.free.push(i);
        }
        if c.unwritten > 0 {
            self.flush(i);
        }
    }

    /// Open loop: hands requests that are due to free connections.
    fn dispatch(&mut self, now: Instant) {
        while self.schedule.as_ref().is_some_and(|s| s.pending(now) > 0) {
            let Some(i) = self.free.pop() else { return };
            self.conns[i].listed_free = false;
            if matches!(self.conns[i].phase, Phase::Open) {
                self.refill(i, now);
            }
        }
    }

    /// Writes queued request bytes until the socket would block.
    fn flush(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let Some(stream) = c.stream.as_mut() else { return };
        while c.unwritten > 0 {
            match stream.write(&self.requests[self.requests.len() - c.unwritten..]) {
                Ok(0) => return self.connection_lost(i),
                Ok(n) => c.unwritten -= n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return self.connection_lost(i),
            }
        }
    }

    /// Reads what the socket holds, settles every complete response, and
    /// queues the next requests.
    fn on_readable(&mut self, i: usize, read_closed: bool) {
        let c = &mut self.conns[i];
        let Some(stream) = c.stream.as_mut() else { return };
        let mut eof = false;
        loop {
            if c.end == c.buf.len() {
                if c.start > 0 {
                    c.buf.copy_within(c.start..c.end, 0);
                    c.end -= c.start;
                    c.start = 0;
                } else {
                    c.buf.resize(c.buf.len() * 2, 0);
                }
            }
            match stream.read(&mut c.buf[c.end..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => {
                    c.end += n;
                    // A short read emptied the socket; edge-triggered epoll
                    // reports the next arrival. When the peer has closed,
                    // read on to see the end of stream now.
                    if c.end < c.buf.len() && !read_closed {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    eof = true;
                    break;
                }
            }
        }
        let done = Instant::now();
        if done >= self.times.end {
            return;
        }
        let window = self.window_of(done);
        let c = &mut self.conns[i];
        let mut closing = false;
        while c.start < c.end {
            let framed = match frame_response(&c.buf[c.start..c.end]) {
                Ok(Some(framed)) => framed,
                Ok(None) => break,
                Err(_) => return self.drop_conn(i, Disconnect::Failed(FailureKind::Protocol)),
            };
            let Some(request) = c.outstanding.pop_front() else {
                // A response to no request.
                return self.drop_conn(i, Disconnect::Failed(FailureKind::Protocol));
            };
            let body = c.start + framed.body.start..c.start + framed.body.end;
            let outcome = if framed.status != 200 {
                Err(FailureKind::Status(framed.status))
            } else if c.buf[body] != self.plan.expected_body[..] {
                Err(FailureKind::Body)
            } else {
                Ok(())
            };
            match (window, outcome) {
                (None, _) => self.stats.warmup_completed += 1,
                (Some(w), Ok(())) => {
                    self.stats.record_success(w, micros(done - request.due), micros(done - request.sent))
                }
                (Some(w), Err(kind)) => self.stats.record_failure(Some(w), kind),
            }
            c.start += framed.len;
            c.served += 1;
            // A response to a request not yet fully written (an early error
            // answer): its unwritten bytes are no longer owed.
            c.unwritten = c.unwritten.min(c.outstanding.len() * self.request_len);
            if std::mem::take(&mut c.unconfirmed) {
                self.unconfirmed -= 1;
            }
            if framed.close {
                closing = true;
                break;
            }
        }
        if c.start == c.end {
            c.start = 0;
            c.end = 0;
        }
        if closing {
            self.drop_conn(i, Disconnect::Closed);
        } else if eof {
            self.connection_lost(i);
        } else {
            self.answered.push(i);
        }
    }

    /// The connection ended (end of stream, reset, write error): a clean
    /// close between responses on a used connection, or an `io` failure of
    /// its outstanding requests (a fresh connection, or a partial response).
    fn connection_lost(&mut self, i: usize) {
        let c = &self.conns[i];
        let between_responses = c.start == c.end && (c.served > 0 || c.outstanding.is_empty());
        let why = if between_responses { Disconnect::Closed } else { Disconnect::Failed(FailureKind::Io) };
        self.drop_conn(i, why);
    }

    /// Closes connection `i`, settles its outstanding requests as `why` says
    /// (failures of the current window, unless the deadline has passed: then
    /// they stay in flight) and connects again.
    fn drop_conn(&mut self, i: usize, why: Disconnect) {
        let now = Instant::now();
        if now >= self.times.end {
            return;
        }
        if let Disconnect::Failed(kind) = why {
            self.fail_outstanding(i, now, kind);
        }
        let c = &mut self.conns[i];
        c.unwritten = 0;
        c.start = 0;
        c.end = 0;
        if let Some(mut stream) = c.stream.take() {
            let _ = self.poll.registry().deregister(&mut stream);
        }
        if matches!(why, Disconnect::Failed(_)) && c.served == 0 {
            // It never answered (say, a server that accepts and closes):
            // pause before the next attempt, as after a refused connect.
            self.confirm(i);
            self.conns[i].phase = Phase::Backoff(now + CONNECT_BACKOFF);
            return;
        }
        self.connect(i, now);
    }

    /// Timer work: request and connect timeouts, connect retries.
    fn scan(&mut self, now: Instant) {
        let timeout = self.plan.settings.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.phase {
                Phase::Open => {
                    if c.outstanding.front().is_some_and(|o| now.saturating_duration_since(o.sent) >= timeout) {
                        self.drop_conn(i, Disconnect::Failed(FailureKind::Timeout));
                    }
                }
                Phase::Connecting(since) => {
                    if now.saturating_duration_since(since) >= timeout {
                        if let Some(mut stream) = self.conns[i].stream.take() {
                            let _ = self.poll.registry().deregister(&mut stream);
                        }
                        self.connect_failed(i, now);
                    }
                }
                Phase::Backoff(until) => {
                    if now >= until {
                        self.connect(i, now);
                    }
                }
                Phase::Queued => {}
            }
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}
