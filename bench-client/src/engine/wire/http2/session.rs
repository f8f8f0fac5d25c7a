//! One HTTP/2 connection of the load, sans I/O: the engine's loop writes
//! what [`Session::unwritten`] holds and hands it the bytes it reads; the
//! session answers the protocol's own frames (the server's `SETTINGS`
//! acknowledged, `PING` answered, `WINDOW_UPDATE` sent as response data is
//! consumed), opens streams within what the server grants, frames request
//! bodies within its windows, decodes response headers with HPACK and
//! compares each stream's body, byte for byte as it arrives, with its
//! route's. What the loop must know comes out as [`Event`]s.

use std::collections::VecDeque;

use super::events::{Collected, Routes};
use super::frame::{self, CANCEL, DATA, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, END_STREAM, HEAD, MAX_31};

mod receive;

/// Received bytes not yet given back to a stream's window are given back
/// once they reach half of it; the connection's likewise.
const GIVE_BACK: u32 = frame::STREAM_WINDOW / 2;
/// See [`GIVE_BACK`]: the connection's half.
const GIVE_BACK_CONNECTION: u32 = frame::CONNECTION_WINDOW / 2;

/// The largest header block kept while its `CONTINUATION`s arrive: beyond
/// it, an endless sequence (the "CONTINUATION flood") ends the connection
/// with memory bounded. 1 MiB, far above any response of the routes
/// (this client sends no `SETTINGS_MAX_HEADER_LIST_SIZE`, so any cap is its own).
pub(super) const MAX_HEADER_BLOCK: usize = 1 << 20;

/// One stream of ours, open.
#[derive(Debug, Clone)]
struct Stream {
    id: u32,
    route: usize,
    /// Final status, once its headers arrived.
    status: Option<u16>,
    /// Body bytes received so far.
    received: usize,
    /// Every body byte so far equals the expected one.
    matches: bool,
    /// Body bytes received and not yet given back to its window.
    unacked: u32,
    /// Its request body's bytes already sent in `DATA`, and what the server's
    /// window for it still allows.
    body_sent: usize,
    send_window: i64,
}

/// One HTTP/2 connection's state.
pub struct Session {
    decoder: loona_hpack::Decoder<'static>,
    /// The last header block that left the dynamic table as it was (fields
    /// indexed, or literals not indexed), and the status it decoded to: the
    /// same bytes mean the same headers until a block changes the dynamic
    /// table (then it is cleared). `loona-hpack` builds its Huffman tables
    /// anew for every string it decodes; with this, a response repeating
    /// the last one's header block costs a comparison of its bytes.
    indexed_block: Option<(Vec<u8>, Option<u16>)>,
    /// Bytes to write, and how many of them are written.
    out: Vec<u8>,
    written: usize,
    ready: bool,
    max_streams: u32,
    max_frame: usize,
    peer_initial_window: i64,
    send_window: i64,
    /// Connection-level bytes received and not yet given back.
    unacked: u32,
    next_id: u32,
    /// Open streams, ascending ids.
    streams: Vec<Stream>,
    /// Streams whose request body waits for window.
    blocked: VecDeque<u32>,
    /// A header block being assembled from `CONTINUATION`s: its stream, end of stream.
    block: Vec<u8>,
    block_of: Option<(u32, bool)>,
    goaway: Option<u32>,
    /// The streams this client reset lately (at most [`CANCELLED_KEPT`]):
    /// frames the server sent before it saw the reset are ignored (§5.1).
    cancelled: VecDeque<u32>,
    /// Preflight: the bodies and `Content-Type` received, kept.
    collected: Option<Collected>,
}

/// How many of the streams it reset a session remembers: frames in flight
/// on them are ignored, later ones are stray.
const CANCELLED_KEPT: usize = 64;

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    /// A new connection's session, its preface waiting to be written.
    pub fn new() -> Self {
        let mut out = Vec::with_capacity(1024);
        frame::load_preface(&mut out);
        Self {
            decoder: loona_hpack::Decoder::new(),
            indexed_block: None,
            out,
            written: 0,
            ready: false,
            max_streams: u32::MAX,
            max_frame: DEFAULT_MAX_FRAME,
            peer_initial_window: DEFAULT_WINDOW,
            send_window: DEFAULT_WINDOW,
            unacked: 0,
            next_id: 1,
            streams: Vec::new(),
            blocked: VecDeque::new(),
            block: Vec::new(),
            block_of: None,
            goaway: None,
            cancelled: VecDeque::new(),
            collected: None,
        }
    }

    /// A session that keeps every body byte and the `Content-Type` (preflight).
    pub fn collecting() -> Self {
        Self { collected: Some(Collected::default()), ..Self::new() }
    }

    /// What it kept ([`Session::collecting`]).
    pub fn collected(&self) -> Option<&Collected> {
        self.collected.as_ref()
    }

    /// Bytes waiting to be written.
    #[inline]
    pub fn unwritten(&self) -> &[u8] {
        &self.out[self.written..]
    }

    /// `n` bytes of [`Session::unwritten`] were written.
    #[inline]
    pub fn wrote(&mut self, n: usize) {
        self.written += n;
        if self.written == self.out.len() {
            self.out.clear();
            self.written = 0;
        }
    }

    /// Whether another stream may open now: the server's `SETTINGS` arrived,
    /// it has not sent `GOAWAY`, fewer streams are open than it grants, and
    /// stream ids remain.
    #[inline]
    pub fn can_open(&self) -> bool {
        self.ready
            && self.goaway.is_none()
            && (self.streams.len() as u64) < u64::from(self.max_streams)
            && self.next_id <= MAX_31
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// The last stream the server's `GOAWAY` named, if it sent one.
    pub fn goaway(&self) -> Option<u32> {
        self.goaway
    }

    /// No stream will open on it again: the server sent `GOAWAY`, or the
    /// client's stream ids (odd, up to 2^31 − 1) are used up. Once its open
    /// streams are settled, the connection is replaced.
    pub fn is_spent(&self) -> bool {
        self.goaway.is_some() || self.next_id > MAX_31
    }

    /// A session whose next stream id is `id` (the ids' end, in tests).
    #[cfg(test)]
    pub(super) fn from_stream_id(id: u32) -> Self {
        Self { next_id: id, ..Self::new() }
    }

    /// Whether `stream`'s request body is waiting for the server's window.
    pub fn is_blocked(&self, stream: u32) -> bool {
        self.blocked.contains(&stream)
    }

    /// Resets `stream` (`RST_STREAM(CANCEL)`): its request is given up (timed
    /// out, or answered before its body was all sent). Its slot of the
    /// server's concurrent streams is free again; frames still on their way
    /// on it are ignored.
    pub fn cancel(&mut self, stream: u32) {
        if let Ok(k) = self.streams.binary_search_by_key(&stream, |s| s.id) {
            self.streams.remove(k);
        }
        self.blocked.retain(|&id| id != stream);
        frame::reset(&mut self.out, stream, CANCEL);
        if self.cancelled.len() == CANCELLED_KEPT {
            self.cancelled.pop_front();
        }
        self.cancelled.push_back(stream);
    }

    /// Opens a stream for a request of `route` (only when
    /// [`Session::can_open`]): its header frames, then as much of its body
    /// as the windows allow. Returns its id.
    pub fn open(&mut self, route: usize, routes: Routes<'_>) -> u32 {
        let id = self.next_id;
        self.next_id += 2;
        let start = self.out.len();
        let (headers, body) = routes.request(route);
        self.out.extend_from_slice(headers);
        let mut at = start;
        let id_bytes = id.to_be_bytes();
        while at + HEAD <= self.out.len() {
            let length = frame::read_head(&self.out[at..]).length;
            self.out[at + 5..at + HEAD].copy_from_slice(&id_bytes);
            at += HEAD + length;
        }
        self.streams.push(Stream {
            id,
            route,
            status: None,
            received: 0,
            matches: true,
            unacked: 0,
            body_sent: 0,
            send_window: self.peer_initial_window,
        });
        if !body.is_empty() {
            self.blocked.push_back(id);
            self.send_bodies(routes);
        }
        id
    }

    /// Sends what request bodies the windows now allow.
    fn send_bodies(&mut self, routes: Routes<'_>) {
        for _ in 0..self.blocked.len() {
            let Some(id) = self.blocked.pop_front() else { break };
            let Ok(k) = self.streams.binary_search_by_key(&id, |s| s.id) else { continue };
            let s = &mut self.streams[k];
            let body = routes.request(s.route).1;
            while s.body_sent < body.len() {
                let allowed = self.send_window.min(s.send_window).min(self.max_frame as i64);
                if allowed <= 0 {
                    break;
                }
                let n = (body.len() - s.body_sent).min(allowed as usize);
                let end = if s.body_sent + n == body.len() { END_STREAM } else { 0 };
                self.out.extend_from_slice(&frame::head(n as u32, DATA, end, id));
                self.out.extend_from_slice(&body[s.body_sent..s.body_sent + n]);
                s.body_sent += n;
                s.send_window -= n as i64;
                self.send_window -= n as i64;
            }
            if s.body_sent < body.len() {
                self.blocked.push_back(id);
            }
        }
    }
}
