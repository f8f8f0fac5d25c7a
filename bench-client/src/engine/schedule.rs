//! The open-loop schedule of one engine thread.

use std::time::{Duration, Instant};

/// Open-loop schedule of one thread: its request k is due at
/// `start + k × interval`.
pub(super) struct Schedule {
    pub(super) start: Instant,
    pub(super) interval_ns: u128,
    /// Index of the next request to write.
    pub(super) next: u64,
}

impl Schedule {
    pub(super) fn due_at(&self, k: u64) -> Instant {
        let ns = u128::from(k) * self.interval_ns;
        self.start + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// Requests due by `now` and not yet written.
    pub(super) fn pending(&self, now: Instant) -> u64 {
        let since = now.saturating_duration_since(self.start).as_nanos();
        let due = u64::try_from(since / self.interval_ns + 1).unwrap_or(u64::MAX);
        due.saturating_sub(self.next)
    }
}
