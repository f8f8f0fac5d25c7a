//! `bench-client calibrate`: the client's own ceiling on these CPUs. It
//! starts the built-in responder ([`crate::responder`], a canned `/plaintext`
//! response, no framework) pinned like a server, loads it exactly as a run of
//! the suite loads a server, and reports the successful requests per second
//! with both processes' CPU use. A server measured at a rate close to this
//! ceiling may have been limited by the client; the suite prints the ceiling
//! once at its start for that comparison.

use std::sync::atomic::AtomicBool;

use anyhow::Context;

use crate::affinity::CpuList;
use crate::engine::{self, LoadSettings};
use crate::results::RunFigures;
use crate::server::ServerProcess;
use common::{Route, RouteId};

/// A checked `calibrate` invocation.
#[derive(Debug, Clone)]
pub struct CalibratePlan {
    /// Connections, threads, timings and mode of the load.
    pub settings: LoadSettings,
    /// CPUs the responder is pinned to.
    pub server_cpus: CpuList,
    /// CPUs the client is pinned to.
    pub client_cpus: CpuList,
}

/// The client's ceiling as measured.
#[derive(Debug, Clone)]
pub struct Ceiling {
    /// The run against the responder.
    pub figures: RunFigures,
    /// CPUs of the responder and of the client, for the summary line.
    pub server_cpus: CpuList,
    /// CPUs of the client.
    pub client_cpus: CpuList,
}

impl Ceiling {
    /// Successful requests per second against the responder.
    pub fn requests_per_s(&self) -> f64 {
        self.figures.requests_per_s
    }

    /// One line: the ceiling, both CPU uses, and which side limited it.
    pub fn summary(&self) -> String {
        let f = &self.figures;
        let responder = f.server_cpu_percent.unwrap_or(0.0);
        let limit = if f.client_bound {
            "the client's ceiling"
        } else {
            "a lower bound: the responder, not the client, was saturated"
        };
        format!(
            "client ceiling: {:.0} successful requests/s ({} connections, pipeline {}, canned /plaintext from the \
             built-in responder on CPU(s) {}; client on CPU(s) {} at {:.0} % busy, responder {:.0} %): {limit}",
            f.requests_per_s,
            f.connections_requested,
            f.pipeline,
            self.server_cpus,
            self.client_cpus,
            f.client_cpu_percent,
            responder
        )
    }
}

/// Starts the responder, loads it, stops it.
///
/// # Errors
/// The responder cannot be started (its error quoted), the engine cannot run.
pub fn measure(plan: &CalibratePlan, stop: &AtomicBool) -> anyhow::Result<Ceiling> {
    let exe = std::env::current_exe().context("cannot find this executable to start the responder")?;
    let args = ["responder".to_owned(), "--addr".to_owned(), "127.0.0.1:0".to_owned()];
    let mut responder = ServerProcess::start(&exe, &args, &plan.server_cpus).context("built-in responder")?;
    plan.client_cpus.pin_current_thread()?;
    let route = Route::get(RouteId::Plaintext);
    let addr = responder.addr;
    let load =
        plan.settings.plan(addr, addr.to_string(), route.path.to_owned(), route.expected_body(), Some(responder.pid()));
    let outcome = engine::run(&load, stop);
    responder.stop();
    let figures = RunFigures::new(&outcome?, &plan.settings, Some(plan.server_cpus.len()));
    Ok(Ceiling { figures, server_cpus: plan.server_cpus.clone(), client_cpus: plan.client_cpus.clone() })
}
