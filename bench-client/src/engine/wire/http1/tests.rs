//! The framer's tests: the cases of each rule, then the grammar's edges as a table.

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
    assert_eq!(frame(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"), Err(FrameError::SwitchingProtocols));
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
    assert_eq!(
        frame(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        Err(FrameError::BadChunk("zz".into()))
    );
    assert_eq!(
        frame(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX0\r\n\r\n"),
        Err(FrameError::BadChunk("XX0".into()))
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
        Err(FrameError::ConflictingLengths("2, 3".into()))
    );
    assert_eq!(frame(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), Err(FrameError::BadLength("x".into())));
    assert!(matches!(frame(b"garbage\r\n\r\n"), Err(FrameError::StatusLine(_))));
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
    assert!(matches!(frame(&head(MAX_HEADERS + 1)), Err(FrameError::TooManyHeaders)));
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
    // RFC 9112 §6.1: Transfer-Encoding in HTTP/1.0 is faulty framing: the connection ends after it.
    assert!(close(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"));
    assert!(!close(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"));
}

#[test]
fn request_bytes_are_minimal_http11() {
    let get = request("127.0.0.1:80", "/plaintext", &Request::get());
    assert_eq!(get, b"GET /plaintext HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n");
}

/// What the framer must make of one row's bytes.
enum Want {
    /// Framed whole, with this body (decoded).
    Body(&'static [u8]),
    /// Refused by this kind (the variant; its quote is not compared).
    Refused(FrameError),
}

/// The grammar's edges, one row each: the RFC section, the bytes (a whole
/// response, the connection closed after it), and accepted with its body or
/// refused by kind.
#[test]
fn the_grammar_s_edges_are_accepted_or_refused_by_kind() {
    use FrameError::*;
    use Want::{Body, Refused};
    let s = String::new;
    let rows: Vec<(&str, &[u8], Want)> = vec![
        // Status line: HTTP-version SP status-code SP [reason-phrase].
        ("9112 §4", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", Body(b"OK")),
        ("9112 §4 empty reason", b"HTTP/1.1 200 \r\nContent-Length: 2\r\n\r\nOK", Body(b"OK")),
        ("9112 §4 obs-text reason", b"HTTP/1.1 200 D\xe9j\xe0 vu\r\nContent-Length: 2\r\n\r\nOK", Body(b"OK")),
        ("9112 §4 HTTP/1.0", b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nOK", Body(b"OK")),
        ("9112 §4 no SP before the reason", b"HTTP/1.1 200\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        ("9112 §4 two SP", b"HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        ("9112 §2.3 HTTP-name case", b"http/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        ("9112 §2.3 version", b"HTTP/2 200 OK\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        ("9112 §4 3DIGIT", b"HTTP/1.1 20 OK\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        ("9110 §15 below 100", b"HTTP/1.1 099 X\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        ("9110 §15 above 599", b"HTTP/1.1 600 X\r\nContent-Length: 2\r\n\r\nOK", Refused(StatusLine(s()))),
        (
            "9112 §2.2 no empty line first",
            b"\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
            Refused(StatusLine(s())),
        ),
        ("9112 §2.2 bare LF", b"HTTP/1.1 200 OK\nContent-Length: 2\n\nOK", Body(b"OK")),
        (
            "9110 §15.2 interim",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
            Body(b"OK"),
        ),
        ("9110 §15.2.2 101", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", Refused(SwitchingProtocols)),
        // Field lines: field-name ":" OWS field-value OWS.
        (
            "9112 §5.2 obs-fold",
            b"HTTP/1.1 200 OK\r\nX-Folded: first\r\n  second\r\nContent-Length: 2\r\n\r\nOK",
            Body(b"OK"),
        ),
        ("9112 §5.2 folded length", b"HTTP/1.1 200 OK\r\nContent-Length:\r\n 2\r\n\r\nOK", Body(b"OK")),
        (
            "9112 §5.2 fold in a length",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\nOK",
            Refused(BadLength(s())),
        ),
        (
            "9110 §5.5 empty value, HTAB",
            b"HTTP/1.1 200 OK\r\nX-E:\r\nX-T: a\tb\r\nContent-Length: 2\r\n\r\nOK",
            Body(b"OK"),
        ),
        (
            "9112 §5 space in a name",
            b"HTTP/1.1 200 OK\r\nX Bad: y\r\nContent-Length: 2\r\n\r\nOK",
            Refused(HeaderLine(s())),
        ),
        (
            "9112 §5.1 space before colon",
            b"HTTP/1.1 200 OK\r\nX-Bad : y\r\nContent-Length: 2\r\n\r\nOK",
            Refused(HeaderLine(s())),
        ),
        ("9112 §2.2 space first", b"HTTP/1.1 200 OK\r\n X: y\r\nContent-Length: 2\r\n\r\nOK", Refused(HeaderLine(s()))),
        (
            "9110 §5.5 CTL in a value",
            b"HTTP/1.1 200 OK\r\nX: a\x00b\r\nContent-Length: 2\r\n\r\nOK",
            Refused(HeaderLine(s())),
        ),
        ("9112 §5 no colon", b"HTTP/1.1 200 OK\r\nno colon\r\nContent-Length: 2\r\n\r\nOK", Refused(HeaderLine(s()))),
        // Content-Length = 1*DIGIT.
        ("9110 §8.6 leading zeros", b"HTTP/1.1 200 OK\r\nContent-Length: 002\r\n\r\nOK", Body(b"OK")),
        ("9110 §8.6 a value repeated", b"HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nOK", Body(b"OK")),
        ("9110 §8.6 sign", b"HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nOK", Refused(BadLength(s()))),
        ("9110 §8.6 negative", b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\nOK", Refused(BadLength(s()))),
        ("9110 §8.6 hex", b"HTTP/1.1 200 OK\r\nContent-Length: 0x2\r\n\r\nOK", Refused(BadLength(s()))),
        ("9110 §8.6 empty", b"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nOK", Refused(BadLength(s()))),
        ("9110 §8.6 empty element", b"HTTP/1.1 200 OK\r\nContent-Length: 2,\r\n\r\nOK", Refused(BadLength(s()))),
        ("9110 §8.6 two numbers", b"HTTP/1.1 200 OK\r\nContent-Length: 2 2\r\n\r\nOK", Refused(BadLength(s()))),
        (
            "9110 §8.6 beyond usize",
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nOK",
            Refused(BadLength(s())),
        ),
        (
            "9112 §6.3 differing, one line",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nOK",
            Refused(ConflictingLengths(s())),
        ),
        (
            "9112 §6.3 differing, two lines",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nOK",
            Refused(ConflictingLengths(s())),
        ),
        (
            "9112 §6.1 length and chunked",
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n",
            Refused(LengthAndTransferEncoding),
        ),
        (
            "9112 §6.1 length and gzip",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nOK",
            Refused(LengthAndTransferEncoding),
        ),
        // Transfer codings and the chunked body.
        (
            "9112 §7.1 hex, lower case",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nc\r\nHello, World\r\n0\r\n\r\n",
            Body(b"Hello, World"),
        ),
        (
            "9112 §7.1 hex, upper case",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nC\r\nHello, World\r\n0\r\n\r\n",
            Body(b"Hello, World"),
        ),
        (
            "9112 §7.1 leading zeros",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0002\r\nOK\r\n000\r\n\r\n",
            Body(b"OK"),
        ),
        (
            "9112 §6.1 coding case",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n",
            Body(b"OK"),
        ),
        (
            "9112 §7.1.1 extensions",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;a=b\r\nO\r\n1 ; q=\"x;y\"\r\nK\r\n0;last\r\n\r\n",
            Body(b"OK"),
        ),
        (
            "9112 §7.1.2 trailers",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\nX-A: 1\r\nX-B:\r\n\r\n",
            Body(b"OK"),
        ),
        (
            "9112 §6.3 chunked last",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\n\r\n",
            Body(b"OK"),
        ),
        (
            "9112 §6.3 chunked not last",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n2\r\nOK",
            Body(b"2\r\nOK"),
        ),
        (
            "9112 §7.1 empty chunk-size",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n\r\n",
            Refused(BadChunk(s())),
        ),
        (
            "9112 §7.1 no hex digit",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\ng\r\n\r\n",
            Refused(BadChunk(s())),
        ),
        (
            "9112 §7.1 extension first",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n;a\r\n\r\n",
            Refused(BadChunk(s())),
        ),
        (
            "9112 §7.1 data then no CRLF",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOKX\r\n0\r\n\r\n",
            Refused(BadChunk(s())),
        ),
        (
            "9112 §7.1.2 a trailer out of grammar",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nOK\r\n0\r\nnot a field\r\n\r\n",
            Refused(BadTrailer(s())),
        ),
    ];
    for (section, bytes, want) in rows {
        let got = frame_response(bytes, false, true);
        match (want, got) {
            (Body(body), Ok(Some(f))) => {
                assert_eq!((&*f.body(bytes), f.len), (body, bytes.len()), "{section}: accepted, whole, with its body");
            }
            (Refused(kind), Err(e)) => {
                assert_eq!(std::mem::discriminant(&e), std::mem::discriminant(&kind), "{section}: {e}");
            }
            (_, got) => panic!("{section}: {got:?}"),
        }
    }
}

#[test]
fn a_refusal_names_the_header_or_the_line() {
    let refused = |bytes: &[u8]| frame(bytes).unwrap_err().to_string();
    assert_eq!(
        refused(b"HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n"),
        "the header Content-Length: \"1x\" is not a length (RFC 9110 section 8.6: 1*DIGIT)"
    );
    assert_eq!(
        refused(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n"),
        "the header Content-Length has differing values, \"2, 3\" (RFC 9112 section 6.3)"
    );
    assert!(
        refused(b"HTTP/1.1 200 OK\r\nA: b\r\nX Bad: y\r\n\r\n").starts_with("the header line \"X Bad: y\" is out of")
    );
    assert!(
        refused(b"extra HTTP/1.1 200 OK\r\n\r\n").starts_with("the status line \"extra HTTP/1.1 200 OK\" is out of")
    );
    let long = [&b"HTTP/1.1 200 OK\r\nX\x01"[..], &[b'y'; 200], b"\r\n\r\n"].concat();
    let said = refused(&long);
    assert!(said.contains(&format!("\"X\\u{{1}}{}…\"", "y".repeat(78))), "{said}");
}

#[test]
fn a_folded_header_is_read_with_spaces_for_its_folds() {
    let buf = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain;\r\n charset=utf-8\r\nContent-Length: 2\r\n\r\nOK";
    let f = frame(buf).unwrap().unwrap();
    assert_eq!(f.header(buf, "content-type").as_deref(), Some(&b"text/plain;   charset=utf-8"[..]));
    assert_eq!(f.header(buf, "content-length").as_deref(), Some(&b"2"[..]));
    assert_eq!(f.header(buf, "x-absent"), None);
}

fn request_of(method: &str, headers: &[&str], body: Option<&[u8]>) -> Vec<u8> {
    let headers: Vec<String> = headers.iter().map(|&h| h.to_owned()).collect();
    request("127.0.0.1:8080", "/api?x=1", &Request::new(method, &headers, body.map(<[u8]>::to_vec)).unwrap())
}

#[test]
fn a_plain_get_is_the_request_line_and_host_alone() {
    assert_eq!(request_of("GET", &[], None), b"GET /api?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n");
    assert_eq!(request("h", "/", &Request::get()), b"GET / HTTP/1.1\r\nHost: h\r\n\r\n");
}

#[test]
fn method_headers_and_body_are_written_in_order_with_the_body_s_length() {
    let body = b"{\"a\":\"\xc3\xa9\r\n\r\n\"}\x00";
    let got = request_of("POST", &["Authorization: Bearer t:1", "content-type:application/json"], Some(body));
    let mut want = b"POST /api?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer t:1\r\n\
content-type: application/json\r\nContent-Length: 15\r\n\r\n"
        .to_vec();
    want.extend_from_slice(body);
    assert_eq!(body.len(), 15);
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
    assert_eq!(got, want, "byte for byte, the body's CR LF and NUL included");
    assert_eq!(
        request_of("PUT", &[], None),
        b"PUT /api?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 0\r\n\r\n"
    );
    assert_eq!(
        request_of("GET", &[], Some(b"")),
        b"GET /api?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 0\r\n\r\n",
        "an empty body given is said"
    );
    assert_eq!(
        request_of("DELETE", &["Host: api.test", "X-A: 1", "X-A: 2"], None),
        b"DELETE /api?x=1 HTTP/1.1\r\nHost: api.test\r\nX-A: 1\r\nX-A: 2\r\n\r\n",
        "Host replaces the URL's, in its place; a repeated header is sent each time"
    );
}
