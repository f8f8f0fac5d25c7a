//! The tables that answer "is it faster?": the suite's deltas with their
//! intervals, verdicts, floors and notes, `ab`'s per-route deltas, and
//! `compare`'s table of two results files.

use std::fmt::Write as _;
use std::path::Path;

use super::format::{ABSENT, change_with_ci, ms, opt_percent, or_absent, verdict_within};
use super::notes;
use super::table::Table;
use crate::analysis::{self, Verdict, median};
use crate::measure::{RunFigures, SATURATED_PERCENT};
use crate::model::{Framework, Pairing, Profile, Scenario};
use crate::results::{AbMeta, Comparison, Delta, Results, cost_us};

/// `+4.40 µs [+3.90 … +4.90]`: server CPU saved per request with its
/// interval; `-` without the server's CPU.
pub(super) fn saved_with_ci(d: &Delta) -> String {
    match (d.saved_us, d.saved_ci_us) {
        (Some(s), Some((low, high))) => format!("{s:+.2} µs [{low:+.2} … {high:+.2}]"),
        (Some(s), None) => format!("{s:+.2} µs"),
        (None, _) => ABSENT.to_owned(),
    }
}

/// A rate in requests per second; `-` when the file has none (before schema 11).
fn rate(per_s: f64) -> String {
    if per_s > 0.0 { format!("{per_s:.0}") } else { ABSENT.to_owned() }
}

/// The trust flags of the runs behind `d` (its framework, layers, scenario
/// and two routes): `client-bound`, `drift`, `short` (a shortfall such as a
/// schedule fallen behind), `waited on server` (open loop: requests due while
/// every connection waited on it), `failures`; `–` when none.
fn flags(results: &Results, d: &Delta) -> String {
    let runs: Vec<&RunFigures> = results
        .runs
        .iter()
        .filter(|r| r.framework == d.framework && r.layers == d.layers && (r.route == d.from || r.route == d.to))
        .filter(|r| r.scenario == d.scenario || (d.scenario == Scenario::After && r.scenario == Scenario::Before))
        .map(|r| &r.figures)
        .collect();
    let any = |test: fn(&RunFigures) -> bool| runs.iter().any(|f| test(f));
    let found: Vec<&str> = [
        ("client-bound", any(|f| f.client_bound)),
        ("drift", any(|f| f.drift)),
        ("short", any(|f| !f.shortfalls().is_empty())),
        ("waited on server", any(|f| f.rate_per_s.is_some() && f.counts.waited_on_server > 0)),
        ("failures", any(|f| f.failed.requests() > 0)),
    ]
    .into_iter()
    .filter_map(|(name, set)| set.then_some(name))
    .collect();
    if found.is_empty() { "–".to_owned() } else { found.join(", ") }
}

/// How connections were used: `, each closed after N responses` (and for TLS
/// whether sessions resumed), or nothing for keep-alive.
fn churn(m: &crate::results::Meta) -> String {
    let resumed = match m.tls_resumption {
        Some(true) => ", TLS sessions resumed",
        Some(false) => ", TLS sessions not resumed",
        None => "",
    };
    let nodelay = if m.tcp_nodelay { " · servers with TCP_NODELAY" } else { "" };
    match m.requests_per_connection {
        Some(n) => format!(" (each closed after {n} responses and opened again{resumed}){nodelay}"),
        None => nodelay.to_owned(),
    }
}

/// The delta table with intervals and verdicts, the floors, the saturation
/// and drift notes, as Markdown.
pub fn delta_table(results: &Results) -> String {
    let mut out = session_line(&results.meta);
    out.push_str(&deltas(results));
    out.push_str(&floor_table(results));
    out.push_str(&trust_notes(results));
    out
}

/// The line that says how the session measured: profile, connections,
/// windows, rounds, pairing, load and CPUs.
fn session_line(m: &crate::results::Meta) -> String {
    format!(
        "Profile `{}` · {} connections{} · {} s measured after {} s warm-up · {} rounds{}{} · server on CPU {:?}, client on CPU {:?}\n\n",
        m.profile.cargo_name(),
        m.connections,
        churn(m),
        m.duration_s,
        m.warmup_s,
        m.rounds,
        match (m.pairing, m.slice_s) {
            (Pairing::Slices, Some(slice)) => format!(" · variants alternating in slices of {} ms", slice * 1e3),
            _ => " · one run per variant".to_owned(),
        },
        m.load_percent.map_or_else(String::new, |p| format!(
            " · open loop at {p} % of the baseline's closed-loop rate (the rates are the offered ones: see the latency table)"
        )),
        m.server_cpus,
        m.client_cpus
    )
}

/// The deltas with their intervals and verdicts, and the notes that read
/// them; nothing for a head to head alone (its own table says it all).
fn deltas(results: &Results) -> String {
    let m = &results.meta;
    let mut out = String::new();
    let mut table = Table::new(&[
        "framework",
        "layers:",
        "scenario",
        "server CPU saved per request [95 % CI]:",
        "change [95 % CI]:",
        "verdict",
        "before (requests/s):",
        "after (requests/s):",
        "CV before / after:",
        "p99 before:",
        "p99 after:",
        "flags",
    ]);
    let threshold = m.threshold_percent;
    for d in &results.deltas {
        let verdict = match d.target_reached {
            Some(false) => format!("{} (target not reached: budget spent)", verdict_within(&d.change, threshold)),
            _ => verdict_within(&d.change, threshold),
        };
        table.row(&[
            &d.framework.name(),
            &d.layers,
            &format!("{} ({} → {})", d.scenario, d.from, d.to),
            &saved_with_ci(d),
            &change_with_ci(&d.change),
            &verdict,
            &rate(d.before_per_s),
            &rate(d.after_per_s),
            &format!("{} / {}", opt_percent(d.before_cv_percent), opt_percent(d.after_cv_percent)),
            &ms(d.before_p99_us),
            &ms(d.after_p99_us),
            &flags(results, d),
        ]);
    }
    if !results.deltas.is_empty() || results.rivals.is_empty() {
        out.push_str(&table.finish());
        out.push_str(match m.pairing {
            Pairing::Rounds => notes::DELTAS_BY_ROUNDS,
            Pairing::Slices if m.server_per_round => notes::DELTAS_BY_SLICES_PER_ROUND,
            Pairing::Slices => notes::DELTAS_BY_SLICES,
        });
        out.push_str(notes::SAVED_PER_REQUEST);
        out.push_str(notes::VERDICTS_AND_FLAGS);
        out.push_str(&resolution_note(results));
    }
    out
}

/// The floor (`/plaintext`) of each framework, median over rounds; nothing
/// without a floor.
fn floor_table(results: &Results) -> String {
    let mut out = String::new();
    let floors: Vec<_> = results.runs.iter().filter(|r| r.scenario == Scenario::Floor).collect();
    if !floors.is_empty() {
        out.push_str("\nFloor (`/plaintext`), median over rounds:\n\n");
        let mut table = Table::new(&["framework", "server CPU per request:", "successful:", "requests/s:", "p99:"]);
        let mut frameworks: Vec<Framework> = floors.iter().map(|r| r.framework).collect();
        frameworks.sort();
        frameworks.dedup();
        for f in frameworks {
            let runs: Vec<_> = floors.iter().filter(|r| r.framework == f).collect();
            // The median of the runs that measured it; none when none did.
            let col = |g: fn(&RunFigures) -> Option<f64>| {
                let measured: Vec<f64> = runs.iter().filter_map(|r| g(&r.figures)).collect();
                (!measured.is_empty()).then(|| median(&measured))
            };
            let cost = col(|f| f.server_cpu_percent.and_then(|_| cost_us(f, f.server_cpus.unwrap_or(1))));
            table.row(&[
                &f.name(),
                &or_absent(cost, |cost| format!("{cost:.2} µs")),
                &or_absent(col(|f| Some(f.successful as f64)), |n| format!("{n:.0}")),
                &or_absent(col(|f| f.requests_per_s), |r| format!("{r:.0}")),
                &or_absent(col(|f| f.latency_us.map(|l| l.p99 as f64)), ms),
            ]);
        }
        out.push_str(&table.finish());
    }
    out
}

/// What tells how far to trust the figures: the server's CPU busy, the
/// client's ceiling, drift, failed frameworks, a `dev` build.
fn trust_notes(results: &Results) -> String {
    let m = &results.meta;
    let mut out = String::new();
    let busy: Vec<f64> = results.runs.iter().filter_map(|r| r.figures.server_cpu_percent).collect();
    if !busy.is_empty() {
        let bound = results.runs.iter().filter(|r| r.figures.client_bound).count();
        let min = busy.iter().copied().fold(f64::INFINITY, f64::min);
        let _ = writeln!(
            out,
            "\nServer CPU busy over the measured windows: median {:.1} %, lowest {min:.1} % ({} CPU(s)); {}",
            median(&busy),
            m.server_cpus.len(),
            if bound == 0 {
                "every run saturated the server: the figures measure the server, not the client.".to_owned()
            } else {
                format!(
                    "**{bound} run(s) client-bound** (server under {} % busy): their figures may measure the client.",
                    SATURATED_PERCENT
                )
            }
        );
    }
    if let Some(ceiling) = m.client_ceiling_per_s {
        let fastest = results.runs.iter().filter_map(|r| r.figures.requests_per_s).fold(0.0, f64::max);
        let client_busy: Vec<f64> = results.runs.iter().filter_map(|r| r.figures.client_cpu_percent).collect();
        let _ = writeln!(
            out,
            "\nClient ceiling (`bench-client calibrate` at the start: the built-in canned responder, same connections and CPUs): {ceiling:.0} successful requests/s; the fastest run reached {:.0} % of it; the client's CPU was at most {:.0} % busy in any run.",
            fastest / ceiling * 100.0,
            client_busy.iter().copied().fold(0.0, f64::max)
        );
    }
    let drifting: Vec<String> = results
        .runs
        .iter()
        .filter(|r| r.figures.drift)
        .map(|r| format!("{} {}/{} round {}", r.framework.name(), r.scenario, r.variant, r.round))
        .collect();
    if !drifting.is_empty() {
        let _ = writeln!(
            out,
            "\nDrift (last third of the windows ≥ {} % below the first third, significant downward slope): {}",
            analysis::DRIFT_PERCENT,
            drifting.join(", ")
        );
    }
    for failure in &results.failures {
        let _ = writeln!(out, "\n**{} failed:** {}", failure.framework.name(), failure.error);
    }
    if m.profile == Profile::Dev {
        out.push_str("\n> Warning: `dev` builds are unoptimized and do not represent production.\n");
    }
    out
}

/// Which deltas' intervals are wider than the target half-width (the
/// run's `--target-ci-points`, else [`analysis::RESOLUTION_POINTS`]) and how many
/// rounds each would need; one line when all are within it.
fn resolution_note(results: &Results) -> String {
    let target = results.meta.target_ci_percent.unwrap_or(analysis::RESOLUTION_POINTS);
    // `ab`, pairing by rounds and a server per round compute their intervals over the rounds.
    let m = &results.meta;
    let over = if m.ab.is_none() && m.pairing == Pairing::Slices && !m.server_per_round {
        analysis::IntervalOver::Pairs
    } else {
        analysis::IntervalOver::Rounds
    };
    let wide: Vec<String> = results
        .deltas
        .iter()
        .filter_map(|d| {
            let needed = analysis::rounds_for(d.rounds, &d.change, target, over)?;
            Some(format!(
                "{} {} → {} ±{:.1} (≈ {needed} rounds)",
                d.framework.name(),
                d.from,
                d.to,
                analysis::half_width_points(&d.change)?
            ))
        })
        .collect();
    let unresolved = results.deltas.iter().filter(|d| analysis::half_width_points(&d.change).is_none()).count();
    let mut note = if wide.is_empty() {
        format!("\nResolution: every delta with an interval is within ±{target} point(s).\n")
    } else {
        format!(
            "\nResolution: wider than ±{target} point(s), with the rounds each would need ({}): {}.\n",
            match over {
                analysis::IntervalOver::Pairs => "its interval narrowing as 1/√rounds",
                analysis::IntervalOver::Rounds => "its interval narrowing as t(rounds − 1)/√rounds",
            },
            wide.join("; ")
        )
    };
    if unresolved > 0 {
        let _ = writeln!(note, "{unresolved} delta(s) have no interval (too few rounds or pairs).");
    }
    note
}

/// What the sides answer: the same bytes, or where they differ (each
/// side's responses were verified against its own answer either way).
fn answers_note(ab: &AbMeta, runs: usize) -> String {
    let status = if ab.expect_status == 200 { String::new() } else { format!(" with status {}", ab.expect_status) };
    if ab.changes.is_empty() && runs == 0 {
        return String::new();
    }
    if ab.changes.is_empty() {
        return format!("\nBoth sides answer every route{status} with the same bytes.\n");
    }
    let mut out =
        format!("\nThe sides answer differently{status}; each side's responses were verified against its own:\n\n");
    for c in &ab.changes {
        let _ = writeln!(out, "- {} `{}`: {}", c.framework.name(), c.route, c.change);
    }
    out
}

/// The table of `bench-client ab`: per framework and route, BEFORE's and
/// AFTER's successful requests, the paired change with its interval and
/// verdict, and the saturation note; empty for a suite's results.
pub fn ab_table(results: &Results) -> String {
    let Some(ab) = &results.meta.ab else { return String::new() };
    let m = &results.meta;
    let sides = if ab.before_commit == "command" {
        format!("BEFORE: `{}` · AFTER: `{}`", ab.before, ab.after)
    } else {
        format!(
            "BEFORE: {} ({}, {} layers) · AFTER: {} ({}, {} layers) · profile `{}`",
            ab.before,
            ab.before_commit,
            ab.before_layers,
            ab.after,
            ab.after_commit,
            ab.after_layers,
            m.profile.cargo_name()
        )
    };
    let mut out = format!(
        "{sides} · {} connections · {} rounds of {} s each side in slices of {} ms\n\n",
        m.connections,
        m.rounds,
        m.duration_s,
        m.slice_s.unwrap_or(0.0) * 1e3
    );
    let mut table = Table::new(&[
        "framework",
        "route",
        "server CPU saved per request [95 % CI]:",
        "change [95 % CI]:",
        "verdict",
        "before (requests/s):",
        "after (requests/s):",
        "pairs:",
        "p99 before:",
        "p99 after:",
        "flags",
    ]);
    for d in &results.deltas {
        table.row(&[
            &d.framework.name(),
            &d.to,
            &saved_with_ci(d),
            &change_with_ci(&d.change),
            &verdict_within(&d.change, m.threshold_percent),
            &rate(d.before_per_s),
            &rate(d.after_per_s),
            &d.pairs,
            &ms(d.before_p99_us),
            &ms(d.after_p99_us),
            &flags(results, d),
        ]);
    }
    out.push_str(&table.finish());
    out.push_str(&answers_note(ab, results.runs.len()));
    out.push_str(notes::AB);
    out.push_str(notes::SAVED_PER_REQUEST);
    out.push_str(notes::VERDICTS_AND_FLAGS);
    out.push_str(&resolution_note(results));
    let bound = results.runs.iter().filter(|r| r.figures.client_bound).count();
    if bound > 0 {
        let _ = writeln!(
            out,
            "\n**{bound} run(s) client-bound** (servers under {SATURATED_PERCENT} % busy in their slices): their figures may measure the client."
        );
    }
    for failure in &results.failures {
        let _ = writeln!(out, "\n**{} failed:** {}", failure.framework.name(), failure.error);
    }
    out
}

/// The table of `compare A B`: per run type, both rates and the change from
/// A to B with its interval and verdict, under the two files' names.
pub fn comparison_table(a: &Path, b: &Path, cmp: &Comparison) -> String {
    let mut out = format!("A: {}\nB: {}\n\n", a.display(), b.display());
    let mut table = Table::new(&[
        "framework",
        "layers:",
        "scenario",
        "variant",
        "A requests/s:",
        "B requests/s:",
        "change [95 % CI]:",
        "verdict",
    ]);
    for r in &cmp.rows {
        table.row(&[
            &r.key.framework.name(),
            &r.key.layers,
            &r.key.scenario,
            &r.key.variant,
            &format!("{:.0}", r.a_per_s),
            &format!("{:.0}", r.b_per_s),
            &change_with_ci(&r.change),
            &if cmp.judged(r) { r.change.verdict.label() } else { "not judged (session speed)" },
        ]);
    }
    out.push_str(&table.finish());
    if cmp.rows.iter().any(|r| r.against_floor) {
        out.push_str(&notes::against_floor(cmp.session_sd_percent));
    }
    out
}

/// What `compare`'s verdicts can resolve between two sessions, and, when
/// A and B ran the same code, the session SD their rows show.
pub fn comparison_notes(cmp: &Comparison) -> String {
    let mut out = format!(
        "Separate sessions: each run is measured against its round's floor (/plaintext), so a whole session \
         running slower cancels; what else moves a session (the layout its server processes drew) is taken as \
         a session SD of {:.1} % (--session-sd-percent). The judged rows resolve changes larger than ±{} % \
         (the narrowest row) to ±{} % (the widest); with this session SD no number of rounds resolves less \
         than ±{:.1} %. For a change of your own, `bench-client ab` (make ab) pairs BEFORE and AFTER in one \
         session, slice by slice.\n",
        cmp.session_sd_percent,
        or_absent(cmp.best_resolution_percent(), |p| format!("{p:.1}")),
        or_absent(cmp.resolution_percent(), |p| format!("{p:.1}")),
        cmp.session_floor_percent()
    );
    if let Some(observed) = cmp.observed_session_sd_percent {
        let _ = writeln!(
            out,
            "If A and B ran the same code, their judged rows show a session SD of {observed:.1} % beyond their \
             rounds: one pair is a noisy estimate, so pool several A/A pairs (the root of their mean square) and \
             lean cautious (docs/METHODOLOGY.md, “Comparing two results files”)."
        );
    }
    out
}

/// What `ab --aa` found over the `deltas` of `sessions` A/A sessions: the
/// share called faster or slower (false alarms: a 95 % interval expects
/// about 5 %), the half-widths (what this runner resolves in this time),
/// and the threshold that neither a false alarm nor an unresolved change
/// would cross.
pub fn aa_summary(deltas: &[Delta], sessions: u32) -> String {
    let judged: Vec<&Delta> = deltas.iter().filter(|d| d.change.ci_low_percent.is_some()).collect();
    if judged.is_empty() {
        return "A/A: no delta with an interval (2 rounds or more per session are needed)".to_owned();
    }
    let alarms: Vec<&&Delta> =
        judged.iter().filter(|d| matches!(d.change.verdict, Verdict::Faster | Verdict::Slower)).collect();
    let mut half: Vec<f64> =
        judged.iter().filter_map(|d| Some((d.change.ci_high_percent? - d.change.ci_low_percent?) / 2.0)).collect();
    half.sort_by(f64::total_cmp);
    let median = half[half.len() / 2];
    let widest = half[half.len() - 1];
    let largest_change = judged.iter().map(|d| d.change.change_percent.abs()).fold(0.0, f64::max);
    let mut out = format!(
        "A/A on this runner: {sessions} session(s), {} deltas of one build against itself.\n\
         False alarms: {} of {} ({:.1} %) called faster or slower (a 95 % interval expects about 5 %)",
        judged.len(),
        alarms.len(),
        judged.len(),
        100.0 * alarms.len() as f64 / judged.len() as f64
    );
    let named: Vec<String> =
        alarms.iter().map(|d| format!("{} {} {:+.1} %", d.framework.name(), d.to, d.change.change_percent)).collect();
    if !named.is_empty() {
        let _ = write!(out, ": {}", named.join(", "));
    }
    let threshold = widest.max(largest_change).ceil();
    let _ = write!(
        out,
        ".\nResolved in this time: ±{median:.1} points (median half-width), ±{widest:.1} at the widest; \
         the largest change seen {largest_change:.1} %.\n\
         --threshold-percent {threshold} or more fails a pull request only on a change this runner resolves."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Framework;
    use crate::results::RunRecord;
    use crate::results::fixtures::{results, run};

    /// Three rounds of `f`: `/state/fat` at 1,000 successful and `/state/arc` at
    /// `arcs[round - 1]`; `per_request` at 1,000 and `preserialized` at 1,100.
    fn state_and_payload(f: Framework, arcs: [u64; 3]) -> Vec<RunRecord> {
        let mut runs = Vec::new();
        for (round, arc) in (1..).zip(arcs) {
            runs.push(run(f, "state", "fat", round, 1000, true));
            runs.push(run(f, "state", "arc", round, arc, true));
            runs.push(run(f, "payload", "per_request", round, 1000, true));
            runs.push(run(f, "payload", "preserialized", round, 1100, true));
        }
        runs
    }

    #[test]
    fn delta_table_names_each_delta_wider_than_the_target_with_the_rounds_it_needs() {
        let f = Framework::Axum;
        // fat → arc: +20 %, +30 %, +25 % over three rounds, a wide interval;
        // per_request → preserialized: exactly +10 % every round, zero width.
        let mut r = results(state_and_payload(f, [1200, 1300, 1250]));
        let arc = r.deltas.iter().find(|d| d.to == "/state/arc").unwrap().clone();
        let half = analysis::half_width_points(&arc.change).unwrap();
        let needed = analysis::rounds_for(3, &arc.change, 1.0, analysis::IntervalOver::Rounds).unwrap();
        assert!(needed > 3 && needed < (3.0 * half * half).ceil() as u32, "t-aware: fewer than the pairs' rule");
        let table = delta_table(&r);
        let line = table.lines().find(|l| l.starts_with("Resolution:")).unwrap_or_else(|| panic!("{table}"));
        assert_eq!(
            line,
            format!(
                "Resolution: wider than ±1 point(s), with the rounds each would need (its interval narrowing as t(rounds − 1)/√rounds): axum /state/fat → /state/arc ±{half:.1} (≈ {needed} rounds)."
            )
        );
        r.meta.target_ci_percent = Some(half + 0.1);
        assert!(
            delta_table(&r).contains(&format!("Resolution: every delta with an interval is within ±{}", half + 0.1))
        );
        r.deltas.truncate(1);
        r.deltas[0].change.ci_low_percent = None;
        assert!(delta_table(&r).contains("1 delta(s) have no interval"), "{}", delta_table(&r));
    }

    #[test]
    fn rows_read_in_requests_per_second_an_interval_reaching_past_the_threshold_is_inconclusive_and_flags_sit_on_their_row()
     {
        let f = Framework::Axum;
        // fat → arc: +0 %, +40 %, −30 %: no change found, a wide interval.
        let mut runs = state_and_payload(f, [1000, 1400, 700]);
        // One run of the payload scenario measured the client.
        runs[2].figures.client_bound = true;
        let mut r = results(runs);
        r.meta.threshold_percent = Some(2.0);
        let table = delta_table(&r);
        let row = |to: &str| table.lines().find(|l| l.contains(to)).unwrap_or_else(|| panic!("{table}")).to_owned();
        let arc = r.deltas.iter().find(|d| d.to == "/state/arc").unwrap();
        let (low, high) = (arc.change.ci_low_percent.unwrap(), arc.change.ci_high_percent.unwrap());
        let reach = low.abs().max(high.abs());
        assert!(low < 0.0 && high > 0.0 && reach > 2.0, "{:?}", arc.change);
        assert!(row("/state/arc").contains(&format!("| inconclusive (±{reach:.1} %) |")), "{}", row("/state/arc"));
        assert!(
            row("/state/arc").ends_with("| 1000 | 1000 | 0.0 % / 34.0 % | 0.10 ms | 0.10 ms | – |"),
            "{}",
            row("/state/arc")
        );
        assert!(row("/api/devices/preserialized").contains("| **faster** |"));
        assert!(
            row("/api/devices/preserialized")
                .ends_with("| 1000 | 1100 | 0.0 % / 0.0 % | 0.10 ms | 0.10 ms | client-bound |")
        );
        r.meta.threshold_percent = None;
        assert!(delta_table(&r).contains("| no significant change |"), "without a threshold, the plain verdict");
    }
}
