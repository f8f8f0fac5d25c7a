//! The suite's [`Design`]: every scenario's variants on one server of each
//! framework and layer count, started anew every round (or once, with
//! `server_per_round` off), paired as the plan says.

use std::sync::atomic::AtomicBool;

use anyhow::Context;

use super::plan::SuitePlan;
use super::schedule::{Slot, Step, steps};
use super::servers::{ServerFlags, Started, start_server};
use super::session::{Design, Servers};
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

impl Design for Variants {
    fn sweeps(&self, plan: &SuitePlan) -> Vec<Option<u16>> {
        plan.layers.iter().copied().map(Some).collect()
    }

    fn start(
        &self,
        plan: &SuitePlan,
        framework: Framework,
        sweep: Option<u16>,
        _round: u32,
        _stop: &AtomicBool,
    ) -> anyhow::Result<Servers> {
        let layers = sweep.context("the suite starts a server per layer count")?;
        let tls = plan.scenarios.iter().any(|s| matches!(s, Scenario::Tls | Scenario::Http2));
        let flags = ServerFlags { tls, tcp_nodelay: plan.tcp_nodelay };
        let process = start_server(plan.profile, framework, &plan.server_cpus, layers, flags)?;
        if plan.scenarios.contains(&Scenario::Http2) && !self.grants.iter().any(|g| g.framework == framework) {
            let settings = preflight::http2_settings(process.addr)
                .with_context(|| format!("{}: the http2 scenario's preflight", process.name()))?;
            // Recorded in `note_started`, which may not fail.
            return Ok(vec![Started {
                grant: Some(Http2Grant::of(framework, &settings)),
                ..Started::of_table(process, layers)
            }]);
        }
        Ok(vec![Started::of_table(process, layers)])
    }

    fn note_started(&mut self, framework: Framework, servers: &[Started]) -> Vec<String> {
        let Some(grant) = servers.iter().find_map(|s| s.grant) else { return Vec::new() };
        self.grants.push(grant);
        vec![format!("  {} grants HTTP/2: {}", framework.name(), report::http2_grant_text(&grant))]
    }

    fn record(&self, meta: &mut Meta) {
        meta.http2_settings.clone_from(&self.grants);
    }

    fn steps(&self, plan: &SuitePlan, round: u32) -> Vec<Step> {
        steps(&plan.scenarios, round, plan.pairing)
    }

    fn deltas(&self, plan: &SuitePlan, runs: &[RunRecord], frameworks: &[Framework]) -> Vec<Delta> {
        let over = results::Over { pairing: plan.pairing, processes: plan.server_per_round };
        results::deltas(runs, frameworks, &plan.scenarios, &plan.layers, over)
    }

    fn slot_columns(&self, slot: &Slot) -> String {
        format!("{:<8} {:<13}", slot.scenario.name(), slot.variant.name())
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
