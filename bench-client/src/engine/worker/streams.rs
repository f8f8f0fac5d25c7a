//! The per-request path of an HTTP/2 connection: requests given streams
//! within what the server grants, and what its session read settled:
//! responses verified against their route (status and body, as HTTP/1.1's
//! are) in the order they complete, streams the server reset failed by
//! error code (but `REFUSED_STREAM`: not processed, written again), and
//! after `GOAWAY` the requests it did not process written again on the
//! next connection.

use std::time::Instant;

use super::{Read, Worker, count_retried, settle};
use crate::engine::conn::{Disconnect, UNASSIGNED};
use crate::engine::http2::{Event, Routes};
use crate::engine::stats::FailureKind;

/// `RST_STREAM`'s `REFUSED_STREAM`: the server did not process the stream.
const REFUSED_STREAM: u32 = 0x7;

impl Worker<'_> {
    /// Gives streams to connection `i`'s requests waiting for one, oldest
    /// first, while its session may open more.
    pub(super) fn open_streams(&mut self, i: usize, now: Instant) {
        let routes = Routes { requests: &self.requests, expected: &self.expected };
        let c = &mut self.conns[i];
        let Some(session) = c.h2.as_mut() else { return };
        let first = c.outstanding.partition_point(|o| o.stream != UNASSIGNED);
        for o in c.outstanding.range_mut(first..) {
            if !session.can_open() {
                break;
            }
            o.stream = session.open(o.route, routes);
            o.sent = now;
            // Written now: sent (again, for a request retried).
            self.unsent -= 1;
            self.stats.counts.sent += 1;
            if let Some(r) = self.by_route.get_mut(o.route) {
                r.counts.sent += 1;
            }
        }
        c.unwritten = session.unwritten().len();
    }

    /// HTTP/2: the requests of connection `i` on a stream written `timeout`
    /// or more before `now` fail as timeouts, each stream reset
    /// (`RST_STREAM(CANCEL)`), and the connection goes on: one stalled
    /// stream is its own timeout, not its neighbours'. The freed streams go
    /// to the requests waiting for one.
    pub(super) fn time_out_streams(&mut self, i: usize, now: Instant) {
        let (timeout, window) = (self.load.settings.timeout, self.window_of(now));
        let c = &mut self.conns[i];
        let Some(session) = c.h2.as_mut() else { return };
        let mut k = 0;
        while k < c.outstanding.len() {
            let o = c.outstanding[k];
            if o.stream == UNASSIGNED || now.saturating_duration_since(o.sent) < timeout {
                k += 1;
                continue;
            }
            if session.is_blocked(o.stream) {
                // Its body held back by the server's window: a stall.
                self.stats.counts.window_stalls += 1;
                if let Some(r) = self.by_route.get_mut(o.route) {
                    r.counts.window_stalls += 1;
                }
            }
            session.cancel(o.stream);
            c.outstanding.remove(k);
            settle(&mut self.stats, &mut self.by_route, &o, window, Err(FailureKind::Timeout), now);
        }
        self.open_streams(i, now);
        if self.conns[i].unwritten > 0 {
            self.flush(i);
        }
    }

    /// Hands what connection `i` read to its session and settles what it
    /// says, as of `read`; then decides the connection's fate.
    pub(super) fn settle_streams(&mut self, i: usize, read: Read) {
        let Read { done, eof, .. } = read;
        let routes = Routes { requests: &self.requests, expected: &self.expected };
        let c = &mut self.conns[i];
        let Some(session) = c.h2.as_mut() else { return };
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        match session.receive(&c.buf[c.start..c.end], routes, &mut events) {
            Ok(n) => c.start += n,
            Err(_) => {
                self.events = events;
                return self.drop_conn(i, Disconnect::Failed(FailureKind::Protocol));
            }
        }
        if c.start == c.end {
            c.start = 0;
            c.end = 0;
        }
        let served = c.served;
        let (ready, requeued) = self.settle_events(i, &events, read);
        self.events = events;
        let c = &mut self.conns[i];
        c.answered(served, done, &mut self.stats.counts);
        let on_streams = c.outstanding.front().is_some_and(|o| o.stream != UNASSIGNED);
        let limit_reached = self.load.settings.requests_per_connection.is_some_and(|n| c.served >= n.get() as u64);
        if c.h2.as_ref().is_some_and(|s| s.is_spent()) && !on_streams {
            // Nothing left it may answer (GOAWAY), or no stream id left: the
            // rest goes on a new connection.
            self.drop_conn(i, Disconnect::GoAway);
        } else if eof {
            self.connection_lost(i);
        } else if limit_reached && c.outstanding.is_empty() {
            self.drop_conn(i, Disconnect::Done);
        } else if ready || requeued || c.served != served {
            self.answered.push(i);
        } else if c.unwritten > 0 || c.h2.as_ref().is_some_and(|s| !s.unwritten().is_empty()) {
            self.flush(i);
        }
    }

    /// Settles what connection `i`'s session said in `events`, as of `read`:
    /// responses and resets settle their requests, `GOAWAY` and
    /// `REFUSED_STREAM` put requests back for a new stream. Whether the
    /// session became ready, and whether a request was put back on this
    /// connection.
    #[inline]
    fn settle_events(&mut self, i: usize, events: &[Event], read: Read) -> (bool, bool) {
        let Read { done, window, written_too_early, .. } = read;
        let c = &mut self.conns[i];
        let (mut ready, mut requeued) = (false, false);
        for &event in events {
            let (stream, outcome) = match event {
                Event::Ready => {
                    ready = true;
                    continue;
                }
                Event::Stray { .. } => {
                    // Bytes of no response: counted as HTTP/1.1's stray bytes are.
                    self.stats.record_failure(None, FailureKind::Stray);
                    continue;
                }
                Event::GoAway { last_stream, code, first } => {
                    // A connection ended by GOAWAY, once, whatever its phases.
                    self.stats.counts.goaway_received += u64::from(first);
                    if code != 0 {
                        // A connection error the server reports, named by its code.
                        self.stats.record_failure(None, FailureKind::GoAway(code));
                    }
                    // Streams above its last were not processed: written
                    // again, on the next connection.
                    for o in c.outstanding.iter_mut().filter(|o| o.stream != UNASSIGNED && o.stream > last_stream) {
                        o.stream = UNASSIGNED;
                        self.unsent += 1;
                        count_retried(&mut self.stats, &mut self.by_route, o.route);
                    }
                    continue;
                }
                Event::Reset { stream, code: REFUSED_STREAM } => {
                    // Not processed (RFC 9113 8.7): written again, as GOAWAY's unprocessed streams.
                    if let Ok(k) = c.outstanding.binary_search_by_key(&stream, |o| o.stream) {
                        let mut o = c.outstanding.remove(k).expect("found above");
                        o.stream = UNASSIGNED;
                        c.outstanding.push_back(o);
                        self.unsent += 1;
                        count_retried(&mut self.stats, &mut self.by_route, o.route);
                        requeued = true;
                    }
                    continue;
                }
                Event::Reset { stream, code } => (stream, Err(FailureKind::Reset(code))),
                Event::Response { stream, status, body_matches } => (stream, Ok((status, body_matches))),
            };
            let Ok(k) = c.outstanding.binary_search_by_key(&stream, |o| o.stream) else { continue };
            let request = c.outstanding.remove(k).expect("found above");
            let (expected_status, _, _) = self.expected[request.route];
            let outcome = match outcome {
                // Answered after its deadline: a timeout, whatever it says.
                _ if written_too_early.is_some_and(|t| request.sent <= t) => Err(FailureKind::Timeout),
                Ok((status, _)) if status != expected_status => Err(FailureKind::Status(status)),
                Ok((_, false)) => Err(FailureKind::Body),
                Ok((_, true)) => Ok(()),
                Err(kind) => Err(kind),
            };
            settle(&mut self.stats, &mut self.by_route, &request, window, outcome, done);
            c.served += 1;
            if std::mem::take(&mut c.unconfirmed) {
                self.unconfirmed -= 1;
            }
        }
        (ready, requeued)
    }
}
