//! What a [`Session`](super::Session) reports to the loop ([`Event`]), why it
//! cannot go on ([`SessionError`]), what the loop gives it of its routes
//! ([`Routes`]) and what it keeps for preflight ([`Collected`]).

use super::frame;

/// What the loop must know of what the server sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The server's first `SETTINGS` arrived (and was acknowledged):
    /// streams may open.
    Ready,
    /// A stream's response ended: its final status, and whether its body
    /// equals its route's expected body.
    Response {
        /// The stream.
        stream: u32,
        /// Its final status (after any interim `1xx`).
        status: u16,
        /// Its body equals the expected one, byte for byte.
        body_matches: bool,
    },
    /// The server reset a stream of ours (`RST_STREAM`) with this error code.
    Reset {
        /// The stream.
        stream: u32,
        /// The error code (RFC 9113 §7).
        code: u32,
    },
    /// The server ends the connection (`GOAWAY`): streams above
    /// `last_stream` were not processed and may be sent again elsewhere.
    GoAway {
        /// The last stream it processed, or may still answer.
        last_stream: u32,
        /// The error code (0, `NO_ERROR`: a shutdown; any other, a
        /// connection error the server reports, RFC 9113 §5.4.1).
        code: u32,
        /// Its first `GOAWAY` on this connection (a graceful shutdown sends
        /// two, the second lowering the last stream).
        first: bool,
    },
    /// A `DATA` or `HEADERS` frame on a stream of ours already closed: it
    /// belongs to no response (a stream error, answered `RST_STREAM(STREAM_CLOSED)`).
    Stray {
        /// The stream.
        stream: u32,
    },
}

/// Why a connection's HTTP/2 cannot go on (the connection is dropped).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// The server answered the preface with HTTP/1.x.
    #[error("answered HTTP/1.x to HTTP/2's preface")]
    Http1,
    /// Its first frame is not `SETTINGS`.
    #[error("its first frame is of type {0:#x}, not SETTINGS")]
    NotSettings(u8),
    /// A frame larger than this client accepts, or of a size its type forbids.
    #[error("a frame of type {kind:#x} with a payload of {length} bytes")]
    FrameSize {
        /// The frame's type.
        kind: u8,
        /// Its payload length.
        length: usize,
    },
    /// A frame the protocol forbids here (a pushed stream, a header block
    /// interrupted, padding longer than the frame).
    #[error("a frame of type {0:#x} where the protocol forbids it")]
    Protocol(u8),
    /// A header block over `CONTINUATION`s past this client's bound (1 MiB).
    #[error("a header block of more than {0} bytes over CONTINUATION frames (this client's bound: 1 MiB)")]
    HeaderBlock(usize),
    /// A header block HPACK cannot decode.
    #[error("a header block HPACK cannot decode: {0}")]
    Hpack(String),
}

/// What the loop gives the session of its routes, by route index: each
/// request as `Protocol::Http2` built it (frames on stream 0, then the
/// unframed body), and the status, body and `HEAD`-ness of a successful
/// response (the body is what each stream's is compared with).
#[derive(Debug, Clone, Copy)]
pub struct Routes<'r> {
    /// The requests.
    pub requests: &'r [Vec<u8>],
    /// The expected responses.
    pub expected: &'r [(u16, &'r [u8], bool)],
}

impl Routes<'_> {
    /// The body a successful response of `route` carries.
    pub(super) fn body(&self, route: usize) -> &[u8] {
        self.expected.get(route).map_or(&[][..], |e| e.1)
    }

    /// The request's header frames and its body.
    pub(super) fn request(&self, route: usize) -> (&[u8], &[u8]) {
        let bytes = self.requests.get(route).map_or(&[][..], Vec::as_slice);
        bytes.split_at(frame::headers_len(bytes))
    }
}

/// What preflight keeps of a response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// `content-type`, the last one seen.
    pub content_type: Option<String>,
    /// Every body byte received on a stream of ours that was open.
    pub body: Vec<u8>,
}
