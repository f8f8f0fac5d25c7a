//! HTTP/2 (RFC 9113) for the load, framed by this client on the engine's own
//! `mio` loop: the `h2` crate runs on tokio, so using it would mean a second
//! event loop beside the engine's one, and a second copy of its accounting.
//!
//! - here: the connection start (the client's preface, the `SETTINGS` a
//!   server sends first, read by preflight to record what each server grants);
//! - `frame.rs`: frame heads, and a route's request encoded once (HPACK
//!   literals without Huffman coding, so only the stream id changes);
//! - `session.rs`: one connection's state, sans I/O ([`Session`]): streams
//!   opened within the server's grant, its `SETTINGS` acknowledged, `PING`
//!   answered, windows given back with `WINDOW_UPDATE`, response headers
//!   decoded with HPACK (`loona-hpack`: Huffman and the dynamic table), each
//!   body compared byte for byte as it arrives, `RST_STREAM` and `GOAWAY`
//!   reported as [`Event`]s for the loop to account for.

use std::fmt;

mod events;
mod frame;
mod hpack;
mod session;
#[cfg(test)]
mod session_tests;

pub use self::events::{Collected, Event, Routes, SessionError};
pub(crate) use self::frame::request;
use self::frame::{ACK, HEAD, SETTINGS, head as frame_head};
pub use self::session::Session;

/// The client connection preface: the fixed 24 bytes, then an empty
/// `SETTINGS` frame (the client takes every default).
pub fn client_preface() -> Vec<u8> {
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend_from_slice(&frame_head(0, SETTINGS, 0, 0));
    bytes
}

/// An empty `SETTINGS` frame with the ACK flag: the answer a server's
/// `SETTINGS` is owed.
pub fn settings_ack() -> [u8; 9] {
    frame_head(0, SETTINGS, ACK, 0)
}

/// What a server's first `SETTINGS` frame grants: each value as sent, the
/// protocol's default where it sent none (§6.5.2), `None` for "no limit".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Streams a client may have open at once on a connection (none sent:
    /// no limit).
    pub max_concurrent_streams: Option<u32>,
    /// Each stream's initial flow-control window, bytes (default 65,535).
    pub initial_window_size: u32,
    /// The largest frame payload the server accepts, bytes (default 16,384).
    pub max_frame_size: u32,
    /// The header compression table the server's decoder keeps, bytes
    /// (default 4,096).
    pub header_table_size: u32,
    /// The largest header list the server accepts, bytes (none sent: no limit).
    pub max_header_list_size: Option<u32>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_concurrent_streams: None,
            initial_window_size: 65_535,
            max_frame_size: 16_384,
            header_table_size: 4_096,
            max_header_list_size: None,
        }
    }
}

impl fmt::Display for Settings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limit = |v: Option<u32>, unit: &str| v.map_or_else(|| "no limit".to_owned(), |v| format!("{v}{unit}"));
        write!(
            f,
            "max concurrent streams {}, initial window {} bytes, max frame {} bytes, header table {} bytes, max header list {}",
            limit(self.max_concurrent_streams, ""),
            self.initial_window_size,
            self.max_frame_size,
            self.header_table_size,
            limit(self.max_header_list_size, " bytes"),
        )
    }
}

/// Why a server's start is not HTTP/2's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The server answered the preface with HTTP/1.x.
    #[error("answered HTTP/1.x to HTTP/2's preface (no h2c with prior knowledge here)")]
    Http1,
    /// Its first frame is not `SETTINGS` without ACK on stream 0.
    #[error("its first frame is of type {kind:#x} (flags {flags:#x}, stream {stream}), not SETTINGS")]
    NotSettings {
        /// The frame's type.
        kind: u8,
        /// Its flags.
        flags: u8,
        /// Its stream.
        stream: u32,
    },
    /// A `SETTINGS` payload that is not whole 6-byte parameters.
    #[error("a SETTINGS frame of {0} bytes, not a multiple of 6")]
    Length(usize),
}

/// The server's `SETTINGS` at the start of `buf`, what it read from the
/// server since the preface: `Ok(None)` while incomplete.
///
/// # Errors
/// [`StartError`]: HTTP/1.x, or another first frame.
pub fn server_settings(buf: &[u8]) -> Result<Option<Settings>, StartError> {
    if buf.starts_with(b"HTTP/1.") {
        return Err(StartError::Http1);
    }
    let Some(head) = buf.get(..HEAD) else { return Ok(None) };
    let length = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let (kind, flags) = (head[3], head[4]);
    let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
    if kind != SETTINGS || flags & ACK != 0 || stream != 0 {
        return Err(StartError::NotSettings { kind, flags, stream });
    }
    if !length.is_multiple_of(6) {
        return Err(StartError::Length(length));
    }
    let Some(payload) = buf.get(HEAD..HEAD + length) else { return Ok(None) };
    let mut settings = Settings::default();
    for parameter in payload.chunks_exact(6) {
        let value = u32::from_be_bytes([parameter[2], parameter[3], parameter[4], parameter[5]]);
        match u16::from_be_bytes([parameter[0], parameter[1]]) {
            0x1 => settings.header_table_size = value,
            0x3 => settings.max_concurrent_streams = Some(value),
            0x4 => settings.initial_window_size = value,
            0x5 => settings.max_frame_size = value,
            0x6 => settings.max_header_list_size = Some(value),
            // ENABLE_PUSH, ENABLE_CONNECT_PROTOCOL and unknown ones (§6.5.2: ignored).
            _ => {}
        }
    }
    Ok(Some(settings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings_frame(parameters: &[(u16, u32)]) -> Vec<u8> {
        let mut bytes = frame_head(6 * parameters.len() as u32, SETTINGS, 0, 0).to_vec();
        for (id, value) in parameters {
            bytes.extend_from_slice(&id.to_be_bytes());
            bytes.extend_from_slice(&value.to_be_bytes());
        }
        bytes
    }

    #[test]
    fn the_preface_is_rfc_9113s_and_an_empty_settings() {
        let preface = client_preface();
        assert_eq!(&preface[..24], b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        assert_eq!(&preface[24..], &[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        assert_eq!(settings_ack(), [0, 0, 0, 4, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn a_servers_settings_read_byte_by_byte_with_defaults_for_what_it_does_not_send() {
        // hyper's: 200 streams, a 1 MiB window, 16 KiB frames, 16 KiB header list; then a WINDOW_UPDATE.
        let mut buf =
            settings_frame(&[(0x3, 200), (0x4, 1_048_576), (0x5, 16_384), (0x6, 16_384), (0x2, 0), (0x99, 7)]);
        let whole = buf.len();
        buf.extend_from_slice(&frame_head(4, 0x8, 0, 0));
        for end in 0..whole {
            assert_eq!(server_settings(&buf[..end]), Ok(None), "incomplete at {end} bytes");
        }
        let expected = Settings {
            max_concurrent_streams: Some(200),
            initial_window_size: 1_048_576,
            max_header_list_size: Some(16_384),
            ..Settings::default()
        };
        assert_eq!(server_settings(&buf), Ok(Some(expected)));
        assert_eq!(server_settings(&settings_frame(&[])), Ok(Some(Settings::default())));
        assert_eq!(
            Settings::default().to_string(),
            "max concurrent streams no limit, initial window 65535 bytes, max frame 16384 bytes, header table 4096 bytes, max header list no limit"
        );
    }

    #[test]
    fn http1_another_frame_or_a_broken_length_is_refused_by_kind() {
        assert_eq!(server_settings(b"HTTP/1.1 400 Bad Request\r\n"), Err(StartError::Http1));
        assert_eq!(
            server_settings(&frame_head(0, SETTINGS, ACK, 0)),
            Err(StartError::NotSettings { kind: 4, flags: 1, stream: 0 })
        );
        assert_eq!(
            server_settings(&frame_head(8, 0x6, 0, 0)),
            Err(StartError::NotSettings { kind: 6, flags: 0, stream: 0 })
        );
        assert_eq!(server_settings(&frame_head(5, SETTINGS, 0, 0)), Err(StartError::Length(5)));
    }
}
