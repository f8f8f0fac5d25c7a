//! Live counters: what the engine threads have counted so far, for a
//! metrics endpoint to read while the run goes on.
//!
//! Nothing changes per request: each thread keeps counting into its own
//! [`RunStats`] as before, and copies the totals into its own slot of
//! atomics (one cache line pair per thread, relaxed stores: no thread ever
//! writes another's slot) on its timer, every tick (at most 50 ms); the
//! latency buckets, which take a walk over the histogram, once per window
//! and at the end. A reader sums the slots whenever it likes. The figures
//! are a live view, up to one tick old; results come from the final
//! [`RunStats`], exactly.

use std::sync::atomic::{AtomicU64, Ordering};

use hdrhistogram::Histogram;

use super::counters::{COUNTERS, Counts};
use super::stats::{KINDS, RunStats};

/// Upper bounds of the live latency histogram's buckets, seconds (+Inf
/// implied): from 100 µs, since loopback latencies are about 0.1–1 ms and
/// Prometheus's default buckets start at 5 ms.
pub const LIVE_LATENCY_BUCKETS_S: [f64; 14] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5];

/// Buckets including +Inf.
const BUCKETS: usize = LIVE_LATENCY_BUCKETS_S.len() + 1;

/// One engine thread's published totals.
#[derive(Debug, Default)]
#[repr(align(128))]
pub(super) struct Slot {
    /// What the loop counts apart from the declared counters (by [`Extra`]).
    counters: [AtomicU64; EXTRAS],
    /// The declared counters, in the order of [`COUNTERS`].
    counts: [AtomicU64; COUNTERS.len()],
    /// Failures by kind, in the order of [`KINDS`].
    failures: [AtomicU64; KINDS.len()],
    buckets: [AtomicU64; BUCKETS],
    /// Sum of the recorded latencies, microseconds (from the histogram).
    latency_sum_us: AtomicU64,
}

/// What is live beyond the declared counters: indexes into [`Slot::counters`].
#[derive(Clone, Copy)]
#[repr(usize)]
enum Extra {
    WarmupSuccess,
    WarmupFailed,
    Successful,
    InFlight,
    Open,
}
const EXTRAS: usize = Extra::Open as usize + 1;

/// The live counters of one run: a slot per engine thread.
#[derive(Debug)]
pub struct Live {
    slots: Box<[Slot]>,
}

/// The engine threads' totals at one moment (each up to one tick old).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LiveTotals {
    /// The declared counters (those with a live metric are published).
    pub counts: Counts,
    /// Successful requests settled during the warm-up.
    pub warmup_successful: u64,
    /// Failed requests settled during the warm-up.
    pub warmup_failed: u64,
    /// Successful requests in the measured windows.
    pub successful: u64,
    /// Failures by kind, in the order of [`KINDS`] (by status or error
    /// code summed).
    pub failures: [u64; KINDS.len()],
    /// Requests written and not yet settled.
    pub in_flight: u64,
    /// Connections open now.
    pub connections_open: u64,
    /// Successful requests' latency, count per bucket of
    /// [`LIVE_LATENCY_BUCKETS_S`] (not cumulative), the last one +Inf.
    pub latency_buckets: [u64; BUCKETS],
    /// Sum of those latencies, microseconds.
    pub latency_sum_us: u64,
}

impl LiveTotals {
    /// Measured failed requests (the kinds that are requests, but the
    /// warm-up's protocol failures among them).
    pub fn failed(&self) -> u64 {
        let all: u64 = KINDS.iter().zip(self.failures).filter(|(k, _)| k.request).map(|(_, n)| n).sum();
        all.saturating_sub(self.counts.warmup_failed_protocol)
    }
}

impl Live {
    /// Zeroed counters for `threads` engine threads.
    pub fn new(threads: usize) -> Self {
        Self { slots: (0..threads.max(1)).map(|_| Slot::default()).collect() }
    }

    /// Thread `t`'s slot (the last one for any `t` beyond: never out of range).
    pub(super) fn slot(&self, t: usize) -> &Slot {
        &self.slots[t.min(self.slots.len() - 1)]
    }

    /// The sum of every thread's published totals.
    pub fn totals(&self) -> LiveTotals {
        let mut c = [0u64; EXTRAS];
        let mut counts = Counts::default();
        let mut failures = [0u64; KINDS.len()];
        let mut b = [0u64; BUCKETS];
        let mut sum = 0;
        for slot in &self.slots {
            for (total, a) in c.iter_mut().zip(&slot.counters) {
                *total += a.load(Ordering::Relaxed);
            }
            for (spec, a) in COUNTERS.iter().zip(&slot.counts) {
                *counts.get_mut(spec.counter) += a.load(Ordering::Relaxed);
            }
            for (total, a) in failures.iter_mut().zip(&slot.failures) {
                *total += a.load(Ordering::Relaxed);
            }
            for (total, a) in b.iter_mut().zip(&slot.buckets) {
                *total += a.load(Ordering::Relaxed);
            }
            sum += slot.latency_sum_us.load(Ordering::Relaxed);
        }
        LiveTotals {
            counts,
            warmup_successful: c[Extra::WarmupSuccess as usize],
            warmup_failed: c[Extra::WarmupFailed as usize],
            successful: c[Extra::Successful as usize],
            failures,
            in_flight: c[Extra::InFlight as usize],
            connections_open: c[Extra::Open as usize],
            latency_buckets: b,
            latency_sum_us: sum,
        }
    }
}

impl Slot {
    /// Publishes a thread's totals: `stats` so far, with `in_flight`
    /// requests outstanding on `open` connections.
    pub(super) fn publish(&self, stats: &RunStats, in_flight: u64, open: u64) {
        let values = [
            (Extra::WarmupSuccess, stats.counts.warmup_completed - stats.warmup_failed),
            (Extra::WarmupFailed, stats.warmup_failed),
            (Extra::Successful, stats.successful()),
            (Extra::InFlight, in_flight),
            (Extra::Open, open),
        ];
        for (i, v) in values {
            self.counters[i as usize].store(v, Ordering::Relaxed);
        }
        for (spec, a) in COUNTERS.iter().zip(&self.counts) {
            a.store(stats.counts.get(spec.counter), Ordering::Relaxed);
        }
        for (n, a) in stats.failures.by_kind().into_iter().zip(&self.failures) {
            a.store(n, Ordering::Relaxed);
        }
    }

    /// Publishes the latency buckets of `h` (a walk over its counts: once
    /// per window, not per tick).
    pub(super) fn publish_latency(&self, h: &Histogram<u64>) {
        let mut counts = [0u64; BUCKETS];
        let mut sum = 0u64;
        for v in h.iter_recorded() {
            let value = h.median_equivalent(v.value_iterated_to());
            let n = v.count_at_value();
            sum = sum.saturating_add(value.saturating_mul(n));
            let s = value as f64 / 1e6;
            let k = LIVE_LATENCY_BUCKETS_S.iter().position(|&le| s <= le).unwrap_or(BUCKETS - 1);
            counts[k] += n;
        }
        for (a, n) in self.buckets.iter().zip(counts) {
            a.store(n, Ordering::Relaxed);
        }
        self.latency_sum_us.store(sum, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::FailureKind;

    #[test]
    fn totals_add_the_threads_slots_and_bucket_the_latencies() {
        let live = Live::new(2);
        let mut a = RunStats::new(1, false);
        for us in [50, 100, 300, 2_000, 9_000_000] {
            a.record_success(0, us, us);
        }
        a.record_failure(Some(0), FailureKind::Status(503));
        a.record_failure(None, FailureKind::Connect);
        a.record_failure(None, FailureKind::Stray);
        a.record_failure(None, FailureKind::Stray);
        a.record_failure(Some(0), FailureKind::Reset(7));
        a.record_failure(Some(0), FailureKind::Reset(2));
        a.record_failure(Some(0), FailureKind::Tls);
        a.counts.sent = 12;
        a.counts.warmup_completed = 3;
        a.counts.reconnects = 5;
        a.warmup_failed = 1;
        let mut b = RunStats::new(1, false);
        b.record_success(0, 120, 120);
        b.counts.sent = 2;
        live.slot(0).publish(&a, 1, 4);
        live.slot(0).publish_latency(&a.latency_us);
        live.slot(1).publish(&b, 1, 4);
        live.slot(1).publish_latency(&b.latency_us);
        live.slot(7).publish(&b, 1, 4); // beyond the last: the last slot, again
        let t = live.totals();
        let kind = |name: &str| t.failures[KINDS.iter().position(|k| k.name == name).unwrap()];
        assert_eq!(
            (t.counts.sent, t.counts.reconnects, t.successful, t.failed(), kind("connect"), kind("stray")),
            (14, 5, 6, 4, 1, 2),
            "connect and stray are connections', not failed requests"
        );
        assert_eq!(kind("tls"), 1, "a TLS failure is live too");
        assert_eq!((t.warmup_successful, t.warmup_failed, t.in_flight, t.connections_open), (2, 1, 2, 8));
        assert_eq!(kind("reset"), 2, "HTTP/2 resets, every error code");
        // 50 and 100 µs ≤ 100 µs; 120 ≤ 250 µs; 300 ≤ 500 µs; 2 ms ≤ 2.5 ms; 9 s: +Inf.
        assert_eq!(t.latency_buckets, [2, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(t.latency_buckets.iter().sum::<u64>(), t.successful);
        let exact: u64 = [50, 100, 300, 2_000, 9_000_000, 120].iter().sum();
        assert!(t.latency_sum_us.abs_diff(exact) <= exact / 500, "{} vs {exact}", t.latency_sum_us);
    }
}
