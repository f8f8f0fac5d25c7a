//! `load` for any API, as oha and hey users load one: `-m`, `-H`, `--body`,
//! `-D` reach the server byte for byte (seen by a raw responder that records
//! every request whole), `-n N` ends a run with exactly N successes and every
//! request accounted for, `-z` is `-d`, and bad input is one line, exit 2,
//! before any request.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bench_client::results::{LoadReport, read_load};

use crate::util::{self, client, one_line_exit};

/// Every request a [`recorder`] read, whole (head and body), in order.
type Seen = Arc<Mutex<Vec<Vec<u8>>>>;

/// The `Content-Length` of a request head, 0 without one.
fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.trim().parse().expect("a length"))
}

/// A responder on 127.0.0.1 that reads each request whole (its head, then
/// as many body bytes as its `Content-Length` says), records it, and
/// answers `answer(k, request)` to the k-th request it read overall (from 0).
fn recorder(answer: fn(usize, &[u8]) -> &'static [u8]) -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    let addr = util::serve_each(move |mut stream: TcpStream| {
        let (mut buf, mut chunk) = (Vec::new(), [0u8; 16 * 1024]);
        loop {
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let whole = end + 4 + content_length(&buf[..end]);
                if buf.len() < whole {
                    break;
                }
                let request: Vec<u8> = buf.drain(..whole).collect();
                let response = {
                    let mut seen = record.lock().unwrap();
                    let response = answer(seen.len(), &request);
                    seen.push(request);
                    response
                };
                if stream.write_all(response).is_err() {
                    return;
                }
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    });
    (addr, seen)
}

const CREATED: &[u8] = b"HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\ncreated";

/// 201 `created`; to a `HEAD`, its head alone.
fn created(_: usize, request: &[u8]) -> &'static [u8] {
    if request.starts_with(b"HEAD ") { &CREATED[..CREATED.len() - 7] } else { CREATED }
}

/// `load URL ARGS… --json FILE`: the output and the report.
fn load(url: &str, args: &[&str], name: &str) -> (std::process::Output, LoadReport) {
    let json = util::temp_dir(&format!("load-api-{name}")).join("load.json");
    let out = client(&[&["load", url][..], args, &["--json", json.to_str().unwrap()]].concat());
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let report = read_load(&json).unwrap_or_else(|e| panic!("{e:#}: {text}"));
    (out, report)
}

/// Every write is the warm-up's, a measured success or failure, a
/// completion in another route's slice, in flight at the end, or written
/// again as a retry.
fn assert_accounted(r: &LoadReport) {
    let f = &r.figures;
    let c = &f.counts;
    assert_eq!(
        c.sent,
        c.warmup_completed
            + f.successful
            + f.failed_total
            + f.transition_completed
            + c.in_flight_at_deadline
            + c.retried,
        "successful {}, failed {}, transition {}, counts {:?}",
        f.successful,
        f.failed_total,
        f.transition_completed,
        c
    );
    assert_eq!(f.windows.iter().sum::<u64>(), f.successful, "windows add up");
    assert_eq!(f.windows_failed.iter().sum::<u64>(), f.failed_total, "failed windows add up");
}

#[test]
fn method_headers_and_body_reach_the_server_byte_for_byte() {
    let _exclusive = util::exclusive();
    let (addr, seen) = recorder(created);
    // Not UTF-8, with an empty line and a NUL inside: sent as is, framed by its length.
    let body: &[u8] = b"{\"name\":\"\xff\xfe\"}\r\n\r\nGET / HTTP/1.1\r\n\x00end";
    let file = util::temp_dir("load-api-body").join("body.bin");
    std::fs::write(&file, body).unwrap();
    let url = format!("http://{addr}/api/items?x=1");
    let args = [
        "-m",
        "POST",
        "-H",
        "Authorization: Bearer abc:def",
        "-H",
        "content-type:application/json",
        "-H",
        "Host: api.test",
        "-H",
        "X-Repeat: 1",
        "-H",
        "X-Repeat: 2",
        "-D",
        file.to_str().unwrap(),
        "--expect-status",
        "201",
        "-c",
        "2",
        "-d",
        "2s",
        "--warmup",
        "0s",
        "-n",
        "40",
    ];
    let (out, report) = load(&url, &args, "bytes");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut want = format!(
        "POST /api/items?x=1 HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer abc:def\r\n\
         content-type: application/json\r\nX-Repeat: 1\r\nX-Repeat: 2\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    want.extend_from_slice(body);
    let seen = seen.lock().unwrap();
    for (k, got) in seen.iter().enumerate() {
        assert_eq!(String::from_utf8_lossy(got), String::from_utf8_lossy(&want), "request {k}");
        assert_eq!(got, &want, "request {k}, byte for byte");
    }
    // Preflight sent the same request three times (not the route table's
    // request, so its answer is fetched and must be stable), then the load.
    assert_eq!(seen.len() as u64, report.figures.counts.sent + 3, "{:?}", report.figures.counts);
    assert_eq!(report.figures.successful, 40);
    assert_accounted(&report);
}

#[test]
fn body_text_at_file_and_methods_are_sent_as_given() {
    let _exclusive = util::exclusive();
    let (addr, seen) = recorder(created);
    let file = util::temp_dir("load-api-at-body").join("b.txt");
    std::fs::write(&file, "from a file\n").unwrap();
    let url = format!("http://{addr}/v");
    let common = ["--expect-status", "201", "-c", "1", "-d", "1s", "--warmup", "0s", "-n", "5"];
    let at = format!("@{}", file.display());
    for (extra, want) in [
        (&["--body", "-x y"][..], "GET /v HTTP/1.1\r\nHost: ADDR\r\nContent-Length: 4\r\n\r\n-x y"),
        (&["-m", "PUT", "--body", &at], "PUT /v HTTP/1.1\r\nHost: ADDR\r\nContent-Length: 12\r\n\r\nfrom a file\n"),
        (&["-m", "PATCH"], "PATCH /v HTTP/1.1\r\nHost: ADDR\r\nContent-Length: 0\r\n\r\n"),
        // Answered with a Content-Length and no body: framed as a HEAD's answer.
        (&["-m", "HEAD", "-H", "Accept: */*"], "HEAD /v HTTP/1.1\r\nHost: ADDR\r\nAccept: */*\r\n\r\n"),
    ] {
        seen.lock().unwrap().clear();
        let (out, report) = load(&url, &[&common[..], extra].concat(), "at");
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(report.figures.successful, 5, "{extra:?}");
        let want = want.replace("ADDR", &addr.to_string());
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 5 + 3, "{extra:?}");
        assert!(seen.iter().all(|r| r == want.as_bytes()), "{extra:?}: {:?}", String::from_utf8_lossy(&seen[0]));
    }
}

/// 200 `ok`, but 503 to every 7th request after preflight's three.
fn some_fail(k: usize, _: &[u8]) -> &'static [u8] {
    if k >= 3 && k.is_multiple_of(7) {
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"
    } else {
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    }
}

#[test]
fn n_ends_the_run_at_exactly_n_successes_with_every_request_accounted_for() {
    let _exclusive = util::exclusive();
    let (addr, seen) = recorder(some_fail);
    let url = format!("http://{addr}/n");
    let began = Instant::now();
    let args = ["-n", "500", "-c", "8", "-t", "2", "-d", "20s", "--window", "5ms", "--warmup", "200ms"];
    let (out, report) = load(&url, &args, "n");
    let wall = began.elapsed();
    let f = &report.figures;
    // The 503s are failures: exit 1, but the count of successes is exact.
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let short = format!("successful {}, failed {:?}, counts {:?}", f.successful, f.failed, f.counts);
    assert_eq!(f.successful, 500, "{short}");
    assert!(f.failed_total > 0 && f.failed.status.get(&503) == Some(&f.failed_total), "{:?}", f.failed);
    assert_eq!(f.counts.in_flight_at_deadline, 0, "nothing written beyond N");
    assert_accounted(&report);
    // The server read every request written, no more: preflight's 3 and `sent`.
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(seen.lock().unwrap().len() as u64, f.counts.sent + 3);
    // Ended long before its 20 s: the measured time is up to the N-th
    // success; its window partial, those after it empty.
    assert!(wall < Duration::from_secs(10), "{wall:?}");
    assert!(f.duration_s > 0.0 && f.duration_s < 10.0, "{}", f.duration_s);
    assert_eq!(f.windows.len(), 4000);
    let last = f.windows.iter().rposition(|&w| w > 0).unwrap();
    let ends = (last as f64 * 0.005, (last + 1) as f64 * 0.005);
    assert!(ends.0 <= f.duration_s && f.duration_s <= ends.1, "{} s, last window {last}", f.duration_s);
    assert!(f.windows[last + 1..].iter().all(|&w| w == 0));
    assert!(f.complete, "reaching N is the plan, not an interruption");
    assert!(String::from_utf8_lossy(&out.stderr).contains("or until 500 successful requests"));
}

#[test]
fn z_is_the_duration() {
    let _exclusive = util::exclusive();
    let (addr, _) = recorder(|_, _| b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    let url = format!("http://{addr}/z");
    let runs: Vec<(f64, usize)> = ["-z", "-d"]
        .iter()
        .map(|flag| {
            let (out, r) = load(&url, &[flag, "1s", "--window", "250ms", "--warmup", "0s", "-c", "2"], "z");
            assert_eq!(out.status.code(), Some(0), "{flag}");
            (r.figures.duration_s, r.figures.windows.len())
        })
        .collect();
    assert_eq!(runs, [(1.0, 4), (1.0, 4)]);
}

#[test]
fn bad_request_input_is_one_line_exit_2_before_any_request() {
    let (addr, seen) = recorder(created);
    let url = format!("http://{addr}/bad");
    for (args, says) in [
        (&["-H", "Authorization Bearer x"][..], "has no colon"),
        (&["-H", "X Y: 1"], "is not a header name"),
        (&["-m", "GET X"], "is not an HTTP method"),
        (&["-m", ""], "is not an HTTP method"),
        (&["--body", "@/nonexistent/body.json"], "cannot read the body file /nonexistent/body.json"),
        (&["-D", "/nonexistent/body.json"], "cannot read the body file /nonexistent/body.json"),
        (&["-n", "0"], "'0' is not a number of requests"),
        (&["-n", "many"], "'many' is not a number of requests"),
        (&["-H", "Content-Length: 5", "--body", "hello"], "is written by the client"),
        (&["-H", "Connection: close"], "is written by the client"),
        (&["-H", "Host: a", "-H", "host: b"], "given twice"),
        (&["-n", "10", "-R", "100"], "-n ends a closed loop"),
        // RFC 9113 8.2.2: fields of an HTTP/1.1 connection make an HTTP/2 request malformed.
        (&["--http2", "-H", "Keep-Alive: timeout=5"], "'Keep-Alive: timeout=5' is specific to an HTTP/1.1 connection"),
        (&["--http2", "-H", "Upgrade: websocket"], "is specific to an HTTP/1.1 connection"),
        (&["--http2", "-H", "Proxy-Connection: keep-alive"], "is specific to an HTTP/1.1 connection"),
        (&["--http2", "-H", "TE: gzip"], "'TE: gzip' is specific to an HTTP/1.1 connection"),
        // Requests due at 0 s and 5 s: none in the windows.
        (&["--rate", "0.2", "--warmup", "1s", "-d", "2s"], "--rate 0.2: no request falls due in the measured windows"),
    ] {
        let out = client(&[&["load", &url][..], args].concat());
        let line = one_line_exit(&out, 2);
        assert!(line.contains(says), "{args:?}: {line}");
    }
    assert!(seen.lock().unwrap().is_empty(), "no request reached the server");
}

#[test]
fn n_cut_short_by_the_duration_says_so_and_fails() {
    let _quiet = util::quiet();
    // 100 ms an answer on 2 connections: about 20 in the second, never 100.
    let url = format!("http://{}/slow", util::slow_server(Duration::from_millis(100)));
    let (out, report) =
        load(&url, &["-n", "100", "-c", "2", "--warmup", "0s", "-d", "1s", "--timeout", "1s"], "n-short");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let reached = report.figures.successful;
    assert!((5..100).contains(&reached), "{reached}");
    assert_eq!((report.requests_asked, report.short_of_requests_asked()), (Some(100), Some((100, reached))));
    let line = format!("SHORT: -n 100: {reached} successful requests when --duration 1s ended the run");
    assert!(stdout.lines().any(|l| l == line), "{line} in:\n{stdout}");
    util::assert_schema(&serde_json::to_value(&report).unwrap(), Some("load_report"));
}

#[test]
fn an_open_loop_below_ten_requests_a_second_is_printed_with_its_decimals() {
    let _quiet = util::quiet();
    let (addr, _) = recorder(|_, _| b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    // Due at 0, 0.4, 0.8, 1.2 and 1.6 s: 5 in the 2 s of windows.
    let args = ["--rate", "2.5", "-c", "1", "--warmup", "0s", "-d", "2s", "--window", "500ms"];
    let (out, report) = load(&format!("http://{addr}/slow-rate"), &args, "rate");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    // A thread woken over 2 ms late on a busy machine makes the run short of its schedule
    // (`accounting` tests that); the subject here is how the rate prints.
    assert!(out.status.success() || util::only_late(&out), "{stderr}\n{stdout}");
    assert_eq!(report.figures.successful, 5, "{stderr}\n{stdout}");
    assert!(stderr.contains("open loop at 2.5 requests/s"), "{stderr}");
    assert!(stdout.contains("open loop at 2.5 requests/s"), "{stdout}");
    assert!(stdout.contains("(2.5 requests/s)"), "the rate reached: {stdout}");
}
