//! Builders of synthetic runs and results files, for the unit tests and the
//! integration tests (which compile the library without `cfg(test)`, so
//! this module is public but hidden from the docs).
#![doc(hidden)]

use std::time::Duration;

use super::{Meta, Results, RunRecord, SCHEMA_VERSION, deltas};
use crate::engine::{LoadSettings, Outcome, RunStats, Timing};
use crate::measure::{CpuWindows, Measured, RunFigures};
use crate::model::{Framework, Pairing, Profile, Scenario};

/// The scenario or variant named `text` in `results.json`; panics on a typo.
fn name<T: serde::de::DeserializeOwned>(text: &str) -> T {
    serde_json::from_value(serde_json::Value::from(text)).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A run of `f`/`scenario`/`variant` (their `results.json` names) in `round` with `successful`
/// requests over one 1 s window, complete or interrupted.
pub fn run(f: Framework, scenario: &str, variant: &str, round: u32, successful: u64, complete: bool) -> RunRecord {
    let mut stats = RunStats::new(1, false);
    for _ in 0..successful {
        stats.record_success(0, 100, 100);
    }
    stats.sent = successful;
    let measured = Measured {
        outcome: Outcome { stats, by_route: Vec::new(), measured: Duration::from_secs(1), stopped: !complete },
        interrupted: !complete,
        server_lost: false,
        cpu: CpuWindows { server: vec![100.0], client: vec![50.0] },
        client_peak_rss_bytes: 0,
        folded: None,
    };
    let one = std::num::NonZeroUsize::MIN;
    let second = Duration::from_secs(1);
    let timing = Timing::new(Duration::ZERO, second, second).expect("one window of 1 s");
    let settings = LoadSettings::closed(one, one, timing, second);
    RunRecord {
        framework: f,
        scenario: name(scenario),
        variant: name(variant),
        route: "/".to_owned(),
        profile: Profile::Release,
        layers: 10,
        round,
        position: 1,
        figures: RunFigures::new(&measured, &settings, Some(1)),
    }
}

/// A results file around `runs`, with its deltas.
pub fn results(runs: Vec<RunRecord>) -> Results {
    let deltas = deltas(
        &runs,
        &[Framework::Actix, Framework::Axum],
        &[Scenario::Payload, Scenario::State, Scenario::Fortunes],
        &[10],
        Pairing::Rounds,
    );
    Results {
        schema_version: SCHEMA_VERSION,
        complete: true,
        meta: Meta {
            commit: "c".to_owned(),
            rustc: "r".to_owned(),
            profile: Profile::Release,
            cpu_model: "cpu".to_owned(),
            cores: 2,
            kernel: "k".to_owned(),
            started_utc: "2026-11-30T00:00:00Z".to_owned(),
            connections: 1,
            duration_s: 1.0,
            warmup_s: 0.0,
            window_s: 1.0,
            timeout_s: 2.0,
            rounds: 3,
            layers: vec![10],
            server_cpus: vec![0],
            client_cpus: vec![1],
            server_workers: 1,
            client_threads: 1,
            frameworks: vec![Framework::Actix, Framework::Axum],
            scenarios: vec![Scenario::Payload, Scenario::State],
            profiler: None,
            pairing: Pairing::Rounds,
            slice_s: None,
            target_ci_percent: None,
            ab: None,
            client_ceiling_per_s: None,
        },
        runs,
        deltas,
        failures: Vec::new(),
    }
}
