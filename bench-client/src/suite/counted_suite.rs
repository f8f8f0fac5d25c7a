//! `suite --count`: after the timed rounds, the routes of every delta
//! counted as `count` counts them, and each delta's counted change set
//! beside its timed one.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use common::Route;

use super::counted::{CountPlan, CountedServer, count, http2_label};
use super::plan::{CountSettings, SuitePlan};
use crate::model::{Framework, Variant};
use crate::results::{CountDelta, CountReport, Delta};

/// `suite --count`: after the timed rounds, counts the two routes of every
/// delta (plain HTTP; of the first layer count) in each framework that has
/// one, as a `count` session whose folder goes in the run folder `dir`,
/// and sets each delta's counted change: `to` against `from`, Welch's
/// interval over the repeats.
///
/// # Errors
/// As [`count`].
pub(super) fn count_suite(
    plan: &SuitePlan,
    settings: CountSettings,
    dir: &Path,
    deltas: &mut [Delta],
    stop: &AtomicBool,
) -> anyhow::Result<CountReport> {
    let layers = plan.layers.first().copied().unwrap_or_default();
    let mut frameworks: Vec<Framework> = Vec::new();
    let mut routes: Vec<&'static Route> = Vec::new();
    let mut http2_routes: Vec<&'static Route> = Vec::new();
    for d in deltas.iter().filter(|d| d.layers == layers) {
        let Some((from, to)) = counted_sides(d) else { continue };
        if !frameworks.contains(&d.framework) {
            frameworks.push(d.framework);
        }
        for (route, h2c) in [from, to] {
            if !routes.contains(&route) {
                routes.push(route);
            }
            if h2c && !http2_routes.contains(&route) {
                http2_routes.push(route);
            }
        }
    }
    let counted = CountPlan {
        profile: plan.profile,
        servers: frameworks.iter().map(|&f| CountedServer::framework(f, plan.profile, layers)).collect(),
        routes,
        requests: settings.requests,
        repeats: settings.repeats,
        layers,
        server_cpus: plan.server_cpus.clone(),
        build: false,
        out: dir.to_owned(),
        // The session's thread is pinned to the client's CPUs already.
        client_cpus: None,
        threshold_percent: plan.threshold_percent,
        pairs: Vec::new(),
        perf: settings.perf,
        http2_streams: if http2_routes.is_empty() { Vec::new() } else { vec![1] },
        http2_routes: Some(http2_routes),
    };
    let outcome = count(&counted, stop)?;
    for d in deltas.iter_mut().filter(|d| d.layers == layers) {
        let name = d.framework.name();
        let Some((from, to)) = counted_sides(d) else { continue };
        let row = |side| outcome.report.rows.iter().find(|r| r.framework == name && r.route == row_name(side));
        if let (Some(before), Some(after)) = (row(from), row(to)) {
            d.counted = Some(CountDelta {
                route: d.to.clone(),
                before: format!("{name} {}", d.from),
                after: format!("{name} {}", d.to),
                ..CountDelta::of(before, after)
            });
        }
    }
    Ok(outcome.report)
}

/// What a counted run loads for each side of `d`: the route of the table
/// and whether over h2c, when it can load both as they were timed (plain
/// HTTP/1.1 or h2c on the plain listener); `None` over TLS, for a variant
/// of no route of the table, or a delta read back from a file.
fn counted_sides(d: &Delta) -> Option<(Side, Side)> {
    let (from, to) = d.variants?;
    Some((counted_side(from)?, counted_side(to)?))
}

/// A route of the table, and whether it is loaded over h2c.
type Side = (&'static Route, bool);

/// [`counted_sides`] of one variant.
fn counted_side(variant: Variant) -> Option<Side> {
    if variant.tls() {
        return None;
    }
    Some((Route::get(variant.route()?), variant.http2()))
}

/// The row of the count that holds `side`: its path over HTTP/1.1, `h2c
/// /path` over h2c.
fn row_name((route, h2c): Side) -> String {
    if h2c { http2_label(route.path, 1) } else { route.path.to_owned() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_side_is_counted_over_plain_http_or_h2c_and_never_over_tls() {
        let side = |variant| counted_side(variant).map(|(route, h2c)| (route.path, h2c));
        assert_eq!(side(Variant::PerRequest), Some(("/api/devices", false)));
        assert_eq!(side(Variant::Http), Some(("/plaintext", false)));
        assert_eq!(side(Variant::DevicesH2c), Some(("/api/devices", true)));
        assert_eq!(side(Variant::Https), None);
        assert_eq!(side(Variant::H2), None);
        assert_eq!(side(Variant::Own), None);
        let row = |variant| counted_side(variant).map(row_name);
        assert_eq!(row(Variant::Http).as_deref(), Some("/plaintext"));
        assert_eq!(row(Variant::H2c).as_deref(), Some("h2c /plaintext"), "as count names the row");
    }
}
