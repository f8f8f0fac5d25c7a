//! The table of a `count` session: per framework and route, what a request
//! costs in instructions and allocations, with the 95 % interval of the
//! repeats, and what a connection costs apart.

use super::table::{Left, Right, Table};
use crate::results::{CountChange, CountReport, OverRepeats};

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

/// `+1.23 % [+1.10 … +1.36]`, or the change alone without an interval.
fn change_cell(c: &CountChange) -> String {
    match (c.ci_low_percent, c.ci_high_percent) {
        (Some(l), Some(h)) => format!("{:+.2} % [{l:+.2} … {h:+.2}]", c.change_percent),
        _ => format!("{:+.2} %", c.change_percent),
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
        ("system calls per request", Right),
        ("instructions per connection", Right),
        ("requests N", Right),
        ("repeats", Right),
    ]);
    for row in &report.rows {
        t.row(&[
            &row.framework,
            &row.route,
            &cell(&row.instructions_per_request, 0),
            &cell(&row.allocations_per_request, 2),
            &cell(&row.system_calls_per_request, 2),
            &cell(&row.instructions_per_connection, 0),
            &row.requests,
            &row.instructions_per_request.len(),
        ]);
    }
    let mut text = format!(
        "Counted under callgrind (user-space instructions and system calls, every server thread; ± the 95 % \
         interval of the repeats), the slope between N and 2N requests one after another on {} connection (N at most {}), {} \
         build, commit {}, {}, {}:\n\n{}",
        report.connections,
        report.requests,
        report.profile,
        report.commit,
        report.cpu_model,
        report.started_utc,
        t.finish()
    );
    if !report.complete {
        text.push_str("\nINCOMPLETE: interrupted or failed; the rows above are those counted before.\n");
    }
    if !report.deltas.is_empty() {
        let mut d = Table::of([
            ("route", Left),
            ("change", Left),
            ("instructions per request [95 % CI]", Right),
            ("allocations per request [95 % CI]", Right),
            ("system calls per request [95 % CI]", Right),
            ("verdict", Left),
        ]);
        for delta in &report.deltas {
            let verdict = match delta.instructions.verdict.as_str() {
                "more" | "fewer" => format!("**{} instructions**", delta.instructions.verdict),
                other => other.to_owned(),
            };
            d.row(&[
                &delta.route,
                &format!("{} → {}", delta.before, delta.after),
                &change_cell(&delta.instructions),
                &change_cell(&delta.allocations),
                &delta.system_calls.as_ref().map_or_else(|| "-".to_owned(), change_cell),
                &verdict,
            ]);
        }
        text.push_str("\nThe second server against the first (Welch's interval over the repeats):\n\n");
        text.push_str(&d.finish());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{COUNT_SCHEMA_VERSION, CountDelta, CountRow};

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
            complete: true,
            rows: vec![CountRow {
                framework: "axum".to_owned(),
                route: "/plaintext".to_owned(),
                requests: 500,
                instructions_per_request: vec![11_990.0, 12_000.0, 12_010.0],
                allocations_per_request: vec![3.0, 3.0, 3.0],
                system_calls_per_request: vec![4.0, 4.0, 4.0],
                instructions_per_connection: vec![50_000.0],
            }],
            deltas: vec![CountDelta {
                route: "/plaintext".to_owned(),
                before: "old".to_owned(),
                after: "new".to_owned(),
                instructions: CountChange::of(&[100.0, 101.0, 100.5], &[102.0, 103.0, 102.5]),
                allocations: CountChange::of(&[3.0, 3.0, 3.0], &[3.0, 3.0, 3.0]),
                system_calls: Some(CountChange::of(&[4.0, 4.0, 4.0], &[3.0, 3.0, 3.0])),
            }],
        };
        let text = count_table(&report);
        // 12,000 ± t(2) × 10 / √3 = ± 24.84, 0.21 % of the mean.
        assert!(
            text.contains("| axum | /plaintext | 12000 ±0.21 % | 3.00 ±0.00 % | 4.00 ±0.00 % | 50000 | 500 | 3 |"),
            "{text}"
        );
        assert!(text.contains("on 1 connection (N at most 500), release build, commit abc"), "{text}");
        // +2 % over three repeats whose spread is 0.5 %: more, and allocations exactly equal.
        let delta = text.lines().find(|l| l.starts_with("| /plaintext | old → new |")).expect(&text);
        assert!(
            delta.contains("| +1.99 % [+")
                && delta.ends_with("| +0.00 % [+0.00 … +0.00] | -25.00 % [-25.00 … -25.00] | **more instructions** |"),
            "{delta}"
        );
    }
}
