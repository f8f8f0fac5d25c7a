//! The metrics endpoint's HTTP/1.1 listener: one connection at a time, one
//! request per connection (`Connection: close`), on a thread of its own.
//! Scrapers send a few requests per second at most; nothing here is on the
//! load's path.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::{ACCEPT_NAP, OPENMETRICS_CONTENT_TYPE, Shared, exposition};

/// Longest request head read, bytes.
const MAX_HEAD: usize = 8 * 1024;
/// How long a scraper may take to send its request or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// Accepts and answers until `stop` is set.
pub(super) fn serve(listener: &TcpListener, shared: &Shared, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                // A scraper that misbehaves only loses its own answer.
                let _ = answer(stream, shared);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(ACCEPT_NAP);
            }
            // Out of file descriptors and the like: try again shortly.
            Err(_) => std::thread::sleep(ACCEPT_NAP),
        }
    }
}

/// Reads one request head and answers it.
fn answer(mut stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 || head.len() + n > MAX_HEAD {
            return Ok(());
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = line.split(|&b| b == b' ');
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default());
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    let (status, content_type, body) = match (method, path) {
        (b"GET" | b"HEAD", b"/metrics") => ("200 OK", OPENMETRICS_CONTENT_TYPE, exposition::render(shared)),
        (b"GET" | b"HEAD", b"/ready") if shared.ready.load(Ordering::Relaxed) => {
            ("200 OK", "text/plain; charset=utf-8", "ready\n".to_owned())
        }
        (b"GET" | b"HEAD", b"/ready") => {
            ("503 Service Unavailable", "text/plain; charset=utf-8", "not ready: preflight has not passed\n".to_owned())
        }
        (b"GET" | b"HEAD", _) => {
            ("404 Not Found", "text/plain; charset=utf-8", "not found: try /metrics or /ready\n".to_owned())
        }
        _ => ("405 Method Not Allowed", "text/plain; charset=utf-8", "only GET and HEAD\n".to_owned()),
    };
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    if method != b"HEAD" {
        response.push_str(&body);
    }
    stream.write_all(response.as_bytes())?;
    stream.flush()
}
