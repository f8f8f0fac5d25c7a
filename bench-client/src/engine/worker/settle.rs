//! How a request's end is counted: every outcome settles through
//! [`settle`] (HTTP/1.1's responses, HTTP/2's streams, timeouts and
//! failures of a connection alike), and a request written again through
//! [`count_retried`]; in the thread's totals and its route's.

use std::time::{Duration, Instant};

use crate::engine::conn::Outstanding;
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
