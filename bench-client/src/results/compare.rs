//! The comparison of two results (`bench-client compare A B`): did B (say,
//! after a change) get slower or faster than A, run type by run type, with
//! 95 % intervals?
//!
//! Each run type (framework, scenario, variant) has one rate per round in
//! each file; the rounds of A and B are independent, so the change is
//! Welch's interval on the mean log rates. Between two sessions, each
//! session's own offset (a speed phase, the layout a server process drew)
//! moves every round of it alike, which its rounds cannot show: the
//! interval adds an assumed session-to-session SD per side
//! ([`crate::analysis::unpaired_change_across_sessions`]), and the
//! comparison estimates that SD from the two files for an A/A pair.

use super::{Results, RunRecord};
use crate::analysis::{self, Change, Verdict};
use crate::engine::Protocol;
use crate::model::{RunKey, Scenario};

/// One run type present in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Framework, layers, scenario (`floor` for `/plaintext`) and variant.
    pub key: RunKey,
    /// Geometric mean of A's rates, requests per second.
    pub a_per_s: f64,
    /// Geometric mean of B's rates, requests per second.
    pub b_per_s: f64,
    /// From A to B (on the rates over the floor when `against_floor`).
    pub change: Change,
    /// The change was computed on each run's rate over its round's floor.
    pub against_floor: bool,
}

/// What [`compare`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Settings that differ between the two runs, one line each.
    pub differences: Vec<String>,
    /// Run types with usable runs in both files.
    pub rows: Vec<Row>,
    /// Run types with usable runs in A but none in B (failed, missing or
    /// without a successful request): counted as regressions.
    pub missing_in_b: Vec<String>,
    /// The session-to-session SD assumed in the judged rows' intervals,
    /// percent per session (0 for runs of one session).
    pub session_sd_percent: f64,
    /// The session-to-session SD the judged rows show, percent per session
    /// ([`analysis::session_sd_estimate`]): if A and B ran the same code (an
    /// A/A pair), the value to assume on this machine. `None` without a row
    /// of two rounds a side.
    pub observed_session_sd_percent: Option<f64>,
}

impl Comparison {
    /// Whether `row` gets a verdict: with a floor basis only the rows over
    /// the floor do (the floor rows show how fast each session ran).
    pub fn judged(&self, row: &Row) -> bool {
        row.against_floor || !self.rows.iter().any(|o| o.against_floor)
    }

    /// The widest interval half-width among the judged rows, percentage
    /// points: changes smaller than this cannot be resolved in every row.
    pub fn resolution_percent(&self) -> Option<f64> {
        self.half_widths().fold(None, |m, w| Some(m.map_or(w, |m: f64| m.max(w))))
    }

    /// The narrowest interval half-width among the judged rows, percentage
    /// points: the smallest change any row of these files resolves.
    pub fn best_resolution_percent(&self) -> Option<f64> {
        self.half_widths().fold(None, |m, w| Some(m.map_or(w, |m: f64| m.min(w))))
    }

    /// The half-width, percentage points, that the session SD alone gives a
    /// row however many rounds it has: `100 · sinh(z · √2 · ln(1 + sd))`.
    pub fn session_floor_percent(&self) -> f64 {
        let z = analysis::normal_quantile();
        (z * 2.0f64.sqrt() * (self.session_sd_percent / 100.0).ln_1p()).sinh() * 100.0
    }

    fn half_widths(&self) -> impl Iterator<Item = f64> + '_ {
        self.rows
            .iter()
            .filter(|r| self.judged(r))
            .filter_map(|r| Some((r.change.ci_high_percent? - r.change.ci_low_percent?) / 2.0))
    }

    /// Rows for which no interval can be given (under two rounds on a side).
    pub fn undecidable(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| r.change.verdict == Verdict::TooFewRounds).collect()
    }
}

/// Settings that make two runs incomparable when they differ.
fn differences(a: &Results, b: &Results) -> Vec<String> {
    let (ma, mb) = (&a.meta, &b.meta);
    let mut out = Vec::new();
    let mut check = |name: &str, x: String, y: String| {
        if x != y {
            out.push(format!("{name}: {x} vs {y}"));
        }
    };
    check("profile", ma.profile.cargo_name().to_owned(), mb.profile.cargo_name().to_owned());
    check("duration_s", ma.duration_s.to_string(), mb.duration_s.to_string());
    check("warmup_s", ma.warmup_s.to_string(), mb.warmup_s.to_string());
    check("window_s", ma.window_s.to_string(), mb.window_s.to_string());
    check("connections", ma.connections.to_string(), mb.connections.to_string());
    check("layers", format!("{:?}", ma.layers), format!("{:?}", mb.layers));
    check("timeout_s", ma.timeout_s.to_string(), mb.timeout_s.to_string());
    check("profiler", format!("{:?}", ma.profiler), format!("{:?}", mb.profiler));
    check("cpu_model", ma.cpu_model.clone(), mb.cpu_model.clone());
    check("cores", ma.cores.to_string(), mb.cores.to_string());
    check("server_cpus", format!("{:?}", ma.server_cpus), format!("{:?}", mb.server_cpus));
    check("client_cpus", format!("{:?}", ma.client_cpus), format!("{:?}", mb.client_cpus));
    // The load engine's mode: a different one changes what the server pays per request.
    let engine = |r: &Results| {
        let mut modes: Vec<String> = r
            .runs
            .iter()
            .map(|run| {
                let f = &run.figures;
                let http2 = match f.protocol {
                    Protocol::Http1 => "",
                    Protocol::Http2 => " http2",
                };
                format!("pipeline {}{http2} rate_per_s {:?} nap_us {}", f.pipeline, f.rate_per_s, f.nap_us)
            })
            .collect();
        modes.sort();
        modes.dedup();
        modes.join("; ")
    };
    check("load engine", engine(a), engine(b));
    // The file format's version is not a setting: an older file reads as a newer one does.
    out
}

/// The session-to-session SD `compare` assumes by default, percent per
/// session, on the rate over the floor. From this project's 2-core VM
/// (docs/CLIENT.md, `compare`): six A/A pairs of suites gave pair estimates of
/// 0.0–1.0 % (pooled, the root of the mean square: 0.5 %); per run type over
/// three sessions the largest was 1.9 %; in `ab`, one server process differs
/// from another of the same binary by about 1.9 % (the floor cancels part of
/// that). 1.5 % is a round value between the pooled estimate and the largest,
/// leaning to the cautious side. Another machine has its own: run the same
/// code twice, a few times, and pool the values `compare` reports.
pub const SESSION_SD_PERCENT: f64 = 1.5;

/// What a comparison's rates are measured against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Basis {
    /// Each run's rate as measured, no session term: for runs of one session
    /// (e.g. the cost of profiling, measured in one `make bench-all`; its two
    /// builds are still two server processes, whose offset this leaves out).
    Raw,
    /// Each run's rate over its framework's floor (`/plaintext`) of the same
    /// round and file: a session that runs the whole machine slower or
    /// faster (a speed phase, another neighbour) moves both and cancels.
    /// Runs without a usable floor in their round are left out (a ratio and a
    /// raw rate do not mix); the floor rows themselves are raw. What the floor does not cancel is
    /// `session_sd_percent`, the SD of a session's offset (percent per
    /// session), added to each side of the rows over the floor.
    Floor {
        /// Session-to-session SD assumed, percent per session (0: none).
        session_sd_percent: f64,
    },
}

/// The usable runs of `key` in `res`, each its rate on `basis`: successful
/// requests per second, or over the floor of its round (left out without one).
fn rates_on(res: &Results, key: &RunKey, basis: Basis) -> Vec<f64> {
    res.runs
        .iter()
        .filter(|r| r.key() == *key && r.figures.usable())
        .filter_map(|r| match (basis, r.scenario) {
            (Basis::Floor { .. }, scenario) if scenario != Scenario::Floor => {
                Some(r.figures.requests_per_s? / floor_per_s(res, r)?)
            }
            _ => r.figures.requests_per_s,
        })
        .collect()
}

/// The rate of `run`'s floor (`/plaintext`): the usable run of its framework,
/// layers and round in the `floor` scenario of `res`.
fn floor_per_s(res: &Results, run: &RunRecord) -> Option<f64> {
    res.runs
        .iter()
        .find(|f| {
            f.scenario == Scenario::Floor
                && f.framework == run.framework
                && f.layers == run.layers
                && f.round == run.round
                && f.figures.usable()
        })
        .and_then(|f| f.figures.requests_per_s)
}

/// Matches the run types of `a` and `b` and computes each change on `basis`.
pub fn compare(a: &Results, b: &Results, basis: Basis) -> Comparison {
    let mut keys: Vec<RunKey> = a.runs.iter().map(|r| r.key()).collect();
    keys.sort();
    keys.dedup();
    let session_sd_percent = match basis {
        Basis::Floor { session_sd_percent } => session_sd_percent,
        Basis::Raw => 0.0,
    };
    let session_sd_log = (session_sd_percent / 100.0).ln_1p();
    let mut missing_in_b = Vec::new();
    // Each row's two series of rates, in the order of the rows.
    let mut rates_of_rows = Vec::new();
    let rows: Vec<Row> = keys
        .into_iter()
        .filter_map(|k| {
            let (ra, rb) = (rates_on(a, &k, basis), rates_on(b, &k, basis));
            if ra.is_empty() {
                return None;
            }
            if rb.is_empty() {
                missing_in_b.push(format!(
                    "{} {} layers {}/{}",
                    k.framework.name(),
                    k.layers,
                    k.scenario.name(),
                    k.variant.name()
                ));
                return None;
            }
            let against_floor = matches!(basis, Basis::Floor { .. }) && k.scenario != Scenario::Floor;
            let sd = if against_floor { session_sd_log } else { 0.0 };
            let change = analysis::unpaired_change_across_sessions(&ra, &rb, sd);
            rates_of_rows.push((ra, rb));
            Some(Row {
                a_per_s: analysis::geometric_mean_interval(&rates_on(a, &k, Basis::Raw)).0,
                b_per_s: analysis::geometric_mean_interval(&rates_on(b, &k, Basis::Raw)).0,
                change,
                against_floor,
                key: k,
            })
        })
        .collect();
    let mut cmp = Comparison {
        differences: differences(a, b),
        rows,
        missing_in_b,
        session_sd_percent,
        observed_session_sd_percent: None,
    };
    let judged: Vec<(&[f64], &[f64])> = cmp
        .rows
        .iter()
        .zip(&rates_of_rows)
        .filter(|(row, _)| cmp.judged(row))
        .map(|(_, (ra, rb))| (&ra[..], &rb[..]))
        .collect();
    cmp.observed_session_sd_percent = analysis::session_sd_estimate(&judged).map(|l| l.exp_m1() * 100.0);
    cmp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Better;
    use crate::model::Framework;
    use crate::results::fixtures::{results, run};

    /// The rows that gate, as `report::ci::gated` reads `judged_rows`: judged
    /// (with a floor basis, only the rows over the floor) and a regression.
    fn regressions(cmp: &Comparison, threshold_percent: f64) -> Vec<&Row> {
        cmp.rows.iter().filter(|r| cmp.judged(r) && r.change.is_regression(threshold_percent, Better::Higher)).collect()
    }

    fn rounds(f: Framework, variant: &str, counts: &[u64]) -> Vec<crate::results::RunRecord> {
        counts.iter().enumerate().map(|(i, &n)| run(f, "payload", variant, i as u32 + 1, n, true)).collect()
    }

    #[test]
    fn missing_zero_and_single_round_run_types_are_not_passed_silently() {
        let a = results(
            [
                rounds(Framework::Axum, "per_request", &[1000, 1010, 990]),
                rounds(Framework::Actix, "per_request", &[900, 910, 890]),
            ]
            .concat(),
        );
        // B lost actix entirely, and axum answered nothing.
        let b = results([rounds(Framework::Axum, "per_request", &[0, 0, 0])].concat());
        let cmp = compare(&a, &b, Basis::Raw);
        assert!(cmp.rows.is_empty());
        assert_eq!(cmp.missing_in_b.len(), 2, "{:?}", cmp.missing_in_b);

        let one = results(rounds(Framework::Axum, "per_request", &[500]));
        let cmp = compare(&a, &one, Basis::Raw);
        assert_eq!(cmp.undecidable().len(), 1, "one round: no interval");
        assert!(regressions(&cmp, 2.0).is_empty());

        let slower = results(
            [
                rounds(Framework::Axum, "per_request", &[800, 810, 790]),
                rounds(Framework::Actix, "per_request", &[900, 905, 895]),
            ]
            .concat(),
        );
        let cmp = compare(&a, &slower, Basis::Raw);
        let reg = regressions(&cmp, 2.0);
        assert_eq!(reg.len(), 1);
        assert_eq!(reg[0].key.framework, Framework::Axum);
        assert!(regressions(&cmp, 25.0).is_empty(), "−20 % is within a 25 % threshold");
    }

    #[test]
    fn with_a_floor_basis_only_the_rows_over_the_floor_are_judged_and_widened() {
        // Session B ran 10 % slower throughout: floor and route alike.
        let session = |scale: f64| {
            let mut runs = Vec::new();
            for (round, wiggle) in [(1, 0.99), (2, 1.01), (3, 0.99), (4, 1.01)] {
                runs.push(run(Framework::Axum, "floor", "plaintext", round, (20_000.0 * scale * wiggle) as u64, true));
                runs.push(run(
                    Framework::Axum,
                    "payload",
                    "per_request",
                    round,
                    (10_000.0 * scale * wiggle) as u64,
                    true,
                ));
            }
            results(runs)
        };
        let (a, b) = (session(1.0), session(0.9));
        let cmp = compare(&a, &b, Basis::Floor { session_sd_percent: 1.5 });
        assert_eq!(cmp.session_sd_percent, 1.5);
        let floor = cmp.rows.iter().find(|r| r.key.scenario == Scenario::Floor).unwrap();
        let route = cmp.rows.iter().find(|r| r.key.scenario != Scenario::Floor).unwrap();
        assert_eq!(floor.change.verdict, Verdict::Slower, "the session's speed, shown");
        assert!(!cmp.judged(floor) && cmp.judged(route));
        assert!(regressions(&cmp, 2.0).is_empty(), "the floor row is not a regression");
        // The route over its floor did not move at all: within the session term only.
        assert!(route.change.change_percent.abs() < 0.01, "{:?}", route.change);
        let half = cmp.resolution_percent().unwrap();
        let expected = 1.959_964 * 2.0f64.sqrt() * 1.015f64.ln() * 100.0;
        assert!(half > expected && half < expected + 0.2, "{half} against the term alone {expected}");
        // No spread in the rounds: the row is at the floor the session SD sets,
        // 100 · sinh(1.959964 · √2 · ln 1.015) = 4.128; one judged row, so best = widest.
        assert!((cmp.session_floor_percent() - 4.128).abs() < 0.001, "{}", cmp.session_floor_percent());
        assert!((half - cmp.session_floor_percent()).abs() < 0.01, "{half}");
        assert_eq!(cmp.best_resolution_percent(), cmp.resolution_percent());
        assert_eq!(cmp.observed_session_sd_percent, Some(0.0), "same ratio in every round");
        // The routes 10 % slower on a floor of the same speed: a change of the code.
        let mut slower = a.clone();
        for r in slower.runs.iter_mut().filter(|r| r.scenario != Scenario::Floor) {
            r.figures.requests_per_s = r.figures.requests_per_s.map(|rate| rate * 0.9);
        }
        let cmp = compare(&a, &slower, Basis::Floor { session_sd_percent: 1.5 });
        let route = cmp.rows.iter().find(|r| r.key.scenario != Scenario::Floor).unwrap();
        assert!((route.change.change_percent + 10.0).abs() < 0.01, "{:?}", route.change);
        assert_eq!(regressions(&cmp, 2.0).len(), 1);
        // The rates shown are the raw ones: the geometric mean of the rounds.
        let raw_mean = (10_000.0f64 * 0.99 * 10_000.0 * 1.01).sqrt();
        assert!((route.a_per_s - raw_mean).abs() < 1.0 && (route.b_per_s - 0.9 * raw_mean).abs() < 1.0, "{route:?}");
        // A round whose floor failed: its route run is left out, not mixed in raw.
        let mut lost = b.clone();
        lost.runs.retain(|r| !(r.scenario == Scenario::Floor && r.round == 4));
        let cmp = compare(&a, &lost, Basis::Floor { session_sd_percent: 1.5 });
        let route = cmp.rows.iter().find(|r| r.key.scenario != Scenario::Floor).unwrap();
        assert!(route.change.change_percent.abs() < 0.01, "three rounds of ratios: {:?}", route.change);
        // Raw: same session, no term; every row is judged, the floor's 10 % too.
        let raw = compare(&a, &b, Basis::Raw);
        assert_eq!((raw.session_sd_percent, raw.session_floor_percent()), (0.0, 0.0));
        // Two judged rows of different widths (B's floor lost a round): the
        // narrowest and the widest are the two rows' own half-widths.
        let uneven = compare(&a, &lost, Basis::Raw);
        let halves: Vec<f64> = uneven
            .rows
            .iter()
            .map(|r| (r.change.ci_high_percent.unwrap() - r.change.ci_low_percent.unwrap()) / 2.0)
            .collect();
        let (narrow, wide) = (halves[0].min(halves[1]), halves[0].max(halves[1]));
        assert!(narrow < wide, "{halves:?}");
        assert_eq!((uneven.best_resolution_percent(), uneven.resolution_percent()), (Some(narrow), Some(wide)));
        assert_eq!(regressions(&raw, 2.0).len(), 2);
        // A real offset inflates the estimate: (ln 0.9)² = 0.011101 less the
        // rounds' variance of the difference (±1 %: 2 × 0.000133/4 = 0.000067),
        // halved: e^√0.005517 − 1 = 7.71 %.
        let observed = raw.observed_session_sd_percent.unwrap();
        assert!((observed - 7.71).abs() < 0.02, "{observed}");
    }

    #[test]
    fn differing_settings_are_listed() {
        let a = results(rounds(Framework::Axum, "per_request", &[1, 2]));
        let mut b = a.clone();
        b.meta.profiler = Some("perf".to_owned());
        b.meta.timeout_s = 5.0;
        // An older file format is not a setting of the session.
        b.schema_version = a.schema_version - 4;
        let d = compare(&a, &b, Basis::Raw).differences;
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d.iter().any(|l| l.starts_with("profiler")) && d.iter().any(|l| l.starts_with("timeout_s")));
    }
}
