//! `bench-client load` against responders that stretch or break RFC 9112's
//! grammar: a folded header (obs-fold, section 5.2) loads clean; bytes after
//! a response that belong to no response (section 6.3), sent with its body
//! or later, fail the run by kind; and a refusal says the server answered
//! and names the header.

use std::io::Write;
use std::net::SocketAddr;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::util::{self, CLIENT, HELLO};

/// The bytes a misbehaving responder sends beyond its response.
const EXTRA: &[u8] = b"extra";

/// A responder answering each request `Hello, World!` (`Content-Length:
/// 13`) and, from the `from`-th answer of a connection (from 0) on, 5 bytes
/// more: in the same write (`later` `None`), or that long after it.
fn with_extra_bytes(from: u64, later: Option<Duration>) -> SocketAddr {
    util::serve_each(move |mut stream| {
        util::answer_heads(&mut stream, |s, n| match later {
            _ if n < from => s.write_all(HELLO).is_ok(),
            None => s.write_all(&[HELLO, EXTRA].concat()).is_ok(),
            Some(delay) => {
                let answered = s.write_all(HELLO).is_ok();
                std::thread::sleep(delay);
                answered && s.write_all(EXTRA).is_ok()
            }
        });
    })
}

/// A responder answering each request with `answer`.
fn answering(answer: &'static [u8]) -> SocketAddr {
    util::serve_each(move |mut stream| util::answer_heads(&mut stream, |s, _| s.write_all(answer).is_ok()))
}

/// `load URL extra… --json FILE`: the process output and, when written, the JSON.
fn load(addr: SocketAddr, extra: &[&str]) -> (Output, Option<Value>) {
    let json = util::temp_dir("grammar").join("run.json");
    let out = util::output_within(
        Command::new(CLIENT).args(["load", &format!("http://{addr}/x"), "--json"]).arg(&json).args(extra),
        Duration::from_secs(60),
    );
    let value = std::fs::read_to_string(&json).ok().map(|t| serde_json::from_str(&t).expect("valid JSON"));
    (out, value)
}

fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

const CLOSED: [&str; 6] = ["--connections", "4", "--duration", "1s", "--warmup", "0s"];

/// The run failed (exit 1), its file valid and adding up, with `stray`
/// connections and `protocol` failed requests as `check` wants them.
fn assert_failed_by_kind(out: &Output, v: Option<Value>, check: impl Fn(u64, u64) -> bool) -> Value {
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let v = v.unwrap_or_else(|| panic!("results written: {text}"));
    util::assert_schema(&v, Some("load_report"));
    assert_eq!(out.status.code(), Some(1), "{text}");
    let (stray, protocol) = (v["failed"]["stray"].as_u64().unwrap(), v["failed"]["protocol"].as_u64().unwrap());
    assert!(check(stray, protocol), "stray {stray}, protocol {protocol}: {v}");
    assert!(text.contains(&format!("connections with stray bytes {stray}")), "{text}");
    let said = format!("STRAY: the server sent bytes that belong to no response on {stray} connections, each closed");
    assert_eq!(text.contains(&said), stray > 0, "{text}");
    assert_eq!(count(&v, "failed_total"), protocol, "only protocol failures among the requests: {v}");
    assert_eq!(
        count(&v, "sent"),
        count(&v, "warmup_completed")
            + count(&v, "successful")
            + count(&v, "failed_total")
            + count(&v, "in_flight_at_deadline")
            + count(&v, "retried"),
        "every request written settled once or in flight: {v}"
    );
    v
}

#[test]
fn bytes_after_a_response_fail_the_run_by_kind_sent_with_the_body_or_later() {
    let _exclusive = util::exclusive();
    // With the body: once the response is read, no request is outstanding.
    let (out, v) = load(with_extra_bytes(1, None), &CLOSED);
    let v = assert_failed_by_kind(&out, v, |stray, _| stray > 0);
    assert!(count(&v, "successful") > 0, "the first answer of each connection is clean: {v}");
    // 50 ms later on a connection idle between open-loop requests (one every 200 ms each).
    let open = ["--rate", "10", "--connections", "2", "--duration", "1s", "--warmup", "0s"];
    let (out, v) = load(with_extra_bytes(1, Some(Duration::from_millis(50))), &open);
    assert_failed_by_kind(&out, v, |stray, _| stray > 0);
    // 50 ms later in the closed loop, the next request outstanding: not the
    // start of its response, so that request fails as `protocol`.
    let (out, v) = load(with_extra_bytes(1, Some(Duration::from_millis(50))), &CLOSED);
    assert_failed_by_kind(&out, v, |stray, protocol| stray + protocol > 0 && protocol > 0);
    // From the first answer: preflight sees them and refuses, saying the server answered.
    let addr = with_extra_bytes(0, None);
    let (out, v) = load(addr, &CLOSED);
    let err = util::one_line_exit(&out, 1);
    assert!(
        err.contains(&format!(
            "{addr} answered GET /x, but the load engine cannot count this answer: 5 bytes after the response \
             belong to no response (RFC 9112 section 6.3), starting \"extra\""
        )),
        "{err}"
    );
    assert!(!err.contains("cannot reach") && v.is_none(), "{err}");
}

#[test]
fn a_folded_header_loads_clean_and_a_refusal_names_the_header() {
    let _exclusive = util::exclusive();
    let folded = answering(
        b"HTTP/1.1 200 OK\r\nX-Folded: first part\r\n  second part\r\nContent-Length: 13\r\n\r\nHello, World!",
    );
    let (out, v) = load(folded, &CLOSED);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    let v = v.expect("results written");
    assert!(count(&v, "successful") > 0 && count(&v, "failed_total") == 0, "{v}");
    assert_eq!((v["failed"]["stray"].as_u64(), v["failed"]["protocol"].as_u64()), (Some(0), Some(0)), "{v}");
    for (answer, named) in [
        (
            &b"HTTP/1.1 200 OK\r\nContent-Length: 13x\r\n\r\nHello, World!"[..],
            "the header Content-Length: \"13x\" is not a length (RFC 9110 section 8.6: 1*DIGIT)",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nTransfer-Encoding: chunked\r\n\r\nd\r\nHello, World!\r\n0\r\n\r\n",
            "the headers Content-Length and Transfer-Encoding are both present",
        ),
        (b"HTTP/1.1 200 OK\r\nX Bad: y\r\nContent-Length: 13\r\n\r\nHello, World!", "the header line \"X Bad: y\""),
    ] {
        let addr = answering(answer);
        let (out, v) = load(addr, &CLOSED);
        let err = util::one_line_exit(&out, 1);
        assert!(err.contains(&format!("{addr} answered GET /x, but the load engine cannot count this answer")), "{err}");
        assert!(err.contains(named) && !err.contains("cannot reach") && v.is_none(), "{err}");
    }
}
