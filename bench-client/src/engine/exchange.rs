//! One blocking exchange per protocol, for the callers that are not the
//! load loop: preflight fetches an answer to check it, `count` drives its
//! stretches of requests. A connection (plain or TLS) is opened as its
//! protocol starts one, requests are written and their answers read to the
//! end with the engine's own framer (HTTP/1.1) or session (HTTP/2), so what
//! passes here is what the load loop counts. Every method has one arm per
//! [`Protocol`]: a caller never matches on it, and a protocol added there
//! adds its arms here.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::wire::{Framed, http1, http2};
use super::{Protocol, Shape, Target};

/// How often a wait for the server looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

/// One answer, kept whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Status code of the final response (after any interim `1xx`).
    pub status: u16,
    /// `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// Body bytes (decoded when chunked).
    pub body: Vec<u8>,
    /// Every header field, name and value (HTTP/1.1; over HTTP/2 none are
    /// kept but `content_type`).
    pub fields: Vec<(String, Vec<u8>)>,
}

impl Reply {
    /// Its status, `Content-Type` and body: what two servers answering
    /// alike have in common (their other fields, a date, differ).
    pub fn answer(&self) -> (u16, Option<&str>, &[u8]) {
        (self.status, self.content_type.as_deref(), &self.body)
    }

    /// The fields as [`super::Shape::check`] reads them.
    pub fn field_slices(&self) -> Vec<(&[u8], &[u8])> {
        self.fields.iter().map(|(n, v)| (n.as_bytes(), v.as_slice())).collect()
    }
}

/// Why an exchange failed, by kind; the caller names the request.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// No connection.
    #[error("connect: {0}")]
    Connect(io::Error),
    /// The TLS handshake failed.
    #[error("TLS: {0}")]
    Tls(io::Error),
    /// HTTP/2 asked for, and the server does not speak it there.
    #[error("does not speak HTTP/2: {0}")]
    NotHttp2(String),
    /// An answer the engine's framer or session refuses: the load loop
    /// could not count it either.
    #[error("the load engine cannot count this answer: {0}")]
    Unframeable(String),
    /// The server closed before a complete answer.
    #[error("the connection closed before a complete response")]
    Closed,
    /// No complete answer within the exchange's timeout.
    #[error("no complete response within {}", humantime::format_duration(*.0))]
    TimedOut(Duration),
    /// The stop flag was set while waiting.
    #[error("interrupted while waiting for the answer")]
    Interrupted,
    /// The server reset the request's stream (HTTP/2).
    #[error("the server reset the stream (error code {0})")]
    Reset(u32),
    /// The server ended the connection (HTTP/2 `GOAWAY`).
    #[error("the server sent GOAWAY (error code {0})")]
    GoAway(u32),
    /// Fewer requests at once than asked for: the server grants fewer streams.
    #[error("the server grants {granted} concurrent streams, fewer than the {asked} asked for")]
    FewerStreams {
        /// Streams it let open at once.
        granted: usize,
        /// Requests asked for at once.
        asked: usize,
    },
    /// An answer other than the success asked for.
    #[error("answered status {status}{}, not the success the route carries", if *.body_matches { "" } else { " with another body" })]
    NotTheSuccess {
        /// Its status.
        status: u16,
        /// Whether its body was the expected one.
        body_matches: bool,
    },
    /// Reading or writing failed (said once: not again as its source).
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// A connection a blocking exchange reads and writes: plain, or TLS.
trait Io: Read + Write + Send {}

impl<T: Read + Write + Send> Io for T {}

/// What a protocol keeps of the connection between requests.
enum Wire {
    /// HTTP/1.1: nothing but the read buffer.
    Http1,
    /// HTTP/2: the connection's session and the events it reports.
    Http2 { session: Box<http2::Session>, events: Vec<http2::Event> },
}

/// A blocking connection to one target, its requests written as the load
/// loop writes them.
pub struct Exchange {
    stream: Box<dyn Io>,
    /// The TCP socket under `stream`: timeouts, acknowledgements, shutdown.
    socket: TcpStream,
    /// The target's request, as the engine writes it.
    request: [Vec<u8>; 1],
    head: bool,
    buf: Vec<u8>,
    eof: bool,
    wire: Wire,
    /// How long the connection's start, or one answer, may take.
    timeout: Duration,
}

impl Exchange {
    /// A connection to `target` as its protocol starts one: TCP, TLS for
    /// `https://` (for HTTP/2 with ALPN `h2` checked), and for HTTP/2 the
    /// preface and the server's `SETTINGS`. `keep`: the answers are kept
    /// whole ([`Exchange::fetch`]); `timeout`: how long the connect, the
    /// start, or one answer (a batch of them) may take.
    ///
    /// # Errors
    /// No connection, a failed handshake, a server that does not speak the
    /// protocol there, no start within `timeout`, or `stop`.
    pub fn open(
        target: &Target,
        keep: bool,
        timeout: Duration,
        stop: Option<&AtomicBool>,
    ) -> Result<Self, ExchangeError> {
        let tcp = TcpStream::connect_timeout(&target.addr, timeout).map_err(ExchangeError::Connect)?;
        tcp.set_read_timeout(Some(timeout))?;
        tcp.set_write_timeout(Some(timeout))?;
        tcp.set_nodelay(true)?;
        let socket = tcp.try_clone()?;
        let stream: Box<dyn Io> = match &target.tls {
            None => Box::new(tcp),
            Some(tls) => {
                let mut s = tls.blocking(tcp).map_err(ExchangeError::Tls)?;
                while s.conn.is_handshaking() {
                    if let Err(e) = s.conn.complete_io(&mut s.sock) {
                        let refused = rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol);
                        if e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) == Some(&refused) {
                            return Err(ExchangeError::NotHttp2(
                                "it refused ALPN h2 over TLS (no_application_protocol)".into(),
                            ));
                        }
                        return Err(ExchangeError::Tls(e));
                    }
                }
                if target.protocol == Protocol::Http2 && s.conn.alpn_protocol() != Some(b"h2") {
                    let chosen = s.conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned());
                    return Err(ExchangeError::NotHttp2(format!(
                        "ALPN h2 not selected over TLS (selected: {})",
                        chosen.as_deref().unwrap_or("none")
                    )));
                }
                Box::new(s)
            }
        };
        socket.set_read_timeout(Some(STOP_POLL))?;
        let wire = match target.protocol {
            Protocol::Http1 => Wire::Http1,
            Protocol::Http2 => {
                let session = if keep { http2::Session::collecting() } else { http2::Session::new() };
                Wire::Http2 { session: Box::new(session), events: Vec::new() }
            }
        };
        let mut exchange = Self {
            stream,
            socket,
            request: [target.request_bytes()],
            head: target.request.is_head(),
            buf: Vec::with_capacity(16 * 1024),
            eof: false,
            wire,
            timeout,
        };
        exchange.start(stop)?;
        Ok(exchange)
    }

    /// The protocol's start: HTTP/2 writes its preface and waits for the
    /// server's `SETTINGS` (a connection with no request pays for it too).
    fn start(&mut self, stop: Option<&AtomicBool>) -> Result<(), ExchangeError> {
        match self.wire {
            Wire::Http1 => Ok(()),
            Wire::Http2 { .. } => {
                let deadline = Instant::now() + self.timeout;
                while !self.http2_step(0, &[], deadline, stop)?.0 {}
                Ok(())
            }
        }
    }

    /// One request, its answer kept whole (status, `Content-Type`, body).
    /// Bytes after the answer are refused, as the load loop counts them a
    /// failure.
    ///
    /// # Errors
    /// An answer the engine cannot count, a close or a reset before it, no
    /// answer within the timeout, a failed read or write, or `stop`.
    pub fn fetch(&mut self, stop: Option<&AtomicBool>) -> Result<Reply, ExchangeError> {
        let deadline = Instant::now() + self.timeout;
        match self.wire {
            Wire::Http1 => {
                self.stream.write_all(&self.request[0])?;
                let framed = self.http1_answer(deadline, stop)?;
                if framed.len < self.buf.len() {
                    return Err(stray(&self.buf, framed.len));
                }
                let content_type =
                    framed.header(&self.buf, "content-type").map(|v| String::from_utf8_lossy(&v).into_owned());
                let fields = framed
                    .fields(&self.buf)
                    .into_iter()
                    .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), v.to_vec()))
                    .collect();
                let body = framed.body(&self.buf).into_owned();
                let reply = Reply { status: framed.status, content_type, body, fields };
                self.buf.clear();
                Ok(reply)
            }
            Wire::Http2 { .. } => {
                self.http2_open(1)?;
                loop {
                    let (_, answered) = self.http2_step(0, &[], deadline, stop)?;
                    if let Some(&(status, _)) = answered.first() {
                        let Wire::Http2 { session, .. } = &self.wire else { unreachable!("matched above") };
                        let kept = session.collected().cloned().unwrap_or_default();
                        return Ok(Reply {
                            status,
                            content_type: kept.content_type,
                            body: kept.body,
                            fields: Vec::new(),
                        });
                    }
                }
            }
        }
    }

    /// `n` requests, at once where the protocol multiplexes (HTTP/2: on `n`
    /// streams, written together), one after another where it does not;
    /// each must answer `status` with `body`.
    ///
    /// # Errors
    /// Another answer, fewer streams granted than `n`, and as [`Exchange::fetch`].
    pub fn succeed(
        &mut self,
        n: usize,
        status: u16,
        body: &[u8],
        stop: Option<&AtomicBool>,
    ) -> Result<(), ExchangeError> {
        self.succeed_shaped(n, status, body, &Shape::default(), stop)
    }

    /// [`Exchange::succeed`], each answer also of `shape` (a server behind
    /// middleware: its body decoded, its headers; over HTTP/1.1).
    ///
    /// # Errors
    /// As [`Exchange::succeed`]; a shape that is not plain over HTTP/2.
    pub fn succeed_shaped(
        &mut self,
        n: usize,
        status: u16,
        body: &[u8],
        shape: &Shape,
        stop: Option<&AtomicBool>,
    ) -> Result<(), ExchangeError> {
        let deadline = Instant::now() + self.timeout;
        match self.wire {
            Wire::Http1 => {
                for _ in 0..n {
                    self.stream.write_all(&self.request[0])?;
                    let framed = self.http1_answer(deadline, stop)?;
                    let body_matches = if shape.is_plain() {
                        framed.body_eq(&self.buf, body)
                    } else {
                        let (fields, got) = (framed.fields(&self.buf), framed.body(&self.buf));
                        shape.check(&fields, &got, body, &mut Vec::new()).is_ok()
                    };
                    if framed.status != status || !body_matches {
                        return Err(ExchangeError::NotTheSuccess { status: framed.status, body_matches });
                    }
                    self.buf.drain(..framed.len);
                }
                if self.buf.is_empty() { Ok(()) } else { Err(stray(&self.buf, 0)) }
            }
            Wire::Http2 { .. } if !shape.is_plain() => {
                Err(ExchangeError::Unframeable("a response's shape (middleware) is not checked over HTTP/2".to_owned()))
            }
            Wire::Http2 { .. } => {
                self.http2_open(n)?;
                let mut answered = 0;
                while answered < n {
                    for (got, body_matches) in self.http2_step(status, body, deadline, stop)?.1 {
                        if got != status || !body_matches {
                            return Err(ExchangeError::NotTheSuccess { status: got, body_matches });
                        }
                        answered += 1;
                    }
                }
                Ok(())
            }
        }
    }

    /// Makes `target`'s request the one this connection writes from now
    /// on (the same server: its address and protocol are this one's).
    pub fn ask(&mut self, target: &Target) {
        self.request = [target.request_bytes()];
        self.head = target.request.is_head();
    }

    /// Closes this end and waits, at most the timeout, until the
    /// server has closed its own: its cleanup is over when this returns.
    pub fn close(mut self) {
        let _ = self.socket.shutdown(Shutdown::Write);
        let _ = self.socket.set_read_timeout(Some(self.timeout));
        let mut rest = [0u8; 4096];
        while self.socket.read(&mut rest).is_ok_and(|n| n > 0) {}
    }

    /// Reads until the buffer starts with a complete HTTP/1.1 answer.
    fn http1_answer(&mut self, deadline: Instant, stop: Option<&AtomicBool>) -> Result<Framed, ExchangeError> {
        loop {
            match http1::frame_response(&self.buf, self.head, self.eof) {
                Ok(Some(framed)) => return Ok(framed),
                Ok(None) if self.eof => return Err(ExchangeError::Closed),
                Ok(None) => self.fill(deadline, stop)?,
                Err(e) => return Err(ExchangeError::Unframeable(e.to_string())),
            }
        }
    }

    /// Opens `n` HTTP/2 streams of the request at once.
    fn http2_open(&mut self, n: usize) -> Result<(), ExchangeError> {
        let Wire::Http2 { session, .. } = &mut self.wire else { unreachable!("an HTTP/2 exchange") };
        let routes = http2::Routes { requests: &self.request, expected: &[(0, &[][..], self.head)] };
        for opened in 0..n {
            if !session.can_open() {
                return Err(ExchangeError::FewerStreams { granted: opened, asked: n });
            }
            session.open(0, routes);
        }
        Ok(())
    }

    /// Writes what the HTTP/2 session has to write, reads once, and hands
    /// it the bytes: whether the server's `SETTINGS` has arrived, and the
    /// streams answered (status, body equal to `body`).
    fn http2_step(
        &mut self,
        status: u16,
        body: &[u8],
        deadline: Instant,
        stop: Option<&AtomicBool>,
    ) -> Result<(bool, Vec<(u16, bool)>), ExchangeError> {
        let Wire::Http2 { session, .. } = &mut self.wire else { unreachable!("an HTTP/2 exchange") };
        let out = session.unwritten();
        if !out.is_empty() {
            let n = out.len();
            self.stream.write_all(out)?;
            session.wrote(n);
        }
        // Acknowledged at once: a server that leaves Nagle's algorithm on and writes a response in
        // two parts (actix-web's h2 on /api/devices) would otherwise wait 40 ms per request for
        // the delayed ACK; the count is the same, the session 20 times shorter.
        rustix::net::sockopt::set_tcp_quickack(&self.socket, true).map_err(io::Error::from)?;
        self.fill(deadline, stop)?;
        if self.eof {
            return Err(ExchangeError::Closed);
        }
        let Wire::Http2 { session, events } = &mut self.wire else { unreachable!("an HTTP/2 exchange") };
        let routes = http2::Routes { requests: &self.request, expected: &[(status, body, self.head)] };
        let read = session.receive(&self.buf, routes, events).map_err(|e| match e {
            http2::SessionError::Http1 => ExchangeError::NotHttp2(e.to_string()),
            e => ExchangeError::Unframeable(e.to_string()),
        })?;
        self.buf.drain(..read);
        let (mut ready, mut answered) = (false, Vec::new());
        for event in events.drain(..) {
            match event {
                http2::Event::Ready => ready = true,
                http2::Event::Response { status, body_matches, .. } => answered.push((status, body_matches)),
                http2::Event::Reset { code, .. } => return Err(ExchangeError::Reset(code)),
                http2::Event::GoAway { code, .. } => return Err(ExchangeError::GoAway(code)),
                // The answer itself was whole; the load counts such frames (`failed.stray`).
                http2::Event::Stray { .. } => {}
            }
        }
        if !answered.is_empty() && !session.unwritten().is_empty() {
            // What the answers made it write (a stream answered early ended): now, not with the
            // next request, which may never come.
            let n = session.unwritten().len();
            self.stream.write_all(session.unwritten())?;
            session.wrote(n);
        }
        Ok((ready || session.can_open(), answered))
    }

    /// Reads what has arrived (or the end), looking at `stop` every
    /// [`STOP_POLL`] until `deadline`.
    fn fill(&mut self, deadline: Instant, stop: Option<&AtomicBool>) -> Result<(), ExchangeError> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return Ok(());
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                        return Err(ExchangeError::Interrupted);
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                // TLS: the end of the stream without close_notify.
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
                    self.eof = true;
                    return Ok(());
                }
                Err(e) => return Err(e.into()),
            }
            if Instant::now() >= deadline {
                return Err(ExchangeError::TimedOut(self.timeout));
            }
        }
    }
}

/// Bytes after an answer, with no request outstanding: the load loop
/// counts them a failure, so the exchange refuses them.
fn stray(buf: &[u8], at: usize) -> ExchangeError {
    ExchangeError::Unframeable(format!(
        "{} bytes after the response belong to no response (RFC 9112 section 6.3), starting {:?}",
        buf.len() - at,
        String::from_utf8_lossy(&buf[at..buf.len().min(at + 40)])
    ))
}
