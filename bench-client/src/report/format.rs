//! How numbers read in every table: signed percentages, milliseconds,
//! changes with their intervals, verdicts.

use crate::analysis::{Change, Verdict};

/// `+6.6 %`.
pub(super) fn signed(p: f64) -> String {
    format!("{p:+.1} %")
}

/// Microseconds as `1.23 ms`.
/// A rate in requests per second as a reader wants it: whole from 10 up,
/// else up to three decimals without trailing zeros (0.5, not 0 or 1).
pub fn per_s(rate: f64) -> String {
    if rate >= 10.0 || rate == 0.0 {
        return format!("{rate:.0}");
    }
    let text = format!("{rate:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

pub(super) fn ms(us: f64) -> String {
    format!("{:.2} ms", us / 1000.0)
}

/// How a figure that was not measured reads, in the terminal and in the
/// report: never 0, never NaN.
pub(super) const ABSENT: &str = "-";

/// `value` as `show` writes it, or [`ABSENT`].
pub(super) fn or_absent<T>(value: Option<T>, show: impl FnOnce(T) -> String) -> String {
    value.map_or_else(|| ABSENT.to_owned(), show)
}

/// `12.3 %`, or [`ABSENT`] when unknown.
pub(super) fn opt_percent(p: Option<f64>) -> String {
    or_absent(p, |p| format!("{p:.1} %"))
}

/// `+6.6 % [+2.1 … +11.3]`, or the point alone when there is no interval.
pub fn change_with_ci(d: &Change) -> String {
    match (d.ci_low_percent, d.ci_high_percent) {
        (Some(lo), Some(hi)) => format!("{} [{lo:+.1} … {hi:+.1}]", signed(d.change_percent)),
        _ => signed(d.change_percent),
    }
}

/// The verdict of `change`, in bold when it is significant, and
/// `inconclusive (±N %)` when it found no change but its interval reaches
/// beyond `threshold_percent` on a side: a change the user would care about
/// is not ruled out. N is the interval's end farthest from zero, to the
/// tenth the interval's ends are shown to, or to the hundredth where a tenth
/// would read as the threshold it exceeds (2.04 against 2).
pub(super) fn verdict_within(change: &Change, threshold_percent: Option<f64>) -> String {
    match (inconclusive_reach(change, threshold_percent), threshold_percent) {
        (Some(reach), Some(threshold)) if format!("{reach:.1}").parse::<f64>().is_ok_and(|r| r <= threshold) => {
            format!("inconclusive (±{reach:.2} %)")
        }
        (Some(reach), _) => format!("inconclusive (±{reach:.1} %)"),
        (None, _) => verdict(change.verdict),
    }
}

/// What [`verdict_within`] calls `change`, without the reach: its verdict,
/// and whether it is inconclusive. Two sessions agree on a verdict when
/// these are equal, however far each one's interval reaches.
pub(super) fn verdict_kind(change: &Change, threshold_percent: Option<f64>) -> (Verdict, bool) {
    (change.verdict, inconclusive_reach(change, threshold_percent).is_some())
}

/// The reach of `change` (see [`reach_percent`]) when it found no change
/// but reaches beyond `threshold_percent`; `None` otherwise.
fn inconclusive_reach(change: &Change, threshold_percent: Option<f64>) -> Option<f64> {
    let (reach, threshold) = (reach_percent(change)?, threshold_percent?);
    (change.verdict == Verdict::NoSignificantChange && reach > threshold).then_some(reach)
}

/// The largest change `change`'s interval does not rule out, percent: the
/// distance of its end farthest from zero; `None` without an interval.
fn reach_percent(change: &Change) -> Option<f64> {
    Some(change.ci_low_percent?.abs().max(change.ci_high_percent?.abs()))
}

/// The verdict's label, in bold when it is significant.
pub(super) fn verdict(v: Verdict) -> String {
    match v {
        Verdict::Faster | Verdict::Slower => format!("**{}**", v.label()),
        other => other.label().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inconclusive_names_the_farthest_end_and_an_interval_within_the_threshold_is_no_change() {
        let change = |low: f64, point: f64, high: f64| Change {
            change_percent: point,
            ci_low_percent: Some(low),
            ci_high_percent: Some(high),
            verdict: Verdict::NoSignificantChange,
        };
        // The wider side from the estimate (2.3), rounded to a whole 2, read as the threshold it exceeds.
        assert_eq!(verdict_within(&change(-1.5, 0.7, 3.0), Some(2.0)), "inconclusive (±3.0 %)");
        assert_eq!(verdict_within(&change(-1.0, 0.5, 2.04), Some(2.0)), "inconclusive (±2.04 %)");
        assert_eq!(verdict_within(&change(-2.4, -0.2, 0.5), Some(2.0)), "inconclusive (±2.4 %)");
        // Off centre but within ±2 % on both sides: a change that matters is ruled out.
        assert_eq!(verdict_within(&change(-1.9, 0.7, 1.0), Some(2.0)), "no significant change");
        assert_eq!(verdict_within(&change(-1.5, 0.7, 3.0), None), "no significant change");
        let faster = Change { verdict: Verdict::Faster, ..change(1.0, 5.0, 9.0) };
        assert_eq!(verdict_within(&faster, Some(2.0)), "**faster**");
    }

    #[test]
    fn a_rate_below_ten_keeps_its_decimals_and_one_above_is_whole() {
        let shown: Vec<String> = [0.0, 0.5, 0.25, 0.3333, 2.0, 9.95, 10.4, 1234.6].map(per_s).to_vec();
        assert_eq!(shown, ["0", "0.5", "0.25", "0.333", "2", "9.95", "10", "1235"]);
    }
}
