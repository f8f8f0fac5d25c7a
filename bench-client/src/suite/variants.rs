//! The suite's [`Design`]: every scenario's variants on one server of each
//! framework and layer count, started anew every round (or once, with
//! `server_per_round` off), paired as the plan says; then, with the
//! `frameworks` scenario, every framework's server at once, head to head
//! (the first layer count), started anew every round in a rotating order.

use std::sync::atomic::AtomicBool;

use anyhow::Context;

use super::design::{Design, ServerStart, Servers, Unit};
use super::plan::SuitePlan;
use super::schedule::{OwnServer, Slot, Step, own_servers, place_on_servers, rivals, steps};
use super::servers::{ServerFlags, Started, start_server};
use crate::model::{Framework, Scenario};
use crate::preflight;
use crate::report;
use crate::results::{self, Delta, Http2Grant, Meta, Results, RunRecord};

/// The suite's variants: what `suite::run` hands the session.
#[derive(Default)]
pub(super) struct Variants {
    /// With the `http2` scenario: what each framework's server granted
    /// HTTP/2, read once per framework when its first server starts.
    grants: Vec<Http2Grant>,
}

/// Whether the plan's scenarios measure anything within one framework (all
/// but `frameworks`, which measures them head to head).
fn within_frameworks(plan: &SuitePlan) -> bool {
    plan.scenarios.iter().any(|s| *s != Scenario::Frameworks)
}

impl Design for Variants {
    /// Each framework (unless the plan has the `frameworks` scenario alone),
    /// then the frameworks head to head when it has it.
    fn units(&self, plan: &SuitePlan) -> Vec<Unit> {
        let mut units: Vec<Unit> =
            if within_frameworks(plan) { plan.frameworks.iter().copied().map(Unit::One).collect() } else { Vec::new() };
        if plan.scenarios.contains(&Scenario::Frameworks) && plan.frameworks.len() > 1 {
            units.push(Unit::Rivals);
        }
        units
    }

    fn sweeps(&self, plan: &SuitePlan, unit: Unit) -> Vec<Option<u16>> {
        match unit {
            Unit::One(_) => plan.layers.iter().copied().map(Some).collect(),
            Unit::Rivals => vec![plan.layers.first().copied()],
        }
    }

    fn start(&self, plan: &SuitePlan, at: ServerStart, _stop: &AtomicBool) -> anyhow::Result<Servers> {
        let ServerStart { unit, sweep, round } = at;
        let layers = sweep.context("the suite starts a server per layer count")?;
        let tls = plan.scenarios.iter().any(|s| matches!(s, Scenario::Tls | Scenario::Http2));
        let flags = ServerFlags { tls, tcp_nodelay: plan.tcp_nodelay, ..ServerFlags::default() };
        let framework = match unit {
            Unit::One(framework) => framework,
            Unit::Rivals => return start_rivals(plan, layers, flags, round),
        };
        let process = start_server(plan.profile, framework, &plan.server_cpus, layers, flags)?;
        // Read once per framework, recorded in `note_started` (which may not fail).
        let grant =
            if plan.scenarios.contains(&Scenario::Http2) && !self.grants.iter().any(|g| g.framework == framework) {
                let settings = preflight::http2_settings(process.addr)
                    .with_context(|| format!("{}: the http2 scenario's preflight", process.name()))?;
                Some(Http2Grant::of(framework, &settings))
            } else {
                None
            };
        let mut started = vec![Started { grant, ..Started::of_table(framework, process, layers) }];
        started.extend(start_own(plan, framework, layers, flags)?);
        Ok(started)
    }

    fn note_started(&mut self, unit: Unit, servers: &[Started]) -> Vec<String> {
        let Unit::One(framework) = unit else { return Vec::new() };
        let Some(grant) = servers.iter().find_map(|s| s.grant) else { return Vec::new() };
        self.grants.push(grant);
        vec![format!("  {} grants HTTP/2: {}", framework.name(), report::http2_grant_text(&grant))]
    }

    fn record(&self, meta: &mut Meta) {
        meta.http2_settings.clone_from(&self.grants);
    }

    fn steps(&self, plan: &SuitePlan, unit: Unit, round: u32) -> Vec<Step> {
        match unit {
            Unit::One(framework) => {
                place_on_servers(steps(&plan.scenarios, round, plan.pairing), &plan.scenarios, framework, round)
            }
            Unit::Rivals => rivals(&plan.scenarios, round, plan.frameworks.len()),
        }
    }

    fn deltas(&self, plan: &SuitePlan, runs: &[RunRecord], frameworks: &[Framework]) -> Vec<Delta> {
        let over = results::Over { pairing: plan.pairing, processes: plan.server_per_round };
        results::deltas(runs, frameworks, &plan.scenarios, &plan.layers, over)
    }

    fn slot_columns(&self, slot: &Slot) -> String {
        match slot.scenario {
            Scenario::Frameworks => format!("{:<10} {:<27}", slot.scenario.name(), slot.path),
            Scenario::Middleware | Scenario::Routes => {
                format!("{:<10} {:<16}", slot.scenario.name(), slot.variant.name())
            }
            _ => format!("{:<8} {:<13}", slot.scenario.name(), slot.variant.name()),
        }
    }

    /// The newest readable results of the plan's other profiles in its
    /// folder, so that the report sets the profiles side by side.
    fn others(&self, plan: &SuitePlan) -> Vec<Results> {
        let (others, skipped) = results::latest_of_other_profiles(&plan.out, plan.profile);
        for e in skipped {
            eprintln!("warning: {e:#}; left out of the profiles side by side");
        }
        others
    }
}

/// The servers of `framework` its variants of the `middleware` and
/// `routes` scenarios are measured on ([`own_servers`]): one per set of
/// layers and per count of filler routes, pinned to the plan's server CPUs,
/// each variant's route checked in preflight as the load will check it.
fn start_own(plan: &SuitePlan, framework: Framework, layers: u16, flags: ServerFlags) -> anyhow::Result<Servers> {
    let mut started = Vec::new();
    for (own, variants) in own_servers(&plan.scenarios, framework) {
        let flags = own_flags(flags, own);
        let process = start_server(plan.profile, framework, &plan.server_cpus, layers, flags)?;
        let server = Started { middleware: own.middleware, ..Started::of_table(framework, process, layers) };
        for variant in variants {
            let load = server.route_load(variant.path(), variant, plan.tls_resumption)?;
            preflight::check_load(&format!("{} ({})", server.process.name(), variant.name()), &load)?;
        }
        started.push(server);
    }
    Ok(started)
}

/// An own server's flags: the table's server's `table` flags (its HTTPS
/// listener, TCP_NODELAY) with `own`'s middleware and filler routes. The
/// `routes` scenario sets `static_0` on the table's server against these,
/// which then differ from it in their filler routes alone.
fn own_flags(table: ServerFlags, own: OwnServer) -> ServerFlags {
    ServerFlags { middleware: own.middleware, filler_routes: own.filler_routes, ..table }
}

/// Every framework's server of the plan for `round`, head to head: all
/// pinned to the same server CPUs, server `i` of the plan's `i`-th
/// framework, started in an order that rotates by one each round (the first
/// started may find a colder page cache, and the last a busier kernel).
fn start_rivals(plan: &SuitePlan, layers: u16, flags: ServerFlags, round: u32) -> anyhow::Result<Servers> {
    let n = plan.frameworks.len();
    let first = usize::try_from(round).unwrap_or(0) % n.max(1);
    let mut started: Vec<Option<Started>> = (0..n).map(|_| None).collect();
    for i in (0..n).map(|k| (first + k) % n) {
        let framework = plan.frameworks[i];
        let process = start_server(plan.profile, framework, &plan.server_cpus, layers, flags)?;
        started[i] = Some(Started::of_table(framework, process, layers));
    }
    Ok(started.into_iter().flatten().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_server_has_the_table_servers_listeners_and_its_own_routes_and_layers() {
        let table = ServerFlags { tls: true, tcp_nodelay: true, ..ServerFlags::default() };
        let fillers = own_flags(table, OwnServer { middleware: None, filler_routes: 100 });
        assert_eq!(fillers.args(), ["--tls-addr", "127.0.0.1:0", "--tcp-nodelay", "--filler-routes", "100"]);
        let bare = own_flags(ServerFlags::default(), OwnServer { middleware: Some(&[]), filler_routes: 0 });
        assert_eq!(bare.args(), ["--middleware", "none"]);
    }
}
