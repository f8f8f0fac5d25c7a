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

/// Default sampling frequency, hertz: not a round number, so the samples do
/// not beat with periodic work (Brendan Gregg's habit for flame graphs); 249
/// rather than 999 because perf's own CPU (which shares the client's) and the
/// 64 KiB stack copy of every DWARF sample scale with it: switched on and off
/// inside each server process, perf at 999 Hz cost 12–14 % of `/plaintext`'s
/// requests per second, at 249 Hz 1.7–2.5 % (at most 4.6 % at 95 %, 22
/// processes per framework), and 1.0–4.2 % of `/api/devices`'s
/// (docs/PROFILING.md, `bench/profiler-toggle.sh`).
pub const DEFAULT_FREQUENCY_HZ: u32 = 249;

/// CPU time one `cpu-clock` sample stands for at the default frequency,
/// nanoseconds (see [`Sampling::period_ns`]).
pub const SAMPLE_PERIOD_NS: u64 = 1_000_000_000 / DEFAULT_FREQUENCY_HZ as u64;

/// How perf samples: how it walks a stack, how often.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    /// How a sampled stack is walked.
    pub call_graph: CallGraph,
    /// Samples per second of the server's CPU time.
    pub frequency_hz: u32,
    /// Whether `perf script` resolves inlined functions into frames of
    /// their own (its default). Off for the `dev` build, which inlines
    /// nothing of ours: there binutils' `addr2line`, which perf runs to find
    /// them, took 27 s of a `perf script` over 2 s of samples that takes
    /// 0.3 s without it.
    pub inline: bool,
}

impl Sampling {
    /// CPU time one `cpu-clock` sample stands for, nanoseconds: the kernel
    /// turns `-F HZ` into this fixed period (`NSEC_PER_SEC / HZ`), and the
    /// folded stacks weigh each sample by it.
    pub fn period_ns(self) -> u64 {
        1_000_000_000 / u64::from(self.frequency_hz.max(1))
    }
}

/// User stack copied per sample for DWARF unwinding, bytes: perf's largest
/// (65528). With 32 KiB, 7–18 % of axum's `/state` samples and 10–13 % of
/// Rocket's never reached their thread entry on these servers (docs/PROFILING.md).
pub(super) const DWARF_STACK_BYTES: u32 = 65528;

/// perf's ring buffer (`-m`), pages of 4 KiB: 16 MiB, about a second of
/// DWARF samples at the default frequency, so that perf, which
/// yields its CPU to the client (nice 19), can fall behind for that long
/// without losing samples.
const MMAP_PAGES: u32 = 4096;

/// The nice value perf records at: the lowest priority. It shares the
/// client's CPUs, and at its default priority its bursts of copying (64 KiB
/// a sample) delayed the client enough to leave the server under 60 % busy
/// in a closed loop (docs/PROFILING.md).
const PERF_NICE: i32 = 19;

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
}

/// The `perf` found on this machine, and how it samples.
#[derive(Debug, Clone)]
pub struct Perf {
    program: PathBuf,
    sampling: Sampling,
}

impl Perf {
    /// Finds `perf` on `PATH` and checks that it may record a process it did
    /// not start, as it will record the servers: it attaches to this very
    /// process for a moment (`-p`), the way a restricted `ptrace` scope, a
    /// missing capability or `perf_event_paranoid` would refuse.
    ///
    /// # Errors
    /// Why profiling is not possible, in one line quoting perf.
    pub fn detect(sampling: Sampling) -> anyhow::Result<Self> {
        let perf = Self { program: PathBuf::from("perf"), sampling };
        let file = std::env::temp_dir().join(format!("bench-perf-probe-{}.data", std::process::id()));
        let mut probe = perf.attach(std::process::id(), &file)?;
        let end = Instant::now() + PROBE;
        while Instant::now() < end && matches!(probe.child.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(20));
        }
        probe.stop().context("perf may not record here")?;
        Ok(perf)
    }

    /// The recording command, as `results.json` and the report name it.
    pub fn command(&self) -> String {
        let Sampling { call_graph, frequency_hz, .. } = self.sampling;
        format!(
            "perf record -e cpu-clock -k monotonic --call-graph {} -F {frequency_hz} -m {MMAP_PAGES} (nice {PERF_NICE})",
            call_graph.arg()
        )
    }

    /// How it samples.
    pub fn sampling(&self) -> Sampling {
        self.sampling
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
            .args([
                "record",
                "-e",
                "cpu-clock",
                "-k",
                "monotonic",
                "--call-graph",
                &self.sampling.call_graph.arg(),
                "-F",
            ])
            .arg(self.sampling.frequency_hz.to_string())
            .arg("-m")
            .arg(MMAP_PAGES.to_string())
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
        // Best effort: a perf left at its priority records as before, only heavier on the client.
        let _ = crate::sys::set_nice(child.id(), PERF_NICE);
        Ok(Recording {
            child,
            out: out.to_path_buf(),
            log,
            program: self.program.clone(),
            inline: self.sampling.inline,
        })
    }
}

/// A `perf record` in progress.
#[derive(Debug)]
pub struct Recording {
    child: Child,
    out: PathBuf,
    log: PathBuf,
    program: PathBuf,
    /// `perf script` resolves inlined frames ([`Sampling::inline`]).
    inline: bool,
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
    /// sampled, in `parts` profiles: a sample stamped `t` (nanoseconds on
    /// `CLOCK_MONOTONIC`) goes to part `part_of(t)`, so that samples taken
    /// while a route's slices ran are that route's. Its files are removed.
    ///
    /// # Errors
    /// When perf failed (quoting it) or its output cannot be read.
    pub fn finish(mut self, parts: usize, part_of: &dyn Fn(i128) -> usize) -> anyhow::Result<Vec<String>> {
        // `self` is dropped on every return: perf is ended, its files removed.
        self.stop()?;
        let text = self.out.with_extension("script");
        let stdout = File::create(&text).with_context(|| format!("cannot create {}", text.display()))?;
        let stderr = File::create(&self.log).with_context(|| format!("cannot create {}", self.log.display()))?;
        let mut script = Command::new(&self.program)
            .args(["script", "--ns"])
            .args(if self.inline { &[][..] } else { &["--no-inline"][..] })
            .arg("-i")
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
        let mut split = vec![Vec::new(); parts.max(1)];
        split_samples(BufReader::new(file), part_of, &mut split)?;
        split.iter().map(|part| fold(part)).collect()
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

/// Shares the samples of `perf script --ns` text out to `parts`: each
/// sample (its header line with the timestamp, its frames, the blank line
/// after them) to `parts[part_of(t)]` (the last part if beyond).
///
/// # Errors
/// A sample whose header has no `SECONDS.NANOSECONDS:` timestamp.
pub(super) fn split_samples(
    reader: impl BufRead,
    part_of: &dyn Fn(i128) -> usize,
    parts: &mut [Vec<u8>],
) -> anyhow::Result<()> {
    let last = parts.len().checked_sub(1).context("no part to give samples to")?;
    let mut part = 0;
    let mut in_sample = false;
    for line in reader.lines() {
        let line = line.context("cannot read perf script's output")?;
        if line.trim().is_empty() {
            if in_sample {
                parts[part].push(b'\n');
            }
            in_sample = false;
            continue;
        }
        if !in_sample {
            let t = timestamp_ns(&line).with_context(|| format!("a perf sample without a timestamp: {line:?}"))?;
            part = part_of(t).min(last);
            in_sample = true;
        }
        parts[part].extend_from_slice(line.as_bytes());
        parts[part].push(b'\n');
    }
    Ok(())
}

/// The timestamp of a `perf script --ns` sample header (`comm pid/tid
/// SECONDS.NANOSECONDS: period event: …`), nanoseconds.
fn timestamp_ns(header: &str) -> Option<i128> {
    header.split_whitespace().find_map(|token| {
        let (seconds, nanos) = token.strip_suffix(':')?.split_once('.')?;
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(seconds) && nanos.len() == 9 && digits(nanos))
            .then(|| seconds.parse::<i128>().ok().zip(nanos.parse::<i128>().ok()))
            .flatten()
            .map(|(s, n)| s * 1_000_000_000 + n)
    })
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

    /// Three samples of `perf script --ns` as perf 6 prints them for
    /// `record -e cpu-clock -k monotonic -p PID`: at 10.000000100 s,
    /// 10.250000000 s (a slice of 250 ms later) and 10.500000001 s (the third slice).
    const SCRIPT: &str = "server-axum 4242/4243 10.000000100:    1001001 cpu-clock: \n\
        \t    55d0c0a1b2c3 axum::serve::handle+0x13 (/srv/server-axum)\n\
        \t    55d0c0a1b000 tokio::runtime::task::poll+0x40 (/srv/server-axum)\n\
        \n\
        server-axum 4242/4243 10.250000000:    1001001 cpu-clock: \n\
        \t    7f00aa000000 __memmove_avx_unaligned_erms+0x20 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
        \t    55d0c0a1b2c3 axum::serve::handle+0x13 (/srv/server-axum)\n\
        \n\
        server-axum 4242/4244 10.500000001:    1001001 cpu-clock: \n\
        \t    55d0c0a1b111 common::payload::clone+0x9 (/srv/server-axum)\n\
        \n";

    #[test]
    fn each_sample_goes_to_the_part_of_its_timestamp_and_folds_there() {
        assert_eq!(timestamp_ns("server-axum 4242/4243 10.000000100:    1001001 cpu-clock: "), Some(10_000_000_100));
        assert_eq!(timestamp_ns("server 1 10.123456: 1 cpu-clock:"), None, "microseconds: not --ns");
        // Slices of 250 ms from 10 s: routes 0, 1, 0 (a block [0, 1]).
        let part_of = |t: i128| usize::try_from((t - 10_000_000_000).div_euclid(250_000_000) % 2).unwrap();
        let mut parts = vec![Vec::new(), Vec::new()];
        split_samples(SCRIPT.as_bytes(), &part_of, &mut parts).unwrap();
        let folded: Vec<String> = parts.iter().map(|p| fold(p).unwrap()).collect();
        assert_eq!(
            folded[0].lines().collect::<Vec<_>>(),
            [
                "server-axum;common::payload::clone 1001001",
                "server-axum;tokio::runtime::task::poll;axum::serve::handle 1001001",
            ]
        );
        assert_eq!(
            folded[1].lines().collect::<Vec<_>>(),
            ["server-axum;axum::serve::handle;__memmove_avx_unaligned_erms 1001001"]
        );
        let one = |_: i128| 7;
        let mut single = vec![Vec::new()];
        split_samples(SCRIPT.as_bytes(), &one, &mut single).unwrap();
        assert_eq!(single[0], SCRIPT.as_bytes(), "beyond the last part: the last, every byte kept");
        let err = split_samples("server 1 no-time: 1 cpu-clock:\n\tabc f (x)\n".as_bytes(), &one, &mut single);
        assert!(err.unwrap_err().to_string().contains("without a timestamp"));
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
}
