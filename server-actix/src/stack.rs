//! `--middleware` in actix-web: its own `Compress`, `DefaultHeaders` and
//! `Logger`, and `actix-cors`, each switched at start with
//! `middleware::Condition` (actix-web's way to make a middleware optional:
//! an `App`'s type holds every middleware it wraps).

use actix_cors::Cors;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceFactory, ServiceRequest, ServiceResponse};
use actix_web::middleware::{Compress, Condition, DefaultHeaders, Logger};
use actix_web::{App, Error, web};
use common::middleware::{CORS_ORIGIN, LogSink, Middleware, SECURITY_HEADERS};

/// The app of `routes` behind the layers `on`, from the outside in as
/// actix-web's guide wraps them: `Logger`, CORS, security headers,
/// `Compress` (whatever the order of `on`). A layer not in `on` is a
/// `Condition` that passes each request straight through.
pub fn layered<F>(
    routes: F,
    on: &[Middleware],
) -> App<
    impl ServiceFactory<
        ServiceRequest,
        Config = (),
        Response = ServiceResponse<impl MessageBody + use<F>>,
        Error = Error,
        InitError = (),
    > + use<F>,
>
where
    F: FnOnce(&mut web::ServiceConfig),
{
    let has = |m| on.contains(&m);
    let headers = SECURITY_HEADERS.iter().fold(DefaultHeaders::new(), |h, &(name, value)| h.add((name, value)));
    let cors = Cors::default().allowed_origin(CORS_ORIGIN).allowed_methods(["GET", "POST", "PUT"]);
    // The last `wrap` is the outermost.
    App::new()
        .configure(routes)
        .wrap(Condition::new(has(Middleware::Compression), Compress::default()))
        .wrap(Condition::new(has(Middleware::SecurityHeaders), headers))
        .wrap(Condition::new(has(Middleware::Cors), cors))
        .wrap(Condition::new(has(Middleware::Trace), Logger::default()))
}

/// With `trace` in `on`: the logger `Logger`'s lines (level `info`) are
/// formatted by, one line each, into a [`LogSink`]; once per process (a
/// second call keeps the first).
pub fn init_trace(on: &[Middleware]) {
    if on.contains(&Middleware::Trace) {
        let _ = env_logger::Builder::new()
            .parse_filters("info")
            .target(env_logger::Target::Pipe(Box::new(LogSink)))
            .try_init();
    }
}
