//! `--middleware`: a response behind middleware is verified as the engine
//! loads it (a gzip body decoded, each header the layers add present), so a
//! server that corrupts its compressed body or drops a header fails every
//! request as `body`; and `suite --scenarios middleware` measures each layer
//! a framework offers against its bare server, every response verified.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use bench_client::engine::{self, Load, LoadSettings, RouteLoad, Shape, Target, Timing, http1};

use crate::util;

/// The body every canned server here compresses.
const JSON: &[u8] = br#"[{"id":1,"mac":"5F-33-CC-1F-43-82"}]"#;

/// `JSON` compressed with gzip.
fn gzipped() -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(JSON).unwrap();
    encoder.finish().unwrap()
}

/// A server answering every request with status 200, `headers` and `body`.
fn canned(headers: &'static [(&'static str, &'static str)], body: Vec<u8>) -> SocketAddr {
    let response = http1::ok_response(headers, &body);
    util::serve_each(move |mut stream| util::answer_heads(&mut stream, |s, _| s.write_all(&response).is_ok()))
}

/// (successful, body failures, every failure) of 300 ms of load on `addr`,
/// whose responses must be `JSON` gzipped with an `x-request-id`.
fn load(addr: SocketAddr) -> (u64, u64, u64) {
    let shape = Shape { gzip: true, headers: vec!["x-request-id"] };
    let route = RouteLoad { shape, ..RouteLoad::ok(Target::new(addr, "/api/devices/preserialized"), JSON.to_vec()) };
    let timing = Timing::new(Duration::ZERO, Duration::from_millis(300), Duration::from_millis(100)).unwrap();
    let one = std::num::NonZeroUsize::MIN;
    let settings = LoadSettings::closed(one.saturating_add(1), one, timing, Duration::from_secs(2));
    let outcome = engine::run(&Load::new(route, settings), Instant::now(), &[&AtomicBool::new(false)]).unwrap();
    let stats = &outcome.stats;
    (stats.successful(), stats.failures.body, stats.failures.requests())
}

#[test]
fn a_gzip_body_that_decodes_wrong_or_a_missing_header_fails_every_request_as_body() {
    let _shared = util::shared();
    let headers: &[(&str, &str)] = &[("content-encoding", "gzip"), ("x-request-id", "7")];
    let (ok, body, failed) = load(canned(headers, gzipped()));
    assert!(ok > 0 && body == 0 && failed == 0, "a right answer: {ok} successful, {failed} failed");
    // The deflate data corrupted: the stream's check fails on decoding.
    let mut corrupt = gzipped();
    let middle = corrupt.len() / 2;
    corrupt[middle] ^= 0x55;
    let (ok, body, failed) = load(canned(headers, corrupt));
    assert!(ok == 0 && body > 0 && body == failed, "corrupted: {ok} successful, {body} body of {failed} failed");
    // Well compressed, but without the header the request-id layer adds.
    let (ok, body, failed) = load(canned(&[("content-encoding", "gzip")], gzipped()));
    assert!(ok == 0 && body > 0 && body == failed, "no x-request-id: {ok} successful, {body} of {failed}");
    // The right bytes, not compressed: the coding is part of the answer.
    let (ok, body, _) = load(canned(&[("x-request-id", "7")], JSON.to_vec()));
    assert!(ok == 0 && body > 0, "identity where gzip was expected: {ok} successful");
}

#[test]
fn the_middleware_scenario_measures_every_layer_each_framework_offers_against_its_bare_server() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-suite-middleware");
    let args = ["--frameworks", "actix,axum", "--scenarios", "middleware", "--rounds", "1", "--warmup", "0s"];
    let timing = ["--duration", "400ms", "--window", "400ms", "--slice", "25ms", "--connections", "4"];
    let suite = util::Suite::run(&out, &[&args[..], &timing].concat()).succeeded();
    let (stdout, stderr) = (&suite.stdout, &suite.stderr);
    let results = bench_client::results::read(&out.join("latest")).unwrap();
    let actix: Vec<&str> = results
        .deltas
        .iter()
        .filter(|d| d.framework.name() == "actix")
        .map(|d| d.to.split(' ').next().unwrap())
        .collect();
    assert_eq!(actix, ["trace", "cors", "security-headers", "compression", "stacked"], "each layer actix offers");
    let axum = results.deltas.iter().filter(|d| d.framework.name() == "axum").count();
    assert_eq!(axum, 7, "axum offers every layer");
    for run in results.runs.iter().filter(|r| r.scenario.name() == "middleware") {
        let f = &run.figures;
        assert!(f.successful > 0 && f.failed_total == 0, "{} {}: {f:?}", run.framework.name(), run.route);
    }
    suite.results();
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("## What each layer costs"), "{report}");
    assert!(report.contains("| request-id | none offered |"), "{report}");
    assert!(out.join("latest/charts/middleware.svg").is_file());
    assert!(stderr.contains("What each layer costs:") || stdout.contains("What each layer costs:"), "{stdout}");
}
