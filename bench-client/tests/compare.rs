//! `bench-client compare`: exit codes for no change, a regression, different
//! settings, and unreadable files.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use bench_client::cpu::CpuWindows;
use bench_client::engine::{LoadSettings, RunOutcome};
use bench_client::plan::{Framework, Profile};
use bench_client::results::{self, Meta, Results, RunFigures, RunRecord, SCHEMA_VERSION};
use bench_client::stats::RunStats;
use bench_client::suite::Scenario;

/// A results file whose every run made `base × scale × (1 ± 1 %)` successful
/// requests (the ± alternating by round), with `connections` connections.
fn fake(scale: f64, connections: u64) -> Results {
    let mut runs = Vec::new();
    for round in 1..=4u32 {
        let wiggle = if round % 2 == 0 { 1.01 } else { 0.99 };
        for (position, variant) in ["per_request", "preserialized"].into_iter().enumerate() {
            let mut stats = RunStats::new(1, false);
            let n = (10_000.0 * scale * wiggle) as u64 + position as u64 * 500;
            for _ in 0..n {
                stats.record_success(0, 500, 500);
            }
            stats.sent = n;
            let outcome = RunOutcome {
                stats,
                measured: Duration::from_secs(1),
                interrupted: false,
                server_lost: false,
                cpu: CpuWindows::default(),
                client_peak_rss_bytes: 0,
            };
            let second = Duration::from_secs(1);
            let connections = NonZeroUsize::new(connections as usize).unwrap();
            let settings = LoadSettings::closed(connections, NonZeroUsize::MIN, Duration::ZERO, second, second, second);
            runs.push(RunRecord {
                framework: Framework::Axum,
                scenario: "payload".to_owned(),
                variant: variant.to_owned(),
                route: "/api/devices".to_owned(),
                profile: Profile::Release,
                layers: 10,
                round,
                position: position as u32 + 1,
                figures: RunFigures::new(&outcome, &settings, Some(1)),
            });
        }
    }
    let deltas = results::deltas(&runs, &[Framework::Axum], &[Scenario::Payload], &[10]);
    Results {
        schema_version: SCHEMA_VERSION,
        complete: true,
        meta: Meta {
            commit: "test".to_owned(),
            rustc: "rustc".to_owned(),
            profile: Profile::Release,
            cpu_model: "cpu".to_owned(),
            cores: 2,
            kernel: "k".to_owned(),
            started_utc: "2026-11-30T00:00:00Z".to_owned(),
            connections,
            duration_s: 1.0,
            warmup_s: 0.0,
            window_s: 1.0,
            timeout_s: 2.0,
            rounds: 4,
            layers: vec![10],
            server_cpus: vec![0],
            client_cpus: vec![1],
            server_workers: 1,
            client_threads: 1,
            frameworks: vec![Framework::Axum],
            scenarios: vec!["payload".to_owned()],
            profiler: None,
            client_ceiling_per_s: None,
        },
        runs,
        deltas,
        failures: Vec::new(),
    }
}

fn write(dir: &Path, name: &str, r: &Results) -> PathBuf {
    let path = dir.join(name);
    results::write_json(&path, r).unwrap();
    path
}

fn compare(args: &[&Path], extra: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_bench-client")).arg("compare").args(args).args(extra).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap(), text)
}

#[test]
fn exit_codes_follow_the_verdicts() {
    let dir = std::env::temp_dir().join(format!("compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = write(&dir, "a.json", &fake(1.0, 64));
    let same = write(&dir, "same.json", &fake(1.0, 64));
    let slower = write(&dir, "slower.json", &fake(0.90, 64));
    let faster = write(&dir, "faster.json", &fake(1.10, 64));
    let other = write(&dir, "other.json", &fake(1.0, 128));

    let (code, text) = compare(&[&a, &same], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("no significant change"), "{text}");

    let (code, text) = compare(&[&a, &slower], &[]);
    assert_eq!(code, 1, "a 10 % slowdown is a regression: {text}");
    assert!(text.contains("REGRESSION: axum payload/per_request -10.0 %"), "{text}");
    let (code, _) = compare(&[&a, &slower], &["--threshold", "15"]);
    assert_eq!(code, 0, "10 % is within a 15 % threshold");

    let (code, text) = compare(&[&a, &faster], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("faster"), "{text}");

    let (code, text) = compare(&[&a, &other], &[]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("connections: 64 vs 128"), "{text}");
    let (code, _) = compare(&[&a, &other], &["--force"]);
    assert_eq!(code, 0);

    // Another load-engine mode measures a different server cost: refused too.
    let mut napless = fake(1.0, 64);
    for run in &mut napless.runs {
        run.figures.nap_us = 0;
    }
    let napless = write(&dir, "napless.json", &napless);
    let (code, text) = compare(&[&a, &napless], &[]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("load engine: pipeline 1 rate_per_s None nap_us 50 vs pipeline 1 rate_per_s None nap_us 0"),
        "{text}"
    );

    let truncated = dir.join("truncated.json");
    let full = std::fs::read_to_string(&a).unwrap();
    std::fs::write(&truncated, &full[..full.len() / 2]).unwrap();
    let (code, text) = compare(&[&a, &truncated], &[]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("truncated.json is not valid JSON"), "{text}");
    let (code, text) = compare(&[&a, &dir.join("missing")], &[]);
    assert_eq!(code, 2);
    assert!(text.contains("missing"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_unreadable_file_is_one_line_naming_it_and_exit_2() {
    let dir = std::env::temp_dir().join(format!("compare-unreadable-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = write(&dir, "a.json", &fake(1.0, 64));
    let cases: [(&str, &[u8], &str); 5] = [
        ("empty.json", b"", "is not valid JSON"),
        ("binary.json", b"\xff\xfe\x00\x01", "cannot read"),
        ("cut.json", b"{\"schema_version\": 3, \"runs\": [{", "is not valid JSON"),
        ("layout.json", b"{\"schema_version\": 3}", "does not match the results layout"),
        ("version.json", b"{\"schema_version\": 99}", "has schema_version 99"),
    ];
    for (name, bytes, reason) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        for args in [[&a, &path], [&path, &a]] {
            let out = Command::new(env!("CARGO_BIN_EXE_bench-client")).arg("compare").args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
            assert!(stderr.contains(&path.display().to_string()) && stderr.contains(reason), "{name}: {stderr}");
            assert!(out.stdout.is_empty(), "{name}: no table");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
