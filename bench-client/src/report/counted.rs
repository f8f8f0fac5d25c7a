//! The table of a `count` session: per framework and route, what a request
//! costs in instructions and allocations, with the 95 % interval of the
//! repeats, and what a connection costs apart.

use super::table::{Left, Right, Table};
use std::cmp::Ordering;

use crate::analysis::Verdict;
use crate::results::{Count, CountChange, CountDelta, CountReport, Delta, NO_RATIO, OverRepeats, Results};

/// `mean ±half-width %` of `values`, `-` when there are none; around a mean
/// of 0 (page faults), where a share of it says nothing, `mean ±half-width`.
fn cell(values: &[f64], decimals: usize) -> String {
    let Some(o) = OverRepeats::of(values) else { return "-".to_owned() };
    // No `-0.00`: a mean that rounds to 0 is 0.
    let mean = if (o.mean * 10f64.powi(decimals as i32)).abs() < 0.5 { 0.0 } else { o.mean };
    match (o.half_width_percent(), o.interval) {
        (Some(h), _) if h <= 100.0 => format!("{mean:.decimals$} ±{h:.2} %"),
        (_, Some((lo, hi))) if hi > lo => format!("{mean:.decimals$} ±{:.decimals$}", (hi - lo) / 2.0),
        _ => format!("{mean:.decimals$}"),
    }
}

/// `+1.23 % [+1.10 … +1.36]`, or the change alone without an interval.
fn change_cell(c: &CountChange) -> String {
    if c.verdict == NO_RATIO {
        return c.verdict.clone();
    }
    // No `-0.00`: what rounds to 0 is `+0.00`.
    let p = |x: f64| format!("{:+.2}", if x.abs() < 0.005 { 0.0 } else { x });
    match (c.ci_low_percent, c.ci_high_percent) {
        (Some(l), Some(h)) => format!("{} % [{} … {}]", p(c.change_percent), p(l), p(h)),
        _ => format!("{} %", p(c.change_percent)),
    }
}

/// The counted table of `report` (Markdown, also what the terminal prints),
/// with the line that says what it holds: a column per count some row has
/// ([`Count::shown`]), then what a connection costs apart.
pub fn count_table(report: &CountReport) -> String {
    let counts = Count::shown(&report.rows);
    let per_connection: Vec<Count> =
        Count::ALL.into_iter().filter(|c| report.rows.iter().any(|r| !c.per_connection(r).is_empty())).collect();
    let headers: Vec<String> = counts
        .iter()
        .map(|c| format!("{} per request", c.noun()))
        .chain(per_connection.iter().map(|c| format!("{} per connection", c.noun())))
        .collect();
    let mut columns = vec![("framework", Left), ("route", Left)];
    columns.extend(headers.iter().map(|h| (h.as_str(), Right)));
    columns.extend([("requests N", Right), ("repeats", Right)]);
    let mut t = Table::of(columns);
    for row in &report.rows {
        let mut cells = vec![row.framework.clone(), row.route.clone()];
        cells.extend(counts.iter().map(|c| cell(c.per_request(row), c.decimals())));
        cells.extend(per_connection.iter().map(|c| cell(c.per_connection(row), c.decimals().min(1))));
        cells.extend([row.requests.to_string(), row.instructions_per_request.len().to_string()]);
        t.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    let perf = counts.contains(&Count::SystemCalls);
    let mut text = format!(
        "Counted per request (± the 95 % interval of the repeats): instructions and allocations under callgrind, \
         bytes under memcheck{}, every server thread; the slope between N and 2N requests one after another on {} \
         connection (N at most {}), {}:\n\n{}",
        if perf { ", system calls, context switches and page faults by perf on the native process" } else { "" },
        report.connections,
        report.requests,
        report.provenance,
        t.finish()
    );
    if !report.complete {
        text.push_str("\nINCOMPLETE: interrupted or failed; the rows above are those counted before.\n");
    }
    if !report.deltas.is_empty() {
        text.push_str("\nThe second server against the first (Welch's interval over the repeats):\n\n");
        text.push_str(&delta_table(&report.deltas, &counts));
    }
    let http2 = http2_deltas(report);
    if !http2.is_empty() {
        text.push_str(
            "\nHTTP/2 with prior knowledge (h2c) against HTTP/1.1, each framework's route on its own processes \
             (`h2c xN`: N requests at once on the connection, each batch answered before the next; Welch's \
             interval over the repeats):\n\n",
        );
        text.push_str(&delta_table(&http2, &counts));
    }
    text
}

/// The route an h2c row's label names (`h2c /plaintext`, `h2c x16
/// /plaintext` → `/plaintext`); `None` for a row over HTTP/1.1.
fn h2c_path(label: &str) -> Option<&str> {
    let rest = label.strip_prefix("h2c ")?;
    Some(match rest.split_once(' ') {
        Some((streams, path)) if streams.starts_with('x') => path,
        _ => rest,
    })
}

/// Every h2c row against the same framework's route over HTTP/1.1, when
/// both were counted: `actix /plaintext → actix h2c x16 /plaintext`.
fn http2_deltas(report: &CountReport) -> Vec<CountDelta> {
    report
        .rows
        .iter()
        .filter_map(|after| {
            let path = h2c_path(&after.route)?;
            let before = report.rows.iter().find(|r| r.framework == after.framework && r.route == path)?;
            Some(CountDelta {
                route: after.route.clone(),
                before: format!("{} {}", before.framework, before.route),
                after: format!("{} {}", after.framework, after.route),
                ..CountDelta::of(before, after)
            })
        })
        .collect()
}

/// `deltas` as a table: each count of `counts` some delta has, with its
/// interval, and the instructions' verdict.
fn delta_table(deltas: &[CountDelta], counts: &[Count]) -> String {
    let changed: Vec<Count> =
        counts.iter().copied().filter(|&c| deltas.iter().any(|d| d.change(c).is_some())).collect();
    let headers: Vec<String> = changed.iter().map(|c| format!("{} per request [95 % CI]", c.noun())).collect();
    let mut columns = vec![("route", Left), ("change", Left)];
    columns.extend(headers.iter().map(|h| (h.as_str(), Right)));
    columns.push(("verdict", Left));
    let mut d = Table::of(columns);
    for delta in deltas {
        let verdict = match delta.instructions.verdict.as_str() {
            "more" | "fewer" => format!("**{} instructions**", delta.instructions.verdict),
            other => other.to_owned(),
        };
        let mut cells = vec![delta.route.clone(), format!("{} → {}", delta.before, delta.after)];
        cells.extend(changed.iter().map(|&c| delta.change(c).map_or_else(|| "-".to_owned(), change_cell)));
        cells.push(verdict);
        d.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    d.finish()
}

/// What a delta's timed and counted changes say together.
fn reading(d: &Delta, counted: &CountDelta) -> String {
    // The timed side: µs of server CPU saved where measured (its interval beside zero), else the rate's verdict.
    let timed = match (d.saved_us, d.saved_ci_us) {
        (Some(_), Some((low, _))) if low > 0.0 => Some(Ordering::Less),
        (Some(_), Some((_, high))) if high < 0.0 => Some(Ordering::Greater),
        (Some(_), Some(_)) => None,
        _ => match d.change.verdict {
            Verdict::Faster => Some(Ordering::Less),
            Verdict::Slower => Some(Ordering::Greater),
            _ => None,
        },
    };
    let moved = |c: Option<&CountChange>| {
        c.and_then(|c| match c.verdict.as_str() {
            "more" => Some(Ordering::Greater),
            "fewer" => Some(Ordering::Less),
            _ => None,
        })
    };
    let instructions = moved(Some(&counted.instructions));
    // What else moved, for a time that moves without instructions.
    let others: Vec<String> =
        [Count::SystemCalls, Count::CallgrindSystemCalls, Count::BytesAllocated, Count::Allocations]
            .into_iter()
            .filter_map(|c| {
                counted
                    .change(c)
                    .filter(|x| moved(Some(x)).is_some())
                    .map(|x| format!("{} {:+.1} %", c.noun(), x.change_percent))
            })
            .take(2)
            .collect();
    let cpu = |o: Ordering| if o == Ordering::Less { "less CPU" } else { "more CPU" };
    let count = |o: Ordering| if o == Ordering::Less { "fewer instructions" } else { "more instructions" };
    match (timed, instructions) {
        (Some(t), Some(i)) if t == i => format!("agree: {}, {}", count(i), cpu(t)),
        (Some(t), Some(i)) => {
            format!("disagree: {}, {}: memory, kernel or contention outweigh the instructions", count(i), cpu(t))
        }
        (Some(t), None) if others.is_empty() => {
            format!("time moves ({}), instructions do not: memory, kernel work or contention", cpu(t))
        }
        (Some(t), None) => format!("time moves ({}), instructions do not; {} moved", cpu(t), others.join(", ")),
        (None, Some(i)) => format!(
            "{} ({:+.2} %): real, smaller than the timed interval",
            count(i),
            counted.instructions.change_percent
        ),
        (None, None) => "neither resolves a change".to_owned(),
    }
}

/// With `suite --count`: every delta's timed change (requests per second
/// and µs of server CPU saved, over the rounds) beside its counted one
/// (instructions, allocations, bytes and system calls per request, over the
/// repeats), and what they say together; empty without counted deltas.
pub fn counted_beside_timed(results: &Results) -> String {
    let counted: Vec<(&Delta, &CountDelta)> =
        results.deltas.iter().filter_map(|d| d.counted.as_ref().map(|c| (d, c))).collect();
    if counted.is_empty() {
        return String::new();
    }
    let shown: Vec<Count> = [Count::Instructions, Count::Allocations, Count::BytesAllocated, Count::SystemCalls]
        .into_iter()
        .filter(|&c| counted.iter().any(|(_, x)| x.change(c).is_some()))
        .collect();
    let headers: Vec<String> = shown.iter().map(|c| format!("{} per request [95 % CI]", c.noun())).collect();
    let mut columns = vec![
        ("framework", Left),
        ("change", Left),
        ("requests/s [95 % CI]", Right),
        ("server CPU saved per request [95 % CI]", Right),
    ];
    columns.extend(headers.iter().map(|h| (h.as_str(), Right)));
    columns.push(("reading", Left));
    let mut t = Table::of(columns);
    for (d, c) in &counted {
        let mut cells = vec![
            d.framework.name().to_owned(),
            format!("{} → {}", d.from, d.to),
            super::change_with_ci(&d.change),
            super::deltas::saved_with_ci(d),
        ];
        cells.extend(shown.iter().map(|&x| c.change(x).map_or_else(|| "-".to_owned(), change_cell)));
        cells.push(reading(d, c));
        t.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    let repeats =
        results.counted.as_ref().map_or(0, |r| r.rows.first().map_or(0, |row| row.instructions_per_request.len()));
    format!(
        "Each delta timed over the rounds beside the same change counted over {repeats} repeats (N and 2N requests \
         one after another on 1 connection, the same {} binaries, after the timed rounds); the reading says where \
         they agree and where one alone resolves a change (docs/METHODOLOGY.md, \"Counted, not timed\"):\n\n{}",
        results.meta.profile.cargo_name(),
        t.finish()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{COUNT_SCHEMA_VERSION, CountDelta, CountRow};

    fn report(rows: Vec<CountRow>, deltas: Vec<CountDelta>) -> CountReport {
        CountReport {
            schema_version: COUNT_SCHEMA_VERSION,
            provenance: crate::results::fixtures::provenance("2026-12-03T08:00:00Z"),
            requests: 500,
            connections: 1,
            complete: true,
            rows,
            deltas,
        }
    }

    /// A row as a file of version 2 has it: callgrind's counts alone.
    fn callgrind_row(framework: &str, instructions: [f64; 3], system_calls: f64) -> CountRow {
        CountRow {
            framework: framework.to_owned(),
            route: "/plaintext".to_owned(),
            requests: 500,
            instructions_per_request: instructions.to_vec(),
            allocations_per_request: vec![3.0, 3.0, 3.0],
            system_calls_per_request: vec![system_calls; 3],
            bytes_allocated_per_request: Vec::new(),
            native_system_calls_per_request: Vec::new(),
            context_switches_per_request: Vec::new(),
            page_faults_per_request: Vec::new(),
            instructions_per_connection: vec![50_000.0],
            bytes_allocated_per_connection: Vec::new(),
            system_calls_per_connection: Vec::new(),
        }
    }

    #[test]
    fn each_h2c_row_is_set_against_its_framework_and_route_over_http1() {
        let row = |framework: &str, route: &str, instructions: f64, system_calls: f64| CountRow {
            route: route.to_owned(),
            ..callgrind_row(framework, [instructions - 10.0, instructions, instructions + 10.0], system_calls)
        };
        let text = count_table(&report(
            vec![
                row("actix", "/plaintext", 17_000.0, 4.0),
                row("actix", "h2c /plaintext", 25_500.0, 4.0),
                row("actix", "h2c x16 /plaintext", 20_400.0, 1.0),
                row("axum", "h2c /plaintext", 30_000.0, 4.0),
            ],
            Vec::new(),
        ));
        let (_, http2) = text.split_once("HTTP/2 with prior knowledge (h2c) against HTTP/1.1").expect(&text);
        assert!(
            http2.contains("| h2c /plaintext | actix /plaintext → actix h2c /plaintext | +50.00 % ["),
            "one stream: {http2}"
        );
        assert!(
            http2.contains("| h2c x16 /plaintext | actix /plaintext → actix h2c x16 /plaintext | +20.00 % ["),
            "{http2}"
        );
        assert!(http2.contains("| -75.00 % [-75.00 … -75.00] |"), "16 at once: a quarter of the system calls: {http2}");
        assert!(!http2.contains("axum"), "no HTTP/1.1 row of axum to set it against: {http2}");
        assert_eq!(h2c_path("h2c x16 /api/devices"), Some("/api/devices"));
        assert_eq!(h2c_path("/plaintext"), None);
    }

    #[test]
    fn each_row_shows_its_mean_and_the_repeats_interval() {
        let before = callgrind_row("old", [100.0, 101.0, 100.5], 4.0);
        let after = callgrind_row("new", [102.0, 103.0, 102.5], 3.0);
        let text = count_table(&report(
            vec![callgrind_row("axum", [11_990.0, 12_000.0, 12_010.0], 4.0)],
            vec![CountDelta::of(&before, &after)],
        ));
        // 12,000 ± t(2) × 10 / √3 = ± 24.84, 0.21 % of the mean.
        assert!(
            text.contains(
                "| framework | route | instructions per request | allocations per request | \
                 system calls under callgrind per request | instructions per connection | requests N | repeats |"
            ),
            "without perf's counts, callgrind's system calls are shown: {text}"
        );
        assert!(
            text.contains("| axum | /plaintext | 12000 ±0.21 % | 3.00 ±0.00 % | 4.00 ±0.00 % | 50000 | 500 | 3 |"),
            "{text}"
        );
        assert!(text.contains("on 1 connection (N at most 500), release build, commit abc"), "{text}");
        assert!(!text.contains("by perf"), "{text}");
        // +2 % over three repeats whose spread is 0.5 %: more, and allocations exactly equal.
        let delta = text.lines().find(|l| l.starts_with("| /plaintext | old → new |")).expect(&text);
        assert!(
            delta.contains("| +1.99 % [+")
                && delta.ends_with("| +0.00 % [+0.00 … +0.00] | -25.00 % [-25.00 … -25.00] | **more instructions** |"),
            "{delta}"
        );
    }

    #[test]
    fn with_perf_and_memcheck_every_count_has_its_column_and_its_change() {
        let full = |framework: &str, bytes: f64, switches: f64| CountRow {
            bytes_allocated_per_request: vec![bytes; 3],
            native_system_calls_per_request: vec![3.0, 3.0, 3.0],
            context_switches_per_request: vec![switches; 3],
            page_faults_per_request: vec![0.0, 0.0, 0.0],
            bytes_allocated_per_connection: vec![9_000.0; 3],
            system_calls_per_connection: vec![6.0; 3],
            ..callgrind_row(framework, [100.0, 100.0, 100.0], 7.0)
        };
        let (before, after) = (full("old", 1_000.0, 1.0), full("new", 1_100.0, 1.0));
        let text = count_table(&report(vec![before.clone(), after.clone()], vec![CountDelta::of(&before, &after)]));
        assert!(
            text.contains(
                "| framework | route | instructions per request | allocations per request | bytes allocated per request | \
                 system calls per request | context switches per request | page faults per request | \
                 instructions per connection | bytes allocated per connection | system calls per connection | requests N | repeats |"
            ),
            "perf's system calls replace callgrind's: {text}"
        );
        assert!(text.contains("| old | /plaintext | 100 ±0.00 % | 3.00 ±0.00 % | 1000 ±0.00 % | 3.00 ±0.00 % | 1.00 ±0.00 % | 0.00 | 50000 | 9000 ±0.00 % | 6.0 ±0.00 % | 500 | 3 |"), "{text}");
        assert!(text.contains("by perf on the native process"), "{text}");
        let delta = text.lines().find(|l| l.starts_with("| /plaintext | old → new |")).expect(&text);
        assert_eq!(
            delta,
            "| /plaintext | old → new | +0.00 % [+0.00 … +0.00] | +0.00 % [+0.00 … +0.00] | +10.00 % [+10.00 … +10.00] | \
             +0.00 % [+0.00 … +0.00] | +0.00 % [+0.00 … +0.00] | +0.00 % [+0.00 … +0.00] | no significant change |",
            "equal counts, zero page faults included, are an exact 0 %"
        );
        let from_zero = CountChange::of(&[0.0, 0.0, 0.0], &[0.5, 0.6, 0.5]);
        assert_eq!(change_cell(&from_zero), "no ratio: a side counted 0", "{from_zero:?}");
        assert_eq!(from_zero.as_change().verdict, crate::analysis::Verdict::TooFewRounds, "never a regression");
    }

    #[test]
    fn each_delta_timed_beside_counted_says_where_they_agree_and_where_one_alone_resolves() {
        use crate::model::Framework;
        use crate::results::fixtures::{results, run};
        let f = Framework::Axum;
        let mut runs = Vec::new();
        for round in 1..=3 {
            runs.push(run(f, "state", "fat", round, 1000, true));
            runs.push(run(f, "state", "arc", round, 1100, true));
            runs.push(run(f, "payload", "per_request", round, 1000, true));
            runs.push(run(f, "payload", "preserialized", round, 1000, true));
        }
        let mut r = results(runs);
        assert_eq!(counted_beside_timed(&r), "", "without --count, no section");
        let row = |route: &str, instructions: f64, calls: f64| CountRow {
            route: route.to_owned(),
            native_system_calls_per_request: vec![calls; 3],
            ..callgrind_row("axum", [instructions, instructions * 1.0001, instructions * 0.9999], 7.0)
        };
        for d in &mut r.deltas {
            let (before, after, saved) = match d.to.as_str() {
                // The clones gone: far fewer instructions, and the time resolves it.
                "/state/arc" => (row(&d.from, 340_000.0, 3.0), row(&d.to, 76_000.0, 3.0), (2.0, (1.0, 3.0))),
                // 1 % fewer instructions; the time's interval spans zero.
                _ => (row(&d.from, 20_000.0, 3.0), row(&d.to, 19_800.0, 3.0), (0.1, (-0.5, 0.7))),
            };
            d.saved_us = Some(saved.0);
            d.saved_ci_us = Some(saved.1);
            d.counted = Some(CountDelta::of(&before, &after));
        }
        let text = counted_beside_timed(&r);
        let line = |to: &str| {
            text.lines().find(|l| l.contains(&format!("→ {to} |"))).unwrap_or_else(|| panic!("{text}")).to_owned()
        };
        assert!(line("/state/arc").ends_with("| agree: fewer instructions, less CPU |"), "{text}");
        assert!(line("/state/arc").contains("| +2.00 µs [+1.00 … +3.00] | -77.6"), "{text}");
        assert!(
            line("/api/devices/preserialized")
                .ends_with("| fewer instructions (-1.00 %): real, smaller than the timed interval |"),
            "{text}"
        );
        // Time resolves a saving the instructions do not show, and the system calls moved.
        let d = r.deltas.iter_mut().find(|d| d.to == "/api/devices/preserialized").unwrap();
        d.saved_ci_us = Some((0.2, 0.4));
        d.counted = Some(CountDelta::of(
            &row("/api/devices", 20_000.0, 4.0),
            &row("/api/devices/preserialized", 20_000.0, 3.0),
        ));
        let text = counted_beside_timed(&r);
        assert!(
            text.lines()
                .any(|l| l.ends_with("| time moves (less CPU), instructions do not; system calls -25.0 % moved |")),
            "{text}"
        );
    }
}
