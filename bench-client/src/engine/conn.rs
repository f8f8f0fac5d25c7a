//! One connection slot of an engine thread, and why it gets dropped.

use std::collections::VecDeque;
use std::num::NonZeroUsize;
use std::time::Instant;

use super::counters::Counts;
use super::http2::Session;
use super::stats::FailureKind;
use super::tls::Stream;

/// [`Outstanding::stream`] of a request not written on a stream yet (above
/// every stream id, so a connection's requests stay in ascending order).
pub(super) const UNASSIGNED: u32 = u32::MAX;

/// One request written and not yet settled.
#[derive(Debug, Clone, Copy)]
pub(super) struct Outstanding {
    /// When it was due: the write time in the closed loop, the schedule's
    /// time in the open loop. Latency counts from here.
    pub(super) due: Instant,
    /// When it was written.
    pub(super) sent: Instant,
    /// Its route: an index into the load's routes.
    pub(super) route: usize,
    /// HTTP/2: its stream, or [`UNASSIGNED`]; HTTP/1.1: 0.
    pub(super) stream: u32,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Phase {
    /// Waiting for a turn to connect (see [`super::UNCONFIRMED_AT_ONCE`]).
    Queued,
    /// Waiting until this instant before connecting again.
    Backoff(Instant),
    /// Connect started at this instant.
    Connecting(Instant),
    /// Established.
    Open,
}

/// One connection slot.
pub(super) struct Conn {
    pub(super) stream: Option<Stream>,
    pub(super) phase: Phase,
    /// The next established connection is a reconnection.
    pub(super) reconnect: bool,
    /// Read buffer; unread response bytes lie in `buf[start..end]`.
    pub(super) buf: Vec<u8>,
    pub(super) start: usize,
    pub(super) end: usize,
    /// Requests written (or queued to write) and not yet settled, oldest
    /// first. After a clean close they wait here for the next connection.
    /// HTTP/2: those on a stream first, ids ascending, then those waiting
    /// for one (a stream granted), so a stream's request is found by a
    /// binary search.
    pub(super) outstanding: VecDeque<Outstanding>,
    /// HTTP/2: the connection's session (streams, windows, HPACK), from the
    /// connection's start.
    pub(super) h2: Option<Box<Session>>,
    /// Responses completed on the current connection.
    pub(super) served: u64,
    /// Counted in the worker's count of unconfirmed connections.
    pub(super) unconfirmed: bool,
    /// Bytes of queued requests not yet accepted by the socket.
    pub(super) unwritten: usize,
    /// Route of the requests queued last (and of every unwritten byte: the
    /// route only changes once the socket has taken all queued bytes).
    pub(super) route: usize,
    /// Listed among the connections free to take a due open-loop request.
    pub(super) listed_free: bool,
    /// When it last had nothing to do: established, or its last response read.
    pub(super) idle_since: Instant,
}

impl Conn {
    /// After a read that settled responses (it had served `served` before):
    /// idle from `done`, and its first answer ends its TLS handshake.
    pub(super) fn answered(&mut self, served: u64, done: Instant, counts: &mut Counts) {
        if self.served == served {
            return;
        }
        self.idle_since = done;
        if served == 0
            && let Some(resumed) = self.stream.as_ref().and_then(Stream::resumed)
        {
            counts.tls_handshakes += 1;
            counts.tls_resumed += u64::from(resumed);
        }
    }

    /// How many more requests it may have outstanding: below `pipeline`,
    /// and below its last request when it closes after `limit` responses.
    #[inline]
    pub(super) fn room(&self, pipeline: usize, limit: Option<NonZeroUsize>) -> usize {
        let room = pipeline.saturating_sub(self.outstanding.len());
        match limit {
            // No request beyond the connection's last: it closes once answered.
            Some(limit) => room.min(limit.get().saturating_sub(self.served as usize + self.outstanding.len())),
            None => room,
        }
    }
}

/// Why a connection is dropped.
pub(super) enum Disconnect {
    /// The server closed a keep-alive connection between responses (after
    /// `Connection: close`, or an end of stream or reset after at least one
    /// response and before any byte of the next): a reconnection, not an
    /// error. Outstanding requests are written again, once, on the next
    /// connection (GET is idempotent; HTTP clients retry this race too) and
    /// keep their due time.
    Closed,
    /// The server closed a connection with nothing outstanding that had
    /// been idle for [`super::KEEP_ALIVE_IDLE`] or longer: its keep-alive
    /// timeout, counted apart from churn.
    Idle,
    /// Its outstanding requests fail with this kind.
    Failed(FailureKind),
    /// The client closes it, all its responses read, having sent its
    /// `requests_per_connection`: churn of the client's own, no failure.
    Done,
    /// HTTP/2: the server sent `GOAWAY` (or the stream ids are used up)
    /// and every stream it may still answer is settled: the requests it did
    /// not process wait for the next connection.
    GoAway,
}
