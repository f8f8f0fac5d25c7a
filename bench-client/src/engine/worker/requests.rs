//! The per-request path of a worker: requests queued and written, due
//! open-loop requests handed to free connections, responses read, framed,
//! verified against their route's body and settled in their window.

use std::io::ErrorKind;
use std::time::Instant;

use super::{Read, Worker, settle};
use crate::engine::conn::{Disconnect, Outstanding, Phase, UNASSIGNED};
use crate::engine::counters::Counts;
use crate::engine::schedule::Schedule;
use crate::engine::stats::FailureKind;
use crate::engine::tls::is_tls_failure;
use crate::engine::{LATE_SEND_TOLERANCE, Protocol, Shape, http1};

impl Worker<'_> {
    /// Queues as many requests as the mode allows on connection `i` and
    /// writes them.
    pub(super) fn refill(&mut self, i: usize, now: Instant) {
        if now >= self.times.end {
            // No request is written after the deadline (nor due: the schedule ends there);
            // HTTP/2's own frames still are (a stream answered early ended, a window given back).
            if self.conns[i].h2.as_ref().is_some_and(|s| !s.unwritten().is_empty()) {
                self.flush(i);
            }
            return;
        }
        let pipeline = self.load.settings.pipeline.get();
        let route_now = self.route_at(now);
        if self.pools > 1 && i % self.pools != route_now {
            // Another server's slice: this pool idles. HTTP/2 requests it
            // queued in its own slice go out now: they waited for the
            // server's SETTINGS (left for the pool's next slice, they timed
            // out when a slow handshake outlasted the slice).
            if self.conns[i].h2.is_some() {
                self.open_streams(i, now);
                if self.conns[i].unwritten > 0 {
                    self.flush(i);
                }
            }
            return;
        }
        let c = &mut self.conns[i];
        // HTTP/2: every request is on a stream of its own, with its route.
        let multiplexed = c.h2.is_some();
        if c.unwritten == 0 || multiplexed {
            c.route = route_now;
        }
        let route = c.route;
        let mut room = c.room(pipeline, self.load.settings.requests_per_connection);
        if let Some(quota) = self.quota {
            // Measured successes and requests in flight stay within the quota.
            let taken = self.stats.succeeded_or_in_flight() + self.unsent;
            room = room.min(usize::try_from(quota.saturating_sub(taken)).unwrap_or(usize::MAX));
        }
        let n = match &self.schedule {
            None => room,
            Some(s) => room.min(usize::try_from(s.pending(now)).unwrap_or(usize::MAX)),
        };
        for _ in 0..n {
            let due = match &mut self.schedule {
                None => now,
                Some(s) => take_due(s, now, self.times.measure_start, self.starved_since, &mut self.stats.counts),
            };
            let stream = if multiplexed { UNASSIGNED } else { 0 };
            c.outstanding.push_back(Outstanding { due, sent: now, route, stream });
        }
        if multiplexed {
            // `sent` once written on a stream of its own (`open_streams`).
            self.unsent += n as u64;
        } else {
            self.stats.counts.sent += n as u64;
            if let Some(r) = self.by_route.get_mut(route) {
                r.counts.sent += n as u64;
            }
            c.unwritten += n * self.request_lens[route];
        }
        self.note_room(i, pipeline, now);
        if multiplexed {
            // Streams for the requests waiting, within what the server grants.
            self.open_streams(i, now);
        }
        if self.conns[i].unwritten > 0 {
            self.flush(i);
        }
    }

    /// Open loop: lists connection `i` as free while it has room for another
    /// request (below the pipeline, and below its last request when it has
    /// one: else `dispatch` would hand it due requests it cannot take, for
    /// ever); once no connection has, notes since when.
    #[inline]
    fn note_room(&mut self, i: usize, pipeline: usize, now: Instant) {
        if self.schedule.is_none() {
            return;
        }
        let c = &mut self.conns[i];
        if c.room(pipeline, self.load.settings.requests_per_connection) > 0 && !c.listed_free {
            c.listed_free = true;
            self.free.push_back(i);
            self.starved_since = None;
        } else if self.free.is_empty() {
            // The last connection with room is taken.
            self.starved_since.get_or_insert(now);
        }
    }

    /// Open loop: hands requests that are due to free connections.
    pub(super) fn dispatch(&mut self, now: Instant) {
        while self.schedule.as_ref().is_some_and(|s| s.pending(now) > 0) {
            let Some(i) = self.free.pop_front() else {
                // Due, and no connection has room: each waits on the server.
                self.starved_since.get_or_insert(now);
                return;
            };
            self.conns[i].listed_free = false;
            if matches!(self.conns[i].phase, Phase::Open) {
                self.refill(i, now);
            }
        }
    }

    /// Writes queued request bytes until the socket would block.
    pub(super) fn flush(&mut self, i: usize) {
        let c = &mut self.conns[i];
        let Some(stream) = c.stream.as_mut() else { return };
        if stream.write_pending().is_err() {
            return self.connection_lost(i);
        }
        if let Some(session) = c.h2.as_mut() {
            while !session.unwritten().is_empty() {
                match stream.write(session.unwritten()) {
                    Ok(0) => return self.connection_lost(i),
                    Ok(n) => session.wrote(n),
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(_) => return self.connection_lost(i),
                }
            }
            c.unwritten = session.unwritten().len();
            return;
        }
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
    pub(super) fn on_readable(&mut self, i: usize, read_closed: bool) {
        let protocol = self.servers[i % self.pools].2;
        let Some(eof) = self.read_available(i, read_closed) else { return };
        let done = Instant::now();
        if done >= self.times.end {
            return;
        }
        let window = self.window_of(done);
        // A request written at or before this instant is answered after its
        // deadline (one subtraction per read, a comparison per response).
        let read = Read { done, window, written_too_early: done.checked_sub(self.load.settings.timeout), eof };
        match protocol {
            Protocol::Http1 => self.settle_responses(i, read),
            Protocol::Http2 => self.settle_streams(i, read),
        }
    }

    /// Reads what connection `i`'s socket holds into its buffer (grown or
    /// compacted as needed): `Some(true)` when the peer closed (or the read
    /// failed), `Some(false)` when the socket would block; `None` when the
    /// connection is gone (none, or its TLS failed and it was dropped).
    #[inline]
    fn read_available(&mut self, i: usize, read_closed: bool) -> Option<bool> {
        let c = &mut self.conns[i];
        let stream = c.stream.as_mut()?;
        let short_read_drains = stream.short_read_drains();
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
                Ok(0) => return Some(true),
                Ok(n) => {
                    c.end += n;
                    // A short read emptied the socket; edge-triggered epoll
                    // reports the next arrival. When the peer has closed,
                    // read on to see the end of stream now.
                    if c.end < c.buf.len() && !read_closed && short_read_drains {
                        return Some(false);
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Some(false),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if is_tls_failure(&e) => {
                    self.drop_conn(i, Disconnect::Failed(FailureKind::Tls));
                    return None;
                }
                Err(_) => return Some(true),
            }
        }
    }

    /// HTTP/1.1: settles every complete response in connection `i`'s buffer,
    /// in the order its requests were written, as of `read`, then decides
    /// the connection's fate: on, closed, lost or done.
    #[inline]
    fn settle_responses(&mut self, i: usize, read: Read) {
        let Read { done, window, written_too_early, eof } = read;
        let c = &mut self.conns[i];
        let mut closing = false;
        // Bytes that belong to no response (RFC 9112 §6.3): with no request
        // outstanding, whatever they are (with pipelining, bytes after a
        // response start the next one, or fail its request as `protocol`).
        let mut stray = false;
        let served = c.served;
        while c.start < c.end {
            if c.outstanding.is_empty() {
                stray = true;
                break;
            }
            let unread = &c.buf[c.start..c.end];
            let route = c.outstanding.front().map_or(0, |o| o.route);
            let framed = match http1::frame_response(unread, self.expected[route].2, eof) {
                Ok(Some(framed)) => framed,
                Ok(None) => break,
                Err(_) => return self.drop_conn(i, Disconnect::Failed(FailureKind::Protocol)),
            };
            let request = c.outstanding.pop_front().expect("a request is outstanding: looked at above");
            let outcome = if written_too_early.is_some_and(|t| request.sent <= t) {
                // Answered after its deadline: a timeout, whatever it says.
                Err(FailureKind::Timeout)
            } else {
                let (status, body, _) = self.expected[request.route];
                response_outcome(&framed, unread, status, body, self.shapes[request.route], &mut self.scratch)
            };
            settle(&mut self.stats, &mut self.by_route, &request, window, outcome, done);
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
        // After a response that closes, nothing more may come (RFC 9112 §9.6).
        stray |= closing && c.start < c.end;
        if c.start == c.end {
            c.start = 0;
            c.end = 0;
        }
        // After its last response, an end of stream read with it is judged from `done`.
        c.answered(served, done, &mut self.stats.counts);
        let limit_reached = self.load.settings.requests_per_connection.is_some_and(|n| c.served >= n.get() as u64);
        if stray {
            let route = c.route;
            for stats in std::iter::once(&mut self.stats).chain(self.by_route.get_mut(route)) {
                stats.record_failure(None, FailureKind::Stray);
            }
            // Its requests, if any (after a close), are written again as after any close.
            self.drop_conn(i, if closing { Disconnect::Closed } else { Disconnect::Failed(FailureKind::Protocol) });
        } else if closing {
            self.drop_conn(i, Disconnect::Closed);
        } else if eof {
            self.connection_lost(i);
        } else if limit_reached && c.outstanding.is_empty() {
            self.drop_conn(i, Disconnect::Done);
        } else {
            self.answered.push(i);
        }
    }
}

/// What a response framed in `unread` settles its request as: a status other
/// than `expected_status` fails as `status`; then the body (behind
/// middleware: the shape's headers, coding and body) other than
/// `expected_body` fails as `body`.
#[inline]
fn response_outcome(
    framed: &http1::Framed,
    unread: &[u8],
    expected_status: u16,
    expected_body: &[u8],
    shape: &Shape,
    scratch: &mut Vec<u8>,
) -> Result<(), FailureKind> {
    if framed.status != expected_status {
        Err(FailureKind::Status(framed.status))
    } else if shape.is_plain() {
        if framed.body_eq(unread, expected_body) { Ok(()) } else { Err(FailureKind::Body) }
    } else {
        let (fields, body) = (framed.fields(unread), framed.body(unread));
        shape.check(&fields, &body, expected_body, scratch).map_err(|_| FailureKind::Body)
    }
}

/// Open loop: takes the next request due from `schedule`, written at `now`:
/// written in the measured windows (from `measure_start`) more than the
/// tolerance after it was due, it is a late send, whatever phase it was due
/// in; due while every connection was taken (since `starved_since`), the
/// server's latency held it. When it was due.
#[inline]
fn take_due(
    schedule: &mut Schedule,
    now: Instant,
    measure_start: Instant,
    starved_since: Option<Instant>,
    counts: &mut Counts,
) -> Instant {
    let due = schedule.due_at(schedule.next);
    schedule.next += 1;
    if now >= measure_start && now.saturating_duration_since(due) > LATE_SEND_TOLERANCE {
        counts.late_sends += 1;
        if starved_since.is_some_and(|since| due >= since) {
            counts.waited_on_server += 1;
        }
    }
    due
}
