//! `suite --count`: after the timed rounds, the routes of every delta
//! counted as `count` counts them, and each delta's counted change set
//! beside its timed one.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use common::Route;

use super::counted::{CountPlan, CountedServer, count};
use super::plan::{CountSettings, SuitePlan};
use crate::model::Framework;
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
        let (Some((from, _)), Some((to, to_http2))) = (counted_label(&d.from), counted_label(&d.to)) else { continue };
        if !frameworks.contains(&d.framework) {
            frameworks.push(d.framework);
        }
        for route in [from, to] {
            if !routes.contains(&route) {
                routes.push(route);
            }
        }
        if to_http2 && !http2_routes.contains(&to) {
            http2_routes.push(to);
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
        // A row is named by its path, over HTTP/1.1 on the plain listener (`http /plaintext` is `/plaintext`).
        let row = |label: &str| {
            let label = label.strip_prefix("http ").unwrap_or(label);
            outcome.report.rows.iter().find(|r| r.framework == name && r.route == label)
        };
        if let (Some(before), Some(after)) = (row(&d.from), row(&d.to)) {
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

/// The route a delta's side loads and whether over h2c, when a counted
/// run can load it as it was timed: a path of the table, `http /…` and
/// `h2c /…` (the `tls` and `http2` scenarios' plain listener); `None` over
/// TLS or for a path outside the table.
fn counted_label(label: &str) -> Option<(&'static Route, bool)> {
    match label.split_once(' ') {
        None => Some((Route::by_path(label)?, false)),
        Some(("http", path)) => Some((Route::by_path(path)?, false)),
        Some(("h2c", path)) => Some((Route::by_path(path)?, true)),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::counted::http2_label;

    #[test]
    fn a_delta_side_is_counted_over_plain_http_or_h2c_and_never_over_tls() {
        let path = |label| counted_label(label).map(|(route, h2c)| (route.path, h2c));
        assert_eq!(path("/api/devices"), Some(("/api/devices", false)));
        assert_eq!(path("http /plaintext"), Some(("/plaintext", false)));
        assert_eq!(path("h2c /api/devices"), Some(("/api/devices", true)));
        assert_eq!(path("https /plaintext"), None);
        assert_eq!(path("h2 /plaintext"), None);
        assert_eq!(path("/not-a-route"), None);
        assert_eq!(path(&http2_label("/plaintext", 1)), Some(("/plaintext", true)));
    }
}
