//! The seam between the load loop and a protocol's bytes: the engine's
//! loop, preflight and the calibration responder reach the wire only
//! through [`Protocol`], so a second protocol is one new module here plus
//! its variant (docs/ARCHITECTURE.md, "To add a protocol").
//!
//! What a protocol supplies: the bytes of one request (a [`Request`]:
//! method, added headers, body), built once and
//! written for every request of its route; a framer that finds the first
//! complete response in a connection's read buffer (its status, where its
//! head and body lie, and whether the server closes after it); and, for the
//! responder, a canned response and a count of the requests a buffer holds.
//! The per-request path is one `match` on a `Copy` enum.
//!
//! HTTP/2 multiplexes: its responses complete out of order and are not
//! framed one after another, so its connections keep a [`http2::Session`]
//! that the loop hands what it reads (`http2/`); [`Protocol::request`] gives
//! its request's frames on stream 0, the stream id set per request.

mod http1;
pub mod http2;
mod request;

pub use self::http1::{FrameError, Framed};
pub use self::request::{Request, RequestError};

/// The protocol a target's connections speak.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1 (RFC 9112): keep-alive, pipelining, a response framed by
    /// its `Content-Length`, chunks or the connection's end.
    #[default]
    Http1,
    /// HTTP/2 (RFC 9113): streams multiplexed on a connection, h2c with
    /// prior knowledge over plain TCP, ALPN `h2` over TLS.
    Http2,
}

impl Protocol {
    /// Its name, as a report says it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Http1 => "HTTP/1.1",
            Self::Http2 => "HTTP/2",
        }
    }

    /// The bytes of `request` (method, added headers, body) of `path` with
    /// `host` as its authority, written as they are for every request
    /// (HTTP/2: on stream 0, the stream id set per request; `scheme` is its
    /// `:scheme`).
    pub fn request(self, scheme: &str, host: &str, path: &str, request: &Request) -> Vec<u8> {
        match self {
            Self::Http1 => http1::request(host, path, request),
            Self::Http2 => http2::request(scheme, host, path, request),
        }
    }

    /// The first complete response at the start of `buf`: `Ok(None)` while
    /// it is incomplete. `head_request`: the request was a `HEAD` (no body);
    /// `at_eof`: the server has closed (a body delimited by the close ends).
    ///
    /// # Errors
    /// A response the protocol's grammar refuses.
    #[inline]
    pub fn frame_response(self, buf: &[u8], head_request: bool, at_eof: bool) -> Result<Option<Framed>, FrameError> {
        match self {
            Self::Http1 => http1::frame_response(buf, head_request, at_eof),
            Self::Http2 => Err(FrameError::Multiplexed),
        }
    }

    /// The responder's answer to every request: status 200, `headers`, `body`.
    pub fn ok_response(self, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
        match self {
            Self::Http1 => http1::ok_response(headers, body),
            Self::Http2 => unreachable!("the calibration responder speaks HTTP/1.1 only"),
        }
    }

    /// The responder's reading: how many requests end in `buf`, and how many
    /// bytes at its end to keep in front of the next read (the start of an
    /// end that has not fully arrived).
    pub fn requests_ended(self, buf: &[u8]) -> (usize, usize) {
        match self {
            Self::Http1 => http1::request_heads_ended(buf),
            Self::Http2 => unreachable!("the calibration responder speaks HTTP/1.1 only"),
        }
    }
}
