//! `ab --count`: the two sides of `ab` counted rather than timed. Each
//! side's servers are built (or its command taken) as `ab` builds them,
//! then each framework's two builds are counted under callgrind, route by
//! route ([`super::count`]), and the candidate's counts are set against
//! the baseline's: a change of 1 % that timing on a virtual machine cannot
//! resolve is a count that moves by 1 %, the same on a re-run.

use std::path::PathBuf;

use anyhow::Context;

use super::ab::{AbPlan, Builder, Revision, Side, binaries_of};
use super::counted::{CountPlan, CountedServer};
use super::plan::CountSettings;

/// The [`CountPlan`] of `plan`: its sides built (unless `--no-build`, then
/// found built), each framework's BEFORE and AFTER servers, paired.
///
/// # Errors
/// A route outside the route table, a revision that is not one, a failed
/// build, servers of a side not built with `--no-build`.
pub fn count_plan(plan: &AbPlan, settings: CountSettings) -> anyhow::Result<CountPlan> {
    let routes = plan
        .routes
        .iter()
        .map(|path| {
            common::Route::by_path(path)
                .filter(|r| r.path != common::RouteId::Healthz.path())
                .with_context(|| format!("--routes {path}: --count counts the route table's routes"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let resolve = |side: &Side| -> anyhow::Result<Option<PathBuf>> {
        match &side.revision {
            Revision::Command(_) => Ok(None),
            revision => Ok(Some(binaries_of(revision, &Builder::of(&plan.base))?.1)),
        }
    };
    let sides = [("before", &plan.before, resolve(&plan.before)?), ("after", &plan.after, resolve(&plan.after)?)];
    let mut servers = Vec::new();
    let mut pairs = Vec::new();
    for framework in &plan.base.frameworks {
        pairs.push((servers.len(), servers.len() + 1));
        for (label, side, dir) in &sides {
            let command = match (&side.revision, dir) {
                (Revision::Command(command), _) => command.clone(),
                (_, dir) => format!(
                    "{} --addr {{addr}} --workers 1 --layers {}",
                    dir.clone().unwrap_or_default().join(framework.binary()).display(),
                    side.layers
                ),
            };
            servers.push(CountedServer {
                name: format!("{} {label}", framework.name()),
                command,
                framework: None,
                middleware: None,
                filler_routes: 0,
            });
        }
    }
    Ok(CountPlan {
        profile: plan.base.profile,
        servers,
        routes,
        requests: settings.requests,
        repeats: settings.repeats,
        layers: plan.after.layers,
        server_cpus: plan.base.server_cpus.clone(),
        build: false,
        out: plan.base.out.clone(),
        client_cpus: Some(plan.base.client_cpus.clone()),
        threshold_percent: plan.threshold_percent,
        pairs,
        perf: settings.perf,
        http2_streams: Vec::new(),
        http2_routes: None,
    })
}
