//! How a request's end is counted: every outcome settles through
//! [`settle`] (HTTP/1.1's responses, HTTP/2's streams, timeouts and
//! failures of a connection alike), and a request written again through
//! [`count_retried`]; in the thread's totals and its route's. At the loop's
//! end, what never settled is counted ([`Worker::settle_end`]).

use std::time::{Duration, Instant};

use super::Worker;
use crate::engine::conn::{Outstanding, UNASSIGNED};
use crate::engine::stats::{FailureKind, RunStats};

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// Counts `request`, settled at `done` with `outcome`, in the thread's
/// totals and its route's: a success or a failure of `window`, or, in the
/// warm-up (`None`), a completed warm-up request (a protocol failure also
/// among the failures, whatever the phase). The one place HTTP/1.1's
/// responses and HTTP/2's streams are counted.
#[inline]
pub(super) fn settle(
    stats: &mut RunStats,
    by_route: &mut [RunStats],
    request: &Outstanding,
    window: Option<usize>,
    outcome: Result<(), FailureKind>,
    done: Instant,
) {
    for stats in std::iter::once(stats).chain(by_route.get_mut(request.route)) {
        match (window, outcome) {
            (None, Ok(())) => stats.counts.warmup_completed += 1,
            (None, Err(kind)) => {
                stats.counts.warmup_completed += 1;
                stats.warmup_failed += 1;
                // The server broke a rule of the protocol: reported whatever
                // the phase (the warm-up discards times, not broken rules).
                if kind == FailureKind::Protocol {
                    stats.counts.warmup_failed_protocol += 1;
                    stats.record_failure(None, kind);
                }
            }
            (Some(w), Ok(())) => stats.record_success(w, micros(done - request.due), micros(done - request.sent)),
            (Some(w), Err(kind)) => stats.record_failure(Some(w), kind),
        }
    }
}

/// A request written again on a new stream or connection, after the server
/// closed, reset or refused what it was written on: counted as retried in the
/// thread's totals and its route's.
#[inline]
pub(super) fn count_retried(stats: &mut RunStats, by_route: &mut [RunStats], route: usize) {
    stats.counts.retried += 1;
    if let Some(r) = by_route.get_mut(route) {
        r.counts.retried += 1;
    }
}

impl Worker<'_> {
    /// At the loop's end (`early`: stopped or its quota reached before the
    /// deadline): the ramp judged if it was not yet, the requests still in
    /// flight and, in the open loop, those never sent counted; the instant
    /// it stopped.
    pub(super) fn settle_end(&mut self, early: bool) -> Instant {
        if !early && self.ramp_check.is_some() {
            // One window and no warm-up: the ramp is judged at the deadline.
            self.count_short_slots();
        }
        let stopped_at = Instant::now().min(self.times.end);
        self.count_in_flight();
        // HTTP/2: the streams still open are reset before the connections close, so that none is
        // left open (answered, never ended by the client) on the server's side.
        // Best effort, once: what is measured is settled already.
        for c in &mut self.conns {
            let (Some(session), Some(stream)) = (c.h2.as_mut(), c.stream.as_mut()) else { continue };
            for o in c.outstanding.iter().filter(|o| o.stream != UNASSIGNED) {
                session.cancel(o.stream);
            }
            if !session.unwritten().is_empty() && stream.write_pending().is_ok() {
                let _ = stream.write(session.unwritten());
                let _ = stream.write_pending();
            }
        }
        if let Some(s) = &self.schedule {
            let unsent = s.pending(stopped_at);
            // HTTP/2: taken from the schedule, still waiting for a stream (or to be written again).
            self.stats.counts.unsent_at_deadline += unsent + self.unsent;
            if let Some(since) = self.starved_since {
                // Due after the last connection was taken: waiting on the server.
                self.stats.counts.waited_on_server +=
                    (s.next..s.next + unsent).filter(|&k| s.due_at(k) >= since).count() as u64;
            }
        }
        stopped_at
    }
}
