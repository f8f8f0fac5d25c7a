//! Server configuration: the command line every server accepts, and the
//! checked plan it is turned into before a framework sees it.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;

use clap::Parser;

use crate::process::EXIT_USAGE;

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
    /// On a bad flag, prints one line on stderr (the first line of clap's
    /// message, without usage and tip) and returns [`EXIT_USAGE`]; on
    /// `--help`/`--version`, prints clap's full text on stdout and returns 0.
    pub fn from_env() -> Result<Self, ExitCode> {
        ServerArgs::try_parse().map(Self::from).map_err(|e| {
            if e.use_stderr() {
                eprintln!("{}", first_line(&e));
                ExitCode::from(EXIT_USAGE)
            } else {
                let _ = e.print();
                ExitCode::SUCCESS
            }
        })
    }
}

/// The first line of clap's rendered error, e.g.
/// `error: unexpected argument '--bogus' found`, without styling.
fn first_line(e: &clap::Error) -> String {
    e.render().to_string().lines().next().unwrap_or("error: bad command line").to_owned()
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
    fn bad_values_are_usage_errors_of_one_line() {
        for argv in
            [&["s", "--workers", "0"][..], &["s", "--addr", "localhost"], &["s", "--layers", "-1"], &["s", "--bogus"]]
        {
            let err = ServerArgs::try_parse_from(argv).unwrap_err();
            assert_eq!(err.exit_code(), i32::from(EXIT_USAGE), "{argv:?}");
            assert!(err.use_stderr(), "{argv:?}");
            let line = first_line(&err);
            assert!(line.starts_with("error: ") && !line.contains('\n'), "{argv:?}: {line:?}");
            assert!(!line.contains("Usage") && !line.contains("--help"), "{argv:?}: {line:?}");
        }
        let bogus = first_line(&ServerArgs::try_parse_from(["s", "--bogus"]).unwrap_err());
        assert!(bogus.contains("--bogus"), "{bogus}");
        let ok = ServerArgs::try_parse_from(["s", "--layers", "0", "--workers", "4"]).unwrap();
        assert_eq!(ServerConfig::from(ok).layers, 0);
    }

    #[test]
    fn help_and_version_are_not_errors() {
        for flag in ["--help", "--version"] {
            let e = ServerArgs::try_parse_from(["s", flag]).unwrap_err();
            assert!(!e.use_stderr(), "{flag} prints on stdout");
            assert_eq!(e.exit_code(), 0, "{flag}");
        }
    }
}
