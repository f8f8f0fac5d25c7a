//! TLS for the servers: the certificate and key a server presents, either
//! generated at its start (`--tls`: nothing secret is committed or kept on
//! disk) or read from PEM files (`--tls-cert`, `--tls-key`), and the rustls
//! server configuration actix-web and axum serve it with (Rocket takes the
//! PEM text itself), offering HTTP/2 and HTTP/1.1 by ALPN. One crypto
//! provider in the workspace: ring.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The names a generated certificate is valid for: the loopback addresses
/// a server under test is reached at, by name and by address.
pub const GENERATED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// HTTP/2's ALPN name, the servers' first choice over TLS.
pub const ALPN_H2: &[u8] = b"h2";
/// HTTP/1.1's ALPN name: what a client that does not offer `h2` gets.
pub const ALPN_HTTP_1_1: &[u8] = b"http/1.1";

/// Why a server cannot have its certificate.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A file holds no certificate, or no private key, in PEM.
    #[error("{path}: no {what} in PEM found")]
    Pem {
        /// The file.
        path: String,
        /// "certificate" or "private key".
        what: &'static str,
    },
    /// The certificate cannot be generated.
    #[error("cannot generate a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// rustls refused the pair (say, a key that does not match).
    #[error("certificate and key refused: {0}")]
    Refused(#[from] rustls::Error),
}

/// A certificate chain and its private key, in PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct TlsIdentity {
    /// The certificate chain, leaf first.
    pub cert_pem: String,
    /// The leaf's private key.
    pub key_pem: String,
}

impl std::fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of every log line.
        f.debug_struct("TlsIdentity").field("cert_pem", &self.cert_pem.len()).finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// A self-signed certificate for [`GENERATED_NAMES`] and a new key.
    ///
    /// # Errors
    /// When rcgen cannot make one.
    pub fn generate() -> Result<Self, TlsError> {
        let names: Vec<String> = GENERATED_NAMES.iter().map(|&n| n.to_owned()).collect();
        let generated = rcgen::generate_simple_self_signed(names)?;
        Ok(Self { cert_pem: generated.cert.pem(), key_pem: generated.signing_key.serialize_pem() })
    }

    /// The certificate chain of `cert` and the key of `key`, checked to be
    /// PEM that holds one of each.
    ///
    /// # Errors
    /// A file that cannot be read or holds no certificate (key) in PEM.
    pub fn from_files(cert: &Path, key: &Path) -> Result<Self, TlsError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|source| TlsError::Read { path: path.display().to_string(), source })
        };
        let identity = Self { cert_pem: read(cert)?, key_pem: read(key)? };
        if identity.certificates().is_empty() {
            return Err(TlsError::Pem { path: cert.display().to_string(), what: "certificate" });
        }
        if identity.private_key().is_none() {
            return Err(TlsError::Pem { path: key.display().to_string(), what: "private key" });
        }
        Ok(identity)
    }

    /// The certificate chain, DER, leaf first.
    pub fn certificates(&self) -> Vec<CertificateDer<'static>> {
        CertificateDer::pem_slice_iter(self.cert_pem.as_bytes()).filter_map(Result::ok).collect()
    }

    /// The private key, DER.
    pub fn private_key(&self) -> Option<PrivateKeyDer<'static>> {
        PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes()).ok()
    }

    /// The rustls server configuration of this identity, offering HTTP/2
    /// then HTTP/1.1 by ALPN (rustls picks the first of the server's list
    /// the client offers), with rustls's defaults otherwise (TLS 1.3 and
    /// 1.2, session tickets and a session cache for resumption).
    ///
    /// # Errors
    /// When rustls refuses the pair.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let key = self.private_key().ok_or(TlsError::Pem { path: "the key".to_owned(), what: "private key" })?;
        let mut config =
            rustls::ServerConfig::builder().with_no_client_auth().with_single_cert(self.certificates(), key)?;
        config.alpn_protocols = vec![ALPN_H2.to_vec(), ALPN_HTTP_1_1.to_vec()];
        Ok(Arc::new(config))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_identity_is_one_certificate_and_its_key_that_rustls_accepts() {
        let identity = TlsIdentity::generate().unwrap();
        assert_eq!(identity.certificates().len(), 1);
        assert!(identity.private_key().is_some());
        let config = identity.server_config().unwrap();
        assert_eq!(config.alpn_protocols, vec![b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert!(!format!("{identity:?}").contains("PRIVATE KEY"), "the key is never printed");
        // Two starts, two keys.
        assert_ne!(TlsIdentity::generate().unwrap().key_pem, identity.key_pem);
    }

    #[test]
    fn files_round_trip_and_bad_files_say_which() {
        let dir = tempfile::tempdir().unwrap();
        let identity = TlsIdentity::generate().unwrap();
        let (cert, key, junk) = (dir.path().join("cert.pem"), dir.path().join("key.pem"), dir.path().join("junk"));
        std::fs::write(&cert, &identity.cert_pem).unwrap();
        std::fs::write(&key, &identity.key_pem).unwrap();
        std::fs::write(&junk, "not pem").unwrap();
        assert_eq!(TlsIdentity::from_files(&cert, &key).unwrap(), identity);
        let e = TlsIdentity::from_files(&junk, &key).unwrap_err().to_string();
        assert!(e.contains("junk") && e.contains("no certificate"), "{e}");
        let e = TlsIdentity::from_files(&cert, &cert).unwrap_err().to_string();
        assert!(e.contains("cert.pem") && e.contains("no private key"), "{e}");
        let e = TlsIdentity::from_files(&dir.path().join("absent"), &key).unwrap_err().to_string();
        assert!(e.starts_with("cannot read") && e.contains("absent"), "{e}");
        // A key of another certificate: rustls refuses the pair.
        let other = TlsIdentity::generate().unwrap();
        let mismatched = TlsIdentity { cert_pem: identity.cert_pem.clone(), key_pem: other.key_pem };
        assert!(matches!(mismatched.server_config(), Err(TlsError::Refused(_))));
    }
}
