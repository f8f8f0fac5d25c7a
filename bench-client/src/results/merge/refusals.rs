//! Why several files are not one load: each [`Refusal`] names the files and
//! what differs, `--force` overrides them; a [`MergeError`] no flag
//! overrides.

use std::fmt;
use std::time::Duration;

use hdrhistogram::Histogram;

use super::{Decoded, Input};
use crate::engine::HdrError;
use crate::results::{LoadReport, WatchReport};

/// Inputs that do not describe one load; `--force` overrides each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Two files differ in a setting that must be equal.
    Disagree {
        /// The reference file (the first client).
        a: String,
        /// The file that differs.
        b: String,
        /// What differs.
        what: &'static str,
        /// The value in `a`.
        left: String,
        /// The value in `b`.
        right: String,
    },
    /// The same run given twice (the same file, or a copy).
    SameRun {
        /// The first.
        a: String,
        /// The second.
        b: String,
    },
    /// Two files ran the same segment (or each the whole load).
    SameSegment {
        /// The first.
        a: String,
        /// The second.
        b: String,
        /// Their segment (`None`: each ran alone).
        index: Option<u32>,
        /// Clients of the split.
        count: u32,
    },
    /// Segments of the split have no file.
    MissingSegments {
        /// The first and the last file given.
        a: String,
        /// The last file given.
        b: String,
        /// The segments without a file.
        missing: Vec<u32>,
        /// Clients of the split.
        count: u32,
    },
    /// The inputs started measuring further apart than the tolerance.
    StartSpread {
        /// The earliest.
        a: String,
        /// The latest.
        b: String,
        /// How far apart.
        spread: Duration,
        /// The tolerance.
        tolerance: Duration,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Disagree { a, b, what, left, right } => {
                write!(f, "{a} and {b} disagree on {what}: {left} vs {right}")
            }
            Self::SameRun { a, b } => write!(f, "{a} and {b} are the same run (a file given twice?)"),
            Self::SameSegment { a, b, index: None, .. } => {
                write!(f, "{a} and {b} each ran the whole load (no --clients N --segment i), not parts of one")
            }
            Self::SameSegment { a, b, index: Some(i), count } => {
                write!(f, "{a} and {b} are both segment {i} of {count}")
            }
            Self::MissingSegments { a, b, missing, count } => {
                let list: Vec<String> = missing.iter().map(u32::to_string).collect();
                let s = if missing.len() == 1 { "" } else { "s" };
                write!(f, "{a} … {b}: segment{s} {} of {count} missing (--clients {count})", list.join(", "))
            }
            Self::StartSpread { a, b, spread, tolerance } => write!(
                f,
                "{a} and {b}: clients started {:.1} s apart (tolerance {:.1} s)",
                spread.as_secs_f64(),
                tolerance.as_secs_f64()
            ),
        }
    }
}

/// Why [`merge`](super::merge) gave no report.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Nothing to merge.
    #[error("no file to merge")]
    NoInput,
    /// A file from before schema 6: no histogram, so no exact percentile.
    #[error("{file} has no latency histogram (schema {schema}); rerun the load with this bench-client")]
    NoHistogram {
        /// The file.
        file: String,
        /// Its schema version.
        schema: u32,
    },
    /// A merged report given as an input.
    #[error("{file} is already a merged report; merge the clients' own files")]
    AlreadyMerged {
        /// The file.
        file: String,
    },
    /// A histogram that does not decode, or does not fit the sum.
    #[error("{file}: {source}")]
    BadHistogram {
        /// The file.
        file: String,
        /// Why.
        #[source]
        source: HdrError,
    },
    /// Figures that do not add up (see [`RunFigures::check`](crate::measure::RunFigures::check)), or a latency
    /// histogram holding another number of requests than `successful`.
    #[error("{file}: {why}")]
    Inconsistent {
        /// The file.
        file: String,
        /// The field and what it holds.
        why: String,
    },
    /// A histogram with values outside any other's range.
    #[error("{file}: its histogram cannot be added to the others")]
    CannotAdd {
        /// The file.
        file: String,
    },
    /// Timing values no run can have (a window of zero, a negative warm-up).
    #[error("{file}: window_s {window_s} and warmup_s {warmup_s} are not the timing of a run")]
    BadTiming {
        /// The file.
        file: String,
        /// Its window.
        window_s: f64,
        /// Its warm-up.
        warmup_s: f64,
    },
    /// The inputs are not one load (and `--force` was not given).
    #[error("{0} (--force merges anyway)")]
    Refused(Refusal),
}

impl MergeError {
    /// Whether `--force` would have merged these inputs.
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Refused(_))
    }
}

/// Every reason the inputs are not one load, the first being the one shown
/// without `--force`.
pub(super) fn refusals(
    decoded: &[Decoded<'_>],
    server: Option<&Input<WatchReport>>,
    tolerance: Duration,
) -> Vec<Refusal> {
    let mut out = Vec::new();
    let first = &decoded[0];
    let (a, ra) = (&first.input.file, &first.input.report);
    for d in &decoded[1..] {
        let (b, rb) = (&d.input.file, &d.input.report);
        let mut check = |what: &'static str, left: String, right: String| {
            if left != right {
                out.push(Refusal::Disagree { a: a.clone(), b: b.clone(), what, left, right });
            }
        };
        check("the URL", ra.url.clone(), rb.url.clone());
        check("--window", seconds(ra.figures.window_s), seconds(rb.figures.window_s));
        check("--warmup", seconds(ra.warmup_s), seconds(rb.warmup_s));
        check("the number of windows", ra.figures.windows.len().to_string(), rb.figures.windows.len().to_string());
        check("the mode", mode(ra), mode(rb));
        check("--pipeline", ra.figures.pipeline.to_string(), rb.figures.pipeline.to_string());
        check("--http2", ra.figures.protocol.name().to_owned(), rb.figures.protocol.name().to_owned());
        check("--nap-us", ra.figures.nap_us.to_string(), rb.figures.nap_us.to_string());
        check("--clients", ra.clients.to_string(), rb.clients.to_string());
        check("--start-at", instant(ra.figures.start_at_unix_ms), instant(rb.figures.start_at_unix_ms));
        check("the histogram layout", layout(&first.latency), layout(&d.latency));
    }
    for (i, x) in decoded.iter().enumerate() {
        for y in &decoded[i + 1..] {
            let (rx, ry) = (&x.input.report, &y.input.report);
            let (a, b) = (x.input.file.clone(), y.input.file.clone());
            // Two segments are two runs, even when neither measured a latency
            // (two empty histograms are alike without being one run).
            if rx.segment == ry.segment
                && rx.figures.label == ry.figures.label
                && x.measure_start_unix_ms == y.measure_start_unix_ms
                && rx.figures.latency_hdr == ry.figures.latency_hdr
            {
                out.push(Refusal::SameRun { a, b });
            } else if rx.segment == ry.segment {
                out.push(Refusal::SameSegment { a, b, index: rx.segment, count: rx.clients });
            }
        }
    }
    let count = ra.clients;
    let missing: Vec<u32> =
        (0..count).filter(|i| !decoded.iter().any(|d| d.input.report.segment == Some(*i))).collect();
    if count > 1 && !missing.is_empty() {
        let last = &decoded[decoded.len() - 1].input.file;
        out.push(Refusal::MissingSegments { a: a.clone(), b: last.clone(), missing, count });
    }
    if let Some(s) = server {
        let (b, w) = (&s.file, &s.report);
        let mut check = |what: &'static str, left: String, right: String| {
            if left != right {
                out.push(Refusal::Disagree { a: a.clone(), b: b.clone(), what, left, right });
            }
        };
        check("--window", seconds(ra.figures.window_s), seconds(w.window_s));
        check("--warmup", seconds(ra.warmup_s), seconds(w.warmup_s));
        check("the number of windows", ra.figures.windows.len().to_string(), w.planned_windows().to_string());
        check("--start-at", instant(ra.figures.start_at_unix_ms), instant(w.start_at_unix_ms));
    }
    let mut starts: Vec<(u64, &String)> = decoded.iter().map(|d| (d.measure_start_unix_ms, &d.input.file)).collect();
    starts.extend(server.map(|s| (s.report.measure_start_unix_ms, &s.file)));
    let (earliest, latest) = (starts.iter().min(), starts.iter().max());
    if let (Some(&(t0, a)), Some(&(t1, b))) = (earliest, latest) {
        let spread = Duration::from_millis(t1 - t0);
        if spread > tolerance {
            out.push(Refusal::StartSpread { a: a.clone(), b: b.clone(), spread, tolerance });
        }
    }
    out
}

/// `2 s`, `0.5 s`.
fn seconds(s: f64) -> String {
    format!("{s} s")
}

/// `closed loop`, or `open loop at 3000 requests/s` (the whole schedule:
/// a client's share times the clients).
fn mode(r: &LoadReport) -> String {
    match r.figures.rate_per_s {
        None => "closed loop".to_owned(),
        Some(share) => format!("open loop at {} requests/s", share * f64::from(r.clients)),
    }
}

/// A start barrier as milliseconds since the epoch, or `none`.
fn instant(ms: Option<u64>) -> String {
    ms.map_or_else(|| "none".to_owned(), |ms| format!("{ms} ms since the epoch"))
}

/// A histogram's bounds and precision.
fn layout(h: &Histogram<u64>) -> String {
    format!("{}..{} µs, {} significant digits", h.low(), h.high(), h.sigfig())
}
