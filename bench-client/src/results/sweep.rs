//! The layer sweep: what one more state layer costs per request, from runs
//! at several layer counts.

use super::proportion::route_runs;
use super::{Results, cost_us};
use crate::analysis;
use crate::model::{Framework, Variant};

/// One layer count of a [`SweepLine`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPoint {
    /// State layers.
    pub layers: u16,
    /// Successful requests per second, geometric mean over rounds.
    pub rate_per_s: f64,
    /// Server CPU time per successful request, µs: the server's measured
    /// CPU use (or its CPU count when unknown) over the rate, geometric mean
    /// over rounds.
    pub cost_us: f64,
}

/// One framework and variant across the layer counts of a sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepLine {
    /// Framework.
    pub framework: Framework,
    /// Variant (`fat`, `arc`, `plaintext`, …).
    pub variant: Variant,
    /// One point per layer count, ascending.
    pub points: Vec<SweepPoint>,
    /// Least-squares slope of the cost per request over the layer count:
    /// what one layer adds, µs per request (`None` under two layer counts).
    pub added_per_layer_us: Option<f64>,
}

/// The layer sweep of `results`: one line per framework and variant with
/// runs at more than one layer count.
pub fn sweep(results: &Results) -> Vec<SweepLine> {
    let cpus = results.meta.server_cpus.len();
    let mut keys: Vec<(Framework, Variant)> = results.runs.iter().map(|r| (r.framework, r.variant)).collect();
    keys.sort_by_key(|&(framework, variant)| (framework, variant.name()));
    keys.dedup();
    keys.into_iter()
        .filter_map(|(framework, variant)| {
            let points: Vec<SweepPoint> = results
                .meta
                .layers
                .iter()
                .filter_map(|&layers| {
                    let runs = route_runs(results, framework, layers, variant);
                    let rates: Vec<f64> = runs.iter().filter_map(|f| f.requests_per_s).collect();
                    let costs: Vec<f64> = runs.iter().filter_map(|f| cost_us(f, cpus)).collect();
                    let rate_per_s = analysis::geometric_mean_interval(&rates).0;
                    (rate_per_s > 0.0).then(|| SweepPoint {
                        layers,
                        rate_per_s,
                        cost_us: analysis::geometric_mean_interval(&costs).0,
                    })
                })
                .collect();
            if points.len() < 2 {
                return None;
            }
            let xs: Vec<f64> = points.iter().map(|p| f64::from(p.layers)).collect();
            let ys: Vec<f64> = points.iter().map(|p| p.cost_us).collect();
            Some(SweepLine { framework, variant, added_per_layer_us: analysis::slope(&xs, &ys), points })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{results, run};

    #[test]
    fn a_layer_count_the_frameworks_scenario_measured_too_reads_the_route_s_own_scenario() {
        let f = Framework::Axum;
        let mut runs = Vec::new();
        for (scenario, layers, successful) in [("state", 0, 100_000), ("state", 10, 50_000), ("frameworks", 0, 25_000)]
        {
            let mut r = run(f, scenario, "arc", 1, successful, true);
            r.layers = layers;
            runs.push(r);
        }
        let mut r = results(runs);
        r.meta.layers = vec![0, 10];
        let lines = sweep(&r);
        assert_eq!(lines.len(), 1, "{lines:?}");
        let costs: Vec<(u16, String)> =
            lines[0].points.iter().map(|p| (p.layers, format!("{:.2}", p.cost_us))).collect();
        // The server 100 % busy: 10 µs per request at 0 layers, 20 at 10; not 20 (the head to head's 40 pooled in).
        assert_eq!(costs, [(0, "10.00".to_owned()), (10, "20.00".to_owned())]);
        assert_eq!(lines[0].added_per_layer_us.map(|us| format!("{us:.2}")), Some("1.00".to_owned()));
    }
}
