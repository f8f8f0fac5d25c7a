//! The session against frames written by hand: what it writes, what it
//! reports, and what it refuses.

use super::frame::{self, HEAD};
use super::{Event, Routes, Session, SessionError};
use crate::engine::Request;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = frame::head(payload.len() as u32, kind, flags, stream).to_vec();
    f.extend_from_slice(payload);
    f
}

fn settings(parameters: &[(u16, u32)]) -> Vec<u8> {
    let payload: Vec<u8> =
        parameters.iter().flat_map(|(id, v)| [&id.to_be_bytes()[..], &v.to_be_bytes()[..]].concat()).collect();
    frame(0x4, 0, 0, &payload)
}

/// The frames it has to write, as (type, flags, stream, payload), the
/// preface skipped; all marked written.
fn written(s: &mut Session) -> Vec<(u8, u8, u32, Vec<u8>)> {
    let mut bytes = s.unwritten().to_vec();
    s.wrote(bytes.len());
    if bytes.starts_with(b"PRI * HTTP/2.0") {
        bytes.drain(..24);
    }
    let mut out = Vec::new();
    while bytes.len() >= HEAD {
        let h = frame::read_head(&bytes);
        out.push((h.kind, h.flags, h.stream, bytes[HEAD..HEAD + h.length].to_vec()));
        bytes.drain(..HEAD + h.length);
    }
    out
}

fn get() -> Vec<Vec<u8>> {
    vec![frame::request("http", "127.0.0.1:1", "/x", &Request::get())]
}

/// Feeds `bytes` whole; the events.
fn feed(s: &mut Session, bytes: &[u8], routes: Routes<'_>) -> Result<Vec<Event>, SessionError> {
    let mut events = Vec::new();
    let n = s.receive(bytes, routes, &mut events)?;
    assert_eq!(n, bytes.len(), "every frame whole");
    Ok(events)
}

/// `s` past the server's empty `SETTINGS`, then `test` on it with one
/// route: `GET /x`, answered 200 with `body`.
fn on_route(mut s: Session, body: &[u8], test: impl FnOnce(&mut Session, Routes<'_>)) {
    let requests = get();
    let expected = [(200, body, false)];
    let routes = Routes { requests: &requests, expected: &expected };
    feed(&mut s, &settings(&[]), routes).unwrap();
    test(&mut s, routes);
}

#[test]
fn streams_open_within_the_grant_and_responses_complete_out_of_order() {
    let requests = get();
    let expected = [(200, &b"abc"[..], false)];
    let routes = Routes { requests: &requests, expected: &expected };
    let mut s = Session::new();
    let preface = written(&mut s);
    assert_eq!(preface.len(), 2, "SETTINGS and the connection's WINDOW_UPDATE (the preface test says what)");
    assert!(!s.can_open(), "not before the server's SETTINGS");
    assert_eq!(feed(&mut s, &settings(&[(0x3, 2)]), routes), Ok(vec![Event::Ready]));
    assert_eq!(written(&mut s), [(0x4, 0x1, 0, vec![])], "acknowledged");
    assert_eq!((s.open(0, routes), s.open(0, routes)), (1, 3));
    assert!(!s.can_open(), "two granted, two open");
    let headers = written(&mut s);
    assert_eq!(headers.iter().map(|f| (f.0, f.1, f.2)).collect::<Vec<_>>(), [(0x1, 0x5, 1), (0x1, 0x5, 3)]);
    let mut bytes = frame(0x1, 0x4, 3, &[0x88]);
    bytes.extend(frame(0x0, 0x0, 3, b"ab"));
    bytes.extend(frame(0x0, 0x1, 3, b"c"));
    bytes.extend(frame(0x1, 0x4, 1, &[0x88]));
    bytes.extend(frame(0x0, 0x1, 1, b"abd"));
    let events = feed(&mut s, &bytes, routes).unwrap();
    assert_eq!(
        events,
        [
            Event::Response { stream: 3, status: 200, body_matches: true },
            Event::Response { stream: 1, status: 200, body_matches: false },
        ]
    );
    assert!(s.can_open() && s.open_streams() == 0);
    // Cut anywhere, a frame waits for its end.
    s.open(0, routes);
    let whole = [frame(0x1, 0x5, 5, &[0x88])].concat();
    let mut events = Vec::new();
    assert_eq!(s.receive(&whole[..whole.len() - 1], routes, &mut events), Ok(0));
    assert_eq!(s.receive(&whole, routes, &mut events), Ok(whole.len()));
    assert_eq!(events, [Event::Response { stream: 5, status: 200, body_matches: false }], "no body: not abc");
}

#[test]
fn huffman_the_dynamic_table_continuation_and_interim_responses_are_decoded() {
    let requests = [get(), get()].concat();
    let expected = [(302, &b"abc"[..], false), (307, &b""[..], false)];
    let routes = Routes { requests: &requests, expected: &expected };
    let mut s = Session::new();
    feed(&mut s, &settings(&[]), routes).unwrap();
    assert_eq!((s.open(0, routes), s.open(1, routes)), (1, 3));
    // RFC 7541 C.6.1 (Huffman, entries added to the table), split over a
    // CONTINUATION; then C.6.2, which refers to those entries.
    let c61: Vec<u8> = [
        0x48, 0x82, 0x64, 0x02, 0x58, 0x85, 0xae, 0xc3, 0x77, 0x1a, 0x4b, 0x61, 0x96, 0xd0, 0x7a, 0xbe, 0x94, 0x10,
        0x54, 0xd4, 0x44, 0xa8, 0x20, 0x05, 0x95, 0x04, 0x0b, 0x81, 0x66, 0xe0, 0x82, 0xa6, 0x2d, 0x1b, 0xff, 0x6e,
        0x91, 0x9d, 0x29, 0xad, 0x17, 0x18, 0x63, 0xc7, 0x8f, 0x0b, 0x97, 0xc8, 0xe9, 0xae, 0x82, 0xae, 0x43, 0xd3,
    ]
    .to_vec();
    let c62 = [0x48, 0x83, 0x64, 0x0e, 0xff, 0xc1, 0xc0, 0xbf];
    let mut bytes = frame(0x1, 0x4, 1, &[0x08, 0x03, b'1', b'0', b'3']); // 103 Early Hints first
    bytes.extend(frame(0x1, 0x0, 1, &c61[..10]));
    bytes.extend(frame(0x9, 0x4, 1, &c61[10..]));
    bytes.extend(frame(0x0, 0x1, 1, b"abc"));
    bytes.extend(frame(0x1, 0x5, 3, &c62));
    assert_eq!(
        feed(&mut s, &bytes, routes).unwrap(),
        [
            Event::Response { stream: 1, status: 302, body_matches: true },
            Event::Response { stream: 3, status: 307, body_matches: true },
        ]
    );
    // A frame between HEADERS and its CONTINUATION is refused.
    s.open(0, routes);
    let broken = [frame(0x1, 0x0, 5, &c62[..2]), frame(0x6, 0x0, 0, &[0; 8])].concat();
    assert_eq!(feed(&mut s, &broken, routes), Err(SessionError::Protocol(0x6)));
}

#[test]
fn ping_is_answered_and_windows_given_back_as_data_is_consumed() {
    let requests = get();
    let body = vec![b'x'; 600_000];
    let expected = [(200, &body[..], false)];
    let routes = Routes { requests: &requests, expected: &expected };
    let mut s = Session::new();
    feed(&mut s, &settings(&[]), routes).unwrap();
    s.open(0, routes);
    written(&mut s);
    feed(&mut s, &frame(0x6, 0, 0, b"12345678"), routes).unwrap();
    assert_eq!(written(&mut s), [(0x6, 0x1, 0, b"12345678".to_vec())]);
    let half = frame::STREAM_WINDOW as usize / 2;
    let mut bytes = frame(0x1, 0x4, 1, &[0x88]);
    for chunk in body[..half].chunks(16_384) {
        bytes.extend(frame(0x0, 0x0, 1, chunk));
    }
    assert!(feed(&mut s, &bytes, routes).unwrap().is_empty());
    assert_eq!(
        written(&mut s),
        [(0x8, 0, 1, (half as u32).to_be_bytes().to_vec())],
        "the stream's half window given back; the connection's half (8 MiB) not yet due"
    );
    let mut rest = Vec::new();
    let chunks: Vec<&[u8]> = body[half..].chunks(16_384).collect();
    for (k, chunk) in chunks.iter().enumerate() {
        rest.extend(frame(0x0, if k + 1 == chunks.len() { 0x1 } else { 0 }, 1, chunk));
    }
    let events = feed(&mut s, &rest, routes).unwrap();
    assert_eq!(events, [Event::Response { stream: 1, status: 200, body_matches: true }]);
    assert!(written(&mut s).is_empty(), "an ended stream's window is not given back; the connection's not yet due");
}

#[test]
fn the_preface_grants_a_stream_window_of_1_mib_and_a_connection_window_of_16_mib() {
    let mut s = Session::new();
    let frames = written(&mut s);
    let settings: Vec<u8> = [(0x2u16, 0u32), (0x4, 1 << 20)]
        .iter()
        .flat_map(|(id, v)| [&id.to_be_bytes()[..], &v.to_be_bytes()[..]].concat())
        .collect();
    let increment = ((1u32 << 24) - 65_535).to_be_bytes().to_vec();
    assert_eq!(frames, [(0x4, 0, 0, settings), (0x8, 0, 0, increment)], "push off, then the windows");
}

#[test]
fn a_body_goes_out_within_the_servers_windows_and_waits_for_its_updates() {
    let request = Request::new("POST", &[], Some(b"hello world".to_vec())).unwrap();
    let requests = vec![frame::request("http", "127.0.0.1:1", "/x", &request)];
    let expected = [(200, &b""[..], false)];
    let routes = Routes { requests: &requests, expected: &expected };
    let mut s = Session::new();
    feed(&mut s, &settings(&[(0x4, 4)]), routes).unwrap();
    written(&mut s);
    let id = s.open(0, routes);
    let frames = written(&mut s);
    assert_eq!(frames.iter().map(|f| (f.0, f.1)).collect::<Vec<_>>(), [(0x1, 0x4), (0x0, 0x0)]);
    assert_eq!(frames[1].3, b"hell");
    assert!(s.is_blocked(id));
    feed(&mut s, &frame(0x8, 0, id, &100u32.to_be_bytes()), routes).unwrap();
    assert_eq!(written(&mut s), [(0x0, 0x1, id, b"o world".to_vec())]);
    assert!(!s.is_blocked(id));
}

#[test]
fn a_connection_whose_stream_ids_are_used_up_opens_no_more() {
    on_route(Session::from_stream_id(0x7fff_fffd), b"", |s, routes| {
        assert!(!s.is_spent());
        assert_eq!(s.open(0, routes), 0x7fff_fffd);
        assert_eq!(s.open(0, routes), 0x7fff_ffff, "the last odd id");
        assert!(s.is_spent() && !s.can_open(), "2^31 + 1 is no stream id");
    });
}

#[test]
fn resets_goaway_and_what_cannot_go_on_are_reported_by_kind() {
    on_route(Session::new(), b"", |s, routes| {
        let (a, b) = (s.open(0, routes), s.open(0, routes));
        let bytes = [frame(0x3, 0, a, &7u32.to_be_bytes()), frame(0x7, 0, 0, &[0, 0, 0, 3, 0, 0, 0, 0])].concat();
        assert_eq!(
            feed(s, &bytes, routes).unwrap(),
            [Event::Reset { stream: a, code: 7 }, Event::GoAway { last_stream: 3, code: 0, first: true }]
        );
        assert_eq!((s.goaway(), s.can_open(), s.open_streams(), b), (Some(3), false, 1, 3));
        let mut events = Vec::new();
        assert_eq!(
            Session::new().receive(b"HTTP/1.1 400 Bad Request\r\n", routes, &mut events),
            Err(SessionError::Http1)
        );
        assert_eq!(
            Session::new().receive(&frame(0x6, 0, 0, &[0; 8]), routes, &mut events),
            Err(SessionError::NotSettings(6))
        );
        let huge = frame::head(16_385, 0x0, 0, 1);
        assert_eq!(
            s.receive(&huge, routes, &mut events),
            Err(SessionError::FrameSize { kind: 0, length: 16_385 }),
            "larger than this client accepts"
        );
        assert_eq!(s.receive(&frame(0x5, 0x4, 1, &[0, 0, 0, 2]), routes, &mut events), Err(SessionError::Protocol(5)));
    });
}

#[test]
fn padding_counts_against_the_stream_window_and_is_given_back_with_the_data() {
    // A 300,000-byte body in DATA frames of 512 bytes: 1 pad-length byte, 256 data, 255 padding
    // (twice the body on the wire, past the half window at which the client gives it back).
    let body = vec![b'x'; 300_000];
    let requests = get();
    let expected = [(200, body.as_slice(), false)];
    let routes = Routes { requests: &requests, expected: &expected };
    let mut s = Session::new();
    feed(&mut s, &settings(&[]), routes).unwrap();
    let id = s.open(0, routes);
    written(&mut s);
    feed(&mut s, &frame(0x1, 0x4, id, &[0x88]), routes).unwrap();
    let (mut sent, mut given_back) = (0usize, 0u64);
    let mut window = i64::from(frame::STREAM_WINDOW);
    while sent < body.len() {
        let n = 256.min(body.len() - sent);
        let mut payload = vec![255u8];
        payload.extend_from_slice(&body[sent..sent + n]);
        payload.extend_from_slice(&[0; 255]);
        sent += n;
        let end = if sent == body.len() { 0x1 } else { 0 };
        // The server sends only within the stream's window, padding included.
        assert!(window >= payload.len() as i64, "stalled at {sent} of {} bytes: window {window}", body.len());
        window -= payload.len() as i64;
        let events = feed(&mut s, &frame(0x0, 0x8 | end, id, &payload), routes).unwrap();
        for (kind, _, stream, increment) in written(&mut s) {
            if kind == 0x8 && stream == id {
                let n = u32::from_be_bytes(increment.try_into().unwrap());
                window += i64::from(n);
                given_back += u64::from(n);
            }
        }
        if end != 0 {
            assert_eq!(events, [Event::Response { stream: id, status: 200, body_matches: true }]);
        }
    }
    assert!(given_back > body.len() as u64, "more than the data: the padding is given back too ({given_back} bytes)");
}

#[test]
fn a_frame_on_a_stream_already_ended_is_stray_and_reset_and_one_never_opened_ends_the_connection() {
    on_route(Session::collecting(), b"ok", |s, routes| {
        let id = s.open(0, routes);
        written(s);
        // The answer, then 5 more bytes on its stream in the same read.
        let bytes = [frame(0x1, 0x4, id, &[0x88]), frame(0x0, 0x1, id, b"ok"), frame(0x0, 0x1, id, b"extra")].concat();
        assert_eq!(
            feed(s, &bytes, routes).unwrap(),
            [Event::Response { stream: id, status: 200, body_matches: true }, Event::Stray { stream: id }]
        );
        assert_eq!(s.collected().unwrap().body, b"ok", "no byte of the stray frame in the body kept");
        assert_eq!(written(s), [(0x3, 0, id, 5u32.to_be_bytes().to_vec())], "RST_STREAM(STREAM_CLOSED)");
        // Trailers after the end are as stray.
        assert_eq!(feed(s, &frame(0x1, 0x5, id, &[0x88]), routes).unwrap(), [Event::Stray { stream: id }]);
        let mut events = Vec::new();
        assert_eq!(s.receive(&frame(0x0, 0x1, id + 2, b"x"), routes, &mut events), Err(SessionError::Protocol(0)));
        assert_eq!(
            Session::new().receive(&[settings(&[]), frame(0x0, 0, 2, b"x")].concat(), routes, &mut events),
            Err(SessionError::Protocol(0))
        );
    });
}

#[test]
fn a_graceful_shutdown_is_one_goaway_per_connection_in_two_frames() {
    on_route(Session::new(), b"", |s, routes| {
        let goaway = |last: u32, code: u32| frame(0x7, 0, 0, &[last.to_be_bytes(), code.to_be_bytes()].concat());
        let bytes = [goaway(0x7fff_ffff, 0), goaway(1, 11)].concat();
        assert_eq!(
            feed(s, &bytes, routes).unwrap(),
            [
                Event::GoAway { last_stream: 0x7fff_ffff, code: 0, first: true },
                Event::GoAway { last_stream: 1, code: 11, first: false }
            ]
        );
        assert_eq!(s.goaway(), Some(1), "the lower last stream stands");
    });
}

#[test]
fn a_large_header_block_over_continuation_is_read_and_an_endless_one_ends_at_the_bound() {
    on_route(Session::new(), b"", |s, routes| {
        // `:status 200` then a literal header of 300,000 bytes (not indexed, no Huffman), over 19 frames.
        let value = vec![b'v'; 300_000];
        let mut block = vec![0x88, 0x00, 0x01, b'x', 0x7f];
        let mut n = value.len() - 127;
        while n >= 128 {
            block.push((n % 128 + 128) as u8);
            n /= 128;
        }
        block.push(n as u8);
        block.extend_from_slice(&value);
        let id = s.open(0, routes);
        let chunks: Vec<&[u8]> = block.chunks(16_384).collect();
        let last = chunks.len() - 1;
        let mut bytes = frame(0x1, 0x1, id, chunks[0]);
        for (i, chunk) in chunks.iter().enumerate().skip(1) {
            bytes.extend(frame(0x9, if i == last { 0x4 } else { 0 }, id, chunk));
        }
        assert_eq!(feed(s, &bytes, routes).unwrap(), [Event::Response { stream: id, status: 200, body_matches: true }]);
        // HEADERS, then CONTINUATION without end: refused once the block passes 1 MiB, not buffered for ever.
        let id = s.open(0, routes);
        let mut events = Vec::new();
        s.receive(&frame(0x1, 0x1, id, &[0x88]), routes, &mut events).unwrap();
        let flood = frame(0x9, 0, id, &[0; 16_384]);
        let mut result = Ok(0);
        for _ in 0..100 {
            result = s.receive(&flood, routes, &mut events);
            if result.is_err() {
                break;
            }
        }
        assert_eq!(result, Err(SessionError::HeaderBlock(1 + 64 * 16_384)), "the 64th CONTINUATION passes 1 MiB");
    });
}

#[test]
fn a_stream_answered_before_its_body_was_sent_is_reset_and_one_cancelled_ignores_what_was_on_its_way() {
    // A POST of 100,000 bytes; the server grants a 16,384-byte window and answers 417 at once.
    let post = Request::new("POST", &[], Some(vec![b'b'; 100_000])).unwrap();
    let requests = vec![frame::request("http", "127.0.0.1:1", "/x", &post)];
    let expected = [(417, &b""[..], false)];
    let routes = Routes { requests: &requests, expected: &expected };
    let mut s = Session::new();
    feed(&mut s, &settings(&[(0x4, 16_384)]), routes).unwrap();
    let id = s.open(0, routes);
    assert!(s.is_blocked(id));
    written(&mut s);
    // `:status 417` is not in HPACK's static table: a literal without indexing.
    let status = [0x08, 0x03, b'4', b'1', b'7'];
    let events = feed(&mut s, &frame(0x1, 0x5, id, &status), routes).unwrap();
    assert_eq!(events, [Event::Response { stream: id, status: 417, body_matches: true }]);
    assert_eq!(written(&mut s), [(0x3, 0, id, 8u32.to_be_bytes().to_vec())], "RST_STREAM(CANCEL): the stream ends");
    // More window: nothing more of that body goes out.
    feed(&mut s, &frame(0x8, 0, 0, &100_000u32.to_be_bytes()), routes).unwrap();
    assert!(written(&mut s).iter().all(|f| f.0 != 0x0), "no DATA after the answer");
    // A stream timed out and cancelled: what the server had already sent on it is ignored.
    let id = s.open(0, routes);
    written(&mut s);
    s.cancel(id);
    assert_eq!(written(&mut s)[..1], [(0x3, 0, id, 8u32.to_be_bytes().to_vec())]);
    assert_eq!(feed(&mut s, &frame(0x1, 0x5, id, &status), routes).unwrap(), [], "in flight before our reset");
    assert!(s.can_open() && s.open_streams() == 0);
}
