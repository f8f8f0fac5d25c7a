//! Server configuration: the command line every server accepts, and the
//! checked plan it is turned into before a framework sees it.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use crate::address::listen_addr;
#[cfg(test)]
use crate::middleware::Middleware;
use crate::middleware::{Selection, Stack, check_offered, parse_selection};
use crate::process::EXIT_USAGE;
use crate::tls::{TlsError, TlsIdentity};

/// `server-<framework> [--addr 127.0.0.1:0] [--workers 1] [--layers 10] [--tls | --tls-addr ADDR]`
#[derive(Debug, Parser)]
#[command(version, about = "Serve the benchmark routes (see the workspace README).")]
pub struct ServerArgs {
    /// Address to bind, e.g. `127.0.0.1:8080`, `[::1]:8080` or `localhost:8080` (127.0.0.1); port 0 picks a
    /// free ephemeral port. Loopback by default.
    #[arg(long, default_value = "127.0.0.1:0", value_parser = listen_addr)]
    pub addr: SocketAddr,
    /// Worker threads serving requests.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub workers: u16,
    /// Middleware layers in front of the two `/state/*` routes (0 allowed).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(0..=1000))]
    pub layers: u16,
    /// Routes of each kind, static and with a path parameter, registered ahead of `/scale/target` and
    /// `/scale/target/{id}` (the `routes` scenario; `common::scale`).
    #[arg(long, default_value_t = 0, value_name = "N",
          value_parser = clap::value_parser!(u16).range(0..=i64::from(crate::scale::MAX_FILLER_ROUTES)))]
    pub filler_routes: u16,
    /// Serve HTTPS on `--addr` instead of HTTP, with a self-signed
    /// certificate generated at start (or `--tls-cert`/`--tls-key`).
    #[arg(long, conflicts_with = "tls_addr")]
    pub tls: bool,
    /// Also serve HTTPS on this address, beside HTTP on `--addr` (one
    /// process, the same app): the plain and TLS listeners the `tls`
    /// scenario alternates.
    #[arg(long, value_name = "ADDR", value_parser = listen_addr)]
    pub tls_addr: Option<SocketAddr>,
    /// The certificate chain to present, PEM (instead of a generated one).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert`, PEM.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Set TCP_NODELAY on every accepted connection, the framework's own way (actix-web and axum
    /// leave Nagle's algorithm on by default; Rocket turns it off whatever this says).
    #[arg(long)]
    pub tcp_nodelay: bool,
    /// The middleware to serve through, comma-separated (`compression`, `trace`, `cors`, `request-id`,
    /// `timeout`, `security-headers`), applied in the order the framework's guide shows; `none`: none,
    /// not even a framework's default one (Rocket's Shield). Without it, the framework's defaults.
    #[arg(long, value_name = "LIST", value_parser = parse_selection)]
    pub middleware: Option<Stack>,
}

/// One address a server listens on, and whether it speaks TLS there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Listener {
    /// Address to bind (port 0: ephemeral).
    pub addr: SocketAddr,
    /// HTTPS (with [`ServerConfig::tls`]) rather than HTTP.
    pub tls: bool,
}

/// What a server runs with, after its flags were checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The first listener's address (port 0: ephemeral); HTTPS with `--tls`.
    pub addr: SocketAddr,
    /// Whether the listener on `addr` speaks TLS.
    pub addr_tls: bool,
    /// A second listener, HTTPS, beside HTTP on `addr`.
    pub tls_addr: Option<SocketAddr>,
    /// The certificate and key of every TLS listener; present when there is one.
    pub tls: Option<Arc<TlsIdentity>>,
    /// Worker threads, at least one.
    pub workers: NonZeroUsize,
    /// Middleware layers in front of `/state/*`.
    pub layers: usize,
    /// Routes of each kind ahead of the scale targets (`--filler-routes`).
    pub filler_routes: u16,
    /// TCP_NODELAY on every accepted connection (`--tcp-nodelay`).
    pub tcp_nodelay: bool,
    /// The middleware to serve through (`--middleware`); `None`: the
    /// framework's defaults.
    pub middleware: Selection,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self::plain(ServerArgs::parse_from(["server"]))
    }
}

impl ServerConfig {
    /// The plan of `args` without its TLS flags (tests that serve HTTP).
    fn plain(args: ServerArgs) -> Self {
        Self {
            addr: args.addr,
            addr_tls: false,
            tls_addr: None,
            tls: None,
            workers: NonZeroUsize::new(usize::from(args.workers)).unwrap_or(NonZeroUsize::MIN),
            layers: usize::from(args.layers),
            filler_routes: args.filler_routes,
            tcp_nodelay: args.tcp_nodelay,
            middleware: args.middleware,
        }
    }

    /// The checked plan of `args`: a certificate read from its files or
    /// generated when a listener speaks TLS.
    ///
    /// # Errors
    /// A certificate or key that cannot be read or generated, or a key that
    /// is not the certificate's.
    pub fn checked(args: ServerArgs) -> Result<Self, TlsError> {
        let wants_tls = args.tls || args.tls_addr.is_some();
        let identity = match (&args.tls_cert, &args.tls_key, wants_tls) {
            (Some(cert), Some(key), _) => Some(TlsIdentity::from_files(cert, key)?),
            (_, _, true) => Some(TlsIdentity::generate()?),
            _ => None,
        };
        if let Some(identity) = &identity {
            // A key that is not the certificate's is refused here, before any listener.
            identity.server_config()?;
        }
        // Files given without a TLS listener: HTTPS on --addr, as with --tls.
        let addr_tls = args.tls || (identity.is_some() && args.tls_addr.is_none());
        let tls_addr = args.tls_addr;
        Ok(Self { addr_tls, tls_addr, tls: identity.map(Arc::new), ..Self::plain(args) })
    }

    /// This plan when `framework` (`actix`, `axum`, `rocket`) offers every
    /// layer of its `--middleware`.
    ///
    /// # Errors
    /// Prints the one-line refusal of [`check_offered`] and returns
    /// [`EXIT_USAGE`].
    pub fn offered_by(self, framework: &str) -> Result<Self, ExitCode> {
        match check_offered(framework, &self.middleware) {
            Ok(()) => Ok(self),
            Err(why) => {
                eprintln!("error: --middleware: {why}");
                Err(ExitCode::from(EXIT_USAGE))
            }
        }
    }

    /// Every listener, in the order their listening lines are printed.
    pub fn listeners(&self) -> Vec<Listener> {
        let mut listeners = vec![Listener { addr: self.addr, tls: self.addr_tls }];
        listeners.extend(self.tls_addr.map(|addr| Listener { addr, tls: true }));
        listeners
    }
}

impl ServerConfig {
    /// Parses the process's command line.
    ///
    /// # Errors
    /// On a bad flag, prints one line on stderr (the first line of clap's
    /// message, without usage and tip) and returns [`EXIT_USAGE`]; on
    /// `--help`/`--version`, prints clap's full text on stdout and returns 0.
    /// A certificate or key file that cannot be used is a bad flag too; a
    /// certificate that cannot be generated returns 1.
    pub fn from_env() -> Result<Self, ExitCode> {
        Self::from_args(parse_args::<ServerArgs>()?)
    }

    /// The checked plan of `args`, as [`ServerConfig::from_env`] makes it
    /// (its errors printed and returned the same way): for a server that
    /// parses flags of its own beside [`ServerArgs`] ([`parse_args`]).
    ///
    /// # Errors
    /// As [`ServerConfig::from_env`]'s certificate errors.
    pub fn from_args(args: ServerArgs) -> Result<Self, ExitCode> {
        Self::checked(args).map_err(|e| {
            eprintln!("error: {e}");
            match e {
                TlsError::Generate(_) => ExitCode::FAILURE,
                _ => ExitCode::from(EXIT_USAGE),
            }
        })
    }
}

/// Parses the process's command line as `A`: [`ServerArgs`], or a server's
/// own flags with [`ServerArgs`] flattened into them.
///
/// # Errors
/// As [`ServerConfig::from_env`]'s flag errors.
pub fn parse_args<A: Parser>() -> Result<A, ExitCode> {
    A::try_parse().map_err(|e| {
        if e.use_stderr() {
            eprintln!("{}", first_line(&e));
            ExitCode::from(EXIT_USAGE)
        } else {
            let _ = e.print();
            ExitCode::SUCCESS
        }
    })
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
        assert_eq!(ServerConfig::checked(ok).unwrap().layers, 0);
        let fillers = ServerArgs::try_parse_from(["s", "--filler-routes", "1000"]).unwrap();
        assert_eq!(
            (ServerConfig::checked(fillers).unwrap().filler_routes, ServerConfig::default().filler_routes),
            (1000, 0)
        );
        assert!(ServerArgs::try_parse_from(["s", "--filler-routes", "10001"]).is_err());
        let err = ServerArgs::try_parse_from(["s", "--middleware", "gzip"]).unwrap_err();
        assert_eq!(err.exit_code(), i32::from(EXIT_USAGE));
        assert!(first_line(&err).contains("unknown middleware \"gzip\""), "{}", first_line(&err));
    }

    #[test]
    fn middleware_is_the_frameworks_defaults_unless_given_and_none_is_empty() {
        let parse = |argv: &[&str]| ServerConfig::checked(ServerArgs::try_parse_from(argv).unwrap()).unwrap();
        assert_eq!(parse(&["s"]).middleware, None);
        assert_eq!(parse(&["s", "--middleware", "none"]).middleware, Some(vec![]));
        let both = parse(&["s", "--middleware", "cors,compression"]);
        assert_eq!(both.middleware, Some(vec![Middleware::Compression, Middleware::Cors]));
        assert!(both.clone().offered_by("rocket").is_ok());
        let timeout = parse(&["s", "--middleware", "timeout"]);
        assert!(timeout.clone().offered_by("axum").is_ok());
        assert!(timeout.offered_by("actix").is_err());
    }

    #[test]
    fn addr_takes_every_loopback_form_and_refuses_an_unbracketed_ipv6_in_one_line() {
        let addr = |flag: &str, text: &str| {
            let args = ServerArgs::try_parse_from(["s", flag, text]).unwrap_or_else(|e| panic!("{text}: {e}"));
            ServerConfig::checked(args).unwrap().listeners().last().unwrap().addr
        };
        for (text, bound) in
            [("127.0.0.1:0", "127.0.0.1:0"), ("[::1]:0", "[::1]:0"), ("localhost:8080", "127.0.0.1:8080")]
        {
            assert_eq!(addr("--addr", text), bound.parse().unwrap(), "--addr {text}");
            assert_eq!(addr("--tls-addr", text), bound.parse().unwrap(), "--tls-addr {text}");
        }
        let err = ServerArgs::try_parse_from(["s", "--addr", "::1:8080"]).unwrap_err();
        let line = first_line(&err);
        assert!(line.contains("'::1:8080'") && line.contains("in brackets, e.g. [::1]:8080"), "{line}");
        assert_eq!(err.exit_code(), i32::from(EXIT_USAGE));
    }

    #[test]
    fn tls_flags_choose_the_listeners_and_the_certificate() {
        let parse = |argv: &[&str]| ServerConfig::checked(ServerArgs::try_parse_from(argv).unwrap()).unwrap();
        let plain = parse(&["s"]);
        assert_eq!(plain.listeners(), vec![Listener { addr: "127.0.0.1:0".parse().unwrap(), tls: false }]);
        assert!(plain.tls.is_none());
        let tls = parse(&["s", "--tls", "--addr", "127.0.0.1:8443"]);
        assert_eq!(tls.listeners(), vec![Listener { addr: "127.0.0.1:8443".parse().unwrap(), tls: true }]);
        assert_eq!(tls.tls.as_ref().unwrap().certificates().len(), 1, "generated");
        let both = parse(&["s", "--tls-addr", "127.0.0.1:0"]);
        assert_eq!(both.listeners().iter().map(|l| l.tls).collect::<Vec<_>>(), [false, true]);
        assert!(both.tls.is_some());
        // Files: read, and HTTPS on --addr without --tls.
        let dir = tempfile::tempdir().unwrap();
        let identity = TlsIdentity::generate().unwrap();
        let (cert, key) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
        std::fs::write(&cert, &identity.cert_pem).unwrap();
        std::fs::write(&key, &identity.key_pem).unwrap();
        let (c, k) = (cert.to_str().unwrap(), key.to_str().unwrap());
        let files = parse(&["s", "--tls-cert", c, "--tls-key", k]);
        assert_eq!(files.tls.as_deref(), Some(&identity));
        assert!(files.addr_tls);
        // Usage errors: a certificate without its key, both kinds of listener.
        for argv in [&["s", "--tls-cert", c][..], &["s", "--tls", "--tls-addr", "127.0.0.1:0"]] {
            let err = ServerArgs::try_parse_from(argv).unwrap_err();
            assert_eq!(err.exit_code(), i32::from(EXIT_USAGE), "{argv:?}");
        }
        let absent = ServerArgs::try_parse_from(["s", "--tls-cert", "/nonexistent.pem", "--tls-key", k]).unwrap();
        assert!(matches!(ServerConfig::checked(absent), Err(TlsError::Read { .. })));
        // Another certificate's key: refused with the plan, before any listener.
        let other = dir.path().join("other.pem");
        std::fs::write(&other, TlsIdentity::generate().unwrap().key_pem).unwrap();
        let mismatched = ServerArgs::try_parse_from(["s", "--tls-cert", c, "--tls-key", other.to_str().unwrap()]);
        assert!(matches!(ServerConfig::checked(mismatched.unwrap()), Err(TlsError::Refused(_))));
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
