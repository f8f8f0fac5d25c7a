//! `bench-client compare`: exit codes for no change, a regression, different
//! settings, and unreadable files; gzipped sessions as committed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use bench_client::model::{Framework, Pairing, Scenario};
use bench_client::results::{self, Results, fixtures};

use crate::util::{self, CLIENT};

/// A results file whose every run made `base × scale × (1 ± 1 %)` successful
/// requests (the ± alternating by round), with `connections` connections,
/// and a floor (`/plaintext`) run per round at `floor_scale`.
fn fake(scale: f64, connections: u64) -> Results {
    session(scale, 1.0, connections)
}

fn session(scale: f64, floor_scale: f64, connections: u64) -> Results {
    let mut runs = Vec::new();
    for round in 1..=4u32 {
        let wiggle = if round % 2 == 0 { 1.01 } else { 0.99 };
        let mut floor =
            fixtures::run(Framework::Axum, "floor", "plaintext", round, (20_000.0 * floor_scale) as u64, true);
        floor.figures.connections_requested = connections;
        runs.push(floor);
        for (position, variant) in ["per_request", "preserialized"].into_iter().enumerate() {
            let n = (10_000.0 * scale * wiggle) as u64 + position as u64 * 500;
            let mut run = fixtures::run(Framework::Axum, "payload", variant, round, n, true);
            run.route = "/api/devices".to_owned();
            run.position = position as u32 + 1;
            run.figures.connections_requested = connections;
            runs.push(run);
        }
    }
    let mut r = fixtures::results(runs);
    r.meta.connections = connections;
    r.meta.rounds = 4;
    r.meta.frameworks = vec![Framework::Axum];
    r.meta.scenarios = vec![Scenario::Payload];
    r.deltas = results::deltas(
        &r.runs,
        &[Framework::Axum],
        &[Scenario::Payload],
        &[10],
        results::Over { pairing: Pairing::Rounds, processes: false },
    );
    r
}

fn write(dir: &Path, name: &str, r: &Results) -> PathBuf {
    let path = dir.join(name);
    results::write(&path, r).unwrap();
    path
}

fn compare(args: &[&Path], extra: &[&str]) -> (i32, String) {
    let out = util::output_within(Command::new(CLIENT).arg("compare").args(args).args(extra), Duration::from_secs(30));
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap(), text)
}

#[test]
fn exit_codes_follow_the_verdicts() {
    let dir = util::temp_dir("compare");
    std::fs::create_dir_all(&dir).unwrap();
    let a = write(&dir, "a.json", &fake(1.0, 64));
    let same = write(&dir, "same.json", &fake(1.0, 64));
    let slower = write(&dir, "slower.json", &fake(0.90, 64));
    let faster = write(&dir, "faster.json", &fake(1.10, 64));
    let other = write(&dir, "other.json", &fake(1.0, 128));

    let (code, text) = compare(&[&a, &same], &[]);
    assert_eq!(code, 0, "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| axum | 10 | payload |")).collect();
    assert_eq!(rows.len(), 2, "{text}");
    assert!(rows.iter().all(|r| r.ends_with("| no significant change |")), "{text}");

    let (code, text) = compare(&[&a, &slower], &[]);
    assert_eq!(code, 1, "a 10 % slowdown is a regression: {text}");
    assert!(text.contains("REGRESSION: axum 10 layers payload/per_request -10.0 %"), "{text}");
    let (code, _) = compare(&[&a, &slower], &["--threshold", "15"]);
    assert_eq!(code, 0, "10 % is within a 15 % threshold");

    let (code, text) = compare(&[&a, &faster], &[]);
    assert_eq!(code, 0, "{text}");
    // The verdict of each row, not any "faster" in the text (the file is named faster.json).
    for variant in ["per_request", "preserialized"] {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| axum | 10 | payload | {variant} |")))
            .unwrap_or_else(|| panic!("no {variant} row: {text}"));
        assert!(row.ends_with("| faster |"), "{row}");
    }

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
fn a_whole_session_running_slower_is_not_called_a_change() {
    let dir = util::temp_dir("compare-session");
    let a = write(&dir, "a.json", &fake(1.0, 64));
    // The same code in a session where the machine ran 10 % slower throughout.
    let offset = write(&dir, "slow-session.json", &session(0.90, 0.90, 64));
    let (code, text) = compare(&[&a, &offset], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("REGRESSION"), "{text}");
    for variant in ["per_request", "preserialized"] {
        let row = text.lines().find(|l| l.starts_with(&format!("| axum | 10 | payload | {variant} |"))).unwrap();
        assert!(row.ends_with("| no significant change |"), "{row}");
    }
    assert!(text.contains("bench-client ab"), "points to ab: {text}");
    let floor = text.lines().find(|l| l.starts_with("| axum | 10 | floor | plaintext |")).unwrap();
    assert!(floor.ends_with("| -10.0 % [-10.0 … -10.0] | not judged (session speed) |"), "{floor}");
    // A real slowdown of the code, in a session of the same speed, still is one.
    let slower = write(&dir, "slower-code.json", &session(0.90, 1.0, 64));
    let (code, text) = compare(&[&a, &slower], &[]);
    assert_eq!(code, 1, "{text}");
    // The same code in a session whose server drew a 3 % slower layout for the
    // routes but not for the floor: tight rounds, yet within ±1.5 % SD a session.
    let layout = write(&dir, "layout.json", &session(0.97, 1.0, 64));
    let (code, text) = compare(&[&a, &layout], &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("taken as a session SD of 1.5 %"), "{text}");
    // 100 · sinh(1.959964 · √2 · ln 1.015) = 4.13: the floor of any row's resolution.
    assert!(text.contains("no number of rounds resolves less than ±4.1 %"), "{text}");
    // The rows moved by −3.0 % and −2.9 % (ln: −0.0305, −0.0290) against a
    // within-session variance of the difference of 2 × 0.000133/4 (rounds
    // ±1 %): √((0.000884 − 0.000067)/2) = 2.0 %.
    assert!(text.contains("their judged rows show a session SD of 2.0 %"), "{text}");
    // Trusting the rounds alone would call that layout a regression.
    let (code, text) = compare(&[&a, &layout], &["--session-sd-percent", "0"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("REGRESSION: axum 10 layers payload/per_request -3.0 %"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_unreadable_file_is_one_line_naming_it_and_exit_2() {
    let dir = util::temp_dir("compare-unreadable");
    std::fs::create_dir_all(&dir).unwrap();
    let a = write(&dir, "a.json", &fake(1.0, 64));
    let load_report = serde_json::to_vec(&fixtures::load_report(0, 1, 1_796_119_201_000, &[100, 200])).unwrap();
    let cases: [(&str, &[u8], &str); 6] = [
        ("load.json", &load_report, "is a report of `load --json` or `merge --json`, not the results layout"),
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
            let out = util::output_within(Command::new(CLIENT).arg("compare").args(args), Duration::from_secs(30));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert_eq!(stderr.lines().count(), 1, "{name}: one line: {stderr}");
            assert!(stderr.contains(&path.display().to_string()) && stderr.contains(reason), "{name}: {stderr}");
            assert!(out.stdout.is_empty(), "{name}: no table");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn gzipped_sessions_are_read_as_they_are_committed() {
    let runs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs");
    let reproduce = runs.join("2026-12-01-reproduce");
    let (a, b) = (reproduce.join("m0-1.results.json.gz"), reproduce.join("m0-2.results.json.gz"));
    let (code, text) = compare(&[&a, &b], &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("| axum | 10 | state | fat | 13342 | 12174 | -18.1 % [-29.4 … -5.0] | slower |"), "{text}");
    assert!(text.contains("REGRESSION: axum 10 layers state/fat -18.1 %"), "{text}");
    // A run folder holding only results.json.gz is read through it: given with that file, the same session.
    let folder = runs.join("2026-12-01-front-page");
    let (code, text) = compare(&[&folder, &folder.join("results.json.gz")], &[]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("are the same results"), "{text}");

    let dir = util::temp_dir("compare-gzip");
    let plain = write(&dir, "a.json", &fake(1.0, 64));
    let gzip = |r: &Results| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, serde_json::to_string(r).unwrap().as_bytes()).unwrap();
        encoder.finish().unwrap()
    };
    let slower = dir.join("slower.results.json.gz");
    std::fs::write(&slower, gzip(&fake(0.90, 64))).unwrap();
    let (code, text) = compare(&[&plain, &slower], &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("REGRESSION: axum 10 layers payload/per_request -10.0 %"), "{text}");
    let bytes = gzip(&fake(1.0, 64));
    let cut = dir.join("cut.results.json.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (code, text) = compare(&[&plain, &cut], &[]);
    assert_eq!(code, 2, "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains(&format!("cannot read {} as gzip", cut.display())), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pair_compare_cannot_judge_is_one_line_saying_what_it_got_and_exit_2() {
    let dir = util::temp_dir("compare-cannot-judge");
    let a = write(&dir, "a.json", &fake(1.0, 64));
    let session = dir.join("session");
    std::fs::create_dir_all(&session).unwrap();
    write(&session, "results.json", &fake(1.0, 64));
    let mut empty = fake(1.0, 64);
    empty.runs.clear();
    empty.deltas.clear();
    let empty = write(&dir, "empty.json", &empty);
    let mut failed = fake(1.0, 64);
    for run in &mut failed.runs {
        run.figures.complete = false;
    }
    let failed = write(&dir, "failed.json", &failed);
    let mut ab = fake(1.0, 64);
    for run in &mut ab.runs {
        run.scenario = if run.position == 1 { Scenario::Before } else { Scenario::After };
    }
    let ab = write(&dir, "ab.json", &ab);
    let cases: [(&Path, &Path, &str); 6] = [
        (&a, &a, "are the same results"),
        (&session, &session.join("results.json"), "are the same results"),
        (&empty, &a, "empty.json holds no run"),
        (&a, &empty, "empty.json holds no run"),
        (&failed, &a, "failed.json holds no usable run"),
        (&a, &ab, "ab.json is an `ab` session"),
    ];
    for (x, y, reason) in cases {
        let out = util::output_within(Command::new(CLIENT).arg("compare").args([x, y]), Duration::from_secs(30));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{reason}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{reason}: one line: {stderr}");
        assert!(stderr.contains(reason), "{reason}: {stderr}");
        assert!(!stderr.contains("NaN") && out.stdout.is_empty(), "{reason}: no table");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `file` validated against the committed copy of a published shape in
/// `tests/fixtures/`.
fn assert_shape(file: &Path, shape: &str) -> serde_json::Value {
    let read = |p: &Path| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap() };
    let schema = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(shape));
    let value = read(file);
    let validator = jsonschema::validator_for(&schema).expect("the shape compiles");
    let errors: Vec<String> = validator.iter_errors(&value).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{} is not of the shape {shape}: {errors:#?}", file.display());
    value
}

#[test]
fn ci_files_carry_every_row_in_the_shapes_their_tools_publish() {
    let dir = util::temp_dir("compare-ci");
    let (a, slower) = (write(&dir, "a.json", &fake(1.0, 64)), write(&dir, "slower.json", &fake(0.90, 64)));
    let (bmf, github, junit) = (dir.join("bmf.json"), dir.join("github.json"), dir.join("junit.xml"));
    let files = ["--bmf", bmf.to_str().unwrap(), "--github-benchmark", github.to_str().unwrap()];
    let (code, text) = compare(&[&a, &slower], &[&files[..], &["--junit", junit.to_str().unwrap()]].concat());
    assert_eq!(code, 1, "{text}");

    let bmf = assert_shape(&bmf, "bmf.schema.json");
    let row = &bmf["axum 10 layers payload/per_request"]["change-percent"];
    let (value, low, high) = (row["value"].as_f64().unwrap(), row["lower_value"].as_f64(), row["upper_value"].as_f64());
    assert!((value + 10.0).abs() < 0.5 && low.unwrap() < value && value < high.unwrap(), "{row}");
    let throughput = &bmf["axum /api/devices"]["throughput"];
    assert!(throughput["value"].as_f64().unwrap() > 8000.0 && throughput["lower_value"].is_number(), "{bmf}");
    assert!(bmf["axum /api/devices"]["latency"]["value"].as_f64().unwrap() > 0.0, "p99 in ns: {bmf}");

    let github = assert_shape(&github, "github-benchmark.schema.json");
    let names: Vec<&str> = github.as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["axum /plaintext", "axum /api/devices"], "{github}");
    assert!(github[0]["range"].as_str().unwrap().starts_with("± "), "{github}");

    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let cases: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("testcase")).collect();
    let with = |tag: &str| cases.iter().filter(|c| c.children().any(|n| n.has_tag_name(tag))).count();
    // The floor row is not judged (skipped); both payload rows regressed by 10 %, as REGRESSION lines say.
    assert_eq!((cases.len(), with("failure"), with("skipped")), (3, 2, 1), "{xml}");
    assert_eq!(text.matches("REGRESSION:").count(), 2, "{text}");
    assert_eq!((root.attribute("tests"), root.attribute("failures")), (Some("3"), Some("2")), "{xml}");
    // Against the committed copy of the Jenkins format (xmllint, from libxml2-utils, when installed).
    let xsd = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/junit.xsd");
    match Command::new("xmllint").arg("--noout").arg("--schema").arg(&xsd).arg(&junit).output() {
        Ok(out) => assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr)),
        Err(_) => println!("skipped: the JUnit file against junit.xsd (apt-get install libxml2-utils)"),
    }
    let failure = cases.iter().flat_map(|c| c.children()).find(|n| n.has_tag_name("failure")).unwrap();
    assert!(failure.attribute("message").unwrap().starts_with("slower beyond 2 %: -10.0 %"), "{xml}");

    // A file CI asks for in a folder that does not exist: the folder made.
    let nested = dir.join("ci/junit/junit.xml");
    let (code, text) = compare(&[&a, &slower], &["--junit", nested.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    assert!(std::fs::read_to_string(&nested).unwrap().starts_with("<?xml"), "{text}");
    // One under a regular file: refused in one line before anything is read.
    let under = dir.join("ci/junit/junit.xml/sub/junit.xml");
    let (code, text) = compare(&[&a, &slower], &["--junit", under.to_str().unwrap()]);
    assert_eq!(code, 2, "{text}");
    let folder = dir.join("ci/junit/junit.xml/sub");
    assert!(
        text.starts_with(&format!(
            "error: --junit {}: cannot create the folder {}: ",
            under.display(),
            folder.display()
        )),
        "{text}"
    );
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two `count` sessions: the committed one against itself is no change (exit
/// 0, every row of both printed); a copy whose axum `/plaintext` costs 3 %
/// more instructions on every repeat is a regression beyond 2 % (exit 1,
/// named), and within 5 % not; its CI files carry the counted measures.
#[test]
fn two_count_sessions_compare_route_by_route_and_costlier_instructions_are_a_regression() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bench/runs/2026-12-03-count/make-count.json");
    let dir = util::temp_dir("compare-count");
    let mut session: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&committed).unwrap()).unwrap();
    let rows = session["rows"].as_array_mut().unwrap();
    let axum_plaintext = rows
        .iter_mut()
        .find(|r| r["framework"] == "axum" && r["route"] == "/plaintext")
        .expect("axum /plaintext counted");
    let before: Vec<f64> =
        axum_plaintext["instructions_per_request"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    axum_plaintext["instructions_per_request"] = before.iter().map(|v| v * 1.03).collect();
    let costlier = dir.join("costlier.json");
    std::fs::write(&costlier, serde_json::to_string(&session).unwrap()).unwrap();
    let compare = |b: &Path, threshold: &str, extra: &[&str]| {
        let out = Command::new(CLIENT)
            .arg("compare")
            .args([committed.as_os_str(), b.as_os_str()])
            .args(["--threshold-percent", threshold])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned())
    };

    let (code, same) = compare(&committed, "2", &[]);
    assert_eq!(code, Some(0), "{same}");
    assert!(!same.contains("REGRESSION"), "{same}");
    assert!(same.contains("axum A") && same.contains("axum B") && same.contains("rocket B"), "{same}");

    let bmf = dir.join("bmf.json");
    let (code, worse) = compare(&costlier, "2", &["--bmf", bmf.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{worse}");
    let regressions: Vec<&str> = worse.lines().filter(|l| l.starts_with("REGRESSION")).collect();
    assert_eq!(regressions.len(), 1, "only axum /plaintext grew: {worse}");
    assert!(regressions[0].contains("/plaintext axum A → axum B instructions +3.0 %"), "{}", regressions[0]);
    let bmf: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&bmf).unwrap()).unwrap();
    assert!(bmf.to_string().contains("instructions"), "{bmf}");

    let (code, within) = compare(&costlier, "5", &[]);
    assert_eq!(code, Some(0), "3 % is within a 5 % threshold: {within}");
    std::fs::remove_dir_all(&dir).unwrap();
}
