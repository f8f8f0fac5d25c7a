//! `server-actix [--addr 127.0.0.1:0] [--workers 1] [--layers 10] [--middleware LIST]`
//!
//! Exit codes: `common::process` (0 after a stop, 2 bad input, 1 otherwise).

use std::process::ExitCode;

fn main() -> ExitCode {
    match common::ServerConfig::from_env().and_then(|c| c.offered_by("actix")) {
        Ok(config) => server_actix::run(config),
        Err(code) => code,
    }
}
