//! `bench-client report FILE --table …`: a front-page table of a committed
//! results file, printed as the README shows it (the README's tables are
//! this command's output, and a test renders them again).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, ValueEnum};

use super::Outcome;
use crate::report;

/// Which table `report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FrontTable {
    /// Every route's cost per framework, fastest first: which framework is faster, on what.
    Floors,
    /// The deltas' first columns: what each change saves, with its interval and verdict.
    Changes,
}

/// Flags of `report`, as typed.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A suite's `results.json` (or the run folder holding it).
    pub file: PathBuf,
    /// The table to print.
    #[arg(long, value_enum, default_value = "floors")]
    pub table: FrontTable,
}

/// The table `args` asks for, under the line saying what it was measured on.
///
/// # Errors
/// A file that cannot be read or is not a suite's results.
pub(super) fn rendered(args: &ReportArgs) -> anyhow::Result<String> {
    let path = if args.file.is_dir() { args.file.join("results.json") } else { args.file.clone() };
    let results = crate::results::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let table = match args.table {
        FrontTable::Floors => report::floors_table(&results),
        FrontTable::Changes => report::changes_excerpt(&results),
    };
    Ok(format!("{}\n\n{}", report::machine_line(&results), table))
}

/// Prints the table; 2 when the file cannot be read.
pub(super) fn run(args: &ReportArgs) -> Outcome {
    match rendered(args) {
        Ok(text) => {
            print!("{text}");
            Outcome::Success
        }
        Err(e) => super::report(&e, Outcome::Usage),
    }
}
