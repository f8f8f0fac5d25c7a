//! What folded stacks (from [`crate::measure`]'s perf recording) are made
//! into: their sum over runs, the shape of a flame graph (samples, share of
//! stacks cut before their thread entry, share with `[unknown]` frames), the
//! top of self time, flame graphs and differential flame graphs per request
//! (drawn with `inferno`), and the records of those a suite drew.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, ensure};

use crate::model::{Framework, Scenario, Variant};

/// Adds the folded stacks of `more` into `into` (stack → weight).
pub fn merge(into: &mut BTreeMap<String, u64>, more: &str) {
    for line in more.lines() {
        if let Some((stack, count)) = line.rsplit_once(' ')
            && let Ok(n) = count.parse::<u64>()
        {
            *into.entry(stack.to_owned()).or_default() += n;
        }
    }
}

/// Folded lines of `stacks`, for [`flamegraph`].
pub fn lines(stacks: &BTreeMap<String, u64>) -> Vec<String> {
    stacks.iter().map(|(s, n)| format!("{s} {n}")).collect()
}

/// Outermost frames that are a thread's entry: a stack that reaches one of
/// them is whole (glibc's `clone3`/`start_thread`, the process's `_start` …
/// `main`; Rust's `…::thread_start` is matched by its suffix).
const THREAD_ENTRIES: [&str; 10] = [
    "clone3",
    "__clone3",
    "clone",
    "__clone",
    "start_thread",
    "_start",
    "__libc_start_main",
    "__libc_start_main_impl",
    "__libc_start_call_main",
    "main",
];

/// Whether a folded stack (thread name first, then outermost to innermost
/// frame) reaches a thread entry.
fn reaches_root(stack: &str) -> bool {
    let outermost = stack.split(';').nth(1).unwrap_or("");
    THREAD_ENTRIES.contains(&outermost) || outermost.ends_with("thread_start")
}

/// Whether a folded stack has a frame perf could not name: `[unknown]`, or
/// `[module]` for an address inside a module without its symbol.
fn has_unknown(stack: &str) -> bool {
    stack.split(';').skip(1).any(|f| f.starts_with('[') && f.ends_with(']') && !f.contains(' '))
}

/// How much of a flame graph stands on whole stacks: its samples, those
/// whose stack does not reach a thread entry (they float, their callers
/// uncredited), and those with an unnamed frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shape {
    /// Samples drawn.
    pub samples: u64,
    /// Samples whose stack stops before a thread entry.
    pub cut: u64,
    /// Samples with an `[unknown]` (or `[module]`) frame.
    pub unknown: u64,
}

impl Shape {
    /// The shape of `stacks`, folded stacks weighed `period_ns` per sample
    /// (e.g. [`crate::measure::SAMPLE_PERIOD_NS`]).
    pub fn of(stacks: &BTreeMap<String, u64>, period_ns: u64) -> Self {
        let samples = |w: u64| (w + period_ns / 2) / period_ns.max(1);
        let mut shape = Self::default();
        for (stack, &weight) in stacks {
            let n = samples(weight);
            shape.samples += n;
            if !reaches_root(stack) {
                shape.cut += n;
            }
            if has_unknown(stack) {
                shape.unknown += n;
            }
        }
        shape
    }

    /// Share of the samples with a cut stack, percent.
    pub fn cut_percent(&self) -> f64 {
        self.cut as f64 * 100.0 / self.samples.max(1) as f64
    }

    /// Share of the samples with an `[unknown]` frame, percent.
    pub fn unknown_percent(&self) -> f64 {
        self.unknown as f64 * 100.0 / self.samples.max(1) as f64
    }
}

/// Draws the flame graph of `folded` lines to `out` (SVG), with `subtitle`
/// under its title.
///
/// # Errors
/// When there are no samples or the file cannot be written.
pub fn flamegraph(folded: &[String], title: &str, subtitle: Option<&str>, out: &Path) -> anyhow::Result<()> {
    ensure!(!folded.is_empty(), "no samples to draw");
    let mut options = inferno::flamegraph::Options::default();
    title.clone_into(&mut options.title);
    options.subtitle = subtitle.map(str::to_owned);
    "ns of CPU (cpu-clock)".clone_into(&mut options.count_name);
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.iter().map(String::as_str), &mut svg)
        .with_context(|| format!("cannot draw {}", out.display()))?;
    Ok(crate::sys::write_or_keep(out, &svg)?)
}

/// Folded lines of `stacks` per 1,000 of `requests`: each weight (ns of
/// CPU) × 1,000 ÷ requests, rounded; stacks that round to zero are left out.
pub fn per_thousand_requests(stacks: &BTreeMap<String, u64>, requests: u64) -> Vec<String> {
    let requests = u128::from(requests.max(1));
    stacks
        .iter()
        .filter_map(|(s, &w)| {
            let scaled = (u128::from(w) * 1000 + requests / 2) / requests;
            (scaled > 0).then(|| format!("{s} {scaled}"))
        })
        .collect()
}

/// Which profile gives a differential flame graph its frame widths (the
/// colour is always the change: red grew, blue shrank).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Widths {
    /// The baseline's: what the change removed stays visible (in blue).
    Before,
    /// The changed variant's: what it added is visible (in red).
    After,
}

/// Draws the differential flame graph from `before` to `after` (folded
/// lines in the same unit, e.g. [`per_thousand_requests`]) to `out`, frame
/// widths from `widths`, with inferno's differential folding.
///
/// # Errors
/// When either side is empty or the file cannot be written.
pub fn differential(
    before: &[String],
    after: &[String],
    widths: Widths,
    title: &str,
    out: &Path,
) -> anyhow::Result<()> {
    ensure!(!before.is_empty() && !after.is_empty(), "no samples to compare");
    let (first, second) = match widths {
        Widths::After => (before, after),
        Widths::Before => (after, before),
    };
    let mut two_columns = Vec::new();
    inferno::differential::from_readers(
        inferno::differential::Options::default(),
        (first.join("\n") + "\n").as_bytes(),
        (second.join("\n") + "\n").as_bytes(),
        &mut two_columns,
    )
    .context("cannot fold the two profiles together")?;
    let text = String::from_utf8_lossy(&two_columns);
    let mut options = inferno::flamegraph::Options::default();
    title.clone_into(&mut options.title);
    options.subtitle = Some(match widths {
        Widths::Before => "widths: before · red grew, blue shrank (per request)".to_owned(),
        Widths::After => "widths: after · red grew, blue shrank (per request)".to_owned(),
    });
    // inferno colours by second − first; with the sides swapped, negating
    // keeps red for what grew from before to after.
    options.negate_differentials = widths == Widths::Before;
    "ns of server CPU per 1,000 requests".clone_into(&mut options.count_name);
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, text.lines(), &mut svg)
        .with_context(|| format!("cannot draw {}", out.display()))?;
    Ok(crate::sys::write_or_keep(out, &svg)?)
}

/// The `n` functions with the most self time (weight where they are the
/// innermost frame): (function, percent of the total), descending.
pub fn top_self(stacks: &BTreeMap<String, u64>, n: usize) -> Vec<(String, f64)> {
    let total: u64 = stacks.values().sum();
    let mut selfs: BTreeMap<&str, u64> = BTreeMap::new();
    for (stack, count) in stacks {
        let leaf = stack.rsplit(';').next().unwrap_or(stack);
        *selfs.entry(leaf).or_default() += count;
    }
    let mut top: Vec<(String, f64)> =
        selfs.into_iter().map(|(f, c)| (f.to_owned(), c as f64 * 100.0 / total.max(1) as f64)).collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(n);
    top
}

/// A variant's flame graph in a run folder.
#[derive(Debug, Clone, PartialEq)]
pub struct FlameGraph {
    /// Framework profiled.
    pub framework: Framework,
    /// Variant whose runs were merged.
    pub variant: Variant,
    /// The SVG, relative to the run folder.
    pub svg: String,
    /// Its samples and how many float.
    pub shape: Shape,
    /// Profiled runs merged into it.
    pub runs: u32,
    /// Successful requests of those runs.
    pub requests: u64,
    /// The server CPU its samples stand for, as a share of the server CPU
    /// measured over the same slices, percent (under 100: perf, yielding its
    /// CPU to the client, lost samples); `None` when the server's CPU was not
    /// measured.
    pub kept_percent: Option<f64>,
}

/// The differential flame graphs of one delta, per request.
#[derive(Debug, Clone, PartialEq)]
pub struct Differential {
    /// Framework profiled.
    pub framework: Framework,
    /// Scenario of the delta.
    pub scenario: Scenario,
    /// Baseline variant.
    pub from: Variant,
    /// Changed variant.
    pub to: Variant,
    /// The SVG with the baseline's widths, relative to the run folder.
    pub svg_before_widths: String,
    /// The SVG with the changed variant's widths.
    pub svg_after_widths: String,
    /// Server CPU per successful request of the baseline, ns: measured over
    /// its profiled slices (sampled when the server's CPU was not measured).
    pub before_ns_per_request: f64,
    /// The same for the changed variant.
    pub after_ns_per_request: f64,
}

/// Every flame graph of a profiled suite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlameGraphs {
    /// One per framework and variant.
    pub graphs: Vec<FlameGraph>,
    /// One per framework and delta.
    pub differentials: Vec<Differential>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::SAMPLE_PERIOD_NS;

    #[test]
    fn merge_and_top_self_count_leaf_frames() {
        let mut stacks = BTreeMap::new();
        merge(&mut stacks, "main;serve;parse 6\nmain;serve;write 3\n");
        merge(&mut stacks, "main;serve;parse 2\nmain;idle 1\nnot a line\n");
        assert_eq!(stacks["main;serve;parse"], 8);
        let top = top_self(&stacks, 2);
        assert_eq!(top[0].0, "parse");
        assert!((top[0].1 - 8.0 / 12.0 * 100.0).abs() < 1e-9);
        assert_eq!(top[1].0, "write");
        assert_eq!(lines(&stacks).len(), 3);
    }

    #[test]
    fn shape_counts_stacks_that_stop_short_of_a_thread_entry() {
        let mut stacks = BTreeMap::new();
        let p = SAMPLE_PERIOD_NS;
        merge(
            &mut stacks,
            &format!(
                "tokio-rt-worker;clone3;start_thread;std::sys::thread::unix::Thread::new::thread_start;poll;send {}\n\
                 tokio-rt-worker;start_thread;poll {}\n\
                 server;_start;__libc_start_main;main;run {}\n\
                 actix-rt|system;<std::sys::thread::unix::Thread>::new::thread_start;poll {}\n\
                 tokio-rt-worker;__send {}\n\
                 tokio-rt-worker;[unknown];malloc {}\n\
                 tokio-rt-worker;clone3;start_thread;poll;[libc.so.6] {}\n",
                10 * p,
                5 * p,
                p,
                2 * p,
                6 * p,
                3 * p,
                3 * p
            ),
        );
        let shape = Shape::of(&stacks, p);
        assert_eq!(shape, Shape { samples: 30, cut: 9, unknown: 6 });
        assert!((shape.cut_percent() - 30.0).abs() < 1e-9);
        assert!((shape.unknown_percent() - 20.0).abs() < 1e-9);
        assert_eq!(Shape::of(&BTreeMap::new(), p).cut_percent(), 0.0, "no samples, no division by zero");
    }

    #[test]
    fn per_request_lines_scale_to_a_thousand_requests() {
        let mut stacks = BTreeMap::new();
        merge(&mut stacks, "t;a 3000000\nt;b 1\n");
        assert_eq!(per_thousand_requests(&stacks, 500), ["t;a 6000000", "t;b 2"]);
        assert_eq!(per_thousand_requests(&stacks, 1_000_000), ["t;a 3000"], "b rounds to zero");
    }
}
