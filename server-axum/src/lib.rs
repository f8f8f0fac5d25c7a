//! The common routes served with axum, in axum's idiomatic style: a `Router`
//! built by [`app`], state through the `State` extractor, and the state layers
//! as `middleware::from_fn_with_state`.
//!
//! axum's `State` extractor clones the state for every extraction, so each
//! layer and the handler of `/state/fat` clone all 35 fields of `FatState`;
//! and each `from_fn_with_state` layer also clones, on every call, its own
//! copy of the state and the service it wraps (the layers below it, with
//! their states). Counted in `tests/routes.rs`: (L + 1)(L + 3) clones of
//! `FatState` per request through L layers (3 at 0 layers, 8 at 1, 143 at
//! 10), none of `AppState`'s fields.
//!
//! The fortunes routes call SQLite, which blocks, through
//! `tokio::task::spawn_blocking` (tokio's blocking thread pool, off the async
//! workers); `/fortunes/cached` serves its page without blocking.

use std::future::IntoFuture;
use std::process::ExitCode;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use common::process::{bind_failed, listening_line_of, on_tokio, served, signals_failed, tls_failed};
use common::routes::{HEALTHZ_BODY, PLAINTEXT_BODY};
use common::{
    AppState, CatalogError, ContentType, Device, DeviceCatalog, FatState, FortuneError, Fortunes, Listener,
    MAX_BODY_BYTES, MAX_FORTUNE_BYTES, REFUSED_BODY_LINGER, RouteId, ServerConfig, ShutdownSignals, Unread,
    declared_length_over,
};
use http_body_util::{BodyExt, LengthLimitError, Limited};

use crate::tls::TlsListener;

mod extract;
mod scale;
pub mod stack;
mod tls;

/// Builds the application: every route of `common::ROUTES` (and `PUT
/// /api/devices`, `POST /fortunes` on `fortunes`), with `layers` state
/// layers in front of each `/state/*` route and `fillers` routes of each
/// kind beside the scale targets.
pub fn app(layers: usize, fillers: u16, fortunes: Fortunes) -> Router {
    let catalog = Router::new()
        .route(RouteId::Devices.path(), get(devices).put(replace_devices))
        .route(RouteId::DevicesCached.path(), get(cached))
        .with_state(Arc::new(DeviceCatalog::new()));
    let fortunes = Router::new()
        .route(RouteId::Fortunes.path(), get(fortunes_page).post(add_fortune))
        .route(RouteId::FortunesCached.path(), get(fortunes_cached))
        .route(RouteId::BlockingInline.path(), get(blocking_inline))
        .route(RouteId::BlockingOffloaded.path(), get(blocking_offloaded))
        .with_state(fortunes);
    Router::new()
        .route(RouteId::Healthz.path(), get(healthz))
        .route(RouteId::Plaintext.path(), get(plaintext))
        .route(RouteId::DevicesPreserialized.path(), get(preserialized))
        .merge(catalog)
        .merge(fortunes)
        .merge(state_route(RouteId::StateFat, FatState::new(), layers))
        .merge(state_route(RouteId::StateArc, AppState::new(), layers))
        .merge(extract::routes())
        .merge(scale::routes(fillers))
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

/// `PUT /api/devices`: the application's 64 KiB rule decides at every size.
/// The body is taken raw, so axum's `DefaultBodyLimit` (2 MB, its own
/// refusal text) never applies: a declared length over the limit is refused
/// before a byte is read, so hyper never sends `100 Continue`; a chunked body
/// is read through `http_body_util::Limited` ([`read_body`]).
async fn replace_devices(State(catalog): State<Arc<DeviceCatalog>>, request: Request) -> Response {
    let result = match read_body(request, MAX_BODY_BYTES).await {
        Ok(bytes) => catalog.replace_from_json(&bytes),
        Err(Unread::TooLarge) => Err(CatalogError::TooLarge),
        Err(Unread::Broken(reason)) => Err(CatalogError::Invalid(reason)),
    };
    match result {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => refusal(e.status(), e.to_string()),
    }
}

/// A one-line answer with `status` (400, 413, 500); a `String` is `text/plain; charset=utf-8`.
fn refusal(status: u16, reason: String) -> Response {
    (StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), reason).into_response()
}

/// The body of `request` if it is at most `limit` bytes. A declared length
/// over the limit is refused before a byte is read; otherwise the body is
/// read through `http_body_util::Limited`. A refused body that the client is
/// sending anyway is read and dropped ([`linger`]).
async fn read_body(request: Request, limit: usize) -> Result<Bytes, Unread> {
    let (parts, mut body) = request.into_parts();
    let content_length = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared_length_over(content_length, limit) {
        // Unless the client waits for `100 Continue` (never sent: the body is
        // not read), it is sending the body anyway.
        if !expects_continue(&parts.headers) {
            linger(body).await;
        }
        return Err(Unread::TooLarge);
    }
    match Limited::new(&mut body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            linger(body).await;
            Err(Unread::TooLarge)
        }
        Err(e) => Err(Unread::Broken(format!("cannot read the body: {e}"))),
    }
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

fn seed_read(read: Result<Bytes, FortuneError>) -> Response {
    match read {
        Ok(body) => ([(header::CONTENT_TYPE, ContentType::Json.as_str())], body).into_response(),
        Err(e) => refusal(e.status(), e.to_string()),
    }
}

/// `GET /blocking/inline`: the blocking read on the async worker, what
/// tokio's guide warns against (the `blocking` scenario measures its cost).
async fn blocking_inline(State(fortunes): State<Fortunes>) -> Response {
    seed_read(fortunes.read_seed())
}

/// `GET /blocking/offloaded`: the same read on tokio's blocking pool.
async fn blocking_offloaded(State(fortunes): State<Fortunes>) -> Response {
    match tokio::task::spawn_blocking(move || fortunes.read_seed()).await {
        Ok(read) => seed_read(read),
        Err(e) => refusal(500, e.to_string()),
    }
}

/// `POST /fortunes`: the body read as `PUT /api/devices` reads it, with the
/// 1 KiB limit ([`read_body`]), then the row added on the blocking pool.
async fn add_fortune(State(fortunes): State<Fortunes>, request: Request) -> Response {
    let body = match read_body(request, MAX_FORTUNE_BYTES).await {
        Ok(body) => body,
        Err(Unread::TooLarge) => return refusal(413, FortuneError::TooLarge.to_string()),
        Err(Unread::Broken(reason)) => return refusal(400, reason),
    };
    match tokio::task::spawn_blocking(move || fortunes.add(&body)).await {
        Ok(Ok(())) => StatusCode::NO_CONTENT.into_response(),
        Ok(Err(e)) => refusal(e.status(), e.to_string()),
        Err(e) => refusal(500, e.to_string()),
    }
}

/// Whether the client waits for `100 Continue` before it sends the body.
fn expects_continue(headers: &HeaderMap) -> bool {
    headers.get(header::EXPECT).is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"))
}

/// Reads and drops the rest of a refused body that the client is sending
/// anyway, for at most [`REFUSED_BODY_LINGER`] (whose doc says why).
async fn linger(mut body: Body) {
    let drain = async { while let Some(Ok(_)) = body.frame().await {} };
    let _ = tokio::time::timeout(REFUSED_BODY_LINGER, drain).await;
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
/// `axum::serve` (feature `http2`) reads each connection's first bytes and
/// serves HTTP/1.1 or HTTP/2 (hyper-util's auto builder): h2c with prior
/// knowledge on the plain listener, h2 after ALPN on the TLS one, with
/// hyper's HTTP/2 settings.
///
/// On the signal, axum's graceful shutdown stops accepting, completes
/// in-flight responses and closes idle connections, but waits for ever for
/// a connection in the middle of a request (half a head or half a body). So
/// it is raced against the stop deadline (`common::process::STOP_GRACE`):
/// the connections still open then are closed as the process exits.
///
/// Returns the exit code of `common::process`.
pub fn run(config: ServerConfig, how: Serve) -> ExitCode {
    on_tokio(config.workers, |fortunes, runtime| runtime.block_on(serve(config, how, fortunes)))
}

/// What `axum::serve` is given (`--serve`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Serve {
    /// The `Router` itself, as axum's examples serve it: for every
    /// connection axum calls `Router::with_state(())` on a clone of it,
    /// which builds that connection a route table of its own.
    #[default]
    Router,
    /// `Router::into_make_service()`: every connection clones the one
    /// router, an `Arc`.
    MakeService,
}

/// Serves `router` on `listener` as `how` says, until `shutdown`.
fn spawn_serve<L>(
    serving: &mut tokio::task::JoinSet<std::io::Result<()>>,
    listener: L,
    router: Router,
    how: Serve,
    shutdown: impl Future<Output = ()> + Send + 'static,
) where
    L: axum::serve::Listener,
    L::Addr: std::fmt::Debug,
{
    match how {
        Serve::Router => serving.spawn(axum::serve(listener, router).with_graceful_shutdown(shutdown).into_future()),
        Serve::MakeService => serving
            .spawn(axum::serve(listener, router.into_make_service()).with_graceful_shutdown(shutdown).into_future()),
    };
}

async fn serve(config: ServerConfig, how: Serve, fortunes: Fortunes) -> ExitCode {
    let mut bound = Vec::new();
    for listener in config.listeners() {
        match tokio::net::TcpListener::bind(listener.addr).await {
            Ok(tcp) => bound.push((listener, tcp)),
            Err(e) => return bind_failed(listener.addr, &e),
        }
    }
    let signals = match ShutdownSignals::install() {
        Ok(s) => s,
        Err(e) => return signals_failed(&e),
    };
    let (stop, deadline) = signals.with_deadline();
    // Every listener stops on the one signal.
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        stop.await;
        let _ = stopping.send(true);
    });
    let on = config.middleware.as_deref().unwrap_or_default();
    stack::init_trace(on);
    let router = stack::layered(app(config.layers, config.filler_routes, fortunes), on);
    let mut serving = tokio::task::JoinSet::new();
    for (listener, tcp) in bound {
        let addr = match tcp.local_addr() {
            Ok(addr) => addr,
            Err(e) => return bind_failed(listener.addr, &e),
        };
        let mut stopped = stopped.clone();
        let shutdown = async move {
            let _ = stopped.wait_for(|s| *s).await;
        };
        let router = router.clone();
        let nodelay = config.tcp_nodelay;
        match (listener.tls, &config.tls) {
            (true, Some(identity)) => {
                let tls = match identity.server_config().map(|c| TlsListener::new(tcp, c, nodelay)) {
                    Ok(Ok(tls)) => tls,
                    Ok(Err(e)) => return bind_failed(listener.addr, &e),
                    Err(e) => return tls_failed(&e),
                };
                spawn_serve(&mut serving, tls, router, how, shutdown);
            }
            // axum::serve leaves Nagle's algorithm on; `tap_io` is its way to set options.
            _ if nodelay => {
                let tcp = tcp.tap_io(|io| {
                    let _ = io.set_nodelay(true);
                });
                spawn_serve(&mut serving, tcp, router, how, shutdown);
            }
            _ => {
                spawn_serve(&mut serving, tcp, router, how, shutdown);
            }
        }
        println!("{}", listening_line_of(Listener { addr, tls: listener.tls }));
    }
    served(tokio::select! {
        served = serving.join_all() => served.into_iter().collect::<Result<(), _>>(),
        () = deadline => Ok(()),
    })
}
