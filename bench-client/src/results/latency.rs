//! Latency deltas of an open-loop alternation (`--load-percent`): per
//! percentile, the change from the baseline to the changed variant, paired
//! block by block as the rate's change is, with the same interval (over the
//! blocks, and over the rounds when each round ran new processes). Lower
//! latency is better, so an interval above zero is called slower.

use serde::{Deserialize, Serialize};

use super::RunRecord;
use crate::analysis::{Change, Verdict, median};
use crate::measure::{BLOCK_PERCENTILES, BlockLatency};

/// The change of one latency percentile between two variants at one
/// offered rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyDelta {
    /// `p50`, `p90`, `p99` or `p99.9`.
    pub percentile: String,
    /// The baseline's percentile, µs: the median over the blocks compared.
    pub before_us: f64,
    /// The changed variant's, µs.
    pub after_us: f64,
    /// Blocks compared: those in which both variants had enough requests
    /// for this percentile (`measure::BLOCK_PERCENTILES`).
    pub blocks: u32,
    /// The change of the percentile, percent (above zero: higher latency),
    /// its 95 % interval, and the verdict (`slower` when the whole interval
    /// is above zero): `change_percent`, `ci_low_percent`,
    /// `ci_high_percent`, `verdict`, as a delta's.
    #[serde(flatten)]
    pub change: Change,
}

/// The latency deltas of `pairs` (baseline run, changed run, one pair per
/// round), per percentile with a block in common; `processes`: each round
/// ran new server processes. Empty when the runs kept no latency per block.
pub fn latency_deltas(pairs: &[(&RunRecord, &RunRecord)], processes: bool) -> Vec<LatencyDelta> {
    let mut out = Vec::new();
    for (name, ..) in BLOCK_PERCENTILES {
        let blocks_of = |b: &RunRecord, a: &RunRecord| -> Vec<(f64, f64)> {
            (b.figures.block_latency_us.iter().zip(&a.figures.block_latency_us))
                .filter_map(|(b, a): (&BlockLatency, &BlockLatency)| Some((b.get(name)? as f64, a.get(name)? as f64)))
                .collect()
        };
        let per_round: Vec<Vec<(f64, f64)>> = pairs.iter().map(|(b, a)| blocks_of(b, a)).collect();
        let all: Vec<(f64, f64)> = per_round.iter().flatten().copied().collect();
        if all.is_empty() {
            continue;
        }
        out.push(LatencyDelta {
            percentile: name.to_owned(),
            before_us: median(&all.iter().map(|p| p.0).collect::<Vec<_>>()),
            after_us: median(&all.iter().map(|p| p.1).collect::<Vec<_>>()),
            blocks: u32::try_from(all.len()).unwrap_or(u32::MAX),
            change: percentile_change(&per_round, processes),
        });
    }
    out
}

/// The change of a percentile over `per_round` pairs (baseline, changed) of
/// block percentiles, with the throughput's interval (the one choice of
/// [`super::deltas::blocks_change`]); the verdict for latency.
fn percentile_change(per_round: &[Vec<(f64, f64)>], processes: bool) -> Change {
    let ratios: Vec<Vec<f64>> = per_round.iter().map(|r| r.iter().map(|(b, a)| a / b).collect()).collect();
    let change = super::deltas::blocks_change(&ratios, processes);
    Change { verdict: lower_is_better(change.verdict), ..change }
}

/// A verdict on a change of latency: higher is slower.
fn lower_is_better(verdict: Verdict) -> Verdict {
    match verdict {
        Verdict::Faster => Verdict::Slower,
        Verdict::Slower => Verdict::Faster,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;
    use rand_distr::{Beta, Distribution, Normal};
    use statrs::distribution::ContinuousCDF;

    use super::*;

    /// The share of `sims` sessions of `rounds` rounds (a new pair of
    /// processes each, their own layout effect of 1 % SD) of 6 blocks (a
    /// drift of 5 % SD shared by both sides of a block) whose interval for
    /// p99 covers the true change: every latency of the changed variant is
    /// 1.2 × the baseline's, so every percentile is +20 %. Each block's p99
    /// is that of 1,000 log-normal latencies (median 100 µs, a heavy tail),
    /// drawn exactly as their 990th order statistic: the quantile of a
    /// Beta(990, 11) draw, so the percentile's own sampling noise is in.
    fn p99_coverage(rounds: usize, sims: usize, seed: u64) -> f64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let process = Normal::new(0.0, 0.01).unwrap();
        let drift = Normal::new(0.0, 0.05).unwrap();
        let order = Beta::new(990.0, 11.0).unwrap();
        let standard = statrs::distribution::Normal::standard();
        let p99 =
            |scale: f64, rng: &mut StdRng| (100f64.ln() + 0.5 * standard.inverse_cdf(order.sample(rng))).exp() * scale;
        let covered = (0..sims)
            .filter(|_| {
                let per_round: Vec<Vec<(f64, f64)>> = (0..rounds)
                    .map(|_| {
                        let (b, a) = (process.sample(&mut rng), process.sample(&mut rng));
                        (0..6)
                            .map(|_| {
                                let m: f64 = drift.sample(&mut rng);
                                (p99((m + b).exp(), &mut rng), p99((m + a).exp() * 1.2, &mut rng))
                            })
                            .collect()
                    })
                    .collect();
                let c = percentile_change(&per_round, true);
                c.ci_low_percent.unwrap() <= 20.0 && 20.0 <= c.ci_high_percent.unwrap()
            })
            .count();
        covered as f64 / sims as f64
    }

    #[test]
    fn the_p99_interval_covers_the_true_change_about_95_percent_of_the_time() {
        for (rounds, seed) in [(3, 11), (6, 12)] {
            let c = p99_coverage(rounds, 4000, seed);
            // The union with the blocks' interval makes it conservative: 0.986 at 3 rounds, 0.972 at 6.
            assert!((0.94..=0.99).contains(&c), "{rounds} rounds: coverage {c}");
        }
    }

    #[test]
    fn higher_latency_is_slower_and_the_blocks_without_enough_requests_are_left_out() {
        let up: Vec<Vec<(f64, f64)>> =
            (0..3).map(|r| (0..4).map(|b| (100.0 + f64::from(r * 4 + b), 150.0)).collect()).collect();
        let c = percentile_change(&up, true);
        assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
        assert!(c.change_percent > 30.0 && c.change_percent < 50.0, "{c:?}");
        let down: Vec<Vec<(f64, f64)>> = up.iter().map(|r| r.iter().map(|(b, a)| (*a, *b)).collect()).collect();
        assert_eq!(percentile_change(&down, true).verdict, Verdict::Faster);
        assert_eq!(percentile_change(&up[..1], true).verdict, Verdict::TooFewRounds, "one round of processes");
    }
}
