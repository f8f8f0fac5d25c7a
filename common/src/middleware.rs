//! The middleware a server can be started with (`--middleware`): the layers
//! users add to a real application, each the framework's own or the crate
//! its users reach for, so the suite can say what each costs per request.
//!
//! This module owns what the servers and the client must agree on: which
//! framework offers which layer ([`offered`]), what a client sends so that
//! every layer does its work ([`REQUEST_HEADERS`]), and what a response
//! through each layer carries beyond the bare route's ([`Middleware::added_headers`],
//! a gzip body). Each server builds the layers its own way.

use std::cell::Cell;
use std::fmt;
use std::io;
use std::time::Duration;

/// One layer of `--middleware`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Middleware {
    /// Response compression: gzip when the request accepts it.
    Compression,
    /// Request logging as each framework does it, written to a sink: one
    /// access-log line (actix-web), a span's events at DEBUG (axum), its
    /// own request records (Rocket); `TRACE_LINES` says how many.
    Trace,
    /// CORS for one allowed origin ([`CORS_ORIGIN`]).
    Cors,
    /// A request id made per request and echoed in `x-request-id`.
    RequestId,
    /// A deadline on each request ([`TIMEOUT`]).
    Timeout,
    /// The security headers of [`SECURITY_HEADERS`] on every response.
    SecurityHeaders,
}

impl Middleware {
    /// Every layer (each server stacks them in its guide's order, not this one).
    pub const ALL: [Self; 6] =
        [Self::Trace, Self::RequestId, Self::Timeout, Self::Cors, Self::SecurityHeaders, Self::Compression];

    /// Its name on the command line and in files, e.g. `request-id`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Compression => "compression",
            Self::Trace => "trace",
            Self::Cors => "cors",
            Self::RequestId => "request-id",
            Self::Timeout => "timeout",
            Self::SecurityHeaders => "security-headers",
        }
    }

    /// The response headers (lower case) this layer adds, each of which a
    /// response through it must carry; a gzip body is said apart
    /// ([`Middleware::Compression`]).
    pub const fn added_headers(self) -> &'static [&'static str] {
        match self {
            Self::Cors => &["access-control-allow-origin"],
            Self::RequestId => &[REQUEST_ID_HEADER],
            Self::SecurityHeaders => &["x-content-type-options", "x-frame-options", "permissions-policy"],
            Self::Compression | Self::Trace | Self::Timeout => &[],
        }
    }
}

impl fmt::Display for Middleware {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The origin the CORS layer allows; the client sends it as `Origin`.
pub const CORS_ORIGIN: &str = "http://localhost:3000";

/// The header carrying the request id.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The deadline of the timeout layer: far above any route's time, so it
/// never fires; what it costs is arming and disarming it.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The security headers, name and value: Rocket's `Shield` defaults, which
/// the other frameworks set the same.
pub const SECURITY_HEADERS: [(&str, &str); 3] = [
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "SAMEORIGIN"),
    ("permissions-policy", "interest-cohort=()"),
];

/// Where the `trace` layer's lines go: formatted by the logging crate as
/// to a file, then dropped (no disk, no terminal in the measurement); it
/// counts the lines each thread writes, so a test can see how many one
/// request wrote (on the thread that served it: other tests' lines, on
/// their own threads, do not count).
#[derive(Debug, Clone, Copy, Default)]
pub struct LogSink;

thread_local! {
    /// Lines this thread wrote to any [`LogSink`].
    static LOG_LINES: Cell<u64> = const { Cell::new(0) };
}

impl LogSink {
    /// Lines this thread wrote to any `LogSink` so far.
    pub fn lines() -> u64 {
        LOG_LINES.with(Cell::get)
    }
}

impl io::Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let lines = buf.iter().filter(|b| **b == b'\n').count() as u64;
        LOG_LINES.with(|n| n.set(n.get() + lines));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Lines the `trace` layer writes per request of the layered route, per
/// framework (each server's route test holds it to this).
pub const TRACE_LINES: [(&str, u64); 3] = [("actix", 1), ("axum", 3), ("rocket", 3)];

/// What a client sends on every request of the middleware comparison, the
/// bare server's included, so that the requests are the same bytes and
/// every layer does its work: compression accepted, a CORS origin.
pub const REQUEST_HEADERS: [(&str, &str); 2] = [("Accept-Encoding", "gzip"), ("Origin", CORS_ORIGIN)];

/// The layers `framework` (`actix`, `axum` or `rocket`) offers: its own,
/// or a maintained crate its users use. The others it has neither for
/// (actix-web and Rocket: no request id, no timeout middleware).
pub fn offered(framework: &str) -> &'static [Middleware] {
    use Middleware::{Compression, Cors, RequestId, SecurityHeaders, Timeout, Trace};
    match framework {
        "axum" => &[Trace, RequestId, Timeout, Cors, SecurityHeaders, Compression],
        "actix" | "rocket" => &[Trace, Cors, SecurityHeaders, Compression],
        _ => &[],
    }
}

/// Layers, each once, sorted (one value of `--middleware`; a name of its
/// own so that clap reads the flag as one value, not a list of them).
pub type Stack = Vec<Middleware>;

/// The layers a server is started with: `None` (no `--middleware`) leaves
/// the framework's defaults as they are; `Some` is exactly these (an empty
/// list: `--middleware none`, also without a default one, Rocket's
/// `Shield`).
pub type Selection = Option<Stack>;

/// Checks `selection` against what `framework` offers.
///
/// # Errors
/// The first layer it does not offer, in one line naming both.
pub fn check_offered(framework: &str, selection: &Selection) -> Result<(), String> {
    let offered = offered(framework);
    match selection.iter().flatten().find(|m| !offered.contains(m)) {
        Some(m) => Err(format!(
            "{framework} has no {m} middleware of its own or from a maintained crate (it offers {})",
            offered.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")
        )),
        None => Ok(()),
    }
}

/// Parses `--middleware`: `none`, or layer names separated by commas
/// (sorted, each once).
///
/// # Errors
/// An unknown name, listing the known ones.
pub fn parse_selection(text: &str) -> Result<Stack, String> {
    if text == "none" {
        return Ok(Vec::new());
    }
    let mut layers = text
        .split(',')
        .map(|name| {
            Middleware::ALL.into_iter().find(|m| m.name() == name.trim()).ok_or_else(|| {
                let known: Vec<&str> = Middleware::ALL.iter().map(|m| m.name()).collect();
                format!("unknown middleware {name:?} (known: none, {})", known.join(", "))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    layers.sort();
    layers.dedup();
    Ok(layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_parses_sorted_once_and_none_is_empty() {
        assert_eq!(parse_selection("none").unwrap(), []);
        assert_eq!(parse_selection("trace,compression,trace").unwrap(), [Middleware::Compression, Middleware::Trace]);
        let err = parse_selection("gzip").unwrap_err();
        assert!(err.contains("\"gzip\"") && err.contains("security-headers"), "{err}");
    }

    #[test]
    fn each_framework_is_refused_what_it_does_not_offer_in_one_line() {
        for framework in ["actix", "axum", "rocket"] {
            assert!(offered(framework).contains(&Middleware::Compression), "{framework}");
            assert_eq!(check_offered(framework, &None), Ok(()));
            assert_eq!(check_offered(framework, &Some(offered(framework).to_vec())), Ok(()));
        }
        let err = check_offered("actix", &Some(vec![Middleware::Timeout])).unwrap_err();
        assert_eq!(
            err,
            "actix has no timeout middleware of its own or from a maintained crate (it offers trace, cors, security-headers, compression)"
        );
        assert!(check_offered("rocket", &Some(vec![Middleware::RequestId])).is_err());
        assert_eq!(check_offered("axum", &Some(Middleware::ALL.to_vec())), Ok(()));
    }

    #[test]
    fn the_log_sink_counts_the_lines_it_drops() {
        use std::io::Write;
        let before = LogSink::lines();
        write!(LogSink, "one\ntwo\nthree").unwrap();
        assert_eq!(LogSink::lines(), before + 2);
        let other = std::thread::spawn(LogSink::lines).join().unwrap();
        assert_eq!(other, 0, "each thread counts its own");
    }

    #[test]
    fn every_added_header_is_lower_case_and_the_security_ones_are_listed_with_values() {
        for m in Middleware::ALL {
            assert!(m.added_headers().iter().all(|h| *h == h.to_ascii_lowercase()), "{m}");
        }
        let names: Vec<&str> = SECURITY_HEADERS.iter().map(|(n, _)| *n).collect();
        assert_eq!(Middleware::SecurityHeaders.added_headers(), names.as_slice());
    }
}
