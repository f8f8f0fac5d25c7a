//! Paired deltas: a scenario's changed variant against its baseline on the
//! same server. Pairing by rounds: one pair per round (the two runs back to
//! back), the Student-t interval of the mean log ratio. Pairing by slices:
//! one pair per block of alternating slices (each variant has two slices in
//! a block, placed symmetrically so a linear drift cancels), many pairs per
//! round, and the robust interval of [`analysis::robust_paired_change`].

use super::{Delta, RunRecord};
use crate::analysis::{self, Change, median};
use crate::model::{Framework, Pairing, Scenario};

/// Slices of one variant in each block of an alternation.
const SLICES_PER_BLOCK: usize = 2;

/// Per block, the ratio after / before of the successful requests in the
/// two variants' slices of that block (`windows` are each variant's own
/// slices, in order).
pub(super) fn block_ratios(before: &RunRecord, after: &RunRecord) -> Vec<f64> {
    let sums = |r: &RunRecord| -> Vec<u64> {
        r.figures.windows.chunks_exact(SLICES_PER_BLOCK).map(|c| c.iter().sum()).collect()
    };
    sums(before).iter().zip(sums(after)).filter(|(b, _)| **b > 0).map(|(b, a)| a as f64 / *b as f64).collect()
}

/// The change over `blocks` (per round, the ratios after / before of its
/// blocks of slices), with the interval a delta gets: over the rounds when
/// each round ran new server processes, since a process's layout moves all
/// its blocks alike ([`analysis::across_processes_change`], as `ab`), else
/// over the blocks ([`analysis::robust_paired_change`]). The one place that
/// decides, for the rate and for each latency percentile alike.
pub(super) fn blocks_change(blocks: &[Vec<f64>], processes: bool) -> Change {
    if processes { analysis::across_processes_change(blocks) } else { analysis::robust_paired_change(blocks) }
}

/// The delta of `pairs` (baseline run, changed run) of one framework:
/// medians, spreads and p99s of the runs, and `change` with the per-pair
/// changes it came from (percent).
fn delta_of(
    framework: Framework,
    scenario: Scenario,
    from: &str,
    to: &str,
    pairs: &[(&RunRecord, &RunRecord)],
    change: Change,
    per_pair: &[f64],
) -> Delta {
    let before_counts: Vec<f64> = pairs.iter().map(|p| p.0.figures.successful as f64).collect();
    let after_counts: Vec<f64> = pairs.iter().map(|p| p.1.figures.successful as f64).collect();
    let p99 = |runs: &mut dyn Iterator<Item = &RunRecord>| {
        median(&runs.filter_map(|r| r.figures.latency_us.map(|l| l.p99 as f64)).collect::<Vec<_>>())
    };
    let cost = |f: &crate::measure::RunFigures| super::cost_us(f, f.server_cpus.unwrap_or(1));
    let saved: Vec<f64> = pairs
        .iter()
        .filter(|(b, a)| b.figures.server_cpu_percent.is_some() && a.figures.server_cpu_percent.is_some())
        .filter_map(|(b, a)| Some(cost(&b.figures)? - cost(&a.figures)?))
        .filter(|s| s.is_finite())
        .collect();
    let (saved_us, saved_ci_us) = match analysis::mean_interval(&saved) {
        Some((mean, interval)) => (Some(mean), interval),
        None => (None, None),
    };
    Delta {
        framework,
        scenario,
        from: from.to_owned(),
        variants: Some((pairs[0].0.variant, pairs[0].1.variant)),
        to: to.to_owned(),
        layers: pairs[0].1.layers,
        rounds: u32::try_from(pairs.len()).unwrap_or(u32::MAX),
        pairs: u32::try_from(per_pair.len()).unwrap_or(u32::MAX),
        before_successful: median(&before_counts),
        after_successful: median(&after_counts),
        before_per_s: median(&pairs.iter().filter_map(|p| p.0.figures.requests_per_s).collect::<Vec<_>>()),
        after_per_s: median(&pairs.iter().filter_map(|p| p.1.figures.requests_per_s).collect::<Vec<_>>()),
        change,
        change_min_percent: per_pair.iter().copied().fold(f64::INFINITY, f64::min),
        change_max_percent: per_pair.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        before_cv_percent: analysis::cv_percent(&before_counts),
        after_cv_percent: analysis::cv_percent(&after_counts),
        before_p99_us: p99(&mut pairs.iter().map(|p| p.0)),
        after_p99_us: p99(&mut pairs.iter().map(|p| p.1)),
        target_reached: None,
        saved_us,
        saved_ci_us,
        latency: Vec::new(),
        counted: None,
    }
}

/// What a suite's deltas are computed over: how its variants were paired,
/// and whether every round ran on a new server process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Over {
    /// By rounds (one pair per round) or by slices (a pair per block).
    pub pairing: Pairing,
    /// Each round a new process: paired by slices, the rounds are then the
    /// units of the interval, as in `ab` ([`analysis::across_processes_change`]).
    pub processes: bool,
}

/// The paired deltas of every framework, layer count and scenario measured
/// in `runs`, paired as `over` says: for each round with both variants,
/// the baseline and the changed run (or the blocks of their slices).
pub fn deltas(
    runs: &[RunRecord],
    frameworks: &[Framework],
    scenarios: &[Scenario],
    layers: &[u16],
    over: Over,
) -> Vec<Delta> {
    let mut out = Vec::new();
    for (&framework, &layers) in frameworks.iter().flat_map(|f| layers.iter().map(move |l| (f, l))) {
        for (scenario, (before, after)) in scenarios.iter().flat_map(|&s| s.pairs().into_iter().map(move |p| (s, p))) {
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
            let (change, per_pair) = match over.pairing {
                Pairing::Rounds => {
                    let before: Vec<f64> = pairs.iter().map(|p| p.0.figures.successful as f64).collect();
                    let after: Vec<f64> = pairs.iter().map(|p| p.1.figures.successful as f64).collect();
                    let per_round: Vec<f64> = before.iter().zip(&after).map(|(b, a)| (a / b - 1.0) * 100.0).collect();
                    (analysis::paired_change(&before, &after), per_round)
                }
                Pairing::Slices => {
                    let blocks: Vec<Vec<f64>> = pairs.iter().map(|(b, a)| block_ratios(b, a)).collect();
                    let per_block: Vec<f64> = blocks.iter().flatten().map(|r| (r - 1.0) * 100.0).collect();
                    (blocks_change(&blocks, over.processes), per_block)
                }
            };
            let delta = delta_of(framework, scenario, before.label(), after.label(), &pairs, change, &per_pair);
            out.push(Delta { latency: super::latency_deltas(&pairs, over.processes), ..delta });
        }
    }
    out
}

/// The paired deltas of `ab`: per framework and variant, the AFTER server
/// against the BEFORE server, one pair per block of slices of every round;
/// each round ran new processes, so the interval also spans the rounds'
/// spread ([`analysis::across_processes_change`]).
pub fn ab_deltas(runs: &[RunRecord], frameworks: &[Framework], routes: &[&str]) -> Vec<Delta> {
    let mut out = Vec::new();
    for &framework in frameworks {
        for &route in routes {
            let of = |side: Scenario| {
                move |r: &&RunRecord| r.framework == framework && r.route == route && r.scenario == side
            };
            let pairs: Vec<(&RunRecord, &RunRecord)> = runs
                .iter()
                .filter(of(Scenario::Before))
                .filter_map(|b| runs.iter().filter(of(Scenario::After)).find(|a| a.round == b.round).map(|a| (b, a)))
                .filter(|(b, a)| b.figures.usable() && a.figures.usable())
                .collect();
            if pairs.is_empty() {
                continue;
            }
            let blocks: Vec<Vec<f64>> = pairs.iter().map(|(b, a)| block_ratios(b, a)).collect();
            let per_block: Vec<f64> = blocks.iter().flatten().map(|r| (r - 1.0) * 100.0).collect();
            let change = blocks_change(&blocks, true);
            let delta = delta_of(framework, Scenario::After, route, route, &pairs, change, &per_block);
            out.push(Delta { latency: super::latency_deltas(&pairs, true), ..delta });
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
        let d = deltas(&runs, &[f], &[Scenario::Payload], &[10], ROUNDS);
        assert_eq!(d.len(), 2, "preserialized and cached, each from per_request");
        let pre = d.iter().find(|d| d.to == "/api/devices/preserialized").unwrap();
        assert_eq!(pre.rounds, 3);
        assert!((pre.change.change_percent - 10.0).abs() < 1e-9, "{pre:?}");
        assert_eq!(pre.change.verdict, crate::analysis::Verdict::Faster);
        assert_eq!(pre.before_successful, 1500.0);
        let cached = d.iter().find(|d| d.to == "/api/devices/cached").unwrap();
        assert_eq!(cached.change.change_percent, 0.0);
        assert_eq!(cached.rounds, 3, "round 4 had no cached run");
        assert_eq!((pre.pairs, cached.pairs), (3, 3), "one pair per round");
        assert!((pre.change_min_percent - 10.0).abs() < 0.01 && (pre.change_max_percent - 10.0).abs() < 0.01);
        // One CPU 100 % busy: a run of n successful requests in 1 s costs 10⁶/n µs each; the change
        // saves 10⁶/b − 10⁶/(1.1 b) per round, and round 4 (unusable) is left out.
        let per_round: Vec<f64> = [1000.0, 2000.0, 1500.0].iter().map(|b: &f64| 1e6 / b - 1e6 / (b * 1.1)).collect();
        let mean = per_round.iter().sum::<f64>() / 3.0;
        let saved = pre.saved_us.unwrap();
        assert!((saved - mean).abs() < 0.01, "{saved} µs, expected {mean}");
        let (low, high) = pre.saved_ci_us.unwrap();
        assert!(
            low < 45.5 && high > 90.9 && ((low + high) / 2.0 - mean).abs() < 1e-6,
            "t(2) interval about the mean: {low} … {high}"
        );
        assert_eq!(cached.saved_us, Some(0.0), "the same cost");
    }

    /// A run of `variant` in `round` whose own slices hold `slices`.
    fn sliced(scenario: &str, variant: &str, round: u32, slices: &[u64]) -> RunRecord {
        let mut r = run(Framework::Axum, scenario, variant, round, 1, true);
        r.figures.windows = slices.to_vec();
        r.figures.successful = slices.iter().sum();
        r
    }

    #[test]
    fn slices_pair_each_block_of_two_own_slices() {
        let mut runs = Vec::new();
        for round in 1..=3 {
            // Two blocks a round: after/before = 1.10 in the first, 1.21 in the second;
            // a third block whose baseline slices are empty is left out.
            runs.push(sliced("state", "fat", round, &[50, 50, 60, 40, 0, 0]));
            runs.push(sliced("state", "arc", round, &[60, 50, 70, 51, 5, 5]));
        }
        let d = deltas(&runs, &[Framework::Axum], &[Scenario::State], &[10], SLICES_ONE_PROCESS);
        assert_eq!(d.len(), 1);
        let d = &d[0];
        assert_eq!((d.rounds, d.pairs), (3, 6), "{d:?}");
        assert!((d.change_min_percent - 10.0).abs() < 1e-9 && (d.change_max_percent - 21.0).abs() < 1e-9, "{d:?}");
        // Hodges–Lehmann of three 1.10 and three 1.21: the middle, √(1.10 × 1.21).
        assert!((d.change.change_percent - ((1.1f64 * 1.21).sqrt() - 1.0) * 100.0).abs() < 1e-9, "{d:?}");
        assert_eq!(d.change.verdict, crate::analysis::Verdict::Faster);
        assert_eq!(d.before_successful, 200.0);
        assert_eq!((d.from.as_str(), d.to.as_str()), ("/state/fat", "/state/arc"));
        // Rounds pairing of the same runs: one ratio per round, 241 / 200.
        let r = deltas(&runs, &[Framework::Axum], &[Scenario::State], &[10], ROUNDS);
        assert!((r[0].change.change_percent - 20.5).abs() < 1e-9, "{:?}", r[0]);
    }

    const ROUNDS: Over = Over { pairing: Pairing::Rounds, processes: false };
    const SLICES_ONE_PROCESS: Over = Over { pairing: Pairing::Slices, processes: false };

    #[test]
    fn with_a_process_per_round_the_interval_spans_the_rounds_as_in_ab() {
        // Blocks agree within each round, rounds disagree (each its own process layout).
        let mut runs = Vec::new();
        for (round, after) in [(1, 110), (2, 102), (3, 115), (4, 105)] {
            runs.push(sliced("state", "fat", round, &[100, 100, 100, 100]));
            runs.push(sliced("state", "arc", round, &[after, after, after, after]));
        }
        let of = |processes| {
            let over = Over { pairing: Pairing::Slices, processes };
            deltas(&runs, &[Framework::Axum], &[Scenario::State], &[10], over).remove(0).change
        };
        let (pooled, across) = (of(false), of(true));
        let blocks: Vec<Vec<f64>> = [1.10, 1.02, 1.15, 1.05].iter().map(|r| vec![*r, *r]).collect();
        assert_eq!(across, analysis::across_processes_change(&blocks), "the analysis of ab");
        assert_eq!(pooled, analysis::robust_paired_change(&blocks));
        assert_eq!(across.change_percent, pooled.change_percent, "the same estimate");
        let (low, high) = (across.ci_low_percent.unwrap(), across.ci_high_percent.unwrap());
        assert!(
            low < pooled.ci_low_percent.unwrap() && high > pooled.ci_high_percent.unwrap(),
            "{across:?} {pooled:?}"
        );
    }

    #[test]
    fn ab_pairs_after_against_before_per_route_and_round_only() {
        let mut runs = Vec::new();
        for round in 1..=4 {
            // Each round its own level, AFTER 2 % then 4 % below BEFORE in its blocks.
            let level = 100 * u64::from(round);
            runs.push(sliced("before", "arc", round, &[level, level, level, level]));
            runs.push(sliced(
                "after",
                "arc",
                round,
                &[level * 98 / 100, level * 98 / 100, level * 96 / 100, level * 96 / 100],
            ));
            // Another route must not mix in.
            runs.push(sliced("before", "fat", round, &[100, 100, 100, 100]));
            runs.push(sliced("after", "fat", round, &[200, 200, 200, 200]));
        }
        runs.push(sliced("after", "arc", 5, &[1, 1, 1, 1]));
        // Another framework's runs must not mix in either.
        let mut actix = sliced("after", "arc", 1, &[1, 1, 1, 1]);
        actix.framework = Framework::Actix;
        runs.push(actix);
        // A cut-short run on either side leaves its round out.
        for (round, cut_side, other) in [(6, "before", "after"), (7, "after", "before")] {
            let mut cut = sliced(cut_side, "fat", round, &[100, 100, 100, 100]);
            cut.figures.complete = false;
            runs.push(cut);
            runs.push(sliced(other, "fat", round, &[1, 1, 1, 1]));
        }
        let d = ab_deltas(&runs, &[Framework::Axum, Framework::Actix], &["/state/arc", "/state/fat"]);
        assert_eq!(d.len(), 2, "one per framework with runs on both sides and route: {d:?}");
        let arc = &d[0];
        assert_eq!(arc.framework, Framework::Axum);
        assert_eq!((arc.to.as_str(), arc.scenario, arc.rounds, arc.pairs), ("/state/arc", Scenario::After, 4, 8));
        assert!((arc.change_min_percent + 4.0).abs() < 1e-9 && (arc.change_max_percent + 2.0).abs() < 1e-9, "{arc:?}");
        assert!((arc.change.change_percent + 3.0).abs() < 0.05, "{arc:?}");
        assert_eq!(arc.change.verdict, crate::analysis::Verdict::Slower);
        assert_eq!((d[1].framework, d[1].to.as_str(), d[1].rounds), (Framework::Axum, "/state/fat", 4), "{:?}", d[1]);
        assert!((d[1].change.change_percent - 100.0).abs() < 1e-9);
    }
}
