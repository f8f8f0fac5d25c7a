//! The process contract every server keeps and the bench client relies on:
//! the listening line (the one place that knows its text), the exit codes,
//! the one-line start-up errors, the fortunes database every server opens
//! before it listens, and the tokio runtime the axum and Rocket servers run on.
//!
//! Exit codes: 0 after SIGTERM or SIGINT, [`EXIT_USAGE`] (2) for a bad flag
//! or an address that cannot be bound, 1 for anything else (the fortunes
//! database cannot be created, another I/O error). Every server's `main` and
//! `run` keep them.
//!
//! A server prints [`listening_line`] as its first stdout line once it
//! accepts connections; a supervisor reads it back with
//! [`parse_listening_line`]. Start-up failures print one line on stderr and
//! end the process with the code the helper returns. SIGTERM or SIGINT end
//! it with exit code 0 within [`STOP_GRACE`] plus the time to exit, whatever
//! its clients are doing (see [`crate::signals`]).

use std::fmt::Display;
use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::time::Duration;

use crate::fortunes::{FortuneDb, Fortunes};

/// Exit code for a bad flag or an address that cannot be bound (clap's
/// usage-error code).
pub const EXIT_USAGE: u8 = 2;

/// How long a server's graceful stop may take after SIGTERM or SIGINT:
/// in-flight responses are completed within it, then the process exits (exit
/// code 0) and the connections still open are closed with it. Under the 1 s
/// the README promises, with room for the exit itself.
pub const STOP_GRACE: Duration = Duration::from_millis(500);

/// What the listening line starts with, before the address.
const LISTENING_PREFIX: &str = "listening on http://";
/// What the listening line of a TLS listener starts with.
const TLS_LISTENING_PREFIX: &str = "listening on https://";

/// The first line every server prints on stdout once it accepts connections:
/// `listening on http://ADDR`.
pub fn listening_line(addr: SocketAddr) -> String {
    format!("{LISTENING_PREFIX}{addr}")
}

/// The line of a TLS listener, `listening on https://ADDR`: the first line
/// with `--tls`, the second with `--tls-addr` (after the plain listener's).
pub fn tls_listening_line(addr: SocketAddr) -> String {
    format!("{TLS_LISTENING_PREFIX}{addr}")
}

/// The line of `listener`, plain or TLS.
pub fn listening_line_of(listener: crate::Listener) -> String {
    if listener.tls { tls_listening_line(listener.addr) } else { listening_line(listener.addr) }
}

/// The address of a [`listening_line`]; `None` for any other line.
/// Surrounding whitespace (the line's newline) is ignored.
pub fn parse_listening_line(line: &str) -> Option<SocketAddr> {
    line.trim().strip_prefix(LISTENING_PREFIX)?.parse().ok()
}

/// The address of a [`tls_listening_line`]; `None` for any other line.
pub fn parse_tls_listening_line(line: &str) -> Option<SocketAddr> {
    line.trim().strip_prefix(TLS_LISTENING_PREFIX)?.parse().ok()
}

/// Prints the one-line error for an address that cannot be bound, and
/// returns exit code [`EXIT_USAGE`].
pub fn bind_failed(addr: SocketAddr, err: &dyn Display) -> ExitCode {
    eprintln!("error: cannot listen on {addr}: {err}");
    ExitCode::from(EXIT_USAGE)
}

/// Prints the one-line error for a certificate rustls refuses, and returns
/// exit code [`EXIT_USAGE`] (it came from the command line).
pub fn tls_failed(err: &dyn Display) -> ExitCode {
    eprintln!("error: {err}");
    ExitCode::from(EXIT_USAGE)
}

/// Prints the one-line error for SIGTERM/SIGINT handlers that cannot be
/// installed, and returns exit code 1.
pub fn signals_failed(err: &dyn Display) -> ExitCode {
    eprintln!("error: cannot install signal handlers: {err}");
    ExitCode::FAILURE
}

/// Creates the fortunes database (in a temporary directory, removed when
/// the returned [`FortuneDb`] is dropped: hold it until the server has
/// stopped) and opens it with one pooled connection per worker.
///
/// # Errors
/// Prints the one-line error `error: fortunes database: …` and returns exit
/// code 1, so a server never starts without its database.
pub fn fortunes_database(workers: NonZeroUsize) -> Result<(FortuneDb, Fortunes), ExitCode> {
    FortuneDb::create().and_then(|db| Fortunes::open(db.path(), workers).map(|fortunes| (db, fortunes))).map_err(|e| {
        // One line, whatever the cause's text holds.
        let reason = e.to_string().lines().collect::<Vec<_>>().join(" ");
        eprintln!("error: fortunes database: {reason}");
        ExitCode::FAILURE
    })
}

/// Creates the fortunes database for `workers` (see [`fortunes_database`]),
/// runs `serve` with it, and removes it once `serve` has returned: every
/// server's `run` is this around its own serving.
pub fn with_fortunes(workers: NonZeroUsize, serve: impl FnOnce(Fortunes) -> ExitCode) -> ExitCode {
    let (database, fortunes) = match fortunes_database(workers) {
        Ok(opened) => opened,
        Err(code) => return code,
    };
    let code = serve(fortunes);
    drop(database);
    code
}

/// The multi-threaded tokio runtime of `workers` threads that the axum and
/// Rocket servers run on (actix-web brings its own).
///
/// # Errors
/// Prints a one-line error and returns exit code 1 when it cannot start.
pub fn tokio_runtime(workers: NonZeroUsize) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(workers.get()).enable_all().build().map_err(|e| {
        eprintln!("error: cannot start the tokio runtime: {e}");
        ExitCode::FAILURE
    })
}

/// Runs `serve` with the fortunes database (see [`with_fortunes`]) on a
/// tokio runtime of `workers` threads (see [`tokio_runtime`]): the axum and
/// Rocket servers' `run`. After `serve`, connection tasks still running are
/// dropped, not awaited (the stop deadline has passed).
pub fn on_tokio(workers: NonZeroUsize, serve: impl FnOnce(Fortunes, &tokio::runtime::Runtime) -> ExitCode) -> ExitCode {
    with_fortunes(workers, |fortunes| {
        let runtime = match tokio_runtime(workers) {
            Ok(rt) => rt,
            Err(code) => return code,
        };
        let code = serve(fortunes, &runtime);
        runtime.shutdown_background();
        code
    })
}

/// The exit code of a server whose serving ended with `result`: 0, or 1
/// after its error in one line.
pub fn served(result: Result<(), impl Display>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_line_round_trips() {
        for addr in ["127.0.0.1:8080", "127.0.0.1:1", "[::1]:443", "0.0.0.0:65535"] {
            let addr: SocketAddr = addr.parse().unwrap();
            let line = listening_line(addr);
            assert_eq!(parse_listening_line(&line), Some(addr), "{line}");
            assert_eq!(parse_listening_line(&format!("{line}\n")), Some(addr), "with its newline");
        }
        assert_eq!(listening_line("127.0.0.1:8080".parse().unwrap()), "listening on http://127.0.0.1:8080");
        let addr: SocketAddr = "[::1]:8443".parse().unwrap();
        assert_eq!(tls_listening_line(addr), "listening on https://[::1]:8443");
        assert_eq!(parse_tls_listening_line(&tls_listening_line(addr)), Some(addr));
        assert_eq!(parse_listening_line(&tls_listening_line(addr)), None, "the schemes are told apart");
        assert_eq!(parse_tls_listening_line(&listening_line(addr)), None);
    }

    #[test]
    fn other_lines_are_not_listening_lines() {
        for line in [
            "",
            "\n",
            "listening on http://",
            "listening on http://localhost:80",
            "listening on http://127.0.0.1",
            "listening on http://127.0.0.1:99999",
            "listening on https://127.0.0.1:80",
            "Listening on http://127.0.0.1:80",
            "error: cannot listen on 127.0.0.1:80: Address in use",
            "\u{fffd}listening on http://127.0.0.1:80",
            "listening on http://127.0.0.1:80 extra",
        ] {
            assert_eq!(parse_listening_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn runtime_has_the_asked_workers() {
        let rt = tokio_runtime(NonZeroUsize::new(2).unwrap()).unwrap();
        assert_eq!(rt.metrics().num_workers(), 2);
    }
}
