//! TLS in the load loop: rustls's client connection (sans I/O) between the
//! engine's request and response buffers and its non-blocking socket, so an
//! `https://` target keeps the one loop, the framing and the verification of
//! every body that plain HTTP has.
//!
//! [`TlsClient`] is what a target's connections share: the rustls client
//! configuration (how the server's certificate is checked, whether sessions
//! resume) and the name the certificate is checked for. [`Stream`] is one
//! connection, plain or TLS, with the reads and writes the loop makes.

use std::fmt;
use std::io::{self, ErrorKind, Read, Write};
use std::path::Path;
use std::sync::Arc;

use mio::net::TcpStream;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, Resumption};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::Protocol;

/// Sessions a client keeps for resumption (rustls's default cache size).
const RESUMPTION_SESSIONS: usize = 256;

/// How the server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// Any certificate (`--insecure`): the handshake's signatures are still
    /// checked, the chain and the name are not. For servers under test with
    /// a certificate generated at their start.
    Any,
    /// Chains to one of the certificates of this PEM file (`--ca FILE`), for
    /// the target's name.
    Ca(String),
}

/// What every connection to one `https://` target shares.
#[derive(Clone)]
pub struct TlsClient {
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    trust: Trust,
    resumption: bool,
    /// The one protocol it offers by ALPN.
    protocol: Protocol,
}

impl fmt::Debug for TlsClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsClient")
            .field("name", &self.name)
            .field("trust", &self.trust)
            .field("resumption", &self.resumption)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

/// Two targets' clients are equal when they check the same name the same way.
impl PartialEq for TlsClient {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.trust == other.trust
            && self.resumption == other.resumption
            && self.protocol == other.protocol
    }
}

impl Eq for TlsClient {}

impl TlsClient {
    /// A client for the server named `host` (a DNS name or an IP address,
    /// without brackets: `common::address::Host::unbracketed`), trusting as `trust` says, resuming sessions (TLS 1.3
    /// tickets, TLS 1.2 session IDs) when `resumption`. HTTP/1.1 by ALPN
    /// ([`TlsClient::for_protocol`]).
    ///
    /// # Errors
    /// A name that is neither, a CA file that cannot be read or holds no
    /// certificate.
    pub fn new(host: &str, trust: Trust, resumption: bool) -> anyhow::Result<Self> {
        let name = ServerName::try_from(host.to_owned())
            .map_err(|_| anyhow::anyhow!("'{host}' is not a name a certificate can be checked for"))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone()).with_safe_default_protocol_versions()?;
        let mut config = match &trust {
            Trust::Any => builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth(),
            Trust::Ca(path) => builder.with_root_certificates(roots(Path::new(path))?).with_no_client_auth(),
        };
        config.alpn_protocols = vec![Protocol::Http1.alpn().to_vec()];
        config.resumption =
            if resumption { Resumption::in_memory_sessions(RESUMPTION_SESSIONS) } else { Resumption::disabled() };
        Ok(Self { config: Arc::new(config), name, trust, resumption, protocol: Protocol::Http1 })
    }

    /// This client offering `protocol` alone by ALPN: a server that does not
    /// select it is refused ([`crate::engine::ExchangeError::NotHttp2`]).
    #[must_use]
    pub fn for_protocol(self, protocol: Protocol) -> Self {
        if protocol == self.protocol {
            return self;
        }
        let mut config = (*self.config).clone();
        config.alpn_protocols = vec![protocol.alpn().to_vec()];
        Self { config: Arc::new(config), protocol, ..self }
    }

    /// Whether sessions resume.
    pub fn resumption(&self) -> bool {
        self.resumption
    }

    /// A blocking TLS stream over `tcp` (preflight's one request), its
    /// handshake done with the first write.
    ///
    /// # Errors
    /// When rustls cannot start a connection.
    pub fn blocking(
        &self,
        tcp: std::net::TcpStream,
    ) -> io::Result<rustls::StreamOwned<ClientConnection, std::net::TcpStream>> {
        Ok(rustls::StreamOwned::new(self.connection()?, tcp))
    }

    /// A new client connection (nothing sent yet).
    fn connection(&self) -> io::Result<ClientConnection> {
        ClientConnection::new(self.config.clone(), self.name.clone()).map_err(io::Error::other)
    }
}

/// The certificates of a PEM file, as trust anchors.
fn roots(path: &Path) -> anyhow::Result<RootCertStore> {
    let text = std::fs::read(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&text) {
        let cert = cert.map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        roots.add(cert).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    anyhow::ensure!(!roots.is_empty(), "{}: no certificate in PEM found", path.display());
    Ok(roots)
}

/// `--insecure`: accepts any certificate, checks the handshake's signatures.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl AnyCertificate {
    fn algorithms(&self) -> &WebPkiSupportedAlgorithms {
        &self.0.signature_verification_algorithms
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, self.algorithms())
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, self.algorithms())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms().supported_schemes()
    }
}

/// One connection of the loop: plain TCP, or TLS over it (with whether the
/// end of a resumed session's certificate is still to be checked).
pub(super) enum Stream {
    Plain(TcpStream),
    Tls(Box<(TcpStream, ClientConnection, bool)>),
}

/// A TLS error, as the read or write that met it returns it: the loop
/// counts the requests it loses as `tls` failures.
#[derive(Debug)]
pub(super) struct TlsFailure(pub(super) rustls::Error);

impl fmt::Display for TlsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TLS: {}", self.0)
    }
}

impl std::error::Error for TlsFailure {}

impl Stream {
    /// `tcp`, with TLS when `tls` (its handshake starts with the first write).
    pub(super) fn new(tcp: TcpStream, tls: Option<&TlsClient>) -> io::Result<Self> {
        Ok(match tls {
            None => Self::Plain(tcp),
            Some(client) => Self::Tls(Box::new((tcp, client.connection()?, client.trust != Trust::Any))),
        })
    }

    /// The socket (to register, or to ask about the connect).
    pub(super) fn tcp(&mut self) -> &mut TcpStream {
        match self {
            Self::Plain(tcp) => tcp,
            Self::Tls(tls) => &mut tls.0,
        }
    }

    /// Whether a read shorter than its buffer says the socket is empty:
    /// with TLS it does not (the records left may hold more), so the loop
    /// reads on until the socket would block (epoll is edge-triggered).
    pub(super) fn short_read_drains(&self) -> bool {
        matches!(self, Self::Plain(_))
    }

    /// With TLS, once its handshake is done: whether it resumed a session.
    pub(super) fn resumed(&self) -> Option<bool> {
        match self {
            Self::Plain(_) => None,
            Self::Tls(tls) => tls.1.handshake_kind().map(|k| k == rustls::HandshakeKind::Resumed),
        }
    }

    /// Whether TLS records wait for room in the socket.
    pub(super) fn wants_write(&self) -> bool {
        match self {
            Self::Plain(_) => false,
            Self::Tls(tls) => tls.1.wants_write(),
        }
    }

    /// Writes what TLS records wait, until the socket would block.
    pub(super) fn write_pending(&mut self) -> io::Result<()> {
        let Self::Tls(tls) = self else { return Ok(()) };
        let (tcp, conn, _) = &mut **tls;
        write_records(tcp, conn)
    }

    /// Ends it from the client's side: with TLS a close_notify first (best
    /// effort: what the socket does not take is dropped with it).
    pub(super) fn close(&mut self) {
        if let Self::Tls(tls) = self {
            tls.1.send_close_notify();
            let _ = self.write_pending();
        }
    }

    /// Writes request bytes: to the socket, or through TLS (accepted whole
    /// while rustls has room, its records written as far as the socket takes).
    pub(super) fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let accepted = match self {
            Self::Plain(tcp) => return tcp.write(buf),
            Self::Tls(tls) => tls.1.writer().write(buf)?,
        };
        self.write_pending()?;
        if accepted == 0 && !buf.is_empty() {
            // rustls's buffer is full: more once its records are written.
            return Err(ErrorKind::WouldBlock.into());
        }
        Ok(accepted)
    }

    /// Reads response bytes: from the socket, or the plaintext of the TLS
    /// records read from it. `Ok(0)` is the end of the stream; an end
    /// without TLS's close_notify is an `UnexpectedEof` error.
    pub(super) fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (tcp, conn, unchecked) = match self {
            Self::Plain(tcp) => return tcp.read(buf),
            Self::Tls(tls) => &mut **tls,
        };
        loop {
            match conn.reader().read(buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                done => return done,
            }
            let ended = match conn.read_tls(tcp) {
                Ok(n) => n == 0,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let processed = conn.process_new_packets();
            // Handshake messages and alerts go out now (an alert even when
            // the records were refused).
            let written = write_records(tcp, conn);
            if let Err(e) = processed {
                return Err(io::Error::other(TlsFailure(e)));
            }
            written?;
            if *unchecked && !conn.is_handshaking() {
                *unchecked = false;
                if let Some(e) = resumed_past_its_certificate(conn) {
                    return Err(io::Error::other(TlsFailure(e)));
                }
            }
            if ended {
                return match conn.reader().read(buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => Err(ErrorKind::UnexpectedEof.into()),
                    done => done,
                };
            }
        }
    }
}

/// A resumed session carries the certificate of the handshake it resumes,
/// which rustls does not check again: past the certificate's notAfter it
/// fails as that full handshake would now (RFC 8446 §4.6.1 bounds a
/// ticket's life by the certificate's). `None` for a full handshake, a
/// certificate still valid, or one whose end cannot be read.
fn resumed_past_its_certificate(conn: &ClientConnection) -> Option<rustls::Error> {
    if conn.handshake_kind() != Some(rustls::HandshakeKind::Resumed) {
        return None;
    }
    let not_after = not_after_s(conn.peer_certificates()?.first()?)?;
    let expired = UnixTime::now().as_secs() > not_after;
    expired.then_some(rustls::Error::InvalidCertificate(rustls::CertificateError::Expired))
}

/// The notAfter of certificate `der`, seconds since the Unix epoch; the
/// thread's last certificate is read once (every connection to a server
/// carries the same one).
fn not_after_s(der: &[u8]) -> Option<u64> {
    thread_local! {
        static LAST: std::cell::RefCell<(Vec<u8>, Option<u64>)> = const { std::cell::RefCell::new((Vec::new(), None)) };
    }
    LAST.with_borrow_mut(|(last, not_after)| {
        if last.as_slice() != der {
            let (_, cert) = x509_parser::parse_x509_certificate(der).ok()?;
            *not_after = u64::try_from(cert.validity().not_after.timestamp()).ok();
            *last = der.to_vec();
        }
        *not_after
    })
}

/// Writes `conn`'s waiting records to `tcp` until it would block.
fn write_records(tcp: &mut TcpStream, conn: &mut ClientConnection) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(tcp) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Whether `e`, from a read or write of a [`Stream`], is a TLS failure.
pub(super) fn is_tls_failure(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<TlsFailure>())
}
