//! The table of a `count` session: per framework and route, what a request
//! costs in instructions and allocations, with the 95 % interval of the
//! repeats, and what a connection costs apart.

use super::table::{Left, Right, Table};
use crate::results::{CountReport, OverRepeats};

/// `mean ±half-width %` of `values`, `-` when there are none.
fn cell(values: &[f64], decimals: usize) -> String {
    match OverRepeats::of(values) {
        None => "-".to_owned(),
        Some(o) => match o.half_width_percent() {
            Some(h) => format!("{:.decimals$} ±{h:.2} %", o.mean),
            None => format!("{:.decimals$}", o.mean),
        },
    }
}

/// The counted table of `report` (Markdown, also what the terminal prints),
/// with the line that says what it holds.
pub fn count_table(report: &CountReport) -> String {
    let mut t = Table::of([
        ("framework", Left),
        ("route", Left),
        ("instructions per request", Right),
        ("allocations per request", Right),
        ("instructions per connection", Right),
        ("repeats", Right),
    ]);
    for row in &report.rows {
        t.row(&[
            &row.framework,
            &row.route,
            &cell(&row.instructions_per_request, 0),
            &cell(&row.allocations_per_request, 2),
            &cell(&row.instructions_per_connection, 0),
            &row.instructions_per_request.len(),
        ]);
    }
    format!(
        "Counted under callgrind (user-space instructions, every server thread; ± the 95 % interval of the \
         repeats), {} and {} requests one after another on {} connection, {} build, commit {}, {}, {}:\n\n{}",
        report.requests,
        2 * report.requests,
        report.connections,
        report.profile,
        report.commit,
        report.cpu_model,
        report.started_utc,
        t.finish()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{COUNT_SCHEMA_VERSION, CountRow};

    #[test]
    fn each_row_shows_its_mean_and_the_repeats_interval() {
        let report = CountReport {
            schema_version: COUNT_SCHEMA_VERSION,
            commit: "abc".to_owned(),
            cpu_model: "CPU".to_owned(),
            started_utc: "2026-12-03T08:00:00Z".to_owned(),
            profile: "release".to_owned(),
            requests: 500,
            connections: 1,
            rows: vec![CountRow {
                framework: "axum".to_owned(),
                route: "/plaintext".to_owned(),
                instructions_per_request: vec![11_990.0, 12_000.0, 12_010.0],
                allocations_per_request: vec![3.0, 3.0, 3.0],
                instructions_per_connection: vec![50_000.0],
            }],
        };
        let text = count_table(&report);
        // 12,000 ± t(2) × 10 / √3 = ± 24.84, 0.21 % of the mean.
        assert!(text.contains("| axum | /plaintext | 12000 ±0.21 % | 3.00 ±0.00 % | 50000 | 3 |"), "{text}");
        assert!(text.contains("500 and 1000 requests one after another on 1 connection, release build, commit abc"));
    }
}
