//! The `middleware` scenario's answer: what each layer adds to a request in
//! each framework, in µs of server CPU with its interval over the rounds
//! and as a share of the bare route's cost; with a second session, whether
//! it lands where the first did.

use std::fmt::Write as _;

use super::format::verdict_within;
use super::table::Table;
use crate::model::{Framework, Scenario, Variant};
use crate::results::{Delta, Results, route_costs};

/// What a layer adds per request in one session: the mean over rounds and
/// its 95 % interval, µs (the negated saving of its delta).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Added {
    /// µs of server CPU added per successful request.
    mean_us: f64,
    /// Its interval over the rounds; `None` under two rounds.
    interval_us: Option<(f64, f64)>,
}

impl Added {
    /// Of `delta` (bare → layered); `None` without the server's CPU.
    fn of(delta: &Delta) -> Option<Self> {
        let saved = delta.saved_us?;
        Some(Self { mean_us: -saved, interval_us: delta.saved_ci_us.map(|(low, high)| (-high, -low)) })
    }

    /// Whether `other`'s mean lies within this interval (a second session
    /// landing in the first).
    fn holds(&self, other: &Self) -> bool {
        self.interval_us.is_some_and(|(low, high)| (low..=high).contains(&other.mean_us))
    }
}

/// The frameworks of `results` with a `middleware` delta, in order.
fn frameworks(results: &Results) -> Vec<Framework> {
    let mut frameworks: Vec<Framework> =
        results.deltas.iter().filter(|d| d.scenario == Scenario::Middleware).map(|d| d.framework).collect();
    frameworks.sort();
    frameworks.dedup();
    frameworks
}

/// The delta of `layer` in `framework` in `results`.
fn delta_of(results: &Results, framework: Framework, layer: Variant) -> Option<&Delta> {
    results
        .deltas
        .iter()
        .find(|d| d.framework == framework && d.scenario == Scenario::Middleware && d.to == layer.label())
}

/// What `layer` adds in `framework` in `results`.
fn added(results: &Results, framework: Framework, layer: Variant) -> Option<Added> {
    delta_of(results, framework, layer).and_then(Added::of)
}

/// The middleware table of `results` (empty without the scenario): a row per
/// layer, a column per framework; with `second`, each cell also gives the
/// second session's mean and the verdict of the paired change of successful
/// requests per second (in bold where both sessions give it), and lines
/// under the table count the verdicts both give and name every cell whose
/// second mean falls outside the first session's interval.
pub fn middleware_table(results: &Results, second: Option<&Results>) -> String {
    let frameworks = frameworks(results);
    if frameworks.is_empty() {
        return String::new();
    }
    let costs = route_costs(results);
    let bare = |f: Framework| costs.iter().find(|c| c.framework == f && c.variant == Variant::Bare).map(|c| c.cost_us);
    let mut columns = vec!["layer".to_owned()];
    columns.extend(frameworks.iter().map(|f| format!("{}:", f.name())));
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let mut table = Table::new(&columns);
    let mut row = vec!["bare route, µs per request".to_owned()];
    row.extend(frameworks.iter().map(|&f| bare(f).map_or_else(|| "-".to_owned(), |us| format!("{us:.2}"))));
    table.row(&row.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    let mut outside = Vec::new();
    let (mut cells, mut agreed) = (0, 0);
    for layer in &Variant::MIDDLEWARE[1..] {
        let name = layer.label().split(' ').next().unwrap_or_default();
        let mut row = vec![name.to_owned()];
        for &f in &frameworks {
            let cell = match (layer.middleware(f), added(results, f, *layer)) {
                (None, _) => "none offered".to_owned(),
                (Some(_), None) => "-".to_owned(),
                (Some(_), Some(a)) => {
                    let mut cell = format!("{:+.2} µs", a.mean_us);
                    if let Some((low, high)) = a.interval_us {
                        let _ = write!(cell, " [{low:+.2} … {high:+.2}]");
                    }
                    if let Some(us) = bare(f) {
                        let _ = write!(cell, " ({:+.0} %)", a.mean_us / us * 100.0);
                    }
                    let other = second.and_then(|s| delta_of(s, f, *layer));
                    if let (Some(b), Some(first), Some(other)) =
                        (other.and_then(Added::of), delta_of(results, f, *layer), other)
                    {
                        let _ = write!(cell, "; {:+.2}", b.mean_us);
                        if !a.holds(&b) {
                            outside.push(format!("{} {name}", f.name()));
                        }
                        let threshold = results.meta.threshold_percent;
                        let (one, two) =
                            (verdict_within(&first.change, threshold), verdict_within(&other.change, threshold));
                        cells += 1;
                        if one == two {
                            agreed += 1;
                            let _ = write!(cell, "; {one}");
                        } else {
                            let _ = write!(cell, "; {} / {}", one.replace("**", ""), two.replace("**", ""));
                        }
                    }
                    cell
                }
            };
            row.push(cell);
        }
        table.row(&row.iter().map(|c| c as &dyn std::fmt::Display).collect::<Vec<_>>());
    }
    let mut out = String::from(
        "What each layer adds to a request of `/api/devices/preserialized`: µs of server CPU per successful \
         request, the layered server's cost minus the bare one's (`--middleware none`) in the same alternation, \
         mean over the rounds with its 95 % interval, and (in parentheses) as a share of the bare route's cost. \
         Every request sends `Accept-Encoding: gzip` and an `Origin`; every response is verified (a gzip body \
         decoded, each header the layers add present).",
    );
    if second.is_some() {
        out.push_str(
            " After the first semicolon: the second session's mean; after the second, the verdict of the paired \
             change of successful requests per second, in bold where both sessions give it.",
        );
    }
    out.push_str("\n\n");
    out.push_str(&table.finish());
    if second.is_some() {
        let _ = writeln!(out, "\nBoth sessions give the same verdict in {agreed} of {cells} cells.");
        if outside.is_empty() {
            out.push_str("The second session's mean lies within the first session's interval in every cell.\n");
        } else {
            let _ = writeln!(
                out,
                "The second session's mean lies outside the first's interval in: {}.",
                outside.join(", ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Pairing;
    use crate::results::{Over, deltas, fixtures};

    /// actix's bare and trace servers over three rounds at these rates (one
    /// server CPU, always busy: a request costs 10⁶ ÷ rate µs).
    fn session(bare: [u64; 3], trace: [u64; 3]) -> Results {
        let mut runs = Vec::new();
        for (i, (b, t)) in bare.into_iter().zip(trace).enumerate() {
            let round = u32::try_from(i).unwrap() + 1;
            runs.push(fixtures::run(Framework::Actix, "middleware", "bare", round, b, true));
            runs.push(fixtures::run(Framework::Actix, "middleware", "trace", round, t, true));
        }
        let mut results = fixtures::results(runs.clone());
        let over = Over { pairing: Pairing::Rounds, processes: true };
        results.deltas = deltas(&runs, &[Framework::Actix], &[Scenario::Middleware], &[10], over);
        results
    }

    #[test]
    fn each_layer_reads_as_the_cost_it_adds_and_a_second_session_is_held_to_the_first_interval() {
        let first = session([1000, 1000, 1000], [800, 790, 810]);
        let added = added(&first, Framework::Actix, Variant::Trace).unwrap();
        assert!((added.mean_us - 250.0).abs() < 10.0, "{added:?}");
        let (low, high) = added.interval_us.unwrap();
        assert!(low < added.mean_us && added.mean_us < high);
        let table = middleware_table(&first, None);
        assert!(table.contains("| bare route, µs per request | 1000.00 |"), "{table}");
        assert!(
            table.contains(&format!("| trace | {:+.2} µs [{low:+.2} … {high:+.2}] (+25 %) |", added.mean_us)),
            "{table}"
        );
        assert!(table.contains("| request-id | none offered |"), "{table}");
        assert!(table.contains("| cors | - |"), "offered, not measured: {table}");
        let same = middleware_table(&first, Some(&session([1000, 1000, 1000], [801, 799, 800])));
        assert!(same.contains("lies within the first session's interval in every cell"), "{same}");
        assert!(same.contains("; +250.") || same.contains("; +251.") || same.contains("; +249."), "{same}");
        assert!(same.contains("Both sessions give the same verdict in 1 of 1 cells."), "{same}");
        let off = middleware_table(&first, Some(&session([1000, 1000, 1000], [500, 500, 500])));
        assert!(off.contains("lies outside the first's interval in: actix trace."), "{off}");
        assert_eq!(middleware_table(&fixtures::results(Vec::new()), None), "", "no middleware scenario");
    }
}
