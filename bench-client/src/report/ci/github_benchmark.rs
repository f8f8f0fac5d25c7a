//! github-action-benchmark's custom JSON, the shape of its README
//! ("Examples: custom benchmark"; a copy of its schema is
//! `bench-client/tests/fixtures/github-benchmark.schema.json`).

use serde_json::{Value, json};

use super::Tracked;

/// github-action-benchmark's custom JSON: per route its headline measure
/// (successful requests per second, for `customBiggerIsBetter`; counted,
/// instructions per request, for `customSmallerIsBetter`), `range` the
/// interval's half-width, `extra` the interval and the other measures.
pub(super) fn github_benchmark(tracked: &[Tracked]) -> Value {
    let entries: Vec<Value> = tracked
        .iter()
        .filter_map(|t| {
            let (first, others) = t.measures.split_first()?;
            let (value, interval) = first.value;
            let mut entry = json!({ "name": t.name, "unit": first.unit, "value": value });
            if let Some((low, high)) = interval {
                entry["range"] = json!(format!("± {:.0}", (high - low) / 2.0));
            }
            let interval =
                interval.map_or_else(String::new, |(l, h)| format!("95 % CI {l:.0} … {h:.0} {}\n", first.unit));
            let shown: Vec<&str> = others.iter().map(|m| m.shown.as_str()).collect();
            entry["extra"] = json!(format!("{interval}{}", shown.join(", ")));
            Some(entry)
        })
        .collect();
    json!(entries)
}
