//! Whether a run's figures hold: that they add up (as a file read back
//! must), and every way the run fell short of what was asked beyond failed
//! requests ([`Shortfall`]).

use super::figures::RunFigures;
use crate::engine::{COUNTERS, Clean, Counter, LATE_SEND_TOLERANCE};

/// An open-loop run is short of its schedule when more than this share of
/// the requests due were written late or never, percent (beyond those due
/// within the late-send tolerance of the deadline, which could not be late).
pub const OFFERED_SHORTFALL_PERCENT: f64 = 1.0;

/// A way in which a run fell short of what was asked, beyond failed
/// requests: each makes the run a failure (exit 1), and is said in one line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shortfall {
    /// A declared counter whose rule ([`Clean::Incomplete`], or
    /// [`Clean::Churn`] unless churn is allowed) makes a count above zero a
    /// shortfall: connections not open when the windows began, connections
    /// the server closed between responses, requests written again.
    Counted {
        /// Which counter.
        counter: Counter,
        /// Its count.
        count: u64,
    },
    /// Open loop: the schedule was not offered on time.
    Offered {
        /// Share of the requests due written on time, percent.
        on_time_percent: f64,
        /// Written late.
        late: u64,
        /// Never written.
        unsent: u64,
    },
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Counted { counter, count } => {
                let spec = COUNTERS.iter().find(|s| s.counter == counter).expect("every counter is declared");
                f.write_str(&spec.shortfall_line(count).unwrap_or_else(|| format!("{} {}", spec.name, count)))
            }
            Self::Offered { on_time_percent, late, unsent } => write!(
                f,
                "the schedule was offered {on_time_percent:.1} % on time: {late} requests written late, \
                 {unsent} never written"
            ),
        }
    }
}

impl RunFigures {
    /// Checks that the figures add up, as a file read back must: as many
    /// failed as successful windows, the windows summing to the totals, the
    /// failures by kind to the failed total (with the transition),
    /// latencies in order, no negative or non-finite measure, and (`sent`:
    /// files of schema 8 on, whose engine counts retries) every request
    /// written settled once (`sent` = warm-up + successful + failed +
    /// transition + in flight + retried).
    ///
    /// # Errors
    /// The first field that does not fit, named, with what it holds.
    pub fn check(&self, sent: bool) -> Result<(), String> {
        let sum = |v: &[u64]| v.iter().map(|&x| u128::from(x)).sum::<u128>();
        let w = (self.windows.len(), self.windows_failed.len());
        if w.0 != w.1 {
            return Err(format!("`windows_failed` has {} windows where `windows` has {}", w.1, w.0));
        }
        if w.0 > crate::engine::MAX_WINDOWS {
            return Err(format!("`windows` has {} windows, more than any run has", w.0));
        }
        if sum(&self.windows) != u128::from(self.successful) {
            return Err(format!("`successful` is {} but `windows` add up to {}", self.successful, sum(&self.windows)));
        }
        if sum(&self.windows_failed) != u128::from(self.failed_total) {
            let total = sum(&self.windows_failed);
            return Err(format!("`failed_total` is {} but `windows_failed` add up to {total}", self.failed_total));
        }
        let by_kind = u128::from(self.failed.io)
            + u128::from(self.failed.timeout)
            + self.failed.status.values().map(|&n| u128::from(n)).sum::<u128>()
            + u128::from(self.failed.body)
            + u128::from(self.failed.protocol)
            + u128::from(self.failed.tls);
        let failed_total = u128::from(self.failed_total);
        if by_kind < failed_total || by_kind > failed_total + u128::from(self.transition_completed) {
            return Err(format!("`failed` by kind add up to {by_kind}, not to `failed_total` {failed_total}"));
        }
        let settled = u128::from(self.counts.warmup_completed)
            + u128::from(self.successful)
            + failed_total
            + u128::from(self.transition_completed)
            + u128::from(self.counts.in_flight_at_deadline)
            + u128::from(self.counts.retried);
        if sent && settled != u128::from(self.counts.sent) {
            return Err(format!(
                "`sent` is {} but warm-up, successful, failed, transition, in flight and retried add up to {settled}",
                self.counts.sent
            ));
        }
        let l = &self.latency_us;
        if !(l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max) {
            return Err("`latency_us` percentiles are not in order".to_owned());
        }
        let measures = [("duration_s", self.duration_s), ("window_s", self.window_s)]
            .into_iter()
            .chain([("requests_per_s", self.requests_per_s), ("client_cpu_percent", self.client_cpu_percent)])
            .chain(self.server_cpu_percent.map(|p| ("server_cpu_percent", p)));
        for (name, value) in measures {
            if !value.is_finite() || value < 0.0 {
                return Err(format!("`{name}` is {value}"));
            }
        }
        if self.window_s <= 0.0 {
            return Err(format!("`window_s` is {}", self.window_s));
        }
        Ok(())
    }

    /// Every way in which the run fell short of what was asked, beyond
    /// failed requests (churn and retries only when not allowed).
    pub fn shortfalls(&self) -> Vec<Shortfall> {
        let churn = (!self.churn_allowed).then_some(Clean::Churn);
        let mut out: Vec<Shortfall> = [Some(Clean::Incomplete), churn]
            .into_iter()
            .flatten()
            .flat_map(|clean| self.counts.above_zero(clean))
            .map(|(spec, count)| Shortfall::Counted { counter: spec.counter, count })
            .collect();
        if self.rate_per_s.is_some() {
            let due =
                self.counts.sent.saturating_sub(self.counts.retried).saturating_add(self.counts.unsent_at_deadline);
            let off = self.counts.late_sends.saturating_add(self.counts.unsent_at_deadline);
            // Requests due within the late-send tolerance of the deadline
            // (the one due at it included) could not be late yet.
            let at_deadline = (self.rate_per_s.unwrap_or(0.0) * LATE_SEND_TOLERANCE.as_secs_f64()).ceil() + 1.0;
            if due > 0 && off as f64 > due as f64 * OFFERED_SHORTFALL_PERCENT / 100.0 + at_deadline {
                let on_time_percent = 100.0 * due.saturating_sub(off) as f64 / due as f64;
                out.push(Shortfall::Offered {
                    on_time_percent,
                    late: self.counts.late_sends,
                    unsent: self.counts.unsent_at_deadline,
                });
            }
        }
        out
    }
}
