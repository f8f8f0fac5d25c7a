//! `server-axum [--addr 127.0.0.1:0] [--workers 1] [--layers 10]`
//!
//! Exit codes: 0 after SIGTERM/SIGINT, 2 for a bad flag or an address that
//! cannot be bound, 1 otherwise (e.g. the fortunes database cannot be created).

use std::process::ExitCode;

fn main() -> ExitCode {
    match common::ServerConfig::from_env() {
        Ok(config) => server_axum::run(config),
        Err(code) => code,
    }
}
