//! `suite --load-percent`: the blocking scenario of axum in the open loop at
//! a quarter of the baseline's closed-loop rate (well below what a dev build
//! keeps up with on a shared machine), two rounds: every run is
//! open-loop with its latency per block, the blocks hold every success of
//! the route, and the delta carries its percentiles' changes with intervals,
//! in the file (valid against the schema) and in the terminal.

use serde_json::Value;

use crate::util;

#[test]
fn a_fixed_load_gives_every_delta_its_percentiles_with_intervals() {
    let _exclusive = util::exclusive();
    let out = util::temp_dir("bench-load-percent");
    let args =
        ["--duration", "1s", "--warmup", "250ms", "--rounds", "2", "--connections", "32", "--load-percent", "25"];
    let suite = util::Suite::run(&out, &[&args[..], &["--frameworks", "axum", "--scenarios", "blocking"]].concat());
    let (stdout, stderr) = (&suite.stdout, &suite.stderr);
    // A run short only of on-time sends (a debug client on a busy machine)
    // exits 1 with every figure written: what this test reads is there.
    let status = suite.output.status;
    assert!(status.success() || util::only_late(&suite.output), "suite failed: {status}\n{stderr}\n{stdout}");
    let probes: Vec<&str> = stderr.lines().filter(|l| l.contains("closed-loop rate: ")).collect();
    // A round whose client fell behind its schedule is measured again, once.
    let again =
        stderr.lines().filter(|l| l.ends_with("short of its schedule, the client behind: measured again")).count();
    assert!(again <= 2, "{stderr}");
    assert_eq!(probes.len(), 2 + again, "the baseline's rate measured once per round and measurement:\n{stderr}");
    let results = suite.results();
    assert_eq!(results["meta"]["load_percent"], 25.0);
    let sliced: Vec<&Value> =
        results["runs"].as_array().unwrap().iter().filter(|r| r["scenario"] == "blocking").collect();
    assert_eq!(sliced.len(), 2 * 2, "inline and offloaded in each of 2 rounds");
    for run in &sliced {
        let offered = run["rate_per_s"].as_f64().unwrap_or_else(|| panic!("an open-loop run: {run}"));
        assert!(offered > 0.0);
        let blocks = run["block_latency_us"].as_array().unwrap();
        assert_eq!(blocks.len(), 2, "1 s of its own in slices of 250 ms, two per block: {run}");
        let in_blocks: u64 = blocks.iter().map(|b| b["requests"].as_u64().unwrap()).sum();
        let successful = run["successful"].as_u64().unwrap();
        let transition = run["transition_completed"].as_u64().unwrap();
        assert!(
            (successful..=successful + transition).contains(&in_blocks),
            "the blocks hold the route's successes, own slices and switches: {in_blocks} against {successful} + {transition}"
        );
        for b in blocks {
            let p = |k: &str| b[k].as_u64().unwrap();
            assert!(p("p50") <= p("p90") && p("p90") <= p("p99") && p("p99") <= p("p99.9"), "{b}");
        }
    }
    let deltas = results["deltas"].as_array().unwrap();
    assert_eq!(deltas.len(), 1, "inline → offloaded");
    let latency = deltas[0]["latency"].as_array().unwrap();
    let p50 = latency.iter().find(|l| l["percentile"] == "p50").expect("p50 needs 20 requests a block");
    assert_eq!(p50["blocks"], 4, "2 rounds × 2 blocks");
    assert!(p50["ci_low_percent"].as_f64().unwrap() <= p50["change_percent"].as_f64().unwrap());
    assert!(p50["change_percent"].as_f64().unwrap() <= p50["ci_high_percent"].as_f64().unwrap());
    assert!(stdout.contains("Latency in the open loop at 25 % of the baseline's closed-loop rate"), "{stdout}");
    assert!(stdout.contains("| axum | /blocking/inline → /blocking/offloaded | p50 |"), "{stdout}");
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("## Latency at a fixed load"), "{report}");
    let _ = std::fs::remove_dir_all(&out);
}
