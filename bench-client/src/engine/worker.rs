//! One engine thread: its connections, its `mio` event loop, its
//! measurements (see the [module doc](super) for the design).

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use super::conn::{Conn, Disconnect, Outstanding, Phase};
use super::http::frame_response;
use super::live::Slot;
use super::schedule::Schedule;
use super::stats::{FailureKind, RunStats};
use super::{
    CONNECT_BACKOFF, EVENTS_PER_POLL, Error, KEEP_ALIVE_IDLE, LATE_SEND_TOLERANCE, Load, NAP_TIMER_SLACK_NS,
    NAP_WINDOW, READ_BUFFER_BYTES, UNCONFIRMED_AT_ONCE, get_request,
};

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
    /// With an alternation, each route's request-level counts.
    pub(super) by_route: Vec<RunStats>,
    /// A stop flag ended it before the deadline.
    pub(super) stopped: bool,
}

/// One engine thread: its connections, its event loop, its measurements.
pub(super) struct Worker<'a> {
    load: &'a Load,
    times: Times,
    poll: Poll,
    conns: Vec<Conn>,
    /// Per route, the request repeated `pipeline` times, so any number of
    /// queued requests is one suffix of it.
    requests: Vec<Vec<u8>>,
    /// Per route, the bytes of one request.
    request_lens: Vec<usize>,
    /// Per route, the exact body of a successful response.
    expected: Vec<&'a [u8]>,
    /// Alternation: slice length (ns) and the route of each slice of a block.
    slicing: Option<(u128, &'a [usize])>,
    /// Per route, the server address: one pool of connections per route when
    /// the routes are on several servers, else a single pool.
    servers: Vec<SocketAddr>,
    /// Connection pools (1, or one per route): connection `i` is in pool `i % pools`.
    pools: usize,
    /// Several pools: the route whose pool is sending now.
    active: usize,
    window_ns: u128,
    last_window: usize,
    schedule: Option<Schedule>,
    /// Open loop: connections with room for another request, oldest first,
    /// so that every connection is used in turn (as wrk2's per-connection
    /// schedule does) and none idles into the server's keep-alive timeout.
    free: VecDeque<usize>,
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
    /// Alternation only: the request-level counts of each route.
    by_route: Vec<RunStats>,
    /// Where this thread publishes its totals for a metrics endpoint (on
    /// its timer, never per request; see `live.rs`).
    live: Option<&'a Slot>,
    /// When the latency buckets are published next (window boundaries).
    next_live_latency: Instant,
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
        let others = load.alternation.iter().flat_map(|a| a.routes.iter());
        let servers: Vec<SocketAddr> = std::iter::once(load.target.addr)
            .chain(others.clone().map(|r| r.server.unwrap_or(load.target.addr)))
            .collect();
        let pools = if servers.iter().any(|a| *a != load.target.addr) { servers.len() } else { 1 };
        let requests: Vec<Vec<u8>> = std::iter::once(get_request(&load.target.host, &load.target.path))
            .chain(others.map(|r| match r.server {
                Some(addr) => get_request(&addr.to_string(), &r.path),
                None => get_request(&load.target.host, &r.path),
            }))
            .collect();
        let connections = connections * pools;
        let expected = std::iter::once(load.expected_body.as_slice())
            .chain(load.alternation.iter().flat_map(|a| a.routes.iter().map(|r| r.expected_body.as_slice())))
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
                    served: 0,
                    unconfirmed: false,
                    unwritten: 0,
                    route: 0,
                    listed_free: false,
                    idle_since: times.start,
                })
                .collect(),
            request_lens: requests.iter().map(Vec::len).collect(),
            requests: requests.iter().map(|r| r.repeat(s.pipeline.get())).collect(),
            expected,
            slicing: load.alternation.as_ref().map(|a| (a.slice.as_nanos().max(1), a.block.as_slice())),
            servers,
            pools,
            active: usize::MAX,
            window_ns: s.timing.window().as_nanos().max(1),
            last_window: s.timing.windows().saturating_sub(1),
            schedule,
            free: VecDeque::with_capacity(connections),
            unconfirmed: 0,
            unconfirmed_budget: (UNCONFIRMED_AT_ONCE / s.threads.get()).max(1),
            queued: VecDeque::with_capacity(connections),
            answered: Vec::with_capacity(connections),
            stats: RunStats::new(s.timing.windows(), open_loop),
            by_route: match &load.alternation {
                Some(a) => (0..=a.routes.len()).map(|_| RunStats::new(s.timing.windows(), open_loop)).collect(),
                None => Vec::new(),
            },
            live,
            next_live_latency: times.measure_start + s.timing.window(),
            ramp_check: Some(if s.timing.warmup().is_zero() {
                times.measure_start + s.timing.window()
            } else {
                times.measure_start
            }),
        })
    }

    /// Runs until the deadline (returns `false`) or until one of the `stop`
    /// flags is set (returns `true`), with the thread's measurements.
    pub(super) fn run(mut self, stop: &[&AtomicBool]) -> Result<Finished, Error> {
        if self.conns.is_empty() {
            self.publish(true);
            return Ok(Finished { stats: self.stats, by_route: self.by_route, stopped: false });
        }
        let timeout = self.load.settings.timeout;
        let tick = (timeout / 4).clamp(Duration::from_millis(1), Duration::from_millis(50));
        let mut events = Events::with_capacity(EVENTS_PER_POLL);
        for i in 0..self.conns.len() {
            self.connect(i, self.times.start);
        }
        let mut next_scan = self.times.start + tick;
        let mut last_event = self.times.start;
        let nap = self.load.settings.nap;
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
            if let Some(at) = self.ramp_check
                && now >= at
            {
                // A slot is established once its first connection opened.
                self.stats.connections_short = self.conns.iter().filter(|c| !c.reconnect).count() as u64;
                self.ramp_check = None;
            }
            if now >= next_scan {
                self.scan(now);
                next_scan = now + tick;
                if self.live.is_some() {
                    let window_ended = now >= self.next_live_latency;
                    if window_ended {
                        self.next_live_latency += self.load.settings.timing.window();
                    }
                    self.publish(window_ended);
                }
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
            let mut wake = next_scan.min(self.times.end);
            if let Some(at) = self.ramp_check {
                wake = wake.min(at);
            }
            if self.pools > 1 {
                wake = wake.min(self.next_slice(now));
            }
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
                return Err(Error::Poll(e));
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
        if !stopped && self.ramp_check.is_some() {
            // One window and no warm-up: the ramp is judged at the deadline.
            self.stats.connections_short = self.conns.iter().filter(|c| !c.reconnect).count() as u64;
        }
        let stopped_at = Instant::now().min(self.times.end);
        self.stats.in_flight_at_deadline = self.conns.iter().map(|c| c.outstanding.len() as u64).sum();
        for o in self.conns.iter().flat_map(|c| &c.outstanding) {
            if let Some(r) = self.by_route.get_mut(o.route) {
                r.in_flight_at_deadline += 1;
            }
        }
        if let Some(s) = &self.schedule {
            self.stats.unsent_at_deadline += s.pending(stopped_at);
        }
        self.publish(true);
        Ok(Finished { stats: self.stats, by_route: self.by_route, stopped })
    }

    /// Copies this thread's totals into its live slot, if it has one, with
    /// the latency buckets when `latency` (a walk over the histogram).
    fn publish(&self, latency: bool) {
        let Some(slot) = self.live else { return };
        let in_flight = self.conns.iter().map(|c| c.outstanding.len() as u64).sum();
        let open = self.conns.iter().filter(|c| matches!(c.phase, Phase::Open)).count() as u64;
        slot.publish(&self.stats, in_flight, open);
        if latency {
            slot.publish_latency(&self.stats.latency_us);
        }
    }

    /// The route of requests written at `now`: the target's, or with an
    /// alternation the route of the slice `now` falls in (slices counted
    /// from the start of the measurement, backwards through the warm-up).
    fn route_at(&self, now: Instant) -> usize {
        let Some((slice_ns, block)) = self.slicing else { return 0 };
        let from = self.times.measure_start;
        let slice = match now.checked_duration_since(from) {
            Some(after) => i128::try_from(after.as_nanos() / slice_ns).unwrap_or(i128::MAX),
            None => -i128::try_from((from - now).as_nanos().div_ceil(slice_ns)).unwrap_or(i128::MAX),
        };
        block[usize::try_from(slice.rem_euclid(block.len() as i128)).unwrap_or(0)]
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
        let Some((slice_ns, _)) = self.slicing else { return self.times.end };
        let from = self.times.measure_start;
        let next = match now.checked_duration_since(from) {
            Some(after) => i128::try_from(after.as_nanos() / slice_ns + 1).unwrap_or(i128::MAX),
            None => -i128::try_from((from - now).as_nanos() / slice_ns).unwrap_or(i128::MAX),
        };
        let offset = Duration::from_nanos(u64::try_from(next.unsigned_abs() * slice_ns).unwrap_or(u64::MAX));
        if next >= 0 { from + offset } else { from - offset }
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
        match TcpStream::connect(self.servers[i % self.pools]) {
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
        for o in self.conns[i].outstanding.drain(..) {
            for stats in std::iter::once(&mut self.stats).chain(self.by_route.get_mut(o.route)) {
                match window {
                    None => {
                        stats.warmup_completed += 1;
                        stats.warmup_failed += 1;
                    }
                    Some(w) => stats.record_failure(Some(w), kind),
                }
            }
        }
    }

    /// The server closed connection `i` between responses: counts the churn,
    /// and each outstanding request that was (at least partly) written as a
    /// retry, written once more on the next connection as a request of the
    /// connection's route (its route's `retried`, that route's `sent`).
    /// Requests not yet written at all are no retries: they keep their place.
    fn retry_outstanding(&mut self, i: usize) {
        self.stats.closed_by_server += 1;
        let c = &mut self.conns[i];
        let untouched = c.unwritten / self.request_lens[c.route];
        let written = c.outstanding.len().saturating_sub(untouched);
        for o in c.outstanding.iter_mut().take(written) {
            self.stats.retried += 1;
            self.stats.sent += 1;
            if let Some(r) = self.by_route.get_mut(o.route) {
                r.retried += 1;
            }
            if let Some(r) = self.by_route.get_mut(c.route) {
                r.sent += 1;
            }
            o.route = c.route;
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
        c.idle_since = now;
        c.start = 0;
        c.end = 0;
        c.served = 0;
        // Requests left by a connection the server closed are written first
        // (as requests of the connection's route: see `drop_conn`).
        for o in &mut c.outstanding {
            o.sent = now;
        }
        c.unwritten = c.outstanding.len() * self.request_lens[c.route];
        // Retried requests go out now, even in another pool's slice.
        self.flush(i);
        if !matches!(self.conns[i].phase, Phase::Open) {
            return;
        }
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
        let pipeline = self.load.settings.pipeline.get();
        let route_now = self.route_at(now);
        if self.pools > 1 && i % self.pools != route_now {
            // Another server's slice: this pool idles.
            return;
        }
        let c = &mut self.conns[i];
        if c.unwritten == 0 {
            c.route = route_now;
        }
        let route = c.route;
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
                    // Written in the measured windows: late whatever phase it was due in.
                    if now >= self.times.measure_start && now.saturating_duration_since(due) > LATE_SEND_TOLERANCE {
                        self.stats.late_sends += 1;
                    }
                    due
                }
            };
            c.outstanding.push_back(Outstanding { due, sent: now, route });
        }
        self.stats.sent += n as u64;
        if let Some(r) = self.by_route.get_mut(route) {
            r.sent += n as u64;
        }
        c.unwritten += n * self.request_lens[route];
        if self.schedule.is_some() && c.outstanding.len() < pipeline && !c.listed_free {
            c.listed_free = true;
            self.free.push_back(i);
        }
        if c.unwritten > 0 {
            self.flush(i);
        }
    }

    /// Open loop: hands requests that are due to free connections.
    fn dispatch(&mut self, now: Instant) {
        while self.schedule.as_ref().is_some_and(|s| s.pending(now) > 0) {
            let Some(i) = self.free.pop_front() else { return };
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
            let requests = &self.requests[c.route];
            match stream.write(&requests[requests.len() - c.unwritten..]) {
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
        // A request written at or before this instant is answered after its
        // deadline (one subtraction per read, a comparison per response).
        let written_too_early = done.checked_sub(self.load.settings.timeout);
        let c = &mut self.conns[i];
        let mut closing = false;
        let served = c.served;
        while c.start < c.end {
            let unread = &c.buf[c.start..c.end];
            let framed = match frame_response(unread, false, eof) {
                Ok(Some(framed)) => framed,
                Ok(None) => break,
                Err(_) => return self.drop_conn(i, Disconnect::Failed(FailureKind::Protocol)),
            };
            let Some(request) = c.outstanding.pop_front() else {
                // A response to no request.
                return self.drop_conn(i, Disconnect::Failed(FailureKind::Protocol));
            };
            let outcome = if written_too_early.is_some_and(|t| request.sent <= t) {
                // Answered after its deadline: a timeout, whatever it says.
                Err(FailureKind::Timeout)
            } else if framed.status != 200 {
                Err(FailureKind::Status(framed.status))
            } else if !framed.body_eq(unread, self.expected[request.route]) {
                Err(FailureKind::Body)
            } else {
                Ok(())
            };
            for stats in std::iter::once(&mut self.stats).chain(self.by_route.get_mut(request.route)) {
                match (window, outcome) {
                    (None, Ok(())) => stats.warmup_completed += 1,
                    (None, Err(_)) => {
                        stats.warmup_completed += 1;
                        stats.warmup_failed += 1;
                    }
                    (Some(w), Ok(())) => {
                        stats.record_success(w, micros(done - request.due), micros(done - request.sent))
                    }
                    (Some(w), Err(kind)) => stats.record_failure(Some(w), kind),
                }
            }
            c.start += framed.len;
            c.served += 1;
            // A response to a request not yet fully written (an early error
            // answer): its unwritten bytes are no longer owed.
            c.unwritten = c.unwritten.min(c.outstanding.len() * self.request_lens[c.route]);
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
        if c.served != served {
            // Its last response: an end of stream read with it is judged from here.
            c.idle_since = done;
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
        let idle = c.outstanding.is_empty()
            && c.unwritten == 0
            && Instant::now().saturating_duration_since(c.idle_since) >= KEEP_ALIVE_IDLE;
        let why = match (between_responses, idle) {
            (true, true) => Disconnect::Idle,
            (true, false) => Disconnect::Closed,
            (false, _) => Disconnect::Failed(FailureKind::Io),
        };
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
        match why {
            Disconnect::Failed(kind) => self.fail_outstanding(i, now, kind),
            Disconnect::Closed => self.retry_outstanding(i),
            Disconnect::Idle => self.stats.closed_idle += 1,
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
        let timeout = self.load.settings.timeout;
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
