//! Addresses as a user types them, in one place: the `HOST:PORT` a process
//! listens on (every server's `--addr` and `--tls-addr`, the client's
//! `--metrics-addr` and `responder --addr`) and the host of a URL a load is
//! sent to, with the one loopback rule every load obeys unless told
//! otherwise (127.0.0.0/8 and `::1`).
//!
//! The host is written as RFC 3986 writes an authority's: an IPv4 address,
//! an IPv6 address in brackets (`[::1]:8080`), or a name. `localhost` (and
//! any `*.localhost`, RFC 6761 section 6.3) is never looked up: it stands
//! for both loopback addresses, `127.0.0.1` first, then `::1`, as curl
//! resolves it. A process told to listen on `localhost` binds `127.0.0.1`;
//! a load sent to `localhost` goes to the first of the two that accepts a
//! connection (so a server on `[::1]` is reached by name too).

use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::str::FromStr;
use std::time::Duration;

/// The name that stands for the loopback addresses.
pub const LOCALHOST: &str = "localhost";

/// What `localhost` stands for, in the order a load tries them.
pub const LOCALHOST_ADDRS: [IpAddr; 2] = [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)];

/// How long a load waits for each of several addresses of one name to
/// accept a connection before trying the next ([`first_accepting`]).
pub const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// Why an address is refused. The `Display` text is one line for a user;
/// it is not a contract.
#[derive(Debug, thiserror::Error)]
pub enum AddressError {
    /// Not `HOST:PORT` at all.
    #[error(
        "'{0}' is not HOST:PORT (an IPv4 address, an IPv6 address in brackets such as [::1], or localhost, then :PORT)"
    )]
    Syntax(String),
    /// An IPv6 address with a port, without the brackets that tell them apart.
    #[error("'{0}': an IPv6 address with a port is written in brackets, e.g. [::1]:8080")]
    Unbracketed(String),
    /// A name other than `localhost` to listen on.
    #[error("'{0}': a listen address is an IP address or localhost, not a name to look up")]
    NotListenable(String),
    /// A name a loopback-only load may not look up.
    #[error(
        "{0} is not a loopback name (localhost or an address in 127.0.0.0/8, [::1]); pass --allow-remote to load another host"
    )]
    NotLoopbackName(String),
    /// An address outside loopback, for a loopback-only load.
    #[error("{0} is not a loopback address; pass --allow-remote to load another host")]
    NotLoopback(SocketAddr),
    /// A name the resolver does not know.
    #[error("cannot resolve {name}: {source}")]
    Resolve {
        /// The name.
        name: String,
        /// The resolver's error.
        source: io::Error,
    },
    /// A name that resolves to nothing.
    #[error("{0} resolves to no address")]
    NoAddress(String),
}

/// The host of an authority: an address, or a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// An IPv4 or IPv6 address (written without brackets here).
    Ip(IpAddr),
    /// A name, lower case.
    Name(String),
}

impl Host {
    /// The host without brackets: what a TLS client checks the certificate
    /// for (a DNS name, sent as SNI, or an IP address, for which no SNI is
    /// sent, RFC 6066).
    pub fn unbracketed(&self) -> String {
        match self {
            Host::Ip(ip) => ip.to_string(),
            Host::Name(name) => name.clone(),
        }
    }

    /// Whether it is `localhost` or a name under it (RFC 6761).
    pub fn is_localhost(&self) -> bool {
        matches!(self, Host::Name(n) if n == LOCALHOST || n.ends_with(".localhost"))
    }
}

impl fmt::Display for Host {
    /// As a URL or a `Host` header writes it: an IPv6 address in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Ip(IpAddr::V6(v6)) => write!(f, "[{v6}]"),
            Host::Ip(IpAddr::V4(v4)) => write!(f, "{v4}"),
            Host::Name(name) => f.write_str(name),
        }
    }
}

/// `HOST:PORT`, as RFC 3986 writes an authority (without user info).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    /// The host.
    pub host: Host,
    /// The port.
    pub port: u16,
}

impl fmt::Display for Authority {
    /// `127.0.0.1:8080`, `[::1]:8080`, `localhost:8080`: the value of an
    /// HTTP/1.1 `Host` header (RFC 9110 section 7.2).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

impl From<SocketAddr> for Authority {
    fn from(addr: SocketAddr) -> Self {
        Self { host: Host::Ip(addr.ip()), port: addr.port() }
    }
}

impl FromStr for Authority {
    type Err = AddressError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let syntax = || AddressError::Syntax(text.to_owned());
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, port) = rest.split_once("]:").ok_or_else(syntax)?;
            (Host::Ip(IpAddr::V6(inside.parse().map_err(|_| syntax())?)), port)
        } else {
            let (host, port) = text.rsplit_once(':').ok_or_else(syntax)?;
            if host.contains(':') {
                return Err(if host.parse::<Ipv6Addr>().is_ok() || text.parse::<Ipv6Addr>().is_ok() {
                    AddressError::Unbracketed(text.to_owned())
                } else {
                    syntax()
                });
            }
            let host = match host.parse::<Ipv4Addr>() {
                Ok(v4) => Host::Ip(IpAddr::V4(v4)),
                Err(_) if is_name(host) => Host::Name(host.to_ascii_lowercase()),
                Err(_) => return Err(syntax()),
            };
            (host, port)
        };
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
            return Err(syntax());
        }
        Ok(Self { host, port: port.parse().map_err(|_| syntax())? })
    }
}

/// A host name as RFC 1123 allows it: labels of letters, digits and
/// hyphens, dot-separated, not all digits (that would be a bad IPv4 address).
fn is_name(text: &str) -> bool {
    let labels_ok = text.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= 63
            && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    });
    labels_ok && text.len() <= 253 && !text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// Whether `ip` is loopback: 127.0.0.0/8 or `::1` (an IPv4-mapped
/// `::ffff:127.x.y.z` too, which is the same address).
pub fn is_loopback(ip: IpAddr) -> bool {
    ip.to_canonical().is_loopback()
}

/// Which targets a load may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Loopback only: a name other than `localhost` is not even looked up.
    Loopback,
    /// Any host (`--allow-remote`).
    Any,
}

impl Authority {
    /// The one address to listen on: an IP address as given, `localhost`
    /// as `127.0.0.1`.
    ///
    /// # Errors
    /// Any other name: a listener does not look names up.
    pub fn listen_addr(&self) -> Result<SocketAddr, AddressError> {
        match &self.host {
            Host::Ip(ip) => Ok(SocketAddr::new(*ip, self.port)),
            host if host.is_localhost() => Ok(SocketAddr::new(LOCALHOST_ADDRS[0], self.port)),
            _ => Err(AddressError::NotListenable(self.to_string())),
        }
    }

    /// The addresses a load to this authority may connect to, in the order
    /// to try them: an IP address itself, `localhost` both loopback
    /// addresses, any other name what the resolver answers (only with
    /// [`Reach::Any`]).
    ///
    /// # Errors
    /// With [`Reach::Loopback`], a name other than `localhost` (refused
    /// before any lookup) or an address outside loopback; a name that does
    /// not resolve, or resolves to nothing.
    pub fn targets(&self, reach: Reach) -> Result<Vec<SocketAddr>, AddressError> {
        let addrs = match &self.host {
            Host::Ip(ip) => vec![SocketAddr::new(*ip, self.port)],
            host if host.is_localhost() => LOCALHOST_ADDRS.map(|ip| SocketAddr::new(ip, self.port)).to_vec(),
            Host::Name(name) if reach == Reach::Loopback => return Err(AddressError::NotLoopbackName(name.clone())),
            Host::Name(name) => (name.as_str(), self.port)
                .to_socket_addrs()
                .map_err(|source| AddressError::Resolve { name: name.clone(), source })?
                .collect(),
        };
        if reach == Reach::Loopback
            && let Some(outside) = addrs.iter().find(|a| !is_loopback(a.ip()))
        {
            return Err(AddressError::NotLoopback(*outside));
        }
        if addrs.is_empty() {
            return Err(AddressError::NoAddress(self.host.to_string()));
        }
        Ok(addrs)
    }
}

/// Parses a listen address, `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT`
/// (as [`Authority::listen_addr`]): the value parser of every `--addr`.
///
/// # Errors
/// Text that is not one of those forms.
pub fn listen_addr(text: &str) -> Result<SocketAddr, AddressError> {
    text.trim().parse::<Authority>()?.listen_addr()
}

/// The first of `addrs` that accepts a TCP connection within
/// [`PROBE_TIMEOUT`] (the probe is closed at once); the first of them when
/// there is only one or none accepts (the load's own preflight then says
/// why). `None` for an empty slice.
pub fn first_accepting(addrs: &[SocketAddr]) -> Option<SocketAddr> {
    match addrs {
        [] => None,
        [one] => Some(*one),
        [first, ..] => {
            Some(addrs.iter().copied().find(|a| TcpStream::connect_timeout(a, PROBE_TIMEOUT).is_ok()).unwrap_or(*first))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn sock(text: &str) -> SocketAddr {
        text.parse().unwrap()
    }

    #[test]
    fn every_authority_form_parses_and_prints_back_as_rfc_3986_writes_it() {
        for (text, host, printed) in [
            ("127.0.0.1:8080", Host::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST)), "127.0.0.1:8080"),
            ("127.1.2.3:0", Host::Ip(IpAddr::V4(Ipv4Addr::new(127, 1, 2, 3))), "127.1.2.3:0"),
            ("[::1]:8080", Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)), "[::1]:8080"),
            ("[0:0:0:0:0:0:0:1]:8080", Host::Ip(IpAddr::V6(Ipv6Addr::LOCALHOST)), "[::1]:8080"),
            ("[::ffff:127.0.0.1]:8080", Host::Ip("::ffff:127.0.0.1".parse().unwrap()), "[::ffff:127.0.0.1]:8080"),
            ("localhost:8080", Host::Name("localhost".into()), "localhost:8080"),
            ("LocalHost:8080", Host::Name("localhost".into()), "localhost:8080"),
            ("api.localhost:65535", Host::Name("api.localhost".into()), "api.localhost:65535"),
            ("bench-server:8080", Host::Name("bench-server".into()), "bench-server:8080"),
        ] {
            let parsed: Authority = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(parsed.host, host, "{text}");
            assert_eq!(parsed.to_string(), printed, "{text}");
        }
        assert_eq!(Authority::from(sock("[::1]:9")).to_string(), "[::1]:9", "a Host header's brackets");
    }

    #[test]
    fn malformed_authorities_are_refused_with_the_text_and_the_right_form() {
        for bad in [
            "",
            "localhost",
            "8080",
            ":8080",
            "127.0.0.1",
            "127.0.0.1:",
            "127.0.0.1:65536",
            "127.0.0.1:-1",
            "127.0.0.1:+80",
            "[::1]",
            "[::1]8080",
            "[::1:8080",
            "[127.0.0.1]:80",
            "[fe80::1%lo]:80",
            "256.0.0.1:80",
            "127.1:80",
            "bad_name:80",
            "-x:80",
            "a b:80",
            "http://localhost:80",
        ] {
            let err = bad.parse::<Authority>().unwrap_err();
            assert!(matches!(err, AddressError::Syntax(_)), "{bad:?}: {err:?}");
            assert!(err.to_string().contains(&format!("'{bad}'")) && err.to_string().contains("[::1]"), "{err}");
        }
        for unbracketed in ["::1:8080", "fd00::5:8080"] {
            let err = unbracketed.parse::<Authority>().unwrap_err();
            assert!(matches!(err, AddressError::Unbracketed(_)), "{unbracketed}: {err:?}");
            assert!(err.to_string().contains("in brackets, e.g. [::1]:8080"), "{err}");
        }
    }

    #[test]
    fn a_listener_binds_an_ip_as_given_and_localhost_as_127_0_0_1() {
        assert_eq!(listen_addr("127.0.0.1:0").unwrap(), sock("127.0.0.1:0"));
        assert_eq!(listen_addr("[::1]:8080").unwrap(), sock("[::1]:8080"));
        assert_eq!(listen_addr("0.0.0.0:9464").unwrap(), sock("0.0.0.0:9464"), "a pod's metrics");
        assert_eq!(listen_addr("[::]:9464").unwrap(), sock("[::]:9464"));
        assert_eq!(listen_addr("localhost:8080").unwrap(), sock("127.0.0.1:8080"));
        assert!(matches!(listen_addr("example.org:80"), Err(AddressError::NotListenable(_))));
        assert!(matches!(listen_addr("localhost"), Err(AddressError::Syntax(_))));
    }

    #[test]
    fn the_loopback_rule_refuses_other_hosts_before_any_lookup() {
        let targets = |text: &str, reach| text.parse::<Authority>().unwrap().targets(reach);
        assert_eq!(targets("127.9.8.7:80", Reach::Loopback).unwrap(), [sock("127.9.8.7:80")]);
        assert_eq!(targets("[::1]:80", Reach::Loopback).unwrap(), [sock("[::1]:80")]);
        assert_eq!(targets("[::ffff:127.0.0.1]:80", Reach::Loopback).unwrap(), [sock("[::ffff:127.0.0.1]:80")]);
        for name in ["localhost:80", "a.localhost:80"] {
            assert_eq!(targets(name, Reach::Loopback).unwrap(), [sock("127.0.0.1:80"), sock("[::1]:80")], "{name}");
        }
        for outside in ["192.0.2.1:80", "[2001:db8::1]:80", "[::]:80", "0.0.0.0:80", "[::ffff:192.0.2.1]:80"] {
            let err = targets(outside, Reach::Loopback).unwrap_err();
            assert!(matches!(err, AddressError::NotLoopback(_)), "{outside}: {err:?}");
            assert!(err.to_string().contains("--allow-remote"), "{err}");
            assert!(targets(outside, Reach::Any).is_ok(), "{outside}");
        }
        // `.invalid` never resolves (RFC 6761): refused as a name, not as a failed lookup.
        let err = targets("bench.example.invalid:80", Reach::Loopback).unwrap_err();
        assert!(matches!(err, AddressError::NotLoopbackName(ref n) if n == "bench.example.invalid"), "{err:?}");
        assert!(matches!(targets("bench.example.invalid:80", Reach::Any), Err(AddressError::Resolve { .. })));
    }

    #[test]
    fn a_name_of_several_addresses_goes_to_the_one_that_accepts() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let open = listener.local_addr().unwrap();
        let closed = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap(); // dropped: closed
        assert_eq!(first_accepting(&[closed, open]), Some(open));
        assert_eq!(first_accepting(&[closed]), Some(closed), "one address: no probe");
        assert_eq!(first_accepting(&[closed, closed]), Some(closed), "none accepts: the first");
        assert_eq!(first_accepting(&[]), None);
    }
}
