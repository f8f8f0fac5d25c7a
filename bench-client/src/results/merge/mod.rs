//! `merge`: several clients' runs of one load (`load --clients N --segment
//! i`), added into the run one client would have measured, and the server's
//! CPU from its own host (`watch`) put beside them.
//!
//! Exact, not estimated: counts and windows are summed (window k of every
//! client covers the same planned interval, counted from the shared start
//! barrier), and the latency histograms are added bucket by bucket, so the
//! merged percentiles are those of one histogram holding every client's
//! requests (each client's 0.1 % bucket width is all that is lost, as in any
//! one run). Averaging percentiles would be wrong.
//!
//! Inputs that do not describe one load are refused ([`Refusal`]): another
//! URL, window, warm-up, duration, mode, start barrier or histogram layout,
//! a run given twice, segments repeated or missing, starts further apart
//! than the tolerance. `--force` merges them anyway and records what it
//! overrode (`aligned: false`). Files without histograms (before schema 6)
//! cannot be merged at all.

use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

mod refusals;

use self::refusals::refusals;
pub use self::refusals::{MergeError, Refusal};

use super::{ClientRow, LoadReport, MergeInfo, SCHEMA_VERSION, ServerRow, WatchReport};
use crate::engine::{COUNTERS, LoadSettings, Outcome, Rate, RunStats, Segment, Timing, Window, latency_histogram};
use crate::measure::{CpuWindows, Measured, RunFigures, Start};

/// A file read for `merge`: its name as given (for messages) and its content.
#[derive(Debug, Clone)]
pub struct Input<T> {
    /// The path as the user gave it.
    pub file: String,
    /// What it holds.
    pub report: T,
}

/// How strict `merge` is.
#[derive(Debug, Clone, Copy)]
pub struct MergeOptions {
    /// Largest spread of the inputs' `measure_start_unix_ms` accepted.
    pub tolerance: Duration,
    /// Merge despite refusals, recording them.
    pub force: bool,
}

/// A client's figures with its histograms decoded.
struct Decoded<'a> {
    input: &'a Input<LoadReport>,
    latency: Histogram<u64>,
    uncorrected: Option<Histogram<u64>>,
    measure_start_unix_ms: u64,
}

/// Merges `clients` (and the server's CPU from `server`) into one report.
///
/// # Errors
/// [`MergeError`]: no input, a file without (or with a broken) histogram, a
/// merged report as input, or a [`Refusal`] without `force`.
pub fn merge(
    clients: &[Input<LoadReport>],
    server: Option<&Input<WatchReport>>,
    options: MergeOptions,
) -> Result<LoadReport, MergeError> {
    let decoded = decode(clients)?;
    let refusals = refusals(&decoded, server, options.tolerance);
    if let Some(first) = refusals.first()
        && !options.force
    {
        return Err(MergeError::Refused(first.clone()));
    }
    let first = decoded[0].input;
    let f0 = &first.report.figures;
    let windows = decoded.iter().map(|d| d.input.report.figures.windows.len()).max().unwrap_or(0).max(1);
    let timing = merged_timing(first, windows)?;
    let stats = summed(&decoded, windows, f0.rate_per_s.is_some())?;
    let earliest = decoded.iter().map(|d| d.measure_start_unix_ms).min().unwrap_or(0);
    let run = merged_run(&decoded, server, timing, stats, earliest);
    let settings = merged_settings(&decoded, timing);
    let mut figures = RunFigures::new(&run, &settings, server.and_then(|s| s.report.server_cpus));
    figures.label = format!("merged ({} clients)", decoded.len());
    figures.churn_allowed = decoded.iter().all(|d| d.input.report.figures.churn_allowed);
    figures.protocol = f0.protocol;

    let info = merge_info(&decoded, server, &refusals, options, earliest);
    Ok(LoadReport {
        schema_version: SCHEMA_VERSION,
        url: first.report.url.clone(),
        threads: settings.threads.get(),
        warmup_s: first.report.warmup_s,
        clients: u32::try_from(decoded.len()).unwrap_or(u32::MAX),
        segment: None,
        merge: Some(info),
        figures,
        // Each client judged its own share; the sum is not theirs to judge.
        slo: Vec::new(),
        requests_asked: None,
    })
}

/// The timing every client ran: the first's warm-up and window, over the
/// most windows any client has.
///
/// # Errors
/// [`MergeError::BadTiming`]: a window or warm-up that is no duration.
fn merged_timing(first: &Input<LoadReport>, windows: usize) -> Result<Timing, MergeError> {
    let f0 = &first.report.figures;
    let timing_error =
        || MergeError::BadTiming { file: first.file.clone(), window_s: f0.window_s, warmup_s: first.report.warmup_s };
    let window = Duration::try_from_secs_f64(f0.window_s).map_err(|_| timing_error())?;
    let warmup = Duration::try_from_secs_f64(first.report.warmup_s).map_err(|_| timing_error())?;
    Timing::new(warmup, window * u32::try_from(windows).unwrap_or(u32::MAX), window).map_err(|_| timing_error())
}

/// The run one client would have measured: the summed `stats`, measured
/// as long as the shortest client when one is incomplete, the server's CPU
/// from `server`, the clients' CPU summed, started at the `earliest` client's
/// first window.
fn merged_run(
    decoded: &[Decoded<'_>],
    server: Option<&Input<WatchReport>>,
    timing: Timing,
    stats: RunStats,
    earliest: u64,
) -> Measured {
    let all_complete = decoded.iter().all(|d| d.input.report.figures.complete);
    let server_lost =
        server.is_some_and(|s| s.report.server_lost) || decoded.iter().any(|d| d.input.report.figures.server_lost);
    let measured = if all_complete {
        timing.duration()
    } else {
        let shortest = decoded.iter().map(|d| d.input.report.figures.duration_s).fold(f64::INFINITY, f64::min);
        Duration::try_from_secs_f64(shortest).unwrap_or(Duration::ZERO).min(timing.duration())
    };
    let warmup_ms = u64::try_from(timing.warmup().as_millis()).unwrap_or(u64::MAX);
    Measured {
        outcome: Outcome { stats, by_route: Vec::new(), measured, stopped: !all_complete, reached: false },
        interrupted: !all_complete && !server_lost,
        server_lost,
        cpu: CpuWindows {
            server: server.map(|s| s.report.server_cpu_percent_windows.clone()).unwrap_or_default(),
            client: summed_windows(
                decoded.iter().map(|d| d.input.report.figures.client_cpu_percent_windows.as_slice()),
            ),
        },
        client_peak_rss_bytes: decoded.iter().map(|d| d.input.report.figures.client_peak_rss_bytes).max().unwrap_or(0),
        folded: None,
        start: Start {
            instant: Instant::now(),
            unix_ms: earliest.saturating_sub(warmup_ms),
            planned_unix_ms: decoded[0].input.report.figures.start_at_unix_ms,
        },
    }
}

/// The settings of the whole load: every client's connections and threads
/// added, the whole schedule's rate, the first client's pipeline and nap.
fn merged_settings(decoded: &[Decoded<'_>], timing: Timing) -> LoadSettings {
    let first = &decoded[0].input.report;
    let f0 = &first.figures;
    let sum = |f: fn(&LoadReport) -> usize| decoded.iter().map(|d| f(&d.input.report)).sum::<usize>();
    LoadSettings {
        connections: NonZeroUsize::new(sum(|r| r.figures.connections_requested as usize)).unwrap_or(NonZeroUsize::MIN),
        threads: NonZeroUsize::new(sum(|r| r.threads)).unwrap_or(NonZeroUsize::MIN),
        timing,
        timeout: Duration::ZERO,
        pipeline: NonZeroUsize::new(f0.pipeline).unwrap_or(NonZeroUsize::MIN),
        rate: f0.rate_per_s.and_then(|share| Rate::new(share * f64::from(first.clients))),
        segment: Segment::WHOLE,
        nap: Duration::from_micros(f0.nap_us),
        requests_per_connection: None,
        requests: None,
    }
}

/// Every client's counts and histograms added up; refused when a
/// counter's sum would wrap or two histograms cannot be added.
fn summed(decoded: &[Decoded<'_>], windows: usize, open: bool) -> Result<RunStats, MergeError> {
    for spec in COUNTERS {
        let total: u128 = decoded.iter().map(|d| u128::from(d.input.report.figures.counts.get(spec.counter))).sum();
        if total > u128::from(u64::MAX) {
            let why = format!("`{}` added over the files exceeds what a count holds", spec.name);
            return Err(MergeError::Inconsistent { file: decoded[0].input.file.clone(), why });
        }
    }
    let mut stats = RunStats::new(windows, open);
    let mut latency = summing_histogram();
    let mut uncorrected = summing_histogram();
    for d in decoded {
        stats += &counts_of(&d.input.report.figures, open);
        let cannot_add = || MergeError::CannotAdd { file: d.input.file.clone() };
        latency.add(&d.latency).map_err(|_| cannot_add())?;
        if let Some(u) = &d.uncorrected {
            uncorrected.add(u).map_err(|_| cannot_add())?;
        }
    }
    stats.latency_us = latency;
    stats.latency_uncorrected_us = open.then_some(uncorrected);
    Ok(stats)
}

/// What the merged file says of its inputs: aligned or forced (and what
/// was overridden), the spread of their starts, a row per client and the
/// server's.
fn merge_info(
    decoded: &[Decoded<'_>],
    server: Option<&Input<WatchReport>>,
    refusals: &[Refusal],
    options: MergeOptions,
    earliest: u64,
) -> MergeInfo {
    let mut starts: Vec<u64> = decoded.iter().map(|d| d.measure_start_unix_ms).collect();
    starts.extend(server.map(|s| s.report.measure_start_unix_ms));
    let spread = starts.iter().max().unwrap_or(&0) - starts.iter().min().unwrap_or(&0);
    MergeInfo {
        aligned: refusals.is_empty(),
        forced: options.force,
        overridden: refusals.iter().map(ToString::to_string).collect(),
        tolerance_ms: u64::try_from(options.tolerance.as_millis()).unwrap_or(u64::MAX),
        start_spread_ms: spread,
        clients: decoded.iter().map(|d| client_row(d, earliest)).collect(),
        server: server.map(|s| ServerRow {
            file: s.file.clone(),
            label: s.report.label.clone(),
            process: s.report.process.clone(),
            pid: s.report.pid,
        }),
    }
}

/// Decodes every client's histograms; refuses files that cannot be merged.
fn decode(clients: &[Input<LoadReport>]) -> Result<Vec<Decoded<'_>>, MergeError> {
    if clients.is_empty() {
        return Err(MergeError::NoInput);
    }
    clients
        .iter()
        .map(|input| {
            let (r, file) = (&input.report, || input.file.clone());
            if r.merge.is_some() {
                return Err(MergeError::AlreadyMerged { file: file() });
            }
            let (Some(hdr), Some(measure_start_unix_ms)) = (&r.figures.latency_hdr, r.figures.measure_start_unix_ms)
            else {
                return Err(MergeError::NoHistogram { file: file(), schema: r.schema_version });
            };
            let bad = |source| MergeError::BadHistogram { file: file(), source };
            let inconsistent = |why| MergeError::Inconsistent { file: file(), why };
            r.figures.check(r.schema_version >= 8).map_err(inconsistent)?;
            let latency = hdr.decode().map_err(bad)?;
            if latency.len() != r.figures.successful {
                let why = format!(
                    "`latency_hdr` holds {} requests where `successful` is {}",
                    latency.len(),
                    r.figures.successful
                );
                return Err(inconsistent(why));
            }
            let uncorrected =
                r.figures.latency_uncorrected_hdr.as_ref().map(|h| h.decode()).transpose().map_err(bad)?;
            Ok(Decoded { input, latency, uncorrected, measure_start_unix_ms })
        })
        .collect()
}

/// The engine's histogram, growing when a forced input holds larger values.
fn summing_histogram() -> Histogram<u64> {
    let mut h = latency_histogram();
    h.auto(true);
    h
}

/// A client's counts as the engine's stats (histograms empty: they are
/// added apart, decoded).
fn counts_of(f: &RunFigures, open: bool) -> RunStats {
    let mut s = RunStats::new(0, open);
    s.windows =
        f.windows.iter().zip(&f.windows_failed).map(|(&successful, &failed)| Window { successful, failed }).collect();
    s.failures = f.failed.clone();
    s.counts = f.counts;
    s
}

/// Per window, the sum over `series` (as long as the longest).
fn summed_windows<'a>(series: impl Iterator<Item = &'a [f64]>) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for s in series {
        if out.len() < s.len() {
            out.resize(s.len(), 0.0);
        }
        for (o, v) in out.iter_mut().zip(s) {
            *o += v;
        }
    }
    out
}

fn client_row(d: &Decoded<'_>, earliest: u64) -> ClientRow {
    let (r, f) = (&d.input.report, &d.input.report.figures);
    ClientRow {
        file: d.input.file.clone(),
        label: f.label.clone(),
        segment: r.segment,
        connections_requested: f.connections_requested,
        successful: f.successful,
        failed_total: f.failed_total,
        requests_per_s: f.requests_per_s,
        latency_p99_us: f.latency_us.map(|l| l.p99),
        client_cpu_percent: f.client_cpu_percent,
        start_offset_ms: d.measure_start_unix_ms - earliest,
        complete: f.complete,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Counter, EncodedHistogram, LatencySummary, Protocol};
    use crate::results::fixtures::load_report;

    const T: u64 = 1_796_119_201_000;

    fn input(file: &str, report: LoadReport) -> Input<LoadReport> {
        Input { file: file.to_owned(), report }
    }

    fn options(force: bool) -> MergeOptions {
        MergeOptions { tolerance: Duration::from_millis(100), force }
    }

    fn pair() -> Vec<Input<LoadReport>> {
        let a: Vec<u64> = (1..=300).map(|i| i * 7).collect();
        let b: Vec<u64> = (1..=200).map(|i| 5_000 + i * 31).collect();
        vec![input("c0.json", load_report(0, 2, T, &a)), input("c1.json", load_report(1, 2, T + 40, &b))]
    }

    #[test]
    fn counts_are_summed_and_percentiles_are_those_of_every_request() {
        let clients = pair();
        let m = merge(&clients, None, options(false)).unwrap();
        let (a, b, f) = (&clients[0].report.figures, &clients[1].report.figures, &m.figures);
        assert_eq!(f.successful, a.successful + b.successful);
        assert_eq!(f.windows, vec![a.windows[0] + b.windows[0], a.windows[1] + b.windows[1]]);
        assert_eq!(f.connections_requested, 8, "4 + 4");
        assert_eq!(
            f.counts.sent,
            f.counts.warmup_completed + f.successful + f.failed_total + f.counts.in_flight_at_deadline
        );
        let mut all = latency_histogram();
        for v in (1..=300).map(|i| i * 7).chain((1..=200).map(|i| 5_000 + i * 31)) {
            all.record(v).unwrap();
        }
        assert_eq!(f.latency_us, LatencySummary::of(&all), "not an average of the clients' percentiles");
        let p50 = |f: &RunFigures| f.latency_us.unwrap().p50;
        assert_ne!(p50(f), (p50(a) + p50(b)) / 2);
        assert_eq!(f.latency_hdr.as_ref().map(|h| h.decode().unwrap()), Some(all));
        assert_eq!(f.client_cpu_percent_windows, vec![20.0, 24.0], "the clients' CPUs add");
        assert_eq!((f.measure_start_unix_ms, f.start_at_unix_ms), (Some(T), Some(1_796_119_200_000)));
        assert!(f.complete && !f.is_failure());
        let info = m.merge.unwrap();
        assert!(info.aligned && !info.forced && info.overridden.is_empty());
        assert_eq!(info.start_spread_ms, 40);
        assert_eq!(info.clients.iter().map(|c| c.start_offset_ms).collect::<Vec<_>>(), [0, 40]);
        assert_eq!((m.clients, m.segment, m.threads), (2, None, 2));
    }

    #[test]
    fn every_declared_counter_is_summed_over_the_clients() {
        let mut clients = pair();
        let (mut a, mut b) = (clients[0].report.figures.counts, clients[1].report.figures.counts);
        // Counters the accounting identity does not hold to `sent`, each its own value per client.
        for (i, spec) in COUNTERS.iter().enumerate() {
            let held =
                [Counter::Sent, Counter::WarmupCompleted, Counter::WarmupFailedProtocol, Counter::InFlightAtDeadline];
            if !held.contains(&spec.counter) {
                *a.get_mut(spec.counter) = 10 + i as u64;
                *b.get_mut(spec.counter) = 100 * (i as u64 + 1);
            }
        }
        (a.retried, b.retried) = (0, 0);
        // A warm-up request that failed as protocol: among the warm-up's and the kinds.
        (a.warmup_failed_protocol, b.warmup_failed_protocol) = (1, 2);
        clients[0].report.figures.failed.protocol += 1;
        clients[1].report.figures.failed.protocol += 2;
        (clients[0].report.figures.counts, clients[1].report.figures.counts) = (a, b);
        let m = merge(&clients, None, options(true)).unwrap();
        for spec in COUNTERS {
            assert_eq!(m.figures.counts.get(spec.counter), a.get(spec.counter) + b.get(spec.counter), "{}", spec.name);
        }
    }

    /// An edit of the two clients' reports.
    type Edit = Box<dyn FnOnce(&mut Vec<Input<LoadReport>>)>;

    /// The refusal for `clients` edited by `edit`, and the merge `--force` makes.
    fn refused(edit: impl FnOnce(&mut Vec<Input<LoadReport>>)) -> (Refusal, LoadReport) {
        let mut clients = pair();
        edit(&mut clients);
        let refusal = match merge(&clients, None, options(false)) {
            Err(MergeError::Refused(r)) => r,
            other => panic!("not refused: {other:?}"),
        };
        let forced = merge(&clients, None, options(true)).expect("--force merges");
        (refusal, forced)
    }

    #[test]
    fn clients_that_measured_no_latency_merge_into_a_run_without_one() {
        // Two segments at one barrier on one host (one label), neither with a
        // success: their empty histograms are alike, and they are two runs.
        let (mut a, mut b) = (load_report(0, 2, T, &[]), load_report(1, 2, T, &[]));
        b.figures.label = a.figures.label.clone();
        a.figures.client_cpu_percent = None;
        let m = merge(&[input("c0.json", a), input("c1.json", b)], None, options(false)).unwrap();
        assert_eq!((m.figures.successful, m.figures.latency_us), (0, None), "no latency measured, none is 0");
        assert!(m.figures.latency_percentiles_us.is_empty());
        assert_eq!(m.figures.requests_per_s, Some(0.0), "0 successes over 2 s measured");
        let info = m.merge.unwrap();
        assert_eq!(info.clients[0].latency_p99_us, None);
        assert_eq!(info.clients[0].client_cpu_percent, None, "client 0's CPU was not sampled");
        assert_eq!(info.clients[1].client_cpu_percent, Some(11.0));
    }

    #[test]
    fn inputs_that_are_not_one_load_are_refused_naming_both_files_unless_forced() {
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|c| c[1].report.figures.window_s = 2.0), "c0.json and c1.json disagree on --window: 1 s vs 2 s"),
            (Box::new(|c| c[1].report.warmup_s = 2.0), "disagree on --warmup: 1 s vs 2 s"),
            (Box::new(|c| c[1].report.url.push_str("?x")), "disagree on the URL"),
            (
                Box::new(|c| {
                    c[1].report.figures.windows.push(0);
                    c[1].report.figures.windows_failed.push(0);
                }),
                "disagree on the number of windows: 2 vs 3",
            ),
            (Box::new(|c| c[1].report.figures.rate_per_s = Some(500.0)), "the mode: closed loop vs open loop at 1000"),
            (Box::new(|c| c[1].report.figures.pipeline = 4), "disagree on --pipeline: 1 vs 4"),
            (Box::new(|c| c[1].report.figures.protocol = Protocol::Http2), "disagree on --http2: HTTP/1.1 vs HTTP/2"),
            (Box::new(|c| c[1].report.figures.start_at_unix_ms = None), "disagree on --start-at"),
            (
                Box::new(|c| {
                    let mut h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
                    h.record_n(100, c[1].report.figures.successful).unwrap();
                    c[1].report.figures.latency_hdr = Some(EncodedHistogram::encode(&h));
                }),
                "disagree on the histogram layout: 1..60000000 µs, 3 significant digits vs 1..60000000 µs, 2",
            ),
            (
                Box::new(|c| c[1].report.figures.measure_start_unix_ms = Some(T + 2_000)),
                "c0.json and c1.json: clients started 2.0 s apart (tolerance 0.1 s)",
            ),
            (Box::new(|c| c[1] = input("again.json", c[0].report.clone())), "c0.json and again.json are the same run"),
            (Box::new(|c| c[1].report = load_report(0, 2, T, &[5, 6])), "c0.json and c1.json are both segment 0 of 2"),
            (Box::new(|c| c.truncate(1)), "c0.json … c0.json: segment 1 of 2 missing"),
            (
                Box::new(|c| {
                    c[0].report = load_report(0, 1, T, &[5]);
                    c[1].report = load_report(0, 1, T, &[6]);
                }),
                "c0.json and c1.json each ran the whole load",
            ),
        ];
        for (edit, expected) in cases {
            let (refusal, forced) = refused(edit);
            let text = refusal.to_string();
            assert!(text.contains(expected), "{text}\n  expected: {expected}");
            assert!(!text.contains('\n'), "one line: {text}");
            let info = forced.merge.unwrap();
            assert!(!info.aligned && info.forced, "{expected}");
            assert!(info.overridden.contains(&text), "{:?}", info.overridden);
        }
    }

    #[test]
    fn a_file_whose_numbers_do_not_add_up_is_refused_even_forced_naming_file_and_field() {
        let cases: Vec<(Edit, &str)> = vec![
            (Box::new(|c| _ = c[1].report.figures.windows_failed.pop()), "c1.json: `windows_failed` has 1 windows"),
            (Box::new(|c| c[1].report.figures.successful *= 10), "c1.json: `successful` is 2000 but `windows` add up"),
            (
                Box::new(|c| {
                    c[1].report.figures.windows[0] *= 10;
                    c[1].report.figures.successful += 9 * 100;
                    c[1].report.figures.counts.sent += 9 * 100;
                }),
                "c1.json: `latency_hdr` holds 200 requests where `successful` is 1100",
            ),
            (
                Box::new(|c| {
                    let f = &mut c[0].report.figures;
                    (f.counts.sent, f.counts.warmup_completed) = (u64::MAX - 5, u64::MAX - 5 - f.successful);
                    let f = &mut c[1].report.figures;
                    (f.counts.sent, f.counts.warmup_completed) = (u64::MAX - 5, u64::MAX - 5 - f.successful);
                }),
                "c0.json: `sent` added over the files exceeds what a count holds",
            ),
        ];
        for (edit, expected) in cases {
            let mut clients = pair();
            edit(&mut clients);
            let err = merge(&clients, None, options(true)).unwrap_err();
            assert!(matches!(err, MergeError::Inconsistent { .. }), "{err}");
            assert!(err.to_string().starts_with(expected), "{err}\n  expected: {expected}");
        }
    }

    #[test]
    fn a_file_without_histogram_cannot_be_merged_even_forced() {
        let mut clients = pair();
        clients[1].report.schema_version = 4;
        clients[1].report.figures.latency_hdr = None;
        let err = merge(&clients, None, options(true)).unwrap_err();
        assert!(!err.is_refusal());
        assert_eq!(
            err.to_string(),
            "c1.json has no latency histogram (schema 4); rerun the load with this bench-client"
        );
        clients[1].report = merge(&pair(), None, options(false)).unwrap();
        assert!(matches!(merge(&clients, None, options(true)), Err(MergeError::AlreadyMerged { .. })));
    }

    #[test]
    fn the_server_windows_come_from_watch_and_a_lost_server_marks_the_run() {
        let clients = pair();
        let mut watch = WatchReport {
            schema_version: SCHEMA_VERSION,
            label: "server-host".to_owned(),
            pid: 42,
            process: "server-axum".to_owned(),
            server_cpus: Some(1),
            start_at_unix_ms: Some(1_796_119_200_000),
            measure_start_unix_ms: T + 10,
            warmup_s: 1.0,
            window_s: 1.0,
            duration_s: 2.0,
            server_cpu_percent: Some(90.0),
            server_cpu_percent_windows: vec![98.0, 82.0],
            server_lost: false,
            complete: true,
        };
        let server = |w: &WatchReport| Input { file: "s.json".to_owned(), report: w.clone() };
        let m = merge(&clients, Some(&server(&watch)), options(false)).unwrap();
        assert_eq!(m.figures.server_cpu_percent_windows, [98.0, 82.0]);
        assert_eq!((m.figures.server_cpu_percent, m.figures.server_cpus), (Some(90.0), Some(1)));
        assert!(m.figures.client_bound, "under 95 % of its one CPU, as the suite flags it");
        assert!(m.figures.complete);
        watch.window_s = 0.5;
        watch.duration_s = 1.0;
        let err = merge(&clients, Some(&server(&watch)), options(false)).unwrap_err().to_string();
        assert!(err.starts_with("c0.json and s.json disagree on --window"), "{err}");
        watch.window_s = 1.0;
        watch.duration_s = 2.0;
        watch.server_lost = true;
        watch.complete = false;
        watch.server_cpu_percent_windows.pop();
        let m = merge(&clients, Some(&server(&watch)), options(false)).unwrap();
        assert!(m.figures.server_lost && !m.figures.complete && m.figures.is_failure());
    }
}
