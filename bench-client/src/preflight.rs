//! Checks before any timing: a server is healthy, and a URL answers what
//! the load will verify (every route of `common::ROUTES` its status,
//! `Content-Type` and body).
//!
//! Preflight sends the engine's own request bytes (`Target::request_bytes`:
//! method, headers and body included) on the engine's blocking exchange
//! (`engine::Exchange`: its framer, or its HTTP/2 session), so it
//! can never pass a target the engine then fails on: no redirect is
//! followed, and what the engine cannot frame is refused here, before
//! anything is measured, with the reason. Those requests reach the server
//! like any other: a request that changes its state (a `POST`) changes it.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use common::{ROUTES, Route, RouteId};

use crate::engine::{Exchange, ExchangeError, Reply, Request, RouteLoad, Target, http2};

/// How long one preflight request may take, connect included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Fetches `target` once, exactly as the engine requests it.
///
/// # Errors
/// The server cannot be reached or closes before a complete answer (the
/// address in the message), or answers what the engine cannot frame
/// ([`Error::is_unframeable`]).
pub fn fetch(target: &Target) -> anyhow::Result<Reply> {
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

/// [`fetch`] on a blocking exchange of the target's protocol, giving up
/// within 50 ms once `stop` is set.
///
/// # Errors
/// As [`fetch`]; stopped: "interrupted while waiting for …"; a server that
/// does not speak HTTP/2 where it is asked for ([`Error::is_not_http2`]).
fn fetch_until(target: &Target, stop: Option<&AtomicBool>) -> anyhow::Result<Reply> {
    let (addr, method, path) = (target.addr, target.request.method(), &target.path);
    let failed = |e: ExchangeError| -> anyhow::Error {
        match e {
            ExchangeError::NotHttp2(why) => {
                Error { kind: Kind::NotHttp2, message: format!("{addr} does not speak HTTP/2: {why}") }.into()
            }
            e @ ExchangeError::Unframeable(_) => {
                Error { kind: Kind::Unframeable, message: format!("{addr} answered {method} {path}, but {e}") }.into()
            }
            ExchangeError::Connect(e) => anyhow::Error::new(e).context(format!("connect to {addr}")),
            ExchangeError::Tls(e) => anyhow::Error::new(e).context(format!("TLS to {addr}")),
            e => anyhow::anyhow!("{method} {path} on {addr}: {e}"),
        }
    };
    Exchange::open(target, true, REQUEST_TIMEOUT, stop).and_then(|mut exchange| exchange.fetch(stop)).map_err(failed)
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
    let table = |route: &&Route| status == 200 && target.request == Request::of_table(route.request());
    if let Some(route) = Route::by_path(&target.path).filter(table) {
        return match difference(route, &fetched) {
            None => Ok(RouteLoad::of_table(target.clone(), route)),
            Some(diff) => Err(mismatch(diff).into()),
        };
    }
    let fetched = stable(target, fetched, status, stop).map_err(mismatch)?;
    Ok(RouteLoad { expected_status: status, ..RouteLoad::ok(target.clone(), fetched.body) })
}

/// `first`, when it has `status` and [`STABLE_FETCHES`] − 1 more fetches of
/// `target` answer the same; else the other status, what changed, or why a
/// fetch failed.
fn stable(target: &Target, first: Reply, status: u16, stop: &AtomicBool) -> Result<Reply, String> {
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
pub fn stable_answer(server: &str, target: &Target, status: u16, stop: &AtomicBool) -> anyhow::Result<Reply> {
    let mismatch =
        |diff: String| Error { kind: Kind::Mismatch, message: format!("preflight {server} {}: {diff}", target.path) };
    let first = fetch_until(target, Some(stop)).with_context(|| format!("preflight {server} {}", target.path))?;
    Ok(stable(target, first, status, stop).map_err(mismatch)?)
}

/// What differs from `before` in `after` (status, `Content-Type`, length,
/// and a short view of the first byte that differs), or `None`.
pub fn change(before: &Reply, after: &Reply) -> Option<String> {
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
pub fn difference(route: &Route, got: &Reply) -> Option<String> {
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

/// Fetches `load`'s target once and checks that the answer is what every
/// response of the load must be: its status, and its shape and bytes
/// (behind middleware: the headers the layers add, a gzip body decoded).
///
/// # Errors
/// The server cannot be reached, or answers otherwise
/// ([`Error::is_mismatch`]), naming `server`, the target and the difference.
pub fn check_load(server: &str, load: &RouteLoad) -> anyhow::Result<()> {
    let what = format!("preflight {server} {}", load.target.path);
    let got = fetch(&load.target).with_context(|| what.clone())?;
    let diff = if got.status == load.expected_status {
        let mut scratch = Vec::new();
        load.shape.check(&got.field_slices(), &got.body, &load.expected_body, &mut scratch).err().map(|e| e.to_string())
    } else {
        Some(format!("status {} instead of {}", got.status, load.expected_status))
    };
    match diff {
        Some(diff) => Err(Error { kind: Kind::Mismatch, message: format!("{what}: {diff}") }.into()),
        None => Ok(()),
    }
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
        let at = RouteLoad::of_table(target.clone(), route).target;
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
        let ok = Reply {
            status: 200,
            content_type: Some("text/plain; charset=utf-8".into()),
            body: b"Hello, World!".to_vec(),
            fields: Vec::new(),
        };
        assert_eq!(difference(route, &ok), None);
        let status = Reply { status: 503, ..ok.clone() };
        assert_eq!(difference(route, &status).unwrap(), "status 503 instead of 200");
        let ctype = Reply { content_type: Some("text/html".into()), ..ok.clone() };
        assert!(difference(route, &ctype).unwrap().starts_with("Content-Type \"text/html\""));
        let body = Reply { body: "Hello, Wörld!".as_bytes().to_vec(), ..ok };
        let diff = difference(route, &body).unwrap();
        assert!(diff.starts_with("body differs from byte 8 (14 bytes instead of 13)"), "{diff}");
    }
}
