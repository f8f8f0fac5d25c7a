//! The hidden `responder` subcommand `calibrate` starts: the built-in
//! canned responder, run as a process of its own like a server.

use std::net::SocketAddr;

use clap::Args;

/// Flags of the internal `responder`.
#[derive(Debug, Args)]
pub struct ResponderArgs {
    /// Address to listen on, e.g. `127.0.0.1:0`, `[::1]:0` or `localhost:0` (port 0: any free port, printed
    /// on the first line).
    #[arg(long, default_value = "127.0.0.1:0", value_parser = common::address::listen_addr)]
    pub addr: SocketAddr,
}
