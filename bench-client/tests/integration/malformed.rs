//! Each server, a real process, survives malformed and unusual requests
//! written on a raw `TcpStream`, never hangs on them, and answers `GET
//! /healthz` correctly afterwards: garbage request lines, oversized headers,
//! invalid UTF-8 in the path, HTTP/1.0 without keep-alive, `HEAD` on every
//! `GET` route, pipelined `GET`s and a slowloris client. Each test runs its
//! case on the three servers at once, one thread each.

use crate::util;
use crate::util::FRAMEWORKS;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use bench_client::sys::ServerProcess;
use common::routes::HEALTHZ_BODY;
use common::{ROUTES, Route, RouteId};

/// How long a server may stay silent before the test calls it a hang.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// Starts the three servers and runs `case` on each at once, one thread
/// each; then each server must still run and answer `/healthz`.
fn on_every_server(case: impl Fn(&str, SocketAddr) + Sync) {
    std::thread::scope(|scope| {
        for name in FRAMEWORKS {
            let case = &case;
            scope.spawn(move || {
                let mut server = ServerProcess::start(&util::server_binary(name), &[], &util::all_cpus()).unwrap();
                case(name, server.addr);
                assert!(!server.has_exited(), "{name} exited");
                assert_healthy(name, server.addr);
            });
        }
    });
}

/// One response, as read off the socket.
#[derive(Debug)]
struct Response {
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    version: u8,
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        let value = self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v)?;
        Some(std::str::from_utf8(value).expect("header value is ASCII"))
    }

    fn content_length(&self) -> Option<usize> {
        self.header("content-length").map(|v| v.trim().parse().expect("numeric Content-Length"))
    }

    fn closes(&self) -> bool {
        self.header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close"))
    }
}

/// What a server did next on a connection.
#[derive(Debug)]
enum Next {
    /// A complete, well-formed response.
    Response(Response),
    /// It closed the connection (FIN or RST) before a byte of a response.
    Closed,
}

impl Next {
    #[track_caller]
    fn response(self, who: &str) -> Response {
        match self {
            Self::Response(r) => r,
            Self::Closed => panic!("{who}: closed the connection instead of answering"),
        }
    }
}

/// A client connection with its read buffer.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    who: String,
}

impl Conn {
    fn open(who: &str, addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("{who}: connect: {e}"));
        stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
        stream.set_write_timeout(Some(ANSWER_TIMEOUT)).unwrap();
        Self { stream, buf: Vec::new(), who: who.to_owned() }
    }

    /// Writes `bytes`; a server that already closed the connection (it may
    /// refuse before reading everything) is not an error here.
    fn send(&mut self, bytes: &[u8]) {
        match self.stream.write_all(bytes) {
            Ok(()) => {}
            Err(e) if matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset) => {}
            Err(e) => panic!("{}: write: {e}", self.who),
        }
    }

    /// Reads more bytes into the buffer; 0 when the server closed.
    fn fill(&mut self) -> usize {
        let mut chunk = [0; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                n
            }
            Err(e) if e.kind() == ErrorKind::ConnectionReset => 0,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                panic!(
                    "{}: hangs: nothing for {ANSWER_TIMEOUT:?} after {:?}",
                    self.who,
                    String::from_utf8_lossy(&self.buf)
                )
            }
            Err(e) => panic!("{}: read: {e}", self.who),
        }
    }

    /// The next response (to a `HEAD` request when `head`, so without a
    /// body), or [`Next::Closed`]. Panics on a hang, a malformed response or
    /// one cut short.
    fn next(&mut self, head: bool) -> Next {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut parsed = httparse::Response::new(&mut headers);
            match parsed.parse(&self.buf) {
                Ok(httparse::Status::Complete(len)) => {
                    let mut response = Response {
                        version: parsed.version.expect("version"),
                        status: parsed.code.expect("status"),
                        headers: parsed.headers.iter().map(|h| (h.name.to_owned(), h.value.to_vec())).collect(),
                        body: Vec::new(),
                    };
                    self.buf.drain(..len);
                    let bodiless = head || matches!(response.status, 100..=199 | 204 | 304);
                    assert!(
                        response.header("transfer-encoding").is_none(),
                        "{}: chunked responses are not expected here: {response:?}",
                        self.who
                    );
                    let wanted = match response.content_length() {
                        _ if bodiless => 0,
                        Some(n) => n,
                        None => {
                            // Delimited by the close (RFC 9112 §6.3).
                            while self.fill() > 0 {}
                            self.buf.len()
                        }
                    };
                    while self.buf.len() < wanted {
                        assert!(self.fill() > 0, "{}: body cut short: {response:?}", self.who);
                    }
                    response.body = self.buf.drain(..wanted).collect();
                    return Next::Response(response);
                }
                Ok(httparse::Status::Partial) => {
                    if self.fill() == 0 {
                        assert!(self.buf.is_empty(), "{}: response cut short: {:?}", self.who, self.buf);
                        return Next::Closed;
                    }
                }
                Err(e) => panic!("{}: malformed response ({e}): {:?}", self.who, String::from_utf8_lossy(&self.buf)),
            }
        }
    }
}

fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").into_bytes()
}

/// `GET /healthz` on a new connection answers the route table's status,
/// `Content-Type` and body.
#[track_caller]
fn assert_healthy(who: &str, addr: SocketAddr) {
    let route = Route::get(RouteId::Healthz);
    let mut conn = Conn::open(who, addr);
    conn.send(&get(route.path));
    let r = conn.next(false).response(who);
    assert_eq!(r.status, 200, "{who}: {r:?}");
    assert_eq!(r.header("content-type"), Some(route.content_type.as_str()), "{who}");
    assert_eq!(r.body, route.expected_body(), "{who}");
}

/// A refusal: a 4xx response, or a close without one.
#[track_caller]
fn assert_refused(who: &str, next: Next) {
    if let Next::Response(r) = next {
        assert!((400..500).contains(&r.status), "{who}: a 4xx or a close, got {r:?}");
    }
}

#[test]
fn garbage_request_lines_get_a_400_or_a_close() {
    let garbage: [&[u8]; 5] = [
        b"HELLO WORLD GARBAGE\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", // the start of a TLS ClientHello
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nno colon in this header\r\n\r\n",
        b"\x00\x01\x02\x03\r\n\r\n",
    ];
    on_every_server(|name, addr| {
        for bytes in garbage {
            let who = format!("{name} {:?}", String::from_utf8_lossy(bytes));
            let mut conn = Conn::open(&who, addr);
            conn.send(bytes);
            assert_refused(&who, conn.next(false));
        }
    });
}

#[test]
fn oversized_headers_get_an_answer_or_a_close_never_a_hang() {
    let with_header = |size: usize| {
        let mut request = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ".to_vec();
        request.resize(request.len() + size, b'a');
        request.extend_from_slice(b"\r\n\r\n");
        request
    };
    on_every_server(|name, addr| {
        // 64 KiB is within all three frameworks' default limits: answered
        // normally, or refused; either way a well-formed response or a close.
        let who = format!("{name} 64 KiB header");
        let mut conn = Conn::open(&who, addr);
        conn.send(&with_header(64 * 1024));
        if let Next::Response(r) = conn.next(false) {
            match r.status {
                200 => assert_eq!(r.body, HEALTHZ_BODY.as_bytes(), "{who}"),
                400 | 431 => {}
                other => panic!("{who}: status {other}: {r:?}"),
            }
        }
        // 1 MiB is beyond every default: refused.
        let who = format!("{name} 1 MiB header");
        let mut conn = Conn::open(&who, addr);
        conn.send(&with_header(1024 * 1024));
        assert_refused(&who, conn.next(false));
    });
}

#[test]
fn invalid_utf8_in_the_path_gets_a_4xx() {
    let requests: [&[u8]; 4] = [
        b"GET /\xff\xfe HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /api/\xc3\x28 HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /%ff%fe HTTP/1.1\r\nHost: localhost\r\n\r\n",
        b"GET /state/%c3%28 HTTP/1.1\r\nHost: localhost\r\n\r\n",
    ];
    on_every_server(|name, addr| {
        for bytes in requests {
            let who = format!("{name} {:?}", String::from_utf8_lossy(bytes).lines().next().unwrap_or(""));
            let mut conn = Conn::open(&who, addr);
            conn.send(bytes);
            let r = conn.next(false).response(&who);
            assert!(matches!(r.status, 400 | 404), "{who}: 400 or 404, got {r:?}");
        }
    });
}

/// The routes of the table loaded with a `GET` (the extractors' `POST`s aside).
fn gets() -> impl DoubleEndedIterator<Item = &'static Route> {
    ROUTES.iter().filter(|r| r.request().method == "GET")
}

#[test]
fn http10_without_keep_alive_gets_one_response_then_a_close() {
    on_every_server(|name, addr| {
        for route in gets() {
            let who = format!("{name} HTTP/1.0 GET {}", route.path);
            let mut conn = Conn::open(&who, addr);
            conn.send(format!("GET {} HTTP/1.0\r\n\r\n", route.path).as_bytes());
            let r = conn.next(false).response(&who);
            assert_eq!((r.status, r.version), (200, 0), "{who}: 200 in HTTP/1.0, got {r:?}");
            assert_eq!(r.body, route.expected_body(), "{who}");
            assert!(matches!(conn.next(false), Next::Closed), "{who}: the server must close after the response");
        }
    });
}

#[test]
fn head_answers_every_get_route_with_its_headers_and_no_body() {
    on_every_server(|name, addr| {
        let mut conn = Conn::open(name, addr);
        for route in gets() {
            let who = format!("{name} {}", route.path);
            conn.send(&get(route.path));
            let got = conn.next(false).response(&who);
            assert_eq!(got.status, 200, "{who}");
            conn.send(format!("HEAD {} HTTP/1.1\r\nHost: localhost\r\n\r\n", route.path).as_bytes());
            let head = conn.next(true).response(&who);
            assert_eq!(head.status, 200, "{who}: HEAD: {head:?}");
            assert_eq!(head.content_length(), Some(route.expected_body().len()), "{who}: HEAD Content-Length");
            assert_eq!(head.content_length(), got.content_length(), "{who}: HEAD and GET Content-Length");
            assert_eq!(head.header("content-type"), got.header("content-type"), "{who}: HEAD and GET Content-Type");
            assert!(!head.closes(), "{who}: HEAD keeps the connection");
            // Any body bytes after the HEAD response would be read as the
            // start of the next response and fail to parse.
            conn.send(&get(Route::get(RouteId::Healthz).path));
            let after = conn.next(false).response(&who);
            assert_eq!((after.status, after.body.as_slice()), (200, HEALTHZ_BODY.as_bytes()), "{who}");
        }
    });
}

#[test]
fn pipelined_gets_come_back_complete_in_order_and_byte_identical() {
    // Every route twice, in one write.
    let routes: Vec<&Route> = gets().chain(gets().rev()).collect();
    let batch: Vec<u8> = routes.iter().flat_map(|r| get(r.path)).collect();
    on_every_server(|name, addr| {
        let mut conn = Conn::open(name, addr);
        conn.send(&batch);
        for (i, route) in routes.iter().enumerate() {
            let who = format!("{name} pipelined #{i} {}", route.path);
            let r = conn.next(false).response(&who);
            assert_eq!(r.status, 200, "{who}: {r:?}");
            assert_eq!(r.header("content-type"), Some(route.content_type.as_str()), "{who}");
            assert_eq!(r.body, route.expected_body(), "{who}");
            assert!(!r.closes(), "{who}: no request asked to close");
        }
    });
}

#[test]
fn a_slowloris_client_neither_blocks_others_nor_hangs() {
    const STALL: Duration = Duration::from_secs(10);
    on_every_server(|name, addr| {
        let who = format!("{name} slowloris");
        let mut slow = Conn::open(&who, addr);
        slow.send(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n");
        let start = Instant::now();
        while start.elapsed() < STALL {
            let asked = Instant::now();
            assert_healthy(&format!("{name} during the slowloris stall"), addr);
            assert!(asked.elapsed() < Duration::from_secs(1), "{name}: /healthz took {:?}", asked.elapsed());
            std::thread::sleep(Duration::from_millis(500));
        }
        // The rest of the headers: the server answers them, or it timed the
        // connection out (a 408 and/or a close).
        slow.send(b"User-Agent: slowloris\r\n\r\n");
        match slow.next(false) {
            Next::Closed => {}
            Next::Response(r) if r.status == 408 => {}
            Next::Response(r) => {
                assert_eq!((r.status, r.body.as_slice()), (200, HEALTHZ_BODY.as_bytes()), "{who}: {r:?}")
            }
        }
    });
}
