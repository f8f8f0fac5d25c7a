//! One engine thread: its connections, its `mio` event loop, its
//! measurements (see the [module doc](super) for the design). The loop and
//! the slices are here; the per-request path in `requests.rs`, the
//! connections' lifecycle in `connections.rs`.

mod connections;
mod requests;
mod settle;
mod streams;

use self::settle::{count_retried, settle};

use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::{Events, Poll};

use super::conn::{Conn, Phase};
use super::live::Slot;
use super::schedule::Schedule;
use super::stats::RunStats;
use super::tls::TlsClient;
use super::{
    EPOLL_GRANULARITY, EVENTS_PER_POLL, Error, Load, NAP_TIMER_SLACK_NS, NAP_WINDOW, Protocol, READ_BUFFER_BYTES,
    SCHEDULE_NAP, Slicing, UNCONFIRMED_AT_ONCE, http2,
};

/// What one read of a connection brought, to settle its responses by: the
/// instant it ended, the window that falls in (`None`: the warm-up), the
/// instant at or before which a request was written too long ago to be
/// answered within its timeout, and whether the server closed.
#[derive(Clone, Copy)]
struct Read {
    done: Instant,
    window: Option<usize>,
    written_too_early: Option<Instant>,
    eof: bool,
}

/// The three instants every thread of a run shares.
#[derive(Debug, Clone, Copy)]
pub(super) struct Times {
    pub(super) start: Instant,
    pub(super) measure_start: Instant,
    pub(super) end: Instant,
}

/// What one engine thread measured.
pub(super) struct Finished {
    /// Every route's counts.
    pub(super) stats: RunStats,
    /// With a slicing, each route's request-level counts.
    pub(super) by_route: Vec<RunStats>,
    /// A stop flag ended it before the deadline.
    pub(super) stopped: bool,
    /// Its share of `LoadSettings::requests` succeeded before the deadline
    /// (vacuously, with no connections); false without a share.
    pub(super) reached: bool,
    /// When its loop ended (the deadline at the latest).
    pub(super) ended: Instant,
}

/// One engine thread: its connections, its event loop, its measurements.
pub(super) struct Worker<'a> {
    load: &'a Load,
    times: Times,
    poll: Poll,
    conns: Vec<Conn>,
    /// Per route, the request repeated `pipeline` times, so any number of
    /// queued requests is one suffix of it (HTTP/2: once, on stream 0).
    requests: Vec<Vec<u8>>,
    /// Per route, the bytes of one request.
    request_lens: Vec<usize>,
    /// Per route, the status and exact body of a successful response, and
    /// whether its request is a `HEAD` (answered without a body).
    expected: Vec<(u16, &'a [u8], bool)>,
    /// Per route, what a successful response carries beyond (HTTP/1.1).
    shapes: Vec<&'a super::Shape>,
    /// A gzip body decoded (a route whose shape has one), kept between
    /// responses.
    scratch: Vec<u8>,
    /// The routes' alternation; its slices are the windows.
    slicing: Option<&'a Slicing>,
    /// Per route, the server address (with its TLS client, if any, and the
    /// protocol its connections speak): one pool of connections per route
    /// when the routes differ in any of these, else a single pool.
    servers: Vec<(SocketAddr, Option<TlsClient>, Protocol)>,
    /// Connection pools (1, or one per route): connection `i` is in pool `i % pools`.
    pools: usize,
    /// Several pools: the route whose pool is sending now.
    active: usize,
    /// The timing's window (with a slicing, the slice), nanoseconds:
    /// computed once, so the per-request arithmetic is integer only.
    window_ns: i64,
    last_window: usize,
    schedule: Option<Schedule>,
    /// Open loop: connections with room for another request, oldest first,
    /// so that every connection is used in turn (as wrk2's per-connection
    /// schedule does) and none idles into the server's keep-alive timeout.
    free: VecDeque<usize>,
    /// Open loop: since when no connection has had room for a request (the
    /// last free one taken), so every request falling due since waits on
    /// the server, not on this thread; `None` while one has room.
    starved_since: Option<Instant>,
    /// Connections started and not yet confirmed (see [`UNCONFIRMED_AT_ONCE`]).
    unconfirmed: usize,
    /// This thread's share of [`UNCONFIRMED_AT_ONCE`].
    unconfirmed_budget: usize,
    /// Connections in [`Phase::Queued`], in turn order.
    queued: VecDeque<usize>,
    /// Connections whose responses completed in this batch of events; their
    /// next requests are written after the batch (see [`Worker::run`]).
    answered: Vec<usize>,
    /// HTTP/2: what a session's last read gave (kept to reuse its room).
    events: Vec<http2::Event>,
    stats: RunStats,
    /// Alternation only: the request-level counts of each route.
    by_route: Vec<RunStats>,
    /// Where this thread publishes its totals for a metrics endpoint (on
    /// its timer, never per request; see `live.rs`).
    live: Option<&'a Slot>,
    /// When the latency buckets are published next (window boundaries).
    next_live_latency: Instant,
    /// This thread's share of `LoadSettings::requests`: no request is
    /// written beyond it, and the loop ends once it succeeded.
    quota: Option<u64>,
    /// HTTP/2: requests queued that wait for a stream, not yet written (and
    /// so not yet `sent`): within the quota beside those in flight.
    unsent: u64,
    /// When the connection slots are checked for having been established
    /// once (the measure start, or the end of the first window without a
    /// warm-up); `None` once checked.
    ramp_check: Option<Instant>,
}

impl<'a> Worker<'a> {
    /// A thread of `connections` connections sending stream `stream.0` of
    /// `stream.1` of the open-loop schedule.
    /// `live`: where to publish its totals, if anywhere.
    pub(super) fn new(
        load: &'a Load,
        connections: usize,
        stream: (u64, u64),
        times: Times,
        live: Option<&'a Slot>,
    ) -> Result<Self, Error> {
        let s = &load.settings;
        let servers: Vec<_> =
            load.routes.iter().map(|r| (r.target.addr, r.target.tls.clone(), r.target.protocol)).collect();
        let pools = if servers.iter().any(|a| *a != servers[0]) { servers.len() } else { 1 };
        let requests: Vec<Vec<u8>> = load.routes.iter().map(|r| r.target.request_bytes()).collect();
        let connections = connections * pools;
        let expected = load
            .routes
            .iter()
            .map(|r| (r.expected_status, r.expected_body.as_slice(), r.target.request.is_head()))
            .collect();
        let open_loop = s.rate.is_some();
        let schedule = s.rate.map(|rate| Schedule::new(times.start, rate.per_s(), stream.0, stream.1));
        Ok(Self {
            load,
            times,
            poll: Poll::new().map_err(Error::Setup)?,
            conns: (0..connections)
                .map(|_| Conn {
                    stream: None,
                    phase: Phase::Backoff(times.start),
                    reconnect: false,
                    buf: vec![0; READ_BUFFER_BYTES],
                    start: 0,
                    end: 0,
                    outstanding: VecDeque::with_capacity(s.pipeline.get()),
                    h2: None,
                    served: 0,
                    unconfirmed: false,
                    unwritten: 0,
                    route: 0,
                    listed_free: false,
                    idle_since: times.start,
                })
                .collect(),
            request_lens: requests.iter().map(Vec::len).collect(),
            requests: requests
                .iter()
                .zip(&load.routes)
                .map(|(r, route)| match route.target.protocol {
                    Protocol::Http1 => r.repeat(s.pipeline.get()),
                    Protocol::Http2 => r.clone(),
                })
                .collect(),
            expected,
            shapes: load.routes.iter().map(|r| &r.shape).collect(),
            scratch: Vec::new(),
            slicing: load.slicing.as_ref(),
            servers,
            pools,
            active: usize::MAX,
            window_ns: Slicing::slice_ns(s.timing.window()),
            last_window: s.timing.windows().saturating_sub(1),
            schedule,
            free: VecDeque::with_capacity(connections),
            starved_since: None,
            unconfirmed: 0,
            unconfirmed_budget: (UNCONFIRMED_AT_ONCE / s.threads.get()).max(1),
            queued: VecDeque::with_capacity(connections),
            answered: Vec::with_capacity(connections),
            events: Vec::new(),
            stats: RunStats::new(s.timing.windows(), open_loop),
            by_route: match &load.slicing {
                Some(_) => load
                    .routes
                    .iter()
                    .map(|_| {
                        let mut route = RunStats::new(s.timing.windows(), open_loop);
                        // An open-loop alternation compares latency block by block.
                        if open_loop {
                            route.keep_window_latency();
                        }
                        route
                    })
                    .collect(),
                None => Vec::new(),
            },
            live,
            quota: None,
            unsent: 0,
            next_live_latency: times.measure_start + s.timing.window(),
            ramp_check: Some(if s.timing.warmup().is_zero() {
                times.measure_start + s.timing.window()
            } else {
                times.measure_start
            }),
        })
    }

    /// Runs until the deadline, until one of the `stop` flags is set, or
    /// (with a `quota`) once `quota` requests succeeded in the measured
    /// windows, with the thread's measurements. With a quota, no request is
    /// written beyond it: successes and requests in flight stay within it.
    pub(super) fn run(mut self, stop: &[&AtomicBool], quota: Option<u64>) -> Result<Finished, Error> {
        if self.conns.is_empty() {
            self.publish(true);
            let (stats, by_route, ended) = (self.stats, self.by_route, self.times.start);
            return Ok(Finished { stats, by_route, stopped: false, reached: quota.is_some(), ended });
        }
        self.quota = quota;
        let timeout = self.load.settings.timeout;
        let tick = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
        let mut events = Events::with_capacity(EVENTS_PER_POLL);
        for i in 0..self.conns.len() {
            self.connect(i, self.times.start);
        }
        let mut next_scan = self.times.start + tick;
        let mut last_event = self.times.start;
        let nap = self.load.settings.nap;
        if !nap.is_zero() || self.schedule.is_some() {
            // Best effort: with the default slack a nap only lasts longer.
            let _ = nix::sys::prctl::set_timerslack(NAP_TIMER_SLACK_NS);
        }
        let (stopped, reached) = loop {
            let now = Instant::now();
            if now >= self.times.end {
                break (false, false);
            }
            if stop.iter().any(|s| s.load(Ordering::Relaxed)) {
                break (true, false);
            }
            if self.quota.is_some_and(|q| self.stats.measured_successes() >= q) {
                break (false, true);
            }
            if let Some(at) = self.ramp_check
                && now >= at
            {
                self.count_short_slots();
                self.ramp_check = None;
            }
            if now >= next_scan {
                self.scan_and_publish(now);
                next_scan = now + tick;
            }
            self.dispatch(now);
            while self.unconfirmed < self.unconfirmed_budget
                && let Some(i) = self.queued.pop_front()
            {
                self.connect(i, now);
            }
            if self.pools > 1 {
                self.switch_pool(now);
            }
            let (wake, napping) = self.wake_plan(now, next_scan, last_event);
            let timeout = if napping { Duration::ZERO } else { wake.saturating_duration_since(now) };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout))
                && e.kind() != ErrorKind::Interrupted
            {
                return Err(Error::Poll(e));
            }
            if !events.is_empty() {
                last_event = now;
            } else if napping {
                let step = if nap.is_zero() { SCHEDULE_NAP } else { nap };
                std::thread::sleep(step.min(wake.saturating_duration_since(now)));
            }
            for event in &events {
                self.on_event(event);
            }
            self.refill_answered();
        };
        let stopped_at = self.settle_end(stopped || reached);
        self.publish(true);
        Ok(Finished { stats: self.stats, by_route: self.by_route, stopped, reached, ended: stopped_at })
    }

    /// The ramp judged: a slot is established once its first connection
    /// opened; the others are short.
    fn count_short_slots(&mut self) {
        self.stats.counts.connections_short = self.conns.iter().filter(|c| !c.reconnect).count() as u64;
    }

    /// The timer's turn: requests past their timeout failed, and the live
    /// counters published (with the latency of a window that ended).
    fn scan_and_publish(&mut self, now: Instant) {
        self.scan(now);
        if self.live.is_some() {
            let window_ended = now >= self.next_live_latency;
            if window_ended {
                self.next_live_latency += self.load.settings.timing.window();
            }
            self.publish(window_ended);
        }
    }

    /// When the loop must wake next: the next scan, the deadline, the ramp's
    /// check, the next slice, the next request due while a connection is
    /// free to write it; and whether to nap instead of sleeping in
    /// `epoll_wait`, which sleeps in whole milliseconds (a request due sooner
    /// is waited for in short naps, so it is written on time).
    #[inline]
    fn wake_plan(&self, now: Instant, next_scan: Instant, last_event: Instant) -> (Instant, bool) {
        let nap = self.load.settings.nap;
        let mut wake = next_scan.min(self.times.end);
        if let Some(at) = self.ramp_check {
            wake = wake.min(at);
        }
        if self.pools > 1 {
            wake = wake.min(self.next_slice(now));
        }
        let due = self.schedule.as_ref().filter(|_| !self.free.is_empty()).map(|s| s.due_at(s.next));
        if let Some(due) = due {
            wake = wake.min(due);
        }
        let due_soon = due.is_some_and(|d| d.saturating_duration_since(now) < EPOLL_GRANULARITY);
        let napping = due_soon || (!nap.is_zero() && now.saturating_duration_since(last_event) < NAP_WINDOW);
        (wake, napping)
    }

    /// The next requests of every connection answered in this batch go out
    /// together, after all its responses were read: the server finds them
    /// waiting at its next wake-up, as with wrk (whose writes wait for the
    /// next loop turn).
    #[inline]
    fn refill_answered(&mut self) {
        if self.answered.is_empty() {
            return;
        }
        let now = Instant::now();
        for k in 0..self.answered.len() {
            let i = self.answered[k];
            if matches!(self.conns[i].phase, Phase::Open) {
                self.refill(i, now);
            }
        }
        self.answered.clear();
    }

    /// One readiness event of connection `event.token()`: its connect
    /// completing, its responses to read, its requests to write.
    #[inline]
    fn on_event(&mut self, event: &mio::event::Event) {
        let i = event.token().0;
        let readable = event.is_readable() || event.is_read_closed() || event.is_error();
        match self.conns[i].phase {
            Phase::Connecting(_) => {
                self.on_connect(i);
                // Over TLS the server may already have answered the
                // ClientHello written on connect: edge-triggered, this
                // event is the only news of it.
                if readable && matches!(self.conns[i].phase, Phase::Open) {
                    self.on_readable(i, event.is_read_closed() || event.is_error());
                }
            }
            Phase::Open => {
                if readable {
                    self.on_readable(i, event.is_read_closed() || event.is_error());
                }
                // Still the connection the event was about (a response
                // can end it and start the next, still connecting).
                let c = &self.conns[i];
                if matches!(c.phase, Phase::Open)
                    && event.is_writable()
                    && (c.unwritten > 0 || c.stream.as_ref().is_some_and(|s| s.wants_write()))
                {
                    self.flush(i);
                }
            }
            Phase::Backoff(_) | Phase::Queued => {}
        }
    }

    /// Copies this thread's totals into its live slot, if it has one, with
    /// the latency buckets when `latency` (a walk over the histogram).
    fn publish(&self, latency: bool) {
        let Some(slot) = self.live else { return };
        // Written and not settled: HTTP/2's requests waiting for a stream are not written yet.
        let queued: u64 = self.conns.iter().map(|c| c.outstanding.len() as u64).sum();
        let in_flight = queued.saturating_sub(self.unsent);
        let open = self.conns.iter().filter(|c| matches!(c.phase, Phase::Open)).count() as u64;
        slot.publish(&self.stats, in_flight, open);
        if latency {
            slot.publish_latency(&self.stats.latency_us);
        }
    }

    /// The route of requests written at `now`: the only one, or with a
    /// slicing the route of the slice (window) `now` falls in, counted from
    /// the start of the measurement, backwards through the warm-up.
    fn route_at(&self, now: Instant) -> usize {
        let Some(slicing) = self.slicing else { return 0 };
        slicing.route_at(Slicing::offset_ns(now, self.times.measure_start), self.window_ns)
    }

    /// Several pools: when the slice's route changed, starts the idle
    /// connections of its pool (the others finish what they have in flight).
    fn switch_pool(&mut self, now: Instant) {
        let route = self.route_at(now);
        if route == self.active {
            return;
        }
        self.active = route;
        for i in (route..self.conns.len()).step_by(self.pools) {
            let c = &self.conns[i];
            if matches!(c.phase, Phase::Open) && c.outstanding.is_empty() && c.unwritten == 0 {
                self.refill(i, now);
            }
        }
    }

    /// The start of the slice after the one `now` falls in (the end when
    /// not slicing).
    fn next_slice(&self, now: Instant) -> Instant {
        let Some(_) = self.slicing else { return self.times.end };
        let from = self.times.measure_start;
        let slice = Slicing::slice_at(Slicing::offset_ns(now, from), self.window_ns);
        let next = Slicing::slice_start_ns(slice.saturating_add(1), self.window_ns);
        let offset = Duration::from_nanos(next.unsigned_abs());
        if next >= 0 { from + offset } else { from - offset }
    }

    /// The window a completion at `at` belongs to; `None` during the warm-up.
    fn window_of(&self, at: Instant) -> Option<usize> {
        let since = at.checked_duration_since(self.times.measure_start)?;
        let since_ns = i64::try_from(since.as_nanos()).unwrap_or(i64::MAX);
        Some(usize::try_from(since_ns / self.window_ns).unwrap_or(usize::MAX).min(self.last_window))
    }
}
