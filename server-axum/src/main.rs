//! `server-axum [--addr 127.0.0.1:0] [--workers 1] [--layers 10] [--middleware LIST] [--serve router|make-service]`
//!
//! Exit codes: `common::process` (0 after a stop, 2 bad input, 1 otherwise).

use std::process::ExitCode;

use clap::Parser;
use server_axum::Serve;

/// The common flags and axum's own.
#[derive(Debug, Parser)]
#[command(version, about = "Serve the benchmark routes with axum (see the workspace README).")]
struct Args {
    #[command(flatten)]
    common: common::ServerArgs,
    /// What `axum::serve` is given: the `Router` itself (axum's own
    /// examples), which axum turns into a new route table for every
    /// connection, or `Router::into_make_service`, whose connections share
    /// one (docs/SERVERS.md).
    #[arg(long, value_enum, default_value_t = Serve::Router)]
    serve: Serve,
}

fn main() -> ExitCode {
    let args = match common::parse_args::<Args>() {
        Ok(args) => args,
        Err(code) => return code,
    };
    match common::ServerConfig::from_args(args.common).and_then(|c| c.offered_by("axum")) {
        Ok(config) => server_axum::run(config, args.serve),
        Err(code) => code,
    }
}
