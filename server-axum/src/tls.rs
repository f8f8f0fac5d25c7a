//! HTTPS for `axum::serve`: a [`Listener`] whose connections arrive with
//! their TLS handshake done (tokio-rustls), so the plain and the TLS
//! listener of one process serve the same `Router` through the same
//! `axum::serve` and differ only by TLS.
//!
//! Each handshake runs in a task of its own, off the accept loop: a slow or
//! silent client delays no other connection (axum's own listener accepts
//! without waiting on a client either).

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::Listener;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// How long a client may take to complete its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Handshaken connections waiting for `axum::serve` to take them.
const READY_QUEUE: usize = 128;

/// A TCP listener whose connections are handed over after their handshake.
pub(crate) struct TlsListener {
    local: SocketAddr,
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    /// Accepts on `tcp` (in a task of the current runtime) with `config`,
    /// TCP_NODELAY set on each connection when `nodelay`.
    ///
    /// # Errors
    /// When `tcp` has no local address.
    pub(crate) fn new(
        mut tcp: TcpListener,
        config: Arc<tokio_rustls::rustls::ServerConfig>,
        nodelay: bool,
    ) -> io::Result<Self> {
        let local = tcp.local_addr()?;
        let acceptor = TlsAcceptor::from(config);
        let (tx, ready) = mpsc::channel(READY_QUEUE);
        tokio::spawn(async move {
            while !tx.is_closed() {
                // axum's accept: retries, and pauses on errors such as EMFILE.
                let (stream, peer) = Listener::accept(&mut tcp).await;
                if nodelay {
                    let _ = stream.set_nodelay(true);
                }
                let (acceptor, tx) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    // A failed or abandoned handshake just drops the connection.
                    if let Ok(Ok(tls)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        let _ = tx.send((tls, peer)).await;
                    }
                });
            }
        });
        Ok(Self { local, ready })
    }
}

impl Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(ready) => ready,
            // The accept task ended (its runtime is stopping): nothing more comes.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(self.local)
    }
}
