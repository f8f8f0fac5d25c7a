//! What a session compares, said once per command: the [`Design`] that
//! `variants.rs` (the suite) and `ab.rs` (two builds) each implement, and the
//! [`Unit`] of a session's passes. `session.rs` runs a design without naming
//! either, so `ab` and the suite share the session without importing each
//! other.

use std::sync::atomic::AtomicBool;

use super::plan::SuitePlan;
use super::schedule::{Slot, Step};
use super::servers::Started;
use crate::model::Framework;
use crate::results::{Delta, Meta, Results, RunRecord};

/// What one pass of a session measures: one framework's servers (the
/// suite's variants, `ab`'s two builds), or every framework's at once, head
/// to head (the `frameworks` scenario).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    /// One framework.
    One(Framework),
    /// Every framework of the plan, one server each, in the same round.
    Rivals,
}

impl Unit {
    /// How it reads in the terminal's lines.
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::One(f) => f.name(),
            Self::Rivals => "frameworks",
        }
    }

    /// The heading of its part of the session.
    pub(super) fn heading(self) -> String {
        match self {
            Self::One(f) => f.binary(),
            Self::Rivals => "frameworks head to head".to_owned(),
        }
    }
}

/// What a session compares, and so which servers a round measures: the
/// suite's variants (`variants.rs`) or `ab`'s two builds (`ab.rs`). The
/// session asks it and never names either, so neither imports the other.
pub(super) trait Design {
    /// The passes of the session, in order: each framework of the plan
    /// unless the design says otherwise.
    fn units(&self, plan: &SuitePlan) -> Vec<Unit> {
        plan.frameworks.iter().copied().map(Unit::One).collect()
    }

    /// The server starts of a unit: one per layer count for the suite,
    /// one for `ab` (whose sides name their own).
    fn sweeps(&self, plan: &SuitePlan, unit: Unit) -> Vec<Option<u16>>;

    /// Starts the servers `at` says; a slot's `server` indexes them.
    ///
    /// # Errors
    /// A server that does not start, listen or answer.
    fn start(&self, plan: &SuitePlan, at: ServerStart, stop: &AtomicBool) -> anyhow::Result<Servers>;

    /// The line that says where the servers run.
    fn started_line(&self, _unit: Unit, servers: &[Started], _round: u32) -> String {
        server_lines(servers)
    }

    /// Takes note of the servers just started for `unit` (what the
    /// design keeps of them goes into [`Design::record`]); the lines that
    /// say what it noted.
    fn note_started(&mut self, _unit: Unit, _servers: &[Started]) -> Vec<String> {
        Vec::new()
    }

    /// The steps of `unit` in `round`.
    fn steps(&self, plan: &SuitePlan, unit: Unit, round: u32) -> Vec<Step>;

    /// The deltas of `runs`, of `frameworks`.
    fn deltas(&self, plan: &SuitePlan, runs: &[RunRecord], frameworks: &[Framework]) -> Vec<Delta>;

    /// How a slot reads in the terminal.
    fn slot_columns(&self, slot: &Slot) -> String;

    /// Writes what the design knows of the session into the results' `meta`,
    /// each time they are saved.
    fn record(&self, _meta: &mut Meta) {}

    /// Results of the plan's other profiles to show beside these: none
    /// unless the design compares profiles.
    fn others(&self, _plan: &SuitePlan) -> Vec<Results> {
        Vec::new()
    }
}

/// Which servers a session starts: those of `unit`, of one start of its
/// sweep (the suite's layer count; `None` for `ab`), for `round`.
#[derive(Debug, Clone, Copy)]
pub(super) struct ServerStart {
    pub(super) unit: Unit,
    pub(super) sweep: Option<u16>,
    pub(super) round: u32,
}

/// The servers of one round; a slot's `server` indexes them.
pub(super) type Servers = Vec<Started>;

/// Each server's name, pid, address and layers, a line each: how a round's
/// servers read unless a design says otherwise.
pub(super) fn server_lines(servers: &[Started]) -> String {
    servers
        .iter()
        .map(|Started { process: s, layers, .. }| {
            format!("  {} pid {} on http://{}, {layers} layers", s.name(), s.pid(), s.addr)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
