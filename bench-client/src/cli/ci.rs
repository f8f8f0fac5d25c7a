//! `--bmf`, `--github-benchmark` and `--junit`: the files continuous
//! integration reads, written by `suite`, `ab` and `compare` after their
//! own output (the shapes: [`crate::report::ci`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, ensure};
use clap::Args;

use crate::report::ci::{self, Judged, Tracked};

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
    /// A folder of a CI file that does not exist.
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
}

impl CiArgs {
    fn files(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        [("--bmf", &self.bmf), ("--github-benchmark", &self.github_benchmark), ("--junit", &self.junit)]
            .into_iter()
            .filter_map(|(flag, path)| path.as_deref().map(|p| (flag, p)))
    }

    /// Checks, before anything is measured, that every file can be created
    /// where asked: its folder exists.
    ///
    /// # Errors
    /// A folder that does not exist, naming the flag.
    pub fn check(&self) -> anyhow::Result<()> {
        for (flag, path) in self.files() {
            let folder = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            ensure!(folder.is_dir(), "{flag} {}: the folder {} does not exist", path.display(), folder.display());
        }
        Ok(())
    }

    /// Writes the files asked for, from `tracked` and `judged`; `suite` names
    /// the JUnit test suite.
    ///
    /// # Errors
    /// A file that cannot be written (named).
    fn write(&self, suite: &str, tracked: &[Tracked], judged: &[Judged], threshold_percent: f64) -> anyhow::Result<()> {
        for (flag, path) in self.files() {
            let text = match flag {
                "--bmf" => serde_json::to_string_pretty(&ci::bmf(tracked, judged))?,
                "--github-benchmark" => serde_json::to_string_pretty(&ci::github_benchmark(tracked))?,
                _ => ci::junit(suite, judged, threshold_percent)?,
            };
            std::fs::write(path, text + "\n").with_context(|| format!("{flag}: cannot write {}", path.display()))?;
            println!("{}: {}", &flag[2..], path.display());
        }
        Ok(())
    }
}
