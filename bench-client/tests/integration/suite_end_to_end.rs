//! `bench-client suite` over all three frameworks and every scenario, two
//! rounds of 1 s windows on the dev builds: the results folder holds every
//! run with successes, no failures, and counts that add up; `results.json`
//! validates against the committed JSON Schema; the charts are SVG; the
//! report reads every delta in proportion to a `/fortunes` request.

use crate::util;
use crate::util::FRAMEWORKS;

use serde_json::Value;

#[test]
fn suite_writes_complete_results_for_every_framework_and_scenario() {
    let _shared = util::shared();
    let (server_cpu, _) = util::cpu_pair();
    let out = util::temp_dir("bench-suite-e2e");
    let github_file = out.with_extension("github.json");
    let args = ["--duration", "500ms", "--warmup", "100ms", "--window", "500ms", "--slice", "125ms", "--rounds", "2"];
    let more = ["--connections", "8", "--scenarios", "payload,state,fortunes", "--github-benchmark"];
    let suite = util::Suite::run(&out, &[&args[..], &more, &[github_file.to_str().unwrap()]].concat()).succeeded();
    let (stdout, stderr) = (&suite.stdout, &suite.stderr);
    // The CI file: every framework's every route measured, in requests per second.
    let github: Value =
        serde_json::from_str(&std::fs::read_to_string(out.with_extension("github.json")).unwrap()).unwrap();
    let entries = github.as_array().unwrap();
    assert_eq!(entries.len(), 3 * 8, "3 frameworks × 8 routes (the floor, 3 payload, 2 state, 2 fortunes): {github}");
    assert!(entries.iter().all(|e| e["unit"] == "requests/s" && e["value"].as_f64().unwrap() > 0.0), "{github}");
    assert!(stdout.contains("dev` builds are unoptimized"), "dev warning in the table:\n{stdout}");
    assert!(stdout.contains("In proportion:") && stdout.contains("| `/fortunes/cached` |"), "{stdout}");
    // A new server process every round: "  server-axum pid P on http://…", one pid per round.
    for server in ["server-actix", "server-axum", "server-rocket"] {
        let pids = server_pids(stderr, server);
        assert_eq!(pids.len(), 2, "{server}: a new process each of the 2 rounds: {pids:?}\n{stderr}");
    }

    let latest = out.join("latest");
    let results = suite.results();
    assert!(latest.join("report.md").is_file());
    assert_eq!(results["schema_version"], bench_client::results::SCHEMA_VERSION);
    let schema_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/results.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(schema_path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut broken = results.clone();
    broken["runs"][0].as_object_mut().unwrap().remove("successful");
    assert!(!validator.is_valid(&broken), "the schema requires every run field");
    assert_eq!(results["complete"], true);
    let meta = &results["meta"];
    assert_eq!(meta["server_per_round"], true);
    for line in meta["noise"].as_array().expect("the noise check's lines") {
        let line = line.as_str().unwrap();
        assert!(stderr.contains(&format!("noise: {line}")), "{line}: said before the first run\n{stderr}");
    }
    for key in [
        "commit",
        "rustc",
        "profile",
        "cpu_model",
        "cores",
        "kernel",
        "connections",
        "duration_s",
        "warmup_s",
        "rounds",
    ] {
        assert!(!meta[key].is_null(), "meta.{key} missing");
    }
    assert_eq!(meta["profile"], "dev");
    assert!(meta["client_ceiling_per_s"].as_f64().is_some_and(|c| c > 0.0), "calibrated at the start: {meta}");
    assert!(stderr.contains("client ceiling: "), "printed once at the start:\n{stderr}");
    assert_eq!(meta["server_cpus"], serde_json::json!([server_cpu]));

    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2 * 3 * 8, "2 rounds × 3 frameworks × (floor + 3 payload + 2 state + 2 fortunes variants)");
    util::assert_runs_add_up(runs);
    for run in runs {
        let n = |k: &str| run[k].as_u64().unwrap_or_else(|| panic!("{k} in {run}"));
        assert_eq!(
            n("sent"),
            n("warmup_completed")
                + n("successful")
                + n("failed_total")
                + n("transition_completed")
                + n("in_flight_at_deadline"),
            "every request settled once: {run}"
        );
        assert_eq!(run["profile"], "dev");
        assert!(run["latency_us"]["p99"].as_u64().unwrap() > 0);
        let server_cpu = run["server_cpu_percent"].as_f64().unwrap_or_else(|| panic!("server CPU sampled: {run}"));
        assert!((0.0..=110.0).contains(&server_cpu), "one pinned server CPU: {server_cpu}");
        // One CPU sample per window: the floor's one window of 500 ms, or each variant's own slices.
        let windows = run["windows"].as_array().unwrap().len();
        assert_eq!(run["server_cpu_percent_windows"].as_array().unwrap().len(), windows, "{run}");
        let expected = if run["scenario"] == "floor" { 1 } else { 4 };
        assert_eq!(windows, expected, "500 ms own time in slices of 125 ms: {run}");
        assert_eq!(run["server_cpus"], 1);
        for key in ["framework", "scenario", "variant", "route", "round", "duration_s", "requests_per_s"] {
            assert!(!run[key].is_null(), "{key} missing in {run}");
        }
    }
    let deltas = results["deltas"].as_array().unwrap();
    assert_eq!(deltas.len(), 3 * 4, "per framework: preserialized, cached, arc, fortunes cached");
    for d in deltas {
        assert!(d["change_percent"].as_f64().unwrap().is_finite());
        assert_eq!(d["rounds"], 2);
        // Paired by slices: two blocks of slices per round (500 ms of own slices of 125 ms, two
        // variants or three), too few pairs for the signed-rank interval, and the table says so.
        // (A block whose baseline slices had no success on a loaded machine is left out.)
        assert!((1..=4).contains(&d["pairs"].as_u64().unwrap()), "blocks of slices are the pairs: {d}");
        let interval = d["ci_low_percent"].is_f64() && d["ci_high_percent"].is_f64();
        assert_eq!(interval, d["verdict"] != "too_few_rounds", "an interval, or a verdict saying why not: {d}");
        assert!(["payload", "state", "fortunes"].contains(&d["scenario"].as_str().unwrap()));
    }
    let report = std::fs::read_to_string(latest.join("report.md")).unwrap();
    assert!(report.starts_with("# Suite: actix, axum, rocket · profile dev\n"), "titled by its kind: {report}");
    let first_chart = report.find("charts/").expect("charts linked");
    assert!(report[first_chart..].starts_with("charts/changes.svg)"), "the changes chart first: {report}");
    assert!(first_chart < report.find("| framework").unwrap(), "before the tables: {report}");
    for chart in [
        "charts/changes.svg",
        "charts/bars-payload.svg",
        "charts/bars-state.svg",
        "charts/bars-fortunes.svg",
        "charts/windows-axum-state.svg",
        "charts/latency-rocket-payload.svg",
    ] {
        let text = std::fs::read_to_string(latest.join(chart)).unwrap_or_else(|e| panic!("{chart}: {e}"));
        roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{chart} is not XML: {e}"));
        assert!(report.contains(chart), "report.md links {chart}");
    }
    assert!(report.contains("change [95 % CI]"));
    assert!(report.contains("## In proportion") && report.contains("share of a `/fortunes` request"), "{report}");
    for framework in FRAMEWORKS {
        let row = report
            .lines()
            .find(|l| l.starts_with(&format!("| {framework} | 10 | /fortunes → /fortunes/cached |")))
            .unwrap_or_else(|| panic!("{framework}: the fortunes delta in proportion:\n{report}"));
        assert!(!row.contains(" - |"), "{framework}: every cost known: {row}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn layer_sweep_measures_each_layer_count_and_reports_the_cost_per_layer() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-sweep");
    let args = ["--frameworks", "axum", "--scenarios", "state", "--layers", "3,0", "--rounds", "2"];
    let timing =
        ["--duration", "500ms", "--window", "500ms", "--slice", "125ms", "--warmup", "0s", "--connections", "4"];
    let stdout = util::Suite::run(&out, &[&args[..], &timing].concat()).succeeded().stdout;
    let results = bench_client::results::read(&out.join("latest")).unwrap();
    assert_eq!(results.meta.layers, [0, 3]);
    for layers in [0, 3] {
        let runs = results.runs.iter().filter(|r| r.layers == layers).count();
        assert_eq!(runs, 2 * 3, "{layers} layers: 2 rounds × (floor, fat, arc)");
        assert_eq!(results.deltas.iter().filter(|d| d.layers == layers).count(), 1);
    }
    let sweep = bench_client::results::sweep(&results);
    let fat = sweep.iter().find(|l| l.variant == bench_client::model::Variant::Fat).expect("fat in the sweep");
    assert_eq!(fat.points.iter().map(|p| p.layers).collect::<Vec<_>>(), [0, 3]);
    for p in &fat.points {
        // Cost from the measured server CPU: at most one pinned CPU's worth.
        assert!(p.cost_us > 0.0 && p.cost_us <= 1.1e6 / p.rate_per_s, "{p:?}");
    }
    assert!(fat.added_per_layer_us.is_some());
    assert!(stdout.contains("Layer sweep") && stdout.contains("added per layer"), "{stdout}");
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("## Layer sweep") && report.contains("charts/layer-sweep.svg"));
    let svg = std::fs::read_to_string(out.join("latest/charts/layer-sweep.svg")).unwrap();
    roxmltree::Document::parse(&svg).expect("sweep chart is XML");
    assert!(out.join("latest/charts/bars-state-3-layers.svg").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

/// The frameworks head to head: every round starts both servers anew and
/// alternates between them route by route; each route gets the pair's ratios
/// with their intervals, printed first and valid against the schema.
#[test]
fn the_frameworks_scenario_sets_every_pair_head_to_head_route_by_route() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-suite-frameworks");
    let args = ["--duration", "500ms", "--warmup", "100ms", "--window", "500ms", "--slice", "125ms", "--rounds", "3"];
    let more = ["--connections", "8", "--frameworks", "axum,actix", "--scenarios", "frameworks"];
    let suite = util::Suite::run(&out, &[&args[..], &more].concat()).succeeded();
    let (stdout, stderr) = (&suite.stdout, &suite.stderr);
    assert!(stderr.contains("frameworks head to head:"), "{stderr}");
    // Both servers anew every round: three pids each.
    for server in ["server-actix", "server-axum"] {
        let pids = server_pids(stderr, server);
        assert_eq!(pids.len(), 3, "{server}: a new process each round: {pids:?}\n{stderr}");
    }
    let results = suite.results();
    // 3 rounds × 4 routes × 2 frameworks, each with successes and no failure; no delta, no floor.
    let runs = results["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3 * 4 * 2, "{results}");
    for r in runs {
        assert_eq!(r["scenario"], "frameworks");
        assert!(r["successful"].as_u64().unwrap() > 0 && r["failed_total"] == 0, "{r}");
        let windows: u64 = r["windows"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum();
        assert_eq!(windows, r["successful"].as_u64().unwrap(), "the slices add up: {r}");
    }
    assert_eq!(results["deltas"].as_array().unwrap().len(), 0);
    let rivals = results["rivals"].as_array().unwrap();
    let routes: Vec<&str> = rivals.iter().map(|r| r["route"].as_str().unwrap()).collect();
    assert_eq!(routes, ["/plaintext", "/api/devices", "/api/devices/preserialized", "/state/arc"]);
    for r in rivals {
        assert_eq!(
            (r["framework"].as_str(), r["against"].as_str(), r["rounds"].as_u64()),
            (Some("actix"), Some("axum"), Some(3))
        );
        let cpu = &r["cpu_ratio"];
        let (ratio, low, high) =
            (cpu["ratio"].as_f64().unwrap(), cpu["low"].as_f64().unwrap(), cpu["high"].as_f64().unwrap());
        assert!(low <= ratio && ratio <= high && low > 0.0, "{r}");
    }
    assert!(stdout.contains("Frameworks head to head:") && stdout.contains("| `/state/arc` |"), "{stdout}");
    assert!(out.join("latest/charts/frameworks.svg").is_file());
    let _ = std::fs::remove_dir_all(&out);
}

/// The pids the suite's lines "  SERVER pid P on http://…" name for `server`.
fn server_pids<'a>(stderr: &'a str, server: &str) -> std::collections::BTreeSet<&'a str> {
    stderr
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(&format!("{server} pid ")))
        .filter_map(|rest| rest.split_whitespace().next())
        .collect()
}
