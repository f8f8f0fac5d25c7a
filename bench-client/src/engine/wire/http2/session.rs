//! One HTTP/2 connection of the load, sans I/O: the engine's loop writes
//! what [`Session::unwritten`] holds and hands it the bytes it reads; the
//! session answers the protocol's own frames (the server's `SETTINGS`
//! acknowledged, `PING` answered, `WINDOW_UPDATE` sent as response data is
//! consumed), opens streams within what the server grants, frames request
//! bodies within its windows, decodes response headers with HPACK and
//! compares each stream's body, byte for byte as it arrives, with its
//! route's. What the loop must know comes out as [`Event`]s.

use std::collections::VecDeque;

use super::events::{Collected, Event, Routes, SessionError};
use super::frame::{
    self, ACK, CANCEL, CONTINUATION, DATA, DEFAULT_MAX_FRAME, DEFAULT_WINDOW, END_HEADERS, END_STREAM, GOAWAY, HEAD,
    HEADERS, Head, MAX_31, PADDED, PING, PRIORITY, PUSH_PROMISE, RST_STREAM, SETTINGS, STREAM_CLOSED, WINDOW_UPDATE,
};
use super::hpack::table_unchanged;

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

    /// Reads the complete frames at the start of `buf`, pushing what the
    /// loop must know to `events` (in the order the frames came); returns
    /// the bytes read (a frame cut by the buffer's end waits for more).
    ///
    /// # Errors
    /// [`SessionError`]: the connection cannot go on.
    pub fn receive(&mut self, buf: &[u8], routes: Routes<'_>, events: &mut Vec<Event>) -> Result<usize, SessionError> {
        let mut at = 0;
        if !self.ready && buf.starts_with(b"HTTP/1.") {
            return Err(SessionError::Http1);
        }
        while buf.len() - at >= HEAD {
            let h = frame::read_head(&buf[at..]);
            if h.length > DEFAULT_MAX_FRAME {
                return Err(SessionError::FrameSize { kind: h.kind, length: h.length });
            }
            let Some(payload) = buf.get(at + HEAD..at + HEAD + h.length) else { break };
            at += HEAD + h.length;
            if !self.ready && (h.kind != SETTINGS || h.flags & ACK != 0) {
                return Err(SessionError::NotSettings(h.kind));
            }
            if self.block_of.is_some() && h.kind != CONTINUATION {
                return Err(SessionError::Protocol(h.kind));
            }
            self.frame(h, payload, routes, events)?;
        }
        if self.unacked >= GIVE_BACK_CONNECTION {
            frame::window_update(&mut self.out, 0, std::mem::take(&mut self.unacked));
        }
        if !self.blocked.is_empty() {
            self.send_bodies(routes);
        }
        Ok(at)
    }

    fn frame(
        &mut self,
        h: Head,
        payload: &[u8],
        routes: Routes<'_>,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        match h.kind {
            DATA => {
                // The whole payload counts against both windows, padding included (§6.1).
                self.unacked += h.length as u32;
                let data = unpadded(h, payload)?;
                self.data(h, data, routes, events)?;
            }
            HEADERS => {
                let mut block = unpadded(h, payload)?;
                if h.flags & PRIORITY != 0 {
                    block = block.get(5..).ok_or(SessionError::Protocol(h.kind))?;
                }
                let end_stream = h.flags & END_STREAM != 0;
                if h.flags & END_HEADERS != 0 {
                    self.headers(h.stream, block, end_stream, routes, events)?;
                } else {
                    self.block.clear();
                    self.block.extend_from_slice(block);
                    self.block_of = Some((h.stream, end_stream));
                }
            }
            CONTINUATION => {
                let Some((stream, end_stream)) = self.block_of.filter(|(s, _)| *s == h.stream) else {
                    return Err(SessionError::Protocol(h.kind));
                };
                if self.block.len() + payload.len() > MAX_HEADER_BLOCK {
                    return Err(SessionError::HeaderBlock(self.block.len() + payload.len()));
                }
                self.block.extend_from_slice(payload);
                if h.flags & END_HEADERS != 0 {
                    self.block_of = None;
                    let block = std::mem::take(&mut self.block);
                    let decoded = self.headers(stream, &block, end_stream, routes, events);
                    self.block = block;
                    decoded?;
                }
            }
            RST_STREAM => {
                if h.length != 4 {
                    return Err(SessionError::FrameSize { kind: h.kind, length: h.length });
                }
                if let Ok(k) = self.streams.binary_search_by_key(&h.stream, |s| s.id) {
                    self.streams.remove(k);
                    events.push(Event::Reset { stream: h.stream, code: frame::read_32(payload) });
                }
            }
            SETTINGS if h.flags & ACK == 0 => self.settings(h, payload, events)?,
            PING if h.flags & ACK == 0 => {
                if h.length != 8 {
                    return Err(SessionError::FrameSize { kind: h.kind, length: h.length });
                }
                self.out.extend_from_slice(&frame::head(8, PING, ACK, 0));
                self.out.extend_from_slice(payload);
            }
            GOAWAY => {
                if h.length < 8 {
                    return Err(SessionError::FrameSize { kind: h.kind, length: h.length });
                }
                let last_stream = frame::read_31(payload);
                let first = self.goaway.is_none();
                self.goaway = Some(self.goaway.map_or(last_stream, |l| l.min(last_stream)));
                events.push(Event::GoAway { last_stream, code: frame::read_32(&payload[4..]), first });
            }
            WINDOW_UPDATE => {
                if h.length != 4 {
                    return Err(SessionError::FrameSize { kind: h.kind, length: h.length });
                }
                let increment = i64::from(frame::read_31(payload));
                if h.stream == 0 {
                    self.send_window += increment;
                } else if let Ok(k) = self.streams.binary_search_by_key(&h.stream, |s| s.id) {
                    self.streams[k].send_window += increment;
                }
            }
            PUSH_PROMISE => return Err(SessionError::Protocol(h.kind)),
            // PRIORITY, acknowledgements, unknown types (§5.5: ignored).
            _ => {}
        }
        Ok(())
    }

    fn settings(&mut self, h: Head, payload: &[u8], events: &mut Vec<Event>) -> Result<(), SessionError> {
        if h.stream != 0 || !h.length.is_multiple_of(6) {
            return Err(SessionError::FrameSize { kind: h.kind, length: h.length });
        }
        for p in payload.chunks_exact(6) {
            let value = u32::from_be_bytes([p[2], p[3], p[4], p[5]]);
            match u16::from_be_bytes([p[0], p[1]]) {
                0x3 => self.max_streams = value,
                0x4 => {
                    // §6.9.2: the change applies to every open stream's window.
                    let delta = i64::from(value) - self.peer_initial_window;
                    self.peer_initial_window = i64::from(value);
                    for s in &mut self.streams {
                        s.send_window += delta;
                    }
                }
                0x5 => self.max_frame = (value as usize).clamp(DEFAULT_MAX_FRAME, 16_777_215),
                _ => {}
            }
        }
        self.out.extend_from_slice(&frame::head(0, SETTINGS, ACK, 0));
        if !self.ready {
            self.ready = true;
            events.push(Event::Ready);
        }
        Ok(())
    }

    fn headers(
        &mut self,
        stream: u32,
        block: &[u8],
        end_stream: bool,
        routes: Routes<'_>,
        events: &mut Vec<Event>,
    ) -> Result<(), SessionError> {
        let (mut status, mut content_type) = (None, None);
        let keep_type = self.collected.is_some();
        match &self.indexed_block {
            Some((bytes, known)) if !keep_type && bytes.as_slice() == block => status = *known,
            _ => {
                self.decoder
                    .decode_with_cb(block, |name, value| {
                        if &*name == b":status" {
                            status = std::str::from_utf8(&value).ok().and_then(|v| v.parse::<u16>().ok());
                        } else if keep_type && &*name == b"content-type" {
                            content_type = Some(String::from_utf8_lossy(&value).into_owned());
                        }
                    })
                    .map_err(|e| SessionError::Hpack(format!("{e:?}")))?;
                self.indexed_block = table_unchanged(block).then(|| (block.to_vec(), status));
            }
        }
        if let (Some(c), Some(t)) = (&mut self.collected, content_type) {
            c.content_type = Some(t);
        }
        let Ok(k) = self.streams.binary_search_by_key(&stream, |s| s.id) else {
            return self.closed(HEADERS, stream, events);
        };
        let s = &mut self.streams[k];
        match status {
            // An interim response: the final one follows (§8.1).
            Some(100..=199) if !end_stream => {}
            Some(code) if s.status.is_none() => s.status = Some(code),
            // Trailers: the status stays the first final one.
            _ if s.status.is_some() => {}
            _ => return Err(SessionError::Protocol(HEADERS)),
        }
        if end_stream {
            let expected_len = routes.body(s.route).len();
            self.end(k, expected_len, events);
        }
        Ok(())
    }

    /// A `DATA` frame `h` whose data (without its padding) is `data`.
    fn data(&mut self, h: Head, data: &[u8], routes: Routes<'_>, events: &mut Vec<Event>) -> Result<(), SessionError> {
        let Ok(k) = self.streams.binary_search_by_key(&h.stream, |s| s.id) else {
            return self.closed(DATA, h.stream, events);
        };
        if let Some(c) = &mut self.collected {
            c.body.extend_from_slice(data);
        }
        let s = &mut self.streams[k];
        let expected = routes.body(s.route);
        s.matches &= expected.get(s.received..s.received + data.len()) == Some(data);
        s.received += data.len();
        if h.flags & END_STREAM != 0 {
            self.end(k, expected.len(), events);
        } else {
            // The frame's whole length, padding included, is given back (§6.1).
            s.unacked += h.length as u32;
            if s.unacked >= GIVE_BACK {
                let id = s.id;
                frame::window_update(&mut self.out, id, std::mem::take(&mut s.unacked));
            }
        }
        Ok(())
    }

    /// A `DATA` or `HEADERS` frame (`kind`) on `stream`, which is not open:
    /// on one of ours already closed, a stream error ([`Event::Stray`], the
    /// stream reset); on one never opened (or the server's own), a
    /// connection error.
    fn closed(&mut self, kind: u8, stream: u32, events: &mut Vec<Event>) -> Result<(), SessionError> {
        if stream.is_multiple_of(2) || stream >= self.next_id {
            return Err(SessionError::Protocol(kind));
        }
        if self.cancelled.contains(&stream) {
            // Sent before the server saw our reset (§5.1): ignored.
            return Ok(());
        }
        frame::reset(&mut self.out, stream, STREAM_CLOSED);
        events.push(Event::Stray { stream });
        Ok(())
    }

    /// Stream `k` ended: its response, its body judged whole against
    /// `expected_len` bytes (every byte so far already compared).
    fn end(&mut self, k: usize, expected_len: usize, events: &mut Vec<Event>) {
        let s = self.streams.remove(k);
        if !self.blocked.is_empty() && self.blocked.contains(&s.id) {
            // Answered before its request body was all sent (§8.1): the rest is not
            // sent, and the stream is reset so that it does not hold one of the
            // server's concurrent streams (half-closed on our side) for ever.
            self.blocked.retain(|&id| id != s.id);
            frame::reset(&mut self.out, s.id, CANCEL);
        }
        let body_matches = s.matches && s.received == expected_len;
        events.push(Event::Response { stream: s.id, status: s.status.unwrap_or(0), body_matches });
    }
}

/// The payload of a `DATA` or `HEADERS` frame without its padding.
fn unpadded(h: Head, payload: &[u8]) -> Result<&[u8], SessionError> {
    if h.flags & PADDED == 0 {
        return Ok(payload);
    }
    let pad = usize::from(*payload.first().ok_or(SessionError::Protocol(h.kind))?);
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or(SessionError::Protocol(h.kind))
}
