//! What continuous integration reads: a results file or a comparison as
//! Bencher Metric Format (BMF) JSON, as github-action-benchmark's custom
//! JSON (`customBiggerIsBetter`), and as JUnit XML with one test case per
//! delta. Each is a view of the same two lists: the routes measured (their
//! successful requests per second and p99 latency over the rounds, with the
//! rounds' 95 % interval) and the changes judged (a delta or a `compare`
//! row, with its interval and verdict).
//!
//! The shapes are those the tools publish: BMF from bencher.dev's reference
//! ("Bencher Metric Format"), the custom JSON from github-action-benchmark's
//! README ("Examples: custom benchmark"), JUnit from the Jenkins format as
//! quick-junit writes it; copies of the three are under
//! `bench-client/tests/fixtures/` and the tests check against them (the
//! JUnit one with xmllint).

use std::collections::BTreeMap;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use serde_json::{Value, json};

use super::format::change_with_ci;
use crate::analysis::{Change, Verdict, geometric_mean_interval};
use crate::results::{Comparison, Results, RunRecord};

/// One route's figures over the rounds of a results file.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    /// `framework route` (with the side for `ab`, the layers when swept).
    pub name: String,
    /// Successful requests per second: geometric mean over the rounds, and
    /// its 95 % interval.
    pub per_s: (f64, Option<(f64, f64)>),
    /// p99 latency of successful requests, nanoseconds, the same way.
    pub p99_ns: (f64, Option<(f64, f64)>),
}

/// One change a CI gate judges.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// `framework from → to` (a delta) or `framework layers scenario/variant` (a row of `compare`).
    pub name: String,
    /// The change, its interval and verdict.
    pub change: Change,
    /// Server CPU saved per request, µs, with its interval (deltas only).
    pub saved_us: Option<(f64, Option<(f64, f64)>)>,
    /// Whether it is judged at all (`compare`'s floor rows are not).
    pub judged: bool,
}

impl Judged {
    /// A significant slowdown beyond `threshold_percent`.
    pub fn regression(&self, threshold_percent: f64) -> bool {
        self.judged && self.change.verdict == Verdict::Slower && self.change.change_percent < -threshold_percent
    }
}

/// The routes of `results`, in the order first measured.
pub fn tracked(results: &Results) -> Vec<Tracked> {
    let swept = results.meta.layers.len() > 1;
    let mut groups: Vec<(String, Vec<&RunRecord>)> = Vec::new();
    for run in results.runs.iter().filter(|r| r.figures.usable()) {
        let side = if results.meta.ab.is_some() { format!(" {}", run.scenario) } else { String::new() };
        let layers = if swept { format!(" {} layers", run.layers) } else { String::new() };
        let name = format!("{} {}{side}{layers}", run.framework.name(), run.route);
        match groups.iter_mut().find(|(n, _)| *n == name) {
            Some((_, runs)) => runs.push(run),
            None => groups.push((name, vec![run])),
        }
    }
    groups
        .into_iter()
        .map(|(name, runs)| {
            let rates: Vec<f64> = runs.iter().map(|r| r.figures.requests_per_s).collect();
            let p99: Vec<f64> = runs.iter().map(|r| r.figures.latency_us.p99 as f64 * 1e3).collect();
            Tracked { name, per_s: geometric_mean_interval(&rates), p99_ns: geometric_mean_interval(&p99) }
        })
        .collect()
}

/// The deltas of `results`.
pub fn judged_deltas(results: &Results) -> Vec<Judged> {
    results
        .deltas
        .iter()
        .map(|d| {
            let route = if d.from == d.to { d.to.clone() } else { format!("{} → {}", d.from, d.to) };
            Judged {
                name: format!("{} {route}", d.framework.name()),
                change: d.change,
                saved_us: d.saved_us.map(|s| (s, d.saved_ci_us)),
                judged: true,
            }
        })
        .collect()
}

/// The rows of `comparison`.
pub fn judged_rows(comparison: &Comparison) -> Vec<Judged> {
    comparison
        .rows
        .iter()
        .map(|r| Judged {
            name: format!(
                "{} {} layers {}/{}",
                r.key.framework.name(),
                r.key.layers,
                r.key.scenario.name(),
                r.key.variant.name()
            ),
            change: r.change,
            saved_us: None,
            judged: comparison.judged(r),
        })
        .collect()
}

/// A BMF metric: the value and, when known, its interval.
fn metric((value, interval): (f64, Option<(f64, f64)>)) -> Value {
    match interval {
        Some((low, high)) => json!({ "value": value, "lower_value": low, "upper_value": high }),
        None => json!({ "value": value }),
    }
}

/// Bencher Metric Format: per route the measures `throughput` (successful
/// requests per second) and `latency` (p99, ns); per change `change-percent`
/// and, for deltas, `server-cpu-saved-us`, each with its interval.
pub fn bmf(tracked: &[Tracked], judged: &[Judged]) -> Value {
    let mut out = BTreeMap::new();
    for t in tracked {
        out.insert(t.name.clone(), json!({ "throughput": metric(t.per_s), "latency": metric(t.p99_ns) }));
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

/// github-action-benchmark's custom JSON for `customBiggerIsBetter`: per
/// route its successful requests per second, `range` the interval's
/// half-width, `extra` the interval and p99.
pub fn github_benchmark(tracked: &[Tracked]) -> Value {
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

/// JUnit XML: one test suite named `suite`, one test case per change,
/// failed when it is a significant slowdown beyond `threshold_percent`
/// (the message says by how much), skipped when it is not judged.
///
/// # Errors
/// When the XML cannot be written.
pub fn junit(suite: &str, judged: &[Judged], threshold_percent: f64) -> anyhow::Result<String> {
    let mut test_suite = TestSuite::new(suite);
    for j in judged {
        let verdict = format!("{} ({})", change_with_ci(&j.change), j.change.verdict.label());
        let status = if !j.judged {
            let mut skipped = TestCaseStatus::skipped();
            skipped.set_message(format!("not judged: {verdict}"));
            skipped
        } else if j.regression(threshold_percent) {
            let mut failure = TestCaseStatus::non_success(NonSuccessKind::Failure);
            failure.set_message(format!("slower beyond {threshold_percent} %: {verdict}")).set_type("regression");
            failure
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(j.name.clone(), status);
        case.set_classname(suite).set_system_out(verdict);
        test_suite.add_test_case(case);
    }
    let mut report = Report::new("bench-client");
    report.add_test_suite(test_suite);
    Ok(report.to_string()?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::fixtures::{results, run};

    fn change(percent: f64, low: f64, high: f64, verdict: Verdict) -> Change {
        Change { change_percent: percent, ci_low_percent: Some(low), ci_high_percent: Some(high), verdict }
    }

    #[test]
    fn routes_are_the_geometric_mean_of_their_rounds_with_its_interval() {
        let f = Framework::Axum;
        let runs = vec![
            run(f, "payload", "per_request", 1, 1000, true),
            run(f, "payload", "per_request", 2, 4000, true),
            run(f, "payload", "per_request", 3, 2000, false),
        ];
        let tracked = tracked(&results(runs));
        assert_eq!(tracked.len(), 1);
        assert_eq!(tracked[0].name, "axum /api/devices");
        // Rounds 1 and 2 (round 3 is incomplete): √(1000 × 4000) = 2000 per s
        // over the fixtures' one-second runs.
        assert!((tracked[0].per_s.0 - 2000.0).abs() < 1e-6, "{tracked:?}");
        let (low, high) = tracked[0].per_s.1.unwrap();
        assert!(low < 1000.0 && high > 4000.0, "two rounds, t(1) = 12.7: {low} … {high}");
    }

    #[test]
    fn a_regression_fails_its_test_case_and_an_unjudged_row_is_skipped() {
        let judged = [
            Judged {
                name: "axum /a".into(),
                change: change(-5.0, -7.0, -3.0, Verdict::Slower),
                saved_us: None,
                judged: true,
            },
            Judged {
                name: "axum /b".into(),
                change: change(-1.0, -1.5, -0.5, Verdict::Slower),
                saved_us: None,
                judged: true,
            },
            Judged {
                name: "axum /c".into(),
                change: change(-9.0, -12.0, -6.0, Verdict::Slower),
                saved_us: None,
                judged: false,
            },
        ];
        let xml = junit("ab", &judged, 2.0).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let root = doc.root_element();
        assert_eq!(
            (root.tag_name().name(), root.attribute("tests"), root.attribute("failures")),
            ("testsuites", Some("3"), Some("1"))
        );
        let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
        let failed: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("failure"))).collect();
        assert_eq!(failed.len(), 1);
        assert_eq!(failed[0].attribute("name"), Some("axum /a"));
        let skipped: Vec<_> = cases.iter().filter(|c| c.children().any(|n| n.has_tag_name("skipped"))).collect();
        assert_eq!(skipped.iter().map(|c| c.attribute("name")).collect::<Vec<_>>(), [Some("axum /c")]);
    }
}
