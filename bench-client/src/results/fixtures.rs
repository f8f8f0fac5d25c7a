//! Builders of synthetic runs and results files, for the unit tests and the
//! integration tests (which compile the library without `cfg(test)`, so
//! this module is public but hidden from the docs).
#![doc(hidden)]

use std::time::Duration;

use super::{
    LoadReport, MEMORY_SCHEMA_VERSION, MemoryRepeat, MemoryReport, MemoryServer, Meta, Ratio, Results, Rival,
    RunRecord, SCHEMA_VERSION, deltas,
};
use crate::engine::{LoadSettings, Outcome, RunStats, Segment, Timing};
use crate::measure::{CpuWindows, Measured, RunFigures, Start};
use crate::model::{Framework, Pairing, Profile, Scenario, Variant};

/// The scenario or variant named `text` in `results.json`; panics on a typo.
fn name<T: serde::de::DeserializeOwned>(text: &str) -> T {
    serde_json::from_value(serde_json::Value::from(text)).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// Two rounds of `f`, each a complete [`run`] of every (scenario, variant,
/// successful) given, in order.
pub fn two_rounds(f: Framework, runs: &[(&str, &str, u64)]) -> Vec<RunRecord> {
    (1..=2).flat_map(|round| runs.iter().map(move |&(s, v, n)| run(f, s, v, round, n, true))).collect()
}

/// A run of `f`/`scenario`/`variant` (their `results.json` names) in `round` with `successful`
/// requests over one 1 s window, complete or interrupted.
pub fn run(f: Framework, scenario: &str, variant: &str, round: u32, successful: u64, complete: bool) -> RunRecord {
    let mut stats = RunStats::new(1, false);
    for _ in 0..successful {
        stats.record_success(0, 100, 100);
    }
    stats.counts.sent = successful;
    let measured = Measured {
        outcome: Outcome {
            stats,
            by_route: Vec::new(),
            measured: Duration::from_secs(1),
            stopped: !complete,
            reached: false,
        },
        interrupted: !complete,
        server_lost: false,
        cpu: CpuWindows { server: vec![100.0], client: vec![50.0] },
        client_peak_rss_bytes: 0,
        folded: None,
        start: Start { instant: std::time::Instant::now(), unix_ms: 1_796_000_000_000, planned_unix_ms: None },
    };
    let one = std::num::NonZeroUsize::MIN;
    let second = Duration::from_secs(1);
    let timing = Timing::new(Duration::ZERO, second, second).expect("one window of 1 s");
    let settings = LoadSettings::closed(one, one, timing, second);
    RunRecord {
        framework: f,
        scenario: name(scenario),
        variant: name(variant),
        route: name::<Variant>(variant).path().to_owned(),
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
        super::Over { pairing: Pairing::Rounds, processes: false },
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
            server_per_round: false,
            load_percent: None,
            threshold_percent: None,
            requests_per_connection: None,
            tls_resumption: None,
            tcp_nodelay: false,
            noise: Vec::new(),
            http2_settings: Vec::new(),
        },
        runs,
        deltas,
        failures: Vec::new(),
        counted: None,
        memory: None,
        rivals: Vec::new(),
    }
}

/// One client's `load --json` report of segment `index` of `clients`: two
/// windows of 1 s after 1 s of warm-up, 8 connections in all, the closed
/// loop, a start barrier at 1,796,119,200,000 ms and the windows measured
/// from `measure_start_unix_ms`; its successful requests took `latencies_us`
/// (half in each window).
pub fn load_report(index: u32, clients: u32, measure_start_unix_ms: u64, latencies_us: &[u64]) -> LoadReport {
    let segment = Segment::new(index, clients).expect("index below clients");
    let mut stats = RunStats::new(2, false);
    for (i, &us) in latencies_us.iter().enumerate() {
        stats.record_success(i % 2, us, us);
    }
    stats.counts.sent = latencies_us.len() as u64 + 10;
    stats.counts.warmup_completed = 10;
    let second = Duration::from_secs(1);
    let timing = Timing::new(second, 2 * second, second).expect("two windows of 1 s");
    let connections = std::num::NonZeroUsize::new(segment.share(8) as usize).expect("8 connections suffice");
    let mut settings = LoadSettings::closed(connections, std::num::NonZeroUsize::MIN, timing, second);
    settings.segment = segment;
    stats.counts.connections_established = connections.get() as u64;
    let measured = Measured {
        outcome: Outcome { stats, by_route: Vec::new(), measured: 2 * second, stopped: false, reached: false },
        interrupted: false,
        server_lost: false,
        cpu: CpuWindows { server: Vec::new(), client: vec![10.0, 12.0] },
        client_peak_rss_bytes: 1 << 20,
        folded: None,
        start: Start {
            instant: std::time::Instant::now(),
            unix_ms: measure_start_unix_ms - 1_000,
            planned_unix_ms: Some(1_796_119_200_000),
        },
    };
    let mut figures = RunFigures::new(&measured, &settings, None);
    figures.label = format!("client-{index}");
    LoadReport {
        schema_version: SCHEMA_VERSION,
        url: "http://127.0.0.1:8080/api/devices".to_owned(),
        threads: 1,
        warmup_s: 1.0,
        clients,
        segment: (clients > 1).then_some(index),
        merge: None,
        figures,
        slo: Vec::new(),
        requests_asked: None,
    }
}

/// Where and when a fixture's `count` or `memory` session measured:
/// commit `abc`, CPU `cpu`, `started_utc`, the release build.
pub fn provenance(started_utc: &str) -> super::Provenance {
    super::Provenance {
        commit: "abc".into(),
        cpu_model: "cpu".into(),
        started_utc: started_utc.into(),
        profile: "release".into(),
    }
}

/// A `memory` session of one server, `axum`, one repeat over 1 and 65
/// connections: 1000 KiB at start, 10 KiB per idle connection,
/// 20 per busy one, 100 KiB kept; no heap points.
pub fn memory_report() -> MemoryReport {
    let at = |rss_kib| crate::sys::Resident { rss_kib, pss_kib: None, private_dirty_kib: None };
    MemoryReport {
        schema_version: MEMORY_SCHEMA_VERSION,
        provenance: provenance("2026-12-06T00:00:00Z"),
        route: "/plaintext".into(),
        put_body_bytes: None,
        connections: vec![1, 65],
        busy_ms: 2000,
        complete: true,
        servers: vec![MemoryServer {
            name: "axum".into(),
            repeats: vec![MemoryRepeat {
                idle_baseline: at(1000),
                idle: vec![at(1010), at(1650)],
                busy_baseline: Some(at(1000)),
                busy: vec![at(1020), at(2300)],
                busy_held: vec![1, 65],
                idle_held: vec![1, 65],
                kept: Some(at(1100)),
                heap: None,
            }],
            error: None,
        }],
    }
}

/// A pair on `/plaintext` over 6 rounds, its CPU ratio `ratio [low … high]`, a tie within 5 %.
pub fn plaintext_pair(framework: Framework, against: Framework, ratio: f64, low: f64, high: f64) -> Rival {
    let cpu_ratio = Ratio { ratio, low: Some(low), high: Some(high) };
    Rival {
        route: "/plaintext".into(),
        framework,
        against,
        rounds: 6,
        cpu_ratio,
        rate_ratio: cpu_ratio.inverse(),
        tie_margin_percent: 5.0,
        standing: cpu_ratio.standing(5.0),
    }
}
