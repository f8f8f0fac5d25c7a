//! HTTP/2 frames as the load writes and reads them (RFC 9113 §4.1, §6),
//! and a request encoded once per route: its header block as HPACK
//! literals without Huffman coding and without indexing (RFC 7541 §6.2.2),
//! so its bytes are fixed and only the stream id changes from one request
//! to the next.

use super::super::Request;

/// A frame's fixed head: length (24 bits), type, flags, stream (31 bits).
pub(super) const HEAD: usize = 9;

pub(super) const DATA: u8 = 0x0;
pub(super) const HEADERS: u8 = 0x1;
pub(super) const RST_STREAM: u8 = 0x3;
pub(super) const SETTINGS: u8 = 0x4;
pub(super) const PUSH_PROMISE: u8 = 0x5;
pub(super) const PING: u8 = 0x6;
pub(super) const GOAWAY: u8 = 0x7;
pub(super) const WINDOW_UPDATE: u8 = 0x8;
pub(super) const CONTINUATION: u8 = 0x9;

/// `SETTINGS` and `PING`: an acknowledgement.
pub(super) const ACK: u8 = 0x1;
/// `DATA` and `HEADERS`: the sender's last frame on the stream.
pub(super) const END_STREAM: u8 = 0x1;
/// `HEADERS` and `CONTINUATION`: the header block is complete.
pub(super) const END_HEADERS: u8 = 0x4;
/// `DATA` and `HEADERS`: a pad length byte first, padding last.
pub(super) const PADDED: u8 = 0x8;
/// `HEADERS`: a stream dependency and weight (5 bytes) before the block.
pub(super) const PRIORITY: u8 = 0x20;

/// The largest frame payload a peer may send before `SETTINGS` say more
/// (§4.2), and the largest this client accepts (it never says more).
pub(super) const DEFAULT_MAX_FRAME: usize = 16_384;
/// A flow-control window before any `SETTINGS` or `WINDOW_UPDATE` (§6.9.2).
pub(super) const DEFAULT_WINDOW: i64 = 65_535;
/// The largest window and stream id (31 bits).
pub(super) const MAX_31: u32 = 0x7fff_ffff;

/// `SETTINGS_ENABLE_PUSH`: this client takes no pushed streams.
const ENABLE_PUSH: u16 = 0x2;

pub(super) fn head(length: u32, kind: u8, flags: u8, stream: u32) -> [u8; HEAD] {
    let [_, l0, l1, l2] = length.to_be_bytes();
    let [s0, s1, s2, s3] = stream.to_be_bytes();
    [l0, l1, l2, kind, flags, s0, s1, s2, s3]
}

/// A frame head, read.
#[derive(Debug, Clone, Copy)]
pub(super) struct Head {
    pub(super) length: usize,
    pub(super) kind: u8,
    pub(super) flags: u8,
    pub(super) stream: u32,
}

/// The head at the start of `b` (at least [`HEAD`] bytes).
pub(super) fn read_head(b: &[u8]) -> Head {
    Head {
        length: u32::from_be_bytes([0, b[0], b[1], b[2]]) as usize,
        kind: b[3],
        flags: b[4],
        stream: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & MAX_31,
    }
}

/// A 31-bit value at the start of `b` (a window increment, a stream id).
pub(super) fn read_31(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]]) & MAX_31
}

/// A 32-bit value at the start of `b` (an error code).
pub(super) fn read_32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// `SETTINGS_INITIAL_WINDOW_SIZE`: each stream's receive window.
const INITIAL_WINDOW_SIZE: u16 = 0x4;

/// Each stream's receive window this client grants (its `SETTINGS`): 1 MiB,
/// so that a large body comes without waiting for the client's window
/// (the default 65,535 bytes would stall every stream of a body larger
/// than it for a round trip per half window).
pub(super) const STREAM_WINDOW: u32 = 1 << 20;
/// The connection's receive window this client grants (a `WINDOW_UPDATE`
/// right after its `SETTINGS`): 16 MiB, sixteen streams' windows at once.
pub(super) const CONNECTION_WINDOW: u32 = 1 << 24;

/// The engine's connection preface: the fixed 24 bytes, then `SETTINGS`
/// with push disabled and each stream's window [`STREAM_WINDOW`] (every
/// other value the protocol's default), then a `WINDOW_UPDATE` that opens
/// the connection's window to [`CONNECTION_WINDOW`].
pub(super) fn load_preface(out: &mut Vec<u8>) {
    out.extend_from_slice(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    out.extend_from_slice(&head(12, SETTINGS, 0, 0));
    for (id, value) in [(ENABLE_PUSH, 0), (INITIAL_WINDOW_SIZE, STREAM_WINDOW)] {
        out.extend_from_slice(&id.to_be_bytes());
        out.extend_from_slice(&value.to_be_bytes());
    }
    window_update(out, 0, CONNECTION_WINDOW - u32::try_from(DEFAULT_WINDOW).unwrap_or(0));
}

/// `RST_STREAM`'s `STREAM_CLOSED`: a frame came on a stream already closed (§5.1, §6.1).
pub(super) const STREAM_CLOSED: u32 = 0x5;
/// `RST_STREAM`'s `CANCEL`: the client no longer needs the stream (§7).
pub(super) const CANCEL: u32 = 0x8;

/// `RST_STREAM` with `code` on `stream`.
pub(super) fn reset(out: &mut Vec<u8>, stream: u32, code: u32) {
    out.extend_from_slice(&head(4, RST_STREAM, 0, stream));
    out.extend_from_slice(&code.to_be_bytes());
}

pub(super) fn window_update(out: &mut Vec<u8>, stream: u32, increment: u32) {
    out.extend_from_slice(&head(4, WINDOW_UPDATE, 0, stream));
    out.extend_from_slice(&increment.to_be_bytes());
}

/// The frames of a request on stream 0 (the id written in each frame's head
/// when it goes out): `HEADERS` (with `CONTINUATION`s when the block exceeds
/// a frame), then the body's bytes unframed (the session frames them as
/// `DATA` within the windows). Without a body, `HEADERS` ends the stream.
pub(crate) fn request(scheme: &str, host: &str, path: &str, request: &Request) -> Vec<u8> {
    let mut block = Vec::with_capacity(64 + path.len() + host.len());
    match request.method() {
        "GET" => block.push(0x82),
        "POST" => block.push(0x83),
        method => literal_indexed_name(&mut block, 2, method.as_bytes()),
    }
    block.push(if scheme == "https" { 0x87 } else { 0x86 });
    literal_indexed_name(&mut block, 1, request.host().unwrap_or(host).as_bytes());
    if path == "/" {
        block.push(0x84);
    } else {
        literal_indexed_name(&mut block, 4, path.as_bytes());
    }
    for (name, value) in request.headers() {
        // Field names are lowercase in HTTP/2 (RFC 9113 §8.2.1).
        block.push(0x00);
        string(&mut block, name.to_ascii_lowercase().as_bytes());
        string(&mut block, value.as_bytes());
    }
    if let Some(length) = request.content_length() {
        literal_indexed_name(&mut block, 28, length.to_string().as_bytes());
    }
    let body = request.body().unwrap_or_default();
    let end_stream = if body.is_empty() { END_STREAM } else { 0 };
    let mut out = Vec::with_capacity(block.len() + 2 * HEAD + body.len());
    let mut chunks = block.chunks(DEFAULT_MAX_FRAME).peekable();
    let mut kind = HEADERS;
    while let Some(chunk) = chunks.next() {
        let last = if chunks.peek().is_none() { END_HEADERS } else { 0 };
        let flags = last | if kind == HEADERS { end_stream } else { 0 };
        out.extend_from_slice(&head(chunk.len() as u32, kind, flags, 0));
        out.extend_from_slice(chunk);
        kind = CONTINUATION;
    }
    out.extend_from_slice(body);
    out
}

/// Where a request's header frames end in its bytes from [`request`].
pub(super) fn headers_len(request: &[u8]) -> usize {
    let mut at = 0;
    while at + HEAD <= request.len() {
        let h = read_head(&request[at..]);
        at += HEAD + h.length;
        if h.flags & END_HEADERS != 0 {
            break;
        }
    }
    at
}

/// A literal field without indexing whose name is the static table's entry
/// `index` (RFC 7541 §6.2.2: a 4-bit prefix).
fn literal_indexed_name(block: &mut Vec<u8>, index: usize, value: &[u8]) {
    integer(block, 0x00, 4, index);
    string(block, value);
}

/// A string literal without Huffman coding (RFC 7541 §5.2).
fn string(block: &mut Vec<u8>, value: &[u8]) {
    integer(block, 0x00, 7, value.len());
    block.extend_from_slice(value);
}

/// An integer with an `n`-bit prefix after the bits `first` (RFC 7541 §5.1).
fn integer(block: &mut Vec<u8>, first: u8, n: u32, value: usize) {
    let max = (1usize << n) - 1;
    if value < max {
        block.push(first | value as u8);
        return;
    }
    block.push(first | max as u8);
    let mut rest = value - max;
    while rest >= 128 {
        block.push((rest % 128) as u8 | 0x80);
        rest /= 128;
    }
    block.push(rest as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_is_one_headers_frame_that_ends_the_stream_and_decodes_back() {
        let bytes = request("http", "127.0.0.1:8080", "/plaintext", &Request::get());
        let h = read_head(&bytes);
        assert_eq!((h.kind, h.flags, h.stream, h.length + HEAD), (HEADERS, END_HEADERS | END_STREAM, 0, bytes.len()));
        assert_eq!(headers_len(&bytes), bytes.len());
        let mut decoded = Vec::new();
        loona_hpack::Decoder::new()
            .decode_with_cb(&bytes[HEAD..], |n, v| decoded.push((n.into_owned(), v.into_owned())))
            .unwrap();
        let pairs: Vec<(&[u8], &[u8])> = decoded.iter().map(|(n, v)| (n.as_slice(), v.as_slice())).collect();
        assert_eq!(
            pairs,
            [
                (&b":method"[..], &b"GET"[..]),
                (b":scheme", b"http"),
                (b":authority", b"127.0.0.1:8080"),
                (b":path", b"/plaintext")
            ]
        );
    }

    #[test]
    fn a_post_with_headers_and_a_body_leaves_the_body_after_its_headers() {
        let headers = ["X-Trace: 1".to_owned(), "Host: example.test".to_owned()];
        let r = Request::new("PUT", &headers, Some(b"{\"a\":1}".to_vec())).unwrap();
        let bytes = request("https", "127.0.0.1:1", "/api/devices", &r);
        let end = headers_len(&bytes);
        assert_eq!(&bytes[end..], b"{\"a\":1}");
        assert_eq!(read_head(&bytes).flags, END_HEADERS, "the body ends the stream, not HEADERS");
        let mut decoded = Vec::new();
        loona_hpack::Decoder::new()
            .decode_with_cb(&bytes[HEAD..end], |n, v| {
                decoded.push(format!("{}: {}", String::from_utf8_lossy(&n), String::from_utf8_lossy(&v)))
            })
            .unwrap();
        assert_eq!(
            decoded,
            [
                ":method: PUT",
                ":scheme: https",
                ":authority: example.test",
                ":path: /api/devices",
                "x-trace: 1",
                "content-length: 7"
            ]
        );
    }

    #[test]
    fn integers_take_their_prefix_then_seven_bits_a_byte() {
        let mut b = Vec::new();
        integer(&mut b, 0, 5, 1337);
        assert_eq!(b, [31, 154, 10], "RFC 7541 C.1.2");
        b.clear();
        integer(&mut b, 0, 4, 28);
        assert_eq!(b, [0x0f, 0x0d]);
    }
}
