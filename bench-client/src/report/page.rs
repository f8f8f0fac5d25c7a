//! The whole `report.md` of a run folder: its title, the sections of the
//! answer in the one order of `sections.rs`, every run, and the machine and
//! settings. The page is composed here, above the sections, so that the
//! sections' tables never import the page back.

use std::fmt::Write as _;
use std::path::Path;

use super::flames::FlameGraphs;
use super::format::{ms, opt_percent, or_absent};
use super::sections::{Answer, markdown_sections};
use super::table::Table;
use crate::results::Results;

/// What the report is of: a suite, an `ab` of two sides, or an A/A (one
/// side against itself).
fn title(results: &Results) -> String {
    match &results.meta.ab {
        Some(ab) if ab.before == ab.after && ab.before_commit == ab.after_commit => {
            format!("A/A: {} against itself", ab.after)
        }
        Some(ab) => format!("ab: {} → {}", ab.before, ab.after),
        None => format!(
            "Suite: {} · profile {}",
            results.meta.frameworks.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
            results.meta.profile.cargo_name()
        ),
    }
}

/// The whole `report.md`: the tables, the profiles side by side (when other
/// profiles' results are given), the cost of profiling, the charts, the
/// flame graphs with their figures and the differential ones, every run,
/// and the metadata.
pub fn report(results: &Results, other_profiles: &[Results], charts: &[String], flamegraphs: &FlameGraphs) -> String {
    let m = &results.meta;
    let mut out = format!("# {}\n\n", title(results));
    if !results.complete {
        out.push_str("> **Incomplete**: interrupted, or a framework failed (see below).\n\n");
    }
    // The answer first: every change with its interval, then the sections every rendering shares.
    let answer = Answer { results, other_profiles, flamegraphs };
    out.push_str(&markdown_sections(&answer, charts));
    out.push_str("\n## Runs\n\n");
    let mut table = Table::new(&[
        "framework",
        "scenario",
        "variant",
        "round:",
        "successful:",
        "failed:",
        "requests/s:",
        "window CV:",
        "drift",
        "p50:",
        "p99:",
        "max:",
        "in flight at deadline:",
        "server CPU:",
        "client CPU:",
    ]);
    for r in &results.runs {
        let f = &r.figures;
        let server_cpu = or_absent(f.server_cpu_percent, |p| {
            format!("{p:.1} %{}", if f.client_bound { " (client-bound)" } else { "" })
        });
        table.row(&[
            &r.framework.name(),
            &r.scenario,
            &r.variant,
            &r.round,
            &f.successful,
            &f.failed_total,
            &or_absent(f.requests_per_s, |r| format!("{r:.0}")),
            &opt_percent(f.window_cv_percent),
            &if f.drift { "**yes**" } else { "no" },
            &or_absent(f.latency_us, |l| ms(l.p50 as f64)),
            &or_absent(f.latency_us, |l| ms(l.p99 as f64)),
            &or_absent(f.latency_us, |l| ms(l.max as f64)),
            &f.counts.in_flight_at_deadline,
            &server_cpu,
            &or_absent(f.client_cpu_percent, |p| format!("{p:.1} %")),
        ]);
    }
    out.push_str(&table.finish());
    let _ = write!(
        out,
        "\n## Machine and settings\n\n- commit: `{}`\n- rustc: `{}`\n- CPU: {} ({} logical CPUs), kernel {}\n- started: {}\n- connections {}, duration {} s, warm-up {} s, window {} s, timeout {} s, rounds {}, layers {:?}\n- server CPUs {:?} ({} workers), client CPUs {:?} ({} engine threads)\n",
        m.commit,
        m.rustc,
        m.cpu_model,
        m.cores,
        m.kernel,
        m.started_utc,
        m.connections,
        m.duration_s,
        m.warmup_s,
        m.window_s,
        m.timeout_s,
        m.rounds,
        m.layers,
        m.server_cpus,
        m.server_workers,
        m.client_cpus,
        m.client_threads
    );
    for line in &m.noise {
        let _ = writeln!(out, "- noise: {line}");
    }
    out
}

/// Draws the charts and writes `report.md` and `report.html` into `dir`
/// (charts that cannot be drawn are a warning, not an error).
///
/// # Errors
/// A report that cannot be written.
pub fn write_reports(
    dir: &Path,
    results: &Results,
    others: &[Results],
    flamegraphs: &FlameGraphs,
) -> anyhow::Result<()> {
    let charts = super::charts::suite_charts(dir, results).unwrap_or_else(|e| {
        eprintln!("warning: charts not drawn: {e:#}");
        Vec::new()
    });
    let markdown = report(results, others, &charts, flamegraphs);
    crate::sys::write_or_keep(&dir.join("report.md"), markdown.as_bytes())?;
    crate::sys::write_or_keep(&dir.join("report.html"), super::html_page(&markdown, dir).as_bytes())?;
    Ok(())
}
