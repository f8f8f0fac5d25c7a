//! A sampling profiler attached to a server during the measured windows only:
//! `perf record -e cpu-clock -g` (hardware counters are not available on
//! these virtual machines), folded with `inferno`'s perf collapser and drawn
//! as a flame graph with `inferno`, plus a top list of self time.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail, ensure};
use inferno::collapse::Collapse;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Sampling frequency, hertz: 999 rather than a round number so the samples
/// do not beat with periodic work (Brendan Gregg's habit for flame graphs).
pub const FREQUENCY_HZ: u32 = 999;

/// The `perf` found on this machine.
#[derive(Debug, Clone)]
pub struct Perf {
    program: PathBuf,
}

impl Perf {
    /// Finds `perf` on `PATH` and checks that it may record this machine's
    /// processes (a one-sample recording of `true`).
    ///
    /// # Errors
    /// Why profiling is not possible, in one line.
    pub fn detect() -> anyhow::Result<Self> {
        let program = PathBuf::from("perf");
        let tmp = std::env::temp_dir().join(format!("bench-perf-probe-{}.data", std::process::id()));
        let out = Command::new(&program)
            .args(["record", "-q", "-e", "cpu-clock", "-o"])
            .arg(&tmp)
            .args(["--", "true"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output();
        let _ = std::fs::remove_file(&tmp);
        match out {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("perf is not installed (Debian: apt-get install linux-perf)")
            }
            Err(e) => bail!("cannot run perf: {e}"),
            Ok(o) if !o.status.success() => {
                let text = String::from_utf8_lossy(&o.stderr);
                bail!(
                    "perf may not record here: {}",
                    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("no reason given")
                )
            }
            Ok(_) => Ok(Self { program }),
        }
    }

    /// Starts recording process `pid` (all its threads) into `out`.
    ///
    /// # Errors
    /// When perf cannot be started.
    pub fn attach(&self, pid: u32, out: &Path) -> anyhow::Result<Recording> {
        let child = Command::new(&self.program)
            .args([
                "record",
                "-q",
                "-e",
                "cpu-clock",
                "-g",
                "-F",
                &FREQUENCY_HZ.to_string(),
                "-p",
                &pid.to_string(),
                "-o",
            ])
            .arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot start perf record")?;
        Ok(Recording { child, out: out.to_path_buf(), program: self.program.clone() })
    }
}

/// A `perf record` in progress.
#[derive(Debug)]
pub struct Recording {
    child: Child,
    out: PathBuf,
    program: PathBuf,
}

impl Drop for Recording {
    /// A recording abandoned by an error or early return: end perf, remove its file.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let _ = std::fs::remove_file(&self.out);
    }
}

impl Recording {
    /// Stops the recording (SIGINT, as Ctrl-C would) and returns the folded
    /// stacks of what it sampled; the `perf.data` file is removed.
    ///
    /// # Errors
    /// When perf failed or its output cannot be read.
    pub fn finish(mut self) -> anyhow::Result<String> {
        // `self` is dropped on every return: perf is ended, its file removed.
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGINT);
        }
        let status = self.child.wait().context("waiting for perf record")?;
        ensure!(self.out.is_file(), "perf record wrote nothing ({status})");
        let script = Command::new(&self.program)
            .args(["script", "-i"])
            .arg(&self.out)
            .stderr(Stdio::null())
            .output()
            .context("cannot run perf script")?;
        ensure!(script.status.success(), "perf script failed ({})", script.status);
        fold(&script.stdout)
    }
}

/// Folds the text of `perf script` into one `frame;frame;… weight` line per
/// distinct stack (inferno's perf collapser, which weighs each sample by its
/// period: nanoseconds of CPU for `cpu-clock`).
///
/// # Errors
/// When the text is not `perf script` output.
pub fn fold(perf_script: &[u8]) -> anyhow::Result<String> {
    let mut folded = Vec::new();
    inferno::collapse::perf::Folder::default()
        .collapse(BufReader::new(perf_script), &mut folded)
        .context("cannot fold the perf samples")?;
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

/// Draws the flame graph of `folded` lines to `out` (SVG).
///
/// # Errors
/// When there are no samples or the file cannot be written.
pub fn flamegraph(folded: &[String], title: &str, out: &Path) -> anyhow::Result<()> {
    ensure!(!folded.is_empty(), "no samples to draw");
    let mut options = inferno::flamegraph::Options::default();
    title.clone_into(&mut options.title);
    "ns of CPU (cpu-clock)".clone_into(&mut options.count_name);
    let file = std::fs::File::create(out).with_context(|| format!("cannot write {}", out.display()))?;
    inferno::flamegraph::from_lines(&mut options, folded.iter().map(String::as_str), std::io::BufWriter::new(file))
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
}
