//! `bench-client compare A B`: did B (say, after a change) get slower or
//! faster than A, run type by run type, with 95 % intervals?
//!
//! Each run type (framework, scenario, variant) has one rate per round in
//! each file; the rounds of A and B are independent, so the change is
//! Welch's interval on the mean log rates ([`crate::analysis::unpaired_change`]).

use std::fmt::Write as _;
use std::path::Path;

use crate::analysis::{self, Change, Verdict};
use crate::plan::Framework;
use crate::report::change_with_ci;
use crate::results::{self, Results};

/// One run type present in both files.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Framework.
    pub framework: Framework,
    /// Scenario (`floor` for `/plaintext`).
    pub scenario: String,
    /// Variant.
    pub variant: String,
    /// State layers.
    pub layers: u16,
    /// Geometric mean of A's rates, requests per second.
    pub a_per_s: f64,
    /// Geometric mean of B's rates, requests per second.
    pub b_per_s: f64,
    /// From A to B.
    pub change: Change,
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
}

impl Comparison {
    /// Rows that are significant regressions larger than `threshold_percent`.
    pub fn regressions(&self, threshold_percent: f64) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| r.change.verdict == Verdict::Slower && r.change.change_percent < -threshold_percent)
            .collect()
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
                format!("pipeline {} rate_per_s {:?} nap_us {}", f.pipeline, f.rate_per_s, f.nap_us)
            })
            .collect();
        modes.sort();
        modes.dedup();
        modes.join("; ")
    };
    check("load engine", engine(a), engine(b));
    check("schema_version", a.schema_version.to_string(), b.schema_version.to_string());
    out
}

/// Matches the run types of `a` and `b` and computes each change.
pub fn compare(a: &Results, b: &Results) -> Comparison {
    let mut keys: Vec<(Framework, u16, String, String)> =
        a.runs.iter().map(|r| (r.framework, r.layers, r.scenario.clone(), r.variant.clone())).collect();
    keys.sort();
    keys.dedup();
    let rates = |res: &Results, k: &(Framework, u16, String, String)| -> Vec<f64> {
        res.runs
            .iter()
            .filter(|r| r.framework == k.0 && r.layers == k.1 && r.scenario == k.2 && r.variant == k.3)
            .filter(|r| r.figures.usable())
            .map(|r| r.figures.requests_per_s)
            .collect()
    };
    let mut missing_in_b = Vec::new();
    let rows = keys
        .into_iter()
        .filter_map(|k| {
            let (ra, rb) = (rates(a, &k), rates(b, &k));
            if ra.is_empty() {
                return None;
            }
            if rb.is_empty() {
                missing_in_b.push(format!("{} {} layers {}/{}", k.0.name(), k.1, k.2, k.3));
                return None;
            }
            Some(Row {
                a_per_s: analysis::geometric_mean_interval(&ra).0,
                b_per_s: analysis::geometric_mean_interval(&rb).0,
                change: analysis::unpaired_change(&ra, &rb),
                framework: k.0,
                layers: k.1,
                scenario: k.2,
                variant: k.3,
            })
        })
        .collect();
    Comparison { differences: differences(a, b), rows, missing_in_b }
}

/// How a `compare` invocation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// No significant regression beyond the threshold.
    NoRegression,
    /// At least one.
    Regression,
    /// The settings differ and `--force` was not given, or a run type has
    /// under two rounds on a side (no interval, so no verdict).
    Refused,
}

/// Reads both files, prints the table, and says how it ended.
///
/// # Errors
/// A file that cannot be read or parsed (named in the message).
pub fn run(a: &Path, b: &Path, threshold_percent: f64, force: bool) -> anyhow::Result<Outcome> {
    let (ra, rb) = (results::load(a)?, results::load(b)?);
    let cmp = compare(&ra, &rb);
    if !cmp.differences.is_empty() {
        eprintln!("the two runs differ in their settings:");
        for d in &cmp.differences {
            eprintln!("  {d}");
        }
        if !force {
            eprintln!("error: refusing to compare runs with different settings (pass --force to compare anyway)");
            return Ok(Outcome::Refused);
        }
    }
    let mut out = format!(
        "A: {}\nB: {}\n\n| framework | layers | scenario | variant | A requests/s | B requests/s | change [95 % CI] | verdict |\n|---|--:|---|---|--:|--:|--:|---|\n",
        a.display(),
        b.display()
    );
    for r in &cmp.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {:.0} | {} | {} |",
            r.framework.name(),
            r.layers,
            r.scenario,
            r.variant,
            r.a_per_s,
            r.b_per_s,
            change_with_ci(&r.change),
            r.change.verdict.label()
        );
    }
    println!("{out}");
    for m in &cmp.missing_in_b {
        println!("REGRESSION: {m} has no usable run in B (failed, missing or without a successful request)");
    }
    let regressions = cmp.regressions(threshold_percent);
    if regressions.is_empty() && cmp.missing_in_b.is_empty() && !cmp.undecidable().is_empty() {
        eprintln!(
            "error: some run types have under two rounds on a side: no interval, no verdict (rerun with --rounds 2 or more)"
        );
        return Ok(Outcome::Refused);
    }
    if regressions.is_empty() && cmp.missing_in_b.is_empty() {
        println!("no significant regression beyond {threshold_percent} %");
        Ok(Outcome::NoRegression)
    } else {
        for r in &regressions {
            println!("REGRESSION: {} {}/{} {}", r.framework.name(), r.scenario, r.variant, change_with_ci(&r.change));
        }
        Ok(Outcome::Regression)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{results, run};

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
        let cmp = compare(&a, &b);
        assert!(cmp.rows.is_empty());
        assert_eq!(cmp.missing_in_b.len(), 2, "{:?}", cmp.missing_in_b);

        let one = results(rounds(Framework::Axum, "per_request", &[500]));
        let cmp = compare(&a, &one);
        assert_eq!(cmp.undecidable().len(), 1, "one round: no interval");
        assert!(cmp.regressions(2.0).is_empty());

        let slower = results(
            [
                rounds(Framework::Axum, "per_request", &[800, 810, 790]),
                rounds(Framework::Actix, "per_request", &[900, 905, 895]),
            ]
            .concat(),
        );
        let cmp = compare(&a, &slower);
        let reg = cmp.regressions(2.0);
        assert_eq!(reg.len(), 1);
        assert_eq!(reg[0].framework, Framework::Axum);
        assert!(cmp.regressions(25.0).is_empty(), "−20 % is within a 25 % threshold");
    }

    #[test]
    fn differing_settings_are_listed() {
        let a = results(rounds(Framework::Axum, "per_request", &[1, 2]));
        let mut b = a.clone();
        b.meta.profiler = Some("perf".to_owned());
        b.meta.timeout_s = 5.0;
        let d = compare(&a, &b).differences;
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d.iter().any(|l| l.starts_with("profiler")) && d.iter().any(|l| l.starts_with("timeout_s")));
    }
}
