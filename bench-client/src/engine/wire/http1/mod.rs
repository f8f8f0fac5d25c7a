//! The HTTP/1.1 wire format the load loop needs: one pre-built request, and
//! a response framer over `httparse` that reads responses by the grammar of
//! RFC 9112 (sections 4 to 7) and delimits them as its section 6 ("Message
//! Body Length") does, so that any valid HTTP/1.1 answer is counted and
//! anything else is refused by kind ([`FrameError`]):
//!
//! - interim `1xx` responses (any number of them, e.g. `103 Early Hints`)
//!   are skipped and belong to the final response that follows; `101
//!   Switching Protocols` ends HTTP and is refused;
//! - a response to `HEAD`, and `204` and `304`, have no body;
//! - `Transfer-Encoding` with `chunked` last: chunked (extensions, any number
//!   of chunks, hex digits of either case, trailers); any other
//!   `Transfer-Encoding`: the body runs to the end of the connection; with a
//!   `Content-Length` beside it, refused (section 6.1: a server must not send
//!   both; section 6.3: to be handled as an error);
//! - otherwise `Content-Length`, `1*DIGIT` (a list of one value repeated is
//!   read as that value, RFC 9110 section 8.6; differing values are
//!   refused), or, without it, a body delimited by the server closing;
//! - a header folded over several lines (obs-fold, section 5.2) is read with
//!   each fold as spaces, as a user agent must.
//! - bytes before the status line, even an empty line, are refused: every
//!   byte of a connection belongs to a response (a caller counts bytes that
//!   arrive with no request outstanding as belonging to none).
//!
//! A refusal names the part of the grammar, and quotes the line, that the
//! server's bytes broke (`refusal.rs`, off the per-response path).
//!
//! No size limit applies that a real response reaches: the head may carry
//! any number of headers (32 are parsed on the fast path, more on a slower
//! one), chunk sizes are 64-bit, and the caller's buffer grows as needed.

mod refusal;

use std::borrow::Cow;
use std::ops::Range;

use thiserror::Error;

use super::Request;

/// Headers parsed on the fast path; a head with more is parsed again with
/// room for more (up to [`MAX_HEADERS`]).
const FAST_HEADERS: usize = 32;
/// Most headers one response head may carry (far above what servers send;
/// a guard against a peer streaming headers forever).
const MAX_HEADERS: usize = 1 << 16;

/// `httparse` as RFC 9112 reads a response: obs-fold accepted (section 5.2),
/// everything else as `httparse` checks it by default.
fn parser() -> httparse::ParserConfig {
    let mut config = httparse::ParserConfig::default();
    config.allow_obsolete_multiline_headers_in_responses(true);
    config
}

/// Builds the bytes of `METHOD path HTTP/1.1`: `Host` first (the request's
/// own, else `host`), the added headers in order, a `Content-Length` when
/// the request has one, then the body (keep-alive is HTTP/1.1's default).
/// Sent as is for every request.
pub(super) fn request(host: &str, path: &str, request: &Request) -> Vec<u8> {
    let host = request.host().unwrap_or(host);
    let mut out = format!("{} {path} HTTP/1.1\r\nHost: {host}\r\n", request.method()).into_bytes();
    for (name, value) in request.headers() {
        out.extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }
    if let Some(length) = request.content_length() {
        out.extend_from_slice(format!("Content-Length: {length}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(request.body().unwrap_or_default());
    out
}

/// An answer with status 200, `headers` and `body` (`Content-Length` added).
pub fn ok_response(headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
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
pub fn request_heads_ended(buf: &[u8]) -> (usize, usize) {
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
    /// without keep-alive or with `Transfer-Encoding`, or a body delimited
    /// by closing).
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
    /// response, read off its head in `buf`, each obs-fold replaced by
    /// spaces (RFC 9112 section 5.2); `None` when it has none.
    pub fn header<'a>(&self, buf: &'a [u8], name: &str) -> Option<Cow<'a, [u8]>> {
        let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS.min(1024)];
        let mut response = httparse::Response::new(&mut headers);
        parser().parse_response(&mut response, &buf[self.head.clone()]).ok()?;
        let value = response.headers.iter().find(|h| h.name.eq_ignore_ascii_case(name))?.value;
        Some(if value.iter().any(|&b| b == b'\r' || b == b'\n') {
            Cow::Owned(value.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }).collect())
        } else {
            Cow::Borrowed(value)
        })
    }

    /// Every header field (name, value) of the final response, read off
    /// its head in `buf` (a folded value keeps its line breaks).
    pub fn fields<'a>(&self, buf: &'a [u8]) -> Vec<(&'a [u8], &'a [u8])> {
        let head = &buf[self.head.clone()];
        let mut fast = [httparse::EMPTY_HEADER; FAST_HEADERS];
        let mut response = httparse::Response::new(&mut fast);
        if parser().parse_response(&mut response, head).is_ok() {
            return response.headers.iter().map(|h| (h.name.as_bytes(), h.value)).collect();
        }
        let mut many = vec![httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut many);
        match parser().parse_response(&mut response, head) {
            Ok(_) => response.headers.iter().map(|h| (h.name.as_bytes(), h.value)).collect(),
            Err(_) => Vec::new(),
        }
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

/// A response the framer cannot accept, by the part of the grammar it
/// breaks. Each message names that part and its RFC section, and quotes the
/// offending line (up to 80 bytes) where there is one; the text is for
/// people, not a contract: match on the variant.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    /// A status line that is not `HTTP-version SP 3DIGIT SP [reason]`, or
    /// whose code is outside 100 to 599.
    #[error(
        "the status line {0:?} is out of the grammar (RFC 9112 section 4: HTTP/1.x, a code of 100 to 599 by \
         RFC 9110 section 15, a reason)"
    )]
    StatusLine(String),
    /// A header line that is not `field-name ":" OWS field-value OWS` (nor
    /// the continuation of a folded one).
    #[error("the header line {0:?} is out of the grammar (RFC 9112 section 5: field-name \":\" OWS field-value OWS)")]
    HeaderLine(String),
    /// A head out of the grammar where no one line can be named.
    #[error("the response head is out of the grammar (RFC 9112 section 2.1): {0}")]
    Head(httparse::Error),
    /// More header lines than the framer reads (65,536).
    #[error("more than {MAX_HEADERS} header lines in one response head")]
    TooManyHeaders,
    /// A `Content-Length` that is not `1*DIGIT` (or a list of one such value
    /// repeated), or a length beyond this machine's address space.
    #[error("the header Content-Length: {0:?} is not a length (RFC 9110 section 8.6: 1*DIGIT)")]
    BadLength(String),
    /// `Content-Length` values that differ (RFC 9112 section 6.3).
    #[error("the header Content-Length has differing values, {0:?} (RFC 9112 section 6.3)")]
    ConflictingLengths(String),
    /// `Content-Length` beside `Transfer-Encoding` (RFC 9112 sections 6.1
    /// and 6.3): two framings of one body.
    #[error(
        "the headers Content-Length and Transfer-Encoding are both present (RFC 9112 section 6.1: a server must not \
         send both; section 6.3: an error)"
    )]
    LengthAndTransferEncoding,
    /// A chunk-size line or chunk delimiter that is out of the grammar.
    #[error("the chunked body is out of the grammar at {0:?} (RFC 9112 section 7.1: chunk-size [chunk-ext] CRLF)")]
    BadChunk(String),
    /// A trailer line that is not a field line (RFC 9112 section 7.1.2).
    #[error("the trailer line {0:?} is out of the grammar (RFC 9112 section 7.1.2: field lines)")]
    BadTrailer(String),
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
        Err(FrameError::TooManyHeaders) => {}
        other => return other,
    }
    let mut room = FAST_HEADERS * 8;
    loop {
        let mut headers = vec![httparse::EMPTY_HEADER; room];
        match parse_head_with(buf, &mut headers) {
            Err(FrameError::TooManyHeaders) if room < MAX_HEADERS => {
                room = (room * 8).min(MAX_HEADERS);
            }
            other => return other,
        }
    }
}

fn parse_head_with<'b>(buf: &'b [u8], headers: &mut [httparse::Header<'b>]) -> Result<Option<Head>, FrameError> {
    let mut response = httparse::Response::new(headers);
    let len = match parser().parse_response(&mut response, buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(FrameError::TooManyHeaders),
        Err(e) => return Err(refusal::out_of_grammar(buf, e)),
    };
    // `httparse` skips empty lines before the status line and takes one
    // without the SP before an empty reason: RFC 9112 §4 has neither
    // (`HTTP/1.x SP 3DIGIT SP`, the SP at byte 12), nor RFC 9110 §15 codes
    // outside 100 to 599.
    let status = response.code.unwrap_or(0);
    if !buf.starts_with(b"HTTP/") || buf.get(12) != Some(&b' ') || !(100..=599).contains(&status) {
        return Err(refusal::status_line(buf));
    }
    // RFC 9112 §9.3: HTTP/1.1 persists unless "close" is said; HTTP/1.0
    // closes unless kept alive. "close" wins wherever it stands (§9.6).
    // Values are read with an obs-fold's CR and LF as the spaces they stand
    // for (§5.2): trimmed as OWS around list elements, not inside them.
    let (mut said_close, mut kept_alive) = (false, false);
    let mut content_length: Option<usize> = None;
    let mut transfer_encoding: Option<bool> = None;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = content_length_value(h.value)?;
            if let Some(m) = content_length.filter(|&m| m != n) {
                return Err(FrameError::ConflictingLengths(format!("{m}, {n}")));
            }
            content_length = Some(n);
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
        (Some(_), Some(_)) => return Err(FrameError::LengthAndTransferEncoding),
        (Some(true), None) => Length::Chunked,
        (Some(false), None) => Length::UntilClose,
        (None, Some(n)) => Length::Content(n),
        (None, None) => Length::UntilClose,
    };
    // An HTTP/1.0 message with Transfer-Encoding: its framing is not to be
    // trusted beyond it (RFC 9112 §6.1), so the connection ends after it.
    let http10 = response.version == Some(0);
    let close = said_close || (http10 && (!kept_alive || transfer_encoding.is_some()));
    Ok(Some(Head { len, status, close, length }))
}

/// The length one `Content-Length` field line says: `1*DIGIT`, or a list
/// of one such value repeated (RFC 9110 §8.6: a recipient may read it as
/// that value), each element trimmed of OWS.
fn content_length_value(value: &[u8]) -> Result<usize, FrameError> {
    let mut length = None;
    for element in value.split(|&b| b == b',') {
        let digits = element.trim_ascii();
        let n = (!digits.is_empty())
            .then(|| {
                digits.iter().try_fold(0usize, |n, &d| {
                    let digit = d.is_ascii_digit().then(|| usize::from(d - b'0'))?;
                    n.checked_mul(10)?.checked_add(digit)
                })
            })
            .flatten()
            .ok_or_else(|| FrameError::BadLength(refusal::quote(value)))?;
        if length.is_some_and(|m| m != n) {
            return Err(FrameError::ConflictingLengths(refusal::quote(value)));
        }
        length = Some(n);
    }
    length.ok_or_else(|| FrameError::BadLength(refusal::quote(value)))
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
pub fn frame_response(buf: &[u8], head_request: bool, at_eof: bool) -> Result<Option<Framed>, FrameError> {
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
            let end = body_start.checked_add(n).ok_or_else(|| FrameError::BadLength(n.to_string()))?;
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
        // chunk-size is 1*HEXDIG: `httparse` reads an empty one as 0.
        match buf.get(at) {
            None => return Ok(None),
            Some(b) if !b.is_ascii_hexdigit() => return Err(refusal::bad_chunk(&buf[at..])),
            Some(_) => {}
        }
        let (consumed, size) = match httparse::parse_chunk_size(&buf[at..]) {
            Ok(httparse::Status::Complete(found)) => found,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(refusal::bad_chunk(&buf[at..])),
        };
        let line = at;
        at += consumed;
        if size == 0 {
            break;
        }
        let size = usize::try_from(size).map_err(|_| refusal::bad_chunk(&buf[line..]))?;
        let data_end = at.checked_add(size).ok_or_else(|| refusal::bad_chunk(&buf[line..]))?;
        let Some(delimiter) = buf.get(data_end..data_end + 2) else { return Ok(None) };
        if delimiter != b"\r\n" {
            return Err(refusal::bad_chunk(&buf[data_end..]));
        }
        at = data_end + 2;
    }
    // Trailer field lines (a folded one continues on lines that start with
    // a space or tab), until an empty line.
    let mut first = true;
    loop {
        let rest = &buf[at..];
        if rest.len() < 2 {
            return Ok(None);
        }
        if rest.starts_with(b"\r\n") {
            return Ok(Some(at + 2));
        }
        let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else { return Ok(None) };
        let line = &rest[..line_end];
        if !refusal::is_field_line(line, !first) {
            return Err(FrameError::BadTrailer(refusal::quote(line)));
        }
        first = false;
        at += line_end + 2;
    }
}

#[cfg(test)]
mod tests;
