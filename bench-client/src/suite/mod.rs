//! The suite: build the servers, then for each framework start its server
//! pinned to the server CPUs, check it, and measure every scenario's
//! variants back to back in each round (order alternating by round), with
//! the `/plaintext` floor once per round; then compute the deltas and write
//! the results folder. `ab` ([`ab`]) is the same session on two builds;
//! one orchestrator (`session.rs`) runs both, each its own `Design`
//! (`variants.rs`, `ab.rs`), so that neither imports the other. Also
//! `bench-client flamegraph` ([`flamegraph`]).
//!
//! Inside, imports point one way too: this door names the files, and no
//! file imports it (`plan.rs` holds what they share).
//!
//! Imports every layer below it (`report`, `results`, `calibrate`,
//! `measure`, `engine`, `preflight`, `sys`, `model`); only the command line
//! is above it.

pub mod ab;
pub mod ab_count;
mod build;
pub mod command;
mod counted;
mod counted_suite;
pub mod deps;
mod design;
mod measuring;
mod memory;
mod meta;
mod plan;
mod profiling;
mod progress;
mod schedule;
mod servers;
mod session;
mod variants;
pub mod versions;

use std::sync::atomic::AtomicBool;

pub use self::build::{PROFILING_RUSTFLAGS, build, server_binary, workspace_root};
pub use self::counted::{
    COUNT_REPEATS, COUNT_REQUESTS, CountOutcome, CountPlan, CountedServer, check_tools, check_valgrind, count,
};
pub use self::memory::{
    MEMORY_BUSY, MEMORY_CONNECTIONS, MEMORY_REPEATS, MEMORY_WARMUP, MemoryOutcome, MemoryPlan, memory,
};
pub use self::plan::{CountSettings, PrecisionTarget, SuiteOutcome, SuitePlan};
pub use self::profiling::{Flamegraph, FlamegraphPlan, flamegraph};
pub use self::schedule::{Sliced, Slot, Step, round, steps};
pub use self::servers::{ServerFlags, load_of, route_load, start_server};
use self::variants::Variants;
use crate::sys::ServerProcess;

/// Runs the suite of `plan`; stops early (keeping what was measured) when
/// `stop` becomes true.
///
/// # Errors
/// Before anything is measured: a failed build, a missing binary, an output
/// folder that cannot be created. Later errors are recorded per framework in
/// the results (a preflight mismatch ends the suite there), which are always
/// written.
pub fn run(plan: &SuitePlan, stop: &AtomicBool) -> anyhow::Result<SuiteOutcome> {
    if plan.server_cpus.overlaps(&plan.client_cpus) {
        eprintln!(
            "warning: server CPUs {} and client CPUs {} overlap: the client competes with the server",
            plan.server_cpus, plan.client_cpus
        );
    }
    if plan.build {
        build(plan.profile, &plan.frameworks)?;
    }
    for &f in &plan.frameworks {
        ServerProcess::check_binary(&server_binary(plan.profile, f))?;
    }
    session::run(plan, &mut Variants::default(), stop)
}
