//! The common routes served with actix-web, in its idiomatic style: routes
//! registered by [`app`] (for `App::configure`), state as app data read
//! with the `web::ThinData` extractor, and the state layers as
//! `middleware::from_fn` on nested scopes.
//!
//! `ThinData<T>` clones `T` on every extraction, so each layer and the handler
//! of `/state/fat` clone all 35 fields of `FatState`.
//!
//! The fortunes routes call SQLite, which blocks, through `web::block`
//! (actix-web's way to run blocking work on a thread pool, off the worker's
//! event loop); `/fortunes/cached` serves its page without blocking.

mod extract;
mod scale;
pub mod stack;

use std::process::ExitCode;
use std::sync::Arc;

use actix_http::Request;
use actix_service::IntoServiceFactory;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{AppConfig, Service, ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::http::{StatusCode, header};
use actix_web::middleware::{Next, from_fn};
use actix_web::web::{self, ThinData};
use actix_web::{App, Error, HttpRequest, HttpResponse, HttpServer, guard};
use common::process::{bind_failed, listening_line_of, served, signals_failed, tls_failed, with_fortunes};
use common::routes::{HEALTHZ_BODY, PLAINTEXT_BODY};
use common::{
    AppState, CatalogError, ContentType, Device, DeviceCatalog, FatState, FortuneError, Fortunes, Listener,
    MAX_BODY_BYTES, MAX_FORTUNE_BYTES, RouteId, ServerConfig, ShutdownSignals, Stop, check_content_length,
    declared_length_over,
};

/// actix-web's graceful stop gives workers this long, in whole seconds
/// (default 30), before it drops their connections. Its workers look once a
/// second, so a connection in the middle of a request keeps a graceful stop
/// at least 1 s whatever the value: the stop deadline
/// (`common::process::STOP_GRACE`) ends the process first.
const SHUTDOWN_TIMEOUT_S: u64 = 1;

/// Returns the function that registers every route of `common::ROUTES` (and
/// `PUT /api/devices`, `POST /fortunes`), with `layers` state layers in front
/// of each `/state/*` route, and the states and `fortunes` as app data, then
/// `fillers` routes of each kind and the scale targets. Every worker's `App`
/// calls it; all share one set of states.
pub fn app(
    layers: usize,
    fillers: u16,
    fortunes: Fortunes,
) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
    let fat = FatState::new();
    let arc = AppState::new();
    let catalog = Arc::new(DeviceCatalog::new());
    move |cfg| {
        cfg.app_data(ThinData(fat.clone()))
            .app_data(ThinData(arc.clone()))
            .app_data(ThinData(Arc::clone(&catalog)))
            .app_data(ThinData(fortunes.clone()))
            .route(RouteId::Healthz.path(), get_or_head().to(healthz))
            .route(RouteId::Plaintext.path(), get_or_head().to(plaintext))
            .service(
                web::resource(RouteId::Devices.path())
                    .route(get_or_head().to(devices))
                    .route(web::put().to(replace_devices)),
            )
            .route(RouteId::DevicesPreserialized.path(), get_or_head().to(preserialized))
            .route(RouteId::DevicesCached.path(), get_or_head().to(cached))
            .service(
                web::resource(RouteId::Fortunes.path())
                    .route(get_or_head().to(fortunes_page))
                    .route(web::post().to(add_fortune)),
            )
            .route(RouteId::FortunesCached.path(), get_or_head().to(fortunes_cached))
            .route(RouteId::BlockingInline.path(), get_or_head().to(blocking_inline))
            .route(RouteId::BlockingOffloaded.path(), get_or_head().to(blocking_offloaded))
            .configure(extract::routes);
        state_route::<FatState>(cfg, RouteId::StateFat, layers);
        state_route::<AppState>(cfg, RouteId::StateArc, layers);
        scale::routes(cfg, fillers);
    }
}

/// A route for `GET` and `HEAD`. actix-web's `web::get()` matches `GET` only,
/// where axum's `get` and Rocket's `#[get]` answer `HEAD` too; actix-http then
/// sends the `GET` response's headers, `Content-Length` included, without the body.
fn get_or_head() -> actix_web::Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// Registers one `/state/*` route behind `layers` middleware layers, each
/// obtaining `S`. A scope's middleware type is fixed at compile time, so each
/// layer is an empty-prefix scope wrapping the next one.
fn state_route<S>(cfg: &mut web::ServiceConfig, id: RouteId, layers: usize)
where
    S: AsRef<FatState> + Clone + 'static,
{
    let endpoint = || web::resource("").route(get_or_head().to(state_name::<S>));
    if layers == 0 {
        cfg.service(web::scope(id.path()).service(endpoint()));
        return;
    }
    let mut scope = web::scope("").wrap(from_fn(state_layer::<S>)).service(endpoint());
    for _ in 1..layers {
        scope = web::scope("").wrap(from_fn(state_layer::<S>)).service(scope);
    }
    cfg.service(web::scope(id.path()).service(scope));
}

async fn healthz() -> &'static str {
    HEALTHZ_BODY
}

async fn plaintext() -> &'static str {
    PLAINTEXT_BODY
}

async fn devices(ThinData(catalog): ThinData<Arc<DeviceCatalog>>) -> web::Json<Vec<Device>> {
    web::Json(catalog.devices())
}

async fn cached(ThinData(catalog): ThinData<Arc<DeviceCatalog>>) -> HttpResponse {
    HttpResponse::Ok().insert_header((header::CONTENT_TYPE, ContentType::Json.as_str())).body(catalog.cached_json())
}

/// `PUT /api/devices`: the application's 64 KiB rule decides at every size.
/// The body is taken as the raw `web::Payload` stream, so actix-web's
/// `PayloadConfig` limit (256 KiB, its own refusal text) never applies: a
/// declared length over the limit is refused before a byte is read, a
/// chunked body is read with `Payload::to_bytes_limited`. actix-http answers
/// `Expect: 100-continue` before any handler runs (actix-web does not expose
/// its expect service), and after an early answer it lingers, reading and
/// dropping the rest of the body for its `client_disconnect_timeout` (1 s),
/// then closes the connection.
async fn replace_devices(
    ThinData(catalog): ThinData<Arc<DeviceCatalog>>,
    request: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let content_length = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    let read = match check_content_length(content_length) {
        Ok(()) => read_limited(payload).await,
        Err(e) => Err(e),
    };
    match read.and_then(|body| catalog.replace_from_json(&body)) {
        Ok(()) => HttpResponse::NoContent().finish(),
        Err(e) => HttpResponse::build(StatusCode::from_u16(e.status()).unwrap_or(StatusCode::BAD_REQUEST))
            .insert_header((header::CONTENT_TYPE, ContentType::TextPlain.as_str()))
            .body(e.to_string()),
    }
}

/// The body, if it is at most [`MAX_BODY_BYTES`].
async fn read_limited(payload: web::Payload) -> Result<web::Bytes, CatalogError> {
    match payload.to_bytes_limited(MAX_BODY_BYTES).await {
        Ok(Ok(body)) => Ok(body),
        Ok(Err(e)) => Err(CatalogError::Invalid(format!("cannot read the body: {e}"))),
        Err(_over_the_limit) => Err(CatalogError::TooLarge),
    }
}

/// A one-line `text/plain` answer with `status` (400, 413, 500).
fn refusal(status: u16, reason: String) -> HttpResponse {
    HttpResponse::build(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .insert_header((header::CONTENT_TYPE, ContentType::TextPlain.as_str()))
        .body(reason)
}

fn html(page: web::Bytes) -> HttpResponse {
    HttpResponse::Ok().insert_header((header::CONTENT_TYPE, ContentType::Html.as_str())).body(page)
}

async fn fortunes_page(ThinData(fortunes): ThinData<Fortunes>) -> HttpResponse {
    match web::block(move || fortunes.render_page()).await {
        Ok(Ok(page)) => html(page),
        Ok(Err(e)) => refusal(e.status(), e.to_string()),
        Err(e) => refusal(500, e.to_string()),
    }
}

async fn fortunes_cached(ThinData(fortunes): ThinData<Fortunes>) -> HttpResponse {
    html(fortunes.cached_page())
}

fn seed_read(read: Result<web::Bytes, FortuneError>) -> HttpResponse {
    match read {
        Ok(body) => HttpResponse::Ok().insert_header((header::CONTENT_TYPE, ContentType::Json.as_str())).body(body),
        Err(e) => refusal(e.status(), e.to_string()),
    }
}

/// `GET /blocking/inline`: the blocking read on the worker's event loop,
/// what actix-web's docs warn against (the `blocking` scenario measures it).
async fn blocking_inline(ThinData(fortunes): ThinData<Fortunes>) -> HttpResponse {
    seed_read(fortunes.read_seed())
}

/// `GET /blocking/offloaded`: the same read through `web::block`.
async fn blocking_offloaded(ThinData(fortunes): ThinData<Fortunes>) -> HttpResponse {
    match web::block(move || fortunes.read_seed()).await {
        Ok(read) => seed_read(read),
        Err(e) => refusal(500, e.to_string()),
    }
}

/// `POST /fortunes`: the body read as `PUT /api/devices` reads it (a
/// declared length over the 1 KiB limit refused unread, a chunked one read
/// up to the limit, actix-http lingering after an early answer), then the
/// row added on the blocking pool.
async fn add_fortune(
    ThinData(fortunes): ThinData<Fortunes>,
    request: HttpRequest,
    payload: web::Payload,
) -> HttpResponse {
    let content_length = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared_length_over(content_length, MAX_FORTUNE_BYTES) {
        return refusal(413, FortuneError::TooLarge.to_string());
    }
    let body = match payload.to_bytes_limited(MAX_FORTUNE_BYTES).await {
        Ok(Ok(body)) => body,
        Ok(Err(e)) => return refusal(400, format!("cannot read the body: {e}")),
        Err(_over_the_limit) => return refusal(413, FortuneError::TooLarge.to_string()),
    };
    match web::block(move || fortunes.add(&body)).await {
        Ok(Ok(())) => HttpResponse::NoContent().finish(),
        Ok(Err(e)) => refusal(e.status(), e.to_string()),
        Err(e) => refusal(500, e.to_string()),
    }
}

async fn preserialized() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, ContentType::Json.as_str()))
        .body(common::preserialized_devices())
}

async fn state_name<S: AsRef<FatState>>(ThinData(state): ThinData<S>) -> String {
    state.as_ref().app_name.clone()
}

async fn state_layer<S: AsRef<FatState> + Clone + 'static>(
    ThinData(state): ThinData<S>,
    request: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    common::touch(&state);
    next.call(request).await
}

/// Runs the server until SIGTERM (graceful stop) or SIGINT (immediate stop),
/// as actix-web's own signal handling does, but with the handlers installed
/// before the listening line is printed: creates the fortunes database
/// (removed once the server has stopped), binds, prints the listening line,
/// serves with `config.workers` workers: HTTP/1.1 and h2c (prior
/// knowledge) on a plain listener, h2 or HTTP/1.1 by ALPN on a TLS one
/// (feature `http2`, with actix-http's HTTP/2 settings).
///
/// The graceful stop completes in-flight responses and closes idle
/// connections; it is raced against the stop deadline
/// (`common::process::STOP_GRACE`), after which the connections still open
/// (a client in the middle of a request) are closed as the process exits.
///
/// Returns the exit code of `common::process`.
pub fn run(config: ServerConfig) -> ExitCode {
    with_fortunes(config.workers, |fortunes| serve(config, fortunes))
}

fn serve(config: ServerConfig, fortunes: Fortunes) -> ExitCode {
    let routes = app(config.layers, config.filler_routes, fortunes);
    // Without `--middleware`, the app as actix-web's defaults have it.
    match config.middleware.clone() {
        None => serve_app(config, move || App::new().configure(routes.clone())),
        Some(on) => {
            stack::init_trace(&on);
            serve_app(config, move || stack::layered(routes.clone(), &on))
        }
    }
}

/// Serves the apps `factory` makes (one per worker), as [`run`] says.
fn serve_app<F, I, S, B>(config: ServerConfig, factory: F) -> ExitCode
where
    F: Fn() -> I + Send + Clone + 'static,
    I: IntoServiceFactory<S, Request>,
    S: ServiceFactory<Request, Config = AppConfig> + 'static,
    S::Error: Into<Error> + 'static,
    S::InitError: std::fmt::Debug,
    S::Response: Into<actix_web::dev::Response<B>> + 'static,
    <S::Service as Service<Request>>::Future: 'static,
    S::Service: 'static,
    B: MessageBody + 'static,
{
    actix_web::rt::System::new().block_on(async move {
        let server = HttpServer::new(factory)
            .workers(config.workers.get())
            .shutdown_timeout(SHUTDOWN_TIMEOUT_S)
            .disable_signals();
        // Unset, actix-web keeps the OS default (Nagle's algorithm on).
        let mut server = if config.tcp_nodelay { server.tcp_nodelay(true) } else { server };
        for listener in config.listeners() {
            let bound = match (listener.tls, &config.tls) {
                (true, Some(identity)) => match identity.server_config() {
                    Ok(tls) => {
                        // actix-http puts its own ALPN list (`h2`, then
                        // `http/1.1`: common's offer) in front of the one
                        // it is given, so it is given none.
                        let mut tls = Arc::unwrap_or_clone(tls);
                        tls.alpn_protocols.clear();
                        server.bind_rustls_0_23(listener.addr, tls)
                    }
                    Err(e) => return tls_failed(&e),
                },
                // HTTP/1.1 and HTTP/2 with prior knowledge (h2c), told apart
                // by the first 12 bytes a connection sends (a peek).
                _ => server.bind_auto_h2c(listener.addr),
            };
            server = match bound {
                Ok(s) => s,
                Err(e) => return bind_failed(listener.addr, &e),
            };
        }
        let signals = match ShutdownSignals::install() {
            Ok(s) => s,
            Err(e) => return signals_failed(&e),
        };
        // In the order bound: the listeners' order.
        for (addr, scheme) in server.addrs_with_scheme() {
            println!("{}", listening_line_of(Listener { addr, tls: scheme == "https" }));
        }
        let server = server.run();
        let handle = server.handle();
        let (stop, deadline) = signals.with_deadline();
        // As actix-web's own handling: SIGTERM stops gracefully, SIGINT at once.
        actix_web::rt::spawn(async move {
            let graceful = stop.await == Stop::Terminate;
            handle.stop(graceful).await;
        });
        served(tokio::select! {
            served = server => served,
            () = deadline => Ok(()),
        })
    })
}
