//! The frameworks head to head (the `frameworks` scenario): for every route
//! and pair of frameworks, the ratio of their server CPU per successful
//! request and of their successful requests per second, paired within each
//! round (the servers ran side by side, loaded in turn in one alternation),
//! with a 95 % interval over the rounds (each round new processes), and the
//! standing the CPU ratio's interval supports: one costs more, they tie
//! within a margin, or it is unresolved. Two sessions' standings are then
//! held against each other ([`confirmed`]): a standing only stands where
//! both sessions give it.

use serde::{Deserialize, Serialize};

use super::RunRecord;
use super::deltas::{block_ratios, blocks_change};
use crate::analysis::{self, Change};
use crate::model::{Framework, Scenario};

/// The margin within which two frameworks tie unless told otherwise,
/// percent: a ratio whose whole interval lies in [1/1.05, 1.05].
pub const TIE_MARGIN_PERCENT: f64 = 5.0;

/// A ratio with its 95 % interval (`None` bounds: too few rounds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// The estimate (geometric mean over rounds).
    pub ratio: f64,
    /// Lower bound of the 95 % interval.
    pub low: Option<f64>,
    /// Upper bound of the 95 % interval.
    pub high: Option<f64>,
}

impl Ratio {
    /// The ratio of a change (1 + percent / 100 at every bound).
    fn of(change: &Change) -> Self {
        let r = |p: f64| 1.0 + p / 100.0;
        Self { ratio: r(change.change_percent), low: change.ci_low_percent.map(r), high: change.ci_high_percent.map(r) }
    }

    /// The same ratio the other way round (`b / a` of `a / b`).
    pub fn inverse(self) -> Self {
        Self { ratio: 1.0 / self.ratio, low: self.high.map(|h| 1.0 / h), high: self.low.map(|l| 1.0 / l) }
    }

    /// The standing this interval supports with a tie margin of `margin_percent`.
    pub fn standing(self, margin_percent: f64) -> Standing {
        let (Some(low), Some(high)) = (self.low, self.high) else { return Standing::TooFewRounds };
        let bound = 1.0 + margin_percent / 100.0;
        if low >= 1.0 / bound && high <= bound {
            Standing::Tie
        } else if low > 1.0 {
            Standing::Costlier
        } else if high < 1.0 {
            Standing::Cheaper
        } else {
            Standing::Unresolved
        }
    }
}

/// What the interval of one framework's CPU per request over another's says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// The whole interval above 1 (and not inside the tie margin): it costs more.
    Costlier,
    /// The whole interval below 1 (and not inside the tie margin): it costs less.
    Cheaper,
    /// The whole interval inside the tie margin.
    Tie,
    /// The interval holds 1 and reaches past the margin.
    Unresolved,
    /// Fewer than two rounds: no interval.
    TooFewRounds,
}

impl Standing {
    /// The standing of the other framework of the pair.
    pub fn reversed(self) -> Self {
        match self {
            Self::Costlier => Self::Cheaper,
            Self::Cheaper => Self::Costlier,
            other => other,
        }
    }
}

/// One pair of frameworks on one route, head to head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rival {
    /// The route both served.
    pub route: String,
    /// The framework whose figures are the numerators.
    pub framework: Framework,
    /// The framework whose figures are the denominators.
    pub against: Framework,
    /// Rounds in which both were measured (the interval's units).
    pub rounds: u32,
    /// `framework`'s server CPU per successful request over `against`'s.
    pub cpu_ratio: Ratio,
    /// `framework`'s successful requests per second over `against`'s.
    pub rate_ratio: Ratio,
    /// The tie margin the standing was judged with, percent.
    pub tie_margin_percent: f64,
    /// What `cpu_ratio`'s interval says of `framework` against `against`.
    pub standing: Standing,
}

/// The head-to-head ratios of every route and pair of frameworks in `runs`
/// (those of the `frameworks` scenario), the frameworks in their order
/// ([`Framework`]'s), routes as first measured. Per round, the CPU ratio is
/// the two runs' µs of server CPU per successful request, and its interval
/// the Student-t one of the mean log ratio over the rounds
/// ([`analysis::paired_change`]); the rate ratio is paired by blocks of
/// slices, its interval over the rounds' processes, as every delta's.
pub fn rivals(runs: &[RunRecord], tie_margin_percent: f64) -> Vec<Rival> {
    let ours: Vec<&RunRecord> = runs.iter().filter(|r| r.scenario == Scenario::Frameworks).collect();
    let mut routes: Vec<&str> = Vec::new();
    for r in &ours {
        if !routes.contains(&r.route.as_str()) {
            routes.push(&r.route);
        }
    }
    let mut frameworks: Vec<Framework> = ours.iter().map(|r| r.framework).collect();
    frameworks.sort();
    frameworks.dedup();
    let mut out = Vec::new();
    for route in routes {
        for (i, &framework) in frameworks.iter().enumerate() {
            for &against in &frameworks[i + 1..] {
                let of = |f: Framework, round: u32| {
                    ours.iter().copied().find(|r| r.route == route && r.framework == f && r.round == round)
                };
                let pairs: Vec<(&RunRecord, &RunRecord)> = ours
                    .iter()
                    .copied()
                    .filter(|r| r.route == route && r.framework == against)
                    .filter_map(|b| Some((b, of(framework, b.round)?)))
                    .filter(|(b, a)| b.figures.usable() && a.figures.usable())
                    .collect();
                if pairs.is_empty() {
                    continue;
                }
                let cost = |r: &RunRecord| super::cost_us(&r.figures, r.figures.server_cpus.unwrap_or(1));
                let (against_costs, costs): (Vec<f64>, Vec<f64>) =
                    pairs.iter().filter_map(|(b, a)| Some((cost(b)?, cost(a)?))).unzip();
                let cpu_ratio = Ratio::of(&analysis::paired_change(&against_costs, &costs));
                let blocks: Vec<Vec<f64>> = pairs.iter().map(|(b, a)| block_ratios(b, a)).collect();
                let rate_ratio = Ratio::of(&blocks_change(&blocks, true));
                out.push(Rival {
                    route: route.to_owned(),
                    framework,
                    against,
                    rounds: u32::try_from(pairs.len()).unwrap_or(u32::MAX),
                    cpu_ratio,
                    rate_ratio,
                    tie_margin_percent,
                    standing: cpu_ratio.standing(tie_margin_percent),
                });
            }
        }
    }
    out
}

/// A pair's standing held against a second session's.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmed {
    /// The first session's pair.
    pub first: Rival,
    /// The same pair on the same route in the second session, if measured.
    pub second: Option<Rival>,
}

impl Confirmed {
    /// The standing both sessions give, else `None`: unresolved on this machine.
    pub fn standing(&self) -> Option<Standing> {
        let second = self.second.as_ref()?;
        (second.standing == self.first.standing && second.standing != Standing::TooFewRounds)
            .then_some(self.first.standing)
    }
}

/// Every pair of `first` with the same pair of `second` (same route,
/// same two frameworks, either way round: a pair measured the other way is
/// turned to match).
pub fn confirmed(first: &[Rival], second: &[Rival]) -> Vec<Confirmed> {
    first
        .iter()
        .map(|a| {
            let second = second.iter().find_map(|b| {
                if b.route != a.route {
                    None
                } else if (b.framework, b.against) == (a.framework, a.against) {
                    Some(b.clone())
                } else if (b.framework, b.against) == (a.against, a.framework) {
                    Some(Rival {
                        framework: b.against,
                        against: b.framework,
                        cpu_ratio: b.cpu_ratio.inverse(),
                        rate_ratio: b.rate_ratio.inverse(),
                        standing: b.standing.reversed(),
                        ..b.clone()
                    })
                } else {
                    None
                }
            });
            Confirmed { first: a.clone(), second }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::run;

    /// A run of the frameworks scenario: `successful` over 3 s at `cpu_percent`.
    fn rival_run(framework: Framework, route: &str, round: u32, successful: u64, cpu_percent: f64) -> RunRecord {
        let mut r = run(framework, "frameworks", "plaintext", round, successful, true);
        r.route = route.to_owned();
        r.figures.server_cpu_percent = Some(cpu_percent);
        r.figures.server_cpus = Some(1);
        r
    }

    #[test]
    fn every_pair_of_every_route_gets_its_cpu_and_rate_ratios_paired_by_round() {
        let mut runs = Vec::new();
        // Round by round the machine's speed moves every framework alike; Rocket costs 2× axum's
        // CPU per request and does half its rate, actix costs 1.01× to 1.03× axum's.
        for (round, speed) in [(1, 1.0), (2, 0.8), (3, 1.1), (4, 0.9), (5, 1.05), (6, 0.95)] {
            let axum = (90_000.0 * speed) as u64;
            runs.push(rival_run(Framework::Axum, "/plaintext", round, axum, 100.0));
            runs.push(rival_run(Framework::Rocket, "/plaintext", round, axum / 2, 100.0));
            let actix = (axum as f64 / (1.01 + 0.004 * f64::from(round))) as u64;
            runs.push(rival_run(Framework::Actix, "/plaintext", round, actix, 100.0));
        }
        // Runs of another scenario are not head to head.
        runs.push(run(Framework::Axum, "floor", "plaintext", 1, 1, true));
        let all = rivals(&runs, TIE_MARGIN_PERCENT);
        let pairs: Vec<(Framework, Framework)> = all.iter().map(|r| (r.framework, r.against)).collect();
        assert_eq!(
            pairs,
            [
                (Framework::Actix, Framework::Axum),
                (Framework::Actix, Framework::Rocket),
                (Framework::Axum, Framework::Rocket)
            ]
        );
        let rocket = &all[2];
        assert_eq!((rocket.route.as_str(), rocket.rounds), ("/plaintext", 6));
        assert!((rocket.cpu_ratio.ratio - 0.5).abs() < 1e-3, "axum costs half Rocket's: {rocket:?}");
        assert_eq!(rocket.standing, Standing::Cheaper);
        let actix = &all[0];
        assert!(actix.cpu_ratio.ratio > 1.01 && actix.cpu_ratio.ratio < 1.03, "{actix:?}");
        assert_eq!(actix.standing, Standing::Tie, "inside ±5 %: {actix:?}");
        assert_eq!(rivals(&runs, 1.0)[0].standing, Standing::Costlier, "outside ±1 %, above 1");
    }

    #[test]
    fn a_standing_holds_where_both_sessions_give_it_and_a_pair_turned_round_matches() {
        let pair = crate::results::fixtures::plaintext_pair;
        let first = [
            pair(Framework::Axum, Framework::Rocket, 0.5, 0.45, 0.55),
            pair(Framework::Actix, Framework::Axum, 1.04, 1.01, 1.07),
        ];
        let second = [
            pair(Framework::Rocket, Framework::Axum, 2.1, 1.9, 2.3),
            pair(Framework::Actix, Framework::Axum, 0.99, 0.97, 1.02),
        ];
        assert_eq!(first[0].standing, Standing::Cheaper);
        assert_eq!(second[0].standing, Standing::Costlier);
        let both = confirmed(&first, &second);
        assert_eq!(both[0].standing(), Some(Standing::Cheaper), "Rocket costlier is axum cheaper");
        let turned = both[0].second.as_ref().unwrap();
        assert!((turned.cpu_ratio.ratio - 1.0 / 2.1).abs() < 1e-12);
        assert_eq!(turned.cpu_ratio.low, Some(1.0 / 2.3));
        assert_eq!((first[1].standing, second[1].standing), (Standing::Costlier, Standing::Tie));
        assert_eq!(both[1].standing(), None, "costlier once, a tie once: unresolved on this machine");
        assert_eq!(confirmed(&first, &[])[0].standing(), None, "not measured again");
    }
}
