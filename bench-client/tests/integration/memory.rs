//! `bench-client memory` against a server of its own that holds a known
//! 64 KiB per open connection (`fixtures/held_bytes_server.py`): the slope
//! it reports, idle, busy and of the live heap under memcheck, is those
//! 64 KiB within 5 %, in the file
//! (valid against the schema), in the table and in `--from`; a server that
//! dies while connections are held is exit 1 with what was measured kept;
//! Ctrl-C keeps the file and exits 130; more connections than the
//! descriptor limit allows is one line, exit 2, before any connection.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::util;

/// What the test server holds per connection.
const HELD_BYTES: u64 = 64 * 1024;

/// `--cmd own=…`: the test server holding [`HELD_BYTES`], exiting at its
/// `die_at`-th connection when given.
fn own_server(die_at: Option<u32>) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/fixtures/held_bytes_server.py");
    let die = die_at.map(|n| format!(" {n}")).unwrap_or_default();
    format!(
        "own={} {} {{addr}} {} '{}' {HELD_BYTES}{die}",
        util::python(),
        script.display(),
        common::routes::HEALTHZ_BODY,
        common::routes::PLAINTEXT_BODY
    )
}

/// `bench-client memory --cmd SERVER ARGS --out OUT`, pinned as the tests pin.
fn memory(server: &str, args: &[&str], out: &Path) -> Command {
    let (server_cpu, client_cpu) = util::cpu_pair();
    let mut command = Command::new(util::CLIENT);
    command
        .args(["memory", "--cmd", server])
        .args(args)
        .args(["--server-cpus", &server_cpu.to_string(), "--client-cpus", &client_cpu.to_string()])
        .arg("--out")
        .arg(out);
    command
}

/// The `memory.json` the run at `out` wrote, and its path.
fn written(out: &Output) -> (Value, String) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let file = stdout.lines().find_map(|l| l.strip_prefix("memory: ")).expect("the file's path").to_owned();
    (serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap(), file)
}

#[test]
fn memory_reports_what_a_connection_holds_idle_and_busy_within_five_percent() {
    // Under memcheck for the heap: in valgrind's lane.
    let _counted = util::counted();
    let out = util::temp_dir("bench-memory");
    let args = ["--connections", "8,40,72", "--repeats", "2", "--busy", "200ms", "--warmup", "100ms"];
    let output = util::output_within(&mut memory(&own_server(None), &args, &out), Duration::from_secs(120));
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}\n{stdout}");
    let (report, file) = written(&output);
    util::assert_schema(&report, Some("memory_report"));
    assert_eq!((report["complete"].as_bool(), report["route"].as_str()), (Some(true), Some("/plaintext")));
    assert_eq!(report["connections"], serde_json::json!([8, 40, 72]));
    let repeats = report["servers"][0]["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 2, "{report}");
    // Recomputed from the samples: each repeat's slope is the 64 KiB held, within 5 %.
    let kib = |r: &Value, key: &str, i: usize| r[key][i]["rss_kib"].as_f64().unwrap();
    for r in repeats {
        for held in [&r["busy_held"], &r["idle_held"], &r["heap"]["idle_held"]] {
            assert_eq!(*held, serde_json::json!([8, 40, 72]), "the server held every connection when read: {r}");
        }
        for key in ["idle", "busy"] {
            assert_eq!(r[key].as_array().unwrap().len(), 3, "a point per count: {r}");
            let slope = (kib(r, key, 2) - kib(r, key, 0)) / 64.0;
            assert!((slope - 64.0).abs() < 3.2, "{key}: {slope:.1} KiB per connection, 64 held: {r}");
        }
        // The third process, under memcheck: its live heap grows by the 64 KiB block each connection holds.
        let heap = |i: usize| r["heap"]["idle_bytes"][i].as_f64().unwrap() / 1024.0;
        let slope = (heap(2) - heap(0)) / 64.0;
        assert!((slope - 64.0).abs() < 3.2, "heap: {slope:.2} KiB per connection, 64 held: {r}");
        assert!(r["heap"]["baseline_bytes"].as_f64().unwrap() / 1024.0 < heap(0), "{r}");
        let start = r["idle_baseline"]["rss_kib"].as_u64().unwrap();
        assert!(kib(r, "idle", 0) as u64 > start, "eight connections hold more than none: {r}");
        assert!(r["kept"]["rss_kib"].as_u64().is_some() && r["busy_baseline"]["pss_kib"].is_u64(), "{r}");
    }
    // The table says it with the interval over the two repeats.
    let row = stdout.lines().find(|l| l.starts_with("| own |")).unwrap_or_else(|| panic!("{stdout}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // Idle, heap, busy: each 64 KiB within 5 %.
    for cell in [cells[3], cells[4], cells[5]] {
        let mean: f64 = cell.split_whitespace().next().unwrap().parse().unwrap();
        assert!((mean - 64.0).abs() < 3.2 && cell.contains(" [") && cell.contains(" … "), "{row}");
    }
    assert_eq!(cells[7], "2", "{row}");
    assert!(Path::new(&file).with_extension("svg").is_file(), "the chart beside the file");
    // --from renders the same table from the file.
    let from =
        util::output_within(Command::new(util::CLIENT).args(["memory", "--from", &file]), Duration::from_secs(30));
    assert!(from.status.success() && stdout.contains(String::from_utf8_lossy(&from.stdout).trim()), "{from:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_server_dying_while_connections_are_held_is_exit_1_with_what_was_measured() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-memory-dies");
    // It dies as its 20th connection comes: after the 8-connection point, before the 40.
    let args = ["--connections", "8,40", "--repeats", "2", "--busy", "300ms", "--warmup", "200ms", "--no-heap"];
    let output = util::output_within(&mut memory(&own_server(Some(20)), &args, &out), Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let (report, _) = written(&output);
    assert_eq!(report["complete"], false, "{report}");
    let server = &report["servers"][0];
    let error = server["error"].as_str().unwrap();
    assert!(error.starts_with("the server ended with exit status: 3: connection "), "its own exit first: {error}");
    assert!(error.contains(" of 40 held idle on /plaintext: "), "{error}");
    let repeats = server["repeats"].as_array().unwrap();
    assert_eq!(repeats.len(), 1, "the repeat it died in, cut short: {report}");
    assert_eq!(repeats[0]["idle"].as_array().unwrap().len(), 1, "the 8-connection point kept: {report}");
    assert!(stderr.contains("error: own: the server ended with exit status: 3: connection "), "{stderr}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ctrl_c_during_memory_keeps_the_file_and_exits_130() {
    use std::os::unix::process::CommandExt;

    use nix::sys::signal::{Signal, killpg};
    use nix::unistd::Pid;

    let _shared = util::shared();
    let out = util::temp_dir("bench-memory-interrupt");
    // A long busy stretch: the interruption comes during the first repeat's load.
    let args = ["--connections", "4,8", "--repeats", "2", "--busy", "20s", "--no-heap"];
    let mut child = memory(&own_server(None), &args, &out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("memory runs");
    std::thread::sleep(Duration::from_secs(3));
    killpg(Pid::from_raw(i32::try_from(child.id()).unwrap()), Signal::SIGINT).unwrap();
    let status = util::exit_within(&mut child, Duration::from_secs(30), "memory after Ctrl-C");
    assert_eq!(status.code(), Some(130), "{status}");
    let file = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path().join("memory.json")).next().unwrap();
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(report["complete"], false, "{report}");
    let repeat = &report["servers"][0]["repeats"][0];
    assert_eq!(repeat["idle"].as_array().unwrap().len(), 2, "the idle points measured before: {report}");
    assert!(report["servers"][0]["error"].as_str().unwrap().contains("interrupted"), "{report}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn more_connections_than_descriptors_allow_is_one_line_and_exit_2_before_any_connection() {
    let out = util::temp_dir("bench-memory-fds");
    let args = ["--connections", "1,1000000"];
    let output = util::output_within(&mut memory(&own_server(None), &args, &out), Duration::from_secs(30));
    let err = util::one_line_exit(&output, 2);
    assert!(err.contains("--connections 1000000: each connection held takes two descriptors here"), "{err}");
    assert!(std::fs::read_dir(&out).unwrap().next().is_none(), "nothing measured, no folder");
}

#[test]
fn axum_serving_its_make_service_holds_connections_that_carried_a_64_kib_put_first() {
    let _shared = util::shared();
    let out = util::temp_dir("bench-memory-put");
    let axum = util::server_binary("axum").display().to_string();
    let server = format!("axum-make-service={axum} --addr {{addr}} --serve make-service");
    let args = ["--connections", "1,4", "--repeats", "2", "--busy", "200ms", "--warmup", "100ms", "--no-heap"];
    let put = ["--put-body-bytes", "65536"];
    let output = util::output_within(&mut memory(&server, &[&args[..], &put].concat(), &out), Duration::from_secs(120));
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    // Every connection's PUT was answered 204 and its GET verified, or the run would have failed.
    assert_eq!(output.status.code(), Some(0), "{stderr}\n{stdout}");
    let (report, _) = written(&output);
    util::assert_schema(&report, Some("memory_report"));
    assert_eq!((report["put_body_bytes"].as_u64(), report["complete"].as_bool()), (Some(65_536), Some(true)));
    let repeats = report["servers"][0]["repeats"].as_array().unwrap();
    assert!(repeats.iter().all(|r| r["idle"].as_array().unwrap().len() == 2), "{report}");
    assert!(stdout.contains("Every idle connection carried a PUT /api/devices of 65536 bytes first."), "{stdout}");
    // axum's own flag is checked as the common ones are: one line, exit 2.
    let refused = util::output_within(Command::new(&axum).args(["--serve", "bogus"]), Duration::from_secs(10));
    let line = util::one_line_exit(&refused, 2);
    assert!(line.contains("invalid value 'bogus' for '--serve"), "{line}");
    let _ = std::fs::remove_dir_all(&out);
}
