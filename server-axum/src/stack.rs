//! `--middleware` in axum: the layers of `tower-http`, as axum's guide
//! ("Middleware") builds an application with them, each on every route.

use axum::Router;
use axum::http::{HeaderName, HeaderValue, Method, StatusCode};
use common::middleware::{CORS_ORIGIN, LogSink, Middleware, SECURITY_HEADERS, TIMEOUT};
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use tracing_subscriber::filter::LevelFilter;

/// `router` behind the layers `on`, in the order of axum's guide from the
/// outside in: request id set, trace, request id propagated, timeout, CORS,
/// security headers, compression (whatever the order of `on`).
pub fn layered(router: Router, on: &[Middleware]) -> Router {
    let has = |m| on.contains(&m);
    let mut router = router;
    // `Router::layer` wraps what is there: from the inside out.
    if has(Middleware::Compression) {
        router = router.layer(CompressionLayer::new());
    }
    if has(Middleware::SecurityHeaders) {
        for (name, value) in SECURITY_HEADERS {
            let (name, value) = (HeaderName::from_static(name), HeaderValue::from_static(value));
            router = router.layer(SetResponseHeaderLayer::if_not_present(name, value));
        }
    }
    if has(Middleware::Cors) {
        let cors = CorsLayer::new().allow_origin(HeaderValue::from_static(CORS_ORIGIN)).allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
        ]);
        router = router.layer(cors);
    }
    if has(Middleware::Timeout) {
        router = router.layer(TimeoutLayer::with_status_code(StatusCode::REQUEST_TIMEOUT, TIMEOUT));
    }
    if has(Middleware::RequestId) {
        router = router.layer(PropagateRequestIdLayer::x_request_id());
    }
    if has(Middleware::Trace) {
        router = router.layer(TraceLayer::new_for_http());
    }
    if has(Middleware::RequestId) {
        router = router.layer(SetRequestIdLayer::x_request_id(MakeRequestUuid));
    }
    router
}

/// With `trace` in `on`: the subscriber `TraceLayer`'s spans and events
/// (DEBUG, its default level) are formatted by, one line each, into a
/// [`LogSink`]; once per process (a second call keeps the first).
pub fn init_trace(on: &[Middleware]) {
    if on.contains(&Middleware::Trace) {
        let _ = tracing_subscriber::fmt().with_max_level(LevelFilter::DEBUG).with_writer(|| LogSink).try_init();
    }
}
