//! `bench-client load` against raw-socket responders that each answer in
//! one valid HTTP/1.1 way (RFC 9112 section 6): every such response is
//! counted as a success; what the engine would not count (a redirect, a
//! protocol switch) is refused by preflight before anything is measured;
//! and the open loop's schedule is one schedule over all threads.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::util::{self, CLIENT};

/// How the responder answers a request for a path.
#[derive(Clone, Copy)]
struct Answer {
    bytes: &'static [u8],
    /// Close the connection after writing it.
    close: bool,
}

/// A responder on 127.0.0.1 answering each request (a head ending in an
/// empty line) by `answer(path)`; counts the answers written.
fn responder(answer: fn(&str) -> Answer) -> (SocketAddr, Arc<AtomicU64>) {
    let written = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&written);
    (util::serve_each(move |stream| serve(stream, answer, &counter)), written)
}

fn serve(mut stream: TcpStream, answer: fn(&str) -> Answer, written: &AtomicU64) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            buf.drain(..end + 4);
            let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let a = answer(&path);
            if stream.write_all(a.bytes).is_err() {
                return;
            }
            written.fetch_add(1, Ordering::Relaxed);
            if a.close {
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Two routes (server, path, body) alternating in blocks `0 1 1 0` of 50 ms
/// slices on 4 connections after 100 ms of warm-up: four blocks, sixteen
/// slices, eight of each route's own.
fn two_routes_in_slices(routes: [(std::net::SocketAddr, &str, &[u8]); 2]) -> bench_client::engine::Load {
    use bench_client::engine::{Load, LoadSettings, RouteLoad, Target, Timing};
    let slice = Duration::from_millis(50);
    let timing = Timing::new(Duration::from_millis(100), slice * 16, slice).unwrap();
    let settings = LoadSettings::closed(4.try_into().unwrap(), 1.try_into().unwrap(), timing, Duration::from_secs(2));
    let routes = routes.map(|(addr, path, body)| RouteLoad::ok(Target::new(addr, path), body.to_vec()));
    let load = Load::sliced(routes.into(), vec![0, 1, 1, 0], settings, slice * 8, slice).unwrap();
    assert_eq!(load.settings.timing, timing, "the timing the slicing makes");
    load
}

/// `load URL extra… --json FILE`: the process output and, when written, the JSON.
fn load(url: &str, extra: &[&str]) -> (Output, Option<Value>) {
    let dir = util::temp_dir("framing");
    let json = dir.join("run.json");
    let out = util::output_within(
        Command::new(CLIENT).args(["load", url, "--json"]).arg(&json).args(extra),
        Duration::from_secs(60),
    );
    let value = std::fs::read_to_string(&json).ok().map(|t| serde_json::from_str(&t).expect("valid JSON"));
    (out, value)
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// Every response a success: no failure of any kind, the accounting adds up.
fn assert_all_successful(out: &Output, v: &Value) {
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_settled(v);
}

/// Every request answered successfully and settled once.
fn assert_settled(v: &Value) {
    assert!(count(v, "successful") > 0, "{v}");
    assert_eq!(count(v, "failed_total"), 0, "{v}");
    assert_eq!(v["failed"]["connect"], 0, "{v}");
    assert_eq!(
        count(v, "sent"),
        count(v, "warmup_completed") + count(v, "successful") + count(v, "in_flight_at_deadline"),
        "every request written is settled once or in flight: {v}"
    );
    let windows: u64 = v["windows"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum();
    assert_eq!(windows, count(v, "successful"));
}

const QUICK: [&str; 6] = ["--connections", "4", "--duration", "1s", "--warmup", "250ms"];

#[test]
fn interim_1xx_responses_are_skipped_and_the_final_200_counted() {
    let _exclusive = util::exclusive();
    let (addr, written) = responder(|_| Answer {
        bytes: b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n\
                 HTTP/1.1 100 Continue\r\n\r\n\
                 HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!",
        close: false,
    });
    let (out, v) = load(&format!("http://{addr}/hints"), &QUICK);
    let v = v.expect("results written");
    assert_all_successful(&out, &v);
    assert_eq!(count(&v, "reconnects"), 0, "{v}");
    assert_eq!(count(&v, "connections_established"), 4);
    // Preflight's one request, then each completed or in-flight request once.
    assert!(written.load(Ordering::Relaxed) > count(&v, "successful") + count(&v, "warmup_completed"));
}

#[test]
fn chunked_bodies_are_framed_and_verified() {
    let _shared = util::shared();
    for answer in [
        (|_: &str| Answer {
            bytes: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nd\r\nHello, World!\r\n0\r\n\r\n",
            close: false,
        }) as fn(&str) -> Answer,
        |_: &str| Answer {
            bytes: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                     5;ext=1\r\nHello\r\n2\r\n, \r\n6\r\nWorld!\r\n0\r\nX-Trailer: yes\r\n\r\n",
            close: false,
        },
    ] {
        let (addr, _) = responder(answer);
        let (out, v) = load(&format!("http://{addr}/chunked"), &QUICK);
        let v = v.expect("results written");
        assert_all_successful(&out, &v);
        assert_eq!(count(&v, "reconnects"), 0, "{v}");
    }
}

#[test]
fn close_delimited_bodies_are_framed_and_each_close_is_a_reconnection() {
    let _exclusive = util::exclusive();
    let (addr, _) = responder(|_| Answer {
        bytes: b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nHello, World!",
        close: true,
    });
    // A close-delimited body closes every connection: churn, accepted here.
    let (out, v) = load(&format!("http://{addr}/until-close"), &[&QUICK[..], &["--allow-churn"]].concat());
    let v = v.expect("results written");
    assert_all_successful(&out, &v);
    assert!(count(&v, "closed_by_server") > 0 && v["churn_allowed"] == true, "{v}");
    let completed = count(&v, "successful") + count(&v, "warmup_completed");
    let reconnects = count(&v, "reconnects");
    // Every completed response closed its connection: one reconnection
    // each, but for the last response of each connection at the deadline.
    assert!((completed.saturating_sub(4)..=completed).contains(&reconnects), "{completed} completed: {v}");
    assert_eq!(count(&v, "connections_established"), 4 + reconnects, "{v}");
}

#[test]
fn preflight_judges_the_request_the_engine_sends() {
    let _exclusive = util::exclusive();
    let (addr, written) = responder(|path| match path {
        "/old" => Answer { bytes: b"HTTP/1.1 302 Found\r\nLocation: /new\r\nContent-Length: 0\r\n\r\n", close: false },
        "/upgrade" => Answer { bytes: b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", close: false },
        _ => Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nnew", close: false },
    });
    for (path, reason) in [
        ("/old", "status 302 instead of 200"),
        ("/upgrade", "the load engine cannot count this answer: status 101 Switching Protocols"),
    ] {
        let before = written.load(Ordering::Relaxed);
        let (out, v) = load(&format!("http://{addr}{path}"), &QUICK);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{path}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{path}: one line: {stderr}");
        assert!(stderr.contains(reason), "{path}: {stderr}");
        assert!(out.stdout.is_empty() && v.is_none(), "{path}: nothing measured");
        assert_eq!(
            written.load(Ordering::Relaxed) - before,
            1,
            "{path}: preflight's request only, no redirect followed"
        );
    }
}

#[test]
fn the_open_loop_is_one_schedule_over_all_threads() {
    let _quiet = util::quiet();
    let (addr, _) = responder(|_| Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", close: false });
    let args = ["--rate", "2", "--threads", "4", "--connections", "4", "--duration", "4s", "--warmup", "0s"];
    let (out, v) = load(&format!("http://{addr}/"), &args);
    let v = v.expect("results written");
    // A thread woken over 2 ms late on a busy machine makes the run short of
    // its schedule (`accounting` tests that): the subject here is the spread.
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() || util::only_late(&out), "{text}");
    assert_settled(&v);
    // One request every 500 ms, dealt to the threads in turn: two per
    // window, not four every other window.
    assert_eq!(v["windows"], serde_json::json!([2, 2, 2, 2]), "{v}");
}

#[test]
fn alternating_routes_count_each_response_to_its_route_and_slice() {
    use std::sync::atomic::AtomicBool;

    use bench_client::engine;
    use bench_client::measure::{CpuWindows, Measured, RunFigures};

    let _exclusive = util::exclusive();
    let (addr, _) = responder(|path| match path {
        "/a" => Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA", close: false },
        _ => Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nBB", close: false },
    });
    let load = two_routes_in_slices([(addr, "/a", b"A"), (addr, "/b", b"BB")]);
    let block = load.slicing.as_ref().unwrap().block().to_vec();
    let outcome = engine::run(&load, std::time::Instant::now(), &[&AtomicBool::new(false)]).unwrap();
    assert_eq!(
        outcome.stats.failures.requests(),
        0,
        "each body checked against its own route: {:?}",
        outcome.stats.failures
    );
    assert_eq!(outcome.by_route.len(), 2);
    let total: u64 = outcome.by_route.iter().map(|r| r.successful()).sum();
    assert_eq!(total, outcome.stats.successful(), "every success belongs to one route");
    for (route, r) in outcome.by_route.iter().enumerate() {
        assert_eq!(
            r.counts.sent,
            r.counts.warmup_completed + r.successful() + r.settled_failures() + r.counts.in_flight_at_deadline
        );
        let own: u64 = (0..16).filter(|s| block[s % 4] == route).map(|s| r.windows[s].successful).sum();
        let other: u64 = (0..16).filter(|s| block[s % 4] != route).map(|s| r.windows[s].successful).sum();
        // In another route's slice only the round trip after a switch: at
        // most one request per connection per switch into that slice.
        assert!(own > 20 * other.max(1), "route {route}: own slices {own}, others {other}: {:?}", r.windows);
        assert!(other <= 4 * 8, "route {route}: {other} completions in other slices");
    }
    let measured = Measured {
        outcome,
        interrupted: false,
        server_lost: false,
        cpu: CpuWindows::default(),
        client_peak_rss_bytes: 0,
        folded: None,
        start: bench_client::measure::Start::now(),
    };
    for route in 0..2 {
        let f = RunFigures::of_route(&measured, &load.settings, None, route, load.slicing.as_ref().unwrap());
        assert_eq!(f.windows.len(), 8, "two own slices per block of four, four blocks");
        assert_eq!(f.windows.iter().sum::<u64>(), f.successful);
        assert!((f.duration_s - 0.4).abs() < 1e-9 && (f.window_s - 0.05).abs() < 1e-9, "{f:?}");
        assert_eq!(
            f.counts.sent,
            f.counts.warmup_completed
                + f.successful
                + f.failed_total
                + f.transition_completed
                + f.counts.in_flight_at_deadline
        );
    }
}

#[test]
fn two_servers_alternate_each_loaded_alone_in_its_slices() {
    use std::sync::atomic::AtomicBool;

    use bench_client::engine;

    let _exclusive = util::exclusive();
    let (a, written_a) =
        responder(|_| Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA", close: false });
    let (b, written_b) =
        responder(|_| Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA", close: false });
    let load = two_routes_in_slices([(a, "/x", b"A"), (b, "/x", b"A")]);
    let block = load.slicing.as_ref().unwrap().block().to_vec();
    let outcome = engine::run(&load, std::time::Instant::now(), &[&AtomicBool::new(false)]).unwrap();
    assert_eq!(outcome.stats.failures.requests(), 0, "{:?}", outcome.stats.failures);
    assert_eq!(outcome.stats.counts.connections_established, 8, "four connections to each server");
    for (route, r) in outcome.by_route.iter().enumerate() {
        let own: u64 = (0..16).filter(|s| block[s % 4] == route).map(|s| r.windows[s].successful).sum();
        let other: u64 = (0..16).filter(|s| block[s % 4] != route).map(|s| r.windows[s].successful).sum();
        assert!(own > 20 * other.max(1), "route {route}: own slices {own}, others {other}");
    }
    // Each server answered the requests of its own route: every one settled,
    // and at most those still in flight at the deadline besides.
    for (written, r) in [(&written_a, &outcome.by_route[0]), (&written_b, &outcome.by_route[1])] {
        let written = written.load(Ordering::Relaxed);
        assert!(
            (r.counts.sent - r.counts.in_flight_at_deadline..=r.counts.sent).contains(&written),
            "{written} written, {} sent",
            r.counts.sent
        );
    }
}

#[test]
fn a_status_answered_on_purpose_is_loaded_with_expect_status_and_a_changing_answer_is_refused() {
    // Alone: beside shared load, a run of it once wrote no results (CI, fresh clone).
    let _exclusive = util::exclusive();
    static SERVED: AtomicU64 = AtomicU64::new(0);
    let (addr, _) = responder(|path| match path {
        "/made" => Answer { bytes: b"HTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\nmade", close: false },
        "/moved" => Answer { bytes: b"HTTP/1.1 302 Found\r\nLocation: /\r\nContent-Length: 0\r\n\r\n", close: false },
        // Another body every other request: nothing could be verified.
        _ if SERVED.fetch_add(1, Ordering::Relaxed).is_multiple_of(2) => {
            Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n0", close: false }
        }
        _ => Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1", close: false },
    });
    let (out, v) = load(&format!("http://{addr}/made"), &QUICK);
    let err = util::one_line_exit(&out, 1);
    assert!(err.contains("status 201 instead of 200"), "{err}");
    assert!(v.is_none(), "nothing measured");
    for (path, status) in [("/made", "201"), ("/moved", "302")] {
        let (out, v) = load(&format!("http://{addr}{path}"), &[&QUICK[..], &["--expect-status", status]].concat());
        let v = v.expect("results written");
        assert_all_successful(&out, &v);
        assert_eq!(v["failed"]["status"], serde_json::json!({}), "{path}: {v}");
    }
    let (out, v) = load(&format!("http://{addr}/counter"), &QUICK);
    let err = util::one_line_exit(&out, 1);
    assert!(err.contains("the answer changes from one request to the next (body 1 → 1 bytes, from byte 0"), "{err}");
    assert!(v.is_none(), "nothing measured");
    let (out, _) = load(&format!("http://{addr}/made"), &[&QUICK[..], &["--expect-status", "99"]].concat());
    assert!(util::one_line_exit(&out, 2).contains("--expect-status"));
}

#[test]
fn slo_bounds_are_judged_at_the_end_recorded_and_a_violation_exits_1() {
    let _exclusive = util::exclusive();
    let (addr, _) = responder(|_| Answer { bytes: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", close: false });
    let url = format!("http://{addr}/");
    let (out, v) = load(&url, &[&QUICK[..], &["--slo", "p99<10s,success>=99.9%"]].concat());
    let v = v.expect("results written");
    assert_all_successful(&out, &v);
    let p99 = v["latency_us"]["p99"].as_f64().unwrap();
    assert_eq!(
        v["slo"],
        serde_json::json!([
            { "objective": "p99<10s", "actual": p99, "met": true },
            { "objective": "success>=99.9%", "actual": 100.0, "met": true }
        ])
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("SLO p99<10s: {p99:.1} µs, met")), "{stdout}");
    let (out, v) = load(&url, &[&QUICK[..], &["--slo", "p50<1us,success>=99%"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("SLO p50<1us: "), "{v:?}");
    let v = v.unwrap();
    // Exit 1 for the bound alone: the run itself is clean.
    assert_eq!((v["failed_total"].as_u64(), v["complete"].as_bool()), (Some(0), Some(true)), "{v}");
    assert_eq!((v["slo"][0]["met"].as_bool(), v["slo"][1]["met"].as_bool()), (Some(false), Some(true)));
    let (out, v) = load(&url, &[&QUICK[..], &["--slo", "p99<2"]].concat());
    assert!(util::one_line_exit(&out, 2).contains("--slo \"p99<2\": a latency needs a unit"));
    assert!(v.is_none(), "nothing measured");
}
