//! The common routes served with Rocket, in Rocket's idiomatic style: handlers
//! declared with `#[get]` and mounted at the table's paths, state managed with
//! `manage` and borrowed through `&State<T>`, and the state layers as request
//! fairings that obtain the state with the `&State<T>` request guard.
//!
//! Rocket lends its managed state by reference, so no layer and no handler
//! clones `FatState`: expect the fat/arc delta to be near zero. Fairings
//! cannot be scoped to routes: each of the `layers` fairings runs on every
//! request and returns at once for paths outside `/state/*`.
//!
//! The fortunes routes call SQLite, which blocks, through
//! `rocket::tokio::task::spawn_blocking` (Rocket's guide: blocking I/O goes
//! to tokio's blocking thread pool, off the async workers);
//! `/fortunes/cached` serves its page without blocking.

mod extract;
mod scale;
pub mod stack;

use std::convert::Infallible;
use std::io::Cursor;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use bytes::Bytes;
use common::process::{bind_failed, listening_line_of, on_tokio, signals_failed};
use common::routes::{HEALTHZ_BODY, PLAINTEXT_BODY};
use common::{
    AppState, CatalogError, Device, DeviceCatalog, FatState, FortuneError, Fortunes, Listener, MAX_BODY_BYTES,
    MAX_FORTUNE_BYTES, REFUSED_BODY_LINGER, RouteId, ServerConfig, ShutdownSignals, Unread, declared_length_over,
};
use rocket::config::{LogLevel, TlsConfig};
use rocket::data::{ByteUnit, Data, DataStream};
use rocket::fairing::AdHoc;
use rocket::http::{ContentType, Status};
use rocket::request::{FromRequest, Outcome};
use rocket::response::{Responder, Response};
use rocket::serde::json::Json;
use rocket::tokio::task::spawn_blocking;
use rocket::{Build, Ignite, Request, Rocket, State, get, post, put, routes};
use tokio::io::{AsyncReadExt, sink};

/// Builds the application: every route of `common::ROUTES` (and `PUT
/// /api/devices`, `POST /fortunes` on `fortunes`), `fillers` routes of each
/// kind ahead of the scale targets, and `layers` state fairings, on top of
/// `figment` (address, port, workers, …).
pub fn app(figment: rocket::figment::Figment, layers: usize, fillers: u16, fortunes: Fortunes) -> Rocket<Build> {
    let mut rocket = rocket::custom(figment)
        .manage(FatState::new())
        .manage(AppState::new())
        .manage(Arc::new(DeviceCatalog::new()))
        .manage(fortunes)
        .mount(RouteId::Healthz.path(), routes![healthz])
        .mount(RouteId::Plaintext.path(), routes![plaintext])
        .mount(RouteId::Devices.path(), routes![devices, replace_devices])
        .mount(RouteId::DevicesPreserialized.path(), routes![preserialized])
        .mount(RouteId::DevicesCached.path(), routes![cached])
        .mount(RouteId::StateFat.path(), routes![state_fat])
        .mount(RouteId::StateArc.path(), routes![state_arc])
        .mount(RouteId::Fortunes.path(), routes![fortunes_page, add_fortune])
        .mount(RouteId::FortunesCached.path(), routes![fortunes_cached])
        .mount(RouteId::BlockingInline.path(), routes![blocking_inline])
        .mount(RouteId::BlockingOffloaded.path(), routes![blocking_offloaded]);
    rocket = scale::mount(extract::mount(rocket), fillers);
    for _ in 0..layers {
        rocket = rocket
            .attach(AdHoc::on_request("state layer", |request, _| Box::pin(async move { state_layer(request).await })));
    }
    rocket
}

/// The figment [`run`] starts from: Rocket's defaults (and `ROCKET_*`
/// variables) with the address, port and workers of `config`, logging off,
/// and a shorter graceful stop: `shutdown.grace` 1 s instead of 2 s and
/// `shutdown.mercy` 0 instead of 3 s. Rocket counts whole seconds, and a
/// grace of 0 cuts every connection's I/O at once, in-flight responses
/// included; the stop deadline (`common::process::STOP_GRACE`) ends the
/// process before the 1 s grace does.
pub fn figment(config: &ServerConfig) -> rocket::figment::Figment {
    rocket::Config::figment()
        .merge(("address", config.addr.ip()))
        .merge(("port", config.addr.port()))
        .merge(("workers", config.workers.get()))
        .merge(("log_level", LogLevel::Off))
        .merge(("cli_colors", false))
        .merge(("shutdown.grace", 1))
        .merge(("shutdown.mercy", 0))
}

/// [`figment`] for one of `config`'s listeners: its address, and Rocket's
/// own TLS (`tls.certs`, `tls.key`, here as PEM text) when it speaks TLS.
fn listener_figment(config: &ServerConfig, listener: Listener) -> rocket::figment::Figment {
    let figment = figment(config).merge(("address", listener.addr.ip())).merge(("port", listener.addr.port()));
    match (&config.tls, listener.tls) {
        (Some(identity), true) => {
            figment.merge(("tls", TlsConfig::from_bytes(identity.cert_pem.as_bytes(), identity.key_pem.as_bytes())))
        }
        _ => figment,
    }
}

#[get("/")]
fn healthz() -> &'static str {
    HEALTHZ_BODY
}

#[get("/")]
fn plaintext() -> &'static str {
    PLAINTEXT_BODY
}

#[get("/")]
fn devices(catalog: &State<Arc<DeviceCatalog>>) -> Json<Vec<Device>> {
    Json(catalog.devices())
}

/// A JSON body served from shared bytes, without a copy.
struct JsonBytes(Bytes);

impl<'r> Responder<'r, 'static> for JsonBytes {
    fn respond_to(self, _: &'r Request<'_>) -> rocket::response::Result<'static> {
        let len = self.0.len();
        Response::build().header(ContentType::JSON).sized_body(len, Cursor::new(self.0)).ok()
    }
}

#[get("/")]
fn cached(catalog: &State<Arc<DeviceCatalog>>) -> JsonBytes {
    JsonBytes(catalog.cached_json())
}

/// `PUT /api/devices`: the application's 64 KiB rule decides at every size.
/// The body is read from the raw `Data` with an explicit limit (Rocket's
/// named data limits serve its own data guards): a declared length over the
/// limit is refused before the body is read, a chunked body is read up to one
/// byte past the limit. Rocket itself peeks at the first bytes of every body
/// before routing (for its `_method` form override), so hyper has already
/// answered an `Expect: 100-continue` and the client is sending: the rest of
/// a refused body is always read and dropped ([`linger`]).
#[put("/", data = "<body>")]
async fn replace_devices(
    catalog: &State<Arc<DeviceCatalog>>,
    content_length: ContentLength<'_>,
    body: Data<'_>,
) -> Result<Status, Refusal> {
    let refuse = |e: CatalogError| (Status::new(e.status()), e.to_string());
    let bytes = match read_body(content_length, body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(Unread::TooLarge) => return Err(refuse(CatalogError::TooLarge)),
        Err(Unread::Broken(reason)) => return Err(refuse(CatalogError::Invalid(reason))),
    };
    catalog.replace_from_json(&bytes).map_err(refuse)?;
    Ok(Status::NoContent)
}

/// A one-line answer with a status (400, 413, 500); a `String` is `text/plain; charset=utf-8`.
type Refusal = (Status, String);

/// The body if it is at most `limit` bytes: a declared length over the
/// limit is refused before the body is read, a chunked body is read up to
/// one byte past the limit; the rest of a refused body is read and dropped
/// ([`linger`]).
async fn read_body(content_length: ContentLength<'_>, body: Data<'_>, limit: usize) -> Result<Vec<u8>, Unread> {
    let mut stream = body.open(ByteUnit::max_value());
    if declared_length_over(content_length.0, limit) {
        linger(stream).await;
        return Err(Unread::TooLarge);
    }
    let mut bytes = Vec::new();
    // Read one byte past the limit, so an over-long body is seen as such.
    let read = (&mut stream).take(limit as u64 + 1).read_to_end(&mut bytes).await;
    read.map_err(|e| Unread::Broken(format!("cannot read the body: {e}")))?;
    if bytes.len() > limit {
        linger(stream).await;
        return Err(Unread::TooLarge);
    }
    Ok(bytes)
}

/// An HTML page served from shared bytes, without a copy.
struct HtmlBytes(Bytes);

impl<'r> Responder<'r, 'static> for HtmlBytes {
    fn respond_to(self, _: &'r Request<'_>) -> rocket::response::Result<'static> {
        let len = self.0.len();
        Response::build().header(ContentType::HTML).sized_body(len, Cursor::new(self.0)).ok()
    }
}

fn fortune_refusal(e: FortuneError) -> Refusal {
    (Status::new(e.status()), e.to_string())
}

fn panicked(e: rocket::tokio::task::JoinError) -> Refusal {
    (Status::InternalServerError, e.to_string())
}

#[get("/")]
async fn fortunes_page(fortunes: &State<Fortunes>) -> Result<HtmlBytes, Refusal> {
    let fortunes = Fortunes::clone(fortunes);
    let page = spawn_blocking(move || fortunes.render_page()).await.map_err(panicked)?.map_err(fortune_refusal)?;
    Ok(HtmlBytes(page))
}

#[get("/")]
fn fortunes_cached(fortunes: &State<Fortunes>) -> HtmlBytes {
    HtmlBytes(fortunes.cached_page())
}

/// `GET /blocking/inline`: the blocking read on the async worker, what
/// Rocket's guide warns against (the `blocking` scenario measures it).
#[get("/")]
async fn blocking_inline(fortunes: &State<Fortunes>) -> Result<JsonBytes, Refusal> {
    Ok(JsonBytes(fortunes.read_seed().map_err(fortune_refusal)?))
}

/// `GET /blocking/offloaded`: the same read through `spawn_blocking`, as
/// Rocket's guide advises for blocking work.
#[get("/")]
async fn blocking_offloaded(fortunes: &State<Fortunes>) -> Result<JsonBytes, Refusal> {
    let fortunes = Fortunes::clone(fortunes);
    let read = spawn_blocking(move || fortunes.read_seed()).await.map_err(panicked)?.map_err(fortune_refusal)?;
    Ok(JsonBytes(read))
}

/// `POST /fortunes`: the body read as `PUT /api/devices` reads it, with the
/// 1 KiB limit ([`read_body`]), then the row added on the blocking pool.
#[post("/", data = "<body>")]
async fn add_fortune(
    fortunes: &State<Fortunes>,
    content_length: ContentLength<'_>,
    body: Data<'_>,
) -> Result<Status, Refusal> {
    let body = match read_body(content_length, body, MAX_FORTUNE_BYTES).await {
        Ok(bytes) => bytes,
        Err(Unread::TooLarge) => return Err(fortune_refusal(FortuneError::TooLarge)),
        Err(Unread::Broken(reason)) => return Err((Status::BadRequest, reason)),
    };
    let fortunes = Fortunes::clone(fortunes);
    spawn_blocking(move || fortunes.add(&body)).await.map_err(panicked)?.map_err(fortune_refusal)?;
    Ok(Status::NoContent)
}

/// The request's `Content-Length` header, if any, read before its body.
struct ContentLength<'r>(Option<&'r str>);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for ContentLength<'r> {
    type Error = Infallible;

    async fn from_request(request: &'r Request<'_>) -> Outcome<Self, Infallible> {
        Outcome::Success(ContentLength(request.headers().get_one("Content-Length")))
    }
}

/// Reads and drops the rest of a refused body that the client is sending
/// anyway, for at most [`REFUSED_BODY_LINGER`] (whose doc says why).
async fn linger(mut stream: DataStream<'_>) {
    let _ = tokio::time::timeout(REFUSED_BODY_LINGER, tokio::io::copy(&mut stream, &mut sink())).await;
}

#[get("/")]
fn preserialized() -> (ContentType, &'static [u8]) {
    (ContentType::JSON, common::preserialized_devices())
}

#[get("/")]
fn state_fat(state: &State<FatState>) -> String {
    name(state.inner())
}

#[get("/")]
fn state_arc(state: &State<AppState>) -> String {
    name(state.inner())
}

fn name<S: AsRef<FatState>>(state: &S) -> String {
    state.as_ref().app_name.clone()
}

async fn state_layer(request: &Request<'_>) {
    let path = request.uri().path();
    if path == RouteId::StateFat.path() {
        if let Some(state) = request.guard::<&State<FatState>>().await.succeeded() {
            common::touch(state.inner());
        }
    } else if path == RouteId::StateArc.path()
        && let Some(state) = request.guard::<&State<AppState>>().await.succeeded()
    {
        common::touch(state.inner());
    }
}

/// Runs the server until SIGTERM or SIGINT (handlers installed before the
/// listening line, then Rocket's graceful shutdown):
/// creates the fortunes database (removed once the server has stopped),
/// binds, prints the listening line at lift-off, serves on a multi-threaded
/// tokio runtime of `config.workers` threads. With its `http2` feature,
/// Rocket serves every connection through hyper-util's auto builder, which
/// reads the first bytes: HTTP/1.1, or HTTP/2 with prior knowledge (h2c) on
/// the plain listener, and h2 or HTTP/1.1 by ALPN (Rocket's own list) on the
/// TLS one, with Rocket's HTTP/2 settings (no bound on concurrent streams).
///
/// Rocket's graceful stop completes in-flight responses and closes idle
/// connections, but if any connection is still open when it looks, right
/// after the signal, it waits its whole grace period (1 s). It is raced
/// against the stop deadline (`common::process::STOP_GRACE`), after which the
/// connections still open are closed as the process exits.
///
/// Returns the exit code of `common::process`.
pub fn run(config: ServerConfig) -> ExitCode {
    on_tokio(config.workers, |fortunes, runtime| serve(&config, fortunes, runtime))
}

fn serve(config: &ServerConfig, fortunes: Fortunes, runtime: &tokio::runtime::Runtime) -> ExitCode {
    runtime.block_on(async move {
        let signals = match ShutdownSignals::install() {
            Ok(s) => s,
            Err(e) => return signals_failed(&e),
        };
        let (stop, deadline) = signals.with_deadline();
        stack::init_trace(&config.middleware);
        // One Rocket per listener (a Rocket listens on one address), each with
        // the same routes and fairings, sharing the fortunes database.
        // All ignited before any launches: an ignite sets up Rocket's logger
        // again, which would let a launching Rocket's warnings through.
        let mut ignited = Vec::new();
        for listener in config.listeners() {
            match ignite_listener(config, listener, fortunes.clone()).await {
                Ok((rocket, lifted_off)) => ignited.push((listener, rocket, lifted_off)),
                Err(code) => return code,
            }
        }
        let mut launched = tokio::task::JoinSet::new();
        let mut ids = std::collections::HashMap::new();
        let mut shutdowns = Vec::new();
        for (listener, rocket, lifted_off) in ignited {
            shutdowns.push(rocket.shutdown());
            ids.insert(launched.spawn(rocket.launch()).id(), listener.addr);
            // The next listener's line after this one's. Biased: a stop signal
            // that arrives right after the line (a client that stops the server
            // as soon as it listens) can end the launch before this task looks,
            // and a lift-off already sent is not a Rocket that never listened.
            // A lift-off never sent (the sender dropped) is the launch's end.
            tokio::select! {
                biased;
                Ok(()) = lifted_off => {}
                Some(ended) = launched.join_next() => return match ended {
                    Ok(Err(e)) => launch_failed(&e, listener.addr),
                    Ok(Ok(_)) => {
                        eprintln!("error: Rocket on {} stopped before it listened", listener.addr);
                        ExitCode::FAILURE
                    }
                    Err(e) => {
                        eprintln!("error: Rocket on {}: {e}", listener.addr);
                        ExitCode::FAILURE
                    }
                },
            }
        }
        tokio::spawn(async move {
            stop.await;
            for shutdown in shutdowns {
                shutdown.notify();
            }
        });
        // The first instance to end (an error while serving) ends the process.
        let addrs: Vec<SocketAddr> = config.listeners().iter().map(|l| l.addr).collect();
        tokio::select! {
            Some(ended) = launched.join_next_with_id() => match ended {
                Ok((_, Ok(_))) => ExitCode::SUCCESS,
                // Stopped by a signal (ours, or Rocket's own Ctrl-C handling) and
                // ended as Rocket's shutdown says: the contract's exit 0.
                Ok((_, Err(e))) if matches!(e.kind(), rocket::error::ErrorKind::Shutdown(..)) => ExitCode::SUCCESS,
                Ok((id, Err(e))) => launch_failed(&e, ids.get(&id).copied().unwrap_or(addrs[0])),
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            },
            () = deadline => ExitCode::SUCCESS,
        }
    })
}

/// The Rocket of one listener, ignited: the routes and fairings of
/// `config`, and a lift-off fairing that prints the listening line and then
/// sends on the returned receiver; the exit code when it cannot be built or
/// ignited.
async fn ignite_listener(
    config: &ServerConfig,
    listener: Listener,
    fortunes: Fortunes,
) -> Result<(Rocket<Ignite>, tokio::sync::oneshot::Receiver<()>), ExitCode> {
    let (lifted, lifted_off) = tokio::sync::oneshot::channel();
    let lifted = std::sync::Mutex::new(Some(lifted));
    let rocket = stack::layered(
        app(listener_figment(config, listener), config.layers, config.filler_routes, fortunes),
        &config.middleware,
    )
    .map_err(|e| {
        eprintln!("error: --middleware cors: {e}");
        ExitCode::FAILURE
    })?;
    let rocket = rocket.attach(AdHoc::on_liftoff("listening line", move |rocket| {
        Box::pin(async move {
            let c = rocket.config();
            let addr = SocketAddr::new(c.address, c.port);
            println!("{}", listening_line_of(Listener { addr, tls: listener.tls }));
            if let Some(lifted) = lifted.lock().ok().and_then(|mut l| l.take()) {
                let _ = lifted.send(());
            }
        })
    }));
    let rocket = rocket.ignite().await.map_err(|e| launch_failed(&e, listener.addr))?;
    Ok((rocket, lifted_off))
}

/// The exit code of a Rocket that could not start or serve on `addr`.
fn launch_failed(e: &rocket::Error, addr: SocketAddr) -> ExitCode {
    match e.kind() {
        rocket::error::ErrorKind::Bind(io) => bind_failed(addr, io),
        other => {
            eprintln!("error: {other}");
            ExitCode::FAILURE
        }
    }
}
