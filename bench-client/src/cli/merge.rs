//! `bench-client merge FILE...`: several clients' `load --json` files of
//! one load (`--clients N --segment i`), added into one report exactly
//! (counts and windows summed, histograms added), optionally with the
//! server's CPU from `watch` on its own host; printed as `load` prints a
//! run, with a table of the clients, and written as `load --json` writes.
//! An input may also be a log holding results between marker lines
//! (`load --json -` in pods; `kubectl logs -l … --prefix` of all of them).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use super::Outcome;
use super::args::duration;
use crate::report::load_summary;
use crate::results::{self, Input, MergeOptions};

/// Flags of `merge`, as typed.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The clients' `load --json` files (one per segment of one load), or logs holding their
    /// `--json -` output: `kubectl logs -l SELECTOR --tail=-1 --prefix` of every client pod, other
    /// lines ignored.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The server's CPU per window: the `watch --json` file from the server's host, or the log of
    /// `watch --json -` (its sidecar's `kubectl logs`).
    #[arg(long)]
    pub server: Option<PathBuf>,
    /// Write the merged report to this JSON file (the layout of `load --json`); `-`: stdout,
    /// between marker lines.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Largest spread of the inputs' measured starts (measure_start_unix_ms) accepted.
    #[arg(long, default_value = "100ms", value_parser = duration)]
    pub tolerance: Duration,
    /// Merge inputs that do not describe one load (other settings, starts too far apart, segments
    /// missing or repeated), recording what was overridden (aligned: false).
    #[arg(long)]
    pub force: bool,
}

/// Checks `--json`, reads, merges, prints and writes; [`Outcome::Usage`] for
/// a `--json` that cannot be written, an unreadable input or a refusal, [`Outcome::Failed`] when the merged run failed or is
/// incomplete (as `load`), [`Outcome::Success`] otherwise.
///
/// # Errors
/// When the merged report cannot be printed or written.
pub(super) fn run(args: &MergeArgs) -> anyhow::Result<Outcome> {
    if let Err(e) = super::args::checked_json(args.json.clone()) {
        return Ok(super::report(&e, Outcome::Usage));
    }
    let mut clients = Vec::with_capacity(args.files.len());
    for path in &args.files {
        match results::read_loads(path) {
            Ok(found) => clients.extend(found.into_iter().map(|(file, report)| Input { file, report })),
            Err(e) => return Ok(super::report(&e, Outcome::Usage)),
        }
    }
    let server = match &args.server {
        None => None,
        Some(path) => match results::read_watch(path) {
            Ok(report) => Some(Input { file: path.display().to_string(), report }),
            Err(e) => return Ok(super::report(&e, Outcome::Usage)),
        },
    };
    let options = MergeOptions { tolerance: args.tolerance, force: args.force };
    let merged = match results::merge(&clients, server.as_ref(), options) {
        Ok(merged) => merged,
        Err(e) => return Ok(super::report(&e.into(), Outcome::Usage)),
    };
    load_summary(&mut std::io::stdout().lock(), &merged)?;
    if let Some(path) = &args.json {
        crate::results::emit(path, &merged)?;
    }
    Ok(if merged.figures.is_failure() { Outcome::Failed } else { Outcome::Success })
}
