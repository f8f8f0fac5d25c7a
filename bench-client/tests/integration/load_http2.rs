//! `load --http2` in the engine's one loop: against each server (h2c with
//! prior knowledge, and ALPN `h2` over TLS) every request verified with the
//! counts adding up; against a tiny scripted HTTP/2 server (raw frames on a
//! std `TcpListener`), every failure accounted for by kind and never a hang:
//! `GOAWAY` mid-run, `RST_STREAM`, one concurrent stream granted (and its
//! `SETTINGS` acknowledged first), a window never updated, HTTP/1.1 answered
//! to the preface, ALPN `h2` refused over TLS, a header block without end.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bench_client::engine::{self, Load, LoadSettings, Protocol, Request, RouteLoad, Target, Timing};
use bench_client::measure::RunFigures;
use bench_client::results::read_load;
use bench_client::sys::ServerProcess;

use crate::util::{self, FRAMEWORKS, client};

const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const RST_STREAM: u8 = 0x3;
const SETTINGS: u8 = 0x4;
const PING: u8 = 0x6;
const GOAWAY: u8 = 0x7;
const CONTINUATION: u8 = 0x9;
const END_STREAM: u8 = 0x1;
const ACK: u8 = 0x1;
const END_HEADERS: u8 = 0x4;
const HELLO: &[u8] = b"Hello, World!";

/// Every write counted once and every request settled once: the identity
/// the HTTP/1.1 tests assert.
fn assert_adds_up(f: &RunFigures, what: &str) {
    let c = &f.counts;
    // The warm-up's protocol failures are among the kinds and the warm-up's requests.
    let measured_failures = f.failed.requests() - c.warmup_failed_protocol;
    assert_eq!(
        c.sent,
        c.warmup_completed + f.successful + measured_failures + c.in_flight_at_deadline + c.retried,
        "{what}: every write counted, every request settled once: {f:?}"
    );
    assert_eq!(f.windows.iter().sum::<u64>(), f.successful, "{what}: the windows add up");
    assert_eq!(f.windows_failed.iter().sum::<u64>(), f.failed_total, "{what}: the windows add up");
    assert_eq!(f.failed_total, measured_failures, "{what}");
}

/// `bench-client load URL ARGS… --json FILE`: the exit code and the figures.
fn load(url: &str, args: &[&str], name: &str) -> (Option<i32>, RunFigures, String) {
    let json = util::temp_dir(&format!("http2-{name}")).join("load.json");
    let argv = [&["load", url][..], args, &["--json", json.to_str().unwrap()]].concat();
    let out = client(&argv);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let figures = read_load(&json).unwrap_or_else(|e| panic!("{url} {args:?}: {e:#}\n{text}")).figures;
    (out.status.code(), figures, text)
}

#[test]
fn load_http2_verifies_every_response_of_every_server_over_h2c_and_tls_with_1_and_8_streams() {
    let _shared = util::shared();
    for f in FRAMEWORKS {
        let (server, tls_addr) = util::with_tls_listener(f);
        for (scheme, addr) in [("http", server.addr), ("https", tls_addr)] {
            for path in ["/plaintext", "/api/devices"] {
                for streams in ["1", "8"] {
                    let url = format!("{scheme}://{addr}{path}");
                    let what = format!("{f} {url} --streams {streams}");
                    let mut argv = vec!["--http2", "--streams", streams, "-c", "2", "-d", "1s", "--warmup", "0s"];
                    if scheme == "https" {
                        argv.push("--insecure");
                    }
                    let (code, fig, text) = load(&url, &argv, &format!("{f}-{scheme}"));
                    assert_eq!(code, Some(0), "{what}: {text}");
                    assert!(fig.successful >= 20, "{what}: {}", fig.successful);
                    assert_eq!(fig.failed_total, 0, "{what}: {:?}", fig.failed);
                    assert_eq!(fig.failed.connect, 0, "{what}");
                    assert_eq!((fig.counts.retried, fig.counts.goaway_received), (0, 0), "{what}");
                    assert_eq!(fig.counts.connections_established, 2, "{what}: no reconnection");
                    assert_eq!(fig.pipeline, streams.parse::<usize>().unwrap(), "{what}");
                    assert_eq!(fig.protocol, Protocol::Http2, "{what}: recorded as HTTP/2");
                    assert!(text.contains(&format!("HTTP/2, streams {streams}")), "{what}: {text}");
                    assert!(fig.counts.in_flight_at_deadline <= 2 * fig.pipeline as u64, "{what}");
                    assert_eq!(fig.counts.tls_handshakes, if scheme == "https" { 2 } else { 0 }, "{what}");
                    assert_adds_up(&fig, &what);
                }
            }
        }
    }
}

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut frame = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    frame.extend_from_slice(&[kind, flags]);
    frame.extend_from_slice(&stream.to_be_bytes());
    frame.extend_from_slice(payload);
    frame
}

#[test]
fn the_open_loop_over_http2_sends_its_schedule_on_streams_and_every_request_is_accounted_for() {
    let _lock = util::exclusive();
    // TCP_NODELAY: without it a response behind another waits for the client's delayed ACK.
    let nodelay = ["--tcp-nodelay".to_owned()];
    let server = ServerProcess::start(&util::server_binary("axum"), &nodelay, &util::all_cpus()).unwrap();
    let url = format!("http://{}/plaintext", server.addr);
    let args = ["--http2", "--streams", "4", "-c", "2", "--rate", "200", "-d", "2s", "--warmup", "0s"];
    let (code, f, text) = load(&url, &args, "open-loop");
    // Clean, or short of its schedule when this shared machine held the client back: never failed.
    assert!(code == Some(0) || (code == Some(1) && text.contains("SHORT: the schedule was offered")), "{text}");
    assert!(text.contains("over HTTP/2 (streams per connection: 4)"), "{text}");
    assert_eq!(f.rate_per_s, Some(200.0));
    // 400 due over the 2 s: written on time, or counted as never written.
    assert!(f.successful + f.counts.in_flight_at_deadline + f.counts.unsent_at_deadline >= 395, "{f:?}");
    assert!(f.successful >= 350, "{}", f.successful);
    assert_eq!(f.failed_total, 0, "{:?}", f.failed);
    assert!(f.counts.late_sends <= 40, "{:?}", f.counts);
    assert_adds_up(&f, "open loop");
}

/// One frame.
struct Frame {
    kind: u8,
    flags: u8,
    stream: u32,
    payload: Vec<u8>,
}

enum Next {
    Frame(Frame),
    Quiet,
    Closed,
}

/// The server's side of one HTTP/2 connection, on a blocking socket.
struct Peer {
    tcp: TcpStream,
    buf: Vec<u8>,
    /// The client acknowledged the server's SETTINGS.
    acked: bool,
}

impl Peer {
    /// Reads the client's preface and sends `settings` as its first frame.
    fn start(mut tcp: TcpStream, settings: &[(u16, u32)]) -> Option<Self> {
        tcp.set_nodelay(true).ok()?;
        let mut magic = [0u8; 24];
        tcp.read_exact(&mut magic).ok()?;
        assert_eq!(&magic, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        let mut peer = Self { tcp, buf: Vec::new(), acked: false };
        let payload: Vec<u8> = settings
            .iter()
            .flat_map(|(id, value)| [&id.to_be_bytes()[..], &value.to_be_bytes()[..]].concat())
            .collect();
        peer.send(SETTINGS, 0, 0, &payload).then_some(peer)
    }

    fn send(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) -> bool {
        self.tcp.write_all(&frame(kind, flags, stream, payload)).is_ok()
    }

    /// `:status 200` (static index 8) and `Hello, World!` on `stream`, in one write.
    fn answer(&mut self, stream: u32) -> bool {
        let response = [frame(HEADERS, END_HEADERS, stream, &[0x88]), frame(DATA, END_STREAM, stream, HELLO)].concat();
        self.tcp.write_all(&response).is_ok()
    }

    /// The next frame, waiting at most `wait` for it.
    fn next(&mut self, wait: Duration) -> Next {
        loop {
            if self.buf.len() >= 9 {
                let length = u32::from_be_bytes([0, self.buf[0], self.buf[1], self.buf[2]]) as usize;
                if self.buf.len() >= 9 + length {
                    let head: Vec<u8> = self.buf.drain(..9).collect();
                    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
                    let payload = self.buf.drain(..length).collect();
                    self.acked |= head[3] == SETTINGS && head[4] & ACK != 0;
                    return Next::Frame(Frame { kind: head[3], flags: head[4], stream, payload });
                }
            }
            self.tcp.set_read_timeout(Some(wait)).unwrap();
            let mut chunk = [0u8; 4096];
            match self.tcp.read(&mut chunk) {
                Ok(0) => return Next::Closed,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    return Next::Quiet;
                }
                Err(_) => return Next::Closed,
            }
        }
    }

    /// Serves the connection: `SETTINGS` acknowledged, `PING` answered, and
    /// the n-th request's `HEADERS` (from 0) handed to `request` with its
    /// stream, until it says to stop or the client closes.
    fn serve(&mut self, mut request: impl FnMut(&mut Self, u32, u64) -> bool) {
        let mut n = 0;
        loop {
            match self.next(Duration::from_secs(5)) {
                Next::Frame(f) if f.kind == SETTINGS && f.flags & ACK == 0 => {
                    self.send(SETTINGS, ACK, 0, &[]);
                }
                Next::Frame(f) if f.kind == PING && f.flags & ACK == 0 => {
                    self.send(PING, ACK, 0, &f.payload);
                }
                Next::Frame(f) if f.kind == HEADERS => {
                    if !request(self, f.stream, n) {
                        return;
                    }
                    n += 1;
                }
                Next::Frame(_) => {}
                Next::Quiet | Next::Closed => return,
            }
        }
    }
}

/// A scripted HTTP/2 server on 127.0.0.1: each connection granted
/// `settings`, its requests handed to `request` (see [`Peer::serve`]).
fn h2_server(
    settings: &'static [(u16, u32)],
    request: impl Fn(&mut Peer, u32, u64) -> bool + Send + Sync + 'static,
) -> SocketAddr {
    let request = Arc::new(request);
    util::serve_each(move |tcp| {
        if let Some(mut peer) = Peer::start(tcp, settings) {
            peer.serve(|p, stream, n| request(p, stream, n));
        }
    })
}

/// A server that answers ten requests a connection, then sends GOAWAY with
/// `code` naming the last one answered (after a first GOAWAY(2^31 - 1) when
/// `two_phase`), and closes once the client has.
fn goaway_after_ten(two_phase: bool, code: u32) -> SocketAddr {
    h2_server(&[], move |peer, stream, n| {
        if n < 10 {
            return peer.answer(stream);
        }
        if two_phase {
            peer.send(GOAWAY, 0, 0, &[0x7fff_ffffu32.to_be_bytes(), 0u32.to_be_bytes()].concat());
        }
        peer.send(GOAWAY, 0, 0, &[(stream - 2).to_be_bytes(), code.to_be_bytes()].concat());
        // Closed once the client has closed (no reset of unread bytes).
        let _ = peer.tcp.shutdown(Shutdown::Write);
        while let Next::Frame(_) = peer.next(Duration::from_secs(2)) {}
        false
    })
}

#[test]
fn goaway_mid_run_writes_the_streams_above_its_last_id_again_and_the_run_is_not_clean() {
    let _lock = util::exclusive();
    // Ten requests a connection, then GOAWAY naming the last one answered:
    // the request that arrived with it, and any after it, were not processed.
    // The graceful shutdown of RFC 9113 6.8, as hyper's: GOAWAY(2^31 - 1), then the last stream.
    let addr = goaway_after_ten(true, 0);
    let url = format!("http://{addr}/hello");
    let args = ["--http2", "--streams", "4", "-c", "2", "-d", "1s", "--warmup", "0s"];
    let (code, f, text) = load(&url, &args, "goaway");
    assert_eq!(code, Some(1), "churn: not clean: {text}");
    assert!(text.contains("HTTP/2 connections with GOAWAY (--allow-churn accepts it)"), "{text}");
    assert!(f.counts.goaway_received >= 5, "{:?}", f.counts);
    assert!(f.counts.retried >= f.counts.goaway_received, "each GOAWAY leaves requests to retry: {:?}", f.counts);
    assert!(f.counts.reconnects.abs_diff(f.counts.goaway_received) <= 2, "a new connection each: {:?}", f.counts);
    assert_eq!(f.failed_total, 0, "every stream at or below its last id was answered: {:?}", f.failed);
    assert!(f.successful >= 50, "{}", f.successful);
    assert_adds_up(&f, "goaway");
    let (allowed, _, text) = load(&url, &[&args[..], &["--allow-churn"]].concat(), "goaway-allowed");
    assert_eq!(allowed, Some(0), "{text}");
}

#[test]
fn a_goaway_with_an_error_code_is_a_connection_error_named_by_its_code_even_with_churn_allowed() {
    // Counts, not speed: beside other tests.
    let _shared = util::shared();
    // After ten answers, GOAWAY(ENHANCE_YOUR_CALM, 0xb) naming the last one answered.
    let addr = goaway_after_ten(false, 0xb);
    let url = format!("http://{addr}/hello");
    let args = ["--http2", "--streams", "4", "-c", "2", "-d", "1s", "--warmup", "0s", "--allow-churn"];
    let (code, f, text) = load(&url, &args, "goaway-error");
    assert_eq!(code, Some(1), "a connection error fails the run, churn allowed or not: {text}");
    let calm = f.failed.goaway.get(&11).copied().unwrap_or(0);
    assert!(calm >= 5 && f.failed.goaway.len() == 1, "{:?}", f.failed);
    assert_eq!(calm, f.counts.goaway_received, "each connection ended by it, once: {:?}", f.counts);
    assert_eq!(f.failed_total, 0, "no request failed: {:?}", f.failed);
    assert!(text.contains("HTTP/2 connections ended by a GOAWAY error code {11: "), "{text}");
    assert_adds_up(&f, "goaway-error");
}

#[test]
fn a_frame_on_a_stream_its_response_had_ended_is_stray_and_no_response_is_blamed() {
    // Counts, not speed: beside other tests.
    let _shared = util::shared();
    // Each answer followed, in the same write, by 5 more bytes of DATA on its stream.
    let addr = h2_server(&[], |peer, stream, _| peer.answer(stream) && peer.send(DATA, END_STREAM, stream, b"extra"));
    let url = format!("http://{addr}/hello");
    let args = ["--http2", "--streams", "4", "-c", "2", "-d", "1s", "--warmup", "0s"];
    let (code, f, text) = load(&url, &args, "stray");
    assert_eq!(code, Some(1), "bytes of no response fail the run: {text}");
    assert!(f.successful >= 20, "every response itself is right: {:?} {}", f.failed, f.successful);
    assert_eq!((f.failed.body, f.failed_total), (0, 0), "{:?}", f.failed);
    // A stray frame after every answer, but those of the 8 streams answered as the run ended.
    assert!(f.failed.stray + 8 >= f.successful, "a stray frame after every answer: {:?} {}", f.failed, f.successful);
    assert_adds_up(&f, "stray");
}

#[test]
fn streams_the_server_resets_fail_counted_by_error_code() {
    let _lock = util::exclusive();
    // Streams 3, 7, 11, …: reset with INTERNAL_ERROR (0x2); the others answered.
    let addr = h2_server(&[], |peer, stream, _| {
        if stream % 4 == 3 { peer.send(RST_STREAM, 0, stream, &2u32.to_be_bytes()) } else { peer.answer(stream) }
    });
    let url = format!("http://{addr}/hello");
    let (code, f, text) = load(&url, &["--http2", "--streams", "4", "-c", "2", "-d", "1s", "--warmup", "0s"], "reset");
    assert_eq!(code, Some(1), "failures fail the run: {text}");
    let reset = f.failed.reset.get(&2).copied().unwrap_or(0);
    assert!(reset >= 20, "{:?}", f.failed);
    assert_eq!(f.failed.reset.len(), 1, "one error code: {:?}", f.failed);
    assert_eq!(f.failed_total, reset, "{:?}", f.failed);
    // Half the streams of a connection: as many reset as answered, within the ones in flight.
    assert!(f.successful.abs_diff(reset) <= 8, "{} answered, {reset} reset", f.successful);
    assert!(text.contains("HTTP/2 streams reset {2: "), "{text}");
    assert_adds_up(&f, "reset");
}

#[test]
fn one_concurrent_stream_granted_is_never_exceeded() {
    let _quiet = util::quiet();
    let exceeded = Arc::new(AtomicBool::new(false));
    let unacked = Arc::new(AtomicBool::new(false));
    let (seen, unacked_seen) = (Arc::clone(&exceeded), Arc::clone(&unacked));
    // SETTINGS_MAX_CONCURRENT_STREAMS 1; before answering, a look at whether
    // another stream opened meanwhile.
    let heads = Arc::new(AtomicU64::new(0));
    let heads_read = Arc::clone(&heads);
    let addr = h2_server(&[(0x3, 1)], move |peer, stream, _| {
        heads_read.fetch_add(1, Ordering::Relaxed);
        if !peer.acked {
            unacked_seen.store(true, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(1));
        while let Next::Frame(f) = peer.next(Duration::from_millis(2)) {
            if f.kind == HEADERS {
                seen.store(true, Ordering::Relaxed);
            }
        }
        peer.answer(stream)
    });
    let url = format!("http://{addr}/hello");
    let (code, f, text) = load(&url, &["--http2", "--streams", "8", "-c", "2", "-d", "1s", "--warmup", "0s"], "one");
    assert_eq!(code, Some(0), "{text}");
    assert!(!exceeded.load(Ordering::Relaxed), "a second stream opened while one was open");
    assert!(!unacked.load(Ordering::Relaxed), "a stream opened before the server's SETTINGS were acknowledged");
    assert!(f.successful >= 50, "{}", f.successful);
    assert_eq!(f.failed_total, 0, "{:?}", f.failed);
    assert_adds_up(&f, "one stream");
    // Sent and in flight: only requests written on a stream, never the 7 per connection that
    // waited for one (RFC 9113 §5.1.2), so at most one per connection at the deadline.
    assert!(f.counts.in_flight_at_deadline <= 2, "{:?}", f.counts);
    let heads = heads.load(Ordering::Relaxed);
    assert!(f.counts.sent <= heads + 2, "{} sent, {heads} requests the server read", f.counts.sent);
}

#[test]
fn requests_queued_for_a_late_settings_go_out_when_it_comes_even_in_another_pools_slice() {
    // Two pools alternating in slices of 200 ms (route 0 at 0–200 ms and 600–1000 ms, route 1
    // between): route 0's server sends its SETTINGS 250 ms after the preface, in route 1's
    // slice. The request route 0 queued at the start goes out then and is answered well within
    // its 400 ms timeout; left for route 0's next slice (600 ms) it timed out.
    let _lock = util::exclusive();
    let late = util::serve_each(|tcp| {
        std::thread::sleep(Duration::from_millis(250));
        if let Some(mut peer) = Peer::start(tcp, &[]) {
            peer.serve(|p, stream, _| p.answer(stream));
        }
    });
    let prompt = h2_server(&[], |peer, stream, _| peer.answer(stream));
    let route =
        |addr| RouteLoad::ok(Target { protocol: Protocol::Http2, ..Target::new(addr, "/hello") }, HELLO.to_vec());
    let slice = Duration::from_millis(200);
    let timing = Timing::new(Duration::ZERO, Duration::from_millis(800), slice).unwrap();
    let settings = LoadSettings::closed(NonZeroUsize::MIN, NonZeroUsize::MIN, timing, Duration::from_millis(400));
    let load =
        Load::sliced(vec![route(late), route(prompt)], vec![0, 1, 1, 0], settings, Duration::from_millis(400), slice)
            .unwrap();
    let outcome = engine::run(&load, Instant::now(), &[]).unwrap();
    let late_route = &outcome.by_route[0];
    assert_eq!(
        late_route.failures.timeout, 0,
        "the queued request waited for the pool's next slice: {:?}",
        late_route.failures
    );
    assert_eq!(outcome.stats.failures.requests(), 0, "{:?}", outcome.stats.failures);
    assert!(late_route.successful() > 0 && outcome.by_route[1].successful() > 0, "{:?}", outcome.stats.counts);
}

#[test]
fn a_window_never_updated_is_a_stall_counted_as_timeouts_never_a_success_nor_a_hang() {
    let _quiet = util::quiet();
    let bodies = Arc::new(AtomicU64::new(0));
    let read = Arc::clone(&bodies);
    // SETTINGS_INITIAL_WINDOW_SIZE 4: a request body of 11 bytes never fits,
    // and no WINDOW_UPDATE ever comes; nothing is answered.
    let addr = util::serve_each(move |tcp| {
        let Some(mut peer) = Peer::start(tcp, &[(0x4, 4)]) else { return };
        loop {
            match peer.next(Duration::from_secs(5)) {
                Next::Frame(f) if f.kind == SETTINGS && f.flags & ACK == 0 => {
                    peer.send(SETTINGS, ACK, 0, &[]);
                }
                Next::Frame(f) if f.kind == DATA => {
                    read.fetch_add(f.payload.len() as u64, Ordering::Relaxed);
                    assert!(f.payload.len() <= 4 && f.flags & END_STREAM == 0, "within the window, not ended");
                }
                Next::Frame(_) => {}
                Next::Quiet | Next::Closed => return,
            }
        }
    });
    let timing = Timing::new(Duration::ZERO, Duration::from_secs(1), Duration::from_millis(500)).unwrap();
    let mut settings =
        LoadSettings::closed(NonZeroUsize::new(2).unwrap(), NonZeroUsize::MIN, timing, Duration::from_millis(300));
    settings.pipeline = NonZeroUsize::new(2).unwrap();
    let request = Request::new("POST", &[], Some(b"hello world".to_vec())).unwrap();
    let target = Target { protocol: Protocol::Http2, request, ..Target::new(addr, "/hello") };
    let load = Load::new(RouteLoad::ok(target, HELLO.to_vec()), settings);
    let started = Instant::now();
    let s = engine::run(&load, started, &[]).unwrap().stats;
    assert!(started.elapsed() < Duration::from_secs(3), "never a hang: {:?}", started.elapsed());
    assert_eq!(s.successful(), 0, "never a success");
    assert!(s.failures.timeout >= 4, "{:?}", s.failures);
    assert_eq!(s.failures.requests(), s.failures.timeout, "{:?}", s.failures);
    assert!(
        s.counts.window_stalls >= s.failures.timeout,
        "each timed-out request waited on the window: {:?}",
        s.counts
    );
    let read = bodies.load(Ordering::Relaxed);
    assert!(read > 0 && read.is_multiple_of(4), "4 bytes per stream, as the window allows: {read}");
}

/// A TLS server (its certificate generated) selecting from `alpn` only,
/// answering nothing.
fn tls_server(alpn: &[&[u8]]) -> SocketAddr {
    let mut config = (*common::tls::TlsIdentity::generate().unwrap().server_config().unwrap()).clone();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let config = Arc::new(config);
    util::serve_each(move |tcp| {
        let mut tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config.clone()).unwrap(), tcp);
        let mut chunk = [0u8; 4096];
        while matches!(tls.read(&mut chunk), Ok(1..)) {}
    })
}

#[test]
fn a_tls_server_that_does_not_select_alpn_h2_is_one_line_and_exit_2() {
    for (alpn, said) in [
        (&[&b"http/1.1"[..]][..], "it refused ALPN h2 over TLS (no_application_protocol)"),
        (&[][..], "ALPN h2 not selected over TLS (selected: none)"),
    ] {
        let addr = tls_server(alpn);
        let url = format!("https://{addr}/plaintext");
        let out = client(&["load", &url, "--http2", "--insecure", "-d", "1s"]);
        let line = util::one_line_exit(&out, 2);
        assert!(line.contains(&format!("{addr} does not speak HTTP/2: {said}")), "{line}");
    }
}

#[test]
fn http1_answered_to_the_preface_is_one_line_and_exit_2() {
    let addr = util::serve_each(|mut tcp| {
        // The preface and the client's SETTINGS, all read (no reset on close).
        let mut preface = [0u8; 24 + 9 + 6];
        let _ = tcp.read_exact(&mut preface);
        let _ = tcp.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
    let url = format!("http://{addr}/plaintext");
    let out = client(&["load", &url, "--http2", "-d", "1s"]);
    let line = util::one_line_exit(&out, 2);
    assert!(line.contains(&format!("{addr} does not speak HTTP/2: answered HTTP/1.x to HTTP/2's preface")), "{line}");
    // And the flags that do not go with HTTP/2, or without it.
    for (args, said) in [
        (&["--streams", "4"][..], "--streams is HTTP/2's"),
        (&["--http2", "--pipeline", "4"][..], "--pipeline is HTTP/1.1's"),
    ] {
        let out = client(&[&["load", &url][..], args].concat());
        assert!(util::one_line_exit(&out, 2).contains(said), "{args:?}");
    }
}

#[test]
fn refused_streams_were_not_processed_and_are_written_again() {
    // Counts, not speed: beside other tests.
    let _shared = util::shared();
    // Every 10th stream above the first refused (REFUSED_STREAM, 0x7), before it is processed.
    let addr = h2_server(&[], |peer, stream, _| {
        if stream > 1 && stream % 20 == 1 {
            peer.send(RST_STREAM, 0, stream, &7u32.to_be_bytes())
        } else {
            peer.answer(stream)
        }
    });
    let url = format!("http://{addr}/hello");
    // Written again is churn, as after GOAWAY: accepted with --allow-churn.
    let args = ["--http2", "--streams", "4", "-c", "2", "-d", "1s", "--warmup", "0s", "--allow-churn"];
    let (code, f, text) = load(&url, &args, "refused");
    assert_eq!(code, Some(0), "nothing failed: {text}");
    assert_eq!(f.failed_total, 0, "{:?}", f.failed);
    assert!(f.counts.retried >= 20 && f.successful >= 200, "{:?} {}", f.counts, f.successful);
    assert_eq!(f.counts.goaway_received, 0);
    assert_adds_up(&f, "refused");
}

#[test]
fn one_stalled_stream_is_its_own_timeout_not_its_neighbours() {
    // Counts, not speed: beside other tests.
    let _shared = util::shared();
    // Stream 9 of each connection is never answered; the others at once.
    let addr = h2_server(&[], |peer, stream, _| stream == 9 || peer.answer(stream));
    let url = format!("http://{addr}/hello");
    let args = ["--http2", "--streams", "4", "-c", "2", "-d", "2s", "--warmup", "0s", "--timeout", "500ms"];
    let (code, f, text) = load(&url, &args, "stalled");
    assert_eq!(code, Some(1), "timeouts fail the run: {text}");
    assert_eq!(f.failed.timeout, 2, "one per stalled stream, none of the three beside it: {:?}", f.failed);
    assert_eq!(f.failed_total, 2, "{:?}", f.failed);
    assert_eq!(f.counts.reconnects, 0, "the connections go on: {:?}", f.counts);
    assert!(f.successful >= 1000, "{}", f.successful);
    assert_adds_up(&f, "stalled");
}

#[test]
fn a_header_block_past_the_bound_is_a_protocol_failure_counted_even_in_the_warm_up() {
    // Counts, not speed: beside other tests.
    let _shared = util::shared();
    // Once, on the load's stream 3 (preflight uses stream 1 of connections of its own): HEADERS,
    // then 1.25 MiB of CONTINUATION never ended (the "CONTINUATION flood"), in the warm-up.
    let flooded = Arc::new(AtomicBool::new(false));
    let addr = h2_server(&[], move |peer, stream, _| {
        if stream != 3 || flooded.swap(true, Ordering::SeqCst) {
            return peer.answer(stream);
        }
        let piece = [0u8; 16_384];
        peer.send(HEADERS, 0, stream, &[0x88]) && (0..80).all(|_| peer.send(CONTINUATION, 0, stream, &piece))
    });
    let url = format!("http://{addr}/hello");
    let args = ["--http2", "--streams", "1", "-c", "1", "-d", "1s", "--warmup", "500ms"];
    let (code, f, text) = load(&url, &args, "continuation");
    assert_eq!(code, Some(1), "a broken protocol rule fails the run, whatever its phase: {text}");
    assert_eq!((f.failed.protocol, f.counts.warmup_failed_protocol), (1, 1), "{:?} {:?}", f.failed, f.counts);
    assert_eq!(f.failed_total, 0, "the measured windows hold no failure: {:?}", f.windows_failed);
    assert!(f.counts.reconnects >= 1 && f.successful >= 100, "the run goes on: {:?} {}", f.counts, f.successful);
    assert!(text.contains("protocol 1") && text.contains("protocol failures in the warm-up 1"), "{text}");
    assert_adds_up(&f, "continuation");
}
