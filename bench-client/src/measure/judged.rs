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
        /// Of the late and never written, those due while every connection
        /// waited on the server (not the client's shortfall).
        waited: u64,
    },
}

impl std::fmt::Display for Shortfall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Self::Counted { counter, count } => {
                let spec = COUNTERS.iter().find(|s| s.counter == counter).expect("every counter is declared");
                f.write_str(&spec.shortfall_line(count).unwrap_or_else(|| format!("{} {}", spec.name, count)))
            }
            Self::Offered { on_time_percent, late, unsent, waited: 0 } => write!(
                f,
                "the schedule was offered {on_time_percent:.1} % on time: {late} requests written late, \
                 {unsent} never written, the client behind"
            ),
            Self::Offered { on_time_percent, late, unsent, waited } => write!(
                f,
                "the schedule was offered {on_time_percent:.1} % on time: {late} requests written late, \
                 {unsent} never written, {} of them with the client behind ({waited} waited on the server)",
                (late + unsent).saturating_sub(waited)
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
        if self.counts.warmup_failed_protocol > self.counts.warmup_completed {
            return Err(format!(
                "`warmup_failed_protocol` is {} but `warmup_completed` only {}",
                self.counts.warmup_failed_protocol, self.counts.warmup_completed
            ));
        }
        if self.counts.warmup_failed_protocol > self.failed.protocol {
            return Err(format!(
                "`warmup_failed_protocol` is {} but `failed.protocol` only {}",
                self.counts.warmup_failed_protocol, self.failed.protocol
            ));
        }
        // The warm-up's protocol failures are among the kinds, not in the windows.
        let by_kind = self.failed.requests_wide() - u128::from(self.counts.warmup_failed_protocol);
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
        if let Some(l) = &self.latency_us
            && !(l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max)
        {
            return Err("`latency_us` percentiles are not in order".to_owned());
        }
        if self.latency_us.is_none() && self.successful > 0 {
            return Err(format!("`latency_us` is absent with {} successful", self.successful));
        }
        let measures = [("duration_s", self.duration_s), ("window_s", self.window_s)]
            .into_iter()
            .chain(self.requests_per_s.map(|r| ("requests_per_s", r)))
            .chain(self.client_cpu_percent.map(|p| ("client_cpu_percent", p)))
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

    /// Whether the run's only fault is an open-loop schedule the client did
    /// not offer on time (its thread behind, no request failed): a round
    /// the suite measures again rather than failing the session for.
    pub fn short_of_schedule_only(&self) -> bool {
        let shortfalls = self.shortfalls();
        !shortfalls.is_empty()
            && shortfalls.iter().all(|s| matches!(s, Shortfall::Offered { .. }))
            && self.failed.requests() == 0
            && self.failed.connect == 0
            && self.successful > 0
            && self.complete
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
            // Only the client's own delay: a request that fell due while every
            // connection waited on the server is the server's latency, which
            // the corrected percentiles hold.
            let off = self
                .counts
                .late_sends
                .saturating_add(self.counts.unsent_at_deadline)
                .saturating_sub(self.counts.waited_on_server);
            // Requests due within the late-send tolerance of the deadline
            // (the one due at it included) could not be late yet.
            let at_deadline = (self.rate_per_s.unwrap_or(0.0) * LATE_SEND_TOLERANCE.as_secs_f64()).ceil() + 1.0;
            if due > 0 && off as f64 > due as f64 * OFFERED_SHORTFALL_PERCENT / 100.0 + at_deadline {
                let on_time_percent = 100.0 * due.saturating_sub(off) as f64 / due as f64;
                out.push(Shortfall::Offered {
                    on_time_percent,
                    late: self.counts.late_sends,
                    unsent: self.counts.unsent_at_deadline,
                    waited: self.counts.waited_on_server,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::engine::FailureKind;
    use crate::measure::CpuWindows;
    use crate::measure::figures::tests::{measured, settings, stats};

    #[test]
    fn figures_that_do_not_add_up_are_named_by_field() {
        let mut s = stats(&[100, 100, 100, 100]);
        s.record_failure(Some(2), FailureKind::Status(503));
        s.counts.sent += 1;
        let cpu = CpuWindows { server: vec![50.0; 4], client: vec![50.0; 4] };
        let good = RunFigures::new(&measured(s, Vec::new(), Duration::from_secs(2), cpu), &settings(500, 4), Some(1));
        assert_eq!(good.check(true), Ok(()));
        let err = |edit: fn(&mut RunFigures)| {
            let mut f = good.clone();
            edit(&mut f);
            f.check(true).unwrap_err()
        };
        assert!(err(|f| _ = f.windows_failed.pop()).contains("`windows_failed` has 3 windows"));
        assert!(err(|f| f.successful *= 10).contains("`successful` is 4000 but `windows` add up to 400"));
        assert!(err(|f| f.successful = u64::MAX).contains("`successful`"));
        assert!(err(|f| f.failed_total = 0).contains("`failed_total` is 0"));
        assert!(err(|f| f.failed.io = 5).contains("`failed` by kind add up to 6"));
        assert!(err(|f| f.counts.sent += 1).contains("`sent` is 405"));
        let mut old = good.clone();
        old.counts.sent += 1;
        assert_eq!(old.check(false), Ok(()), "files before schema 8 are not held to `sent`");
        assert!(
            err(|f| f.counts.retried = 1).contains(
                "`sent` is 404 but warm-up, successful, failed, transition, in flight and retried add up to 405"
            ),
            "a retry is one more write"
        );
        assert!(err(|f| f.counts.warmup_failed_protocol = f.counts.warmup_completed + 1).contains("only"));
        let mut warm = good.clone();
        warm.counts.warmup_failed_protocol = 1;
        assert!(warm.counts.warmup_completed >= 1, "{:?}", warm.counts);
        assert!(
            warm.clone()
                .check(true)
                .unwrap_err()
                .contains("`warmup_failed_protocol` is 1 but `failed.protocol` only 0")
        );
        warm.failed.protocol = 1;
        assert_eq!(warm.check(true), Ok(()), "a protocol failure of the warm-up is a kind, not in `failed_total`");
        assert!(err(|f| f.latency_us.as_mut().unwrap().p50 = 1_000_000).contains("percentiles are not in order"));
        assert!(err(|f| f.latency_us = None).contains("`latency_us` is absent with 400 successful"));
        assert!(err(|f| f.duration_s = -1.0).contains("`duration_s` is -1"));
        assert!(err(|f| f.requests_per_s = Some(f64::NAN)).contains("`requests_per_s` is NaN"));
        assert!(err(|f| f.window_s = 0.0).contains("`window_s` is 0"));
    }

    #[test]
    fn every_shortfall_fails_the_run_and_churn_only_unless_allowed() {
        let s = stats(&[100, 100]);
        let cpu = CpuWindows { server: vec![50.0; 2], client: vec![50.0; 2] };
        let good = RunFigures::new(&measured(s, Vec::new(), Duration::from_secs(1), cpu), &settings(500, 2), Some(1));
        assert!(good.shortfalls().is_empty() && !good.is_failure());
        let with = |edit: fn(&mut RunFigures)| {
            let mut f = good.clone();
            edit(&mut f);
            f
        };
        let short = with(|f| f.counts.connections_short = 3);
        assert_eq!(short.shortfalls(), [Shortfall::Counted { counter: Counter::ConnectionsShort, count: 3 }]);
        assert_eq!(
            short.shortfalls()[0].to_string(),
            "3 connections were not open when the windows began (the run is incomplete)"
        );
        assert!(short.is_failure());
        let churn = with(|f| {
            f.counts.closed_by_server = 5;
            f.counts.retried = 2;
        });
        assert_eq!(
            churn.shortfalls(),
            [
                Shortfall::Counted { counter: Counter::ClosedByServer, count: 5 },
                Shortfall::Counted { counter: Counter::Retried, count: 2 }
            ]
        );
        assert!(churn.is_failure());
        let allowed = with(|f| {
            f.counts.closed_by_server = 5;
            f.counts.retried = 2;
            f.churn_allowed = true;
        });
        assert!(allowed.shortfalls().is_empty() && !allowed.is_failure());
        // Open loop: 1 % of the requests due late or unsent is the schedule's own jitter, more is not.
        let open = |late: u64, unsent: u64| {
            let mut f = good.clone();
            f.rate_per_s = Some(1000.0);
            (f.counts.sent, f.counts.late_sends, f.counts.unsent_at_deadline) = (1000 - unsent, late, unsent);
            f.shortfalls()
        };
        // At 1,000 requests/s, 2 ms of tolerance: 3 due at the deadline are allowed beside the 1 %.
        assert!(open(8, 5).is_empty(), "13 of 1,000");
        assert_eq!(open(9, 5), [Shortfall::Offered { on_time_percent: 98.6, late: 9, unsent: 5, waited: 0 }]);
        assert!(open(0, 14)[0].to_string().starts_with("the schedule was offered 98.6 % on time"));
        // Requests due while every connection waited on the server are its
        // latency, not the client's shortfall: only the rest counts.
        let waiting = |late: u64, unsent: u64, waited: u64| {
            let mut f = good.clone();
            f.rate_per_s = Some(1000.0);
            (f.counts.sent, f.counts.late_sends, f.counts.unsent_at_deadline) = (1000 - unsent, late, unsent);
            f.counts.waited_on_server = waited;
            f.shortfalls()
        };
        assert!(waiting(600, 300, 900).is_empty(), "all of them waited on the server");
        assert!(waiting(600, 300, 887).is_empty(), "13 of 1,000 the client's own");
        let short = waiting(600, 300, 886);
        assert_eq!(short, [Shortfall::Offered { on_time_percent: 98.6, late: 600, unsent: 300, waited: 886 }]);
        assert_eq!(
            short[0].to_string(),
            "the schedule was offered 98.6 % on time: 600 requests written late, 300 never written, \
             14 of them with the client behind (886 waited on the server)"
        );
    }
}
