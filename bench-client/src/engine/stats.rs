//! What one load run measured: per-window counts of successful and failed
//! requests, failures by kind, the accounting of every request sent, and the
//! latency histogram. Each engine thread fills its own [`RunStats`]; they are
//! merged once at the end.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::counters::Counts;

/// Highest latency the histogram tracks, microseconds (60 s); longer ones
/// saturate at this value.
pub const MAX_LATENCY_US: u64 = 60_000_000;

/// Failures by kind, over the measured windows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failures {
    /// Connection attempts refused or failed (no request was sent on them).
    pub connect: u64,
    /// Requests lost to a read or write error, or the server closing early.
    pub io: u64,
    /// Requests without a complete response within `--timeout` of their
    /// write: timed out by the loop's timer, or answered after the deadline
    /// (never a success).
    pub timeout: u64,
    /// Responses with another status than the expected (200 unless
    /// `--expect-status`), by status code (a JSON object's keys are
    /// strings, read back as codes, since a results file reads
    /// its figures flattened, where serde gives them to `u16` as strings).
    #[serde(deserialize_with = "status_codes")]
    pub status: BTreeMap<u16, u64>,
    /// Status 200 with a body other than the expected bytes.
    pub body: u64,
    /// Responses the framer could not read (malformed, no `Content-Length`).
    pub protocol: u64,
    /// Requests lost to a TLS error: a handshake that failed (a certificate
    /// not trusted, no common protocol), a record that did not decrypt.
    #[serde(default)]
    pub tls: u64,
    /// Connections on which the server sent bytes that belong to no response
    /// (RFC 9112 section 6.3): bytes with no request outstanding (beyond a
    /// response's length, or later on an idle connection) or after a
    /// response that closes. Each such connection is closed. Whole run, like
    /// `connect`: no request, so not among the failed requests.
    #[serde(default)]
    pub stray: u64,
    /// HTTP/2: streams the server reset (`RST_STREAM`), by error code
    /// (RFC 9113 section 7; keys as strings, as `status`).
    #[serde(default, deserialize_with = "error_codes")]
    pub reset: BTreeMap<u32, u64>,
    /// HTTP/2: connections the server ended with a `GOAWAY` carrying an
    /// error code (a connection error, RFC 9113 section 5.4.1, such as
    /// `ENHANCE_YOUR_CALM`), by code. Whole run, like `connect`.
    #[serde(default, deserialize_with = "error_codes")]
    pub goaway: BTreeMap<u32, u64>,
}

/// `reset` and `goaway` as JSON writes them, keys as strings (see `status_codes`).
fn error_codes<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<u32, u64>, D::Error> {
    codes(deserializer, "an error code")
}

/// `status` as JSON writes it, keys as strings: read through a map of
/// strings, since serde cannot read integer keys inside a flattened struct
/// (serde-rs/serde#1183; `load --json` flattens its figures).
fn status_codes<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<BTreeMap<u16, u64>, D::Error> {
    codes(deserializer, "a status code")
}

/// A map keyed by codes written as strings; a key that is not one is `what` it is not.
fn codes<'de, D: serde::Deserializer<'de>, K: std::str::FromStr + Ord>(
    deserializer: D,
    what: &str,
) -> Result<BTreeMap<K, u64>, D::Error> {
    BTreeMap::<String, u64>::deserialize(deserializer)?
        .into_iter()
        .map(|(code, n)| {
            code.parse().map(|code| (code, n)).map_err(|_| serde::de::Error::custom(format!("'{code}' is not {what}")))
        })
        .collect()
}

/// A failure kind, declared once: the field of [`Failures`] (and of
/// `results.json`) it is kept in, the live metric's `kind` label, how the
/// terminal names it, and whether it is a failed request. The live metrics,
/// the terminal, the accounting check and [`Failures::requests`] read this
/// table, so a new kind is a field, a row here and the place that counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// The field's name, and the `kind` label of `bench_client_failures_total`.
    pub name: &'static str,
    /// How the terminal's failures line names it.
    pub label: &'static str,
    /// A failed request (among `failed_total` and the windows' failures);
    /// otherwise a connection's failure, which sends no request.
    pub request: bool,
    /// Counted by status or error code: shown as the map, and only when
    /// not empty.
    pub by_code: bool,
}

/// Every failure kind, in the order of [`Failures::by_kind`].
pub const KINDS: [Kind; 10] = [
    Kind { name: "io", label: "io", request: true, by_code: false },
    Kind { name: "timeout", label: "timeout", request: true, by_code: false },
    Kind { name: "status", label: "status", request: true, by_code: true },
    Kind { name: "body", label: "body", request: true, by_code: false },
    Kind { name: "protocol", label: "protocol", request: true, by_code: false },
    Kind { name: "tls", label: "tls", request: true, by_code: false },
    Kind { name: "reset", label: "HTTP/2 streams reset", request: true, by_code: true },
    Kind { name: "connect", label: "connect errors", request: false, by_code: false },
    Kind { name: "stray", label: "connections with stray bytes", request: false, by_code: false },
    Kind { name: "goaway", label: "HTTP/2 connections ended by a GOAWAY error code", request: false, by_code: true },
];

impl Failures {
    /// Each kind's count, in the order of [`KINDS`] (`status` and `reset`
    /// summed over their codes; a sum past `u64::MAX`, which only a forged
    /// file holds, saturates).
    pub fn by_kind(&self) -> [u64; KINDS.len()] {
        fn sum<K>(m: &BTreeMap<K, u64>) -> u64 {
            m.values().fold(0u64, |a, &n| a.saturating_add(n))
        }
        [
            self.io,
            self.timeout,
            sum(&self.status),
            self.body,
            self.protocol,
            self.tls,
            sum(&self.reset),
            self.connect,
            self.stray,
            sum(&self.goaway),
        ]
    }

    /// How kind `i` of [`KINDS`] reads: its count, or its map by code.
    pub fn shown(&self, i: usize) -> String {
        match KINDS[i].name {
            "status" => format!("{:?}", self.status),
            "reset" => format!("{:?}", self.reset),
            "goaway" => format!("{:?}", self.goaway),
            _ => self.by_kind()[i].to_string(),
        }
    }

    /// Failed requests: the kinds that are requests ([`Kind::request`]),
    /// in `u128` so that a forged file's counts cannot overflow.
    pub fn requests_wide(&self) -> u128 {
        KINDS.iter().zip(self.by_kind()).filter(|(k, _)| k.request).map(|(_, n)| u128::from(n)).sum()
    }

    /// Failed requests: every kind but `connect` and `stray`, which send no request.
    pub fn requests(&self) -> u64 {
        u64::try_from(self.requests_wide()).unwrap_or(u64::MAX)
    }
}

/// Adds another thread's (or client's) failures.
impl std::ops::AddAssign<&Failures> for Failures {
    fn add_assign(&mut self, other: &Self) {
        self.connect += other.connect;
        self.io += other.io;
        self.timeout += other.timeout;
        for (code, n) in &other.status {
            *self.status.entry(*code).or_default() += n;
        }
        self.body += other.body;
        self.protocol += other.protocol;
        self.tls += other.tls;
        self.stray += other.stray;
        for (code, n) in &other.reset {
            *self.reset.entry(*code).or_default() += n;
        }
        for (code, n) in &other.goaway {
            *self.goaway.entry(*code).or_default() += n;
        }
    }
}

/// Counts of one window: requests whose response completed in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// Successful requests (status 200 and the exact expected body).
    pub successful: u64,
    /// Failed requests (every failure kind but `connect`).
    pub failed: u64,
}

/// Why a failure happened, as the load loop classifies it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// See [`Failures::connect`].
    Connect,
    /// See [`Failures::io`].
    Io,
    /// See [`Failures::timeout`].
    Timeout,
    /// See [`Failures::status`].
    Status(u16),
    /// See [`Failures::body`].
    Body,
    /// See [`Failures::protocol`].
    Protocol,
    /// See [`Failures::tls`].
    Tls,
    /// See [`Failures::stray`].
    Stray,
    /// See [`Failures::reset`]: the stream's error code.
    Reset(u32),
    /// See [`Failures::goaway`]: the connection's error code.
    GoAway(u32),
}

impl FailureKind {
    /// Whether it is the failure of a request (every kind but `connect` and
    /// `stray`, which are connections').
    pub fn is_request(self) -> bool {
        !matches!(self, Self::Connect | Self::Stray | Self::GoAway(_))
    }
}

/// Everything one run (or one engine thread of it) measured.
///
/// Accounting identity: every write of a request is counted once, and each
/// request's one outcome once (the identity is written out, and checked, in
/// `measure::RunFigures::check`).
#[derive(Debug, Clone)]
pub struct RunStats {
    /// Per measured window, in order.
    pub windows: Vec<Window>,
    /// Failures by kind, measured windows only; connect, stray and goaway
    /// (connections), and protocol, whole run (the warm-up's protocol
    /// failures also in `counts.warmup_failed_protocol`).
    pub failures: Failures,
    /// The run's counters (declared in [`super::counters::COUNTERS`]): whole
    /// run, or this route's for a route of a sliced run (see their scope).
    pub counts: Counts,
    /// Of `counts.warmup_completed`, those that failed (for the live
    /// counters; results keep only the total).
    pub warmup_failed: u64,
    /// Latency of successful requests, microseconds, from when each was due
    /// (the open loop's schedule; the write in the closed loop) to its last
    /// byte: corrected for coordinated omission.
    pub latency_us: Histogram<u64>,
    /// Open loop only: latency from the actual write to the last byte
    /// (uncorrected), microseconds.
    pub latency_uncorrected_us: Option<Histogram<u64>>,
    /// Latency (corrected) of the successful requests completed in each
    /// window, kept only when asked ([`RunStats::keep_window_latency`]: the
    /// routes of an open-loop alternation, whose percentiles are compared
    /// block by block); a window with nothing recorded has none. Empty
    /// otherwise, and then one failed bounds check per request.
    pub window_latency_us: Vec<Option<Histogram<u64>>>,
}

/// Significant decimal digits the latency histograms keep: values within
/// 0.1 % of each other share a bucket.
pub const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

/// An empty latency histogram as the engine records them: 1 µs to
/// [`MAX_LATENCY_US`], [`LATENCY_SIGNIFICANT_DIGITS`] digits.
pub fn latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_LATENCY_US, LATENCY_SIGNIFICANT_DIGITS).expect("valid histogram bounds")
}

impl RunStats {
    /// Empty stats with `windows` zeroed windows; `open_loop` keeps the
    /// uncorrected latency apart.
    pub fn new(windows: usize, open_loop: bool) -> Self {
        Self {
            windows: vec![Window::default(); windows],
            failures: Failures::default(),
            counts: Counts::default(),
            warmup_failed: 0,
            latency_us: latency_histogram(),
            latency_uncorrected_us: open_loop.then(latency_histogram),
            window_latency_us: Vec::new(),
        }
    }

    /// Keeps a latency histogram per window from now on (allocated at a
    /// window's first success).
    pub fn keep_window_latency(&mut self) {
        self.window_latency_us = vec![None; self.windows.len()];
    }

    /// Successful requests over all measured windows, in constant time:
    /// every one is recorded once in `latency_us` (clamped into its bounds).
    pub fn measured_successes(&self) -> u64 {
        self.latency_us.len()
    }

    /// Requests written and not settled otherwise than by a success of the
    /// measured windows: those successes and the requests in flight, by the
    /// accounting identity (every write is the warm-up's, a measured
    /// success or failure, in flight, or written again as a retry).
    pub fn succeeded_or_in_flight(&self) -> u64 {
        let c = &self.counts;
        c.sent.saturating_sub(c.warmup_completed + self.settled_failures() + c.retried)
    }

    /// Failed requests settled outside the warm-up: every kind that is a
    /// request's, but the warm-up's protocol failures (whole run, they are
    /// the warm-up's requests).
    pub fn settled_failures(&self) -> u64 {
        self.failures.requests().saturating_sub(self.counts.warmup_failed_protocol)
    }

    /// Successful requests over all measured windows.
    pub fn successful(&self) -> u64 {
        self.windows.iter().map(|w| w.successful).sum()
    }

    /// Records a successful request completed in measured window `window`,
    /// `latency_us` after it was due and `uncorrected_us` after it was written.
    pub fn record_success(&mut self, window: usize, latency_us: u64, uncorrected_us: u64) {
        if let Some(w) = self.windows.get_mut(window) {
            w.successful += 1;
        }
        self.latency_us.saturating_record(latency_us.clamp(1, MAX_LATENCY_US));
        if let Some(slot) = self.window_latency_us.get_mut(window) {
            slot.get_or_insert_with(latency_histogram).saturating_record(latency_us.clamp(1, MAX_LATENCY_US));
        }
        if let Some(h) = &mut self.latency_uncorrected_us {
            h.saturating_record(uncorrected_us.clamp(1, MAX_LATENCY_US));
        }
    }

    /// Records a failure completed in measured window `window` (`None` for a
    /// connection's failure, `connect` or `stray`, which is no request and
    /// has no window).
    pub fn record_failure(&mut self, window: Option<usize>, kind: FailureKind) {
        let f = &mut self.failures;
        match kind {
            FailureKind::Connect => f.connect += 1,
            FailureKind::Io => f.io += 1,
            FailureKind::Timeout => f.timeout += 1,
            FailureKind::Status(code) => *f.status.entry(code).or_default() += 1,
            FailureKind::Body => f.body += 1,
            FailureKind::Protocol => f.protocol += 1,
            FailureKind::Tls => f.tls += 1,
            FailureKind::Stray => f.stray += 1,
            FailureKind::Reset(code) => *f.reset.entry(code).or_default() += 1,
            FailureKind::GoAway(code) => *f.goaway.entry(code).or_default() += 1,
        }
        if kind.is_request()
            && let Some(w) = window.and_then(|i| self.windows.get_mut(i))
        {
            w.failed += 1;
        }
    }

    /// Latency percentiles of successful requests (corrected); `None`
    /// when none succeeded.
    pub fn latency_summary(&self) -> Option<LatencySummary> {
        LatencySummary::of(&self.latency_us)
    }
}

/// Adds another thread of the same run (same windows, same histogram bounds).
impl std::ops::AddAssign<&RunStats> for RunStats {
    fn add_assign(&mut self, other: &Self) {
        for (a, b) in self.windows.iter_mut().zip(&other.windows) {
            a.successful += b.successful;
            a.failed += b.failed;
        }
        self.failures += &other.failures;
        self.counts += &other.counts;
        self.warmup_failed += other.warmup_failed;
        self.latency_us.add(&other.latency_us).expect("same histogram bounds");
        if let (Some(a), Some(b)) = (&mut self.latency_uncorrected_us, &other.latency_uncorrected_us) {
            a.add(b).expect("same histogram bounds");
        }
        if self.window_latency_us.is_empty() {
            self.window_latency_us = other.window_latency_us.clone();
        } else {
            for (a, b) in self.window_latency_us.iter_mut().zip(&other.window_latency_us) {
                match (a.as_mut(), b) {
                    (Some(a), Some(b)) => a.add(b).expect("same histogram bounds"),
                    (None, Some(b)) => *a = Some(b.clone()),
                    (_, None) => {}
                }
            }
        }
    }
}

impl LatencySummary {
    /// The percentiles of `h`; `None` when it holds nothing (no latency was
    /// measured, which is not a latency of 0).
    pub fn of(h: &Histogram<u64>) -> Option<Self> {
        (!h.is_empty()).then(|| Self {
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p999: h.value_at_quantile(0.999),
            max: h.max(),
        })
    }

    /// Reads an optional summary as files of every schema wrote it: `null`
    /// or absent, or the all-zero summary files before schema 12 wrote when
    /// nothing succeeded (the engine records every latency as at least
    /// 1 µs, so zeros were never measured), as `None`.
    ///
    /// # Errors
    /// When the value is neither `null` nor a summary.
    pub fn deserialize_absent<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Self>, D::Error> {
        Ok(Option::<Self>::deserialize(d)?.filter(|l| *l != Self::default()))
    }
}

/// Latency percentiles, microseconds, of at least one measured request
/// (where none was, the figures hold `None`, never zeros).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Highest recorded.
    pub max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_requests_are_every_kind_but_connect() {
        let f = Failures {
            connect: 100,
            io: 1,
            timeout: 2,
            status: BTreeMap::from([(503, 4), (404, 32)]),
            body: 8,
            protocol: 16,
            tls: 64,
            stray: 128,
            reset: BTreeMap::from([(7, 256), (8, 512)]),
            goaway: BTreeMap::from([(11, 1024)]),
        };
        assert_eq!(f.requests(), 127 + 768, "connect, stray and goaway are connections'");
        // Inside a flattened struct, as `load --json` writes its figures.
        #[derive(Serialize, Deserialize)]
        struct Outer {
            #[serde(flatten)]
            failed: Failures,
        }
        let text = serde_json::to_string(&Outer { failed: f.clone() }).unwrap();
        assert!(text.contains(r#""status":{"404":32,"503":4}"#), "{text}");
        assert!(text.contains(r#""reset":{"7":256,"8":512}"#), "{text}");
        assert_eq!(serde_json::from_str::<Outer>(&text).unwrap().failed, f, "status codes read back");
        assert_eq!(serde_json::from_str::<Failures>(&serde_json::to_string(&f).unwrap()).unwrap(), f);
        let bad = text.replace("\"404\"", "\"x\"");
        assert!(serde_json::from_str::<Outer>(&bad).is_err());
    }

    /// The table of kinds is the struct's fields, each once, in the order
    /// `by_kind` gives them: every field a distinct count, read back by name.
    #[test]
    fn the_kinds_table_names_every_field_of_failures_once() {
        let f: Failures = serde_json::from_value(serde_json::json!({
            "connect": 1, "io": 2, "timeout": 4, "status": {"503": 8}, "body": 16,
            "protocol": 32, "tls": 64, "stray": 128, "reset": {"7": 256}
        }))
        .unwrap();
        let json = serde_json::to_value(&f).unwrap();
        let fields = json.as_object().unwrap();
        assert_eq!(fields.len(), KINDS.len(), "{json}");
        for (kind, n) in KINDS.iter().zip(f.by_kind()) {
            let field = &fields[kind.name];
            let read = field
                .as_u64()
                .unwrap_or_else(|| field.as_object().unwrap().values().map(|v| v.as_u64().unwrap()).sum());
            assert_eq!(read, n, "{}", kind.name);
            assert_eq!(kind.by_code, field.is_object(), "{}", kind.name);
        }
        let requests: u64 = KINDS.iter().zip(f.by_kind()).filter(|(k, _)| k.request).map(|(_, n)| n).sum();
        assert_eq!((requests, f.requests()), (382, 382), "every kind but connect (1) and stray (128): {json}");
    }

    #[test]
    fn codes_read_from_strings_and_a_key_that_is_no_code_is_named() {
        let read = |json: &str| serde_json::from_str::<Failures>(json).map_err(|e| e.to_string());
        let base = r#""connect": 0, "io": 0, "timeout": 0, "body": 0, "protocol": 0"#;
        let f = read(&format!(r#"{{{base}, "status": {{"503": 4}}, "goaway": {{"11": 2}}}}"#)).unwrap();
        assert_eq!((f.status, f.goaway), (BTreeMap::from([(503, 4)]), BTreeMap::from([(11, 2)])));
        let err = read(&format!(r#"{{{base}, "status": {{"5xx": 4}}}}"#)).unwrap_err();
        assert!(err.contains("'5xx' is not a status code"), "{err}");
        let err = read(&format!(r#"{{{base}, "status": {{}}, "reset": {{"-1": 1}}}}"#)).unwrap_err();
        assert!(err.contains("'-1' is not an error code"), "{err}");
    }

    #[test]
    fn every_failure_kind_is_counted_apart_and_merged() {
        let kinds = [
            FailureKind::Connect,
            FailureKind::Io,
            FailureKind::Timeout,
            FailureKind::Status(503),
            FailureKind::Body,
            FailureKind::Protocol,
            FailureKind::Tls,
            FailureKind::Stray,
            FailureKind::Reset(7),
            FailureKind::GoAway(11),
        ];
        let mut a = RunStats::new(1, false);
        for (i, kind) in kinds.iter().enumerate() {
            for _ in 0..=i {
                a.record_failure(Some(0), *kind);
            }
        }
        // Kind k of the list above counted k times, each count times `n`.
        let counted = |n: u64| Failures {
            connect: n,
            io: 2 * n,
            timeout: 3 * n,
            status: BTreeMap::from([(503, 4 * n)]),
            body: 5 * n,
            protocol: 6 * n,
            tls: 7 * n,
            stray: 8 * n,
            reset: BTreeMap::from([(7, 9 * n)]),
            goaway: BTreeMap::from([(11, 10 * n)]),
        };
        let one_to_seven = counted(1);
        assert_eq!(a.failures, one_to_seven);
        assert_eq!(a.windows[0].failed, 2 + 3 + 4 + 5 + 6 + 7 + 9, "a connect or stray failure has no window");
        let mut b = a.failures.clone();
        b += &one_to_seven;
        b += &one_to_seven;
        assert_eq!(b, counted(3));
        // Every counter of a run adds up over threads (engine/counters.rs tests each), and so do
        // the warm-up's failures.
        let mut x = RunStats::new(1, false);
        (x.counts.sent, x.warmup_failed) = (2, 1);
        let mut y = RunStats::new(1, false);
        (y.counts.sent, y.warmup_failed) = (10, 3);
        x += &y;
        assert_eq!((x.counts.sent, x.warmup_failed), (12, 4));
    }

    #[test]
    fn merge_adds_windows_failures_and_histograms() {
        let mut a = RunStats::new(2, false);
        a.record_success(0, 100, 100);
        a.record_failure(Some(1), FailureKind::Status(500));
        a.record_failure(None, FailureKind::Connect);
        let mut b = RunStats::new(2, false);
        b.record_success(1, 300, 300);
        b.record_failure(Some(1), FailureKind::Status(500));
        b.record_failure(Some(0), FailureKind::Body);
        a += &b;
        assert_eq!(a.windows, [Window { successful: 1, failed: 1 }, Window { successful: 1, failed: 2 }]);
        assert_eq!(a.successful(), 2);
        assert_eq!(a.failures.status[&500], 2);
        assert_eq!(a.failures.connect, 1);
        assert_eq!(a.failures.requests(), 3, "connect failures are not requests");
        assert_eq!(a.latency_us.len(), 2);
        assert_eq!(a.latency_summary().unwrap().max, a.latency_us.highest_equivalent(300));
    }

    #[test]
    fn out_of_range_latency_saturates() {
        let mut s = RunStats::new(1, false);
        s.record_success(0, 0, 0);
        s.record_success(0, u64::MAX, 0);
        assert_eq!(s.latency_us.len(), 2);
        assert_eq!(s.measured_successes(), s.successful(), "every success in the histogram, clamped");
        assert_eq!(s.latency_us.min(), 1);
        assert!(s.latency_summary().unwrap().max >= MAX_LATENCY_US);
    }

    #[test]
    fn no_success_is_no_latency_and_an_old_files_zeros_read_as_none() {
        let mut s = RunStats::new(1, false);
        s.record_failure(Some(0), FailureKind::Status(503));
        assert_eq!(s.latency_summary(), None, "no latency measured is not a latency of 0");
        s.record_success(0, 250, 250);
        assert_eq!(s.latency_summary().map(|l| (l.p50, l.max)), Some((250, 250)));
        #[derive(Deserialize)]
        struct File {
            #[serde(default, deserialize_with = "LatencySummary::deserialize_absent")]
            latency_us: Option<LatencySummary>,
        }
        let read = |text: &str| serde_json::from_str::<File>(text).unwrap().latency_us;
        let zeros = r#"{"latency_us": {"p50": 0, "p90": 0, "p99": 0, "p999": 0, "max": 0}}"#;
        assert_eq!(read(zeros), None, "schema 11 wrote zeros for nothing measured");
        assert_eq!((read(r#"{"latency_us": null}"#), read("{}")), (None, None));
        let one = r#"{"latency_us": {"p50": 1, "p90": 2, "p99": 3, "p999": 4, "max": 5}}"#;
        assert_eq!(read(one), Some(LatencySummary { p50: 1, p90: 2, p99: 3, p999: 4, max: 5 }));
    }
}
