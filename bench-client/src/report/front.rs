//! The front page's tables, rendered from a committed results file by
//! `bench-client report`, so that the README shows what the code prints and
//! a test can render them again: which framework is fastest on each route
//! (its µs of server CPU and requests per second per request, with their
//! intervals over the rounds), and an excerpt of the changes table, each
//! under a line that says on what and when it was measured.

use std::fmt::Write as _;

use super::deltas::saved_with_ci;
use super::format::{change_with_ci, verdict_within};
use super::table::{Left, Right, Table};
use crate::analysis::mean_interval;
use crate::model::{Framework, Scenario};
use crate::results::{Results, cost_us};

/// What the session ran on, in one line: CPU, cores, where server and
/// client ran, the client's ceiling, the commit and the date.
pub fn machine_line(results: &Results) -> String {
    let m = &results.meta;
    let ceiling = m.client_ceiling_per_s.map_or_else(|| "not measured".to_owned(), |c| format!("{c:.0} requests/s"));
    let what = match &m.ab {
        Some(ab) => format!("`ab`, BEFORE {} against AFTER {}. ", ab.before, ab.after),
        None => String::new(),
    };
    format!(
        "{what}Measured on {} ({} CPUs; server on CPU {:?}, client on CPU {:?}; client ceiling {ceiling}), commit {}, {}; \
         {} rounds of {} s, {} connections, {} build.",
        m.cpu_model,
        m.cores,
        m.server_cpus,
        m.client_cpus,
        short(&m.commit),
        m.started_utc,
        m.rounds,
        m.duration_s,
        m.connections,
        m.profile.cargo_name()
    )
}

/// The commit's first 12 characters (with `-dirty` kept).
fn short(commit: &str) -> String {
    let dirty = commit.ends_with("-dirty");
    let hash: String = commit.trim_end_matches("-dirty").chars().take(12).collect();
    if dirty { format!("{hash}-dirty") } else { hash }
}

/// `15.95 [15.20 … 16.70]` of a mean and its interval, `decimals` places.
fn with_interval(values: &[f64], decimals: usize) -> String {
    match mean_interval(values) {
        None => super::format::ABSENT.to_owned(),
        Some((mean, Some((lo, hi)))) => format!("{mean:.decimals$} [{lo:.decimals$} … {hi:.decimals$}]"),
        Some((mean, None)) => format!("{mean:.decimals$}"),
    }
}

/// Every route's cost per framework, fastest first on each route: µs of
/// server CPU per successful request and requests per second, the mean over
/// the rounds with its 95 % Student-t interval.
pub fn floors_table(results: &Results) -> String {
    // Head to head, the same routes are measured again; the floors are the frameworks' own rounds.
    let results = &Results {
        runs: results.runs.iter().filter(|r| r.scenario != Scenario::Frameworks).cloned().collect(),
        ..results.clone()
    };
    let mut routes: Vec<&str> = Vec::new();
    for r in &results.runs {
        if !routes.contains(&r.route.as_str()) {
            routes.push(&r.route);
        }
    }
    let cpus = results.meta.server_cpus.len().max(1);
    let mut t = Table::of([
        ("route", Left),
        ("framework", Left),
        ("server CPU per request, µs [95 % CI]", Right),
        ("requests/s [95 % CI]", Right),
        ("rounds", Right),
    ]);
    for route in routes {
        let mut rows: Vec<(f64, Framework, Vec<f64>, Vec<f64>)> = Vec::new();
        let mut frameworks: Vec<Framework> =
            results.runs.iter().filter(|r| r.route == route).map(|r| r.framework).collect();
        frameworks.sort();
        frameworks.dedup();
        for f in frameworks {
            let runs = results.runs.iter().filter(|r| r.route == route && r.framework == f && r.figures.usable());
            let (costs, rates): (Vec<f64>, Vec<f64>) =
                runs.filter_map(|r| Some((cost_us(&r.figures, cpus)?, r.figures.requests_per_s?))).unzip();
            let order = mean_interval(&costs).map_or(f64::INFINITY, |(mean, _)| mean);
            rows.push((order, f, costs, rates));
        }
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (_, f, costs, rates) in rows {
            t.row(&[&route, &f.name(), &with_interval(&costs, 2), &with_interval(&rates, 0), &costs.len()]);
        }
    }
    t.finish()
}

/// The suite's `--threshold-percent` by default, for files written before
/// they recorded theirs (schema 11): the rule the terminal applies today.
const DEFAULT_THRESHOLD_PERCENT: f64 = 2.0;

/// The changes table's first columns (the terminal's has the rates, CVs,
/// p99s and flags beside them): each delta's server CPU saved per request
/// and change in requests per second, with intervals and verdicts.
pub fn changes_excerpt(results: &Results) -> String {
    // `ab` compares two builds route by route: the route is the delta.
    let ab = results.meta.ab.is_some();
    let mut t = Table::of([
        ("framework", Left),
        (if ab { "route" } else { "delta" }, Left),
        ("server CPU saved per request [95 % CI]", Right),
        ("change in requests/s [95 % CI]", Right),
        ("verdict", Left),
    ]);
    for d in &results.deltas {
        t.row(&[
            &d.framework.name(),
            &if ab { format!("`{}`", d.to) } else { format!("`{}` → `{}`", d.from, d.to) },
            &saved_with_ci(d),
            &change_with_ci(&d.change),
            &verdict_within(&d.change, results.meta.threshold_percent.or(Some(DEFAULT_THRESHOLD_PERCENT))),
        ]);
    }
    let mut out = t.finish();
    let _ = writeln!(
        out,
        "\nAn excerpt of the terminal's table (its first columns; the rates, CVs, p99s and flags are in the run's report)."
    );
    out
}
