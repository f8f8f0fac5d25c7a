//! Absent is not zero: against a server that answers one good response per
//! connection (in the warm-up) and then only 503s with the same body, no
//! latency was measured, and `load` writes none (`null`), prints `-`, and
//! fails; `merge` of two such clients keeps it absent.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::util::{self, CLIENT, HELLO};

const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 13\r\n\r\nHello, World!";

/// Preflight's fetches and each connection's first request (in the warm-up)
/// are answered `Hello, World!`; every later request of a connection 503.
fn good_once_then_503() -> SocketAddr {
    util::serve_each(|mut stream: TcpStream| {
        util::answer_heads(&mut stream, |s, n| s.write_all(if n == 0 { HELLO } else { BUSY }).is_ok());
    })
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The summary's latency line.
fn latency_line(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    stdout.lines().find(|l| l.trim_start().starts_with("latency (ms)")).unwrap_or_else(|| panic!("{stdout}")).to_owned()
}

/// Asserts that `f` (a load report) measured no latency and says so.
fn assert_no_latency(f: &Value, what: &str) {
    assert_eq!(f["successful"], 0, "{what}: {f}");
    assert!(f["failed"]["status"]["503"].as_u64().unwrap() > 0, "{what}: {f}");
    assert_eq!(f["latency_us"], Value::Null, "{what}: no latency was measured, none is 0");
    assert_eq!(f["latency_percentiles_us"], serde_json::json!([]), "{what}");
    assert!(f["requests_per_s"].as_f64().is_some_and(|r| r == 0.0), "{what}: 0 successes over measured time");
}

#[test]
fn every_measured_response_a_503_is_no_latency_in_the_json_the_summary_and_merge() {
    let _shared = util::shared();
    let addr = good_once_then_503();
    let url = format!("http://{addr}/hello");
    let dir = util::temp_dir("absent-503");
    let now_ms = u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()).unwrap();
    let at_ms = now_ms + 1_500;
    let at = format!("{}.{:03}", at_ms / 1000, at_ms % 1000);
    let mut running = Vec::new();
    for i in 0..2 {
        let segment = i.to_string();
        let mut command = Command::new(CLIENT);
        command.current_dir(&dir);
        command.args(["load", &url, "--clients", "2", "--segment", &segment, "--connections", "2"]);
        command.args(["--warmup", "500ms", "--duration", "1s", "--window", "500ms", "--start-at", &at]);
        command.args(["--slo", "p99<2ms", "--json", &format!("c{i}.json")]);
        running.push(util::Guarded::spawn(command.stdout(std::process::Stdio::piped())));
    }
    for (i, mut r) in running.into_iter().enumerate() {
        let status = util::exit_within(&mut r.0, Duration::from_secs(60), "load");
        let mut stdout = Vec::new();
        std::io::Read::read_to_end(r.0.stdout.as_mut().unwrap(), &mut stdout).unwrap();
        let out = Output { status, stdout, stderr: Vec::new() };
        assert_eq!(out.status.code(), Some(1), "client {i}: every measured response failed: {}", text(&out));
        let line = latency_line(&out);
        assert!(
            line.split_whitespace().skip(2).all(|w| w == "-" || w.starts_with('p') || w == "max"),
            "client {i}: `-` for each percentile, no 0.000: {line}"
        );
        assert!(line.contains("p50 -") && line.contains("max -"), "{line}");
        let f = json(&dir.join(format!("c{i}.json")));
        assert_no_latency(&f, &format!("client {i}"));
        util::assert_schema(&f, Some("load_report"));
    }
    let out = util::output_within(
        Command::new(CLIENT).current_dir(&dir).args(["merge", "c0.json", "c1.json", "--json", "m.json"]),
        Duration::from_secs(60),
    );
    assert_eq!(out.status.code(), Some(1), "the merged run failed too: {}", text(&out));
    assert!(latency_line(&out).contains("p50 -"), "{}", text(&out));
    let m = json(&dir.join("m.json"));
    assert_no_latency(&m, "merged");
    util::assert_schema(&m, Some("load_report"));
    for c in m["merge"]["clients"].as_array().unwrap() {
        assert_eq!(c["latency_p99_us"], Value::Null, "a client without latency: {c}");
    }
}
