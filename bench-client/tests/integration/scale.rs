//! The `routes` scenario: the same request to the last of many routes, on
//! servers started with `--filler-routes`, in every framework.

use crate::util;

#[test]
fn the_routes_scenario_sets_each_count_of_routes_ahead_against_none_on_both_targets_in_every_framework() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-suite-routes");
    let args = ["--frameworks", "actix,axum,rocket", "--scenarios", "routes", "--rounds", "1", "--warmup", "0s"];
    let timing = ["--duration", "500ms", "--window", "500ms", "--slice", "25ms", "--connections", "4"];
    let suite = util::Suite::run(&out, &[&args[..], &timing].concat()).succeeded();
    let results = bench_client::results::read(&out.join("latest")).unwrap();
    for framework in ["actix", "axum", "rocket"] {
        let pairs: Vec<(&str, &str)> = results
            .deltas
            .iter()
            .filter(|d| d.framework.name() == framework)
            .map(|d| (d.from.as_str(), d.to.as_str()))
            .collect();
        let (s, p) = ("/scale/target", "/scale/target/42");
        let ahead = |n: u32, path: &str| format!("{n} ahead {path}");
        let expected: Vec<(String, String)> = [(s, 10), (s, 100), (s, 1000), (p, 10), (p, 100), (p, 1000)]
            .iter()
            .map(|&(path, n)| (ahead(0, path), ahead(n, path)))
            .collect();
        let expected: Vec<(&str, &str)> = expected.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(pairs, expected, "{framework}: each count against none, on the same target");
    }
    let measured: Vec<_> = results.runs.iter().filter(|r| r.scenario.name() == "routes").collect();
    assert_eq!(measured.len(), 24, "eight variants in each of three frameworks");
    for run in measured {
        let f = &run.figures;
        assert!(f.successful > 0 && f.failed_total == 0, "{} {}: {f:?}", run.framework.name(), run.route);
    }
    suite.results();
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("## What the routes ahead of a route cost"), "{report}");
    assert!(report.contains("| param, 1000 ahead |"), "{report}");
    assert!(out.join("latest/charts/routes.svg").is_file());
}
