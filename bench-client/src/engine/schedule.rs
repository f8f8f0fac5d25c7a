//! The open-loop schedule, and how a load is split over several clients.
//!
//! One schedule at the total rate: request k of the whole run is due at
//! `start + k / rate`. It is dealt out in two steps, each round-robin:
//!
//! 1. over the clients: client `i` of `N` ([`Segment`]) owns the requests
//!    k ≡ i (mod N), so the union of the N clients is the whole schedule;
//! 2. within client `i`, over its `A` engine threads with connections:
//!    thread `t` owns the client's j-th request when j ≡ t (mod A), that is
//!    k = i + (t + m·A)·N: the stream of offset `i + t·N` and stride `A·N`
//!    ([`Segment::stream`]).
//!
//! The rule is exact whatever the thread counts of the clients (they need
//! not be equal), and with one client (i = 0, N = 1) it is the plain
//! dealing of the schedule to the threads in turn: no two requests are due
//! at the same instant, and no client or thread sends in bursts.
//!
//! Connections are dealt the same way: connection c of the total goes to
//! client c mod N ([`Segment::share`]), then within the client to thread
//! c mod T (`engine::run`).

use std::num::NonZeroU32;
use std::time::{Duration, Instant};

/// Which slice of a load split over several clients this client runs:
/// `index` of `count` (`--clients N --segment i`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    index: u32,
    count: NonZeroU32,
}

impl Segment {
    /// The whole load: one client.
    pub const WHOLE: Self = Self { index: 0, count: NonZeroU32::MIN };

    /// Segment `index` of `count`, or `None` unless `index < count`.
    pub fn new(index: u32, count: u32) -> Option<Self> {
        let count = NonZeroU32::new(count)?;
        (index < count.get()).then_some(Self { index, count })
    }

    /// This client's index, from 0.
    pub fn index(self) -> u32 {
        self.index
    }

    /// Clients the load is split over.
    pub fn count(self) -> u32 {
        self.count.get()
    }

    /// This segment's share of `total` items dealt round-robin over the
    /// clients (item c goes to client c mod N): the first `total mod N`
    /// clients get one more. 64 connections over 3 clients: 22, 21, 21.
    pub fn share(self, total: u64) -> u64 {
        let n = u64::from(self.count.get());
        (total + n - 1 - u64::from(self.index)) / n
    }

    /// The open-loop stream `(offset, stride)` of this client's thread `t`
    /// of its `threads` threads with connections (see the module doc).
    pub fn stream(self, t: u64, threads: u64) -> (u64, u64) {
        let n = u64::from(self.count.get());
        (u64::from(self.index) + t * n, threads.max(1) * n)
    }
}

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

    /// Every due time of `threads` threads of `segment` at `rate` within `horizon`.
    fn due_times(start: Instant, rate: f64, segment: Segment, threads: u64, horizon: Duration) -> Vec<Duration> {
        let mut due = Vec::new();
        for t in 0..threads {
            let (offset, stride) = segment.stream(t, threads);
            let s = Schedule::new(start, rate, offset, stride);
            due.extend((0..).map(|j| s.due_at(j) - start).take_while(|&d| d < horizon));
            // What `pending` counts agrees with what `due_at` lists.
            let listed = (0..).take_while(|&j| s.due_at(j) - start < horizon).count() as u64;
            assert_eq!(s.pending(start + horizon - Duration::from_nanos(1)), listed, "{segment:?} thread {t}");
        }
        due
    }

    #[test]
    fn the_union_of_n_clients_schedules_is_one_schedule_at_the_total_rate() {
        let start = Instant::now();
        let horizon = Duration::from_secs(1);
        let one_client = due_times(start, 3000.0, Segment::WHOLE, 1, horizon);
        assert_eq!(one_client.len(), 3000);
        // Three clients with different thread counts (1, 2 and 3): still exact.
        for threads in [[1, 1, 1], [2, 2, 2], [1, 2, 3], [3, 1, 2]] {
            let mut union = Vec::new();
            for (i, &t) in threads.iter().enumerate() {
                let mine = due_times(start, 3000.0, Segment::new(i as u32, 3).unwrap(), t, horizon);
                assert!((999..=1001).contains(&mine.len()), "client {i}: {} requests", mine.len());
                let mut sorted = mine.clone();
                sorted.sort();
                sorted.dedup();
                assert_eq!(sorted.len(), mine.len(), "within client {i}, its {t} threads never send at once");
                union.extend(mine);
            }
            union.sort();
            assert_eq!(union, one_client, "threads per client {threads:?}");
        }
    }

    #[test]
    fn shares_deal_round_robin_and_add_up() {
        let shares: Vec<u64> = (0..3).map(|i| Segment::new(i, 3).unwrap().share(64)).collect();
        assert_eq!(shares, [22, 21, 21]);
        for (total, n) in [(0, 1), (1, 4), (64, 64), (1000, 7), (5, 2)] {
            let sum: u64 = (0..n).map(|i| Segment::new(i, n).unwrap().share(total)).sum();
            assert_eq!(sum, total, "{total} over {n}");
        }
        assert_eq!(Segment::WHOLE.share(64), 64);
        assert_eq!(Segment::new(3, 3), None);
        assert_eq!(Segment::new(0, 0), None);
        let s = Segment::new(2, 3).unwrap();
        assert_eq!((s.index(), s.count()), (2, 3));
        assert_eq!((Segment::WHOLE.index(), Segment::WHOLE.count()), (0, 1));
    }
}
