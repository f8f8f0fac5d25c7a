//! `--middleware` in Rocket: fairings, attached as Rocket's guide attaches
//! them. Rocket has its own `Shield` (security headers, on by default) and
//! request logging; compression and CORS come from the crates its users use
//! (`rocket_async_compression`, `rocket_cors`). It has no request id or
//! timeout fairing of its own, and no maintained crate offers them.

use common::middleware::{CORS_ORIGIN, LogSink, Middleware, Selection};
use rocket::http::Method;
use rocket::shield::Shield;
use rocket::{Build, Rocket};
use rocket_async_compression::Compression;
use rocket_cors::{AllowedOrigins, CorsOptions};

/// `rocket` with the fairings of `selection`: without `--middleware`,
/// as it is (Rocket then attaches its default `Shield` at ignite); with it,
/// a `Shield` with its default policies for `security-headers` (the headers
/// of `common::middleware::SECURITY_HEADERS`) and with none otherwise, then
/// CORS, then compression (whatever the order given).
///
/// # Errors
/// The CORS options refused by `rocket_cors` (a constant origin: never).
pub fn layered(rocket: Rocket<Build>, selection: &Selection) -> Result<Rocket<Build>, rocket_cors::Error> {
    let Some(on) = selection else { return Ok(rocket) };
    let has = |m| on.contains(&m);
    let shield = if has(Middleware::SecurityHeaders) { Shield::default() } else { Shield::new() };
    let mut rocket = rocket.attach(shield);
    if has(Middleware::Cors) {
        let cors = CorsOptions {
            allowed_origins: AllowedOrigins::some_exact(&[CORS_ORIGIN]),
            allowed_methods: [Method::Get, Method::Post, Method::Put].into_iter().map(From::from).collect(),
            ..CorsOptions::default()
        }
        .to_cors()?;
        rocket = rocket.attach(cors);
    }
    if has(Middleware::Compression) {
        rocket = rocket.attach(Compression::fairing());
    }
    Ok(rocket)
}

/// With `trace` in `selection`: Rocket's own request lines (its `log`
/// records, `info`) are formatted by `env_logger`, one line each, into a
/// [`LogSink`]; the logger is set before Rocket's, so Rocket keeps it.
/// Once per process (a second call keeps the first).
pub fn init_trace(selection: &Selection) {
    if selection.as_ref().is_some_and(|on| on.contains(&Middleware::Trace)) {
        let _ = env_logger::Builder::new()
            .parse_filters("info")
            .target(env_logger::Target::Pipe(Box::new(LogSink)))
            .try_init();
    }
}
