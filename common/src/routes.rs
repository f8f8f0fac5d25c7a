//! The route table: every route all three servers expose, with the status,
//! `Content-Type` and body each must answer. Server tests, the conformance
//! test and the bench client's response check all read this one table.

use crate::devices::devices_json;
use crate::extract::{self, Batch, Params};
use crate::fortunes::{seed_page, seed_read_body};
use crate::scale;

/// Body of `GET /healthz`.
pub const HEALTHZ_BODY: &str = "OK";
/// Body of `GET /plaintext`.
pub const PLAINTEXT_BODY: &str = "Hello, World!";
/// The application name: body of `GET /state/fat` and `GET /state/arc`,
/// read from the state's `app_name`.
pub const APP_NAME: &str = "fleet-manager";

/// The `Content-Type` a route answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentType {
    /// `text/plain; charset=utf-8`, what all three frameworks give a `String`.
    TextPlain,
    /// `application/json`.
    Json,
    /// `text/html; charset=utf-8`: the fortunes page.
    Html,
}

impl ContentType {
    /// The header value, byte for byte.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::TextPlain => "text/plain; charset=utf-8",
            Self::Json => "application/json",
            Self::Html => "text/html; charset=utf-8",
        }
    }
}

/// Names a route independently of its path, for matching in code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteId {
    /// `GET /healthz`: liveness, `OK`.
    Healthz,
    /// `GET /plaintext`: the framework's floor, `Hello, World!`.
    Plaintext,
    /// `GET /api/devices`: the devices serialized on every request.
    Devices,
    /// `GET /api/devices/preserialized`: the same bytes, serialized once.
    DevicesPreserialized,
    /// `GET /api/devices/cached`: the current list's bytes, serialized once
    /// per change (`PUT /api/devices` replaces the list).
    DevicesCached,
    /// `GET /state/fat`: the app name through the layers, with `FatState`.
    StateFat,
    /// `GET /state/arc`: the same with `AppState`.
    StateArc,
    /// `GET /fortunes`: every row of the SQLite table read, one added, sorted
    /// and rendered as HTML on every request (`POST /fortunes` adds a row).
    Fortunes,
    /// `GET /fortunes/cached`: the same page, rendered once per change of the table.
    FortunesCached,
    /// `GET /blocking/inline`: a short blocking call (synchronous SQLite
    /// reads, about 50 µs) made on the async worker.
    BlockingInline,
    /// `GET /blocking/offloaded`: the same call made the way the framework
    /// documents for blocking work (`web::block`, `spawn_blocking`).
    BlockingOffloaded,
    /// `POST /extract/json`: a 100-byte JSON batch through the framework's `Json<T>`.
    ExtractJson,
    /// `POST /extract/json-raw`: the same bytes read raw, `serde_json::from_slice` by hand.
    ExtractJsonRaw,
    /// `POST /extract/json-10k`: a 10 KiB JSON batch through `Json<T>`.
    ExtractJsonLarge,
    /// `POST /extract/json-10k-raw`: the same bytes read raw.
    ExtractJsonLargeRaw,
    /// `GET /extract/path/sensor-0042/7`: two path parameters through the framework's `Path`.
    ExtractPath,
    /// `GET /extract/path-raw/sensor-0042/7`: the same read from the raw path.
    ExtractPathRaw,
    /// `GET /extract/query?device=sensor-0042&reading=7`: through `Query`.
    ExtractQuery,
    /// `GET /extract/query-raw?…`: the same read from the raw query string.
    ExtractQueryRaw,
    /// `POST /extract/form`: the same pairs as an urlencoded body, through `Form`.
    ExtractForm,
    /// `POST /extract/form-raw`: the same body read raw.
    ExtractFormRaw,
    /// `GET /scale/target`: a static route, after `--filler-routes` others
    /// ([`crate::scale`]).
    ScaleStatic,
    /// `GET /scale/target/42`: a route with a path parameter, after
    /// `--filler-routes` others of its kind.
    ScaleParam,
}

impl RouteId {
    /// The route's absolute path, e.g. `/api/devices`: the one place paths
    /// are spelled.
    pub const fn path(self) -> &'static str {
        match self {
            Self::Healthz => "/healthz",
            Self::Plaintext => "/plaintext",
            Self::Devices => "/api/devices",
            Self::DevicesPreserialized => "/api/devices/preserialized",
            Self::DevicesCached => "/api/devices/cached",
            Self::StateFat => "/state/fat",
            Self::StateArc => "/state/arc",
            Self::Fortunes => "/fortunes",
            Self::FortunesCached => "/fortunes/cached",
            Self::BlockingInline => "/blocking/inline",
            Self::BlockingOffloaded => "/blocking/offloaded",
            Self::ExtractJson => "/extract/json",
            Self::ExtractJsonRaw => "/extract/json-raw",
            Self::ExtractJsonLarge => "/extract/json-10k",
            Self::ExtractJsonLargeRaw => "/extract/json-10k-raw",
            Self::ExtractPath => "/extract/path/sensor-0042/7",
            Self::ExtractPathRaw => "/extract/path-raw/sensor-0042/7",
            Self::ExtractQuery => "/extract/query?device=sensor-0042&reading=7",
            Self::ExtractQueryRaw => "/extract/query-raw?device=sensor-0042&reading=7",
            Self::ExtractForm => "/extract/form",
            Self::ExtractFormRaw => "/extract/form-raw",
            Self::ScaleStatic => "/scale/target",
            Self::ScaleParam => "/scale/target/42",
        }
    }

    /// The request it is loaded with: a `GET`, or a `POST` of the extractor
    /// routes' JSON or urlencoded body.
    pub fn request(self) -> RouteRequest {
        let post = |content_type, body| RouteRequest { method: "POST", content_type: Some(content_type), body };
        match self {
            Self::ExtractJson | Self::ExtractJsonRaw => post(ContentType::Json.as_str(), extract::small_json()),
            Self::ExtractJsonLarge | Self::ExtractJsonLargeRaw => {
                post(ContentType::Json.as_str(), extract::large_json())
            }
            Self::ExtractForm | Self::ExtractFormRaw => post(FORM, extract::PAIRS.as_bytes()),
            _ => RouteRequest { method: "GET", content_type: None, body: b"" },
        }
    }
}

/// The `Content-Type` of an urlencoded form body.
pub const FORM: &str = "application/x-www-form-urlencoded";

/// What a request to a route carries: its method, and with a body, the
/// body's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteRequest {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The body's type; `None` without a body.
    pub content_type: Option<&'static str>,
    /// The body (empty for a `GET`).
    pub body: &'static [u8],
}

/// One row of the route table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Which route this is.
    pub id: RouteId,
    /// Absolute path, e.g. `/api/devices` (the same as [`RouteId::path`]).
    pub path: &'static str,
    /// Expected `Content-Type`.
    pub content_type: ContentType,
}

impl Route {
    /// The exact body a server must answer with (status 200), as long as
    /// nothing was `PUT` or `POST`ed.
    pub fn expected_body(&self) -> Vec<u8> {
        match self.id {
            RouteId::Healthz => HEALTHZ_BODY.as_bytes().to_vec(),
            RouteId::Plaintext => PLAINTEXT_BODY.as_bytes().to_vec(),
            RouteId::Devices | RouteId::DevicesPreserialized | RouteId::DevicesCached => devices_json(),
            RouteId::StateFat | RouteId::StateArc => APP_NAME.as_bytes().to_vec(),
            RouteId::Fortunes | RouteId::FortunesCached => seed_page().to_vec(),
            RouteId::BlockingInline | RouteId::BlockingOffloaded => seed_read_body(),
            RouteId::ExtractJson | RouteId::ExtractJsonRaw => answer_of(extract::small_json()),
            RouteId::ExtractJsonLarge | RouteId::ExtractJsonLargeRaw => answer_of(extract::large_json()),
            RouteId::ExtractPath
            | RouteId::ExtractPathRaw
            | RouteId::ExtractQuery
            | RouteId::ExtractQueryRaw
            | RouteId::ExtractForm
            | RouteId::ExtractFormRaw => Params::sent().answer().into_bytes(),
            RouteId::ScaleStatic => scale::TARGET_BODY.as_bytes().to_vec(),
            RouteId::ScaleParam => scale::target_answer(SCALE_ID).into_bytes(),
        }
    }

    /// The request it is loaded with ([`RouteId::request`]).
    pub fn request(&self) -> RouteRequest {
        self.id.request()
    }

    /// The row for `id`.
    pub fn get(id: RouteId) -> &'static Route {
        ROUTES.iter().find(|r| r.id == id).expect("every RouteId has a row")
    }

    /// The row whose path is `path`, if any.
    pub fn by_path(path: &str) -> Option<&'static Route> {
        ROUTES.iter().find(|r| r.path == path)
    }
}

const fn get(id: RouteId, content_type: ContentType) -> Route {
    Route { id, path: id.path(), content_type }
}

/// The answer to a JSON batch the client sends.
fn answer_of(body: &[u8]) -> Vec<u8> {
    extract::batch_from_slice(body).map(|b: Batch| b.answer()).expect("the batches sent parse").into_bytes()
}

/// Every route, in the order the README lists them, each with the request
/// it is loaded with ([`RouteId::request`]). (`PUT /api/devices`, which
/// replaces the list, and `POST /fortunes`, which adds a row, are not in the
/// table: see [`crate::catalog`] and [`crate::fortunes`].)
pub static ROUTES: &[Route] = &[
    get(RouteId::Healthz, ContentType::TextPlain),
    get(RouteId::Plaintext, ContentType::TextPlain),
    get(RouteId::Devices, ContentType::Json),
    get(RouteId::DevicesPreserialized, ContentType::Json),
    get(RouteId::DevicesCached, ContentType::Json),
    get(RouteId::StateFat, ContentType::TextPlain),
    get(RouteId::StateArc, ContentType::TextPlain),
    get(RouteId::Fortunes, ContentType::Html),
    get(RouteId::FortunesCached, ContentType::Html),
    get(RouteId::BlockingInline, ContentType::Json),
    get(RouteId::BlockingOffloaded, ContentType::Json),
    get(RouteId::ExtractJson, ContentType::TextPlain),
    get(RouteId::ExtractJsonRaw, ContentType::TextPlain),
    get(RouteId::ExtractJsonLarge, ContentType::TextPlain),
    get(RouteId::ExtractJsonLargeRaw, ContentType::TextPlain),
    get(RouteId::ExtractPath, ContentType::TextPlain),
    get(RouteId::ExtractPathRaw, ContentType::TextPlain),
    get(RouteId::ExtractQuery, ContentType::TextPlain),
    get(RouteId::ExtractQueryRaw, ContentType::TextPlain),
    get(RouteId::ExtractForm, ContentType::TextPlain),
    get(RouteId::ExtractFormRaw, ContentType::TextPlain),
    get(RouteId::ScaleStatic, ContentType::TextPlain),
    get(RouteId::ScaleParam, ContentType::TextPlain),
];

/// The id in [`RouteId::ScaleParam`]'s path.
const SCALE_ID: u32 = 42;

/// A path no server routes; every server must answer it with 404.
pub const UNKNOWN_PATH: &str = "/no-such-route";

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn paths_and_ids_are_unique_and_complete() {
        let paths: HashSet<_> = ROUTES.iter().map(|r| r.path).collect();
        let ids: HashSet<_> = ROUTES.iter().map(|r| r.id).collect();
        assert_eq!(paths.len(), 23);
        assert_eq!(ids.len(), 23);
        assert!(Route::by_path(UNKNOWN_PATH).is_none());
    }

    #[test]
    fn expected_bodies_are_exact() {
        assert_eq!(Route::get(RouteId::Healthz).expected_body(), b"OK");
        assert_eq!(Route::get(RouteId::Plaintext).expected_body(), b"Hello, World!");
        assert_eq!(Route::get(RouteId::StateArc).expected_body(), b"fleet-manager");
        let a = Route::get(RouteId::Devices).expected_body();
        assert_eq!(a.len(), 271);
        assert_eq!(a, Route::get(RouteId::DevicesPreserialized).expected_body());
        assert_eq!(a, Route::get(RouteId::DevicesCached).expected_body());
        let page = Route::get(RouteId::Fortunes).expected_body();
        assert!(page.starts_with(b"<!DOCTYPE html>") && page.ends_with(b"</html>"));
        assert_eq!(page, Route::get(RouteId::FortunesCached).expected_body());
        let read = Route::get(RouteId::BlockingInline).expected_body();
        assert!(read.starts_with(br#"{"rows":12,"bytes":"#), "{}", String::from_utf8_lossy(&read));
        assert_eq!(read, Route::get(RouteId::BlockingOffloaded).expected_body());
        let typed_and_raw = [
            (RouteId::ExtractJson, RouteId::ExtractJsonRaw, "sensor-0042: 1 readings"),
            (RouteId::ExtractJsonLarge, RouteId::ExtractJsonLargeRaw, "sensor-0042: 156 readings"),
            (RouteId::ExtractPath, RouteId::ExtractPathRaw, "sensor-0042: reading 7"),
            (RouteId::ExtractQuery, RouteId::ExtractQueryRaw, "sensor-0042: reading 7"),
            (RouteId::ExtractForm, RouteId::ExtractFormRaw, "sensor-0042: reading 7"),
        ];
        for (typed, raw, answer) in typed_and_raw {
            assert_eq!(Route::get(typed).expected_body(), answer.as_bytes(), "{typed:?}");
            assert_eq!(Route::get(raw).expected_body(), answer.as_bytes(), "{raw:?}");
            assert_eq!(typed.request(), raw.request(), "{typed:?} and {raw:?} take the same request");
        }
    }

    #[test]
    fn extractor_routes_carry_the_shared_values() {
        let pairs = crate::extract::PAIRS;
        assert!(RouteId::ExtractQuery.path().ends_with(&format!("?{pairs}")));
        assert!(RouteId::ExtractQueryRaw.path().starts_with(crate::extract::QUERY_RAW_PATH));
        let tail = format!("{}/{}", crate::extract::DEVICE, crate::extract::READING);
        assert_eq!(RouteId::ExtractPath.path(), format!("{}{tail}", crate::extract::PATH_PREFIX));
        assert_eq!(RouteId::ExtractPathRaw.path(), format!("{}{tail}", crate::extract::PATH_RAW_PREFIX));
        let form = RouteId::ExtractForm.request();
        assert_eq!((form.method, form.content_type, form.body), ("POST", Some(FORM), pairs.as_bytes()));
        assert_eq!(RouteId::Plaintext.request(), RouteRequest { method: "GET", content_type: None, body: b"" });
        assert_eq!(RouteId::ExtractJsonLarge.request().content_type, Some("application/json"));
    }

    #[test]
    fn the_scale_targets_are_the_paths_the_servers_route() {
        let param = RouteId::ScaleParam.path();
        assert_eq!(RouteId::ScaleStatic.path(), scale::TARGET);
        assert_eq!(param, format!("{}{SCALE_ID}", scale::TARGET_PARAM_PREFIX));
        assert_eq!(Route::get(RouteId::ScaleParam).expected_body(), b"target 42");
        assert_eq!(Route::get(RouteId::ScaleStatic).expected_body(), b"target");
    }

    #[test]
    fn lookups_agree() {
        for r in ROUTES {
            assert_eq!(Route::by_path(r.path), Some(r));
            assert_eq!(Route::get(r.id), r);
            assert!(r.path.starts_with('/'));
            assert_eq!(r.id.path(), r.path);
        }
        assert_eq!(Route::get(RouteId::Devices).content_type.as_str(), "application/json");
        assert_eq!(Route::get(RouteId::Fortunes).content_type.as_str(), "text/html; charset=utf-8");
    }
}
