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

use std::process::ExitCode;
use std::sync::Arc;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::{StatusCode, header};
use actix_web::middleware::{Next, from_fn};
use actix_web::web::{self, ThinData};
use actix_web::{App, Error, HttpResponse, HttpServer, guard};
use common::process::fortunes_database;
use common::process::{bind_failed, listening_line, signals_failed};
use common::routes::{HEALTHZ_BODY, PLAINTEXT_BODY};
use common::{
    AppState, ContentType, Device, DeviceCatalog, FatState, FortuneError, Fortunes, MAX_FORTUNE_BYTES, RouteId,
    ServerConfig, ShutdownSignals, Stop,
};

/// Returns the function that registers every route of `common::ROUTES` (and
/// `PUT /api/devices`, `POST /fortunes`), with `layers` state layers in front
/// of each `/state/*` route, and the states and `fortunes` as app data. Every
/// worker's `App` calls it; all share one set of states.
pub fn app(layers: usize, fortunes: Fortunes) -> impl Fn(&mut web::ServiceConfig) + Clone + Send + 'static {
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
            .route(RouteId::FortunesCached.path(), get_or_head().to(fortunes_cached));
        state_route::<FatState>(cfg, RouteId::StateFat, layers);
        state_route::<AppState>(cfg, RouteId::StateArc, layers);
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

async fn replace_devices(ThinData(catalog): ThinData<Arc<DeviceCatalog>>, body: web::Bytes) -> HttpResponse {
    match catalog.replace_from_json(&body) {
        Ok(()) => HttpResponse::NoContent().finish(),
        Err(e) => refusal(e.status(), e.to_string()),
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

async fn add_fortune(ThinData(fortunes): ThinData<Fortunes>, body: web::Payload) -> HttpResponse {
    // Reads at most the limit; a longer body is refused unread.
    let body = match body.to_bytes_limited(MAX_FORTUNE_BYTES).await {
        Ok(Ok(body)) => body,
        Ok(Err(e)) => return refusal(400, format!("cannot read the body: {e}")),
        Err(_) => return refusal(413, FortuneError::TooLarge.to_string()),
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
/// serves with `config.workers` workers.
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
    actix_web::rt::System::new().block_on(async move {
        let routes = app(config.layers, fortunes);
        let server = HttpServer::new(move || App::new().configure(routes.clone()))
            .workers(config.workers.get())
            .disable_signals();
        let server = match server.bind(config.addr) {
            Ok(s) => s,
            Err(e) => return bind_failed(config.addr, &e),
        };
        let signals = match ShutdownSignals::install() {
            Ok(s) => s,
            Err(e) => return signals_failed(&e),
        };
        if let Some(addr) = server.addrs().first() {
            println!("{}", listening_line(*addr));
        }
        let server = server.run();
        let handle = server.handle();
        // As actix-web's own handling: SIGTERM stops gracefully, SIGINT at once.
        actix_web::rt::spawn(async move {
            let graceful = signals.recv().await == Stop::Terminate;
            handle.stop(graceful).await;
        });
        match server.await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        }
    })
}
