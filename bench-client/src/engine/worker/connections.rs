//! A worker's connections: opened (paced: `UNCONFIRMED_AT_ONCE`),
//! established, closed by the server (churn, a keep-alive timeout) or lost,
//! timed out on the loop's timer; and what becomes of the requests they held
//! (failed by kind, or written again and counted as retries).

use std::io::ErrorKind;
use std::time::Instant;

use mio::net::TcpStream;
use mio::{Interest, Token};

use super::{Worker, count_retried, settle};
use crate::engine::Protocol;
use crate::engine::conn::{Disconnect, Phase, UNASSIGNED};
use crate::engine::http2::Session;
use crate::engine::stats::FailureKind;
use crate::engine::tls::Stream;
use crate::engine::{ACCEPT_GRACE, CONNECT_BACKOFF, KEEP_ALIVE_IDLE};

impl Worker<'_> {
    /// Starts connecting slot `i`, or queues it while enough new connections
    /// are unconfirmed.
    pub(super) fn connect(&mut self, i: usize, now: Instant) {
        self.confirm(i);
        if self.unconfirmed >= self.unconfirmed_budget {
            self.conns[i].phase = Phase::Queued;
            self.queued.push_back(i);
            return;
        }
        let (addr, tls, _) = &self.servers[i % self.pools];
        match TcpStream::connect(*addr) {
            Ok(mut tcp) => {
                let registered =
                    self.poll.registry().register(&mut tcp, Token(i), Interest::READABLE | Interest::WRITABLE);
                match registered.and_then(|()| Stream::new(tcp, tls.as_ref())) {
                    Ok(stream) => {
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
    /// waiting for it (from a closed connection, or for its first stream) fail as `io`.
    pub(super) fn connect_failed(&mut self, i: usize, now: Instant) {
        self.confirm(i);
        if now >= self.times.end {
            return;
        }
        self.stats.record_failure(None, FailureKind::Connect);
        self.fail_outstanding(i, now, FailureKind::Io);
        let c = &mut self.conns[i];
        c.unwritten = 0;
        c.stream = None;
        c.h2 = None;
        c.phase = Phase::Backoff(now + CONNECT_BACKOFF);
    }

    /// Settles every request outstanding on connection `i` as a failure of
    /// `kind` in the window of `now` (during the warm-up: as warm-up).
    /// HTTP/2: those waiting for a stream fail with it too, counted `sent`
    /// as they fail (as HTTP/1.1 counts a request it queued): a connection
    /// that fails before its first stream fails its requests, not silently.
    pub(super) fn fail_outstanding(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let c = &self.conns[i];
        if self.servers[i % self.pools].2 == Protocol::Http2 {
            let first = c.outstanding.partition_point(|o| o.stream != UNASSIGNED);
            for o in c.outstanding.range(first..) {
                self.unsent -= 1;
                self.stats.counts.sent += 1;
                if let Some(r) = self.by_route.get_mut(o.route) {
                    r.counts.sent += 1;
                }
            }
        }
        let all = c.outstanding.len();
        self.fail_first(i, all, now, kind);
    }

    /// The server closed connection `i` between responses: counts the churn,
    /// and each outstanding request that was (at least partly) written as a
    /// retry, written once more on the next connection as a request of the
    /// connection's route (its route's `retried`, that route's `sent`).
    /// Requests not yet written at all are no retries: they keep their place.
    /// HTTP/2: the requests on a stream were written, those waiting for one not.
    pub(super) fn retry_outstanding(&mut self, i: usize) {
        self.stats.counts.closed_by_server += 1;
        let c = &mut self.conns[i];
        let multiplexed = c.h2.is_some();
        let written = if multiplexed {
            c.outstanding.partition_point(|o| o.stream != UNASSIGNED)
        } else {
            c.outstanding.len().saturating_sub(c.unwritten / self.request_lens[c.route])
        };
        for o in c.outstanding.iter_mut().take(written) {
            count_retried(&mut self.stats, &mut self.by_route, o.route);
            if multiplexed {
                // `sent` again once on a stream of the next connection.
                self.unsent += 1;
            } else {
                self.stats.counts.sent += 1;
                if let Some(r) = self.by_route.get_mut(c.route) {
                    r.counts.sent += 1;
                }
            }
            o.route = c.route;
        }
        for o in &mut c.outstanding {
            o.stream = UNASSIGNED;
        }
    }

    /// HTTP/2: settles the requests on a stream of connection `i` as
    /// failures of `kind` (those waiting for a stream keep their place).
    pub(super) fn fail_streams(&mut self, i: usize, now: Instant, kind: FailureKind) {
        let on_streams = self.conns[i].outstanding.partition_point(|o| o.stream != UNASSIGNED);
        self.fail_first(i, on_streams, now, kind);
    }

    /// Settles the first `n` outstanding requests of connection `i` as
    /// failures of `kind` (in the warm-up: warm-up failures).
    fn fail_first(&mut self, i: usize, n: usize, now: Instant, kind: FailureKind) {
        let window = self.window_of(now);
        for o in self.conns[i].outstanding.drain(..n) {
            settle(&mut self.stats, &mut self.by_route, &o, window, Err(kind), now);
        }
    }

    /// Counts connection `i` as confirmed, or as no longer pending at all.
    pub(super) fn confirm(&mut self, i: usize) {
        if std::mem::take(&mut self.conns[i].unconfirmed) {
            self.unconfirmed -= 1;
        }
    }

    /// A connecting socket became ready: established, or failed.
    pub(super) fn on_connect(&mut self, i: usize) {
        let now = Instant::now();
        let Some(stream) = self.conns[i].stream.as_mut().map(Stream::tcp) else { return };
        match (stream.take_error(), stream.peer_addr()) {
            (Ok(None), Ok(_)) => {}
            // Not connected yet: wait for the next readiness event.
            (Ok(None), Err(e)) if e.kind() == ErrorKind::NotConnected => return,
            _ => return self.connect_failed(i, now),
        }
        let _ = stream.set_nodelay(true);
        self.stats.counts.connections_established += 1;
        let c = &mut self.conns[i];
        self.stats.counts.reconnects += u64::from(c.reconnect);
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
        c.unwritten = match self.servers[i % self.pools].2 {
            Protocol::Http1 => c.outstanding.len() * self.request_lens[c.route],
            Protocol::Http2 => {
                // The preface first; streams open once the server's SETTINGS came.
                let session = Box::new(Session::new());
                let pending = session.unwritten().len();
                c.h2 = Some(session);
                pending
            }
        };
        // Retried requests go out now, even in another pool's slice.
        self.flush(i);
        if !matches!(self.conns[i].phase, Phase::Open) {
            return;
        }
        self.refill(i, now);
        // Another pool's slice: the server may not have accepted it yet, and
        // the pools' hundreds of idle connections at once overflowed its
        // accept backlog (a dropped SYN waits 1 s); the next scan confirms it.
        let idle_pool = self.pools > 1 && i % self.pools != self.route_at(now);
        if matches!(self.conns[i].phase, Phase::Open) && self.conns[i].outstanding.is_empty() && !idle_pool {
            // Nothing due to confirm it with.
            self.confirm(i);
        }
    }

    /// The connection ended (end of stream, reset, write error): a clean
    /// close between responses on a used connection, or an `io` failure of
    /// its outstanding requests (a fresh connection, or a partial response).
    pub(super) fn connection_lost(&mut self, i: usize) {
        let c = &self.conns[i];
        if c.h2.as_ref().is_some_and(|s| s.goaway().is_some()) {
            // After GOAWAY: what it could still answer is lost, the rest waits.
            self.fail_streams(i, Instant::now(), FailureKind::Io);
            return self.drop_conn(i, Disconnect::GoAway);
        }
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
    pub(super) fn drop_conn(&mut self, i: usize, why: Disconnect) {
        let now = Instant::now();
        if now >= self.times.end {
            return;
        }
        match why {
            Disconnect::Failed(kind) => self.fail_outstanding(i, now, kind),
            Disconnect::Closed => self.retry_outstanding(i),
            Disconnect::Idle => self.stats.counts.closed_idle += 1,
            Disconnect::Done => self.stats.counts.closed_by_client += 1,
            // Counted when it came; its unprocessed requests keep their place.
            Disconnect::GoAway => {}
        }
        let c = &mut self.conns[i];
        c.unwritten = 0;
        c.h2 = None;
        c.start = 0;
        c.end = 0;
        if let Some(mut stream) = c.stream.take() {
            if matches!(why, Disconnect::Done) {
                stream.close();
            }
            let _ = self.poll.registry().deregister(stream.tcp());
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

    /// Timer work: request and connect timeouts, connect retries, idle
    /// pools' new connections confirmed.
    pub(super) fn scan(&mut self, now: Instant) {
        let timeout = self.load.settings.timeout;
        for i in 0..self.conns.len() {
            let c = &self.conns[i];
            match c.phase {
                Phase::Open => {
                    if c.unconfirmed
                        && c.outstanding.is_empty()
                        && now.saturating_duration_since(c.idle_since) >= ACCEPT_GRACE
                    {
                        // An idle pool's connection, established long enough ago to have been accepted.
                        self.confirm(i);
                        continue;
                    }
                    if c.outstanding.front().is_some_and(|o| now.saturating_duration_since(o.sent) >= timeout) {
                        let on_stream = c.outstanding.front().is_some_and(|o| o.stream != UNASSIGNED);
                        if on_stream && c.h2.as_ref().is_some_and(|s| !s.is_spent()) {
                            // HTTP/2: the streams timed out, not the connection.
                            self.time_out_streams(i, now);
                            continue;
                        }
                        if let Some(session) = &c.h2 {
                            // Bodies the server's window held back: a stall.
                            for o in c.outstanding.iter().filter(|o| session.is_blocked(o.stream)) {
                                self.stats.counts.window_stalls += 1;
                                if let Some(r) = self.by_route.get_mut(o.route) {
                                    r.counts.window_stalls += 1;
                                }
                            }
                        }
                        self.drop_conn(i, Disconnect::Failed(FailureKind::Timeout));
                    }
                }
                Phase::Connecting(since) => {
                    if now.saturating_duration_since(since) >= timeout {
                        if let Some(mut stream) = self.conns[i].stream.take() {
                            let _ = self.poll.registry().deregister(stream.tcp());
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

    /// At the deadline: the requests in flight, written and not answered
    /// (HTTP/2's still waiting for a stream were never written, nor `sent`).
    pub(super) fn count_in_flight(&mut self) {
        let (pools, servers) = (self.pools, &self.servers);
        let written = self.conns.iter().enumerate().flat_map(|(i, c)| {
            let multiplexed = servers[i % pools].2 == Protocol::Http2;
            c.outstanding.iter().filter(move |o| !multiplexed || o.stream != UNASSIGNED)
        });
        self.stats.counts.in_flight_at_deadline = 0;
        for o in written {
            self.stats.counts.in_flight_at_deadline += 1;
            if let Some(r) = self.by_route.get_mut(o.route) {
                r.counts.in_flight_at_deadline += 1;
            }
        }
    }
}
