//! The open-loop schedule: one schedule at the total rate, dealt out to
//! the engine threads in turn. Request k of the whole run is due at
//! `start + k / rate`; the thread (stream) `offset` of `stride` streams
//! sends k = offset, offset + stride, offset + 2 × stride, …, so the union
//! of the streams is exactly the one schedule, with no bursts of one
//! request per thread at the same instant.

use std::time::{Duration, Instant};

pub(super) struct Schedule {
    start: Instant,
    /// Nanoseconds between two requests of the whole schedule.
    interval_ns: f64,
    /// This stream's first index.
    offset: u64,
    /// Streams sharing the schedule.
    stride: u64,
    /// This stream's next request (its index among this stream's requests).
    pub(super) next: u64,
}

impl Schedule {
    /// Stream `offset` of `stride` of the schedule at `rate_per_s` from `start`.
    pub(super) fn new(start: Instant, rate_per_s: f64, offset: u64, stride: u64) -> Self {
        Self { start, interval_ns: 1e9 / rate_per_s, offset, stride: stride.max(1), next: 0 }
    }

    /// When this stream's request `j` is due.
    pub(super) fn due_at(&self, j: u64) -> Instant {
        let k = self.offset.saturating_add(j.saturating_mul(self.stride));
        self.start + Duration::from_nanos((k as f64 * self.interval_ns) as u64)
    }

    /// This stream's requests due by `now` and not yet written.
    pub(super) fn pending(&self, now: Instant) -> u64 {
        let elapsed_ns = now.saturating_duration_since(self.start).as_nanos() as f64;
        // Requests of the whole schedule due by now: k = 0 ..= floor(elapsed / interval).
        let due_total = (elapsed_ns / self.interval_ns).floor() as u64 + 1;
        let due = if due_total > self.offset { (due_total - self.offset).div_ceil(self.stride) } else { 0 };
        due.saturating_sub(self.next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_interleave_into_one_schedule() {
        let start = Instant::now();
        let streams: Vec<Schedule> = (0..4).map(|t| Schedule::new(start, 2.0, t, 4)).collect();
        let mut due: Vec<Duration> =
            streams.iter().flat_map(|s| (0..3).map(|j| s.due_at(j) - start).collect::<Vec<_>>()).collect();
        due.sort();
        let expected: Vec<Duration> = (0..12).map(|k| Duration::from_millis(500 * k)).collect();
        assert_eq!(due, expected, "12 requests, one every 500 ms, none at the same instant");
        let at = start + Duration::from_millis(1_600);
        // Due by 1.6 s: k = 0, 1, 2, 3 → one for each stream.
        assert_eq!(streams.iter().map(|s| s.pending(at)).collect::<Vec<_>>(), [1, 1, 1, 1]);
        let at = start + Duration::from_millis(2_000);
        assert_eq!(streams.iter().map(|s| s.pending(at)).collect::<Vec<_>>(), [2, 1, 1, 1], "k = 4 is due at 2 s");
        let one = Schedule::new(start, 1000.0, 0, 1);
        assert_eq!(one.pending(start + Duration::from_secs(1)), 1001);
    }
}
