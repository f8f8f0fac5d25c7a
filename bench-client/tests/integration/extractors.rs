//! The `extractors` and `routes` scenarios in one suite: every framework's
//! typed extractors against their `-raw` twins on one server, every `POST`
//! body sent; the same request to the last of many routes on servers started
//! with `--filler-routes`; every answer verified under load.

use crate::util;

#[test]
fn the_extractors_and_routes_scenarios_pair_each_typed_route_with_its_raw_twin_and_each_count_of_routes_ahead_with_none()
 {
    let _shared = util::shared();
    let out = util::temp_dir("bench-suite-extractors");
    let args =
        ["--frameworks", "actix,axum,rocket", "--scenarios", "extractors,routes", "--rounds", "1", "--warmup", "0s"];
    let timing = ["--duration", "500ms", "--window", "500ms", "--slice", "25ms", "--connections", "4"];
    let suite = util::Suite::run(&out, &[&args[..], &timing].concat()).succeeded();
    let results = bench_client::results::read(&out.join("latest")).unwrap();
    for framework in ["actix", "axum", "rocket"] {
        assert_eq!(
            pairs(&results, framework, "extractors"),
            [
                ("/extract/json-raw", "/extract/json"),
                ("/extract/json-10k-raw", "/extract/json-10k"),
                ("/extract/path-raw/sensor-0042/7", "/extract/path/sensor-0042/7"),
                ("/extract/query-raw?device=sensor-0042&reading=7", "/extract/query?device=sensor-0042&reading=7"),
                ("/extract/form-raw", "/extract/form"),
            ],
            "{framework}: each raw route against its typed twin"
        );
    }
    assert_measured_clean(&results, "extractors", 30, "ten routes in each of three frameworks");
    routes_at_scale(&results);
    suite.results();
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("## What each extractor costs"), "{report}");
    assert!(report.contains("| Json<T>, 10,267 bytes |"), "{report}");
    assert!(report.contains("## What the routes ahead of a route cost"), "{report}");
    assert!(report.contains("| param, 1000 ahead |"), "{report}");
    for chart in ["extractors", "routes"] {
        assert!(out.join(format!("latest/charts/{chart}.svg")).is_file(), "{chart}");
    }
}

/// The `routes` scenario's deltas and runs: each count of routes ahead
/// against none, on both targets, in every framework, no request failed.
fn routes_at_scale(results: &bench_client::results::Results) {
    for framework in ["actix", "axum", "rocket"] {
        let (s, p) = ("/scale/target", "/scale/target/42");
        let ahead = |n: u32, path: &str| format!("{n} ahead {path}");
        let expected: Vec<(String, String)> = [(s, 10), (s, 100), (s, 1000), (p, 10), (p, 100), (p, 1000)]
            .iter()
            .map(|&(path, n)| (ahead(0, path), ahead(n, path)))
            .collect();
        let expected: Vec<(&str, &str)> = expected.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        assert_eq!(
            pairs(results, framework, "routes"),
            expected,
            "{framework}: each count against none, on the same target"
        );
    }
    assert_measured_clean(results, "routes", 24, "eight variants in each of three frameworks");
}

/// `scenario`'s runs in `results`: `n` of them (`what`), each with successes and no failure.
fn assert_measured_clean(results: &bench_client::results::Results, scenario: &str, n: usize, what: &str) {
    let measured: Vec<_> = results.runs.iter().filter(|r| r.scenario.name() == scenario).collect();
    assert_eq!(measured.len(), n, "{what}");
    for run in measured {
        let f = &run.figures;
        assert!(f.successful > 0 && f.failed_total == 0, "{} {}: {f:?}", run.framework.name(), run.route);
    }
}

/// The deltas of `scenario` in `framework`, as (from, to) labels.
fn pairs<'a>(results: &'a bench_client::results::Results, framework: &str, scenario: &str) -> Vec<(&'a str, &'a str)> {
    let of = |d: &&bench_client::results::Delta| d.framework.name() == framework && d.scenario.name() == scenario;
    results.deltas.iter().filter(of).map(|d| (d.from.as_str(), d.to.as_str())).collect()
}
