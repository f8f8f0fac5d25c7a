//! Service-level objectives judged on a run (`load --slo`), in the spirit of
//! k6's thresholds: a comma-separated list such as
//! `p99<2ms,p99.9<10ms,success>=99.9%`, every bound judged once the run
//! has ended, each verdict recorded in the result.
//!
//! A latency bound (`p50`, `p90`, `p99`, `p99.9`, `max`) takes a unit (`us`,
//! `µs`, `ms`, `s`) and is judged on the run's latency of successful
//! requests (corrected for coordinated omission in the open loop);
//! `success` takes a percentage and is the share of successful requests
//! among those settled in the measured windows.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::measure::RunFigures;

/// What a bound is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    /// A latency percentile, by its name (`p99.9` for the 99.9th).
    Latency(Percentile),
    /// Successful requests among those settled, percent.
    Success,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Percentile {
    P50,
    P90,
    P99,
    P999,
    Max,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn holds(self, actual: f64, bound: f64) -> bool {
        match self {
            Self::Lt => actual < bound,
            Self::Le => actual <= bound,
            Self::Gt => actual > bound,
            Self::Ge => actual >= bound,
        }
    }
}

/// One bound, as given (`p99<2ms`), checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Objective {
    text: String,
    metric: Metric,
    op: Op,
    /// Microseconds for a latency, percent for `success`.
    bound: f64,
}

/// What [`Objective::judge`] found, as `results.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SloVerdict {
    /// The bound as given, e.g. `p99<2ms`.
    pub objective: String,
    /// The run's value: microseconds for a latency, percent for `success`;
    /// `None` when the run has nothing to judge it on (no successful or no
    /// settled request).
    pub actual: Option<f64>,
    /// Whether the bound held (false without a value).
    pub met: bool,
}

/// The error of a list that is not one: the part that is wrong, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--slo {part:?}: {why} (e.g. 'p99<2ms,p99.9<10ms,success>=99.9%')")]
pub struct SloError {
    part: String,
    why: &'static str,
}

/// Parses a comma-separated list of bounds.
///
/// # Errors
/// An empty list or a bound that is not `METRIC OP VALUE[UNIT]`, naming it.
pub fn parse_slo(text: &str) -> Result<Vec<Objective>, SloError> {
    let objectives =
        text.split(',').map(str::trim).filter(|p| !p.is_empty()).map(str::parse).collect::<Result<Vec<_>, _>>()?;
    if objectives.is_empty() {
        return Err(SloError { part: text.to_owned(), why: "no bound given" });
    }
    Ok(objectives)
}

impl FromStr for Objective {
    type Err = SloError;

    fn from_str(text: &str) -> Result<Self, SloError> {
        let err = |why| SloError { part: text.to_owned(), why };
        let at = text.find(['<', '>']).ok_or_else(|| err("no comparison: <, <=, > or >="))?;
        let (name, rest) = (text[..at].trim(), &text[at..]);
        let (op, value) = match rest.as_bytes() {
            [b'<', b'=', ..] => (Op::Le, &rest[2..]),
            [b'>', b'=', ..] => (Op::Ge, &rest[2..]),
            [b'<', ..] => (Op::Lt, &rest[1..]),
            _ => (Op::Gt, &rest[1..]),
        };
        let metric = match name {
            "p50" => Metric::Latency(Percentile::P50),
            "p90" => Metric::Latency(Percentile::P90),
            "p99" => Metric::Latency(Percentile::P99),
            "p99.9" => Metric::Latency(Percentile::P999),
            "max" => Metric::Latency(Percentile::Max),
            "success" => Metric::Success,
            _ => return Err(err("unknown metric: p50, p90, p99, p99.9, max or success")),
        };
        let value = value.trim();
        let split = value.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(value.len());
        let (number, unit) = value.split_at(split);
        let number: f64 = number.parse().map_err(|_| err("no number after the comparison"))?;
        let bound = match (metric, unit.trim()) {
            (Metric::Success, "%") if number <= 100.0 => number,
            (Metric::Success, "%") => return Err(err("a share above 100 %")),
            (Metric::Success, _) => return Err(err("success is a percentage: success>=99.9%")),
            (Metric::Latency(_), "us" | "µs") => number,
            (Metric::Latency(_), "ms") => number * 1e3,
            (Metric::Latency(_), "s") => number * 1e6,
            (Metric::Latency(_), _) => return Err(err("a latency needs a unit: us, ms or s")),
        };
        Ok(Self { text: text.to_owned(), metric, op, bound })
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Objective {
    /// Judges `figures` against the bound.
    pub fn judge(&self, figures: &RunFigures) -> SloVerdict {
        let actual = match (self.metric, &figures.latency_us) {
            (Metric::Latency(_), None) => None,
            (Metric::Latency(p), Some(l)) => Some(match p {
                Percentile::P50 => l.p50,
                Percentile::P90 => l.p90,
                Percentile::P99 => l.p99,
                Percentile::P999 => l.p999,
                Percentile::Max => l.max,
            } as f64),
            (Metric::Success, _) => {
                let settled = figures.successful + figures.failed_total;
                (settled > 0).then(|| 100.0 * figures.successful as f64 / settled as f64)
            }
        };
        SloVerdict { objective: self.text.clone(), actual, met: actual.is_some_and(|a| self.op.holds(a, self.bound)) }
    }

    /// The unit its verdict's `actual` is in.
    pub fn unit(&self) -> &'static str {
        match self.metric {
            Metric::Latency(_) => "µs",
            Metric::Success => "%",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::run;

    #[test]
    fn bounds_parse_with_their_units_and_bad_ones_say_which_part() {
        let slo = parse_slo("p99<2ms, p99.9 <= 10ms,success>=99.9%,max<1.5s,p50>100us").unwrap();
        let bounds: Vec<(f64, Op)> = slo.iter().map(|o| (o.bound, o.op)).collect();
        assert_eq!(bounds, [(2e3, Op::Lt), (1e4, Op::Le), (99.9, Op::Ge), (1.5e6, Op::Lt), (100.0, Op::Gt)]);
        for (text, why) in [
            ("p99", "no comparison"),
            ("p42<2ms", "unknown metric"),
            ("p99<2", "a latency needs a unit"),
            ("p99<ms", "no number"),
            ("success>=99", "success is a percentage"),
            ("success>=101%", "above 100 %"),
            (" , ", "no bound given"),
        ] {
            let err = parse_slo(text).unwrap_err().to_string();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn every_bound_is_judged_on_the_runs_figures() {
        // 1,000 successful requests of 100 µs (the fixture's), 10 failed.
        let mut figures = run(crate::model::Framework::Axum, "payload", "per_request", 1, 1000, true).figures;
        figures.failed_total = 10;
        let verdicts: Vec<(Option<f64>, bool)> =
            parse_slo("p99<200us,p99<100us,p99<=100us,success>=99%,success>=99.5%")
                .unwrap()
                .iter()
                .map(|o| {
                    let v = o.judge(&figures);
                    (v.actual.map(|a| (a * 100.0).round() / 100.0), v.met)
                })
                .collect();
        assert_eq!(
            verdicts,
            [(Some(100.0), true), (Some(100.0), false), (Some(100.0), true), (Some(99.01), true), (Some(99.01), false)]
        );
        // Nothing succeeded: no latency measured (`None`), no share settled.
        (figures.successful, figures.failed_total, figures.latency_us) = (0, 0, None);
        let v = parse_slo("p99<1s").unwrap()[0].judge(&figures);
        assert_eq!((v.actual, v.met), (None, false), "nothing to judge is not met");
    }
}
