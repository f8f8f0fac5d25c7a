//! Markdown: the tables of the sweep, the proportions, the profiles, the
//! cost of profiling and the flame graphs, which `sections.rs` places in the
//! answer. Each function returns the text; the caller writes it where it
//! belongs.

use std::fmt::Write as _;

use super::flames::FlameGraphs;
use super::format::{ABSENT, change_with_ci, or_absent, verdict};
use super::notes;
use super::table::{Left, Right, Table};
use crate::model::{Framework, Variant};
use crate::results::{Basis, Delta, Results, compare, delta_costs, route_costs, sweep};

/// The layer sweep as a table: requests per second and CPU cost per request
/// (µs) at each layer count, and what one layer adds; empty without a sweep.
pub fn sweep_table(results: &Results) -> String {
    let lines = sweep(results);
    if lines.is_empty() {
        return String::new();
    }
    let layers = &results.meta.layers;
    let columns = [("framework".to_owned(), Left), ("variant".to_owned(), Left)]
        .into_iter()
        .chain(layers.iter().map(|l| (format!("{l} layers"), Right)))
        .chain([("added per layer".to_owned(), Right)]);
    let mut table = Table::of(columns);
    for line in &lines {
        let mut cells: Vec<String> = vec![line.framework.name().to_owned(), line.variant.to_string()];
        cells.extend(layers.iter().map(|l| match line.points.iter().find(|p| p.layers == *l) {
            Some(p) => format!("{:.0}/s · {:.2} µs", p.rate_per_s, p.cost_us),
            None => ABSENT.to_owned(),
        }));
        cells.push(or_absent(line.added_per_layer_us, |s| format!("{s:+.3} µs")));
        table.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    let mut out = table.finish();
    out.push_str(notes::SWEEP);
    out
}

/// Every route in proportion: µs of server CPU per successful request for
/// each route measured (one row per framework and layer count), then what
/// each delta saves per request and, when `/fortunes` was measured, that
/// saving as a share of a `/fortunes` request; empty without costs.
pub fn proportion_table(results: &Results) -> String {
    let costs = route_costs(results);
    if costs.is_empty() {
        return String::new();
    }
    let variants: Vec<Variant> =
        Variant::MEASURED.into_iter().filter(|v| costs.iter().any(|c| c.variant == *v)).collect();
    let columns = [("framework".to_owned(), Left), ("layers".to_owned(), Right)]
        .into_iter()
        .chain(variants.iter().map(|v| (format!("`{}`", v.label()), Right)));
    let mut table = Table::of(columns);
    let mut rows: Vec<(Framework, u16)> = costs.iter().map(|c| (c.framework, c.layers)).collect();
    rows.dedup();
    for (framework, layers) in rows {
        let mut cells: Vec<String> = vec![framework.name().to_owned(), layers.to_string()];
        cells.extend(variants.iter().map(|v| {
            match costs.iter().find(|c| c.framework == framework && c.layers == layers && c.variant == *v) {
                Some(c) => format!("{:.2} µs", c.cost_us),
                None => ABSENT.to_owned(),
            }
        }));
        table.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    let mut out = table.finish();
    out.push_str(notes::PROPORTION);
    let deltas = delta_costs(results, &costs);
    if deltas.is_empty() {
        return out;
    }
    let fortunes = deltas.iter().any(|d| d.share_of_fortunes_percent.is_some());
    let share = fortunes.then_some(("share of a `/fortunes` request", Right));
    let mut table = Table::of(
        [
            ("framework", Left),
            ("layers", Right),
            ("change", Left),
            ("µs per request", Right),
            ("saved per request", Right),
        ]
        .into_iter()
        .chain(share),
    );
    for d in &deltas {
        let mut cells: Vec<String> = vec![
            d.delta.framework.name().to_owned(),
            d.delta.layers.to_string(),
            format!("{} → {}", d.delta.from, d.delta.to),
            format!("{:.2} → {:.2}", d.before_us, d.after_us),
            format!("{:+.2} µs", d.saved_us),
        ];
        if fortunes {
            cells.push(or_absent(d.share_of_fortunes_percent, |p| format!("{p:+.1} %")));
        }
        table.row(&cells.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    out.push('\n');
    out.push_str(&table.finish());
    out.push_str(if fortunes { notes::SAVED_WITH_FORTUNES } else { notes::SAVED_WITHOUT_FORTUNES });
    out
}

/// Deltas of several profiles side by side (`framework · profile · before ·
/// after · change`), for results of different profiles; empty if fewer than two.
pub fn profiles_table(all: &[&Results]) -> String {
    if all.len() < 2 {
        return String::new();
    }
    let mut all = all.to_vec();
    all.sort_by_key(|r| r.meta.profile as u8);
    let mut table = Table::new(&[
        "framework",
        "layers:",
        "scenario",
        "profile",
        "before (successful):",
        "after (successful):",
        "change [95 % CI]:",
        "verdict",
    ]);
    let mut keys: Vec<(Framework, u16, &str, &str, &str)> = all
        .iter()
        .flat_map(|r| {
            r.deltas.iter().map(|d| (d.framework, d.layers, d.scenario.name(), d.from.as_str(), d.to.as_str()))
        })
        .collect();
    keys.sort();
    keys.dedup();
    for (framework, layers, scenario, from, to) in keys {
        for r in &all {
            let same = |d: &&Delta| d.framework == framework && d.layers == layers && d.to == to && d.from == from;
            let Some(d) = r.deltas.iter().find(same) else {
                continue;
            };
            table.row(&[
                &framework.name(),
                &layers,
                &format!("{scenario} ({from} → {to})"),
                &r.meta.profile.cargo_name(),
                &format!("{:.0}", d.before_successful),
                &format!("{:.0}", d.after_successful),
                &change_with_ci(&d.change),
                &verdict(d.change.verdict),
            ]);
        }
    }
    table.finish()
}

/// What the profiler costs, measured within one profiling session: its
/// rounds alternate with perf attached and without (each a new server
/// process, so the rounds' spread holds the process term), and each run
/// type's rate with perf is set against its rate without (Welch 95 %
/// interval over the rounds). Empty unless the session has both.
pub fn profiling_cost_table(profiling: &Results) -> String {
    let side = |profiled: bool| Results {
        runs: profiling.runs.iter().filter(|r| r.figures.profiled == profiled).cloned().collect(),
        ..profiling.clone()
    };
    let (without, with) = (side(false), side(true));
    if without.runs.is_empty() || with.runs.is_empty() {
        return String::new();
    }
    let cmp = compare(&without, &with, Basis::Raw);
    let mut table = Table::of([
        ("framework", Left),
        ("scenario", Left),
        ("variant", Left),
        ("without perf requests/s", Right),
        ("with perf requests/s", Right),
        ("change [95 % CI]", Right),
        ("rounds without · with", Right),
    ]);
    for r in &cmp.rows {
        let rounds = |res: &Results| res.runs.iter().filter(|run| run.key() == r.key).count();
        table.row(&[
            &r.key.framework.name(),
            &r.key.scenario,
            &r.key.variant,
            &format!("{:.0}", r.a_per_s),
            &format!("{:.0}", r.b_per_s),
            &change_with_ci(&r.change),
            &format!("{} · {}", rounds(&without), rounds(&with)),
        ]);
    }
    table.finish()
}

/// The flame graphs with their figures (samples, share of cut stacks,
/// share with `[unknown]` frames), then the differential flame graphs of
/// each delta, as Markdown; empty without flame graphs.
pub fn flamegraph_table(results: &Results, flamegraphs: &FlameGraphs) -> String {
    if flamegraphs.graphs.is_empty() && flamegraphs.differentials.is_empty() {
        return String::new();
    }
    let profiled = results.runs.iter().filter(|r| r.figures.profiled).count();
    let mut out = format!(
        "`{}` attached to {profiled} of the {} runs, measured windows only; each variant's profiled runs merged.\n\n",
        results.meta.profiler.as_deref().unwrap_or("perf"),
        results.runs.len()
    );
    let unprofiled: Vec<String> = results
        .runs
        .iter()
        .filter(|r| !r.figures.profiled)
        .map(|r| format!("{} {}/{} round {}", r.framework.name(), r.scenario, r.variant, r.round))
        .collect();
    if profiled > 0 && !unprofiled.is_empty() {
        let shown = unprofiled.len().min(10);
        let _ = writeln!(
            out,
            "Without perf (the rounds that measure its cost, or after perf failed): {}{}.\n",
            unprofiled[..shown].join(", "),
            if unprofiled.len() > shown { format!(" and {} more", unprofiled.len() - shown) } else { String::new() }
        );
    }
    let mut table =
        Table::new(&["framework", "variant", "flame graph", "runs:", "samples:", "kept:", "cut stacks:", "[unknown]:"]);
    for g in &flamegraphs.graphs {
        table.row(&[
            &g.framework.name(),
            &g.variant,
            &format!("[{}]({})", g.svg, g.svg),
            &g.runs,
            &g.shape.samples,
            &or_absent(g.kept_percent, |k| format!("{k:.0} %")),
            &format!("{:.1} %", g.shape.cut_percent()),
            &format!("{:.1} %", g.shape.unknown_percent()),
        ]);
    }
    out.push_str(&table.finish());
    out.push_str(notes::CUT_STACKS);
    if !flamegraphs.differentials.is_empty() {
        out.push_str(notes::DIFFERENTIALS);
        let mut table =
            Table::new(&["framework", "delta", "server CPU per request:", "widths of before", "widths of after"]);
        for d in &flamegraphs.differentials {
            table.row(&[
                &d.framework.name(),
                &format!("{} ({} → {})", d.scenario, d.from, d.to),
                &format!("{:.2} → {:.2} µs", d.before_ns_per_request / 1e3, d.after_ns_per_request / 1e3),
                &format!("[{}]({})", d.svg_before_widths, d.svg_before_widths),
                &format!("[{}]({})", d.svg_after_widths, d.svg_after_widths),
            ]);
        }
        out.push_str(&table.finish());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Profile, Scenario, Variant};
    use crate::report::flames::{FlameGraph, Shape};
    use crate::report::report;
    use crate::results::fixtures::{results, run, two_rounds};

    #[test]
    fn perf_is_claimed_only_for_the_runs_it_recorded_and_its_cost_is_this_sessions() {
        let f = Framework::Axum;
        // Rounds 1 and 3 with perf, 2 and 4 without; fat serves 100, arc 300 requests
        // per window without perf and 10 % fewer with it.
        let runs: Vec<_> = (1..=4)
            .flat_map(|round| {
                let n = |base: u64| if round % 2 == 1 { base * 9 / 10 } else { base } + u64::from(round % 3);
                [run(f, "state", "fat", round, n(100), true), run(f, "state", "arc", round, n(300), true)]
            })
            .collect();
        let mut profiling = results(runs);
        profiling.meta.profile = Profile::Profiling;
        let without = report(&profiling, &[], &[], &FlameGraphs::default());
        assert!(!without.contains("## Cost of profiling"), "no run with perf, no cost to measure:\n{without}");

        profiling.meta.profiler = Some("perf record".to_owned());
        for r in profiling.runs.iter_mut().filter(|r| r.round % 2 == 1) {
            r.figures.profiled = true;
        }
        profiling.runs[6].figures.profiled = true; // round 4's fat, as if perf had recorded it too
        let flames = FlameGraphs {
            graphs: vec![FlameGraph {
                framework: f,
                variant: Variant::Fat,
                svg: "flamegraphs/axum-fat.svg".to_owned(),
                shape: Shape { samples: 200, cut: 3, unknown: 1 },
                runs: 2,
                requests: 200,
                kept_percent: Some(80.0),
            }],
            differentials: Vec::new(),
        };
        let text = report(&profiling, &[], &[], &flames);
        let cost = profiling_cost_table(&profiling);
        assert!(text.contains("## Cost of profiling") && text.contains(&cost), "{text}");
        let arc = cost.lines().find(|l| l.contains("| arc |")).expect("an arc row");
        assert!(arc.contains("| 2 · 2 |"), "two rounds a side: {arc}");
        let fat = cost.lines().find(|l| l.contains("| fat |")).expect("a fat row");
        assert!(fat.contains("| 1 · 3 |"), "the rounds as recorded: {fat}");
        let change: f64 = arc.split('|').nth(6).unwrap().trim().split(' ').next().unwrap().parse().unwrap();
        assert!((-11.0..=-9.0).contains(&change), "arc's 10 % fewer requests with perf: {change} in {arc}");
        assert!(
            text.contains("attached to 5 of the 8 runs")
                && text.contains("failed): axum state/fat round 2, axum state/arc round 2, axum state/arc round 4.")
        );
        assert!(text.contains(
            "| axum | fat | [flamegraphs/axum-fat.svg](flamegraphs/axum-fat.svg) | 2 | 200 | 80 % | 1.5 % | 0.5 % |"
        ));

        for r in &mut profiling.runs {
            r.figures.profiled = true;
        }
        let all = report(&profiling, &[], &[], &flames);
        assert!(all.contains("`perf record` attached to 8 of the 8 runs") && !all.contains("Without perf"), "{all}");
        assert!(!all.contains("## Cost of profiling"), "no run without perf to set against");
    }

    #[test]
    fn a_figure_not_measured_reads_as_a_dash_in_report_md_and_report_html_never_as_zero() {
        let f = Framework::Axum;
        let mut runs = vec![run(f, "state", "fat", 1, 100, true), run(f, "state", "arc", 1, 0, true)];
        runs[0].figures.client_cpu_percent = None;
        let text = report(&results(runs), &[], &[], &FlameGraphs::default());
        let row = |variant: &str| {
            let line = text.lines().find(|l| l.starts_with(&format!("| axum | state | {variant} |"))).unwrap();
            line.split('|').map(str::trim).skip(1).collect::<Vec<_>>()
        };
        // Columns: … requests/s (6), window CV, drift, p50 (9), p99, max, in flight, server CPU, client CPU (14).
        let (served, nothing) = (row("fat"), row("arc"));
        assert_eq!(&served[9..12], ["0.10 ms"; 3], "{served:?}");
        assert_eq!(served[14], "-", "client CPU not sampled: {served:?}");
        assert_eq!((nothing[4], nothing[6]), ("0", "0"), "0 successes over 1 s is a measured rate of 0");
        assert_eq!(&nothing[9..12], ["-"; 3], "no success, no latency: {nothing:?}");
        let page = crate::report::html_page(&text, std::path::Path::new("."));
        let cells = "<td style=\"text-align: right\">-</td>";
        assert_eq!(served[7], "-", "no CV of one window");
        assert_eq!(page.matches(cells).count(), 3 + 1 + 2, "three latencies, a CPU and two CVs, each `-`");
        assert!(!page.contains("NaN") && !text.contains("NaN"));
    }

    #[test]
    fn profiles_table_keeps_every_delta_of_every_profile() {
        let f = Framework::Axum;
        let mut runs = Vec::new();
        for round in 1..=2 {
            for (variant, n) in [("per_request", 100), ("preserialized", 120), ("cached", 110)] {
                runs.push(run(f, "payload", variant, round, n + u64::from(round), true));
            }
        }
        let release = results(runs);
        let mut profiling = release.clone();
        profiling.meta.profile = Profile::Profiling;
        let table = profiles_table(&[&profiling, &release]);
        assert_eq!(table.lines().count(), 2 + 2 * 2, "header + 2 deltas × 2 profiles:\n{table}");
        assert!(table.contains("/api/devices/cached") && table.contains("/api/devices/preserialized"));
        let release_row = table.lines().position(|l| l.contains("| release |")).unwrap();
        let profiling_row = table.lines().position(|l| l.contains("| profiling |")).unwrap();
        assert!(release_row < profiling_row, "release first");
    }

    #[test]
    fn proportion_table_lists_every_route_and_reads_deltas_against_fortunes() {
        let f = Framework::Actix;
        let runs = two_rounds(
            f,
            &[
                ("floor", "plaintext", 100_000),
                ("payload", "per_request", 80_000),
                ("payload", "preserialized", 100_000),
                ("payload", "cached", 100_000),
                ("fortunes", "fortunes", 20_000),
                ("fortunes", "fortunes_cached", 100_000),
            ],
        );
        let table = proportion_table(&results(runs.clone()));
        let header = table.lines().next().unwrap();
        assert_eq!(
            header,
            "| framework | layers | `/plaintext` | `/api/devices` | `/api/devices/preserialized` | `/api/devices/cached` | `/fortunes` | `/fortunes/cached` |"
        );
        assert!(
            table.contains("| actix | 10 | 10.00 µs | 12.50 µs | 10.00 µs | 10.00 µs | 50.00 µs | 10.00 µs |"),
            "{table}"
        );
        assert!(
            table.contains(
                "| actix | 10 | /api/devices → /api/devices/preserialized | 12.50 → 10.00 | +2.50 µs | +5.0 % |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| actix | 10 | /fortunes → /fortunes/cached | 50.00 → 10.00 | +40.00 µs | +80.0 % |"),
            "{table}"
        );
        let report = report(&results(runs.clone()), &[], &[], &FlameGraphs::default());
        assert!(report.contains("## In proportion"), "{report}");

        let without: Vec<_> = runs.into_iter().filter(|r| r.scenario != Scenario::Fortunes).collect();
        let table = proportion_table(&results(without));
        assert!(!table.contains("share of a `/fortunes` request") && table.contains("Add `fortunes`"), "{table}");
    }
}
