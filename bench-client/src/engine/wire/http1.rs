//! The HTTP/1.1 wire format the load loop needs: one pre-built request, and
//! a response framer over `httparse` that delimits responses as RFC 9112
//! section 6 ("Message Body Length") does, so that any valid HTTP/1.1
//! answer is counted:
//!
//! - interim `1xx` responses (any number of them, e.g. `103 Early Hints`)
//!   are skipped and belong to the final response that follows; `101
//!   Switching Protocols` ends HTTP and is refused;
//! - a response to `HEAD`, and `204` and `304`, have no body;
//! - `Transfer-Encoding` with `chunked` last: chunked (extensions, any number
//!   of chunks, trailers); any other `Transfer-Encoding`: the body runs to
//!   the end of the connection;
//! - otherwise `Content-Length` (several equal values allowed, differing
//!   ones refused), or, without it, a body delimited by the server closing.
//!
//! No size limit applies that a real response reaches: the head may carry
//! any number of headers (32 are parsed on the fast path, more on a slower
//! one), chunk sizes are 64-bit, and the caller's buffer grows as needed.

use std::borrow::Cow;
use std::ops::Range;

use thiserror::Error;

/// Headers parsed on the fast path; a head with more is parsed again with
/// room for more (up to [`MAX_HEADERS`]).
const FAST_HEADERS: usize = 32;
/// Most headers one response head may carry (far above what servers send;
/// a guard against a peer streaming headers forever).
const MAX_HEADERS: usize = 1 << 16;

/// Builds the bytes of `GET path HTTP/1.1` with a `Host` header (keep-alive
/// is HTTP/1.1's default). Sent as is for every request.
pub(super) fn get_request(host: &str, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes()
}

/// An answer with status 200, `headers` and `body` (`Content-Length` added).
pub(super) fn ok_response(headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\n", body.len()).into_bytes();
    for (name, value) in headers {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out
}

/// How many request heads end in `buf` (at each empty line), and the bytes
/// at its end to carry to the next read: an empty line may be cut anywhere
/// in its four bytes, so the last three are kept.
pub(super) fn request_heads_ended(buf: &[u8]) -> (usize, usize) {
    (buf.windows(4).filter(|w| *w == b"\r\n\r\n").count(), buf.len().min(3))
}

/// How the body of a framed response lies in the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// Contiguous body bytes (`Content-Length`, close-delimited, or none).
    Bytes(Range<usize>),
    /// Chunked: the chunk-size lines, data, last chunk and trailers.
    Chunked(Range<usize>),
}

/// One response framed in a read buffer, with the interim responses before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed {
    /// Bytes the interim responses and the final response occupy at the
    /// start of the buffer; what follows belongs to the next response.
    pub len: usize,
    /// Status code of the final response.
    pub status: u16,
    /// Where the final response's head lies (status line and headers).
    pub head: Range<usize>,
    /// Where its body lies.
    pub body: Body,
    /// The server will close after it (`Connection: close`, HTTP/1.0
    /// without keep-alive, or a body delimited by closing).
    pub close: bool,
}

impl Framed {
    /// Whether the body (decoded, when chunked) equals `expected`, without
    /// copying it.
    pub fn body_eq(&self, buf: &[u8], expected: &[u8]) -> bool {
        match &self.body {
            Body::Bytes(range) => buf[range.clone()] == *expected,
            Body::Chunked(range) => {
                let mut rest = expected;
                for chunk in chunks(&buf[range.clone()]) {
                    let Some(tail) = rest.strip_prefix(chunk) else { return false };
                    rest = tail;
                }
                rest.is_empty()
            }
        }
    }

    /// The value of the first header named `name` (any case) of the final
    /// response, read off its head in `buf`; `None` when it has none.
    pub fn header<'a>(&self, buf: &'a [u8], name: &str) -> Option<&'a [u8]> {
        let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS.min(1024)];
        let mut response = httparse::Response::new(&mut headers);
        response.parse(&buf[self.head.clone()]).ok()?;
        response.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name)).map(|h| h.value)
    }

    /// The body, decoded when chunked.
    pub fn body<'a>(&self, buf: &'a [u8]) -> Cow<'a, [u8]> {
        match &self.body {
            Body::Bytes(range) => Cow::Borrowed(&buf[range.clone()]),
            Body::Chunked(range) => Cow::Owned(chunks(&buf[range.clone()]).flatten().copied().collect()),
        }
    }
}

/// The data of each chunk of a complete chunked body (framed before, so
/// well-formed).
fn chunks(mut body: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let Ok(httparse::Status::Complete((consumed, size))) = httparse::parse_chunk_size(body) else { return None };
        let size = usize::try_from(size).ok().filter(|&s| s > 0)?;
        let data = body.get(consumed..consumed + size)?;
        body = &body[(consumed + size + 2).min(body.len())..];
        Some(data)
    })
}

/// A response the framer cannot accept.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    /// Not valid HTTP/1.x (as `httparse` judged it).
    #[error("malformed response: {0}")]
    Malformed(httparse::Error),
    /// A `Content-Length` that is not a decimal number.
    #[error("invalid Content-Length")]
    BadLength,
    /// Several `Content-Length` values that differ (RFC 9112 section 6.3).
    #[error("differing Content-Length values")]
    ConflictingLengths,
    /// A chunk-size line or chunk delimiter that is not valid.
    #[error("malformed chunked body")]
    BadChunk,
    /// `101 Switching Protocols`: the connection leaves HTTP, nothing to count.
    #[error("status 101 Switching Protocols: the connection leaves HTTP/1.1")]
    SwitchingProtocols,
}

/// What the headers of one response head say about its framing.
struct Head {
    len: usize,
    status: u16,
    close: bool,
    length: Length,
}

enum Length {
    Content(usize),
    Chunked,
    UntilClose,
}

/// Parses the head at the start of `buf`; `None` while incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, FrameError> {
    let mut fast = [httparse::EMPTY_HEADER; FAST_HEADERS];
    match parse_head_with(buf, &mut fast) {
        Err(FrameError::Malformed(httparse::Error::TooManyHeaders)) => {}
        other => return other,
    }
    let mut room = FAST_HEADERS * 8;
    loop {
        let mut headers = vec![httparse::EMPTY_HEADER; room];
        match parse_head_with(buf, &mut headers) {
            Err(FrameError::Malformed(httparse::Error::TooManyHeaders)) if room < MAX_HEADERS => {
                room = (room * 8).min(MAX_HEADERS);
            }
            other => return other,
        }
    }
}

fn parse_head_with<'b>(buf: &'b [u8], headers: &mut [httparse::Header<'b>]) -> Result<Option<Head>, FrameError> {
    let mut response = httparse::Response::new(headers);
    let len = match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(FrameError::Malformed(e)),
    };
    let status = response.code.unwrap_or(0);
    // RFC 9112 §9.3: HTTP/1.1 persists unless "close" is said; HTTP/1.0
    // closes unless kept alive. "close" wins wherever it stands (§9.6).
    let (mut said_close, mut kept_alive) = (false, false);
    let mut content_length: Option<usize> = None;
    let mut transfer_encoding: Option<bool> = None;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(h.value).map_err(|_| FrameError::BadLength)?;
            for value in text.split(',') {
                let n = value.trim().parse::<usize>().map_err(|_| FrameError::BadLength)?;
                if content_length.is_some_and(|m| m != n) {
                    return Err(FrameError::ConflictingLengths);
                }
                content_length = Some(n);
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // The last coding of the last header decides (RFC 9112 6.3 item 4).
            let last = h.value.rsplit(|&b| b == b',').next().unwrap_or_default();
            transfer_encoding = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("connection") {
            for token in h.value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                if token.eq_ignore_ascii_case(b"close") {
                    said_close = true;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    kept_alive = true;
                }
            }
        }
    }
    let length = match (transfer_encoding, content_length) {
        (Some(true), _) => Length::Chunked,
        (Some(false), _) => Length::UntilClose,
        (None, Some(n)) => Length::Content(n),
        (None, None) => Length::UntilClose,
    };
    let close = said_close || (response.version == Some(0) && !kept_alive);
    Ok(Some(Head { len, status, close, length }))
}

/// Frames the response at the start of `buf`, after any interim responses.
///
/// `head_request`: the request was `HEAD` (no body follows). `at_eof`: the
/// server has closed the connection, so `buf` holds everything that will
/// come (a body delimited by closing ends here).
///
/// Returns `Ok(None)` when more bytes are needed, `Ok(Some(framed))` once
/// the head and the whole body are in `buf`.
///
/// # Errors
/// [`FrameError`] when the bytes cannot be an HTTP/1.1 response.
pub(super) fn frame_response(buf: &[u8], head_request: bool, at_eof: bool) -> Result<Option<Framed>, FrameError> {
    let mut start = 0;
    let head = loop {
        let Some(head) = parse_head(&buf[start..])? else { return Ok(None) };
        match head.status {
            101 => return Err(FrameError::SwitchingProtocols),
            100..=199 => start += head.len,
            _ => break head,
        }
    };
    let body_start = start + head.len;
    let no_body = head_request || head.status == 204 || head.status == 304;
    let (body, len, close) = match head.length {
        _ if no_body => (Body::Bytes(body_start..body_start), body_start, head.close),
        Length::Content(n) => {
            let end = body_start.checked_add(n).ok_or(FrameError::BadLength)?;
            if buf.len() < end {
                return Ok(None);
            }
            (Body::Bytes(body_start..end), end, head.close)
        }
        Length::Chunked => match chunked_end(&buf[body_start..])? {
            Some(n) => (Body::Chunked(body_start..body_start + n), body_start + n, head.close),
            None => return Ok(None),
        },
        Length::UntilClose if at_eof => (Body::Bytes(body_start..buf.len()), buf.len(), true),
        Length::UntilClose => return Ok(None),
    };
    Ok(Some(Framed { len, status: head.status, head: start..body_start, body, close }))
}

/// Bytes of the complete chunked body at the start of `buf` (chunks, last
/// chunk, trailers, final CRLF), or `None` while incomplete.
fn chunked_end(buf: &[u8]) -> Result<Option<usize>, FrameError> {
    let mut at = 0;
    loop {
        let (consumed, size) = match httparse::parse_chunk_size(&buf[at..]) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(FrameError::BadChunk),
        };
        at += consumed;
        if size == 0 {
            break;
        }
        let size = usize::try_from(size).map_err(|_| FrameError::BadChunk)?;
        let data_end = at.checked_add(size).ok_or(FrameError::BadChunk)?;
        let Some(delimiter) = buf.get(data_end..data_end + 2) else { return Ok(None) };
        if delimiter != b"\r\n" {
            return Err(FrameError::BadChunk);
        }
        at = data_end + 2;
    }
    // Trailer fields, one per line, until an empty line.
    loop {
        let rest = &buf[at..];
        if rest.len() < 2 {
            return Ok(None);
        }
        if rest.starts_with(b"\r\n") {
            return Ok(Some(at + 2));
        }
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        at += line_end + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nOK";

    fn frame(buf: &[u8]) -> Result<Option<Framed>, FrameError> {
        frame_response(buf, false, false)
    }

    #[test]
    fn frames_a_complete_response_and_leaves_the_rest() {
        let mut buf = OK.to_vec();
        buf.extend_from_slice(b"HTTP/1.1 404");
        let f = frame(&buf).unwrap().unwrap();
        assert_eq!(f.status, 200);
        assert_eq!(&*f.body(&buf), b"OK");
        assert!(f.body_eq(&buf, b"OK") && !f.body_eq(&buf, b"O") && !f.body_eq(&buf, b"OKK"));
        assert_eq!(f.len, OK.len());
        assert_eq!(&buf[f.head.clone()], &OK[..OK.len() - 2]);
        assert!(!f.close);
        assert_eq!(frame(&buf[f.len..]).unwrap(), None);
    }

    #[test]
    fn waits_for_every_byte_of_head_and_body() {
        for cut in 0..OK.len() {
            assert_eq!(frame(&OK[..cut]).unwrap(), None, "cut at {cut}");
        }
    }

    #[test]
    fn interim_responses_are_skipped_and_belong_to_the_final_one() {
        let early = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n";
        let cont = b"HTTP/1.1 100 Continue\r\n\r\n";
        let mut buf = Vec::new();
        buf.extend_from_slice(early);
        buf.extend_from_slice(cont);
        buf.extend_from_slice(early);
        buf.extend_from_slice(OK);
        for cut in 0..buf.len() {
            assert_eq!(frame(&buf[..cut]).unwrap(), None, "cut at {cut}");
        }
        let f = frame(&buf).unwrap().unwrap();
        assert_eq!((f.status, f.len), (200, buf.len()));
        assert!(f.body_eq(&buf, b"OK"));
        assert_eq!(
            frame(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"),
            Err(FrameError::SwitchingProtocols)
        );
    }

    #[test]
    fn chunked_bodies_with_extensions_several_chunks_and_trailers() {
        let buf = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n\
                    5;name=value\r\nHello\r\n8\r\n, World!\r\n0\r\nX-Checksum: 1\r\nX-Other: 2\r\n\r\nHTTP/1.1";
        let end = buf.len() - b"HTTP/1.1".len();
        for cut in 0..end {
            assert_eq!(frame(&buf[..cut]).unwrap(), None, "cut at {cut}");
        }
        let f = frame(buf).unwrap().unwrap();
        assert_eq!(f.len, end);
        assert!(f.body_eq(buf, b"Hello, World!"));
        assert!(
            !f.body_eq(buf, b"Hello, World") && !f.body_eq(buf, b"Hello, World!!") && !f.body_eq(buf, b"Hellx, World!")
        );
        assert_eq!(&*f.body(buf), b"Hello, World!");
        let one = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nd\r\nHello, World!\r\n0\r\n\r\n";
        assert!(frame(one).unwrap().unwrap().body_eq(one, b"Hello, World!"));
        let empty = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        assert!(frame(empty).unwrap().unwrap().body_eq(empty, b""));
        let big = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n2\r\nab\r\n0\r\n\r\n";
        assert!(frame(big).unwrap().unwrap().body_eq(big, b"ab"), "chunked overrides Content-Length");
        assert_eq!(frame(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), Err(FrameError::BadChunk));
        assert_eq!(
            frame(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX0\r\n\r\n"),
            Err(FrameError::BadChunk)
        );
    }

    #[test]
    fn a_body_without_length_ends_when_the_server_closes() {
        let buf = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nHello, World!";
        assert_eq!(frame_response(buf, false, false).unwrap(), None, "more may come until the close");
        let f = frame_response(buf, false, true).unwrap().unwrap();
        assert!(f.close && f.body_eq(buf, b"Hello, World!") && f.len == buf.len());
        let gzip_only = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz";
        let f = frame_response(gzip_only, false, true).unwrap().unwrap();
        assert!(f.close && f.body_eq(gzip_only, b"xyz"), "a final coding other than chunked reads to the close");
    }

    #[test]
    fn responses_without_a_body() {
        let head = b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n";
        let f = frame_response(head, true, false).unwrap().unwrap();
        assert_eq!((f.len, f.body_eq(head, b"")), (head.len(), true), "HEAD: Content-Length describes GET's body");
        for status in ["204 No Content", "304 Not Modified"] {
            let buf = format!("HTTP/1.1 {status}\r\nContent-Length: 13\r\n\r\n");
            let f = frame(buf.as_bytes()).unwrap().unwrap();
            assert_eq!(f.len, buf.len(), "{status}");
        }
    }

    #[test]
    fn lengths_close_and_errors_by_kind() {
        let f = frame(b"HTTP/1.1 500 E\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap();
        assert_eq!((f.status, f.close), (500, true));
        let f = frame(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap();
        assert!(f.close, "HTTP/1.0 closes unless keep-alive");
        let f = frame(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap();
        assert!(!f.close);
        let f = frame(b"HTTP/1.1 200 OK\r\nConnection: upgrade, close\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap();
        assert!(f.close, "close among other tokens");
        let same = b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nOK";
        assert!(frame(same).unwrap().unwrap().body_eq(same, b"OK"));
        assert_eq!(
            frame(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
            Err(FrameError::ConflictingLengths)
        );
        assert_eq!(frame(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), Err(FrameError::BadLength));
        assert!(matches!(frame(b"garbage\r\n\r\n"), Err(FrameError::Malformed(_))));
    }

    #[test]
    fn a_head_with_many_headers_is_framed() {
        let mut buf = b"HTTP/1.1 200 OK\r\n".to_vec();
        for i in 0..600 {
            buf.extend_from_slice(format!("Set-Cookie: c{i}=v\r\n").as_bytes());
        }
        buf.extend_from_slice(b"Content-Length: 2\r\n\r\nOK");
        let f = frame(&buf).unwrap().unwrap();
        assert!(f.body_eq(&buf, b"OK") && f.len == buf.len());
    }

    #[test]
    fn a_head_of_exactly_max_headers_is_framed_and_one_more_is_refused() {
        let head = |headers: usize| {
            let mut buf = b"HTTP/1.1 200 OK\r\n".to_vec();
            buf.extend(std::iter::repeat_n(&b"a: b\r\n"[..], headers - 1).flatten());
            buf.extend_from_slice(b"Content-Length: 2\r\n\r\nOK");
            buf
        };
        let at_max = head(MAX_HEADERS);
        assert!(frame(&at_max).unwrap().unwrap().body_eq(&at_max, b"OK"));
        assert!(matches!(frame(&head(MAX_HEADERS + 1)), Err(FrameError::Malformed(httparse::Error::TooManyHeaders))));
    }

    #[test]
    fn connection_close_wins_wherever_it_stands_and_http10_closes_unless_kept_alive() {
        let close = |head: &[u8]| frame(head).unwrap().unwrap().close;
        assert!(close(b"HTTP/1.1 200 OK\r\nConnection: close, keep-alive\r\nContent-Length: 0\r\n\r\n"));
        assert!(close(b"HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 0\r\n\r\n"));
        assert!(!close(b"HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"));
        assert!(close(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"));
        assert!(!close(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"));
        assert!(close(b"HTTP/1.0 200 OK\r\nConnection: close, keep-alive\r\nContent-Length: 0\r\n\r\n"));
    }

    #[test]
    fn request_bytes_are_minimal_http11() {
        assert_eq!(get_request("127.0.0.1:80", "/plaintext"), b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n");
    }
}
