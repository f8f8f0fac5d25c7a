//! The HTTP/1.1 wire format the load loop needs, and nothing more: one
//! pre-built request, and a response framer over `httparse` that finds the
//! status, the body by `Content-Length`, and whether the server will close.

use std::ops::Range;

use thiserror::Error;

/// Most response headers a response may carry before it is a protocol error.
const MAX_HEADERS: usize = 32;

/// Builds the bytes of `GET path HTTP/1.1` with a `Host` header (keep-alive
/// is HTTP/1.1's default). Sent as is for every request.
pub fn get_request(host: &str, path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n").into_bytes()
}

/// One response framed in a read buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed {
    /// Bytes the whole response occupies at the start of the buffer.
    pub len: usize,
    /// Status code.
    pub status: u16,
    /// Where the body lies in the buffer.
    pub body: Range<usize>,
    /// The server said `Connection: close`: reconnect after this response.
    pub close: bool,
}

/// A response the framer cannot accept.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    /// Not valid HTTP/1.x (as `httparse` judged it).
    #[error("malformed response: {0}")]
    Malformed(httparse::Error),
    /// Neither `Content-Length` nor a body-less status; chunked bodies and
    /// bodies delimited by closing are not supported by the load loop.
    #[error("response without Content-Length")]
    NoLength,
    /// A `Content-Length` that is not a decimal number.
    #[error("invalid Content-Length")]
    BadLength,
}

/// Frames the response at the start of `buf`.
///
/// Returns `Ok(None)` when more bytes are needed, `Ok(Some(framed))` once the
/// head and the whole body are in `buf` (bytes after `framed.len` belong to
/// the next response).
///
/// # Errors
/// [`FrameError`] when the bytes cannot be a response the loop can frame.
pub fn frame_response(buf: &[u8]) -> Result<Option<Framed>, FrameError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(FrameError::Malformed(e)),
    };
    let status = response.code.unwrap_or(0);
    let mut content_length = None;
    let mut close = response.version == Some(0);
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let text = std::str::from_utf8(h.value).map_err(|_| FrameError::BadLength)?;
            content_length = Some(text.trim().parse::<usize>().map_err(|_| FrameError::BadLength)?);
        } else if h.name.eq_ignore_ascii_case("connection") {
            if h.value.eq_ignore_ascii_case(b"close") {
                close = true;
            } else if h.value.eq_ignore_ascii_case(b"keep-alive") {
                close = false;
            }
        }
    }
    let body_len = match content_length {
        Some(n) => n,
        None if status == 204 || status == 304 || (100..200).contains(&status) => 0,
        None => return Err(FrameError::NoLength),
    };
    let len = head_len + body_len;
    if buf.len() < len {
        return Ok(None);
    }
    Ok(Some(Framed { len, status, body: head_len..len, close }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nOK";

    #[test]
    fn frames_a_complete_response_and_leaves_the_rest() {
        let mut buf = OK.to_vec();
        buf.extend_from_slice(b"HTTP/1.1 404");
        let f = frame_response(&buf).unwrap().unwrap();
        assert_eq!(f.status, 200);
        assert_eq!(&buf[f.body.clone()], b"OK");
        assert_eq!(f.len, OK.len());
        assert!(!f.close);
        assert_eq!(frame_response(&buf[f.len..]).unwrap(), None);
    }

    #[test]
    fn waits_for_every_byte_of_head_and_body() {
        for cut in 0..OK.len() {
            assert_eq!(frame_response(&OK[..cut]).unwrap(), None, "cut at {cut}");
        }
    }

    #[test]
    fn close_and_errors_by_kind() {
        let f = frame_response(b"HTTP/1.1 500 E\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap();
        assert_eq!((f.status, f.close, f.body.len()), (500, true, 0));
        let f = frame_response(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n").unwrap().unwrap();
        assert!(f.close, "HTTP/1.0 closes unless keep-alive");
        assert_eq!(frame_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), Err(FrameError::NoLength));
        assert_eq!(frame_response(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), Err(FrameError::BadLength));
        assert!(matches!(frame_response(b"garbage\r\n\r\n"), Err(FrameError::Malformed(_))));
    }

    #[test]
    fn request_bytes_are_minimal_http11() {
        assert_eq!(get_request("127.0.0.1:80", "/plaintext"), b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n");
    }
}
