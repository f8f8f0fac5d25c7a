//! The engine against server doubles that answer wrong bodies or statuses,
//! or close connections: wrong responses are failures by kind, never
//! successes; closed connections are reconnections, not errors; and the
//! counts add up in every mode (closed loop, pipelined, open loop).

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bench_client::engine::{self, Load, LoadSettings, Rate, RouteLoad, RunStats, Target, Timing};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const GOOD_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";
const BAD_BODY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, Wxrld!";
const BAD_STATUS: &[u8] = b"HTTP/1.1 503 Busy\r\nContent-Length: 13\r\n\r\nHello, World!";
const GOOD_THEN_CLOSE: &[u8] = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 13\r\n\r\nHello, World!";

/// Kinds of answer, as `pick` returns them.
const GOOD: usize = 0;
const WRONG_BODY: usize = 1;
const WRONG_STATUS: usize = 2;
/// A good answer with `Connection: close`, after which the double closes.
const CLOSE: usize = 3;
/// A good answer, after which the double closes without saying so.
const CLOSE_SILENTLY: usize = 4;

/// Responses the double wrote (or began to write), by kind.
type Sent = Arc<[AtomicU64; 5]>;

/// Starts a double on an ephemeral port; `pick(n)` chooses the n-th
/// response's kind, counted per server.
fn start_double(pick: fn(u64) -> usize) -> (std::net::SocketAddr, Sent) {
    let sent: Sent = Arc::new(std::array::from_fn(|_| AtomicU64::new(0)));
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let counter = Arc::new(AtomicU64::new(0));
    let sent_c = Arc::clone(&sent);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async move {
            listener.set_nonblocking(true).unwrap();
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let (counter, sent) = (Arc::clone(&counter), Arc::clone(&sent_c));
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Ok(n) = stream.read(&mut chunk).await else { return };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            buf.drain(..end + 4);
                            let kind = pick(counter.fetch_add(1, Ordering::Relaxed));
                            let response = [GOOD_RESPONSE, BAD_BODY, BAD_STATUS, GOOD_THEN_CLOSE, GOOD_RESPONSE][kind];
                            // Counted before the write: the client may read the
                            // response before this task runs again.
                            sent[kind].fetch_add(1, Ordering::Relaxed);
                            if stream.write_all(response).await.is_err() {
                                return;
                            }
                            if kind == CLOSE || kind == CLOSE_SILENTLY {
                                return;
                            }
                        }
                    }
                });
            }
        });
    });
    (addr, sent)
}

fn settings(connections: usize) -> LoadSettings {
    LoadSettings::closed(
        NonZeroUsize::new(connections).unwrap(),
        NonZeroUsize::MIN,
        Timing::new(Duration::ZERO, Duration::from_secs(1), Duration::from_millis(250)).unwrap(),
        Duration::from_secs(2),
    )
}

fn plan(addr: std::net::SocketAddr, connections: usize) -> Load {
    with(addr, settings(connections))
}

fn with(addr: std::net::SocketAddr, settings: LoadSettings) -> Load {
    Load::new(RouteLoad::ok(Target::new(addr, "/plaintext"), b"Hello, World!".to_vec()), settings)
}

/// The identities every run satisfies: windows add up to the totals, and
/// every request written is settled exactly once or still in flight (a
/// request written again after its connection closed counts in `sent` once
/// per write, and once in `retried`).
fn assert_accounting(s: &RunStats) {
    let windows: u64 = s.windows.iter().map(|w| w.successful).sum();
    let failed: u64 = s.windows.iter().map(|w| w.failed).sum();
    assert_eq!(windows, s.successful());
    assert_eq!(failed, s.settled_failures());
    crate::util::assert_sent_adds_up(s);
}

#[test]
fn a_double_that_is_always_wrong_yields_zero_successes() {
    let (addr, sent) = start_double(|n| if n % 2 == 0 { WRONG_BODY } else { WRONG_STATUS });
    let outcome = engine::run(&plan(addr, 4), Instant::now(), &[&AtomicBool::new(false)]).unwrap();
    let s = &outcome.stats;
    assert_eq!(s.successful(), 0);
    assert!(s.failures.body > 0 && s.failures.status[&503] > 0, "{:?}", s.failures);
    assert_eq!(s.latency_us.len(), 0, "failures record no latency");
    let wrong = sent[1].load(Ordering::Relaxed) + sent[2].load(Ordering::Relaxed);
    let counted = s.failures.body + s.failures.status[&503];
    assert!(
        counted <= wrong && wrong - counted <= 4,
        "every wrong answer but those in flight counted: {counted} of {wrong}"
    );
}

#[test]
fn mixed_answers_are_counted_exactly_by_kind() {
    let connections = 8;
    let (addr, sent) = start_double(|n| match n % 10 {
        3 => WRONG_BODY,
        7 => WRONG_STATUS,
        _ => GOOD,
    });
    let outcome = engine::run(&plan(addr, connections), Instant::now(), &[&AtomicBool::new(false)]).unwrap();
    let s = &outcome.stats;
    let sent: Vec<u64> = sent.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    let counted = [s.successful(), s.failures.body, s.failures.status.get(&503).copied().unwrap_or(0)];
    // Every response the double sent was counted under its own kind, except
    // at most one per connection still in flight at the deadline.
    for (kind, (&c, &d)) in counted.iter().zip(&sent).enumerate() {
        assert!(c <= d && d - c <= connections as u64, "kind {kind}: counted {c}, sent {d}");
    }
    assert!(s.successful() > 0 && s.failures.body > 0);
    assert_accounting(s);
    assert!(s.counts.in_flight_at_deadline <= connections as u64);
    assert_eq!(s.windows.len(), 4);
    assert_eq!(s.counts.connections_established, connections as u64);
}

#[test]
fn pipelined_and_open_loop_runs_count_every_request_once() {
    let (addr, sent) = start_double(|n| if n % 5 == 0 { WRONG_STATUS } else { GOOD });
    let mut pipelined = settings(4);
    pipelined.pipeline = NonZeroUsize::new(8).unwrap();
    let p = engine::run(&with(addr, pipelined), Instant::now(), &[&AtomicBool::new(false)]).unwrap().stats;
    assert_accounting(&p);
    assert!(p.counts.in_flight_at_deadline <= 4 * 8);
    assert!(p.successful() > 0 && p.failures.status[&503] > 0);
    assert_eq!(p.failures.requests(), p.failures.status[&503], "only the wrong statuses fail: {:?}", p.failures);
    assert!(p.latency_uncorrected_us.is_none(), "the closed loop keeps one latency");

    let mut open = settings(4);
    open.rate = Rate::new(2_000.0);
    let o = engine::run(&with(addr, open), Instant::now(), &[&AtomicBool::new(false)]).unwrap().stats;
    assert_accounting(&o);
    // The schedule: requests k = 0, 1, … due at k / rate from the start, so
    // by the deadline (1 s) 2,001 were due; each was written or is counted unsent.
    assert_eq!(o.counts.sent + o.counts.unsent_at_deadline, 2_001);
    assert_eq!(o.latency_uncorrected_us.as_ref().map(|h| h.len()), Some(o.latency_us.len()));
    let total: u64 = sent.iter().map(|a| a.load(Ordering::Relaxed)).sum();
    assert!(total >= o.counts.sent + p.counts.sent - 4 * 8 - 4, "the double answered what was written");
}

#[test]
fn a_server_closing_after_every_response_costs_reconnections_not_errors() {
    let connections = 4;
    let (addr, sent) = start_double(|_| CLOSE);
    let outcome = engine::run(&plan(addr, connections), Instant::now(), &[&AtomicBool::new(false)]).unwrap();
    let s = &outcome.stats;
    assert_accounting(s);
    assert_eq!(s.failures.requests(), 0, "{:?}", s.failures);
    assert_eq!(s.failures.connect, 0);
    assert!(s.successful() > 10, "{}", s.successful());
    // One connection per response: the first of each slot, then reconnections.
    assert_eq!(s.counts.reconnects, s.counts.connections_established - connections as u64);
    // Every reconnection followed a close by the server; a close in the
    // last turn before the deadline may not have reconnected.
    assert!(
        (s.counts.reconnects..=s.counts.reconnects + connections as u64).contains(&s.counts.closed_by_server),
        "{s:?}"
    );
    assert_eq!(s.counts.retried, 0, "each request was answered before its connection closed");
    assert!(s.counts.reconnects + connections as u64 >= s.successful(), "{} reconnects", s.counts.reconnects);
    assert!(sent[CLOSE].load(Ordering::Relaxed) >= s.successful());
}

#[test]
fn a_server_closing_at_random_costs_reconnections_not_errors() {
    let connections = 8;
    // A fixed pseudo-random pattern: about one response in seven closes the
    // connection, half of them without `Connection: close`.
    let (addr, sent) = start_double(|n| match n.wrapping_mul(2_654_435_761) % 14 {
        0 => CLOSE,
        1 => CLOSE_SILENTLY,
        _ => GOOD,
    });
    for pipeline in [1, 4] {
        let mut settings = settings(connections);
        settings.pipeline = NonZeroUsize::new(pipeline).unwrap();
        let outcome = engine::run(&with(addr, settings), Instant::now(), &[&AtomicBool::new(false)]).unwrap();
        let s = &outcome.stats;
        assert_accounting(s);
        assert_eq!(s.failures.requests(), 0, "pipeline {pipeline}: {:?}", s.failures);
        assert!(
            s.counts.reconnects > 0 && s.successful() > s.counts.reconnects,
            "pipeline {pipeline}: {} reconnects, {} successful",
            s.counts.reconnects,
            s.successful()
        );
        assert_eq!(s.counts.connections_established, connections as u64 + s.counts.reconnects);
        assert!(
            (s.counts.reconnects..=s.counts.reconnects + connections as u64).contains(&s.counts.closed_by_server),
            "pipeline {pipeline}: no reconnection after an error: {s:?}"
        );
        if pipeline > 1 {
            // Requests written behind a response that closed were written again.
            assert!(s.counts.retried > 0, "pipeline {pipeline}: no retry");
        }
    }
    assert!(sent[CLOSE_SILENTLY].load(Ordering::Relaxed) > 0 && sent[CLOSE].load(Ordering::Relaxed) > 0);
}
