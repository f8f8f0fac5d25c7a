//! Bencher Metric Format (BMF) JSON, the shape of bencher.dev's reference
//! ("Bencher Metric Format"; a copy of its schema is
//! `bench-client/tests/fixtures/bmf.schema.json`).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Judged, Tracked};

/// A BMF metric: the value and, when known, its interval.
fn metric((value, interval): (f64, Option<(f64, f64)>)) -> Value {
    match interval {
        Some((low, high)) => json!({ "value": value, "lower_value": low, "upper_value": high }),
        None => json!({ "value": value }),
    }
}

/// Bencher Metric Format: per route its measures (timed: `throughput`,
/// successful requests per second, and `latency`, p99 in ns; counted:
/// a measure per count, `instructions`, `bytes-allocated`, … per request); per change `change-percent`
/// and, for deltas, `server-cpu-saved-us`, each with its interval.
pub(super) fn bmf(tracked: &[Tracked], judged: &[Judged]) -> Value {
    let mut out = BTreeMap::new();
    for t in tracked {
        let measures: BTreeMap<&str, Value> = t.measures.iter().map(|m| (m.key, metric(m.value))).collect();
        out.insert(t.name.clone(), json!(measures));
    }
    for j in judged {
        let c = &j.change;
        let interval = c.ci_low_percent.zip(c.ci_high_percent);
        let mut measures = json!({ "change-percent": metric((c.change_percent, interval)) });
        if let Some(saved) = j.saved_us {
            measures["server-cpu-saved-us"] = metric(saved);
        }
        out.insert(j.name.clone(), measures);
    }
    json!(out)
}
