//! Is a change real? Confidence intervals for a change in throughput, the
//! verdict they support, and the noise figures that qualify them.
//!
//! Throughput changes are ratios, so everything is computed on logarithms,
//! checked once in a `Sample` (positive, finite values; a spread only
//! from two). What each command uses (sources in `docs/METHODOLOGY.md`):
//! - `suite`, paired by slices (the default): [`robust_paired_change`], the
//!   Hodges–Lehmann estimate over the blocks with its signed-rank interval;
//! - `suite --pairing rounds`: [`paired_change`], a Student-t interval on
//!   the per-round log ratios;
//! - `ab`: [`across_processes_change`], the rounds (each a new pair of
//!   processes) as the units;
//! - `compare`: [`unpaired_change_across_sessions`] (Welch, widened by a
//!   session term) and [`session_sd_estimate`];
//! - what a regression is, for `ab`, `compare` and the CI files alike:
//!   [`Change::is_regression`];
//! - the report's noise figures: [`geometric_mean_interval`],
//!   [`cv_percent`], [`drifts`], and [`rounds_for`] for what a wide interval
//!   would need. The t quantile comes from `statrs`.

mod regression;

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

pub use self::regression::Better;

/// Confidence level of every interval, as a fraction.
pub const CONFIDENCE: f64 = 0.95;

/// The half-width, percentage points, to which the report holds every
/// delta's 95 % interval when no `--target-ci-points` is given: it names those
/// wider and the rounds they would need ([`rounds_for`]).
pub const RESOLUTION_POINTS: f64 = 1.0;

/// A run drifts when the mean of its last third of windows is this many
/// percent or more below the mean of its first third.
pub const DRIFT_PERCENT: f64 = 5.0;

/// What an interval says about a change in throughput.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The whole interval is above zero: more successful requests.
    Faster,
    /// The whole interval is below zero: fewer successful requests.
    Slower,
    /// The interval contains zero.
    NoSignificantChange,
    /// Fewer than two rounds on a side: no interval can be given.
    TooFewRounds,
}

impl Verdict {
    /// Words for tables.
    pub fn label(self) -> &'static str {
        match self {
            Self::Faster => "faster",
            Self::Slower => "slower",
            Self::NoSignificantChange => "no significant change",
            Self::TooFewRounds => "too few rounds",
        }
    }
}

/// A change in percent with its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Point estimate, percent (geometric mean of the ratios, minus one).
    pub change_percent: f64,
    /// Lower bound of the 95 % interval, percent; `None` with too few rounds.
    pub ci_low_percent: Option<f64>,
    /// Upper bound of the 95 % interval, percent.
    pub ci_high_percent: Option<f64>,
    /// What the interval says.
    pub verdict: Verdict,
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Sample variance (n − 1 in the denominator); needs two values.
fn variance(v: &[f64]) -> f64 {
    let m = mean(v);
    v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0)
}

/// Values checked once, at construction, as criterion's `Sample` does: the
/// natural logarithms of the positive, finite values given ([`Sample::logs`],
/// what every interval of a ratio is computed on), or the finite values
/// themselves ([`Sample::finite`], for differences such as µs saved). It
/// says itself whether it holds enough values for a spread.
#[derive(Debug, Clone)]
struct Sample(Vec<f64>);

impl Sample {
    /// The finite `values` (the others left out).
    fn finite(values: &[f64]) -> Self {
        Self(values.iter().copied().filter(|x| x.is_finite()).collect())
    }

    /// The logs of the positive, finite `values`.
    fn logs(values: &[f64]) -> Self {
        Self(values.iter().filter(|x| x.is_finite() && **x > 0.0).map(|x| x.ln()).collect())
    }

    /// The log ratios `after[i] / before[i]` of the pairs with both values
    /// positive and finite.
    fn of_ratios(before: &[f64], after: &[f64]) -> Self {
        let ratios: Vec<f64> = before.iter().zip(after).filter(|(b, _)| **b > 0.0).map(|(b, a)| a / b).collect();
        Self::logs(&ratios)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn len(&self) -> f64 {
        self.0.len() as f64
    }

    /// Mean log value (`None` when empty).
    fn mean(&self) -> Option<f64> {
        (!self.is_empty()).then(|| mean(&self.0))
    }

    /// The variance of the mean, `s²/n`; `None` under two values.
    fn variance_of_mean(&self) -> Option<f64> {
        (self.0.len() >= 2).then(|| variance(&self.0) / self.len())
    }

    /// Half-width of the Student-t [`CONFIDENCE`] interval of the mean;
    /// `None` under two values.
    fn t_half_width(&self) -> Option<f64> {
        self.variance_of_mean().map(|v| t_quantile(self.len() - 1.0) * v.sqrt())
    }
}

/// Two-sided Student-t quantile for [`CONFIDENCE`] with `df` degrees of freedom.
/// From [`MAX_DF`] degrees of freedom on, the normal quantile.
fn t_quantile(df: f64) -> f64 {
    if df >= MAX_DF {
        return normal_quantile();
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |t| t.inverse_cdf(0.5 + CONFIDENCE / 2.0))
}

fn percent(log_ratio: f64) -> f64 {
    log_ratio.exp_m1() * 100.0
}

fn change_from(log_mean: f64, half_width: Option<f64>) -> Change {
    let Some(h) = half_width.filter(|h| h.is_finite()) else {
        return Change {
            change_percent: percent(log_mean),
            ci_low_percent: None,
            ci_high_percent: None,
            verdict: Verdict::TooFewRounds,
        };
    };
    interval_change(log_mean, log_mean - h, log_mean + h)
}

/// The change of log estimate `log_mean` with the log interval `[low, high]`,
/// and the verdict the interval supports.
fn interval_change(log_mean: f64, low: f64, high: f64) -> Change {
    let verdict = if low > 0.0 {
        Verdict::Faster
    } else if high < 0.0 {
        Verdict::Slower
    } else {
        Verdict::NoSignificantChange
    };
    Change {
        change_percent: percent(log_mean),
        ci_low_percent: Some(percent(low)),
        ci_high_percent: Some(percent(high)),
        verdict,
    }
}

/// Half-width of `change`'s 95 % interval, percentage points: the wider
/// side about the estimate; `None` without an interval.
pub fn half_width_points(change: &Change) -> Option<f64> {
    match (change.ci_low_percent, change.ci_high_percent) {
        (Some(low), Some(high)) => Some((change.change_percent - low).max(high - change.change_percent)),
        _ => None,
    }
}

/// What an interval is computed over, for [`rounds_for`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntervalOver {
    /// Many pairs (the suite's blocks): the quantile barely moves with
    /// more rounds, the width shrinks as 1/√rounds.
    Pairs,
    /// The rounds themselves (`ab`): the width shrinks as
    /// t₀.₉₇₅(rounds − 1)/√rounds.
    Rounds,
}

/// Rounds that a delta measured over `rounds` would need for a half-width
/// of `target_points`, by the sample-size rule n = (t·σ / E)² (NIST/SEMATECH
/// *e-Handbook of Statistical Methods*, §7.2.2.2): over pairs,
/// ⌈rounds · (half-width / target)²⌉; over rounds, the smallest N with
/// half-width · t(N − 1)/t(rounds − 1) · √(rounds / N) ≤ target. `None`
/// when the interval already is that narrow or there is none.
pub fn rounds_for(rounds: u32, change: &Change, target_points: f64, over: IntervalOver) -> Option<u32> {
    let half = half_width_points(change)?;
    if half <= target_points || target_points <= 0.0 || rounds == 0 {
        return None;
    }
    let n = f64::from(rounds);
    let width_at = |big_n: f64| match over {
        IntervalOver::Pairs => half * (n / big_n).sqrt(),
        IntervalOver::Rounds => half * t_quantile(big_n - 1.0) / t_quantile((n - 1.0).max(1.0)) * (n / big_n).sqrt(),
    };
    let (mut low, mut high) = (rounds, rounds.saturating_mul(2).max(2));
    while width_at(f64::from(high)) > target_points {
        if high == u32::MAX {
            return Some(u32::MAX);
        }
        (low, high) = (high, high.saturating_mul(2));
    }
    // The smallest N in (low, high] that reaches the target.
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if width_at(f64::from(mid)) > target_points { low = mid } else { high = mid }
    }
    Some(high)
}

/// The change from `before[i]` to `after[i]`, paired by round (the same
/// index is the same round). Values must be positive (successful requests
/// or rates); pairs with a zero are left out.
pub fn paired_change(before: &[f64], after: &[f64]) -> Change {
    let logs = Sample::of_ratios(before, after);
    change_from(logs.mean().unwrap_or(0.0), logs.t_half_width())
}

/// The change from the runs `a` to the independent runs `b` (say, two result
/// files): Welch's t interval on the difference of mean log values.
pub fn unpaired_change(a: &[f64], b: &[f64]) -> Change {
    unpaired_change_across_sessions(a, b, 0.0)
}

/// The change from the runs `a` of one session to the runs `b` of another:
/// Welch's interval on the difference of mean log values, widened by each
/// session's own offset, a known standard deviation `session_sd_log` (natural
/// log units) per session that the rounds within a session cannot show (a
/// speed phase of the machine, the memory layout a server process drew).
/// The variance of the difference is `va/na + vb/nb + 2·session_sd_log²`;
/// Welch–Satterthwaite degrees of freedom with the known term counted as
/// exact (infinite degrees of freedom). `session_sd_log = 0` is Welch's
/// interval. Values ≤ 0 are left out; under two values on a side, no interval.
pub fn unpaired_change_across_sessions(a: &[f64], b: &[f64], session_sd_log: f64) -> Change {
    let (la, lb) = (Sample::logs(a), Sample::logs(b));
    let (Some(ma), Some(mb)) = (la.mean(), lb.mean()) else { return change_from(0.0, None) };
    let diff = mb - ma;
    let (Some(va), Some(vb)) = (la.variance_of_mean(), lb.variance_of_mean()) else { return change_from(diff, None) };
    let se2 = va + vb + 2.0 * session_sd_log.powi(2);
    if se2 == 0.0 {
        return change_from(diff, Some(0.0));
    }
    // Welch–Satterthwaite degrees of freedom; the known session term adds none
    // to the denominator (a known term alone: infinite, the normal quantile).
    let df = se2.powi(2) / (va.powi(2) / (la.len() - 1.0) + vb.powi(2) / (lb.len() - 1.0));
    change_from(diff, Some(t_quantile(df) * se2.sqrt()))
}

/// Two-sided standard normal quantile for [`CONFIDENCE`] (1.959964 at 95 %).
pub fn normal_quantile() -> f64 {
    Normal::standard().inverse_cdf(0.5 + CONFIDENCE / 2.0)
}

/// Degrees of freedom from which the t quantile is taken as the normal one
/// (they differ by under 1e-5 there).
const MAX_DF: f64 = 1.0e6;

/// How much two sessions that ran the same code differ beyond their rounds:
/// the session-to-session standard deviation, natural log units, estimated
/// from `rows`, each the values of one run type in session A and in session B.
/// Each row's squared difference of mean logs, less its within-session
/// variance `va/na + vb/nb`, is an unbiased estimate of twice the session
/// variance; the estimate is half their mean, floored at zero (the ANOVA,
/// method-of-moments estimator of a variance component: Searle, Casella &
/// McCulloch, *Variance Components*, 1992, ch. 3). `None` without a row of
/// two or more positive values a side. Only meaningful for an A/A pair: a
/// real change between the sessions inflates it.
pub fn session_sd_estimate(rows: &[(&[f64], &[f64])]) -> Option<f64> {
    let terms: Vec<f64> = rows
        .iter()
        .map(|(a, b)| (Sample::logs(a), Sample::logs(b)))
        .filter_map(|(la, lb)| {
            let within = la.variance_of_mean()? + lb.variance_of_mean()?;
            Some((lb.mean()? - la.mean()?).powi(2) - within)
        })
        .collect();
    (!terms.is_empty()).then(|| (mean(&terms) / 2.0).max(0.0).sqrt())
}

/// The change over many short pairs (the alternating slices of one or more
/// runs): `runs` holds, per run and in the order measured, each pair's ratio
/// after / before (positive; others are left out).
///
/// Estimate: the Hodges–Lehmann estimator of the log ratios (the median of
/// all pairwise averages, "Walsh averages"), with the distribution-free
/// interval from the Wilcoxon signed-rank statistic, exact up to 300 pairs
/// and its normal approximation beyond (Hollander, Wolfe & Chicken,
/// *Nonparametric Statistical Methods*, 3rd ed., §3.2). One spoiled pair
/// moves the estimate and each bound by at most one rank, where it can move
/// a mean without limit. Successive pairs of a run may be correlated: when
/// the pooled lag-1 autocorrelation ρ of the log ratios within runs is
/// positive, the interval is widened about the estimate by √((1 + ρ)/(1 − ρ)),
/// the variance inflation of the mean of an AR(1) series. Under six pairs
/// no 95 % interval exists.
pub fn robust_paired_change(runs: &[Vec<f64>]) -> Change {
    match robust_log_interval(&log_series(runs)) {
        None => change_from(0.0, None),
        Some((estimate, None)) => change_from(estimate, None),
        Some((estimate, Some((low, high)))) => interval_change(estimate, low, high),
    }
}

/// The change over the pairs of `runs` (as in [`robust_paired_change`])
/// when each run compares a new pair of processes: `ab` restarts both
/// servers every round. A process keeps its own code and heap layout for its
/// whole life, and two processes of one binary can differ by about 1 % for
/// as long as they run (the A/A runs in docs/FINDINGS.md), a term no number of
/// slices inside one round averages away. The rounds are then the
/// independent units: each round gives the median of its log ratios, and
/// their mean has a Student-t interval with rounds − 1 degrees of freedom
/// (the cluster-level analysis of grouped data; Donner & Klar, *Design and
/// Analysis of Cluster Randomization Trials*, 2000, ch. 6). The estimate
/// stays the Hodges–Lehmann one over all pairs; the interval is the union
/// of the rounds' interval and the pairs' interval, a conservative choice
/// (coverage at least that of either) that keeps a few rounds whose medians
/// agree by chance from giving an interval narrower than their pairs allow.
/// Fewer than two rounds with pairs give no interval; with few rounds the
/// t quantile is large (t₀.₉₇₅ = 2.57 at 6 rounds, 12.7 at 2).
pub fn across_processes_change(runs: &[Vec<f64>]) -> Change {
    let series = log_series(runs);
    let Some((estimate, within)) = robust_log_interval(&series) else { return change_from(0.0, None) };
    let per_round: Vec<f64> = series.iter().filter(|s| !s.is_empty()).map(|s| median(&s.0)).collect();
    let rounds = Sample(per_round);
    let (Some(centre), Some(half)) = (rounds.mean(), rounds.t_half_width()) else {
        return change_from(estimate, None);
    };
    let (low, high) = within.unwrap_or((estimate, estimate));
    interval_change(estimate, low.min(centre - half), high.max(centre + half))
}

/// The logarithms of the positive, finite ratios of each run.
fn log_series(runs: &[Vec<f64>]) -> Vec<Sample> {
    runs.iter().map(|run| Sample::logs(run)).collect()
}

/// The Hodges–Lehmann estimate of the pooled log ratios `series` and its
/// widened signed-rank interval (see [`robust_paired_change`]); `None`
/// without a value, no interval under six.
fn robust_log_interval(series: &[Sample]) -> Option<(f64, Option<(f64, f64)>)> {
    let logs: Vec<f64> = series.iter().flat_map(|s| s.0.iter().copied()).collect();
    if logs.is_empty() {
        return None;
    }
    let mut walsh: Vec<f64> = Vec::with_capacity(logs.len() * (logs.len() + 1) / 2);
    for (i, x) in logs.iter().enumerate() {
        walsh.extend(logs[i..].iter().map(|y| (x + y) / 2.0));
    }
    walsh.sort_by(f64::total_cmp);
    let estimate = median(&walsh);
    let Some(c) = signed_rank_critical(logs.len()) else { return Some((estimate, None)) };
    let (low, high) = (walsh[c - 1], walsh[walsh.len() - c]);
    let widen = lag1_autocorrelation(series).filter(|r| *r > 0.0).map_or(1.0, |r| ((1.0 + r) / (1.0 - r)).sqrt());
    Some((estimate, Some((estimate - (estimate - low) * widen, estimate + (high - estimate) * widen))))
}

/// The rank C of the Walsh averages that bounds the two-sided [`CONFIDENCE`]
/// interval of the Hodges–Lehmann estimate: the largest C with
/// P(T⁺ ≤ C − 1) ≤ (1 − confidence) / 2 under the null, T⁺ the signed-rank
/// statistic of `n` values; `None` when even C = 1 is too likely (n < 6).
fn signed_rank_critical(n: usize) -> Option<usize> {
    let alpha = (1.0 - CONFIDENCE) / 2.0;
    let total = n * (n + 1) / 2;
    let c = if n <= 300 {
        // Exact null distribution of T⁺: each rank k is in with probability ½.
        let mut p = vec![0.0f64; total + 1];
        p[0] = 1.0;
        for k in 1..=n {
            for s in (k..=total).rev() {
                p[s] = (p[s] + p[s - k]) / 2.0;
            }
            for s in p.iter_mut().take(k) {
                *s /= 2.0;
            }
        }
        let mut cumulative = 0.0;
        let mut c = 0;
        for (t, prob) in p.iter().enumerate() {
            cumulative += prob;
            if cumulative > alpha {
                break;
            }
            c = t + 1;
        }
        c
    } else {
        let mean = total as f64 / 2.0;
        let sd = (n as f64 * (n as f64 + 1.0) * (2.0 * n as f64 + 1.0) / 24.0).sqrt();
        let z = Normal::standard().inverse_cdf(1.0 - alpha);
        (mean - z * sd).floor().max(0.0) as usize
    };
    (c >= 1).then_some(c)
}

/// Pooled lag-1 autocorrelation of the `series` (each centred on its own
/// mean); `None` without a series of three values or more.
fn lag1_autocorrelation(series: &[Sample]) -> Option<f64> {
    let (mut num, mut den) = (0.0, 0.0);
    for s in series.iter().map(|s| &s.0).filter(|s| s.len() >= 3) {
        let m = mean(s);
        num += s.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>();
        den += s.iter().map(|x| (x - m).powi(2)).sum::<f64>();
    }
    (den > 0.0).then(|| (num / den).clamp(-0.9, 0.9))
}

/// Geometric mean of positive `values` with the 95 % Student-t interval of
/// the mean log value mapped back (`None` under two values).
pub fn geometric_mean_interval(values: &[f64]) -> (f64, Option<(f64, f64)>) {
    let logs = Sample::logs(values);
    let Some(m) = logs.mean() else { return (0.0, None) };
    (m.exp(), logs.t_half_width().map(|h| ((m - h).exp(), (m + h).exp())))
}

/// Mean of the finite `values` with its 95 % Student-t interval (`None`
/// under two values); `None` without a value. For differences that may be
/// negative, such as µs saved per request.
pub fn mean_interval(values: &[f64]) -> Option<(f64, Option<(f64, f64)>)> {
    let sample = Sample::finite(values);
    let m = sample.mean()?;
    Some((m, sample.t_half_width().map(|h| (m - h, m + h))))
}

/// Least-squares slope of `ys` over `xs`; `None` under two distinct `xs`.
pub fn slope(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let (mx, my) = (mean(xs), mean(ys));
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    (xs.len() >= 2 && sxx > 0.0).then(|| xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum::<f64>() / sxx)
}

/// Coefficient of variation (sample standard deviation over mean), percent;
/// `None` for fewer than two values or a zero mean.
pub fn cv_percent(values: &[f64]) -> Option<f64> {
    let m = mean(values);
    (values.len() >= 2 && m != 0.0).then(|| variance(values).sqrt() / m * 100.0)
}

/// Whether a window series drifts down: the mean of its last third of
/// windows is [`DRIFT_PERCENT`] or more below the mean of its first third,
/// and the least-squares slope over all windows is negative at 95 %
/// confidence (so window-to-window noise alone is not called drift; with
/// three windows only a near-perfect decline qualifies).
pub fn drifts(windows: &[u64]) -> bool {
    if windows.len() < 3 {
        return false;
    }
    let third = windows.len().div_ceil(3);
    let avg = |w: &[u64]| w.iter().sum::<u64>() as f64 / w.len() as f64;
    let (first, last) = (avg(&windows[..third]), avg(&windows[windows.len() - third..]));
    if !(first > 0.0 && last <= first * (1.0 - DRIFT_PERCENT / 100.0)) {
        return false;
    }
    let n = windows.len() as f64;
    let xs: Vec<f64> = (0..windows.len()).map(|i| i as f64).collect();
    let ys: Vec<f64> = windows.iter().map(|&w| w as f64).collect();
    let Some(slope) = slope(&xs, &ys) else { return false };
    let (mx, my) = (mean(&xs), mean(&ys));
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let residual: f64 = xs.iter().zip(&ys).map(|(x, y)| (y - my - slope * (x - mx)).powi(2)).sum();
    let se = (residual / (n - 2.0) / sxx).sqrt();
    slope < 0.0 && (se == 0.0 || slope / se < -t_quantile(n - 2.0))
}

/// Median of `values` (mean of the middle two for an even count); 0 if empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::StdRng;
    use rand_distr::{Distribution, Normal};

    #[test]
    fn identical_inputs_are_no_significant_change() {
        let v = [100.0, 120.0, 90.0, 110.0];
        let c = paired_change(&v, &v);
        assert_eq!(c.change_percent, 0.0);
        assert_eq!(c.verdict, Verdict::NoSignificantChange);
        assert_eq!((c.ci_low_percent, c.ci_high_percent), (Some(0.0), Some(0.0)));
        assert_eq!(unpaired_change(&v, &v).verdict, Verdict::NoSignificantChange);
    }

    #[test]
    fn known_answers() {
        // Every round exactly +10 %: zero spread, the interval is the point.
        let before = [100.0, 200.0, 50.0];
        let after = [110.0, 220.0, 55.0];
        let c = paired_change(&before, &after);
        assert!((c.change_percent - 10.0).abs() < 1e-9);
        assert_eq!(c.verdict, Verdict::Faster);
        // Log-ratios ln(1.1) ± d for two rounds: mean ln(1.1), sd d·√2,
        // half-width t(0.975, 1) · d = 12.706 · d.
        let d = 0.01_f64;
        let c = paired_change(&[1.0, 1.0], &[(1.1f64.ln() + d).exp(), (1.1f64.ln() - d).exp()]);
        let expected_low = ((1.1f64.ln() - 12.706_204_736 * d).exp() - 1.0) * 100.0;
        assert!((c.ci_low_percent.unwrap() - expected_low).abs() < 1e-6, "{c:?}");
        assert_eq!(paired_change(&[1.0], &[2.0]).verdict, Verdict::TooFewRounds);
        assert_eq!(paired_change(&[100.0, 100.0, 100.0], &[90.0, 91.0, 89.0]).verdict, Verdict::Slower);
    }

    /// Over many seeded simulations of noisy rounds with a known true change,
    /// the 95 % interval covers it about 95 % of the time.
    fn coverage(paired: bool, rounds: usize, seed: u64) -> f64 {
        let mut rng = StdRng::seed_from_u64(seed);
        let machine = Normal::<f64>::new(0.0, 0.10).unwrap(); // round-to-round noise shared by a pair
        let run = Normal::<f64>::new(0.0, 0.03).unwrap(); // noise of each run
        let true_change = 0.05_f64; // +5 %
        let sims = 4000;
        let mut covered = 0;
        for _ in 0..sims {
            let mut before = Vec::new();
            let mut after = Vec::new();
            for _ in 0..rounds {
                let m: f64 = if paired { machine.sample(&mut rng) } else { 0.0 };
                before.push(100_000.0 * (m + run.sample(&mut rng)).exp());
                after.push(100_000.0 * (1.0 + true_change) * (m + run.sample(&mut rng)).exp());
            }
            let c = if paired { paired_change(&before, &after) } else { unpaired_change(&before, &after) };
            let (low, high) = (c.ci_low_percent.unwrap(), c.ci_high_percent.unwrap());
            if low <= true_change * 100.0 && true_change * 100.0 <= high {
                covered += 1;
            }
        }
        f64::from(covered) / f64::from(sims)
    }

    #[test]
    fn paired_interval_covers_the_true_change_95_percent_of_the_time() {
        for (rounds, seed) in [(3, 1), (5, 2), (10, 3)] {
            let c = coverage(true, rounds, seed);
            assert!((0.935..=0.965).contains(&c), "{rounds} rounds: coverage {c}");
        }
    }

    #[test]
    fn welch_interval_covers_the_true_change_95_percent_of_the_time() {
        for (rounds, seed) in [(3, 4), (6, 5)] {
            let c = coverage(false, rounds, seed);
            assert!((0.93..=0.97).contains(&c), "{rounds} rounds: coverage {c}");
        }
    }

    #[test]
    fn geometric_mean_interval_brackets_the_mean() {
        let (g, ci) = geometric_mean_interval(&[100.0, 400.0]);
        assert!((g - 200.0).abs() < 1e-9);
        let (lo, hi) = ci.unwrap();
        assert!(lo < 200.0 && 200.0 < hi);
        let (g, ci) = geometric_mean_interval(&[5.0]);
        assert!((g - 5.0).abs() < 1e-9);
        assert_eq!(ci, None);
    }

    #[test]
    fn slope_of_a_line() {
        let s = slope(&[0.0, 1.0, 5.0, 10.0], &[2.0, 2.5, 4.5, 7.0]).unwrap();
        assert!((s - 0.5).abs() < 1e-12);
        assert_eq!(slope(&[3.0, 3.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn cv_and_drift() {
        assert_eq!(cv_percent(&[5.0]), None);
        let cv = cv_percent(&[90.0, 100.0, 110.0]).unwrap();
        assert!((cv - 10.0).abs() < 1e-9);
        assert!(!drifts(&[100, 101, 99, 100, 100]));
        assert!(drifts(&[100, 99, 98, 95, 94]), "last two 94.5 vs first two 99.5, steady decline");
        assert!(!drifts(&[100, 100, 98, 96, 97]), "3.5 % is under the threshold");
        assert!(!drifts(&[100, 80, 110, 70, 90]), "noise, not a trend, though the end is 20 % lower");
        assert!(drifts(&[100, 90, 80]), "a perfect decline over three windows");
        assert!(!drifts(&[100]));
        // At the edge of significance (six windows, t(0.975, 4) = 2.776):
        // slope / se = −3.07 is a drift, −2.66 is not, though both end 5.6 % lower.
        assert!(drifts(&[100, 97, 99, 93, 96, 90]), "t = −3.07");
        assert!(!drifts(&[100, 95, 99, 92, 95, 89]), "t = −2.66");
    }

    #[test]
    fn geometric_mean_with_its_t_interval_of_the_logs() {
        // Logs {0, 1, 2}: mean 1, variance 1, half-width t(0.975, 2) × √(1/3).
        let values: Vec<f64> = [0.0f64, 1.0, 2.0].iter().map(|l| l.exp()).collect();
        let (gm, ci) = geometric_mean_interval(&values);
        let half = 4.302_652_730 * (1.0f64 / 3.0).sqrt();
        let (low, high) = ci.unwrap();
        assert!((gm - 1f64.exp()).abs() < 1e-12);
        assert!((low - (1.0 - half).exp()).abs() < 1e-9 && (high - (1.0 + half).exp()).abs() < 1e-8, "{low} {high}");
        let mut with_zero = values.clone();
        with_zero.push(0.0);
        assert_eq!(geometric_mean_interval(&with_zero), (gm, ci), "a zero is left out");
        assert_eq!(geometric_mean_interval(&[4.0]), (4.0, None));
        assert_eq!(geometric_mean_interval(&[0.0]), (0.0, None));
    }

    #[test]
    fn signed_rank_critical_values_match_the_tables() {
        // Two-sided 5 % critical values T of the signed-rank test (reject when
        // T⁺ ≤ T): 0 at n = 6, 3 at n = 8, 13 at n = 12, 52 at n = 20; the
        // interval's rank is T + 1.
        assert_eq!(signed_rank_critical(5), None);
        for (n, c) in [(6, 1), (8, 4), (12, 14), (20, 53)] {
            assert_eq!(signed_rank_critical(n), Some(c), "n = {n}");
        }
        let exact = signed_rank_critical(300).unwrap() as f64;
        let mean = 300.0 * 301.0 / 4.0;
        assert!((exact - (mean - 1.96 * (300.0f64 * 301.0 * 601.0 / 24.0).sqrt())).abs() < 3.0, "{exact}");
        // Beyond 300 pairs, the normal approximation: ⌊n(n+1)/4 − z₀.₉₇₅ √(n(n+1)(2n+1)/24)⌋.
        for (n, c) in [(301, 19_763), (400, 35_565), (1000, 232_344)] {
            assert_eq!(signed_rank_critical(n), Some(c), "n = {n}");
        }
    }

    #[test]
    fn robust_change_estimates_the_centre_and_one_spoiled_pair_cannot_move_it() {
        let clean: Vec<f64> = (0..36).map(|i| 1.08 * (1.0 + 0.002 * ((i * 7 % 11) as f64 - 5.0))).collect();
        let c = robust_paired_change(std::slice::from_ref(&clean));
        assert!((c.change_percent - 8.0).abs() < 0.2, "{c:?}");
        assert_eq!(c.verdict, Verdict::Faster);
        let (lo, hi) = (c.ci_low_percent.unwrap(), c.ci_high_percent.unwrap());
        assert!(lo < 8.0 && 8.0 < hi && hi - lo < 1.0, "{c:?}");
        let mut spoiled = clean;
        spoiled[3] = 1.30;
        let s = robust_paired_change(&[spoiled]);
        assert!((s.change_percent - c.change_percent).abs() < 0.1, "{s:?} vs {c:?}");
        assert!(s.ci_high_percent.unwrap() - s.ci_low_percent.unwrap() < 1.2, "{s:?}");
        assert_eq!(robust_paired_change(&[vec![1.1; 5]]).verdict, Verdict::TooFewRounds);
    }

    #[test]
    fn correlated_pairs_widen_the_interval() {
        // A slow wave across successive pairs: strongly autocorrelated.
        let wave: Vec<f64> = (0..40).map(|i| 1.0 + 0.01 * ((i as f64) / 6.0).sin()).collect();
        let shuffled: Vec<f64> = (0..40).map(|i| wave[(i * 17) % 40]).collect();
        let c_wave = robust_paired_change(&[wave]);
        let c_shuffled = robust_paired_change(&[shuffled]);
        let width = |c: &Change| c.ci_high_percent.unwrap() - c.ci_low_percent.unwrap();
        assert!(width(&c_wave) > 1.5 * width(&c_shuffled), "{c_wave:?} vs {c_shuffled:?}");
    }

    #[test]
    fn rounds_for_a_target_scale_with_the_square_of_the_width() {
        let c = |low: f64, change: f64, high: f64| Change {
            change_percent: change,
            ci_low_percent: Some(low),
            ci_high_percent: Some(high),
            verdict: Verdict::Faster,
        };
        let pairs = IntervalOver::Pairs;
        // ±2 points (the wider side) over 6 rounds: 4 × 6 rounds for ±1.
        assert_eq!(half_width_points(&c(8.0, 10.0, 11.5)), Some(2.0));
        assert_eq!(rounds_for(6, &c(8.0, 10.0, 11.5), 1.0, pairs), Some(24));
        assert_eq!(rounds_for(6, &c(9.0, 10.0, 13.0), 1.0, pairs), Some(54), "the upper side is the wider");
        assert_eq!(rounds_for(5, &c(8.9, 10.0, 11.1), 1.0, pairs), Some(7), "⌈5 × 1.21⌉");
        assert_eq!(rounds_for(6, &c(9.0, 10.0, 11.0), 1.0, pairs), None, "exactly at the target");
        assert_eq!(rounds_for(6, &c(9.5, 10.0, 10.4), 1.0, pairs), None);
        let none = Change { ci_low_percent: None, ci_high_percent: None, ..c(0.0, 1.0, 2.0) };
        assert_eq!((half_width_points(&none), rounds_for(6, &none, 1.0, pairs)), (None, None));
        // Over rounds the t quantile shrinks too: ±3 points at 6 rounds
        // (t(5) = 2.571) is s/√6 = 1.167; ±1 needs t(N − 1)·1.167·√6/√N ≤ 1:
        // N = 31 gives 2.042 × 2.859 / 5.568 = 1.0487 … N = 34 gives
        // 2.035 × 2.859 / 5.831 = 0.9977.
        let rounds = IntervalOver::Rounds;
        assert_eq!(rounds_for(6, &c(7.0, 10.0, 13.0), 1.0, rounds), Some(34));
        assert!(rounds_for(6, &c(7.0, 10.0, 13.0), 1.0, pairs).unwrap() > 34, "pairs' rule asks more");
        assert_eq!(rounds_for(6, &c(9.0, 10.0, 11.0), 1.0, rounds), None);
        // From 2 rounds the quantile moves most: ±10 at 2 rounds (t(1) = 12.706)
        // reaches ±2.5 at 4 rounds (10 × 3.182/12.706 × √(2/4) = 1.77), not at
        // 3 (10 × 4.303/12.706 × √(2/3) = 2.77).
        assert_eq!(rounds_for(2, &c(0.0, 10.0, 20.0), 2.5, rounds), Some(4));
        // No target, or no rounds to scale from: nothing to say.
        for over in [pairs, rounds] {
            assert_eq!(rounds_for(6, &c(7.0, 10.0, 13.0), 0.0, over), None);
            assert_eq!(rounds_for(0, &c(7.0, 10.0, 13.0), 1.0, over), None);
        }
    }

    #[test]
    fn verdicts_read_as_the_tables_print_them() {
        let labels: Vec<&str> = [Verdict::Faster, Verdict::Slower, Verdict::NoSignificantChange, Verdict::TooFewRounds]
            .iter()
            .map(|v| v.label())
            .collect();
        assert_eq!(labels, ["faster", "slower", "no significant change", "too few rounds"]);
    }

    #[test]
    fn paired_change_leaves_out_pairs_with_a_zero_on_either_side() {
        for (before, after) in
            [([0.0, 100.0, 200.0], [50.0, 110.0, 220.0]), ([100.0, 100.0, 200.0], [0.0, 110.0, 220.0])]
        {
            let c = paired_change(&before, &after);
            assert!((c.change_percent - 10.0).abs() < 1e-9, "{c:?}");
            assert_eq!((c.ci_low_percent, c.verdict), (Some(c.change_percent), Verdict::Faster), "{c:?}");
        }
        // Unpaired: a zero on either side is left out of that side.
        let with_zero = unpaired_change(&[0.0, 100.0, 100.0], &[110.0, 110.0, 0.0]);
        assert!((with_zero.change_percent - 10.0).abs() < 1e-9, "{with_zero:?}");
        assert_eq!(with_zero.ci_low_percent, Some(with_zero.change_percent), "{with_zero:?}");
    }

    #[test]
    fn unpaired_change_is_welchs_interval_and_needs_two_values_a_side() {
        // Logs {0, 1, 2} against {1, 2, 3}: variances 1 and 1, difference 1,
        // Welch–Satterthwaite df = (2/3)² / (2 × (1/3)² / 2) = 4,
        // t(0.975, 4) = 2.776445105, half-width 2.776445105 × √(2/3).
        let a: Vec<f64> = [0.0f64, 1.0, 2.0].iter().map(|l| l.exp()).collect();
        let b: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|l| l.exp()).collect();
        let c = unpaired_change(&a, &b);
        let half = 2.776_445_105 * (2.0f64 / 3.0).sqrt();
        assert!((c.change_percent - percent(1.0)).abs() < 1e-6, "{c:?}");
        assert!((c.ci_low_percent.unwrap() - percent(1.0 - half)).abs() < 1e-6, "{c:?}");
        assert!((c.ci_high_percent.unwrap() - percent(1.0 + half)).abs() < 1e-4, "{c:?}");
        // Unequal sizes and spreads: df from both sides (Welch, not pooled).
        let b5: Vec<f64> = [1.0f64, 1.5, 2.0, 2.5, 3.0].iter().map(|l| l.exp()).collect();
        let (va, vb) = (1.0 / 3.0, 0.625 / 5.0);
        let df = (va + vb) * (va + vb) / (va * va / 2.0 + vb * vb / 4.0);
        let w = unpaired_change(&a, &b5);
        let half = t_quantile(df) * (va + vb).sqrt();
        assert!((w.ci_high_percent.unwrap() - percent(1.0 + half)).abs() < 1e-6, "{w:?} df {df}");
        // One value on a side: the difference, no interval; none on a side: nothing.
        for (x, y) in [(&a[..1], &b[..]), (&a[..], &b[2..])] {
            let one = unpaired_change(x, y);
            assert_eq!(one.verdict, Verdict::TooFewRounds, "{one:?}");
            assert!(one.change_percent > 0.0 && one.ci_low_percent.is_none(), "{one:?}");
        }
        for (x, y) in [(&[][..], &b[..]), (&a[..], &[][..])] {
            let none = unpaired_change(x, y);
            assert_eq!((none.change_percent, none.verdict), (0.0, Verdict::TooFewRounds), "{none:?}");
        }
    }

    #[test]
    fn a_session_term_widens_welchs_interval_as_a_known_variance() {
        // Logs {0, 1, 2} against {1, 2, 3} with a session SD of √(1/6) a side:
        // variance of the difference 1/3 + 1/3 + 2 × 1/6 = 1, degrees of
        // freedom 1² / ((1/3)²/2 + (1/3)²/2) = 9, t(0.975, 9) = 2.262157163.
        let a: Vec<f64> = [0.0f64, 1.0, 2.0].iter().map(|l| l.exp()).collect();
        let b: Vec<f64> = [1.0f64, 2.0, 3.0].iter().map(|l| l.exp()).collect();
        let c = unpaired_change_across_sessions(&a, &b, (1.0f64 / 6.0).sqrt());
        let half = 2.262_157_163;
        assert!((c.ci_low_percent.unwrap() - percent(1.0 - half)).abs() < 1e-6, "{c:?}");
        assert!((c.ci_high_percent.unwrap() - percent(1.0 + half)).abs() < 1e-4, "{c:?}");
        assert_eq!(unpaired_change_across_sessions(&a, &b, 0.0), unpaired_change(&a, &b));
        // Rounds without spread: the session term alone, at the normal quantile.
        let flat = unpaired_change_across_sessions(&[100.0, 100.0], &[110.0, 110.0], 0.01);
        let log = 1.1f64.ln();
        let half = 1.959_964 * 2.0f64.sqrt() * 0.01;
        assert!((flat.ci_low_percent.unwrap() - percent(log - half)).abs() < 1e-4, "{flat:?}");
        assert_eq!(flat.verdict, Verdict::Faster, "+10 % against ±2.8 %");
        let wide = unpaired_change_across_sessions(&[100.0, 100.0], &[110.0, 110.0], 0.05);
        assert_eq!(wide.verdict, Verdict::NoSignificantChange, "+10 % against ±14 %: {wide:?}");
    }

    #[test]
    fn session_sd_is_half_the_excess_of_squared_differences_over_the_rounds() {
        // Logs {0, 0.02} against {0.05, 0.07}: difference 0.05, within-session
        // variance 0.0002/2 + 0.0002/2 = 0.0002; 2σ² = 0.0025 − 0.0002.
        let e = |v: &[f64]| -> Vec<f64> { v.iter().map(|l| l.exp()).collect() };
        let (a, b) = (e(&[0.0, 0.02]), e(&[0.05, 0.07]));
        let one = session_sd_estimate(&[(&a, &b)]).unwrap();
        assert!((one - (0.0023f64 / 2.0).sqrt()).abs() < 1e-9, "{one}");
        // A second row with no difference: the mean of 0.0023 and −0.0002.
        let (c, d) = (e(&[0.0, 0.02]), e(&[0.0, 0.02]));
        let two = session_sd_estimate(&[(&a, &b), (&c, &d)]).unwrap();
        assert!((two - (0.0021f64 / 4.0).sqrt()).abs() < 1e-9, "{two}");
        // Values ≤ 0 are left out of a row, as in the intervals.
        let with_zero: Vec<f64> = [&[0.0][..], &a].concat();
        assert_eq!(session_sd_estimate(&[(&with_zero, &b)]), Some(one));
        // Differences smaller than the rounds explain: zero, not an imaginary SD.
        assert_eq!(session_sd_estimate(&[(&c, &d)]), Some(0.0));
        // Under two values a side: nothing to estimate from.
        assert_eq!(session_sd_estimate(&[(&a[..1], &b)]), None);
        assert_eq!(session_sd_estimate(&[]), None);
    }

    #[test]
    fn robust_bounds_are_the_signed_rank_walsh_averages_and_bad_ratios_are_left_out() {
        // Six pairs: C = 1, so the bounds are the smallest and largest Walsh
        // averages, the smallest and largest log ratio; these alternate, so
        // the lag-1 autocorrelation is negative and nothing is widened.
        let logs = [0.01, 0.05, 0.02, 0.06, 0.03, 0.04];
        let mut ratios: Vec<f64> = logs.iter().map(|l: &f64| l.exp()).collect();
        let c = robust_paired_change(std::slice::from_ref(&ratios));
        assert!((c.change_percent - percent(0.035)).abs() < 1e-9, "{c:?}");
        assert!((c.ci_low_percent.unwrap() - percent(0.01)).abs() < 1e-9, "{c:?}");
        assert!((c.ci_high_percent.unwrap() - percent(0.06)).abs() < 1e-9, "{c:?}");
        // A steady climb: lag-1 autocorrelation 0.000875 / 0.00175 = 0.5,
        // bounds widened about the estimate by √((1 + 0.5) / (1 − 0.5)) = √3.
        let climb: Vec<f64> = [0.01f64, 0.02, 0.03, 0.04, 0.05, 0.06].iter().map(|l| l.exp()).collect();
        let w = robust_paired_change(&[climb]);
        let spread = 0.025 * 3f64.sqrt();
        assert!((w.ci_low_percent.unwrap() - percent(0.035 - spread)).abs() < 1e-9, "{w:?}");
        assert!((w.ci_high_percent.unwrap() - percent(0.035 + spread)).abs() < 1e-9, "{w:?}");
        // Zero, negative, infinite and NaN ratios are not pairs.
        ratios.extend([0.0, -1.0, f64::INFINITY, f64::NAN]);
        assert_eq!(robust_paired_change(&[ratios]), c);
    }

    #[test]
    fn a_per_process_offset_widens_the_interval_to_the_rounds_spread() {
        // Six rounds of 12 tight pairs each, every round's processes off by
        // their own −1 … +1.5 %: the pairs alone call this 0 % change
        // faster, the rounds' spread does not.
        let offsets = [1.015, 0.995, 1.012, 0.99, 1.01, 0.998];
        let rounds: Vec<Vec<f64>> =
            offsets.iter().map(|o| (0..12).map(|i| o * (1.0 + 0.0005 * ((i % 3) as f64 - 1.0))).collect()).collect();
        let pooled = robust_paired_change(&rounds);
        let across = across_processes_change(&rounds);
        assert_eq!(pooled.change_percent, across.change_percent, "same Hodges–Lehmann estimate");
        let width = |c: &Change| c.ci_high_percent.unwrap() - c.ci_low_percent.unwrap();
        // Round medians: their mean ± t(5) × s / √6.
        let logs: Vec<f64> = offsets.iter().map(|o| o.ln()).collect();
        let half = t_quantile(5.0) * (variance(&logs) / 6.0).sqrt();
        assert!((across.ci_low_percent.unwrap() - percent(mean(&logs) - half)).abs() < 1e-9, "{across:?}");
        assert!((across.ci_high_percent.unwrap() - percent(mean(&logs) + half)).abs() < 1e-9, "{across:?}");
        assert!(width(&across) > 2.0 * width(&pooled), "{across:?} vs {pooled:?}");
        assert_eq!(pooled.verdict, Verdict::Faster, "{pooled:?}");
        assert_eq!(across.verdict, Verdict::NoSignificantChange);
        // The same offset in every round is a real change: the rounds agree
        // and the pairs' interval stays the bound.
        let real: Vec<Vec<f64>> =
            (0..6).map(|r| (0..12).map(|i| 0.97 * (1.0 + 0.002 * (((i + r) % 5) as f64 - 2.0))).collect()).collect();
        let c = across_processes_change(&real);
        assert_eq!(c.verdict, Verdict::Slower, "{c:?}");
        assert_eq!(
            (c.ci_low_percent, c.ci_high_percent),
            (robust_paired_change(&real).ci_low_percent, robust_paired_change(&real).ci_high_percent),
            "rounds that agree leave the pairs' interval"
        );
        // Two rounds are enough for an interval (t(1) = 12.706).
        let two = across_processes_change(&rounds[..2]);
        assert!(two.ci_low_percent.is_some() && two.verdict == Verdict::NoSignificantChange, "{two:?}");
        // One round (or one round with pairs): no interval.
        assert_eq!(across_processes_change(&rounds[..1]).verdict, Verdict::TooFewRounds);
        assert_eq!(across_processes_change(&[rounds[0].clone(), Vec::new()]).verdict, Verdict::TooFewRounds);
        assert_eq!(across_processes_change(&[]).verdict, Verdict::TooFewRounds);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
