//! The common routes served with axum, in axum's idiomatic style: a `Router`
//! built by [`app`], state through the `State` extractor, and the state layers
//! as `middleware::from_fn_with_state`.
//!
//! axum's `State` extractor clones the state for every extraction, so each
//! layer and the handler of `/state/fat` clone all 35 fields of `FatState`.
//!
//! The fortunes routes call SQLite, which blocks, through
//! `tokio::task::spawn_blocking` (tokio's blocking thread pool, off the async
//! workers); `/fortunes/cached` serves its page without blocking.

use std::process::ExitCode;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use common::process::{bind_failed, fortunes_database, listening_line, signals_failed, tokio_runtime};
use common::routes::{HEALTHZ_BODY, PLAINTEXT_BODY};
use common::{
    AppState, ContentType, Device, DeviceCatalog, FatState, FortuneError, Fortunes, MAX_FORTUNE_BYTES, RouteId,
    ServerConfig, ShutdownSignals,
};

/// Builds the application: every route of `common::ROUTES` (and `PUT
/// /api/devices`, `POST /fortunes` on `fortunes`), with `layers` state
/// layers in front of each `/state/*` route.
pub fn app(layers: usize, fortunes: Fortunes) -> Router {
    let catalog = Router::new()
        .route(RouteId::Devices.path(), get(devices).put(replace_devices))
        .route(RouteId::DevicesCached.path(), get(cached))
        .with_state(Arc::new(DeviceCatalog::new()));
    let fortunes = Router::new()
        .route(
            RouteId::Fortunes.path(),
            get(fortunes_page).post(add_fortune).layer(DefaultBodyLimit::max(MAX_FORTUNE_BYTES)),
        )
        .route(RouteId::FortunesCached.path(), get(fortunes_cached))
        .with_state(fortunes);
    Router::new()
        .route(RouteId::Healthz.path(), get(healthz))
        .route(RouteId::Plaintext.path(), get(plaintext))
        .route(RouteId::DevicesPreserialized.path(), get(preserialized))
        .merge(catalog)
        .merge(fortunes)
        .merge(state_route(RouteId::StateFat, FatState::new(), layers))
        .merge(state_route(RouteId::StateArc, AppState::new(), layers))
}

/// One `/state/*` route behind `layers` middleware layers, each obtaining `S`.
fn state_route<S>(id: RouteId, state: S, layers: usize) -> Router
where
    S: AsRef<FatState> + Clone + Send + Sync + 'static,
{
    let mut router = Router::new().route(id.path(), get(state_name::<S>));
    for _ in 0..layers {
        router = router.route_layer(middleware::from_fn_with_state(state.clone(), state_layer::<S>));
    }
    router.with_state(state)
}

async fn healthz() -> &'static str {
    HEALTHZ_BODY
}

async fn plaintext() -> &'static str {
    PLAINTEXT_BODY
}

async fn devices(State(catalog): State<Arc<DeviceCatalog>>) -> Json<Vec<Device>> {
    Json(catalog.devices())
}

async fn preserialized() -> impl IntoResponse {
    ([(header::CONTENT_TYPE, ContentType::Json.as_str())], common::preserialized_devices())
}

async fn cached(State(catalog): State<Arc<DeviceCatalog>>) -> impl IntoResponse {
    ([(header::CONTENT_TYPE, ContentType::Json.as_str())], catalog.cached_json())
}

async fn replace_devices(State(catalog): State<Arc<DeviceCatalog>>, body: Bytes) -> Response {
    match catalog.replace_from_json(&body) {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => (StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST), e.to_string()).into_response(),
    }
}

/// A one-line answer with `status` (400, 413, 500); a `String` is `text/plain; charset=utf-8`.
fn refusal(status: u16, reason: String) -> Response {
    (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), reason).into_response()
}

fn html(page: Bytes) -> Response {
    ([(header::CONTENT_TYPE, ContentType::Html.as_str())], page).into_response()
}

async fn fortunes_page(State(fortunes): State<Fortunes>) -> Response {
    match tokio::task::spawn_blocking(move || fortunes.render_page()).await {
        Ok(Ok(page)) => html(page),
        Ok(Err(e)) => refusal(e.status(), e.to_string()),
        Err(e) => refusal(500, e.to_string()),
    }
}

async fn fortunes_cached(State(fortunes): State<Fortunes>) -> Response {
    html(fortunes.cached_page())
}

async fn add_fortune(State(fortunes): State<Fortunes>, body: Result<Bytes, BytesRejection>) -> Response {
    // `DefaultBodyLimit` on the route: a longer body is refused unread.
    let body = match body {
        Ok(body) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return refusal(413, FortuneError::TooLarge.to_string());
        }
        Err(e) => return refusal(400, format!("cannot read the body: {}", e.body_text())),
    };
    match tokio::task::spawn_blocking(move || fortunes.add(&body)).await {
        Ok(Ok(())) => StatusCode::NO_CONTENT.into_response(),
        Ok(Err(e)) => refusal(e.status(), e.to_string()),
        Err(e) => refusal(500, e.to_string()),
    }
}

async fn state_name<S: AsRef<FatState>>(State(state): State<S>) -> String {
    state.as_ref().app_name.clone()
}

async fn state_layer<S: AsRef<FatState>>(State(state): State<S>, request: Request, next: Next) -> Response {
    common::touch(&state);
    next.run(request).await
}

/// Runs the server until SIGTERM or SIGINT: creates the fortunes database
/// (removed once the server has stopped), binds, prints the listening line,
/// serves on a multi-threaded tokio runtime of `config.workers` threads.
///
/// Returns exit code 0 after a clean stop, 2 when the address cannot be bound,
/// 1 when the database cannot be created or on any other I/O error.
pub fn run(config: ServerConfig) -> ExitCode {
    let (database, fortunes) = match fortunes_database(config.workers) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let code = serve(config, fortunes);
    drop(database);
    code
}

fn serve(config: ServerConfig, fortunes: Fortunes) -> ExitCode {
    let runtime = match tokio_runtime(config.workers) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::bind(config.addr).await {
            Ok(l) => l,
            Err(e) => return bind_failed(config.addr, &e),
        };
        let signals = match ShutdownSignals::install() {
            Ok(s) => s,
            Err(e) => return signals_failed(&e),
        };
        match listener.local_addr() {
            Ok(addr) => println!("{}", listening_line(addr)),
            Err(e) => return bind_failed(config.addr, &e),
        }
        let shutdown = async move {
            signals.recv().await;
        };
        match axum::serve(listener, app(config.layers, fortunes)).with_graceful_shutdown(shutdown).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
