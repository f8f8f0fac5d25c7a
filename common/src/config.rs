//! Server configuration: the command line every server accepts, and the
//! checked plan it is turned into before a framework sees it.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;

use clap::Parser;

/// Exit code of a server for a bad flag or an address it cannot bind.
pub const EXIT_USAGE: u8 = 2;

/// `server-<framework> [--addr 127.0.0.1:0] [--workers 1] [--layers 10]`
#[derive(Debug, Parser)]
#[command(version, about = "Serve the benchmark routes (see the workspace README).")]
pub struct ServerArgs {
    /// Address to bind; port 0 picks a free ephemeral port. Loopback by default.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: SocketAddr,
    /// Worker threads serving requests.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub workers: u16,
    /// Middleware layers in front of the two `/state/*` routes (0 allowed).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
}

/// What a server runs with, after its flags were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerConfig {
    /// Address to bind (port 0: ephemeral).
    pub addr: SocketAddr,
    /// Worker threads, at least one.
    pub workers: NonZeroUsize,
    /// Middleware layers in front of `/state/*`.
    pub layers: usize,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self::from(ServerArgs::parse_from(["server"]))
    }
}

impl From<ServerArgs> for ServerConfig {
    fn from(args: ServerArgs) -> Self {
        Self {
            addr: args.addr,
            workers: NonZeroUsize::new(usize::from(args.workers)).unwrap_or(NonZeroUsize::MIN),
            layers: usize::from(args.layers),
        }
    }
}

impl ServerConfig {
    /// Parses the process's command line.
    ///
    /// # Errors
    /// On a bad flag, or `--help`/`--version`, prints clap's message and
    /// returns the exit code to end with (2 for a bad flag, 0 for help).
    pub fn from_env() -> Result<Self, ExitCode> {
        match ServerArgs::try_parse() {
            Ok(args) => Ok(args.into()),
            Err(e) => {
                let _ = e.print();
                Err(ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_USAGE)))
            }
        }
    }
}

impl ServerConfig {
    /// The multi-threaded tokio runtime of `workers` threads that the axum
    /// and Rocket servers run on (actix-web brings its own).
    ///
    /// # Errors
    /// Prints a one-line error and returns exit code 1 when it cannot start.
    pub fn tokio_runtime(&self) -> Result<tokio::runtime::Runtime, ExitCode> {
        tokio::runtime::Builder::new_multi_thread().worker_threads(self.workers.get()).enable_all().build().map_err(
            |e| {
                eprintln!("error: cannot start the tokio runtime: {e}");
                ExitCode::FAILURE
            },
        )
    }
}

/// The first line every server prints on stdout once it accepts connections.
pub fn listening_line(addr: SocketAddr) -> String {
    format!("listening on http://{addr}")
}

/// Prints a one-line bind error as every server does, and returns exit code 2.
pub fn bind_failed(addr: SocketAddr, err: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("error: cannot listen on {addr}: {err}");
    ExitCode::from(EXIT_USAGE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        ServerArgs::command().debug_assert();
    }

    #[test]
    fn defaults_are_loopback_one_worker_ten_layers() {
        let c = ServerConfig::default();
        assert_eq!(c.addr, "127.0.0.1:0".parse().unwrap());
        assert_eq!(c.workers.get(), 1);
        assert_eq!(c.layers, 10);
    }

    #[test]
    fn bad_values_are_usage_errors() {
        for argv in
            [&["s", "--workers", "0"][..], &["s", "--addr", "localhost"], &["s", "--layers", "-1"], &["s", "--bogus"]]
        {
            let err = ServerArgs::try_parse_from(argv).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{argv:?}");
        }
        let ok = ServerArgs::try_parse_from(["s", "--layers", "0", "--workers", "4"]).unwrap();
        assert_eq!(ServerConfig::from(ok).layers, 0);
    }

    #[test]
    fn listening_line_is_parseable() {
        assert_eq!(listening_line("127.0.0.1:8080".parse().unwrap()), "listening on http://127.0.0.1:8080");
    }
}
