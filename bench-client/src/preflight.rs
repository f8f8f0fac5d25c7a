//! Checks before any timing: a server is healthy, and a URL answers what
//! the load will verify (every route of `common::ROUTES` its status,
//! `Content-Type` and body).
//!
//! Preflight sends the engine's own request bytes (`Target::request_bytes`:
//! method, headers and body included) on a plain socket and frames the
//! answer with the engine's own framer (`Protocol::frame_response`), so it
//! can never pass a target the engine then fails on: no redirect is
//! followed, and what the engine cannot frame is refused here, before
//! anything is measured, with the reason. Those requests reach the server
//! like any other: a request that changes its state (a `POST`) changes it.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use common::{ROUTES, Route, RouteId};

use crate::engine::{Protocol, RouteLoad, Target, http2};

/// How long one preflight request may take, connect included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a wait for an answer looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// A preflight failure that is the server's answer, not the way to it.
///
/// The `Display` text names server, route and difference; it is for people,
/// not a contract: tell kinds apart with the predicates.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: Kind,
    message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Another status, `Content-Type` or body than expected.
    Mismatch,
    /// An answer the load engine cannot frame (so it could not count it).
    Unframeable,
    /// HTTP/2 asked for, and the server does not speak it there (HTTP/1.x
    /// answered to the preface, or ALPN `h2` not selected).
    NotHttp2,
}

impl Error {
    /// The server answered with another status, `Content-Type` or body than
    /// the route table's (or, for `load`, than status 200).
    pub fn is_mismatch(&self) -> bool {
        self.kind == Kind::Mismatch
    }

    /// The answer is not one the load engine can frame.
    pub fn is_unframeable(&self) -> bool {
        self.kind == Kind::Unframeable
    }

    /// HTTP/2 was asked for and the server does not speak it on that port
    /// (bad input, as a wrong URL is).
    pub fn is_not_http2(&self) -> bool {
        self.kind == Kind::NotHttp2
    }
}

/// One response as preflight saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Status code of the final response (after any interim `1xx`).
    pub status: u16,
    /// `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// Body bytes (decoded when chunked).
    pub body: Vec<u8>,
}

/// Fetches `target` once, exactly as the engine requests it.
///
/// # Errors
/// The server cannot be reached or closes before a complete answer (the
/// address in the message), or answers what the engine cannot frame
/// ([`Error::is_unframeable`]).
pub fn fetch(target: &Target) -> anyhow::Result<Fetched> {
    fetch_until(target, None)
}

/// What the server at `addr` grants HTTP/2 with prior knowledge (h2c): the
/// client's preface sent, the server's first `SETTINGS` read and
/// acknowledged, the connection closed.
///
/// # Errors
/// No connection, no answer within the request timeout, or an answer that
/// is not HTTP/2's start (HTTP/1.x, another frame), the address in the
/// message.
pub fn http2_settings(addr: std::net::SocketAddr) -> anyhow::Result<http2::Settings> {
    let mut tcp = TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT).with_context(|| format!("connect to {addr}"))?;
    tcp.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    tcp.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    tcp.write_all(&http2::client_preface()).with_context(|| format!("HTTP/2 preface to {addr}"))?;
    let mut buf = Vec::with_capacity(256);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(settings) = http2::server_settings(&buf).with_context(|| format!("h2c to {addr}"))? {
            // Owed (RFC 9113 §6.5.3); the server may have closed already.
            let _ = tcp.write_all(&http2::settings_ack());
            return Ok(settings);
        }
        match tcp.read(&mut chunk).with_context(|| format!("h2c to {addr}: no SETTINGS within {REQUEST_TIMEOUT:?}"))? {
            0 => bail!("h2c to {addr}: closed after {} bytes, before its SETTINGS", buf.len()),
            n => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A connection preflight reads and writes: plain, or TLS.
trait Io: Read + Write {}

impl<T: Read + Write> Io for T {}

/// [`fetch`], giving up within [`STOP_POLL`] once `stop` is set.
///
/// # Errors
/// As [`fetch`]; stopped: "interrupted while waiting for …".
fn fetch_until(target: &Target, stop: Option<&AtomicBool>) -> anyhow::Result<Fetched> {
    if target.protocol == Protocol::Http2 {
        return fetch_http2(target, stop);
    }
    let addr = target.addr;
    let tcp = TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT).with_context(|| format!("connect to {addr}"))?;
    // The whole timeout for the write (over TLS, the handshake's reads too),
    // then short reads that look at `stop` in between.
    tcp.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    tcp.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let socket = tcp.try_clone()?;
    let mut stream: Box<dyn Io> = match &target.tls {
        None => Box::new(tcp),
        Some(tls) => Box::new(tls.blocking(tcp).with_context(|| format!("TLS to {addr}"))?),
    };
    let method = target.request.method();
    stream.write_all(&target.request_bytes()).with_context(|| format!("{method} {} on {addr}", target.path))?;
    socket.set_read_timeout(Some(STOP_POLL))?;
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 16 * 1024];
    let mut eof = false;
    let unframeable = |why: String| Error {
        kind: Kind::Unframeable,
        message: format!(
            "{addr} answered {method} {}, but the load engine cannot count this answer: {why}",
            target.path
        ),
    };
    loop {
        match target.protocol.frame_response(&buf, target.request.is_head(), eof) {
            // The engine counts every byte after a response with no request
            // outstanding as a failure: so does preflight, with what arrived.
            Ok(Some(framed)) if framed.len < buf.len() => {
                return Err(unframeable(format!(
                    "{} bytes after the response belong to no response (RFC 9112 section 6.3), starting {:?}",
                    buf.len() - framed.len,
                    String::from_utf8_lossy(&buf[framed.len..buf.len().min(framed.len + 40)])
                ))
                .into());
            }
            Ok(Some(framed)) => {
                let content_type =
                    framed.header(&buf, "content-type").map(|v| String::from_utf8_lossy(&v).into_owned());
                return Ok(Fetched { status: framed.status, content_type, body: framed.body(&buf).into_owned() });
            }
            Ok(None) if eof => {
                bail!("{method} {} on {addr}: the connection closed before a complete response", target.path)
            }
            Ok(None) => {}
            Err(e) => return Err(unframeable(e.to_string()).into()),
        }
        if Instant::now() >= deadline {
            bail!(
                "{method} {} on {addr}: no complete response within {}",
                target.path,
                humantime::format_duration(REQUEST_TIMEOUT)
            );
        }
        match stream.read(&mut chunk) {
            Ok(0) => eof = true,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    bail!("{method} {} on {addr}: interrupted while waiting for the answer", target.path);
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // TLS: the end of the stream without close_notify.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => eof = true,
            Err(e) => {
                return Err(e).with_context(|| format!("{method} {} on {addr}: reading the response", target.path));
            }
        }
    }
}

/// [`fetch_until`] over HTTP/2: the engine's own session (preface,
/// `SETTINGS`, HPACK, flow control) on a blocking socket, one stream.
///
/// # Errors
/// As [`fetch_until`]; a server that does not speak HTTP/2 there
/// ([`Error::is_not_http2`]).
fn fetch_http2(target: &Target, stop: Option<&AtomicBool>) -> anyhow::Result<Fetched> {
    let addr = target.addr;
    let not_http2 =
        |why: String| Error { kind: Kind::NotHttp2, message: format!("{addr} does not speak HTTP/2: {why}") };
    let tcp = TcpStream::connect_timeout(&addr, REQUEST_TIMEOUT).with_context(|| format!("connect to {addr}"))?;
    tcp.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    tcp.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let socket = tcp.try_clone()?;
    let mut stream: Box<dyn Io> = match &target.tls {
        None => Box::new(tcp),
        Some(tls) => {
            let mut s = tls.blocking(tcp).with_context(|| format!("TLS to {addr}"))?;
            while s.conn.is_handshaking() {
                if let Err(e) = s.conn.complete_io(&mut s.sock) {
                    let refused = rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol);
                    if e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) == Some(&refused) {
                        return Err(not_http2("it refused ALPN h2 over TLS (no_application_protocol)".into()).into());
                    }
                    return Err(e).with_context(|| format!("TLS to {addr}"));
                }
            }
            if s.conn.alpn_protocol() != Some(b"h2") {
                let chosen = s.conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
                return Err(not_http2(format!(
                    "ALPN h2 not selected over TLS (selected: {})",
                    chosen.as_deref().unwrap_or("none")
                ))
                .into());
            }
            Box::new(s)
        }
    };
    socket.set_read_timeout(Some(STOP_POLL))?;
    let requests = [target.request_bytes()];
    let expected = [(0, &[][..], target.request.is_head())];
    let routes = http2::Routes { requests: &requests, expected: &expected };
    let mut session = http2::Session::collecting();
    let (mut buf, mut events) = (Vec::with_capacity(4096), Vec::new());
    let mut chunk = [0u8; 16 * 1024];
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let what = format!("{} {} on {addr} over HTTP/2", target.request.method(), target.path);
    loop {
        let out = session.unwritten().to_vec();
        if !out.is_empty() {
            stream.write_all(&out).with_context(|| what.clone())?;
            session.wrote(out.len());
        }
        let read = session.receive(&buf, routes, &mut events).map_err(|e| match e {
            http2::SessionError::Http1 => not_http2(e.to_string()),
            e => Error { kind: Kind::Unframeable, message: format!("{what}: the load engine cannot read this: {e}") },
        })?;
        buf.drain(..read);
        for event in events.drain(..) {
            match event {
                http2::Event::Ready => {
                    session.open(0, routes);
                }
                http2::Event::Response { status, .. } => {
                    let kept = session.collected().cloned().unwrap_or_default();
                    return Ok(Fetched { status, content_type: kept.content_type, body: kept.body });
                }
                http2::Event::Reset { code, .. } => bail!("{what}: the server reset the stream (error code {code})"),
                http2::Event::GoAway { code, .. } => bail!("{what}: the server sent GOAWAY (error code {code})"),
            }
        }
        if !session.unwritten().is_empty() {
            continue;
        }
        if Instant::now() >= deadline {
            bail!("{what}: no complete response within {}", humantime::format_duration(REQUEST_TIMEOUT));
        }
        match stream.read(&mut chunk) {
            Ok(0) => bail!("{what}: the connection closed before a complete response"),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                    bail!("{what}: interrupted while waiting for the answer");
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e).with_context(|| format!("{what}: reading the response")),
        }
    }
}

/// How many times a route is fetched to see that its answer is stable.
pub const STABLE_FETCHES: usize = 3;

/// What every response of a load of `target` must carry, checked now: for a
/// plain `GET` of a path of the route table answered with status 200, the
/// table's body
/// (after checking that the server answers it); for any other request or
/// `status`, the answer fetched now, which must come with `status` and be
/// the same [`STABLE_FETCHES`] times (no redirect is followed: the engine
/// does not follow them either).
///
/// Gives up within 50 ms once `stop` is set.
///
/// # Errors
/// An unreachable server (naming the address), an answer the engine cannot
/// frame, a mismatch or an answer that changes (naming the URL and the
/// difference), or `stop`.
pub fn expected(url: &str, target: &Target, status: u16, stop: &AtomicBool) -> anyhow::Result<RouteLoad> {
    // A server that answered was reached: its answer is the error.
    let fetched = fetch_until(target, Some(stop))
        .map_err(|e| if e.is::<Error>() { e } else { e.context(format!("cannot reach {} for {url}", target.addr)) })?;
    let mismatch = |diff: String| Error { kind: Kind::Mismatch, message: format!("preflight {url}: {diff}") };
    if let Some(route) = Route::by_path(&target.path).filter(|_| status == 200 && target.request.is_plain_get()) {
        return match difference(route, &fetched) {
            None => Ok(RouteLoad::ok(target.clone(), route.expected_body())),
            Some(diff) => Err(mismatch(diff).into()),
        };
    }
    let fetched = stable(target, fetched, status, stop).map_err(mismatch)?;
    Ok(RouteLoad { target: target.clone(), expected_status: status, expected_body: fetched.body })
}

/// `first`, when it has `status` and [`STABLE_FETCHES`] − 1 more fetches of
/// `target` answer the same; else the other status, what changed, or why a
/// fetch failed.
fn stable(target: &Target, first: Fetched, status: u16, stop: &AtomicBool) -> Result<Fetched, String> {
    if first.status != status {
        return Err(format!("status {} instead of {status}", first.status));
    }
    for _ in 1..STABLE_FETCHES {
        let again = fetch_until(target, Some(stop)).map_err(|e| format!("{e:#}"))?;
        if let Some(change) = change(&first, &again) {
            return Err(format!(
                "the answer changes from one request to the next ({change}): no response could be verified"
            ));
        }
    }
    Ok(first)
}

/// The answer `target` (one of the paths of an `ab` side's server, `server`
/// naming it) gives every time, with `status`; gives up within 50 ms once
/// `stop` is set.
///
/// # Errors
/// An unreachable server, an answer the engine cannot frame, another status
/// or an answer that changes ([`Error::is_mismatch`], naming server, path and
/// difference).
pub fn stable_answer(server: &str, target: &Target, status: u16, stop: &AtomicBool) -> anyhow::Result<Fetched> {
    let mismatch =
        |diff: String| Error { kind: Kind::Mismatch, message: format!("preflight {server} {}: {diff}", target.path) };
    let first = fetch_until(target, Some(stop)).with_context(|| format!("preflight {server} {}", target.path))?;
    Ok(stable(target, first, status, stop).map_err(mismatch)?)
}

/// What differs from `before` in `after` (status, `Content-Type`, length,
/// and a short view of the first byte that differs), or `None`.
pub fn change(before: &Fetched, after: &Fetched) -> Option<String> {
    let mut parts = Vec::new();
    if before.status != after.status {
        parts.push(format!("status {} → {}", before.status, after.status));
    }
    if before.content_type != after.content_type {
        let show = |t: &Option<String>| format!("{:?}", t.as_deref().unwrap_or("(none)"));
        parts.push(format!("Content-Type {} → {}", show(&before.content_type), show(&after.content_type)));
    }
    if before.body != after.body {
        let at = first_difference(&before.body, &after.body);
        parts.push(format!(
            "body {} → {} bytes, from byte {at} {:?} → {:?}",
            before.body.len(),
            after.body.len(),
            excerpt(&before.body, at),
            excerpt(&after.body, at)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The index of the first byte where `a` and `b` differ (the shorter length
/// when one is a prefix of the other).
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()))
}

/// Up to 40 bytes of `body` from `at`, as text.
fn excerpt(body: &[u8], at: usize) -> String {
    String::from_utf8_lossy(&body[at.min(body.len())..body.len().min(at + 40)]).into_owned()
}

/// Describes how `got` differs from what `route` must answer, or `None`.
pub fn difference(route: &Route, got: &Fetched) -> Option<String> {
    if got.status != 200 {
        return Some(format!("status {} instead of 200", got.status));
    }
    let expected_type = route.content_type.as_str();
    if got.content_type.as_deref() != Some(expected_type) {
        return Some(format!(
            "Content-Type {:?} instead of {expected_type:?}",
            got.content_type.as_deref().unwrap_or("(none)")
        ));
    }
    let expected = route.expected_body();
    if got.body != expected {
        let at = first_difference(&got.body, &expected);
        return Some(format!(
            "body differs from byte {at} ({} bytes instead of {}): {:?}",
            got.body.len(),
            expected.len(),
            excerpt(&got.body, at)
        ));
    }
    None
}

/// Waits until `/healthz` on `target`'s address answers 200 `OK`, polling
/// every 50 ms.
///
/// # Errors
/// When it has not within `timeout`; the last failure is quoted.
pub fn wait_healthy(target: &Target, timeout: Duration) -> anyhow::Result<()> {
    let healthz = Target { path: RouteId::Healthz.path().to_owned(), ..target.clone() };
    let deadline = Instant::now() + timeout;
    loop {
        let last = match fetch(&healthz) {
            Ok(f) if f.status == 200 && f.body == common::routes::HEALTHZ_BODY.as_bytes() => return Ok(()),
            Ok(f) => format!("status {}", f.status),
            Err(e) => format!("{e:#}"),
        };
        if Instant::now() >= deadline {
            bail!("{} not healthy after {}: {last}", target.addr, humantime::format_duration(timeout));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Fetches every route of `common::ROUTES` from `target`'s address and
/// checks status, `Content-Type` and body.
///
/// # Errors
/// The first mismatch ([`Error::is_mismatch`]), naming `server`, the route
/// and the difference.
pub fn check_routes(server: &str, target: &Target) -> anyhow::Result<()> {
    for route in ROUTES {
        let at = Target { path: route.path.to_owned(), ..target.clone() };
        let got = fetch(&at).with_context(|| format!("preflight {server} {}", route.path))?;
        if let Some(diff) = difference(route, &got) {
            return Err(
                Error { kind: Kind::Mismatch, message: format!("preflight {server} {}: {diff}", route.path) }.into()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::RouteId;

    #[test]
    fn differences_are_named_by_kind() {
        let route = Route::get(RouteId::Plaintext);
        let ok = Fetched {
            status: 200,
            content_type: Some("text/plain; charset=utf-8".into()),
            body: b"Hello, World!".to_vec(),
        };
        assert_eq!(difference(route, &ok), None);
        let status = Fetched { status: 503, ..ok.clone() };
        assert_eq!(difference(route, &status).unwrap(), "status 503 instead of 200");
        let ctype = Fetched { content_type: Some("text/html".into()), ..ok.clone() };
        assert!(difference(route, &ctype).unwrap().starts_with("Content-Type \"text/html\""));
        let body = Fetched { body: "Hello, Wörld!".as_bytes().to_vec(), ..ok };
        let diff = difference(route, &body).unwrap();
        assert!(diff.starts_with("body differs from byte 8 (14 bytes instead of 13)"), "{diff}");
    }
}
