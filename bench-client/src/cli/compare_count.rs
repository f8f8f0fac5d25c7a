//! `compare A B` of two `count` sessions: every server and route counted in
//! both, B's counts against A's (Welch's interval over the repeats), a
//! regression when instructions grow beyond the threshold.

use std::path::Path;

use super::Outcome;
use super::ci::CiPlan;
use crate::report;
use crate::results::{CountDelta, CountReport, Provenance};

/// The `count.json` at `path` (or in the folder `path`), if it is one.
fn read(path: &Path) -> Option<CountReport> {
    let file = if path.is_dir() { path.join("count.json") } else { path.to_path_buf() };
    crate::results::read_count(&file).ok()
}

/// Compares `a` and `b` when both are `count` sessions: prints both
/// sessions' rows and B against A, writes the CI files, and says how it
/// ended; `None` when either is not a `count.json` (a suite's results).
///
/// # Errors
/// The CI files cannot be written.
pub(super) fn run(a: &Path, b: &Path, ci: &CiPlan) -> anyhow::Result<Option<Outcome>> {
    let (Some(ra), Some(rb)) = (read(a), read(b)) else { return Ok(None) };
    let side = |report: &CountReport, name: &str| -> Vec<_> {
        report
            .rows
            .iter()
            .cloned()
            .map(|mut row| {
                row.framework = format!("{} {name}", row.framework);
                row
            })
            .collect()
    };
    let rows: Vec<_> = [side(&ra, "A"), side(&rb, "B")].concat();
    let deltas: Vec<CountDelta> = ra
        .rows
        .iter()
        .filter_map(|x| rb.rows.iter().find(|y| y.framework == x.framework && y.route == x.route).map(|y| (x, y)))
        .map(|(x, y)| {
            let mut d = CountDelta::of(x, y);
            (d.before, d.after) = (format!("{} A", x.framework), format!("{} B", y.framework));
            d
        })
        .collect();
    let both = CountReport {
        provenance: Provenance {
            commit: format!("A {} · B {}", ra.provenance.commit, rb.provenance.commit),
            started_utc: format!("A {} · B {}", ra.provenance.started_utc, rb.provenance.started_utc),
            ..ra.provenance.clone()
        },
        complete: ra.complete && rb.complete,
        rows,
        deltas,
        ..ra.clone()
    };
    println!("{}", report::count_table(&both));
    let gated = ci.gate("compare", &report::ci::tracked_counts(&both), &report::ci::judged_counts(&both))?;
    Ok(Some(if gated == 0 && !both.deltas.is_empty() { Outcome::Success } else { Outcome::Failed }))
}
