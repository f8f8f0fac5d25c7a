//! SIGTERM and SIGINT, installed before a server announces itself.
//!
//! A server prints its listening line only after [`ShutdownSignals::install`]
//! returned, so a supervisor that sends SIGTERM right after reading that line
//! always gets a clean stop, never the signal's default action.

use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};

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
}
