//! `bench-client compare A B`: reads two results, prints the comparison, and
//! says whether B regressed.

use std::path::{Path, PathBuf};

use anyhow::ensure;
use clap::Args;

use super::Outcome;
use super::args::percent;
use super::ci::{CiArgs, CiPlan};
use crate::model::Scenario;
use crate::report::{comparison_notes, comparison_table};
use crate::results::{self, Basis, SESSION_SD_PERCENT, compare};

/// Flags of `compare`, as typed.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a results.json or the run folder holding it (gzipped or not: `*.results.json.gz`).
    pub a: PathBuf,
    /// The candidate: a results.json or the run folder holding it (gzipped or not).
    pub b: PathBuf,
    /// Smallest significant slowdown, percent, that counts as a regression.
    #[arg(long = "threshold-percent", visible_alias = "threshold", default_value = "2", value_parser = percent)]
    pub threshold: f64,
    /// Compare even when the settings (duration, connections, profile, machine, …) differ.
    #[arg(long)]
    pub force: bool,
    /// How much one session's speed differs from another's for the same code,
    /// beyond what its rounds show: SD, percent per session, added to each
    /// side's interval. Default: this project's machine (docs/CLIENT.md, its A/A sessions); A/A pairs of
    /// your own print your machine's value. 0 trusts the rounds alone.
    #[arg(long, default_value_t = SESSION_SD_PERCENT, value_parser = percent)]
    pub session_sd_percent: f64,
    /// Files for CI (a test case per judged row).
    #[command(flatten)]
    pub ci: CiArgs,
}

/// Reads both files, prints the table, and says how it ended:
/// [`Outcome::Success`] without a significant regression beyond the
/// threshold, [`Outcome::Failed`] with one (or a run type missing in B),
/// [`Outcome::Usage`] when the settings differ without `--force` or a run
/// type has under two rounds on a side (no interval, so no verdict).
///
/// # Errors
/// A file that cannot be read or parsed (named in the message).
pub(super) fn run(args: &CompareArgs) -> anyhow::Result<Outcome> {
    let ci = CiPlan::new(&args.ci, args.threshold)?;
    if let Some(outcome) = super::compare_count::run(&args.a, &args.b, &ci)? {
        return Ok(outcome);
    }
    let (ra, rb) = (results::read(&args.a)?, results::read(&args.b)?);
    let (a, b) = (args.a.display(), args.b.display());
    let file = |p: &Path| std::fs::canonicalize(results::results_file(p)).ok();
    let same = file(&args.a).zip(file(&args.b));
    ensure!(
        same.is_none_or(|(x, y)| x != y),
        "{a} and {b} are the same results: compare reads two sessions (run make bench twice; an A/A pair is two)"
    );
    for (name, r) in [(&a, &ra), (&b, &rb)] {
        ensure!(
            !r.runs.iter().any(|run| matches!(run.scenario, Scenario::Before | Scenario::After)),
            "{name} is an `ab` session (before and after side by side): its report already holds the comparison; \
             compare reads two `suite` sessions"
        );
        ensure!(!r.runs.is_empty(), "{name} holds no run: compare reads the results.json of a `suite` session");
    }
    // A baseline must measure something; a candidate whose runs all failed is a regression (below).
    ensure!(
        ra.runs.iter().any(|run| run.figures.usable()),
        "{a} holds no usable run (none complete with a successful request): nothing to compare against"
    );
    let cmp = compare(&ra, &rb, Basis::Floor { session_sd_percent: args.session_sd_percent });
    ensure!(
        cmp.rows.iter().any(|row| cmp.judged(row)) || !cmp.missing_in_b.is_empty(),
        "{a} and {b} have no run type in common with usable runs on both sides: nothing to compare"
    );
    if !cmp.differences.is_empty() {
        eprintln!("the two runs differ in their settings:");
        for d in &cmp.differences {
            eprintln!("  {d}");
        }
        if !args.force {
            eprintln!("error: refusing to compare runs with different settings (pass --force to compare anyway)");
            return Ok(Outcome::Usage);
        }
    }
    println!("{}", comparison_table(&args.a, &args.b, &cmp));
    for m in &cmp.missing_in_b {
        println!("REGRESSION: {m} has no usable run in B (failed, missing or without a successful request)");
    }
    let judged = crate::report::ci::judged_rows(&cmp);
    let regressions = crate::report::ci::gated(&judged, args.threshold);
    if regressions.is_empty() && cmp.missing_in_b.is_empty() && !cmp.undecidable().is_empty() {
        eprintln!(
            "error: some run types have under two rounds on a side: no interval, no verdict (rerun with --rounds 2 or more)"
        );
        return Ok(Outcome::Usage);
    }
    print!("{}", comparison_notes(&cmp));
    let gated = ci.gate("compare", &crate::report::ci::tracked(&rb), &judged)?;
    if gated == 0 && cmp.missing_in_b.is_empty() {
        println!("no significant regression beyond {} %", args.threshold);
        Ok(Outcome::Success)
    } else {
        Ok(Outcome::Failed)
    }
}
