//! The table of a `memory` session: per server, what a fresh process holds,
//! what each idle and each busy connection adds, and what is kept once the
//! load has ended, each with its 95 % interval over the repeats.

use super::table::Table;
use crate::results::{Held, MemoryReport, OverRepeats};

/// `mean [low … high]`, or the mean alone (one repeat), or `-` (none).
fn cell(figure: Option<OverRepeats>, decimals: usize) -> String {
    let Some(f) = figure else { return "-".to_owned() };
    match f.interval {
        Some((lo, hi)) => format!("{:.decimals$} [{lo:.decimals$} … {hi:.decimals$}]", f.mean),
        None => format!("{:.decimals$}", f.mean),
    }
}

/// The memory table of `report` (Markdown, also what the terminal prints),
/// under the line that says what was measured, and a line per server whose
/// measurement ended early.
pub fn memory_table(report: &MemoryReport) -> String {
    let counts: Vec<String> = report.connections.iter().map(usize::to_string).collect();
    let repeats = report.servers.iter().map(|s| s.repeats.len()).max().unwrap_or(0);
    let mut out = format!(
        "Resident memory (RSS), fresh processes, {repeats} repeats (mean, 95 % interval): per connection, the \
         slope from {} to {} keep-alive connections on {}, idle (after one request each) and busy (read near the \
         end of a {} ms closed-loop load, over the connections held then); kept: over the start, after the load. \
         {}{}:\n\n",
        counts.first().map_or("-", String::as_str),
        counts.last().map_or("-", String::as_str),
        report.route,
        report.busy_ms,
        report.put_body_bytes.map_or_else(String::new, |bytes| format!(
            "Every idle connection carried a PUT /api/devices of {bytes} bytes first. "
        )),
        report.provenance,
    );
    // The heap column only where a repeat counted it (not with --no-heap, nor in a version 1 file).
    let heap = report.servers.iter().any(|s| s.repeats.iter().any(|r| r.heap.is_some()));
    if heap {
        out.push_str(
            "Heap: live bytes (memcheck's count of blocks allocated and not freed) of a third fresh process \
             holding idle connections, the same slope.\n\n",
        );
    }
    let mut columns = vec!["server", "MiB at start:", "KiB per idle connection:"];
    columns.extend(heap.then_some("heap KiB per idle connection:"));
    columns.extend(["KiB per busy connection:", "MiB kept after the load:", "repeats:"]);
    let mut table = Table::new(&columns);
    for server in &report.servers {
        let mut row = vec![
            server.name.clone(),
            cell(server.baseline_mib(), 1),
            cell(server.kib_per_connection(Held::Idle, &report.connections), 1),
        ];
        row.extend(heap.then(|| cell(server.heap_kib_per_connection(&report.connections), 1)));
        row.extend([
            cell(server.kib_per_connection(Held::Busy, &report.connections), 1),
            cell(server.kept_mib(), 2),
            server.repeats.len().to_string(),
        ]);
        let cells: Vec<&dyn std::fmt::Display> = row.iter().map(|c| c as &dyn std::fmt::Display).collect();
        table.row(&cells);
    }
    out.push_str(&table.finish());
    for server in &report.servers {
        if let Some((held, asked)) = server.fewest_held(&report.connections) {
            out.push_str(&format!(
                "\n{}: held {held} of {asked} idle connections when read (its keep-alive timeout closed the others \
                 while they opened); its idle slopes are over those it held.\n",
                server.name
            ));
        }
    }
    for server in &report.servers {
        if let Some(e) = &server.error {
            out.push_str(&format!("\n{}: ended early: {e}\n", server.name));
        }
    }
    if !report.complete {
        out.push_str("\nIncomplete: not every server was measured every repeat.\n");
    }
    out
}
