//! The start of a run, alone or at a barrier shared by several clients.
//!
//! Several clients (on several hosts) start together by waiting for the same
//! realtime instant (`--start-at`): each sleeps until its realtime clock
//! reaches it, reading both clocks at least every 50 ms, then takes
//! `Instant::now()` once and times the whole run from that instant (warm-up,
//! windows, deadlines, the open-loop schedule, all on the monotonic clock),
//! so a clock step during the run changes nothing. A step of the realtime
//! clock while waiting (one clock advancing more than [`STEP_TOLERANCE`]
//! beyond the other between two readings) is refused: this client's idea
//! of the instant moved, so it would no longer start with the others. The clocks of the hosts
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

/// Longest sleep between two readings of the clocks while waiting.
const CLOCK_STEP: Duration = Duration::from_millis(50);

/// How far the realtime clock may run ahead of or behind the monotonic clock
/// between two readings while waiting; beyond, it stepped. (NTP's slewing
/// moves it by at most 0.5 ms per second.)
pub const STEP_TOLERANCE: Duration = Duration::from_millis(50);

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
    unix_ms_of(SystemTime::now())
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
    /// The realtime clock stepped while waiting: the barrier it waited for
    /// is no longer the others' instant.
    #[error(
        "the realtime clock stepped {} by {:.3} s while waiting for the start barrier (beyond {} ms of the monotonic clock); nothing measured",
        if *forward { "forward" } else { "back" },
        by.as_secs_f64(),
        STEP_TOLERANCE.as_millis()
    )]
    Stepped {
        /// How far it stepped beyond the monotonic clock.
        by: Duration,
        /// Whether it stepped forward (ahead of the monotonic clock).
        forward: bool,
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
    /// tolerance), watching the realtime clock against the monotonic one.
    ///
    /// # Errors
    /// See [`Barrier::check`], checked before waiting and on arrival;
    /// [`BarrierError::Stepped`] when the realtime clock steps while waiting;
    /// [`BarrierError::Interrupted`] when `stop` is set while waiting.
    pub fn wait(&self, stop: &AtomicBool) -> Result<Start, BarrierError> {
        self.wait_with(stop, SystemTime::now)
    }

    /// [`Barrier::wait`], reading the realtime clock with `realtime`.
    fn wait_with(&self, stop: &AtomicBool, realtime: impl Fn() -> SystemTime) -> Result<Start, BarrierError> {
        let at = UNIX_EPOCH + Duration::from_millis(self.at_unix_ms);
        let mut last = read_clocks(&realtime);
        self.check(unix_ms_of(last.1))?;
        loop {
            if stop.load(Ordering::Relaxed) {
                return Err(BarrierError::Interrupted);
            }
            let now = read_clocks(&realtime);
            check_step(last, now)?;
            last = now;
            match at.duration_since(now.1) {
                Ok(left) if !left.is_zero() => std::thread::sleep(left.min(CLOCK_STEP)),
                _ => break,
            }
        }
        self.check(unix_ms_of(last.1))?;
        Ok(Start { instant: last.0, unix_ms: unix_ms_of(last.1), planned_unix_ms: Some(self.at_unix_ms) })
    }
}

/// The realtime clock, milliseconds since the Unix epoch (0 before it).
fn unix_ms_of(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Both clocks at one moment: the realtime reading between two monotonic
/// ones no further apart than 1 ms (read again when this thread was
/// preempted between them, a few times at most), so a preemption is not
/// taken for a step.
fn read_clocks(realtime: &impl Fn() -> SystemTime) -> (Instant, SystemTime) {
    let mut tries = 0;
    loop {
        let (before, real, after) = (Instant::now(), realtime(), Instant::now());
        let spread = after.duration_since(before);
        tries += 1;
        if spread < Duration::from_millis(1) || tries == 5 {
            return (before + spread / 2, real);
        }
    }
}

/// Whether the realtime clock kept pace with the monotonic one from reading
/// `before` to reading `after`, each a pair (monotonic, realtime).
fn check_step(before: (Instant, SystemTime), after: (Instant, SystemTime)) -> Result<(), BarrierError> {
    let monotonic = after.0.duration_since(before.0);
    let (realtime, forward) = match after.1.duration_since(before.1) {
        Ok(ahead) => (ahead, true),
        Err(back) => (back.duration(), false),
    };
    let (by, forward) = match (forward, realtime.checked_sub(monotonic)) {
        (true, Some(ahead)) => (ahead, true),
        (true, None) => (monotonic - realtime, false),
        (false, _) => (realtime + monotonic, false),
    };
    if by > STEP_TOLERANCE { Err(BarrierError::Stepped { by, forward }) } else { Ok(()) }
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

    #[test]
    fn a_step_of_the_realtime_clock_while_waiting_is_refused_naming_it() {
        use std::sync::atomic::AtomicU64;
        // The realtime clock jumps 30 s ahead at the third reading, while
        // the barrier is still 2 s away.
        let at = unix_ms_now() + 2_000;
        let b = Barrier { at_unix_ms: at, tolerance: Duration::from_millis(100) };
        let readings = AtomicU64::new(0);
        let stepped = || {
            let n = readings.fetch_add(1, Ordering::Relaxed);
            SystemTime::now() + if n >= 2 { Duration::from_secs(30) } else { Duration::ZERO }
        };
        let err = b.wait_with(&AtomicBool::new(false), stepped).unwrap_err();
        let BarrierError::Stepped { by, forward: true } = err else { panic!("{err:?}") };
        assert!(by > Duration::from_millis(29_900) && by < Duration::from_millis(30_100), "{by:?}");
        assert!(err.to_string().starts_with("the realtime clock stepped forward by 30.0"), "{err}");
        let back = check_step(
            (Instant::now(), SystemTime::now()),
            (Instant::now(), SystemTime::now() - Duration::from_secs(5)),
        );
        assert!(matches!(back, Err(BarrierError::Stepped { forward: false, .. })), "{back:?}");
        assert_eq!(check_step((Instant::now(), SystemTime::now()), (Instant::now(), SystemTime::now())), Ok(()));
    }
}
