//! The engine against server doubles that answer wrong bodies or statuses:
//! those responses are failures by kind, never successes, and the counts add up.

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bench_client::engine::{self, LoadPlan, LoadSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const GOOD: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, World!";
const BAD_BODY: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\nHello, Wxrld!";
const BAD_STATUS: &[u8] = b"HTTP/1.1 503 Busy\r\nContent-Length: 13\r\n\r\nHello, World!";

/// Responses the double sent, by kind: [good, bad body, bad status].
type Sent = Arc<[AtomicU64; 3]>;

/// Starts a double on an ephemeral port; `pick(n)` chooses the n-th
/// response's kind (0 good, 1 bad body, 2 bad status), counted per server.
fn start_double(pick: fn(u64) -> usize) -> (std::net::SocketAddr, Sent) {
    let sent: Sent = Arc::new([AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]);
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
                            let response = [GOOD, BAD_BODY, BAD_STATUS][kind];
                            if stream.write_all(response).await.is_err() {
                                return;
                            }
                            sent[kind].fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
    });
    (addr, sent)
}

fn plan(addr: std::net::SocketAddr, connections: usize) -> LoadPlan {
    let settings = LoadSettings {
        connections: NonZeroUsize::new(connections).unwrap(),
        threads: NonZeroUsize::MIN,
        warmup: Duration::ZERO,
        duration: Duration::from_secs(1),
        window: Duration::from_millis(250),
        timeout: Duration::from_secs(2),
    };
    settings.plan(addr, addr.to_string(), "/plaintext".to_owned(), b"Hello, World!".to_vec(), None)
}

#[test]
fn a_double_that_is_always_wrong_yields_zero_successes() {
    let (addr, sent) = start_double(|n| if n % 2 == 0 { 1 } else { 2 });
    let outcome = engine::run(&plan(addr, 4), &AtomicBool::new(false)).unwrap();
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
        3 => 1,
        7 => 2,
        _ => 0,
    });
    let outcome = engine::run(&plan(addr, connections), &AtomicBool::new(false)).unwrap();
    let s = &outcome.stats;
    let sent: Vec<u64> = sent.iter().map(|a| a.load(Ordering::Relaxed)).collect();
    let counted = [s.successful(), s.failures.body, s.failures.status.get(&503).copied().unwrap_or(0)];
    // Every response the double sent was counted under its own kind, except
    // at most one per connection still in flight at the deadline.
    for (kind, (&c, &d)) in counted.iter().zip(&sent).enumerate() {
        assert!(c <= d && d - c <= connections as u64, "kind {kind}: counted {c}, sent {d}");
    }
    assert!(s.successful() > 0 && s.failures.body > 0);
    // Accounting identity: every request sent is settled exactly once.
    assert_eq!(s.sent, s.warmup_completed + s.successful() + s.failures.requests() + s.in_flight_at_deadline);
    assert!(s.in_flight_at_deadline <= connections as u64);
    let windows: u64 = s.windows.iter().map(|w| w.successful).sum();
    let failed: u64 = s.windows.iter().map(|w| w.failed).sum();
    assert_eq!(windows, s.successful());
    assert_eq!(failed, s.failures.requests());
    assert_eq!(s.windows.len(), 4);
    assert_eq!(s.connections_established, connections as u64);
}
