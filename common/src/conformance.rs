//! What every server's route tests hold it to, written once: the table's
//! answer for each route, the bodies `POST /fortunes` refuses, and the page
//! after one fortune is added. Only the servers' own tests use it (feature
//! `conformance`); the framework-specific part, making the request, stays in
//! each server's test.

use std::io::Read;
use std::num::NonZeroUsize;

use crate::fortunes::{self, Fortune};
use crate::middleware::Middleware;
use crate::{FortuneDb, Fortunes, MAX_FORTUNE_BYTES, ROUTES, Route, RouteRequest, UNKNOWN_PATH};

/// The layer counts every route is checked through.
pub const LAYERS: [usize; 3] = [0, 1, 10];

/// The message the tests add with `POST /fortunes` (markup, to be escaped).
pub const NEW_FORTUNE: &str = "<i>new</i>";

/// Paths no server routes: each answers 404.
pub const UNROUTED: [&str; 2] = [UNKNOWN_PATH, "/state/unknown"];

/// A fresh database (removed when the returned owner is dropped) and its fortunes.
///
/// # Panics
/// When the database cannot be created.
pub fn fresh_fortunes() -> (FortuneDb, Fortunes) {
    let db = FortuneDb::create().unwrap();
    let fortunes = Fortunes::open(db.path(), NonZeroUsize::MIN).unwrap();
    (db, fortunes)
}

/// Asserts every route of the table, through every layer count of [`LAYERS`],
/// as `ask(layers, path, request)` answers the route's request ([`Route::request`]:
/// its method, and a body with its `Content-Type`): status, `Content-Type`,
/// body; then that every path of [`UNROUTED`] answers `GET` with 404.
///
/// # Panics
/// At the first answer that is not the table's.
pub async fn assert_every_route<F>(ask: impl Fn(usize, &'static str, RouteRequest) -> F)
where
    F: Future<Output = (u16, Option<String>, Vec<u8>)>,
{
    for layers in LAYERS {
        for route in ROUTES {
            let (status, content_type, body) = ask(layers, route.path, route.request()).await;
            assert_table_answer(route, layers, status, content_type.as_deref(), &body);
        }
    }
    for path in UNROUTED {
        let get = RouteRequest { method: "GET", content_type: None, body: b"" };
        assert_eq!(ask(10, path, get).await.0, 404, "{path}");
    }
}

/// The filler routes of each kind a server's test starts it with (`--filler-routes`).
pub const FILLERS: u16 = 3;

/// What a server with [`FILLERS`] filler routes answers `GET` of each path:
/// the last filler of each kind `filler`, both targets their answers, and
/// `None` (404) for a filler past the last.
pub fn scale_answers() -> Vec<(String, Option<String>)> {
    use crate::scale::{FILLER_BODY, TARGET, TARGET_BODY, TARGET_PARAM_PREFIX, filler_path, target_answer};
    let (last, past) = (filler_path(FILLERS - 1), filler_path(FILLERS));
    vec![
        (last.clone(), Some(FILLER_BODY.to_owned())),
        (format!("{last}/9"), Some(FILLER_BODY.to_owned())),
        (TARGET.to_owned(), Some(TARGET_BODY.to_owned())),
        (format!("{TARGET_PARAM_PREFIX}7"), Some(target_answer(7))),
        (past.clone(), None),
        (format!("{past}/9"), None),
    ]
}

/// Asserts that an answer to the request of `route` through `layers` layers is the
/// route table's: status 200, its content type, its bytes.
///
/// # Panics
/// When it is not, naming the route, the layers and what differs.
pub fn assert_table_answer(route: &Route, layers: usize, status: u16, content_type: Option<&str>, body: &[u8]) {
    assert_eq!(status, 200, "{} layers={layers}", route.path);
    assert_eq!(content_type, Some(route.content_type.as_str()), "{} layers={layers}", route.path);
    assert_eq!(body, route.expected_body(), "{} layers={layers}", route.path);
}

/// Asserts how one request of each state route uses the state through 0, 1
/// and 7 layers, as `counted(layers, path)` counts it (touches, `FatState`
/// clones): each layer touches the state once on `/state/fat` and
/// `/state/arc`; `/state/fat` clones `FatState` `fat_clones(layers)` times
/// (how the framework hands out its state), `/state/arc` never (one `Arc`);
/// `/plaintext` neither touches nor clones it.
///
/// # Panics
/// At the first count that differs, naming the route and the layers.
pub async fn assert_state_uses<F>(counted: impl Fn(usize, &'static str) -> F, fat_clones: impl Fn(u64) -> u64)
where
    F: Future<Output = (u64, u64)>,
{
    for layers in [0, 1, 7] {
        let l = layers as u64;
        assert_eq!(counted(layers, "/state/fat").await, (l, fat_clones(l)), "/state/fat, {layers} layers");
        assert_eq!(counted(layers, "/state/arc").await, (l, 0), "/state/arc, {layers} layers");
        assert_eq!(counted(layers, "/plaintext").await, (0, 0), "/plaintext, {layers} layers");
    }
}

/// The bodies `POST /fortunes` refuses, with the status each gets: empty,
/// not UTF-8, two lines, one byte over the limit, far over it.
pub fn refused_fortunes() -> [(Vec<u8>, u16); 5] {
    [
        (b"".to_vec(), 400),
        (b"\xc3\x28".to_vec(), 400),
        (b"a\nb".to_vec(), 400),
        (vec![b'a'; MAX_FORTUNE_BYTES + 1], 413),
        (vec![b'a'; 1024 * 1024], 413),
    ]
}

/// Asserts that a refusal of `POST /fortunes` has `expected` status and a
/// one-line plain-text reason.
///
/// # Panics
/// When it does not.
pub fn assert_refusal(expected: u16, status: u16, content_type: Option<&str>, reason: &[u8]) {
    assert_eq!(status, expected, "{}", String::from_utf8_lossy(reason));
    assert_eq!(content_type, Some("text/plain; charset=utf-8"));
    assert!(!reason.is_empty() && !reason.contains(&b'\n'), "one line");
}

/// The fortunes page once [`NEW_FORTUNE`] is added to the seed.
pub fn page_with_new_fortune() -> Vec<u8> {
    let mut rows = fortunes::seed();
    rows.push(Fortune { id: 13, message: NEW_FORTUNE.to_owned() });
    fortunes::render(rows).to_vec()
}

/// The route every layer of `--middleware` is checked on.
pub const LAYERED_PATH: &str = "/api/devices/preserialized";

/// The stacks every server is checked through: each layer `framework`
/// offers alone, then all of them.
pub fn stacks(framework: &str) -> Vec<Vec<Middleware>> {
    let offered = crate::middleware::offered(framework);
    let mut stacks: Vec<Vec<Middleware>> = offered.iter().map(|m| vec![*m]).collect();
    stacks.push(offered.to_vec());
    stacks
}

/// Asserts an answer to `GET` [`LAYERED_PATH`], sent with
/// `middleware::REQUEST_HEADERS`, through the layers `on`: status 200,
/// `Content-Encoding: gzip` with `compression` (and none without), the
/// devices' bytes once decoded, and every header the layers add.
/// `headers` are name (any case) and value.
///
/// # Panics
/// When it is not so, naming the layers and what differs.
pub fn assert_layered_answer(on: &[Middleware], status: u16, headers: &[(String, String)], body: &[u8]) {
    let header = |name: &str| headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    assert_eq!(status, 200, "{on:?}");
    let body = if on.contains(&Middleware::Compression) {
        assert_eq!(header("content-encoding"), Some("gzip"), "{on:?}");
        let mut decoded = Vec::new();
        flate2::read::GzDecoder::new(body).read_to_end(&mut decoded).expect("a gzip body");
        decoded
    } else {
        assert_eq!(header("content-encoding"), None, "{on:?}");
        body.to_vec()
    };
    assert_eq!(body, crate::devices_json(), "{on:?}");
    for name in on.iter().flat_map(|m| m.added_headers()) {
        assert!(header(name).is_some(), "{on:?}: no {name} in {headers:?}");
    }
    if on.contains(&Middleware::Cors) {
        assert_eq!(header("access-control-allow-origin"), Some(crate::middleware::CORS_ORIGIN), "{on:?}");
    }
    for (name, value) in
        crate::middleware::SECURITY_HEADERS.iter().filter(|_| on.contains(&Middleware::SecurityHeaders))
    {
        assert_eq!(header(name), Some(*value), "{on:?}");
    }
}

/// Asserts that one request through `on` wrote as many lines as
/// `framework`'s `trace` layer writes (`middleware::TRACE_LINES`): exactly
/// as many alone, at least as many stacked (the other layers may log too);
/// nothing without `trace`. `wrote` is what this thread's `LogSink` counted.
///
/// # Panics
/// When it wrote another number, naming the layers.
pub fn assert_trace_lines(framework: &str, on: &[Middleware], wrote: u64) {
    if !on.contains(&Middleware::Trace) {
        return;
    }
    let expected = crate::middleware::TRACE_LINES.iter().find(|(f, _)| *f == framework).map_or(0, |(_, n)| *n);
    let right = if on.len() == 1 { wrote == expected } else { wrote >= expected };
    assert!(right, "{framework} {on:?}: {wrote} lines for one request, {expected} expected");
}
