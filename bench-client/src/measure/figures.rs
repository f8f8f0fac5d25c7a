//! The figures of one measured run, as `results.json` and `load --json`
//! record them: counts, windows, latency percentiles, CPU use, and whether
//! the run counts.

use serde::{Deserialize, Serialize};

use super::Measured;
use super::blocks::{BlockLatency, block_latency};
use crate::analysis;
use crate::engine::{
    Clean, Counts, EncodedHistogram, Failures, LatencySummary, LoadSettings, Protocol, RunStats, Slicing,
};
use crate::sys::hostname;

/// A server is called saturated when its CPU use reaches this share of its
/// CPUs, percent; below it a run is flagged client-bound.
pub const SATURATED_PERCENT: f64 = 95.0;

/// Percentiles recorded for latency curves, percent: from 90 % on, the
/// classic HDR ladder steps (90, 95, 99, 99.5, 99.9, …), the tail in detail.
pub const PERCENTILE_LADDER: [f64; 11] = [0.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0];

/// Latency at one percentile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PercentilePoint {
    /// Percentile, percent (100 is the maximum).
    pub percentile: f64,
    /// Latency, microseconds.
    pub latency_us: u64,
}

/// The figures of one measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    /// Successful requests over the measured windows (status 200, exact body).
    pub successful: u64,
    /// Failed requests over the measured windows (`failed.connect` excluded).
    pub failed_total: u64,
    /// Failures by kind.
    pub failed: Failures,
    /// Alternation only: requests of this route that completed (successful
    /// or failed) in another route's slice, the round trip after a switch;
    /// they are in `failed` by kind but not in `successful` or the windows.
    #[serde(default)]
    pub transition_completed: u64,
    /// The run's counters (`engine::COUNTERS`: requests written, written
    /// again, connections closed, …), each its own field of the file.
    #[serde(flatten)]
    pub counts: Counts,
    /// The user allowed the server to close connections (`--allow-churn`):
    /// the counters of `engine::Clean::Churn` are counted but do not fail the run.
    #[serde(default)]
    pub churn_allowed: bool,
    /// Connections asked for.
    pub connections_requested: u64,
    /// Requests outstanding per connection (1: no pipelining); over HTTP/2,
    /// concurrent streams per connection.
    #[serde(default = "one")]
    pub pipeline: usize,
    /// What the run spoke (`load --http2`: HTTP/2); in the file, `http2`:
    /// true for HTTP/2, false for HTTP/1.1.
    #[serde(default, rename = "http2", with = "http2_flag")]
    pub protocol: Protocol,
    /// Open loop: the requests per second that were due (to this client: its
    /// share when the load was split over several); `None`: closed loop.
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    /// The engine's nap between polls, microseconds (0: it waited in epoll).
    #[serde(default)]
    pub nap_us: u64,
    /// Measured time, seconds.
    pub duration_s: f64,
    /// Successful requests per second over `duration_s`; `None` when no
    /// time was measured (a rate over 0 s is no rate).
    pub requests_per_s: Option<f64>,
    /// Length of one window, seconds.
    pub window_s: f64,
    /// Successful requests per window, in order; they add up to `successful`.
    pub windows: Vec<u64>,
    /// Failed requests per window, in order; they add up to `failed_total`.
    pub windows_failed: Vec<u64>,
    /// Latency of successful requests, microseconds; `None` without one
    /// (files before schema 12 wrote zeros, read as `None`).
    #[serde(default, deserialize_with = "LatencySummary::deserialize_absent")]
    pub latency_us: Option<LatencySummary>,
    /// Latency at the percentiles of [`PERCENTILE_LADDER`], microseconds;
    /// empty without a successful request (files before schema 12 wrote
    /// zeros, read as empty).
    #[serde(deserialize_with = "ladder_absent")]
    pub latency_percentiles_us: Vec<PercentilePoint>,
    /// Open loop only: latency from the actual write instead of from when
    /// the request was due (not corrected for coordinated omission); `None`
    /// in the closed loop and without a successful request.
    #[serde(default, deserialize_with = "LatencySummary::deserialize_absent")]
    pub latency_uncorrected_us: Option<LatencySummary>,
    /// The histogram `latency_us` is read from (HdrHistogram V2 + DEFLATE,
    /// base64, `HISTFAAA…`): what `merge` adds. `None` in files before
    /// schema 6.
    #[serde(default)]
    pub latency_hdr: Option<EncodedHistogram>,
    /// An open-loop alternation only: this route's latency per block of
    /// slices, in order (`measure/blocks.rs`); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub block_latency_us: Vec<BlockLatency>,
    /// Open loop only: the histogram of `latency_uncorrected_us`.
    #[serde(default)]
    pub latency_uncorrected_hdr: Option<EncodedHistogram>,
    /// The start barrier the run waited for (`--start-at`), milliseconds
    /// since the Unix epoch; `None` when it started at once.
    #[serde(default)]
    pub start_at_unix_ms: Option<u64>,
    /// The realtime clock when the measured windows began (start plus
    /// warm-up), milliseconds since the Unix epoch; `None` in files before
    /// schema 6.
    #[serde(default)]
    pub measure_start_unix_ms: Option<u64>,
    /// The client that measured it (`--label`; by default the host name, the
    /// pod name in Kubernetes).
    #[serde(default)]
    pub label: String,
    /// Coefficient of variation of `windows`, percent (`None` under two windows).
    pub window_cv_percent: Option<f64>,
    /// The last third of the windows averaged 5 % or more below the first
    /// third, with a significantly negative slope (see [`analysis::drifts`]).
    pub drift: bool,
    /// Server CPU use over the measured windows, percent of one CPU
    /// (mean of the windows); `None` when the server pid was unknown.
    pub server_cpu_percent: Option<f64>,
    /// Server CPU use per window, percent of one CPU.
    pub server_cpu_percent_windows: Vec<f64>,
    /// CPUs the server may run on (100 % each when saturated).
    pub server_cpus: Option<usize>,
    /// A closed-loop run whose server CPUs were under 95 % busy: the
    /// client, not the server, may have limited it (never set in the open
    /// loop, which offers less than the server can take on purpose).
    pub client_bound: bool,
    /// This client's CPU use over the measured windows, percent of one CPU;
    /// `None` when no window was sampled.
    pub client_cpu_percent: Option<f64>,
    /// Client CPU use per window, percent of one CPU.
    pub client_cpu_percent_windows: Vec<f64>,
    /// Client CPU time (user + system) per 1,000 successful requests,
    /// milliseconds; `None` without successful requests or client CPU.
    #[serde(default)]
    pub client_cpu_ms_per_1k: Option<f64>,
    /// Peak resident set size of the client process, bytes.
    #[serde(default)]
    pub client_peak_rss_bytes: u64,
    /// The server process (pid known) exited during the run, which ended at
    /// the end of the window in which that was seen.
    #[serde(default)]
    pub server_lost: bool,
    /// A profiler (`meta.profiler`) recorded the server over this run's
    /// measured windows and its stacks went into the flame graphs; false in
    /// files written before it existed.
    #[serde(default)]
    pub profiled: bool,
    /// False when the run was interrupted before its deadline, or lost its
    /// server: the process exited, or any connection attempt failed
    /// (refused, timed out, or no file descriptor left); or when the
    /// measured windows began short of the connections asked for.
    pub complete: bool,
}

fn one() -> usize {
    1
}

/// Reads the percentile ladder, an all-zero one (files before schema 12,
/// nothing measured: every latency is recorded as at least 1 µs) as empty.
fn ladder_absent<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PercentilePoint>, D::Error> {
    let ladder = Vec::<PercentilePoint>::deserialize(d)?;
    Ok(if ladder.iter().all(|p| p.latency_us == 0) { Vec::new() } else { ladder })
}

impl RunFigures {
    /// Whether the run counts in deltas, sweeps, comparisons and charts: it
    /// ran to its deadline and had successful requests (so its rate and
    /// latency were measured).
    pub fn usable(&self) -> bool {
        self.complete && self.successful > 0 && self.requests_per_s.is_some() && self.latency_us.is_some()
    }

    /// Whether the run failed: failed requests, connection failures (or
    /// connections that received bytes of no response), no
    /// successful request, cut short, or any [`Shortfall`](super::Shortfall).
    pub fn is_failure(&self) -> bool {
        self.failed.requests() > 0
            || self.failed.connect > 0
            || self.failed.stray > 0
            || !self.failed.goaway.is_empty()
            || self.successful == 0
            || !self.complete
            || !self.shortfalls().is_empty()
    }

    /// Figures of `run`, a run of one route with `settings` against a
    /// server allowed `server_cpus` CPUs.
    pub fn new(run: &Measured, settings: &LoadSettings, server_cpus: Option<usize>) -> Self {
        Self::build(run, settings, server_cpus, &run.outcome.stats, None)
    }

    /// Figures of route `route` of `run`, a run of routes alternating as
    /// `slicing` says: its windows are its own slices, its rate is over
    /// their time, and its CPU figures are theirs; its completions in other
    /// routes' slices are `transition_completed`.
    ///
    /// # Panics
    /// When `run` has no counts for `route` (it was not sliced).
    pub fn of_route(
        run: &Measured,
        settings: &LoadSettings,
        server_cpus: Option<usize>,
        route: usize,
        slicing: &Slicing,
    ) -> Self {
        let own: Vec<usize> =
            (0..run.outcome.stats.windows.len()).filter(|&s| slicing.route_of_slice(s as i64) == route).collect();
        let requests = &run.outcome.by_route[route];
        let mut figures = Self::build(run, settings, server_cpus, requests, Some(&own));
        figures.block_latency_us = block_latency(requests, slicing, Self::lived(run, settings, requests));
        figures
    }

    /// Whole windows the run lived through (all of them unless interrupted,
    /// or ended by `load -n`: then its last window is partial, and left out).
    fn lived(run: &Measured, settings: &LoadSettings, s: &RunStats) -> usize {
        if run.interrupted || run.server_lost || run.outcome.reached {
            let (measured_s, window_s) = (run.outcome.measured.as_secs_f64(), settings.timing.window().as_secs_f64());
            usize::try_from((measured_s / window_s.max(1e-9)).floor() as u64).unwrap_or(0).min(s.windows.len())
        } else {
            s.windows.len()
        }
    }

    /// Figures from `requests` (the request-level counts), and `run`'s
    /// connection-level counts, over the windows `own` (all when `None`).
    fn build(
        run: &Measured,
        settings: &LoadSettings,
        server_cpus: Option<usize>,
        requests: &RunStats,
        own: Option<&[usize]>,
    ) -> Self {
        let (s, conn) = (requests, &run.outcome.stats);
        let window_s = settings.timing.window().as_secs_f64();
        let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
        let lived = Self::lived(run, settings, s);
        let all: Vec<usize> = (0..s.windows.len()).collect();
        let own = own.unwrap_or(&all);
        let pick = |v: &[f64]| -> Vec<f64> { own.iter().filter_map(|&i| v.get(i).copied()).collect() };
        let windows: Vec<u64> = own.iter().map(|&i| s.windows[i].successful).collect();
        let windows_failed: Vec<u64> = own.iter().map(|&i| s.windows[i].failed).collect();
        let lived_own = own.iter().filter(|&&i| i < lived).count();
        let measured_windows: Vec<u64> = own.iter().filter(|&&i| i < lived).map(|&i| s.windows[i].successful).collect();
        let successful: u64 = windows.iter().sum();
        let failed_total: u64 = windows_failed.iter().sum();
        let duration_s =
            if own.len() == all.len() { run.outcome.measured.as_secs_f64() } else { lived_own as f64 * window_s };
        let server_cpu = pick(&run.cpu.server);
        let client_cpu = pick(&run.cpu.client);
        let server_cpu_percent = mean(&server_cpu);
        let client_cpu_percent = mean(&client_cpu);
        Self {
            successful,
            failed_total,
            failed: s.failures.clone(),
            transition_completed: (s.successful().saturating_add(s.settled_failures()))
                .saturating_sub(successful.saturating_add(failed_total)),
            counts: Counts::of_route(&s.counts, &conn.counts),
            churn_allowed: false,
            connections_requested: settings.connections.get() as u64,
            pipeline: settings.pipeline.get(),
            protocol: Protocol::Http1,
            rate_per_s: settings.rate_share_per_s(),
            nap_us: u64::try_from(settings.nap.as_micros()).unwrap_or(u64::MAX),
            duration_s,
            requests_per_s: (duration_s > 0.0).then(|| successful as f64 / duration_s),
            window_s,
            windows,
            windows_failed,
            latency_us: s.latency_summary(),
            latency_percentiles_us: if s.latency_us.is_empty() {
                Vec::new()
            } else {
                PERCENTILE_LADDER
                    .iter()
                    .map(|&percentile| PercentilePoint {
                        percentile,
                        latency_us: s.latency_us.value_at_quantile(percentile / 100.0),
                    })
                    .collect()
            },
            latency_uncorrected_us: s.latency_uncorrected_us.as_ref().and_then(LatencySummary::of),
            latency_hdr: Some(EncodedHistogram::encode(&s.latency_us)),
            latency_uncorrected_hdr: s.latency_uncorrected_us.as_ref().map(EncodedHistogram::encode),
            block_latency_us: Vec::new(),
            start_at_unix_ms: run.start.planned_unix_ms,
            measure_start_unix_ms: Some(
                run.start.unix_ms + u64::try_from(settings.timing.warmup().as_millis()).unwrap_or(u64::MAX),
            ),
            label: hostname(),
            window_cv_percent: analysis::cv_percent(&measured_windows.iter().map(|&w| w as f64).collect::<Vec<_>>()),
            drift: analysis::drifts(&measured_windows),
            server_cpu_percent,
            server_cpu_percent_windows: server_cpu,
            server_cpus,
            client_bound: match (server_cpu_percent, server_cpus) {
                // The open loop leaves the server idle part of the time on purpose.
                (Some(p), Some(n)) => settings.rate.is_none() && p < SATURATED_PERCENT * n as f64,
                _ => false,
            },
            client_cpu_percent,
            client_cpu_percent_windows: client_cpu,
            client_cpu_ms_per_1k: client_cpu_percent
                .filter(|_| successful > 0)
                .map(|p| p / 100.0 * duration_s * 1e3 / (successful as f64 / 1e3)),
            client_peak_rss_bytes: run.client_peak_rss_bytes,
            server_lost: run.server_lost,
            profiled: matches!(run.folded, Some(Ok(_))),
            complete: !run.interrupted
                && !run.server_lost
                && conn.failures.connect == 0
                && conn.counts.above_zero(Clean::Incomplete).next().is_none(),
        }
    }
}

/// [`RunFigures::protocol`] as the file's `http2` flag (schema 1 on).
mod http2_flag {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::engine::Protocol;

    pub(super) fn serialize<S: Serializer>(protocol: &Protocol, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bool(match protocol {
            Protocol::Http1 => false,
            Protocol::Http2 => true,
        })
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Protocol, D::Error> {
        Ok(if bool::deserialize(d)? { Protocol::Http2 } else { Protocol::Http1 })
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::num::NonZeroUsize;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::engine::{FailureKind, Outcome, Timing};
    use crate::measure::{CpuWindows, Start};

    /// Closed-loop settings of `windows` windows of `window_ms`.
    pub(in crate::measure) fn settings(window_ms: u64, windows: u32) -> LoadSettings {
        let window = Duration::from_millis(window_ms);
        let timing = Timing::new(Duration::ZERO, window * windows, window).unwrap();
        LoadSettings::closed(NonZeroUsize::new(8).unwrap(), NonZeroUsize::MIN, timing, Duration::from_secs(2))
    }

    /// Stats with `per_window[i]` successes of 100 µs in window i.
    pub(in crate::measure) fn stats(per_window: &[u64]) -> RunStats {
        let mut s = RunStats::new(per_window.len(), false);
        for (w, &n) in per_window.iter().enumerate() {
            for _ in 0..n {
                s.record_success(w, 100, 100);
            }
        }
        s.counts.sent = per_window.iter().sum::<u64>() + 3;
        s.counts.warmup_completed = 2;
        s.counts.in_flight_at_deadline = 1;
        s
    }

    /// A run that measured `stats` (and `by_route`) over `measured`, with CPU `cpu`.
    pub(in crate::measure) fn measured(
        stats: RunStats,
        by_route: Vec<RunStats>,
        measured: Duration,
        cpu: CpuWindows,
    ) -> Measured {
        Measured {
            outcome: Outcome { stats, by_route, measured, stopped: false, reached: false },
            interrupted: false,
            server_lost: false,
            cpu,
            client_peak_rss_bytes: 7,
            folded: None,
            start: Start { instant: Instant::now(), unix_ms: 1_000, planned_unix_ms: None },
        }
    }

    #[test]
    fn figures_of_a_whole_run() {
        let cpu = CpuWindows { server: vec![90.0, 100.0, 98.0, 96.0], client: vec![40.0, 50.0, 60.0, 50.0] };
        let mut s = stats(&[100, 100, 100, 100]);
        s.counts.connections_established = 9;
        s.counts.reconnects = 1;
        s.record_failure(Some(2), FailureKind::Status(503));
        let run = measured(s, Vec::new(), Duration::from_secs(2), cpu);
        let f = RunFigures::new(&run, &settings(500, 4), Some(1));
        assert_eq!((f.successful, f.failed_total, f.transition_completed), (400, 1, 0));
        assert_eq!(f.windows, [100, 100, 100, 100]);
        assert_eq!(f.windows_failed, [0, 0, 1, 0]);
        assert_eq!((f.counts.sent, f.counts.warmup_completed, f.counts.in_flight_at_deadline), (403, 2, 1));
        assert_eq!((f.connections_requested, f.counts.connections_established, f.counts.reconnects), (8, 9, 1));
        assert_eq!((f.duration_s, f.window_s, f.requests_per_s), (2.0, 0.5, Some(200.0)));
        assert_eq!(f.server_cpu_percent, Some(96.0));
        assert!(!f.client_bound, "96 % of one CPU is saturated");
        assert_eq!(f.client_cpu_percent, Some(50.0));
        // Half a CPU for 2 s over 400 requests: 1 s of CPU, 2.5 ms per 1,000.
        assert!((f.client_cpu_ms_per_1k.unwrap() - 2500.0).abs() < 1e-9, "{f:?}");
        assert_eq!(f.window_cv_percent, Some(0.0));
        assert!(!f.drift && f.complete && f.is_failure(), "the 503 is a failure");
        let l = f.latency_us.unwrap();
        assert_eq!((l.p50, l.max), (100, 100));
        assert_eq!(f.measure_start_unix_ms, Some(1_000));
        assert!(RunFigures::new(&run, &settings(500, 4), Some(2)).client_bound, "96 % of two CPUs is not");
    }

    #[test]
    fn an_interrupted_run_judges_only_the_windows_it_lived() {
        let mut run =
            measured(stats(&[100, 100, 80, 0]), Vec::new(), Duration::from_millis(1_250), CpuWindows::default());
        run.interrupted = true;
        let f = RunFigures::new(&run, &settings(500, 4), None);
        assert!(!f.complete && f.is_failure() && !f.usable());
        assert_eq!(f.duration_s, 1.25);
        assert_eq!(f.successful, 280);
        // Two whole windows lived (1.25 s of 0.5 s windows): the CV of 100 and 100.
        assert_eq!(f.window_cv_percent, Some(0.0));
        assert_eq!((f.server_cpu_percent, f.client_bound), (None, false));
    }

    #[test]
    fn figures_of_one_route_of_an_alternation_are_its_own_slices() {
        // Block [0, 1, 1, 0]: route 1 owns slices 1, 2, 5, 6.
        let block = Slicing::new(2, vec![0, 1, 1, 0]).unwrap();
        let route1 = stats(&[3, 100, 100, 2, 0, 90, 110, 1]);
        let total = stats(&[103, 103, 100, 102, 100, 92, 110, 101]);
        let cpu = CpuWindows {
            server: vec![10.0, 80.0, 82.0, 10.0, 10.0, 84.0, 86.0, 10.0],
            client: vec![1.0, 20.0, 20.0, 1.0, 1.0, 20.0, 20.0, 1.0],
        };
        let run = measured(total, vec![stats(&[100, 3, 0, 100, 100, 2, 0, 100]), route1], Duration::from_secs(2), cpu);
        let f = RunFigures::of_route(&run, &settings(250, 8), Some(1), 1, &block);
        assert_eq!(f.windows, [100, 100, 90, 110]);
        assert_eq!((f.successful, f.transition_completed), (400, 6));
        assert_eq!((f.duration_s, f.requests_per_s), (1.0, Some(400.0)));
        assert_eq!(f.server_cpu_percent_windows, [80.0, 82.0, 84.0, 86.0]);
        assert_eq!(f.server_cpu_percent, Some(83.0));
        assert!(f.client_bound, "83 % in its own slices");
        assert_eq!(f.check(true), Ok(()), "every request written settles once, the transition included");
        let g = RunFigures::of_route(&run, &settings(250, 8), Some(1), 0, &block);
        assert_eq!(g.windows, [100, 100, 100, 100]);
    }

    #[test]
    fn an_interrupted_route_counts_only_its_own_slices_it_lived() {
        // Block [0, 1, 1, 0] over 250 ms slices, interrupted at 1.5 s: six
        // slices lived (0 … 5); route 1 owns 1, 2 and 5 of them (not 6).
        let block = Slicing::new(2, vec![0, 1, 1, 0]).unwrap();
        let route1 = stats(&[0, 100, 100, 0, 0, 90, 110, 0]);
        let total = stats(&[100, 100, 100, 100, 100, 90, 110, 100]);
        let mut run = measured(
            total,
            vec![stats(&[100, 0, 0, 100, 100, 0, 0, 100]), route1],
            Duration::from_millis(1_500),
            CpuWindows::default(),
        );
        run.interrupted = true;
        let f = RunFigures::of_route(&run, &settings(250, 8), None, 1, &block);
        assert_eq!(f.duration_s, 0.75, "three own slices lived");
        assert_eq!(f.window_cv_percent, analysis::cv_percent(&[100.0, 100.0, 90.0]));
    }

    #[test]
    fn edges_of_the_rate_the_percentiles_saturation_cpu_cost_and_profiled() {
        // Latencies 1 … 1,000 µs: the ladder reads each percentile, not the maximum.
        let mut s = RunStats::new(1, false);
        for us in 1..=1_000 {
            s.record_success(0, us, us);
        }
        s.counts.sent = 1_000;
        let cpu = CpuWindows { server: vec![95.0], client: vec![50.0] };
        let mut run = measured(s, Vec::new(), Duration::from_secs(1), cpu);
        run.folded = Some(Ok(vec![String::new()]));
        let f = RunFigures::new(&run, &settings(1_000, 1), Some(1));
        let p50 = f.latency_percentiles_us.iter().find(|p| p.percentile == 50.0).unwrap().latency_us;
        assert!((495..=505).contains(&p50), "p50 {p50} µs");
        assert!(!f.client_bound, "exactly 95 % of one CPU is saturated");
        assert!(f.profiled, "a whole run with folded stacks was profiled");
        let two = RunFigures::new(&run, &settings(1_000, 1), Some(2));
        assert!(two.client_bound, "95 % of two CPUs (190 %) is not saturated");
        // Each route of a profiled alternation is profiled: perf's samples are given to their slices.
        let mut alt = measured(
            stats(&[5, 5]),
            vec![stats(&[5, 0]), stats(&[0, 5])],
            Duration::from_secs(2),
            CpuWindows::default(),
        );
        alt.folded = Some(Ok(vec![String::new(), String::new()]));
        assert!(
            RunFigures::of_route(&alt, &settings(1_000, 2), None, 0, &Slicing::new(2, vec![0, 1]).unwrap()).profiled
        );
        assert!(RunFigures::new(&alt, &settings(1_000, 2), None).profiled);
        alt.folded = Some(Err(anyhow::anyhow!("perf failed")));
        assert!(
            !RunFigures::of_route(&alt, &settings(1_000, 2), None, 0, &Slicing::new(2, vec![0, 1]).unwrap()).profiled
        );
        // Nothing lived, nothing served: no rate over no time, no latency, no CPU measured.
        let mut empty = measured(stats(&[0]), Vec::new(), Duration::ZERO, CpuWindows::default());
        empty.interrupted = true;
        let e = RunFigures::new(&empty, &settings(1_000, 1), None);
        assert_eq!((e.duration_s, e.requests_per_s, e.client_cpu_ms_per_1k), (0.0, None, None));
        assert_eq!((e.latency_us, &e.latency_percentiles_us, e.client_cpu_percent), (None, &Vec::new(), None));
    }

    #[test]
    fn a_clean_run_is_usable_and_not_a_failure_and_old_files_default_to_no_pipelining() {
        let clean = RunFigures::new(
            &measured(stats(&[10]), Vec::new(), Duration::from_secs(1), CpuWindows::default()),
            &settings(1_000, 1),
            None,
        );
        assert!(clean.usable() && !clean.is_failure(), "{clean:?}");
        let mut failed = clean.clone();
        failed.failed.status.insert(503, 1);
        assert!(failed.is_failure(), "a failure by kind, wherever it completed");
        let mut connect = clean.clone();
        connect.failed.connect = 1;
        assert!(connect.is_failure(), "a connection that failed");
        let mut stray = clean.clone();
        stray.failed.stray = 1;
        assert!(stray.is_failure(), "a connection that received bytes of no response");
        let mut value = serde_json::to_value(&clean).unwrap();
        value.as_object_mut().unwrap().remove("pipeline");
        let old: RunFigures = serde_json::from_value(value).unwrap();
        assert_eq!(old.pipeline, 1);
        // A file before schema 12 of a run without a success: zeros, read as nothing measured.
        let mut value = serde_json::to_value(&clean).unwrap();
        let zeros = serde_json::json!({"p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0});
        value["latency_us"] = zeros.clone();
        value["latency_uncorrected_us"] = zeros;
        for p in value["latency_percentiles_us"].as_array_mut().unwrap() {
            p["latency_us"] = 0.into();
        }
        let old: RunFigures = serde_json::from_value(value).unwrap();
        assert_eq!((old.latency_us, old.latency_uncorrected_us, old.latency_percentiles_us.len()), (None, None, 0));
        let new: RunFigures = serde_json::from_value(serde_json::to_value(&clean).unwrap()).unwrap();
        assert_eq!(new, clean, "a run with successes reads back as written");
    }
}
