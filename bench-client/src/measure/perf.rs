//! A sampling profiler attached to a server during the measured windows only:
//! `perf record -e cpu-clock` (hardware counters are not available on these
//! virtual machines) walking the stacks with DWARF call frame information by
//! default, folded with `inferno`'s perf collapser. What folded stacks are
//! made into (shapes, flame graphs, differentials) is the report's
//! (`report/flames.rs`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use inferno::collapse::Collapse;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Sampling frequency, hertz: 999 rather than a round number so the samples
/// do not beat with periodic work (Brendan Gregg's habit for flame graphs).
pub(super) const FREQUENCY_HZ: u32 = 999;

/// CPU time one `cpu-clock` sample stands for, nanoseconds: the kernel turns
/// `-F 999` into this fixed period (`NSEC_PER_SEC / 999`), and the folded
/// stacks weigh each sample by it.
pub const SAMPLE_PERIOD_NS: u64 = 1_000_000_000 / FREQUENCY_HZ as u64;

/// User stack copied per sample for DWARF unwinding, bytes: perf's largest
/// (65528). With 32 KiB, 7–18 % of axum's `/state` samples and 10–13 % of
/// Rocket's never reached their thread entry on these servers (README).
pub(super) const DWARF_STACK_BYTES: u32 = 65528;

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
    /// DWARF call frame information over a copy of `DWARF_STACK_BYTES` of
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
pub(super) fn perf_reason(stderr: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
