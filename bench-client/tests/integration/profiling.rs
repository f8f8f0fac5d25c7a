//! The profiling pipeline: `perf script` text from this project's own axum
//! server (a committed fixture: 24 samples of `perf record -e cpu-clock -g`
//! on the profiling build under load on `/state/fat`) folded and drawn as a
//! flame graph with known frames; and a suite asked to profile, with no perf on PATH, runs on and
//! says so.

use crate::util;
use std::process::Command;
use std::time::Duration;

use bench_client::measure::profiler;

const FIXTURE: &str = include_str!("fixtures/perf-script-server-axum.txt");

#[test]
fn perf_script_fixture_folds_into_a_flamegraph_with_known_frames() {
    let _exclusive = util::exclusive();
    let folded = profiler::fold(FIXTURE.as_bytes()).unwrap();
    let mut stacks = std::collections::BTreeMap::new();
    profiler::merge(&mut stacks, &folded);
    // inferno weighs each sample by its period: cpu-clock nanoseconds.
    let weighted_ns: u64 = stacks.values().sum();
    let in_fixture_ns: u64 = FIXTURE
        .lines()
        .filter(|l| l.ends_with("cpu-clock: ") || l.contains(" cpu-clock:"))
        .map(|l| l.split_whitespace().rev().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(FIXTURE.matches(" cpu-clock:").count(), 24);
    assert_eq!(weighted_ns, in_fixture_ns, "every sample lands in exactly one folded stack");
    let foreign: Vec<&String> = stacks.keys().filter(|s| !s.starts_with("tokio-rt-worker;")).collect();
    assert!(foreign.is_empty(), "stacks start with the worker thread's name: {foreign:?}");

    let dir = util::temp_dir("flame");
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("axum.svg");
    profiler::flamegraph(&profiler::lines(&stacks), "axum fixture", &svg).unwrap();
    let text = std::fs::read_to_string(&svg).unwrap();
    let options = roxmltree::ParsingOptions { allow_dtd: true, ..Default::default() };
    let doc = roxmltree::Document::parse_with_options(&text, options).expect("the flame graph is XML");
    let titles: Vec<&str> = doc.descendants().filter(|n| n.has_tag_name("title")).filter_map(|n| n.text()).collect();
    for frame in ["server_axum::state_layer", "hyper::proto::h1", "FatState"] {
        assert!(titles.iter().any(|t| t.contains(frame)), "a frame of {frame} in the flame graph");
    }
    let all = profiler::top_self(&stacks, usize::MAX);
    let total: f64 = all.iter().map(|t| t.1).sum();
    assert!((total - 100.0).abs() < 1e-9, "self times add up to 100 %: {total}");
    let top = profiler::top_self(&stacks, 3);
    assert_eq!(top.len(), 3);
    assert_eq!(top[..], all[..3]);
    assert!(top.windows(2).all(|w| w[0].1 >= w[1].1), "descending");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn suite_without_perf_on_path_runs_on_and_says_so() {
    let _exclusive = util::exclusive();
    let empty_path = util::temp_dir("no-perf");
    std::fs::create_dir_all(&empty_path).unwrap();
    let out = util::temp_dir("bench-noperf");
    let cpus = util::all_cpus();
    let output = util::output_within(
        Command::new(util::CLIENT)
            .args(["suite", "--profile", "dev", "--no-build", "--profiler", "perf", "--frameworks", "axum"])
            .args([
                "--scenarios",
                "payload",
                "--rounds",
                "1",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--connections",
                "4",
            ])
            .args([
                "--server-cpus",
                &cpus.cpus()[0].to_string(),
                "--client-cpus",
                &cpus.cpus().last().unwrap().to_string(),
            ])
            .arg("--out")
            .arg(&out)
            .env("PATH", &empty_path)
            .env("CARGO_TARGET_DIR", util::bin_dir().parent().unwrap()),
        Duration::from_secs(300),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{}\n{stderr}", output.status);
    assert_eq!(
        stderr.matches("running without the profiler: perf is not installed").count(),
        1,
        "said once:\n{stderr}"
    );
    let results = bench_client::results::read(&out.join("latest")).unwrap();
    assert_eq!(results.meta.profiler, None);
    assert_eq!(results.runs.len(), 4, "floor + per_request, preserialized, cached");
    assert!(!out.join("latest/flamegraphs").exists());
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&empty_path);
}
