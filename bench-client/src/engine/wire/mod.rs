//! The seam between the load loop and a protocol's bytes: the engine's
//! loop, preflight and the calibration responder reach the wire only
//! through [`Protocol`], so a second protocol is one new module here plus
//! its variant (docs/ARCHITECTURE.md, "To add a protocol").
//!
//! What a protocol supplies: its name and ALPN token, and the bytes of one
//! request (a [`Request`]: method, added headers, body), built once and
//! written for every request of its route; every method of [`Protocol`]
//! has an arm per protocol. How responses are read differs by kind, so each
//! protocol's reader is its own: HTTP/1.1's framer finds the first complete
//! response in a connection's read buffer ([`http1::frame_response`]: its
//! status, where its head and body lie, whether the server closes after it);
//! HTTP/2 multiplexes, its responses complete out of order, so its
//! connections keep a [`http2::Session`] that the loop hands what it reads
//! ([`Protocol::request`] gives its request's frames on stream 0, the
//! stream id set per request). The load loop's per-connection step and the
//! blocking exchange (`engine::Exchange`) each match on the protocol once.
//! The calibration responder speaks HTTP/1.1 and calls `http1` directly.

pub mod http1;
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

    /// What a TLS client offers by ALPN (RFC 7301) to speak it.
    pub fn alpn(self) -> &'static [u8] {
        match self {
            Self::Http1 => b"http/1.1",
            Self::Http2 => b"h2",
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
}
