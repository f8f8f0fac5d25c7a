//! A run's timing, checked once: warm-up, measured duration and window
//! (within the limits the loop and the results file can hold), and an
//! open-loop rate.

use std::time::Duration;

/// Shortest window: the loop's timer and the CPU sampler work in
/// milliseconds, and a window shorter than a round trip measures nothing.
pub const MIN_WINDOW: Duration = Duration::from_millis(1);
/// Most windows one run may have: each costs a counter per engine thread and
/// route, a CPU sample and a value in the results file.
pub const MAX_WINDOWS: usize = 100_000;
/// Longest measured duration, and longest warm-up: a day.
pub const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);

/// Warm-up, measured duration and window length of a run, checked once:
/// the window is at least [`MIN_WINDOW`] and divides the duration into at
/// most [`MAX_WINDOWS`] windows; duration and warm-up are at most
/// [`MAX_DURATION`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    warmup: Duration,
    duration: Duration,
    window: Duration,
}

/// Why a [`Timing`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimingError {
    /// The duration is not a whole number of windows.
    #[error("the measured duration {duration} is not a whole number of windows of {window}")]
    NotWholeWindows {
        /// The duration, as humantime prints it.
        duration: String,
        /// The window, as humantime prints it.
        window: String,
    },
    /// The window is shorter than [`MIN_WINDOW`].
    #[error("a window of {window} is shorter than {}", humantime::format_duration(MIN_WINDOW))]
    WindowTooShort {
        /// The window, as humantime prints it.
        window: String,
    },
    /// More than [`MAX_WINDOWS`] windows.
    #[error("{windows} windows are more than {MAX_WINDOWS}: make the window longer")]
    TooManyWindows {
        /// How many the duration holds.
        windows: u128,
    },
    /// A duration or warm-up over [`MAX_DURATION`].
    #[error("{what} {value} is longer than {}", humantime::format_duration(MAX_DURATION))]
    TooLong {
        /// `duration` or `warm-up`.
        what: &'static str,
        /// The value, as humantime prints it.
        value: String,
    },
}

impl Timing {
    /// `warmup` discarded, then `duration` measured in windows of `window`.
    ///
    /// # Errors
    /// [`TimingError`]: a window shorter than [`MIN_WINDOW`], longer than
    /// `duration` or not dividing it, over [`MAX_WINDOWS`] windows, or a
    /// duration or warm-up over [`MAX_DURATION`].
    pub fn new(warmup: Duration, duration: Duration, window: Duration) -> Result<Self, TimingError> {
        let text = |d: Duration| humantime::format_duration(d).to_string();
        if window < MIN_WINDOW {
            return Err(TimingError::WindowTooShort { window: text(window) });
        }
        for (what, value) in [("the duration", duration), ("the warm-up", warmup)] {
            if value > MAX_DURATION {
                return Err(TimingError::TooLong { what, value: text(value) });
            }
        }
        if duration < window || !duration.as_nanos().is_multiple_of(window.as_nanos()) {
            return Err(TimingError::NotWholeWindows { duration: text(duration), window: text(window) });
        }
        let windows = duration.as_nanos() / window.as_nanos();
        if windows > MAX_WINDOWS as u128 {
            return Err(TimingError::TooManyWindows { windows });
        }
        Ok(Self { warmup, duration, window })
    }

    /// Discarded warm-up before the first measured window.
    pub fn warmup(&self) -> Duration {
        self.warmup
    }

    /// Measured duration: a whole number of windows.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    /// Length of one window.
    pub fn window(&self) -> Duration {
        self.window
    }

    /// Number of measured windows (`duration / window`, at least 1).
    pub fn windows(&self) -> usize {
        usize::try_from(self.duration.as_nanos() / self.window.as_nanos()).unwrap_or(usize::MAX)
    }

    /// Where a run is `elapsed` after its start, as a progress display says
    /// it: `warm-up`, or `window k/n` (the last one from its start on).
    pub fn phase(&self, elapsed: Duration) -> String {
        let windows = self.windows();
        match elapsed.checked_sub(self.warmup) {
            None => "warm-up".to_owned(),
            Some(measured) => {
                let k = usize::try_from(measured.as_nanos() / self.window.as_nanos()).unwrap_or(usize::MAX);
                format!("window {}/{windows}", k.min(windows - 1) + 1)
            }
        }
    }
}

/// An open-loop rate, requests per second: finite, above 0, at most 1e9.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Rate(f64);

impl Rate {
    /// `per_s` requests per second, or `None` when it is not finite, not
    /// above zero, or over 1e9.
    pub fn new(per_s: f64) -> Option<Self> {
        (per_s.is_finite() && per_s > 0.0 && per_s <= 1e9).then_some(Self(per_s))
    }

    /// Requests per second.
    pub fn per_s(self) -> f64 {
        self.0
    }

    /// How many requests of the schedule (request k due `k / rate` after
    /// the start) fall due from `from` until before `to`.
    pub fn due_within(self, from: Duration, to: Duration) -> u64 {
        let first = |t: Duration| (t.as_secs_f64() * self.0).ceil();
        (first(to) - first(from)).max(0.0) as u64
    }
}
