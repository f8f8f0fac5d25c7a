//! A suite profiled with the real perf while the variants alternate in
//! slices: each sample goes to the route of the slice it was taken in, so
//! axum's `/state/fat` profile holds the state's clones and drops and
//! `/state/arc`'s (the same server, the same run, the other slices) almost
//! none; round 2 runs without perf and the report sets the two against each
//! other. Skipped, saying so, where perf is missing or may not record.

use std::process::Command;

use crate::util;

/// Share of the samples (ns weights) of a folded file whose stack holds
/// `frame`.
fn share_with(folded: &str, frame: &str) -> (f64, u64) {
    let (mut with, mut all) = (0u64, 0u64);
    for line in folded.lines() {
        let (stack, weight) = line.rsplit_once(' ').expect("`stack weight`");
        let weight: u64 = weight.parse().expect("a weight");
        all += weight;
        if stack.contains(frame) {
            with += weight;
        }
    }
    (if all == 0 { 0.0 } else { with as f64 / all as f64 }, all)
}

#[test]
fn profiled_slices_give_each_variant_its_own_samples() {
    let _exclusive = util::exclusive();
    let usable = Command::new("perf").args(["record", "-e", "cpu-clock", "-o", "/dev/null", "--", "true"]).output();
    if !usable.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: perf is missing or may not record here (Debian: apt-get install linux-perf)");
        return;
    }
    let out = util::temp_dir("bench-perf-slices");
    let args = ["--profiler", "perf", "--frameworks", "axum", "--scenarios", "state", "--rounds", "2"];
    let timing = ["--duration", "2s", "--warmup", "0s", "--connections", "4", "--perf-frequency-hz", "99"];
    util::Suite::run(&out, &[&args[..], &timing].concat()).succeeded();
    let dir = out.join("latest");
    let results = bench_client::results::read(&dir).unwrap();
    let mut profiled: Vec<(u32, &str, bool)> =
        results.runs.iter().map(|r| (r.round, r.variant.name(), r.figures.profiled)).collect();
    profiled.sort_unstable();
    assert_eq!(
        profiled,
        [
            (1, "arc", true),
            (1, "fat", true),
            (1, "plaintext", true),
            (2, "arc", false),
            (2, "fat", false),
            (2, "plaintext", false)
        ],
        "round 1 with perf, every variant of its alternation; round 2 without"
    );
    let folded =
        |variant: &str| std::fs::read_to_string(dir.join(format!("flamegraphs/axum-{variant}.folded"))).unwrap();
    let (fat_share, fat_ns) = share_with(&folded("fat"), "FatState");
    let (arc_share, arc_ns) = share_with(&folded("arc"), "FatState");
    assert!(fat_ns > 0 && arc_ns > 0, "both variants sampled: {fat_ns} and {arc_ns} ns");
    assert!(fat_share > 0.2, "fat's own slices clone and drop the state: {:.1} % of its samples", fat_share * 100.0);
    assert!(
        arc_share < fat_share / 5.0,
        "arc's slices hold only the switches' stragglers: {:.1} % against fat's {:.1} %",
        arc_share * 100.0,
        fat_share * 100.0
    );
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let cost = report.split("## Cost of profiling").nth(1).expect("the cost of profiling, within the session");
    for variant in ["| plaintext |", "| fat |", "| arc |"] {
        let row = cost.lines().find(|l| l.contains(variant)).unwrap_or_else(|| panic!("{variant} in\n{cost}"));
        assert!(row.ends_with("| 1 · 1 |"), "one round without perf, one with: {row}");
    }
    assert!(dir.join("flamegraphs/diff-axum-state-fat-to-arc-before-widths.svg").is_file());
    let _ = std::fs::remove_dir_all(&out);
}
