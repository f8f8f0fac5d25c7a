//! The `extractors` scenario: every framework's typed extractors against
//! their `-raw` twins, on one server each, every `POST` body sent and every
//! answer verified under load.

use crate::util;

#[test]
fn the_extractors_scenario_pairs_each_typed_route_with_its_raw_twin_in_every_framework() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-suite-extractors");
    let args = ["--frameworks", "actix,axum,rocket", "--scenarios", "extractors", "--rounds", "1", "--warmup", "0s"];
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
        assert_eq!(
            pairs,
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
    let measured: Vec<_> = results.runs.iter().filter(|r| r.scenario.name() == "extractors").collect();
    assert_eq!(measured.len(), 30, "ten routes in each of three frameworks");
    for run in measured {
        let f = &run.figures;
        assert!(f.successful > 0 && f.failed_total == 0, "{} {}: {f:?}", run.framework.name(), run.route);
    }
    suite.results();
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("## What each extractor costs"), "{report}");
    assert!(report.contains("| Json<T>, 10,267 bytes |"), "{report}");
    assert!(out.join("latest/charts/extractors.svg").is_file());
}
