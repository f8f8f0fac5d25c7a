//! `bench-client calibrate`: the client's own ceiling on these CPUs. It
//! starts the built-in responder (`responder.rs`: a canned `/plaintext`
//! response, no framework; this executable again, as the hidden `responder`
//! subcommand) pinned like a server, loads it exactly as a run of
//! the suite loads a server, and reports the successful requests per second
//! with both processes' CPU use. A server measured at a rate close to this
//! ceiling may have been limited by the client; the suite prints the ceiling
//! once at its start for that comparison.

use std::sync::atomic::AtomicBool;

use anyhow::Context;

mod responder;

pub use self::responder::{canned_response, serve};
use crate::engine::{Load, LoadSettings, RouteLoad, Target};
use crate::measure::{self, Observers, RunFigures, Start};
use crate::sys::{CpuList, ServerProcess};
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
    /// CPUs of the responder.
    pub server_cpus: CpuList,
    /// CPUs of the client.
    pub client_cpus: CpuList,
}

impl Ceiling {
    /// Successful requests per second against the responder; `None` when
    /// no time was measured.
    pub fn requests_per_s(&self) -> Option<f64> {
        self.figures.requests_per_s
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
    let load = Load::new(RouteLoad::of_table(Target::new(responder.addr, route.path), route), plan.settings);
    let run =
        measure::run(&load, Observers { servers: &[responder.pid()], perf: None, live: None }, Start::now(), stop);
    responder.stop();
    let figures = RunFigures::new(&run?, &plan.settings, Some(plan.server_cpus.len()));
    Ok(Ceiling { figures, server_cpus: plan.server_cpus.clone(), client_cpus: plan.client_cpus.clone() })
}
