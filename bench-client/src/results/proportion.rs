//! Every route in proportion: µs of server CPU per successful request for
//! each route measured, and what each delta saves per request as a share of
//! a request that does real work (`/fortunes`: a SQLite read, a sort and an
//! HTML page), so that "+9 %" on a 271-byte answer can be read against it.

use super::{Delta, Results};
use crate::analysis;
use crate::measure::RunFigures;
use crate::model::{Framework, Scenario, Variant};

/// Server CPU time per successful request of one run, µs: the server's
/// measured CPU use (all of its `server_cpus` when it was not sampled) over
/// its rate. The cost the layer sweep and the proportion tables share;
/// `None` without a rate above 0 (no request to share the CPU among).
pub fn cost_us(figures: &RunFigures, server_cpus: usize) -> Option<f64> {
    let busy = figures.server_cpu_percent.map_or(server_cpus.max(1) as f64, |p| p / 100.0);
    figures.requests_per_s.filter(|&rate| rate > 0.0).map(|rate| busy * 1e6 / rate)
}

/// One route's cost in one framework at one layer count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RouteCost {
    /// Framework.
    pub framework: Framework,
    /// State layers the server ran with.
    pub layers: u16,
    /// The route measured.
    pub variant: Variant,
    /// Server CPU per successful request, µs: geometric mean over the
    /// usable runs (complete, with successes).
    pub cost_us: f64,
    /// Runs it is computed from.
    pub runs: usize,
}

/// The usable runs that stand for one route of `framework` at `layers`
/// (`ab` runs, `before`/`after`, left out): those of its framework's own
/// scenario (the runs a delta of it pairs), or, when only the head-to-head
/// `frameworks` scenario measured it, those; never both pooled, for the two
/// are other processes, loaded in other alternations.
pub(super) fn route_runs(results: &Results, framework: Framework, layers: u16, variant: Variant) -> Vec<&RunFigures> {
    let of_route = || {
        results.runs.iter().filter(move |r| {
            !matches!(r.scenario, Scenario::Before | Scenario::After)
                && (r.framework, r.layers, r.variant) == (framework, layers, variant)
        })
    };
    let within = of_route().any(|r| r.scenario != Scenario::Frameworks);
    of_route()
        .filter(|r| within != (r.scenario == Scenario::Frameworks))
        .map(|r| &r.figures)
        .filter(|f| f.usable())
        .collect()
}

/// The cost of every route measured, per framework and layer count (in
/// the order of [`Variant::MEASURED`]), from its runs as `route_runs` picks them.
pub fn route_costs(results: &Results) -> Vec<RouteCost> {
    let cpus = results.meta.server_cpus.len();
    let mut keys: Vec<(Framework, u16, usize, Variant)> = results
        .runs
        .iter()
        .filter(|r| !matches!(r.scenario, Scenario::Before | Scenario::After))
        .map(|r| {
            (r.framework, r.layers, Variant::MEASURED.iter().position(|v| *v == r.variant).unwrap_or(0), r.variant)
        })
        .collect();
    keys.sort_by_key(|&(f, l, i, _)| (f, l, i));
    keys.dedup();
    keys.into_iter()
        .filter_map(|(framework, layers, _, variant)| {
            let costs: Vec<f64> =
                route_runs(results, framework, layers, variant).into_iter().filter_map(|f| cost_us(f, cpus)).collect();
            let cost_us = analysis::geometric_mean_interval(&costs).0;
            (cost_us > 0.0 && cost_us.is_finite()).then_some(RouteCost {
                framework,
                layers,
                variant,
                cost_us,
                runs: costs.len(),
            })
        })
        .collect()
}

/// One delta in proportion.
#[derive(Debug, Clone, PartialEq)]
pub struct DeltaCost<'a> {
    /// The delta.
    pub delta: &'a Delta,
    /// Cost of its baseline route, µs per request.
    pub before_us: f64,
    /// Cost of its changed route, µs per request.
    pub after_us: f64,
    /// `before_us − after_us`: what the change saves per request (negative:
    /// what it adds).
    pub saved_us: f64,
    /// `saved_us` over the cost of a `/fortunes` request of the same
    /// framework and layer count, percent; `None` when `/fortunes` was not
    /// measured.
    pub share_of_fortunes_percent: Option<f64>,
}

/// Every delta of `results` whose two routes have a cost, with what it
/// saves per request and that saving's share of a `/fortunes` request.
pub fn delta_costs<'a>(results: &'a Results, costs: &[RouteCost]) -> Vec<DeltaCost<'a>> {
    let cost = |f: Framework, l: u16, v: Variant| {
        costs.iter().find(|c| c.framework == f && c.layers == l && c.variant == v).map(|c| c.cost_us)
    };
    results
        .deltas
        .iter()
        .filter(|d| d.scenario != Scenario::After)
        .filter_map(|d| {
            let (from, to) = (Variant::of_label(&d.from)?, Variant::of_label(&d.to)?);
            let (before_us, after_us) = (cost(d.framework, d.layers, from)?, cost(d.framework, d.layers, to)?);
            let saved_us = before_us - after_us;
            let fortunes = cost(d.framework, d.layers, Variant::Fortunes);
            Some(DeltaCost {
                delta: d,
                before_us,
                after_us,
                saved_us,
                share_of_fortunes_percent: fortunes.map(|f| saved_us / f * 100.0),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixtures::{results, run};

    /// A run of `successful` requests in 1 s with the server `busy` percent busy.
    fn costed(
        f: Framework,
        scenario: &str,
        variant: &str,
        round: u32,
        successful: u64,
        busy: f64,
    ) -> super::super::RunRecord {
        let mut r = run(f, scenario, variant, round, successful, true);
        r.figures.server_cpu_percent = Some(busy);
        r
    }

    /// Two rounds of `f`, each a [`costed`] run of every (scenario, variant, successful, busy).
    fn two_rounds(f: Framework, each: &[(&str, &str, u64, f64)]) -> Vec<super::super::RunRecord> {
        (1..=2).flat_map(|round| each.iter().map(move |&(s, v, n, busy)| costed(f, s, v, round, n, busy))).collect()
    }

    #[test]
    fn every_route_costs_server_cpu_over_rate_and_deltas_read_against_fortunes() {
        let r = results(two_rounds(
            Framework::Axum,
            &[
                ("floor", "plaintext", 100_000, 100.0),        // 10 µs
                ("payload", "per_request", 80_000, 100.0),     // 12.5 µs
                ("payload", "preserialized", 100_000, 100.0),  // 10 µs
                ("fortunes", "fortunes", 20_000, 100.0),       // 50 µs
                ("fortunes", "fortunes_cached", 50_000, 50.0), // 10 µs, half busy
            ],
        ));
        let costs = route_costs(&r);
        let by = |v: Variant| costs.iter().find(|c| c.variant == v).unwrap().cost_us;
        assert_eq!(
            costs.iter().map(|c| c.variant).collect::<Vec<_>>(),
            [
                Variant::Plaintext,
                Variant::PerRequest,
                Variant::Preserialized,
                Variant::Fortunes,
                Variant::FortunesCached
            ],
            "in the order of the route table"
        );
        for (v, us) in [
            (Variant::Plaintext, 10.0),
            (Variant::PerRequest, 12.5),
            (Variant::Preserialized, 10.0),
            (Variant::Fortunes, 50.0),
            (Variant::FortunesCached, 10.0),
        ] {
            assert!((by(v) - us).abs() < 1e-9, "{v}: {} µs", by(v));
        }
        let deltas = delta_costs(&r, &costs);
        let preserialized = deltas.iter().find(|d| d.delta.to == "/api/devices/preserialized").unwrap();
        assert!((preserialized.saved_us - 2.5).abs() < 1e-9);
        assert!((preserialized.share_of_fortunes_percent.unwrap() - 5.0).abs() < 1e-9, "2.5 of 50 µs");
        let cached = deltas.iter().find(|d| d.delta.to == "/fortunes/cached").unwrap();
        assert!((cached.share_of_fortunes_percent.unwrap() - 80.0).abs() < 1e-9);
    }

    #[test]
    fn a_route_the_frameworks_scenario_measured_too_costs_what_its_own_scenario_measured() {
        let r = results(two_rounds(
            Framework::Actix,
            &[
                ("payload", "per_request", 80_000, 100.0),    // 12.5 µs
                ("payload", "preserialized", 100_000, 100.0), // 10 µs
                // Head to head: the same two routes, and one only it measured.
                ("frameworks", "per_request", 50_000, 100.0),    // 20 µs
                ("frameworks", "preserialized", 200_000, 100.0), // 5 µs
                ("frameworks", "arc", 40_000, 100.0),            // 25 µs
            ],
        ));
        let costs = route_costs(&r);
        let by = |v: Variant| costs.iter().find(|c| c.variant == v).map(|c| (format!("{:.6}", c.cost_us), c.runs));
        assert_eq!(by(Variant::PerRequest), Some(("12.500000".into(), 2)), "payload's runs alone");
        assert_eq!(by(Variant::Preserialized), Some(("10.000000".into(), 2)));
        assert_eq!(by(Variant::Arc), Some(("25.000000".into(), 2)), "measured head to head only");
        let deltas = delta_costs(&r, &costs);
        let preserialized = deltas.iter().find(|d| d.delta.to == "/api/devices/preserialized").unwrap();
        assert!((preserialized.saved_us - 2.5).abs() < 1e-9, "12.5 → 10 µs: {preserialized:?}");
    }

    #[test]
    fn without_fortunes_there_is_no_share_and_unusable_runs_cost_nothing() {
        let f = Framework::Actix;
        let runs = vec![
            costed(f, "state", "fat", 1, 50_000, 100.0),
            costed(f, "state", "arc", 1, 100_000, 100.0),
            run(f, "floor", "plaintext", 1, 0, false),
        ];
        let r = results(runs);
        let costs = route_costs(&r);
        assert!(costs.iter().all(|c| c.variant != Variant::Plaintext), "no usable floor run: {costs:?}");
        let deltas = delta_costs(&r, &costs);
        assert_eq!(deltas.len(), 1);
        assert!((deltas[0].saved_us - 10.0).abs() < 1e-9);
        assert_eq!(deltas[0].share_of_fortunes_percent, None);
    }
}
