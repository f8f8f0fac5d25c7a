//! The three servers alike at the edges (issue 13), each a real process on a
//! real socket, driven with raw `TcpStream`s:
//!
//! - the application's 64 KiB rule decides a `PUT /api/devices` body at every
//!   size from 64 KiB + 1 byte to 30 MiB, with a declared `Content-Length` or
//!   chunked: the same status, `Content-Type` and body on every server, the
//!   whole body accepted (read or dropped) and the connection closed cleanly,
//!   never reset;
//! - `Expect: 100-continue` with a declared length over the limit: axum
//!   refuses without asking for the body; actix-web and Rocket send `100
//!   Continue` before any application code runs, then refuse the same way;
//! - a 10 MiB upload, repeated, gets a clean 413 every time;
//! - the same for `POST /fortunes` and its 1 KiB rule, from 1 KiB + 1 byte
//!   to 10 MiB;
//! - SIGTERM ends every server with exit code 0 within 1 s whatever its
//!   clients do: an idle keep-alive connection, a fresh connection that sent
//!   nothing, half a request head, half a body, a thousand connections, a
//!   load running.
//!
//! Uses only std and `common`, so it does not depend on the client's module
//! layout. Every server is killed when its guard drops, and every wait has a
//! deadline, so a hang fails a test instead of stalling it. Run with
//! `--nocapture` to see the measured stop times.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use common::CatalogError;
use common::process::parse_listening_line;

const FRAMEWORKS: [&str; 3] = ["actix", "axum", "rocket"];

/// Longest wait for a server's listening line, a response or a close.
const IO_DEADLINE: Duration = Duration::from_secs(10);

/// What the README promises: exit 0 within this long after SIGTERM.
const STOP_PROMISE: Duration = Duration::from_secs(1);

/// How long a server that missed [`STOP_PROMISE`] is still waited for, so
/// the failure says how late it was.
const STOP_DEADLINE: Duration = Duration::from_secs(5);

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

// ---------------------------------------------------------------- servers

/// `target/<profile>/server-<name>`, next to this test's `deps/` folder,
/// asserting it was built (`cargo test --workspace` builds it).
fn server_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps");
    let path = dir.join(format!("server-{name}"));
    assert!(path.is_file(), "{} missing: run `cargo test --workspace`, which builds it", path.display());
    path
}

/// A server process on `127.0.0.1`, killed and reaped when dropped.
struct Server {
    name: &'static str,
    child: Child,
    addr: SocketAddr,
}

impl Server {
    /// Starts `server-<name> --addr 127.0.0.1:0` and reads its listening line.
    fn start(name: &'static str) -> Self {
        let mut child = Command::new(server_binary(name))
            .args(["--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start: {e}"));
        let mut stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        // Reads the first line, then keeps the pipe drained until the server exits.
        thread::spawn(move || {
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while stdout.read(&mut byte).is_ok_and(|n| n == 1) && byte[0] != b'\n' {
                line.push(byte[0]);
            }
            let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
            let _ = std::io::copy(&mut stdout, &mut std::io::sink());
        });
        let mut server = Self { name, child, addr: SocketAddr::from(([127, 0, 0, 1], 0)) };
        let line = rx.recv_timeout(IO_DEADLINE).unwrap_or_else(|_| panic!("{name}: no listening line"));
        server.addr = parse_listening_line(&line).unwrap_or_else(|| panic!("{name}: not a listening line: {line:?}"));
        assert!(server.addr.ip().is_loopback(), "{name}: {line}");
        server
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect_timeout(&self.addr, IO_DEADLINE)
            .unwrap_or_else(|e| panic!("{}: connect {}: {e}", self.name, self.addr));
        stream.set_read_timeout(Some(IO_DEADLINE)).unwrap();
        stream.set_write_timeout(Some(IO_DEADLINE)).unwrap();
        stream
    }

    /// Sends SIGTERM and waits for the exit; returns how long it took.
    fn terminate(&mut self) -> (ExitStatus, Duration) {
        let pid = self.child.id().to_string();
        let start = Instant::now();
        let kill = Command::new("kill").args(["-TERM", &pid]).status().expect("kill(1) runs");
        assert!(kill.success(), "{}: kill -TERM {pid} failed", self.name);
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return (status, start.elapsed());
            }
            assert!(start.elapsed() < STOP_DEADLINE, "{}: still running {STOP_DEADLINE:?} after SIGTERM", self.name);
            thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `f` while no other test of this file runs: the stop times and the
/// 1 s a server lingers on a refused body are measured against the clock,
/// which tests competing for the machine's cores would make flaky.
fn one_at_a_time<T>(f: impl FnOnce() -> T) -> T {
    static LOCK: Mutex<()> = Mutex::new(());
    let _serial: MutexGuard<'_, ()> = LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f()
}

/// Runs `case` on the three servers at once, one thread each (one test at a
/// time).
fn on_every_server(case: impl Fn(&'static str) + Sync) {
    one_at_a_time(|| {
        thread::scope(|scope| {
            for name in FRAMEWORKS {
                let case = &case;
                scope.spawn(move || case(name));
            }
        });
    });
}

// ---------------------------------------------------------------- HTTP on a raw socket

/// One response, as read off the socket.
#[derive(Debug, PartialEq, Eq)]
struct Response {
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// Reads responses off `stream` until a final (non-1xx) one; returns it and
/// the interim statuses seen before it. `on_interim` runs at each interim
/// response (e.g. to start sending a body after `100 Continue`).
fn read_response(stream: &mut TcpStream, mut on_interim: impl FnMut(u16)) -> (Response, Vec<u16>) {
    let mut buf = Vec::new();
    let mut interim = Vec::new();
    loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk) {
                Ok(0) => panic!("closed before a complete response head: {:?}", String::from_utf8_lossy(&buf)),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) => panic!("{:?} before a complete response head: {e}", e.kind()),
            }
        };
        let head = String::from_utf8(buf[..head_end].to_vec()).expect("ASCII head");
        buf.drain(..head_end);
        let mut lines = head.split("\r\n");
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line: {head:?}"));
        let header = |name: &str| {
            head.split("\r\n").skip(1).find_map(|l| {
                let (n, v) = l.split_once(':')?;
                n.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
        };
        if (100..200).contains(&status) {
            interim.push(status);
            on_interim(status);
            continue;
        }
        let length: usize = header("content-length")
            .map(|v| v.parse().expect("numeric Content-Length"))
            .unwrap_or_else(|| panic!("no Content-Length: {head:?}"));
        while buf.len() < length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk) {
                Ok(0) => panic!("closed after {} of {length} body bytes", buf.len()),
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
                Err(e) => panic!("{:?} after {} of {length} body bytes: {e}", e.kind(), buf.len()),
            }
        }
        let body = buf[..length].to_vec();
        return (Response { status, content_type: header("content-type"), body }, interim);
    }
}

/// After the response: half-closes, then reads to the end. `Ok` for an
/// orderly close (FIN), `Err` with the kind for a reset or a timeout.
fn close_cleanly(stream: &mut TcpStream) -> Result<(), ErrorKind> {
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = [0u8; 64 * 1024];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) => return Err(e.kind()),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Framing {
    ContentLength,
    Chunked,
}

/// Writes a body of `size` spaces in `framing`, 64 KiB per write; returns
/// the body bytes written before an error, if any.
fn write_body(stream: &mut TcpStream, size: usize, framing: Framing) -> Result<usize, (usize, ErrorKind)> {
    let block = vec![b' '; 64 * KIB];
    let mut sent = 0;
    while sent < size {
        let n = block.len().min(size - sent);
        let written = match framing {
            Framing::ContentLength => stream.write_all(&block[..n]),
            Framing::Chunked => stream
                .write_all(format!("{n:x}\r\n").as_bytes())
                .and_then(|()| stream.write_all(&block[..n]))
                .and_then(|()| stream.write_all(b"\r\n")),
        };
        written.map_err(|e| (sent, e.kind()))?;
        sent += n;
    }
    if let Framing::Chunked = framing {
        stream.write_all(b"0\r\n\r\n").map_err(|e| (sent, e.kind()))?;
    }
    Ok(sent)
}

/// The head of a `PUT /api/devices`.
fn put_head(size: usize, framing: Framing, expect_continue: bool) -> String {
    upload_head(DEVICES, size, framing, expect_continue)
}

/// `PUT /api/devices`, the request line's method and target.
const DEVICES: &str = "PUT /api/devices";
/// `POST /fortunes`.
const FORTUNES: &str = "POST /fortunes";

/// The head of `method_target` (e.g. `POST /fortunes`) with a body of `size` bytes.
fn upload_head(method_target: &str, size: usize, framing: Framing, expect_continue: bool) -> String {
    let length = match framing {
        Framing::ContentLength => format!("Content-Length: {size}\r\n"),
        Framing::Chunked => "Transfer-Encoding: chunked\r\n".to_owned(),
    };
    let expect = if expect_continue { "Expect: 100-continue\r\n" } else { "" };
    format!("{method_target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{length}{expect}\r\n")
}

/// What one over-limit upload got.
#[derive(Debug)]
struct Upload {
    response: Response,
    /// Interim statuses (`100 Continue`) before the response.
    interim: Vec<u16>,
    /// Body bytes the client wrote, or where its writing failed and how.
    written: Option<Result<usize, (usize, ErrorKind)>>,
    /// How the connection ended after the response.
    close: Result<(), ErrorKind>,
}

/// `PUT /api/devices` with a body of `size` spaces, written while the
/// response is read, as a client that does not wait for the answer does.
/// With `expect_continue`, the body is written only after `100 Continue`.
fn upload(server: &Server, size: usize, framing: Framing, expect_continue: bool) -> Upload {
    upload_to(server, DEVICES, size, framing, expect_continue)
}

/// [`upload`] to `method_target`.
fn upload_to(server: &Server, method_target: &str, size: usize, framing: Framing, expect_continue: bool) -> Upload {
    let mut stream = server.connect();
    stream.write_all(upload_head(method_target, size, framing, expect_continue).as_bytes()).unwrap();
    let writer_stream = stream.try_clone().unwrap();
    let (start_tx, start_rx) = mpsc::channel::<()>();
    let writer = thread::spawn(move || {
        let mut stream = writer_stream;
        start_rx.recv().ok().map(|()| write_body(&mut stream, size, framing))
    });
    if !expect_continue {
        start_tx.send(()).unwrap();
    }
    let (response, interim) = read_response(&mut stream, |status| {
        if status == 100 {
            let _ = start_tx.send(());
        }
    });
    drop(start_tx);
    let written = writer.join().expect("writer thread");
    let close = close_cleanly(&mut stream);
    Upload { response, interim, written, close }
}

fn refusal() -> Response {
    Response {
        status: 413,
        content_type: Some("text/plain; charset=utf-8".to_owned()),
        body: CatalogError::TooLarge.to_string().into_bytes(),
    }
}

// ---------------------------------------------------------------- body limit

#[test]
fn the_application_refuses_every_size_and_framing_alike_and_closes_cleanly() {
    let sizes = [64 * KIB + 1, 300 * KIB, 2 * MIB, 10 * MIB, 30 * MIB];
    on_every_server(|name| {
        let server = Server::start(name);
        for size in sizes {
            for framing in [Framing::ContentLength, Framing::Chunked] {
                let case = format!("{name} {size} bytes {framing:?}");
                let up = upload(&server, size, framing, false);
                assert_eq!(up.response, refusal(), "{case}: the application's refusal");
                assert_eq!(up.interim, Vec::<u16>::new(), "{case}");
                assert_eq!(up.written, Some(Ok(size)), "{case}: the whole body was accepted, never reset");
                assert_eq!(up.close, Ok(()), "{case}: closed cleanly");
            }
        }
        // At the limit, the same bytes are read and judged as JSON.
        let mut stream = server.connect();
        stream.write_all(put_head(common::MAX_BODY_BYTES, Framing::ContentLength, false).as_bytes()).unwrap();
        write_body(&mut stream, common::MAX_BODY_BYTES, Framing::ContentLength).unwrap();
        let (response, _) = read_response(&mut stream, |_| {});
        assert_eq!(response.status, 400, "{name}: 64 KiB of spaces is read, and is not JSON");
    });
}

#[test]
fn post_fortunes_refuses_every_size_and_framing_alike_and_closes_cleanly() {
    let limit = common::MAX_FORTUNE_BYTES;
    let refusal = Response {
        status: 413,
        content_type: Some("text/plain; charset=utf-8".to_owned()),
        body: common::FortuneError::TooLarge.to_string().into_bytes(),
    };
    on_every_server(|name| {
        let server = Server::start(name);
        for size in [limit + 1, 64 * KIB, 10 * MIB] {
            for framing in [Framing::ContentLength, Framing::Chunked] {
                let case = format!("{name} POST /fortunes {size} bytes {framing:?}");
                let up = upload_to(&server, FORTUNES, size, framing, false);
                assert_eq!(up.response, refusal, "{case}: the application's refusal");
                assert_eq!(up.interim, Vec::<u16>::new(), "{case}");
                assert_eq!(up.written, Some(Ok(size)), "{case}: the whole body was accepted, never reset");
                assert_eq!(up.close, Ok(()), "{case}: closed cleanly");
            }
        }
        // At the limit, the bytes are read and judged: 1 KiB of spaces is a blank fortune.
        let mut stream = server.connect();
        stream.write_all(upload_head(FORTUNES, limit, Framing::ContentLength, false).as_bytes()).unwrap();
        write_body(&mut stream, limit, Framing::ContentLength).unwrap();
        let (response, _) = read_response(&mut stream, |_| {});
        assert_eq!((response.status, response.body.as_slice()), (400, &b"empty fortune"[..]), "{name}");
    });
}

#[test]
fn expect_continue_over_the_limit_is_refused_alike() {
    on_every_server(|name| {
        let server = Server::start(name);
        for framing in [Framing::ContentLength, Framing::Chunked] {
            let case = format!("{name} Expect: 100-continue {framing:?}");
            let up = upload(&server, 10 * MIB, framing, true);
            assert_eq!(up.response, refusal(), "{case}");
            assert_eq!(up.close, Ok(()), "{case}: closed cleanly");
            match (name, framing) {
                // hyper sends `100 Continue` when the body is first read; axum
                // refuses from the declared length before that.
                ("axum", Framing::ContentLength) => {
                    assert_eq!(up.interim, Vec::<u16>::new(), "{case}: refused from the declared length");
                    assert_eq!(up.written, None, "{case}: no body byte was asked for");
                }
                // actix-http answers every Expect before the application runs,
                // Rocket reads the first bytes of every body before routing,
                // and a chunked body has no declared length: the client is
                // asked for the body, sends it, and it is dropped.
                _ => {
                    assert_eq!(up.interim, vec![100], "{case}");
                    assert_eq!(up.written, Some(Ok(10 * MIB)), "{case}: the body was accepted, never reset");
                }
            }
            eprintln!("{case}: interim {:?}, body bytes written {:?}", up.interim, up.written);
        }
    });
}

#[test]
fn repeated_10_mib_uploads_always_get_a_clean_413() {
    on_every_server(|name| {
        let server = Server::start(name);
        for round in 0..4 {
            for framing in [Framing::ContentLength, Framing::Chunked] {
                let case = format!("{name} round {round} {framing:?}");
                let up = upload(&server, 10 * MIB, framing, false);
                assert_eq!(up.response, refusal(), "{case}");
                assert_eq!(up.written, Some(Ok(10 * MIB)), "{case}: never reset");
                assert_eq!(up.close, Ok(()), "{case}: closed cleanly");
            }
        }
        // Still serving.
        let mut stream = server.connect();
        stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
        assert_eq!(read_response(&mut stream, |_| {}).0.status, 200, "{name}");
    });
}

// ---------------------------------------------------------------- SIGTERM

/// What the clients of a server are doing when it gets SIGTERM.
#[derive(Debug, Clone, Copy)]
enum ClientState {
    /// One keep-alive connection that got its response and sent nothing since.
    IdleKeepAlive,
    /// One connection that sent nothing yet.
    Fresh,
    /// Half a request head: `GET /plaintext HTTP/1.1\r\nHost: x\r\n`.
    HalfHead,
    /// A `PUT /api/devices` head with `Content-Length: 1000` and 7 body bytes.
    HalfBody,
    /// A thousand connections, a quarter in each of the states above.
    Thousand,
    /// Four connections sending `GET /plaintext` back to back.
    LoadRunning,
}

const PLAINTEXT_GET: &[u8] = b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// Puts one connection in `state` (one of the four single-connection states).
fn open_in_state(server: &Server, state: ClientState) -> TcpStream {
    let mut stream = server.connect();
    match state {
        ClientState::IdleKeepAlive => {
            stream.write_all(PLAINTEXT_GET).unwrap();
            assert_eq!(read_response(&mut stream, |_| {}).0.status, 200);
        }
        ClientState::Fresh => {}
        ClientState::HalfHead => stream.write_all(b"GET /plaintext HTTP/1.1\r\nHost: x\r\n").unwrap(),
        ClientState::HalfBody => {
            stream.write_all(b"PUT /api/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n[{\"id\":").unwrap();
        }
        ClientState::Thousand | ClientState::LoadRunning => unreachable!("not a single-connection state"),
    }
    stream
}

/// How many connections "a thousand" can be under this process's open-file
/// limit (the server has the same limit), leaving room for the rest.
fn thousand() -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let soft = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(1024);
    1000.min(soft.saturating_sub(200) / 2)
}

/// A load of four keep-alive connections until the server goes away;
/// counts complete responses and responses cut in the middle.
struct Load {
    stop: Arc<AtomicBool>,
    complete: Arc<AtomicUsize>,
    torn: Arc<AtomicUsize>,
    threads: Vec<thread::JoinHandle<()>>,
}

impl Load {
    fn start(addr: SocketAddr) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let complete = Arc::new(AtomicUsize::new(0));
        let torn = Arc::new(AtomicUsize::new(0));
        let threads = (0..4)
            .map(|_| {
                let (stop, complete, torn) = (Arc::clone(&stop), Arc::clone(&complete), Arc::clone(&torn));
                thread::spawn(move || {
                    let expected = common::routes::PLAINTEXT_BODY.as_bytes();
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(mut stream) = TcpStream::connect_timeout(&addr, Duration::from_secs(1)) else {
                            return; // The listener is gone.
                        };
                        stream.set_read_timeout(Some(IO_DEADLINE)).unwrap();
                        loop {
                            if stream.write_all(PLAINTEXT_GET).is_err() {
                                break;
                            }
                            match read_plaintext(&mut stream, expected) {
                                Some(true) => complete.fetch_add(1, Ordering::Relaxed),
                                Some(false) => torn.fetch_add(1, Ordering::Relaxed),
                                None => break,
                            };
                        }
                    }
                })
            })
            .collect();
        Self { stop, complete, torn, threads }
    }

    /// Stops the load; returns (complete, torn) responses.
    fn finish(self) -> (usize, usize) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            t.join().expect("load thread");
        }
        (self.complete.load(Ordering::Relaxed), self.torn.load(Ordering::Relaxed))
    }
}

/// Reads one `/plaintext` response: `Some(true)` complete and right,
/// `Some(false)` cut or wrong after its first byte, `None` closed before it.
fn read_plaintext(stream: &mut TcpStream, expected: &[u8]) -> Option<bool> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return if buf.is_empty() { None } else { Some(false) },
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let body = &buf[i + 4..];
            if body.len() >= expected.len() {
                return Some(buf.starts_with(b"HTTP/1.1 200") && body == expected);
            }
        }
    }
}

/// Starts `name`, puts its clients in `state`, sends SIGTERM; asserts exit
/// 0 within [`STOP_PROMISE`] and returns the time it took.
fn stop_with_clients(name: &'static str, state: ClientState) -> Duration {
    let mut server = Server::start(name);
    let mut connections = Vec::new();
    let mut load = None;
    match state {
        ClientState::Thousand => {
            let singles =
                [ClientState::IdleKeepAlive, ClientState::Fresh, ClientState::HalfHead, ClientState::HalfBody];
            for i in 0..thousand() {
                connections.push(open_in_state(&server, singles[i % singles.len()]));
            }
        }
        ClientState::LoadRunning => load = Some(Load::start(server.addr)),
        single => connections.push(open_in_state(&server, single)),
    }
    // Let the server accept and read what was sent.
    thread::sleep(Duration::from_millis(200));
    let (status, took) = server.terminate();
    let case = format!("{name} with {state:?} ({} connections)", connections.len());
    assert!(status.success(), "{case}: exit {status}");
    assert!(took < STOP_PROMISE, "{case}: stopped after {took:?}");
    if let Some(load) = load {
        let (complete, torn) = load.finish();
        assert!(complete > 0, "{case}: the load got responses");
        assert_eq!(torn, 0, "{case}: in-flight responses are completed, not cut ({complete} complete)");
    }
    eprintln!("{case}: exit 0 after {} ms", took.as_millis());
    took
}

fn stops_within_a_second(state: ClientState) {
    match state {
        // Heavy on a small machine: one server at a time, so that the clock
        // measures the server, not the other two competing for the cores.
        ClientState::Thousand | ClientState::LoadRunning => one_at_a_time(|| {
            for name in FRAMEWORKS {
                stop_with_clients(name, state);
            }
        }),
        _ => on_every_server(|name| {
            stop_with_clients(name, state);
        }),
    }
}

/// One test per state a client leaves its connection in when SIGTERM comes.
macro_rules! sigterm_tests {
    ($($name:ident: $state:expr),+ $(,)?) => {
        $(#[test]
        fn $name() {
            stops_within_a_second($state);
        })+
    };
}

sigterm_tests! {
    sigterm_stops_every_server_with_an_idle_keep_alive_connection: ClientState::IdleKeepAlive,
    sigterm_stops_every_server_with_a_fresh_connection: ClientState::Fresh,
    sigterm_stops_every_server_with_half_a_request_head: ClientState::HalfHead,
    sigterm_stops_every_server_with_half_a_body: ClientState::HalfBody,
    sigterm_stops_every_server_with_a_thousand_connections: ClientState::Thousand,
    sigterm_stops_every_server_with_a_load_running: ClientState::LoadRunning,
}
