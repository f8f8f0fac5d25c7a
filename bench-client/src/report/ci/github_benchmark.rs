//! github-action-benchmark's custom JSON, the shape of its README
//! ("Examples: custom benchmark"; a copy of its schema is
//! `bench-client/tests/fixtures/github-benchmark.schema.json`).

use serde_json::{Value, json};

use super::Tracked;

/// github-action-benchmark's custom JSON for `customBiggerIsBetter`: per
/// route its successful requests per second, `range` the interval's
/// half-width, `extra` the interval and p99.
pub(super) fn github_benchmark(tracked: &[Tracked]) -> Value {
    let entries: Vec<Value> = tracked
        .iter()
        .map(|t| {
            let (value, interval) = t.per_s;
            let mut entry = json!({ "name": t.name, "unit": "requests/s", "value": value });
            if let Some((low, high)) = interval {
                entry["range"] = json!(format!("± {:.0}", (high - low) / 2.0));
            }
            let interval = interval.map_or_else(String::new, |(l, h)| format!("95 % CI {l:.0} … {h:.0} requests/s\n"));
            entry["extra"] = json!(format!("{interval}p99 {:.0} µs", t.p99_ns.0 / 1e3));
            entry
        })
        .collect();
    json!(entries)
}
