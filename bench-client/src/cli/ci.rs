//! `--bmf`, `--github-benchmark` and `--junit`: the files continuous
//! integration reads, written by `suite`, `ab` and `compare` after their
//! own output (the shapes: [`crate::report::ci`]).

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

use crate::report::ci::{Format, Judged, Tracked, gated, regression_lines};

/// Where to write the files CI reads.
#[derive(Debug, Clone, Default, Args)]
pub struct CiArgs {
    /// Write Bencher Metric Format JSON here (throughput and p99 latency per route, the change and
    /// the µs saved per delta, each with its interval).
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,
    /// Write github-action-benchmark's custom JSON here (`customBiggerIsBetter`: successful
    /// requests per second per route, `range` from the interval).
    #[arg(long, value_name = "FILE")]
    pub github_benchmark: Option<PathBuf>,
    /// Write JUnit XML here: a test case per delta, failed on a significant slowdown beyond
    /// --threshold-percent.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// The CI files of a command, checked, with the threshold its JUnit test
/// cases fail beyond.
#[derive(Debug, Clone)]
pub struct CiPlan {
    /// Where to write.
    pub files: CiArgs,
    /// A significant slowdown beyond this many percent fails a test case.
    pub threshold_percent: f64,
}

impl CiPlan {
    /// `files` after [`CiArgs::check`].
    ///
    /// # Errors
    /// A CI file that cannot be written where asked.
    pub fn new(files: &CiArgs, threshold_percent: f64) -> anyhow::Result<Self> {
        files.check()?;
        Ok(Self { files: files.clone(), threshold_percent })
    }

    /// Whether no file is asked for.
    pub fn is_empty(&self) -> bool {
        self.files.files().next().is_none()
    }

    /// Writes the files asked for; `suite` names the JUnit test suite.
    ///
    /// # Errors
    /// A file that cannot be written (named).
    pub fn write(&self, suite: &str, tracked: &[Tracked], judged: &[Judged]) -> anyhow::Result<()> {
        self.files.write(suite, tracked, judged, self.threshold_percent)
    }

    /// Writes the files asked for, prints a `REGRESSION:` line for each
    /// change that fails the gate, and returns how many do: one list
    /// ([`gated`] at this plan's threshold) for the JUnit file's failures
    /// and the command's exit code, so the two cannot disagree.
    ///
    /// # Errors
    /// A file that cannot be written (named).
    pub fn gate(&self, suite: &str, tracked: &[Tracked], judged: &[Judged]) -> anyhow::Result<usize> {
        self.write(suite, tracked, judged)?;
        let gated = gated(judged, self.threshold_percent);
        print!("{}", regression_lines(&gated));
        Ok(gated.len())
    }
}

impl CiArgs {
    /// Where `format` is asked to go, if it is: the one place that ties a
    /// format to its flag's field.
    fn path(&self, format: Format) -> Option<&Path> {
        match format {
            Format::Bmf => self.bmf.as_deref(),
            Format::GithubBenchmark => self.github_benchmark.as_deref(),
            Format::Junit => self.junit.as_deref(),
        }
    }

    /// The formats asked for, with their files, in [`Format::ALL`]'s order.
    fn files(&self) -> impl Iterator<Item = (Format, &Path)> {
        Format::ALL.into_iter().filter_map(|format| self.path(format).map(|p| (format, p)))
    }

    /// Checks, before anything is measured, that every file can be written
    /// where asked, making its folder if missing ([`crate::sys::prepare_file`]).
    ///
    /// # Errors
    /// A place that cannot be written, naming the flag.
    pub fn check(&self) -> anyhow::Result<()> {
        for (format, path) in self.files() {
            crate::sys::prepare_file(format.flag(), path)?;
        }
        Ok(())
    }

    /// Writes the files asked for, from `tracked` and `judged`; `suite` names
    /// the JUnit test suite.
    ///
    /// # Errors
    /// A file that cannot be written (named).
    fn write(&self, suite: &str, tracked: &[Tracked], judged: &[Judged], threshold_percent: f64) -> anyhow::Result<()> {
        for (format, path) in self.files() {
            let flag = format.flag();
            let text = format.render(suite, tracked, judged, threshold_percent)?;
            crate::sys::write_or_keep(path, (text + "\n").as_bytes()).with_context(|| flag.to_owned())?;
            println!("{}: {}", flag.trim_start_matches("--"), path.display());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::{Args as _, Command};

    use super::*;

    #[test]
    fn every_format_has_its_flag_and_its_field() {
        let command = CiArgs::augment_args(Command::new("ci"));
        let all = CiArgs { bmf: Some("a".into()), github_benchmark: Some("b".into()), junit: Some("c".into()) };
        for format in Format::ALL {
            let long = format.flag().trim_start_matches("--");
            assert!(command.get_arguments().any(|a| a.get_long() == Some(long)), "{long}");
            assert!(all.path(format).is_some(), "{format:?}");
        }
        assert_eq!(all.files().count(), Format::ALL.len());
    }
}
