//! SIGTERM and SIGINT, installed before a server announces itself, and the
//! deadline that bounds the stop they start.
//!
//! A server prints its listening line only after [`ShutdownSignals::install`]
//! returned, so a supervisor that sends SIGTERM right after reading that line
//! always gets a clean stop, never the signal's default action.
//!
//! A framework's graceful stop waits for its connections, and a client can
//! hold one open for ever (half a request head, half a body). So every
//! server races its graceful stop against [`ShutdownSignals::with_deadline`]'s
//! deadline, [`STOP_GRACE`] after the signal, and exits when the first ends.

use std::future::{Future, pending};
use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::oneshot;

use crate::process::STOP_GRACE;

/// Which signal asked the server to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGTERM: stop accepting, finish in-flight requests.
    Terminate,
    /// SIGINT (Ctrl-C).
    Interrupt,
}

/// Handlers for SIGTERM and SIGINT, installed at construction.
#[derive(Debug)]
pub struct ShutdownSignals {
    term: Signal,
    int: Signal,
}

impl ShutdownSignals {
    /// Installs both handlers; from here on neither signal kills the process.
    ///
    /// # Errors
    /// When the handlers cannot be registered. Must run inside a tokio
    /// runtime with I/O enabled (actix-web's runtime is one).
    pub fn install() -> io::Result<Self> {
        Ok(Self { term: signal(SignalKind::terminate())?, int: signal(SignalKind::interrupt())? })
    }

    /// Waits for the first of the two signals.
    pub async fn recv(mut self) -> Stop {
        tokio::select! {
            _ = self.term.recv() => Stop::Terminate,
            _ = self.int.recv() => Stop::Interrupt,
        }
    }

    /// Splits into the signal, for the framework's graceful stop, and a
    /// deadline that ends [`STOP_GRACE`] after the signal was received (never,
    /// if the first future is dropped before it). Race the server against the
    /// deadline; the signal future must be polled (given to the framework or
    /// spawned) for the deadline to start.
    pub fn with_deadline(self) -> (impl Future<Output = Stop> + Send, impl Future<Output = ()> + Send) {
        let (received, started) = oneshot::channel();
        let stop = async move {
            let stop = self.recv().await;
            let _ = received.send(());
            stop
        };
        let deadline = async move {
            match started.await {
                Ok(()) => tokio::time::sleep(STOP_GRACE).await,
                Err(_) => pending().await,
            }
        };
        (stop, deadline)
    }
}
