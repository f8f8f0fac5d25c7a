//! A sampling profiler attached to a server during the measured windows only:
//! `perf record -e cpu-clock` (hardware counters are not available on these
//! virtual machines) walking the stacks with DWARF call frame information by
//! default, folded with `inferno`'s perf collapser; and what is computed from
//! folded stacks: the shape of a flame graph (samples, share of stacks cut
//! before their thread entry, share with `[unknown]` frames), the top of self
//! time, flame graphs and differential flame graphs per request.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use inferno::collapse::Collapse;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::model::{Framework, Scenario, Variant};

/// Sampling frequency, hertz: 999 rather than a round number so the samples
/// do not beat with periodic work (Brendan Gregg's habit for flame graphs).
pub const FREQUENCY_HZ: u32 = 999;

/// CPU time one `cpu-clock` sample stands for, nanoseconds: the kernel turns
/// `-F 999` into this fixed period (`NSEC_PER_SEC / 999`), and the folded
/// stacks weigh each sample by it.
pub const SAMPLE_PERIOD_NS: u64 = 1_000_000_000 / FREQUENCY_HZ as u64;

/// User stack copied per sample for DWARF unwinding, bytes: perf's largest
/// (65528). With 32 KiB, 7–18 % of axum's `/state` samples and 10–13 % of
/// Rocket's never reached their thread entry on these servers (README).
pub const DWARF_STACK_BYTES: u32 = 65528;

/// How long the probe of [`Perf::detect`] lets perf run before stopping it.
const PROBE: Duration = Duration::from_millis(300);

/// How long `perf record` may take to write its file after SIGINT.
const STOP_DEADLINE: Duration = Duration::from_secs(60);

/// How long `perf script` may take (DWARF unwinding of a few thousand
/// samples takes seconds).
const SCRIPT_DEADLINE: Duration = Duration::from_secs(600);

/// How perf walks a sampled stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    /// DWARF call frame information over a copy of [`DWARF_STACK_BYTES`] of
    /// the user stack per sample: walks through the C library, which Debian
    /// builds without frame pointers; heavier (64 KiB per sample to write
    /// and unwind).
    Dwarf,
    /// Frame pointers (`-g`): light, but a stack sampled in glibc (`send`,
    /// `recv`, `malloc`) is cut there.
    FramePointers,
}

impl CallGraph {
    /// The value of perf's `--call-graph`.
    fn arg(self) -> String {
        match self {
            Self::Dwarf => format!("dwarf,{DWARF_STACK_BYTES}"),
            Self::FramePointers => "fp".to_owned(),
        }
    }

    /// The recording command, as `results.json` and the report name it.
    pub fn command(self) -> String {
        format!("perf record -e cpu-clock --call-graph {} -F {FREQUENCY_HZ}", self.arg())
    }
}

/// The `perf` found on this machine, and how it walks stacks.
#[derive(Debug, Clone)]
pub struct Perf {
    program: PathBuf,
    call_graph: CallGraph,
}

impl Perf {
    /// Finds `perf` on `PATH` and checks that it may record a process it did
    /// not start, as it will record the servers: it attaches to this very
    /// process for a moment (`-p`), the way a restricted `ptrace` scope, a
    /// missing capability or `perf_event_paranoid` would refuse.
    ///
    /// # Errors
    /// Why profiling is not possible, in one line quoting perf.
    pub fn detect(call_graph: CallGraph) -> anyhow::Result<Self> {
        let perf = Self { program: PathBuf::from("perf"), call_graph };
        let file = std::env::temp_dir().join(format!("bench-perf-probe-{}.data", std::process::id()));
        let mut probe = perf.attach(std::process::id(), &file)?;
        let end = Instant::now() + PROBE;
        while Instant::now() < end && matches!(probe.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        probe.stop().context("perf may not record here")?;
        Ok(perf)
    }

    /// The recording command (see [`CallGraph::command`]).
    pub fn command(&self) -> String {
        self.call_graph.command()
    }

    /// Starts recording process `pid` (all its threads) into `out`; perf's
    /// messages go to a file beside it, quoted when it fails.
    ///
    /// # Errors
    /// When perf is not installed or cannot be started.
    pub fn attach(&self, pid: u32, out: &Path) -> anyhow::Result<Recording> {
        let log = out.with_extension("log");
        let stderr = File::create(&log).with_context(|| format!("cannot create {}", log.display()))?;
        let spawned = Command::new(&self.program)
            .args(["record", "-e", "cpu-clock", "--call-graph", &self.call_graph.arg(), "-F"])
            .arg(FREQUENCY_HZ.to_string())
            .arg("-p")
            .arg(pid.to_string())
            .arg("-o")
            .arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = std::fs::remove_file(&log);
                if e.kind() == std::io::ErrorKind::NotFound {
                    bail!("perf is not installed (Debian: apt-get install linux-perf)");
                }
                bail!("cannot run perf: {e}");
            }
        };
        Ok(Recording { child, out: out.to_path_buf(), log, program: self.program.clone() })
    }
}

/// A `perf record` in progress.
#[derive(Debug)]
pub struct Recording {
    child: Child,
    out: PathBuf,
    log: PathBuf,
    program: PathBuf,
}

impl Drop for Recording {
    /// A recording abandoned by an error or early return: end perf, remove its files.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        for file in [&self.out, &self.log, &self.out.with_extension("script")] {
            let _ = std::fs::remove_file(file);
        }
    }
}

impl Recording {
    /// Stops the recording (SIGINT, as Ctrl-C would) and checks that perf
    /// recorded: it did not end on its own with an error, stopped in time,
    /// and wrote its file.
    ///
    /// # Errors
    /// What went wrong, with perf's own reason.
    fn stop(&mut self) -> anyhow::Result<()> {
        let early = self.child.try_wait().context("waiting for perf record")?;
        let status = match early {
            // It ended by itself: refused to attach, or its process exited.
            Some(status) => status,
            None => {
                if let Ok(pid) = i32::try_from(self.child.id()) {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
                }
                match wait_within(&mut self.child, STOP_DEADLINE)? {
                    Some(status) => status,
                    None => bail!("perf record did not stop within {} s of SIGINT", STOP_DEADLINE.as_secs()),
                }
            }
        };
        // After SIGINT perf re-raises it, so `signal: 2` is its normal end.
        if status.code().is_some_and(|c| c != 0) {
            bail!("perf record failed ({status}): {}", reason(&self.log));
        }
        ensure!(self.out.is_file(), "perf record wrote nothing ({status}): {}", reason(&self.log));
        Ok(())
    }

    /// Stops the recording and returns the folded stacks of what it
    /// sampled; its files are removed.
    ///
    /// # Errors
    /// When perf failed (quoting it) or its output cannot be read.
    pub fn finish(mut self) -> anyhow::Result<String> {
        // `self` is dropped on every return: perf is ended, its files removed.
        self.stop()?;
        let text = self.out.with_extension("script");
        let stdout = File::create(&text).with_context(|| format!("cannot create {}", text.display()))?;
        let stderr = File::create(&self.log).with_context(|| format!("cannot create {}", self.log.display()))?;
        let mut script = Command::new(&self.program)
            .args(["script", "-i"])
            .arg(&self.out)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .context("cannot run perf script")?;
        let status = match wait_within(&mut script, SCRIPT_DEADLINE)? {
            Some(status) => status,
            None => {
                let _ = script.kill();
                let _ = script.wait();
                bail!("perf script did not finish within {} s", SCRIPT_DEADLINE.as_secs());
            }
        };
        ensure!(status.success(), "perf script failed ({status}): {}", reason(&self.log));
        let file = File::open(&text).with_context(|| format!("cannot read {}", text.display()))?;
        fold_from(BufReader::new(file))
    }
}

/// Waits for `child` at most `deadline`; `None` when it is still running.
fn wait_within(child: &mut Child, deadline: Duration) -> anyhow::Result<Option<ExitStatus>> {
    let end = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().context("waiting for perf")? {
            return Ok(Some(status));
        }
        if Instant::now() >= end {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Perf's own reason from the messages it wrote to `log`.
fn reason(log: &Path) -> String {
    perf_reason(&std::fs::read_to_string(log).unwrap_or_default())
}

/// Perf's reason in one line: the paragraph of its `Error:` (without the
/// heading), or else its first paragraph; its `[ perf record: … ]` progress
/// lines are not reasons.
pub fn perf_reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.starts_with("[ perf record:")).collect();
    let is_error = |l: &&str| l.get(..6).is_some_and(|h| h.eq_ignore_ascii_case("error:"));
    let start = lines.iter().position(is_error).unwrap_or(0);
    let mut paragraph = Vec::new();
    for (i, line) in lines.iter().enumerate().skip(start) {
        let line = if i == start && is_error(line) { line[6..].trim() } else { line };
        match (line.is_empty(), paragraph.is_empty()) {
            (true, true) => {}
            (true, false) => break,
            (false, _) => paragraph.push(line),
        }
    }
    if paragraph.is_empty() { "perf gave no reason".to_owned() } else { paragraph.join(" ") }
}

/// Folds the text of `perf script` into one `frame;frame;… weight` line per
/// distinct stack (inferno's perf collapser, which weighs each sample by its
/// period: nanoseconds of CPU for `cpu-clock`).
///
/// # Errors
/// When the text is not `perf script` output.
pub fn fold(perf_script: &[u8]) -> anyhow::Result<String> {
    fold_from(BufReader::new(perf_script))
}

fn fold_from(reader: impl BufRead) -> anyhow::Result<String> {
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default().collapse(reader, &mut folded).context("cannot fold the perf samples")?;
    Ok(String::from_utf8_lossy(&folded).into_owned())
}

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
    /// (e.g. [`SAMPLE_PERIOD_NS`]).
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
    let file = File::create(out).with_context(|| format!("cannot write {}", out.display()))?;
    inferno::flamegraph::from_lines(&mut options, folded.iter().map(String::as_str), std::io::BufWriter::new(file))
        .with_context(|| format!("cannot draw {}", out.display()))
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
    let file = File::create(out).with_context(|| format!("cannot write {}", out.display()))?;
    inferno::flamegraph::from_lines(&mut options, text.lines(), std::io::BufWriter::new(file))
        .with_context(|| format!("cannot draw {}", out.display()))
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
    /// Sampled server CPU per successful request of the baseline, ns.
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
    fn perf_reason_is_the_first_paragraph_without_its_heading() {
        let paranoid = "Error:\nAccess to performance monitoring and observability operations is limited.\n\
                        Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n\nMore text.\n";
        assert_eq!(
            perf_reason(paranoid),
            "Access to performance monitoring and observability operations is limited. \
             Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open"
        );
        assert_eq!(perf_reason("  \n"), "perf gave no reason");
        assert_eq!(
            perf_reason("Couldn't create thread/CPU maps: No such process\n"),
            "Couldn't create thread/CPU maps: No such process"
        );
        let after_warning = "WARNING: kernel maps are restricted.\n\nError: perf_event_open refused\nby ptrace scope 2\n\n[ perf record: Woken up 1 times ]\n";
        assert_eq!(perf_reason(after_warning), "perf_event_open refused by ptrace scope 2");
    }

    #[test]
    fn per_request_lines_scale_to_a_thousand_requests() {
        let mut stacks = BTreeMap::new();
        merge(&mut stacks, "t;a 3000000\nt;b 1\n");
        assert_eq!(per_thousand_requests(&stacks, 500), ["t;a 6000000", "t;b 2"]);
        assert_eq!(per_thousand_requests(&stacks, 1_000_000), ["t;a 3000"], "b rounds to zero");
    }
}
