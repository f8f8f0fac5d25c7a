//! The start of a run, alone or at a barrier shared by several clients.
//!
//! Several clients (on several hosts) start together by waiting for the same
//! realtime instant (`--start-at`): each sleeps until its realtime clock
//! reaches it, re-reading the clock at least every 50 ms so a clock step
//! while waiting is followed, then takes `Instant::now()` once and times the
//! whole run from that instant (warm-up, windows, the open-loop schedule),
//! so a clock step during the run changes nothing. The clocks of the hosts
//! are assumed to agree (NTP keeps them within milliseconds); nothing here
//! can see an offset between them, which is why results record the realtime
//! instant their measured windows began and `merge` compares them.
//!
//! A client that reaches the barrier after it (its preflight or its pod came
//! too late) starts at once if it is within the tolerance, and refuses to
//! measure otherwise: a late client would load the server alone for part of
//! the run and its windows would not line up with the others'.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How far ahead a barrier may be: further is more likely a typo (a wrong
/// day or time zone) than a plan.
pub const MAX_BARRIER_AHEAD: Duration = Duration::from_secs(3600);

/// Longest sleep between two readings of the realtime clock while waiting.
const CLOCK_STEP: Duration = Duration::from_millis(50);

/// When a run starts: the instant its warm-up begins, with the realtime
/// clock at that instant.
#[derive(Debug, Clone, Copy)]
pub struct Start {
    /// The monotonic instant the run is timed from.
    pub instant: Instant,
    /// The realtime clock at `instant`, milliseconds since the Unix epoch.
    pub unix_ms: u64,
    /// The barrier it waited for (`--start-at`), milliseconds since the
    /// Unix epoch; `None` when it started at once.
    pub planned_unix_ms: Option<u64>,
}

impl Start {
    /// Starts now, without a barrier.
    pub fn now() -> Self {
        Self { instant: Instant::now(), unix_ms: unix_ms_now(), planned_unix_ms: None }
    }
}

/// The realtime clock, milliseconds since the Unix epoch (0 before it).
pub fn unix_ms_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A planned start shared by several clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Barrier {
    /// The instant, milliseconds since the Unix epoch.
    pub at_unix_ms: u64,
    /// How late a client may reach it and still start.
    pub tolerance: Duration,
}

/// Why a run did not start at its barrier.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BarrierError {
    /// The client reached the barrier later than the tolerance allows.
    #[error(
        "missed the start barrier by {:.1} s (tolerance {:.1} s); nothing measured",
        late.as_secs_f64(),
        tolerance.as_secs_f64()
    )]
    Missed {
        /// How late it was.
        late: Duration,
        /// The tolerance it exceeded.
        tolerance: Duration,
    },
    /// The barrier is further ahead than [`MAX_BARRIER_AHEAD`].
    #[error("the start barrier is {:.0} s ahead, more than {} s: a wrong date or time zone?", ahead.as_secs_f64(), MAX_BARRIER_AHEAD.as_secs())]
    TooFarAhead {
        /// How far ahead it is.
        ahead: Duration,
    },
    /// The stop flag was set while waiting.
    #[error("interrupted while waiting for the start barrier")]
    Interrupted,
}

impl BarrierError {
    /// Whether the error is the stop flag (Ctrl-C), not a bad barrier.
    pub fn is_interrupted(&self) -> bool {
        matches!(self, Self::Interrupted)
    }
}

impl Barrier {
    /// Whether a client at realtime `now_unix_ms` may still wait for this
    /// barrier: not later than the tolerance, not further ahead than
    /// [`MAX_BARRIER_AHEAD`].
    ///
    /// # Errors
    /// [`BarrierError::Missed`], [`BarrierError::TooFarAhead`].
    pub fn check(&self, now_unix_ms: u64) -> Result<(), BarrierError> {
        let late = Duration::from_millis(now_unix_ms.saturating_sub(self.at_unix_ms));
        if late > self.tolerance {
            return Err(BarrierError::Missed { late, tolerance: self.tolerance });
        }
        let ahead = Duration::from_millis(self.at_unix_ms.saturating_sub(now_unix_ms));
        if ahead > MAX_BARRIER_AHEAD {
            return Err(BarrierError::TooFarAhead { ahead });
        }
        Ok(())
    }

    /// Waits until the realtime clock reaches the barrier and returns the
    /// [`Start`] of the run (at once when it is already past, within the
    /// tolerance).
    ///
    /// # Errors
    /// See [`Barrier::check`], checked on arrival; [`BarrierError::Interrupted`]
    /// when `stop` is set while waiting.
    pub fn wait(&self, stop: &AtomicBool) -> Result<Start, BarrierError> {
        self.check(unix_ms_now())?;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(BarrierError::Interrupted);
            }
            let now = SystemTime::now();
            let at = UNIX_EPOCH + Duration::from_millis(self.at_unix_ms);
            match at.duration_since(now) {
                Ok(left) if !left.is_zero() => std::thread::sleep(left.min(CLOCK_STEP)),
                _ => break,
            }
        }
        let (instant, unix_ms) = (Instant::now(), unix_ms_now());
        Ok(Start { instant, unix_ms, planned_unix_ms: Some(self.at_unix_ms) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_barrier_is_refused_when_missed_or_too_far_ahead() {
        let at = 10_000_000;
        let b = Barrier { at_unix_ms: at, tolerance: Duration::from_millis(100) };
        assert_eq!(b.check(at + 100), Ok(()), "late within the tolerance");
        assert_eq!(b.check(at - 3_600_000), Ok(()), "one hour ahead");
        let missed = b.check(at + 5_000).unwrap_err();
        assert_eq!(missed.to_string(), "missed the start barrier by 5.0 s (tolerance 0.1 s); nothing measured");
        assert!(matches!(b.check(at - 3_600_001), Err(BarrierError::TooFarAhead { .. })));
    }

    #[test]
    fn waiting_ends_at_the_barrier_and_times_the_run_from_there() {
        let at = unix_ms_now() + 300;
        let b = Barrier { at_unix_ms: at, tolerance: Duration::from_millis(100) };
        let start = b.wait(&AtomicBool::new(false)).unwrap();
        assert!(start.unix_ms >= at && start.unix_ms < at + 50, "started {} ms after", start.unix_ms - at);
        assert_eq!(start.planned_unix_ms, Some(at));
        let stopped = Barrier { at_unix_ms: unix_ms_now() + 10_000, tolerance: Duration::ZERO };
        assert_eq!(stopped.wait(&AtomicBool::new(true)).unwrap_err(), BarrierError::Interrupted);
    }
}
