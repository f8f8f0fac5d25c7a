//! The variants: each route a scenario measures, named as `results.json`
//! names it, with the route of the table it loads and how it is loaded
//! (TLS, HTTP/2, through which middleware, behind how many routes).

use std::fmt;

use common::RouteId;
use common::middleware::{self, Middleware};
use serde::{Deserialize, Serialize};

use super::Framework;

/// One route measured within a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// `GET /api/devices`: serialized on every request.
    PerRequest,
    /// `GET /api/devices/preserialized`: serialized once at start-up.
    Preserialized,
    /// `GET /api/devices/cached`: serialized once per change of the list.
    Cached,
    /// `GET /state/fat`: the 35-field state cloned per use.
    Fat,
    /// `GET /state/arc`: the same fields behind one `Arc`.
    Arc,
    /// `GET /plaintext`: the floor.
    Plaintext,
    /// `GET /fortunes`: the table read, sorted and rendered on every request.
    Fortunes,
    /// `GET /fortunes/cached`: the page rendered once per change of the table.
    FortunesCached,
    /// `GET /blocking/inline`: a blocking call on the async worker.
    Inline,
    /// `GET /blocking/offloaded`: the same call offloaded as documented.
    Offloaded,
    /// `GET /plaintext` over HTTP, in the `tls` scenario.
    Http,
    /// `GET /plaintext` over TLS, on the same server's HTTPS listener.
    Https,
    /// `GET /plaintext` over HTTP/2 with prior knowledge (h2c), in the
    /// `http2` scenario.
    H2c,
    /// `GET /plaintext` over HTTP/2 on the HTTPS listener (ALPN `h2`).
    H2,
    /// `GET /api/devices` over HTTP/1.1 on the plain listener, in the
    /// `http2` scenario.
    DevicesHttp,
    /// `GET /api/devices` over HTTP/2 with prior knowledge (h2c).
    DevicesH2c,
    /// `GET /api/devices` over HTTP/1.1 on the HTTPS listener.
    DevicesHttps,
    /// `GET /api/devices` over HTTP/2 on the HTTPS listener (ALPN `h2`).
    DevicesH2,
    /// A path of the user's own server (`ab --before-cmd`/`--after-cmd`),
    /// named by the run's `route`.
    Own,
    /// `GET /api/devices/preserialized` on a server with `--middleware none`
    /// (the `middleware` scenario's requests all send its `REQUEST_HEADERS`).
    Bare,
    /// The same through the framework's compression (gzip).
    Compression,
    /// The same through a log line per request, into a sink.
    Trace,
    /// The same through CORS.
    Cors,
    /// The same through a request id.
    RequestId,
    /// The same through a timeout.
    Timeout,
    /// The same through the security headers.
    SecurityHeaders,
    /// The same through every layer the framework offers, stacked.
    Stacked,
    /// `POST /extract/json`: 102 bytes of JSON through the framework's `Json<T>`.
    Json,
    /// `POST /extract/json-raw`: the same bytes read raw, parsed by hand.
    JsonRaw,
    /// `POST /extract/json-10k`: 10,267 bytes of JSON through `Json<T>`.
    Json10k,
    /// `POST /extract/json-10k-raw`: the same bytes read raw.
    Json10kRaw,
    /// `GET /extract/path/sensor-0042/7`: through the framework's `Path`.
    PathParams,
    /// `GET /extract/path-raw/sensor-0042/7`: the raw path split by hand.
    PathRaw,
    /// `GET /extract/query?device=sensor-0042&reading=7`: through `Query`.
    Query,
    /// `GET /extract/query-raw?…`: the raw query string split by hand.
    QueryRaw,
    /// `POST /extract/form`: an urlencoded body through `Form`.
    Form,
    /// `POST /extract/form-raw`: the same body read raw.
    FormRaw,
    /// `GET /scale/target` on the framework's own server (no filler routes).
    #[serde(rename = "static_0")]
    Static0,
    /// The same on a server with `--filler-routes 10` ahead of it.
    #[serde(rename = "static_10")]
    Static10,
    /// The same behind 100.
    #[serde(rename = "static_100")]
    Static100,
    /// The same behind 1,000.
    #[serde(rename = "static_1000")]
    Static1000,
    /// `GET /scale/target/42`, a path parameter, on the framework's own server.
    #[serde(rename = "param_0")]
    Param0,
    /// The same on a server with `--filler-routes 10` ahead of it.
    #[serde(rename = "param_10")]
    Param10,
    /// The same behind 100.
    #[serde(rename = "param_100")]
    Param100,
    /// The same behind 1,000.
    #[serde(rename = "param_1000")]
    Param1000,
}

impl Variant {
    /// Every variant of its own route, in the order of the route table
    /// (not [`Variant::Http`] and [`Variant::Https`]: `/plaintext` again).
    pub const ALL: [Self; 20] = [
        Self::Plaintext,
        Self::PerRequest,
        Self::Preserialized,
        Self::Cached,
        Self::Fat,
        Self::Arc,
        Self::Fortunes,
        Self::FortunesCached,
        Self::Inline,
        Self::Offloaded,
        Self::Json,
        Self::JsonRaw,
        Self::Json10k,
        Self::Json10kRaw,
        Self::PathParams,
        Self::PathRaw,
        Self::Query,
        Self::QueryRaw,
        Self::Form,
        Self::FormRaw,
    ];

    /// The `extractors` scenario's variants: each raw route, then the
    /// typed one that takes the same request.
    pub const EXTRACTORS: [Self; 10] = [
        Self::JsonRaw,
        Self::Json,
        Self::Json10kRaw,
        Self::Json10k,
        Self::PathRaw,
        Self::PathParams,
        Self::QueryRaw,
        Self::Query,
        Self::FormRaw,
        Self::Form,
    ];

    /// The `routes` scenario's variants: the static target behind 0, 10,
    /// 100 and 1,000 filler routes of each kind, then the parameterized one.
    pub const SCALE: [Self; 8] = [
        Self::Static0,
        Self::Static10,
        Self::Static100,
        Self::Static1000,
        Self::Param0,
        Self::Param10,
        Self::Param100,
        Self::Param1000,
    ];

    /// Every variant the suite measures: [`Variant::ALL`], then the `tls`
    /// scenario's two, then the `http2` scenario's others, then the
    /// `middleware` scenario's, then the `routes` scenario's.
    pub const MEASURED: [Self; 44] = {
        const MORE: [Variant; 24] = [
            Variant::Http,
            Variant::Https,
            Variant::H2c,
            Variant::H2,
            Variant::DevicesHttp,
            Variant::DevicesH2c,
            Variant::DevicesHttps,
            Variant::DevicesH2,
            Variant::Bare,
            Variant::Trace,
            Variant::RequestId,
            Variant::Timeout,
            Variant::Cors,
            Variant::SecurityHeaders,
            Variant::Compression,
            Variant::Stacked,
            Variant::Static0,
            Variant::Static10,
            Variant::Static100,
            Variant::Static1000,
            Variant::Param0,
            Variant::Param10,
            Variant::Param100,
            Variant::Param1000,
        ];
        let mut measured = [Self::Plaintext; 44];
        let mut i = 0;
        while i < measured.len() {
            measured[i] = if i < Self::ALL.len() { Self::ALL[i] } else { MORE[i - Self::ALL.len()] };
            i += 1;
        }
        measured
    };

    /// The `middleware` scenario's variants: the bare server first.
    pub const MIDDLEWARE: [Self; 8] = [
        Self::Bare,
        Self::Trace,
        Self::RequestId,
        Self::Timeout,
        Self::Cors,
        Self::SecurityHeaders,
        Self::Compression,
        Self::Stacked,
    ];

    /// Its server's `--middleware` in the `middleware` scenario (`None`:
    /// another scenario's, the framework's defaults), for `framework`:
    /// `Stacked` is every layer it offers; a layer it does not offer is
    /// `None` too (that variant is not measured for it).
    pub fn middleware(self, framework: Framework) -> Option<&'static [Middleware]> {
        let offered = middleware::offered(framework.name());
        let one = |m: Middleware| offered.iter().position(|o| *o == m).map(|i| &offered[i..=i]);
        match self {
            Self::Bare => Some(&[]),
            Self::Compression => one(Middleware::Compression),
            Self::Trace => one(Middleware::Trace),
            Self::Cors => one(Middleware::Cors),
            Self::RequestId => one(Middleware::RequestId),
            Self::Timeout => one(Middleware::Timeout),
            Self::SecurityHeaders => one(Middleware::SecurityHeaders),
            Self::Stacked => Some(offered),
            _ => None,
        }
    }

    /// Its server's `--filler-routes` in the `routes` scenario (`None`:
    /// another scenario's).
    pub fn filler_routes(self) -> Option<u16> {
        match self {
            Self::Static0 | Self::Param0 => Some(0),
            Self::Static10 | Self::Param10 => Some(10),
            Self::Static100 | Self::Param100 => Some(100),
            Self::Static1000 | Self::Param1000 => Some(1000),
            _ => None,
        }
    }

    /// The variant of the route at `path`, if it is one.
    pub fn of_path(path: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.path() == path)
    }

    /// Its name in `results.json`, e.g. `per_request`.
    pub fn name(self) -> &'static str {
        match self {
            Self::PerRequest => "per_request",
            Self::Preserialized => "preserialized",
            Self::Cached => "cached",
            Self::Fat => "fat",
            Self::Arc => "arc",
            Self::Plaintext => "plaintext",
            Self::Fortunes => "fortunes",
            Self::FortunesCached => "fortunes_cached",
            Self::Inline => "inline",
            Self::Offloaded => "offloaded",
            Self::Http => "http",
            Self::Https => "https",
            Self::H2c => "h2c",
            Self::H2 => "h2",
            Self::DevicesHttp => "devices_http",
            Self::DevicesH2c => "devices_h2c",
            Self::DevicesHttps => "devices_https",
            Self::DevicesH2 => "devices_h2",
            Self::Own => "own",
            Self::Bare => "bare",
            Self::Compression => "compression",
            Self::Trace => "trace",
            Self::Cors => "cors",
            Self::RequestId => "request_id",
            Self::Timeout => "timeout",
            Self::SecurityHeaders => "security_headers",
            Self::Stacked => "stacked",
            Self::Json => "json",
            Self::JsonRaw => "json_raw",
            Self::Json10k => "json10k",
            Self::Json10kRaw => "json10k_raw",
            Self::PathParams => "path_params",
            Self::PathRaw => "path_raw",
            Self::Query => "query",
            Self::QueryRaw => "query_raw",
            Self::Form => "form",
            Self::FormRaw => "form_raw",
            Self::Static0 => "static_0",
            Self::Static10 => "static_10",
            Self::Static100 => "static_100",
            Self::Static1000 => "static_1000",
            Self::Param0 => "param_0",
            Self::Param10 => "param_10",
            Self::Param100 => "param_100",
            Self::Param1000 => "param_1000",
        }
    }

    /// The route of the table it loads; `None` for [`Variant::Own`].
    pub fn route(self) -> Option<RouteId> {
        Some(match self {
            Self::PerRequest => RouteId::Devices,
            Self::Preserialized => RouteId::DevicesPreserialized,
            Self::Cached => RouteId::DevicesCached,
            Self::Fat => RouteId::StateFat,
            Self::Arc => RouteId::StateArc,
            Self::Plaintext => RouteId::Plaintext,
            Self::Fortunes => RouteId::Fortunes,
            Self::FortunesCached => RouteId::FortunesCached,
            Self::Inline => RouteId::BlockingInline,
            Self::Offloaded => RouteId::BlockingOffloaded,
            Self::Http | Self::Https | Self::H2c | Self::H2 => RouteId::Plaintext,
            Self::DevicesHttp | Self::DevicesH2c | Self::DevicesHttps | Self::DevicesH2 => RouteId::Devices,
            Self::Json => RouteId::ExtractJson,
            Self::JsonRaw => RouteId::ExtractJsonRaw,
            Self::Json10k => RouteId::ExtractJsonLarge,
            Self::Json10kRaw => RouteId::ExtractJsonLargeRaw,
            Self::PathParams => RouteId::ExtractPath,
            Self::PathRaw => RouteId::ExtractPathRaw,
            Self::Query => RouteId::ExtractQuery,
            Self::QueryRaw => RouteId::ExtractQueryRaw,
            Self::Form => RouteId::ExtractForm,
            Self::FormRaw => RouteId::ExtractFormRaw,
            Self::Static0 | Self::Static10 | Self::Static100 | Self::Static1000 => RouteId::ScaleStatic,
            Self::Param0 | Self::Param10 | Self::Param100 | Self::Param1000 => RouteId::ScaleParam,
            Self::Own => return None,
            // The middleware scenario's, each through its own server.
            _ => RouteId::DevicesPreserialized,
        })
    }

    /// How runs, deltas and tables name it: its path, with the scheme for
    /// the `tls` and `http2` scenarios' (`https /plaintext`, `h2c
    /// /plaintext`), whose paths repeat.
    pub fn label(self) -> &'static str {
        match self {
            Self::Http => "http /plaintext",
            Self::Https => "https /plaintext",
            Self::H2c => "h2c /plaintext",
            Self::H2 => "h2 /plaintext",
            Self::DevicesHttp => "http /api/devices",
            Self::DevicesH2c => "h2c /api/devices",
            Self::DevicesHttps => "https /api/devices",
            Self::DevicesH2 => "h2 /api/devices",
            Self::Bare => "bare /api/devices/preserialized",
            Self::Compression => "compression /api/devices/preserialized",
            Self::Trace => "trace /api/devices/preserialized",
            Self::Cors => "cors /api/devices/preserialized",
            Self::RequestId => "request-id /api/devices/preserialized",
            Self::Timeout => "timeout /api/devices/preserialized",
            Self::SecurityHeaders => "security-headers /api/devices/preserialized",
            Self::Stacked => "stacked /api/devices/preserialized",
            Self::Static0 => "0 ahead /scale/target",
            Self::Static10 => "10 ahead /scale/target",
            Self::Static100 => "100 ahead /scale/target",
            Self::Static1000 => "1000 ahead /scale/target",
            Self::Param0 => "0 ahead /scale/target/42",
            Self::Param10 => "10 ahead /scale/target/42",
            Self::Param100 => "100 ahead /scale/target/42",
            Self::Param1000 => "1000 ahead /scale/target/42",
            _ => self.path(),
        }
    }

    /// The variant a [`Variant::label`] names.
    pub fn of_label(label: &str) -> Option<Self> {
        Self::MEASURED.into_iter().find(|v| v.label() == label)
    }

    /// Whether it is loaded over TLS (on the server's HTTPS listener).
    pub fn tls(self) -> bool {
        matches!(self, Self::Https | Self::H2 | Self::DevicesHttps | Self::DevicesH2)
    }

    /// Whether it is loaded over HTTP/2 (h2c on the plain listener, ALPN
    /// `h2` over TLS).
    pub fn http2(self) -> bool {
        matches!(self, Self::H2c | Self::H2 | Self::DevicesH2c | Self::DevicesH2)
    }

    /// The path of its route, e.g. `/api/devices`; for [`Variant::Own`],
    /// `(own)`: its runs name their path in `route`.
    pub fn path(self) -> &'static str {
        self.route().map_or("(own)", RouteId::path)
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
