//! What continuous integration reads: a results file or a comparison as
//! Bencher Metric Format (BMF) JSON, as github-action-benchmark's custom
//! JSON (`customBiggerIsBetter`), and as JUnit XML with one test case per
//! delta. Each is a view of the same two lists: the routes measured (their
//! successful requests per second and p99 latency over the rounds, with the
//! rounds' 95 % interval) and the changes judged (a delta or a `compare`
//! row, with its interval and verdict).
//!
//! The shapes are those the tools publish, one module per format (`bmf`,
//! `github_benchmark`, `junit`), chosen through one enum, [`Format`], as
//! hyperfine chooses its exporters: a new format is a new module and a
//! variant. Copies of the three published shapes are under
//! `bench-client/tests/fixtures/` and the tests check against them (the
//! JUnit one with xmllint).

mod bmf;
mod github_benchmark;
mod junit;

use crate::analysis::{Better, Change, geometric_mean_interval};
use crate::results::{Comparison, Count, CountReport, OverRepeats, Results, RunRecord};

/// One measure of a tracked route: its BMF key, unit, value with its 95 %
/// interval, and how it reads in a line.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// The BMF measure's key (`throughput`, `latency`, `instructions`, …).
    pub key: &'static str,
    /// Its unit (`requests/s`, `ns`, `instructions/request`, …).
    pub unit: &'static str,
    /// The value and, when known, its 95 % interval.
    pub value: (f64, Option<(f64, f64)>),
    /// How it reads beside another measure (`p99 412 µs`).
    pub shown: String,
}

/// One route's figures: timed, over the rounds of a results file (successful
/// requests per second first, then p99 latency); counted, over the repeats
/// of a `count` (instructions per request first, then allocations and system
/// calls). The first measure is the one a single-valued format publishes.
#[derive(Debug, Clone, PartialEq)]
pub struct Tracked {
    /// `framework route` (with the side for `ab`, the layers when swept).
    pub name: String,
    /// Its measures, the headline first.
    pub measures: Vec<Measure>,
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
    /// Which way is better: higher for a rate, lower for a count.
    pub better: Better,
}

impl Judged {
    /// A judged change that is a regression beyond `threshold_percent`
    /// ([`Change::is_regression`]).
    pub fn regression(&self, threshold_percent: f64) -> bool {
        self.judged && self.change.is_regression(threshold_percent, self.better)
    }
}

/// The changes that fail the gate: of `judged`, those that regressed beyond
/// `threshold_percent`. The one list every exit code (`ab`, `compare`,
/// `count`) and every CI file (a JUnit failure each) reads, so that they
/// cannot disagree.
pub fn gated(judged: &[Judged], threshold_percent: f64) -> Vec<&Judged> {
    judged.iter().filter(|j| j.regression(threshold_percent)).collect()
}

/// The lines a command prints for the changes of `gated`, one each:
/// `REGRESSION: name change [interval]`.
pub fn regression_lines(gated: &[&Judged]) -> String {
    gated.iter().map(|j| format!("REGRESSION: {} {}\n", j.name, crate::report::change_with_ci(&j.change))).collect()
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
            let rates: Vec<f64> = runs.iter().filter_map(|r| r.figures.requests_per_s).collect();
            let p99: Vec<f64> = runs.iter().filter_map(|r| r.figures.latency_us).map(|l| l.p99 as f64 * 1e3).collect();
            let p99_ns = geometric_mean_interval(&p99);
            Tracked {
                name,
                measures: vec![
                    Measure {
                        key: "throughput",
                        unit: "requests/s",
                        value: geometric_mean_interval(&rates),
                        shown: String::new(),
                    },
                    Measure {
                        key: "latency",
                        unit: "ns",
                        value: p99_ns,
                        shown: format!("p99 {:.0} µs", p99_ns.0 / 1e3),
                    },
                ],
            }
        })
        .collect()
}

/// The deltas of `results`.
pub fn judged_deltas(results: &Results) -> Vec<Judged> {
    results
        .deltas
        .iter()
        .flat_map(|d| {
            let route = d.from_to();
            let timed = Judged {
                name: format!("{} {route}", d.framework.name()),
                change: d.change,
                saved_us: d.saved_us.map(|s| (s, d.saved_ci_us)),
                judged: true,
                better: Better::Higher,
            };
            // With `--count`: the same change counted, shown beside it (the timed change is the gate).
            let counted = d.counted.iter().flat_map(move |c| {
                let route = route.clone();
                Count::ALL.into_iter().filter_map(move |count| {
                    c.change(count).map(|change| Judged {
                        name: format!("{} {route} {}", d.framework.name(), count.noun()),
                        change: change.as_change(),
                        saved_us: None,
                        judged: false,
                        better: Better::Lower,
                    })
                })
            });
            // At a fixed load: every percentile's change, judged (a latency that rose is a regression).
            let latency = d.latency.iter().map(move |l| Judged {
                name: format!("{} {} {}", d.framework.name(), d.from_to(), l.percentile),
                change: l.change,
                saved_us: None,
                judged: true,
                better: Better::Lower,
            });
            std::iter::once(timed).chain(latency).chain(counted)
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
            better: Better::Higher,
        })
        .collect()
}

/// The routes of a `count`: per server and route, every count it has
/// ([`Count`]: instructions first), per request, the mean over the repeats
/// with its 95 % interval.
pub fn tracked_counts(report: &CountReport) -> Vec<Tracked> {
    report
        .rows
        .iter()
        .map(|r| Tracked {
            name: format!("{} {}", r.framework, r.route),
            measures: Count::ALL
                .into_iter()
                .filter(|c| !c.per_request(r).is_empty())
                .map(|c| {
                    let value = OverRepeats::of(c.per_request(r)).map_or((0.0, None), |o| (o.mean, o.interval));
                    Measure { key: c.key(), unit: c.unit(), value, shown: format!("{} {:.2}", c.key(), value.0) }
                })
                .collect(),
        })
        .filter(|t| t.measures.first().is_some_and(|m| m.value.0 > 0.0))
        .collect()
}

/// The counted deltas of a `count` (two builds): each route's change of
/// every count both sides have; instructions per request are judged (a
/// regression when they grow beyond the threshold), the others shown.
pub fn judged_counts(report: &CountReport) -> Vec<Judged> {
    report
        .deltas
        .iter()
        .flat_map(|d| {
            Count::ALL.into_iter().filter_map(move |c| {
                d.change(c).map(|change| Judged {
                    name: format!("{} {} → {} {}", d.route, d.before, d.after, c.noun()),
                    change: change.as_change(),
                    saved_us: None,
                    judged: c == Count::Instructions,
                    better: Better::Lower,
                })
            })
        })
        .collect()
}

/// A file CI reads. Every format is a view of the same two lists, so
/// adding one is a module that renders them and a variant here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Bencher Metric Format JSON: per route the measures `throughput`
    /// (successful requests per second) and `latency` (p99, ns); per change
    /// `change-percent` and, for deltas, `server-cpu-saved-us`, each with its
    /// interval.
    Bmf,
    /// github-action-benchmark's custom JSON for `customBiggerIsBetter`: per
    /// route its successful requests per second, `range` the interval's
    /// half-width, `extra` the interval and p99.
    GithubBenchmark,
    /// JUnit XML: one test case per change, failed when it is a regression
    /// beyond the threshold ([`Judged::regression`]), skipped when it is not
    /// judged.
    Junit,
}

impl Format {
    /// Every format, in the order the files are written.
    pub const ALL: [Self; 3] = [Self::Bmf, Self::GithubBenchmark, Self::Junit];

    /// The command-line flag that asks for it, as the user typed it (so an
    /// error names it).
    pub fn flag(self) -> &'static str {
        match self {
            Self::Bmf => "--bmf",
            Self::GithubBenchmark => "--github-benchmark",
            Self::Junit => "--junit",
        }
    }

    /// The file's text, without the final newline: `tracked` and `judged`
    /// of a command named `suite` (the JUnit test suite), whose JUnit test
    /// cases fail beyond `threshold_percent`.
    ///
    /// # Errors
    /// When the JSON or XML cannot be written.
    pub fn render(
        self,
        suite: &str,
        tracked: &[Tracked],
        judged: &[Judged],
        threshold_percent: f64,
    ) -> anyhow::Result<String> {
        Ok(match self {
            Self::Bmf => serde_json::to_string_pretty(&bmf::bmf(tracked, judged))?,
            Self::GithubBenchmark => serde_json::to_string_pretty(&github_benchmark::github_benchmark(tracked))?,
            Self::Junit => junit::junit(suite, judged, threshold_percent)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::fixtures::{results, run};

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
        let per_s = tracked[0].measures[0].value;
        assert_eq!(tracked[0].measures[0].key, "throughput");
        assert!((per_s.0 - 2000.0).abs() < 1e-6, "{tracked:?}");
        let (low, high) = per_s.1.unwrap();
        assert!(low < 1000.0 && high > 4000.0, "two rounds, t(1) = 12.7: {low} … {high}");
    }

    /// A delta whose rate held while its p99 rose beyond the threshold: the
    /// percentile is gated, and every format judges the same list the exit
    /// codes read (JUnit fails it; BMF carries it).
    #[test]
    fn a_latency_that_rose_at_a_fixed_load_is_gated_as_the_rate_is_and_junit_fails_it() {
        use crate::analysis::Verdict;
        use crate::results::LatencyDelta;
        let f = Framework::Axum;
        let runs = (1..=3)
            .flat_map(|round| {
                [
                    run(f, "state", "fat", round, 1000, true),
                    run(f, "state", "arc", round, 1000 + u64::from(round), true),
                ]
            })
            .collect();
        let mut r = results(runs);
        assert_eq!(r.deltas.len(), 1, "{:?}", r.deltas);
        let change = |percent: f64, verdict| Change {
            change_percent: percent,
            ci_low_percent: Some(percent - 1.0),
            ci_high_percent: Some(percent + 1.0),
            verdict,
        };
        r.deltas[0].latency = vec![
            LatencyDelta {
                percentile: "p50".to_owned(),
                before_us: 100.0,
                after_us: 101.0,
                blocks: 8,
                change: change(1.0, Verdict::Slower),
            },
            LatencyDelta {
                percentile: "p99".to_owned(),
                before_us: 100.0,
                after_us: 130.0,
                blocks: 8,
                change: change(30.0, Verdict::Slower),
            },
        ];
        let judged = judged_deltas(&r);
        let names: Vec<&str> = gated(&judged, 2.0).iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["axum /state/fat → /state/arc p99"], "p50 rose within the threshold: {judged:?}");
        let xml = Format::Junit.render("suite", &tracked(&r), &judged, 2.0).unwrap();
        assert_eq!(xml.matches("<failure").count(), 1, "{xml}");
        assert!(xml.contains("axum /state/fat → /state/arc p99"), "{xml}");
        assert_eq!(
            regression_lines(&gated(&judged, 2.0)),
            "REGRESSION: axum /state/fat → /state/arc p99 +30.0 % [+29.0 … +31.0]\n"
        );
    }
}
