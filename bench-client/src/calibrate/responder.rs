//! A minimal HTTP/1.1 responder that answers every request with one canned
//! `/plaintext` response, for `bench-client calibrate`: it does no routing,
//! no parsing beyond finding the end of each request head, and no
//! allocation per request, so a run against it measures the client's own
//! ceiling on these CPUs. Same event-loop design as the engine (one `mio`
//! loop, edge-triggered, one read and one write per batch of requests).

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use common::ContentType;
use common::process::listening_line;
use common::routes::PLAINTEXT_BODY;

use crate::engine::http1;

const LISTENER: Token = Token(usize::MAX);
const READ_BYTES: usize = 16 * 1024;
/// Responses prepared back to back, so a batch of pipelined requests is
/// answered with one write.
const BATCH: usize = 64;
/// How often the loop looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// The response to every request: status 200, the `/plaintext` body and
/// headers of the size the servers send.
pub fn canned_response() -> Vec<u8> {
    let headers = [("content-type", ContentType::TextPlain.as_str()), ("date", "Mon, 30 Nov 2026 00:00:00 GMT")];
    http1::ok_response(&headers, PLAINTEXT_BODY.as_bytes())
}

struct Client {
    stream: TcpStream,
    /// Bytes of an unfinished request carried to the next read.
    tail: usize,
    /// Bytes of responses owed but not yet accepted by the socket.
    unwritten: usize,
}

/// Listens on `addr`, prints the workspace's listening line, and answers
/// until `stop` is set.
///
/// # Errors
/// When the address cannot be bound or the event loop fails.
pub fn serve(addr: SocketAddr, stop: &AtomicBool) -> anyhow::Result<()> {
    let poll_error = |e| anyhow::Error::new(e).context("responder event loop");
    let mut listener = TcpListener::bind(addr).with_context(|| format!("cannot listen on {addr}"))?;
    let mut poll = Poll::new().map_err(poll_error)?;
    poll.registry().register(&mut listener, LISTENER, Interest::READABLE).map_err(poll_error)?;
    println!("{}", listening_line(listener.local_addr()?));
    let responses = canned_response().repeat(BATCH);
    let one = responses.len() / BATCH;
    let mut clients: Vec<Option<Client>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut events = Events::with_capacity(1024);
    let mut buf = vec![0u8; READ_BYTES];
    while !stop.load(Ordering::Relaxed) {
        if let Err(e) = poll.poll(&mut events, Some(STOP_CHECK)) {
            if e.kind() == ErrorKind::Interrupted {
                continue;
            }
            return Err(poll_error(e));
        }
        for event in &events {
            if event.token() == LISTENER {
                while let Ok((mut stream, _)) = listener.accept() {
                    let _ = stream.set_nodelay(true);
                    let i = free.pop().unwrap_or_else(|| {
                        clients.push(None);
                        clients.len() - 1
                    });
                    if poll.registry().register(&mut stream, Token(i), Interest::READABLE | Interest::WRITABLE).is_ok()
                    {
                        clients[i] = Some(Client { stream, tail: 0, unwritten: 0 });
                    } else {
                        free.push(i);
                    }
                }
                continue;
            }
            let i = event.token().0;
            let Some(client) = clients.get_mut(i).and_then(Option::as_mut) else { continue };
            if answer(client, &mut buf, &responses, one).is_err() {
                if let Some(mut c) = clients[i].take() {
                    let _ = poll.registry().deregister(&mut c.stream);
                }
                free.push(i);
            }
        }
    }
    Ok(())
}

/// Reads what `client` sent, owes one response per complete request head,
/// and writes what it owes. `Err` when the connection is finished.
fn answer(client: &mut Client, buf: &mut [u8], responses: &[u8], one: usize) -> Result<(), ()> {
    loop {
        // Keep the unfinished end of the last head in front of the new bytes.
        let carried = client.tail;
        let n = match client.stream.read(&mut buf[carried..]) {
            Ok(0) => return Err(()),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return Err(()),
        };
        let filled = carried + n;
        let (requests, keep) = http1::request_heads_ended(&buf[..filled]);
        client.unwritten += requests * one;
        buf.copy_within(filled - keep..filled, 0);
        client.tail = keep;
        if filled < buf.len() {
            break;
        }
    }
    while client.unwritten > 0 {
        let chunk = client.unwritten.min(responses.len());
        match client.stream.write(&responses[responses.len() - chunk..]) {
            Ok(0) => return Err(()),
            Ok(n) => client.unwritten -= n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return Err(()),
        }
    }
    Ok(())
}
