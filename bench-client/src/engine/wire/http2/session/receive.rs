//! The receiving side of a [`Session`]: the server's frames read one by
//! one, each by the rules of its type (RFC 9113 §6), and what the loop must
//! know pushed as [`Event`]s.

use super::super::events::{Event, Routes, SessionError};
use super::super::frame::{
    self, ACK, CANCEL, CONTINUATION, DATA, DEFAULT_MAX_FRAME, END_HEADERS, END_STREAM, GOAWAY, HEAD, HEADERS, Head,
    PADDED, PING, PRIORITY, PUSH_PROMISE, RST_STREAM, SETTINGS, STREAM_CLOSED, WINDOW_UPDATE,
};
use super::super::hpack::table_unchanged;
use super::{GIVE_BACK, GIVE_BACK_CONNECTION, MAX_HEADER_BLOCK, Session};

impl Session {
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
            sized(h, h.length <= DEFAULT_MAX_FRAME)?;
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

    /// One frame: a response's (`DATA`, `HEADERS` and its `CONTINUATION`s),
    /// or the connection's control frames.
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
                self.data(h, data, routes, events)
            }
            HEADERS => {
                let mut block = unpadded(h, payload)?;
                if h.flags & PRIORITY != 0 {
                    block = block.get(5..).ok_or(SessionError::Protocol(h.kind))?;
                }
                let end_stream = h.flags & END_STREAM != 0;
                if h.flags & END_HEADERS != 0 {
                    return self.headers(h.stream, block, end_stream, routes, events);
                }
                // Kept until its `CONTINUATION`s end it.
                self.block.clear();
                self.block.extend_from_slice(block);
                self.block_of = Some((h.stream, end_stream));
                Ok(())
            }
            CONTINUATION => {
                // Only of the block's stream, within MAX_HEADER_BLOCK.
                let Some((stream, end_stream)) = self.block_of.filter(|(s, _)| *s == h.stream) else {
                    return Err(SessionError::Protocol(h.kind));
                };
                if self.block.len() + payload.len() > MAX_HEADER_BLOCK {
                    return Err(SessionError::HeaderBlock(self.block.len() + payload.len()));
                }
                self.block.extend_from_slice(payload);
                if h.flags & END_HEADERS == 0 {
                    return Ok(());
                }
                self.block_of = None;
                let block = std::mem::take(&mut self.block);
                let decoded = self.headers(stream, &block, end_stream, routes, events);
                self.block = block;
                decoded
            }
            PUSH_PROMISE => Err(SessionError::Protocol(h.kind)),
            _ => self.control(h, payload, events),
        }
    }

    /// A frame that steers the connection rather than carries a response:
    /// a stream reset, `SETTINGS`, `PING`, `GOAWAY`, `WINDOW_UPDATE`;
    /// `PRIORITY`, acknowledgements and unknown types are ignored (§5.5).
    fn control(&mut self, h: Head, payload: &[u8], events: &mut Vec<Event>) -> Result<(), SessionError> {
        match h.kind {
            RST_STREAM => {
                sized(h, h.length == 4)?;
                if let Ok(k) = self.streams.binary_search_by_key(&h.stream, |s| s.id) {
                    self.streams.remove(k);
                    events.push(Event::Reset { stream: h.stream, code: frame::read_32(payload) });
                }
            }
            SETTINGS if h.flags & ACK == 0 => self.settings(h, payload, events)?,
            PING if h.flags & ACK == 0 => {
                sized(h, h.length == 8)?;
                self.out.extend_from_slice(&frame::head(8, PING, ACK, 0));
                self.out.extend_from_slice(payload);
            }
            GOAWAY => {
                sized(h, h.length >= 8)?;
                let last_stream = frame::read_31(payload);
                let first = self.goaway.is_none();
                self.goaway = Some(self.goaway.map_or(last_stream, |l| l.min(last_stream)));
                events.push(Event::GoAway { last_stream, code: frame::read_32(&payload[4..]), first });
            }
            WINDOW_UPDATE => {
                sized(h, h.length == 4)?;
                let increment = i64::from(frame::read_31(payload));
                if h.stream == 0 {
                    self.send_window += increment;
                } else if let Ok(k) = self.streams.binary_search_by_key(&h.stream, |s| s.id) {
                    self.streams[k].send_window += increment;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn settings(&mut self, h: Head, payload: &[u8], events: &mut Vec<Event>) -> Result<(), SessionError> {
        sized(h, h.stream == 0 && h.length.is_multiple_of(6))?;
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

/// Whether a frame's length is `right` for its type; else a `FRAME_SIZE_ERROR`.
fn sized(h: Head, right: bool) -> Result<(), SessionError> {
    if right { Ok(()) } else { Err(SessionError::FrameSize { kind: h.kind, length: h.length }) }
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
