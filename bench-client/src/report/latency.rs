//! The latency table of a session at a fixed load (`--load-percent`): per
//! delta and percentile, the baseline's and the changed variant's latency
//! and the change with its interval.

use std::fmt::Write as _;

use super::format::{change_with_ci, verdict_within};
use super::notes;
use super::table::Table;
use crate::results::Results;

/// The latency deltas as Markdown, with the offered load and the legend;
/// empty when the session ran in the closed loop.
pub fn latency_table(results: &Results) -> String {
    let Some(percent) = results.meta.load_percent else { return String::new() };
    if results.deltas.iter().all(|d| d.latency.is_empty()) {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Latency in the open loop at {percent} % of the baseline's closed-loop rate (measured each round), \
         from when each request was due:\n"
    );
    let mut table = Table::new(&[
        "framework",
        "change",
        "percentile",
        "before:",
        "after:",
        "latency change [95 % CI]:",
        "verdict",
        "blocks:",
    ]);
    for d in &results.deltas {
        let what = if d.from == d.to { d.to.clone() } else { format!("{} → {}", d.from, d.to) };
        for l in &d.latency {
            table.row(&[
                &d.framework.name(),
                &what,
                &l.percentile,
                &format!("{:.0} µs", l.before_us),
                &format!("{:.0} µs", l.after_us),
                &change_with_ci(&l.change),
                &verdict_within(&l.change, results.meta.threshold_percent),
                &l.blocks,
            ]);
        }
    }
    out.push_str(&table.finish());
    out.push_str(notes::LATENCY);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::BlockLatency;
    use crate::model::Framework;
    use crate::results::fixtures::{results, run};

    #[test]
    fn a_latency_change_reads_with_its_interval_and_a_percentile_needs_enough_requests() {
        let mut runs = Vec::new();
        for round in 1..=3 {
            // Four blocks of 2,000 requests: enough for p99, not for p99.9.
            let block = |us: u64| BlockLatency { requests: 2_000, p50: us / 4, p90: us / 2, p99: us, p999: us * 2 };
            let mut before = run(Framework::Axum, "payload", "per_request", round, 1000, true);
            before.figures.block_latency_us = vec![block(1000); 4];
            let mut after = run(Framework::Axum, "payload", "preserialized", round, 1000, true);
            after.figures.block_latency_us = vec![block(500); 4];
            runs.extend([before, after]);
        }
        let mut r = results(runs);
        assert_eq!(latency_table(&r), "", "closed loop: no table");
        r.meta.load_percent = Some(50.0);
        let table = latency_table(&r);
        assert!(table.starts_with("Latency in the open loop at 50 % of the baseline's"), "{table}");
        let row = "| axum | /api/devices → /api/devices/preserialized | p99 | 1000 µs | 500 µs | -50.0 % [-50.0 … -50.0] | **faster** | 12 |";
        assert!(table.contains(row), "{table}");
        assert!(table.contains("| p50 | 250 µs | 125 µs |"), "{table}");
        assert!(!table.contains("| p99.9 |"), "2,000 requests per block are too few for p99.9: {table}");
    }
}
