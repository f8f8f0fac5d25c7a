//! The frameworks head to head as tables: every route's pairs of frameworks,
//! the costlier one named first, with the ratio of their server CPU per
//! successful request and of their successful requests per second (95 %
//! intervals over the rounds) and the verdict the CPU ratio supports; and the
//! same pairs of two sessions side by side, where a verdict stands only when
//! both sessions give it ("unresolved on this machine" otherwise).

use super::table::{Left, Right, Table};
use crate::results::{Confirmed, Ratio, Results, Rival, Standing, confirmed};

/// `2.10× [1.90 … 2.30]`.
fn times(r: Ratio) -> String {
    match (r.low, r.high) {
        (Some(l), Some(h)) => format!("{:.2}× [{l:.2} … {h:.2}]", r.ratio),
        _ => format!("{:.2}×", r.ratio),
    }
}

/// The pair turned so that its first framework costs at least as much CPU
/// per request as its second (by the estimate), and whether it was turned.
fn costlier_first(r: &Rival) -> (Rival, bool) {
    if r.cpu_ratio.ratio >= 1.0 {
        return (r.clone(), false);
    }
    let turned = Rival {
        framework: r.against,
        against: r.framework,
        cpu_ratio: r.cpu_ratio.inverse(),
        rate_ratio: r.rate_ratio.inverse(),
        standing: r.standing.reversed(),
        ..r.clone()
    };
    (turned, true)
}

/// The verdict of `standing` on `r` (turned costlier first), in words.
fn verdict(r: &Rival, standing: Standing) -> String {
    let (costly, cheap) = (r.framework.name(), r.against.name());
    match standing {
        Standing::Costlier => format!("**{costly} costs {:.2}× {cheap}'s**", r.cpu_ratio.ratio),
        Standing::Cheaper => format!("**{cheap} costs {:.2}× {costly}'s**", 1.0 / r.cpu_ratio.ratio),
        Standing::Tie => format!("tie within ±{} %", r.tie_margin_percent),
        Standing::Unresolved => "unresolved".to_owned(),
        Standing::TooFewRounds => "too few rounds".to_owned(),
    }
}

/// The head-to-head table of one session; empty without the `frameworks` scenario.
pub fn rivals_table(results: &Results) -> String {
    if results.rivals.is_empty() {
        return String::new();
    }
    let mut t = Table::of([
        ("route", Left),
        ("frameworks", Left),
        ("server CPU per request, ratio [95 % CI]", Right),
        ("requests/s, ratio [95 % CI]", Right),
        ("rounds", Right),
        ("verdict", Left),
    ]);
    for r in &results.rivals {
        let (r, _) = costlier_first(r);
        let pair = format!("{} / {}", r.framework.name(), r.against.name());
        t.row(&[
            &format!("`{}`", r.route),
            &pair,
            &times(r.cpu_ratio),
            &times(r.rate_ratio),
            &r.rounds,
            &verdict(&r, r.standing),
        ]);
    }
    let m = results.rivals[0].tie_margin_percent;
    format!("{}\n{}", t.finish(), rivals_note(m))
}

/// What the head-to-head columns mean, with the tie margin `m`, percent.
fn rivals_note(m: f64) -> String {
    format!(
        "Each pair's first framework costs more by the estimate. `server CPU per request`: its µs of server CPU per \
         successful request over the second's, per round (the servers side by side, loaded in turn in slices of one \
         alternation), geometric mean over the rounds with its 95 % Student-t interval; `requests/s`: its successful \
         requests per second over the second's, paired by blocks of slices, the interval over the rounds' processes. \
         A verdict names an order when the CPU interval excludes 1; a tie when the whole interval lies within ±{m} % \
         (inside [1/{b}, {b}]: two one-sided tests at 2.5 % each); unresolved otherwise.\n",
        b = 1.0 + m / 100.0
    )
}

/// The pairs of `first` and `second` side by side: each session's CPU
/// ratio, and the verdict on this machine, which is a session's only where
/// both give it.
pub fn confirmed_table(first: &Results, second: &Results) -> String {
    let both = confirmed(&first.rivals, &second.rivals);
    if both.is_empty() {
        return String::new();
    }
    let mut t = Table::of([
        ("route", Left),
        ("frameworks", Left),
        ("server CPU per request, first session", Right),
        ("second session", Right),
        ("verdict on this machine", Left),
    ]);
    for c in &both {
        let (a, turned) = costlier_first(&c.first);
        let b = c.second.as_ref().map(|b| if turned { costlier_first(b).0 } else { b.clone() });
        let turn = |s: Standing| if turned { s.reversed() } else { s };
        let on_machine = match c.standing() {
            Some(s) => verdict(&a, turn(s)),
            None => "unresolved on this machine".to_owned(),
        };
        let second = b.as_ref().map_or_else(|| "not measured".to_owned(), |b| times(b.cpu_ratio));
        let pair = format!("{} / {}", a.framework.name(), a.against.name());
        t.row(&[&format!("`{}`", a.route), &pair, &times(a.cpu_ratio), &second, &on_machine]);
    }
    format!("{}\n{}", t.finish(), confirmed_note(&both))
}

/// How many verdicts both sessions share, and what the rule is.
fn confirmed_note(both: &[Confirmed]) -> String {
    let agreed = both.iter().filter(|c| c.standing().is_some()).count();
    format!(
        "Ratios: the first framework's µs of server CPU per successful request over the second's, 95 % interval over \
         each session's rounds. A verdict stands where both sessions give the same one ({agreed} of {} pairs); \
         elsewhere the order is unresolved on this machine.\n",
        both.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::fixtures::results;

    use crate::results::fixtures::plaintext_pair as pair;

    #[test]
    fn the_costlier_framework_is_named_first_with_its_ratio_and_interval() {
        let mut r = results(Vec::new());
        assert_eq!(rivals_table(&r), "", "no frameworks scenario, no table");
        r.rivals = vec![
            pair(Framework::Axum, Framework::Rocket, 0.5, 0.4, 0.625),
            pair(Framework::Actix, Framework::Axum, 1.01, 0.98, 1.03),
            pair(Framework::Actix, Framework::Rocket, 0.9, 0.7, 1.1),
        ];
        let text = rivals_table(&r);
        assert!(
            text.contains("| `/plaintext` | rocket / axum | 2.00× [1.60 … 2.50] | 0.50× [0.40 … 0.62] | 6 | **rocket costs 2.00× axum's** |"),
            "{text}"
        );
        assert!(text.contains("| actix / axum | 1.01× [0.98 … 1.03] |"), "{text}");
        assert!(text.contains("| tie within ±5 % |"), "{text}");
        assert!(text.contains("| rocket / actix | 1.11× [0.91 … 1.43] |"), "{text}");
        assert!(text.contains("| unresolved |"), "{text}");
        assert!(text.contains("within ±5 % (inside [1/1.05, 1.05]"), "{text}");
    }

    #[test]
    fn two_sessions_keep_the_verdicts_they_share_and_call_the_others_unresolved_on_this_machine() {
        let (mut first, mut second) = (results(Vec::new()), results(Vec::new()));
        first.rivals = vec![
            pair(Framework::Axum, Framework::Rocket, 0.5, 0.45, 0.55),
            pair(Framework::Actix, Framework::Axum, 1.04, 1.01, 1.07),
        ];
        second.rivals = vec![
            pair(Framework::Rocket, Framework::Axum, 2.1, 1.9, 2.3),
            pair(Framework::Actix, Framework::Axum, 0.99, 0.97, 1.02),
        ];
        let text = confirmed_table(&first, &second);
        assert!(
            text.contains("| `/plaintext` | rocket / axum | 2.00× [1.82 … 2.22] | 2.10× [1.90 … 2.30] | **rocket costs 2.00× axum's** |"),
            "{text}"
        );
        assert!(
            text.contains("| actix / axum | 1.04× [1.01 … 1.07] | 0.99× [0.97 … 1.02] | unresolved on this machine |"),
            "{text}"
        );
        assert!(text.contains("(1 of 2 pairs)"), "{text}");
    }
}
