//! Paired deltas: in each round, a scenario's changed variant against its
//! baseline, measured back to back on the same server.

use super::{Delta, RunRecord};
use crate::analysis::{self, median};
use crate::model::{Framework, Scenario};

/// The paired deltas of every framework, layer count and scenario measured
/// in `runs`: for each round with both variants, the baseline and the
/// changed run.
pub fn deltas(runs: &[RunRecord], frameworks: &[Framework], scenarios: &[Scenario], layers: &[u16]) -> Vec<Delta> {
    let mut out = Vec::new();
    for (&framework, &layers) in frameworks.iter().flat_map(|f| layers.iter().map(move |l| (f, l))) {
        for (&scenario, &after) in scenarios.iter().flat_map(|s| s.variants().iter().skip(1).map(move |v| (s, v))) {
            let before = scenario.variants()[0];
            let of_scenario = |r: &&RunRecord| r.framework == framework && r.layers == layers && r.scenario == scenario;
            let pairs: Vec<(&RunRecord, &RunRecord)> = runs
                .iter()
                .filter(of_scenario)
                .filter(|r| r.variant == before)
                .filter_map(|b| {
                    runs.iter().filter(of_scenario).find(|a| a.round == b.round && a.variant == after).map(|a| (b, a))
                })
                .filter(|(b, a)| b.figures.usable() && a.figures.usable())
                .collect();
            if pairs.is_empty() {
                continue;
            }
            let before_counts: Vec<f64> = pairs.iter().map(|p| p.0.figures.successful as f64).collect();
            let after_counts: Vec<f64> = pairs.iter().map(|p| p.1.figures.successful as f64).collect();
            let per_round: Vec<f64> =
                before_counts.iter().zip(&after_counts).map(|(b, a)| (a / b - 1.0) * 100.0).collect();
            let p99 = |runs: &mut dyn Iterator<Item = &RunRecord>| {
                median(&runs.map(|r| r.figures.latency_us.p99 as f64).collect::<Vec<_>>())
            };
            out.push(Delta {
                framework,
                scenario,
                from: before.path().to_owned(),
                to: after.path().to_owned(),
                layers,
                rounds: u32::try_from(pairs.len()).unwrap_or(u32::MAX),
                before_successful: median(&before_counts),
                after_successful: median(&after_counts),
                change: analysis::paired_change(&before_counts, &after_counts),
                change_min_percent: per_round.iter().copied().fold(f64::INFINITY, f64::min),
                change_max_percent: per_round.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                before_cv_percent: analysis::cv_percent(&before_counts),
                after_cv_percent: analysis::cv_percent(&after_counts),
                before_p99_us: p99(&mut pairs.iter().map(|p| p.0)),
                after_p99_us: p99(&mut pairs.iter().map(|p| p.1)),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::fixtures::run;

    #[test]
    fn deltas_pair_by_round_one_per_changed_variant_and_skip_unusable_runs() {
        let f = Framework::Axum;
        let mut runs = Vec::new();
        for (round, base) in [(1, 1000), (2, 2000), (3, 1500)] {
            runs.push(run(f, "payload", "per_request", round, base, true));
            runs.push(run(f, "payload", "preserialized", round, base * 11 / 10, true));
            runs.push(run(f, "payload", "cached", round, base, true));
        }
        // An interrupted round-4 pair with an absurd ratio must not count.
        runs.push(run(f, "payload", "per_request", 4, 5000, true));
        runs.push(run(f, "payload", "preserialized", 4, 10, false));
        let d = deltas(&runs, &[f], &[Scenario::Payload], &[10]);
        assert_eq!(d.len(), 2, "preserialized and cached, each from per_request");
        let pre = d.iter().find(|d| d.to == "/api/devices/preserialized").unwrap();
        assert_eq!(pre.rounds, 3);
        assert!((pre.change.change_percent - 10.0).abs() < 1e-9, "{pre:?}");
        assert_eq!(pre.change.verdict, crate::analysis::Verdict::Faster);
        assert_eq!(pre.before_successful, 1500.0);
        let cached = d.iter().find(|d| d.to == "/api/devices/cached").unwrap();
        assert_eq!(cached.change.change_percent, 0.0);
        assert_eq!(cached.rounds, 3, "round 4 had no cached run");
    }
}
