//! A server that allocates nothing per request or per connection, for the
//! tests of `count` (a count of 0 bytes is a count) and of the servers it
//! refuses (one that serves from a forked worker).
//!
//! ```text
//! bare_server ADDR serve     # answers /healthz and /plaintext, one connection at a time
//! bare_server ADDR prefork   # the same from a worker it starts; the parent keeps the socket and waits
//! ```
//!
//! Its answers are built once at start; each request is read into one
//! buffer on the stack and answered from them, keep-alive, pipelining
//! allowed. Anything but `GET /healthz` or `GET /plaintext` is a 404.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::process::ExitCode;

/// `HTTP/1.1 200` with `body`, as bytes.
fn ok(body: &str) -> Vec<u8> {
    format!("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// The answers, built once.
struct Answers {
    healthz: Vec<u8>,
    plaintext: Vec<u8>,
    not_found: &'static [u8],
}

impl Answers {
    /// The answer to a request whose head starts `head`.
    fn to(&self, head: &[u8]) -> &[u8] {
        if head.starts_with(b"GET /healthz ") {
            &self.healthz
        } else if head.starts_with(b"GET /plaintext ") {
            &self.plaintext
        } else {
            self.not_found
        }
    }
}

/// Answers every request of `stream` until the client closes it.
fn serve_connection(mut stream: TcpStream, answers: &Answers) {
    let mut buffer = [0u8; 16 * 1024];
    let mut filled = 0;
    loop {
        match stream.read(&mut buffer[filled..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => filled += n,
        }
        // Every whole head in the buffer (these requests have no body), in order.
        let mut start = 0;
        while let Some(end) = buffer[start..filled].windows(4).position(|w| w == b"\r\n\r\n") {
            if stream.write_all(answers.to(&buffer[start..])).is_err() {
                return;
            }
            start += end + 4;
        }
        buffer.copy_within(start..filled, 0);
        filled -= start;
        if filled == buffer.len() {
            return;
        }
    }
}

fn serve(listener: &TcpListener, answers: &Answers) {
    for stream in listener.incoming().flatten() {
        serve_connection(stream, answers);
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(addr), Some(mode)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: bare_server ADDR serve|prefork");
        return ExitCode::from(2);
    };
    let answers = Answers {
        healthz: ok(common::routes::HEALTHZ_BODY),
        plaintext: ok(common::routes::PLAINTEXT_BODY),
        not_found: b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
    };
    if mode == "worker" {
        // The listening socket its parent handed over as standard input.
        return match std::io::stdin().as_fd().try_clone_to_owned() {
            Ok(fd) => {
                serve(&TcpListener::from(fd), &answers);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("bare_server worker: no listening socket on standard input: {e}");
                ExitCode::from(1)
            }
        };
    }
    let listener = match TcpListener::bind(addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cannot listen on {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    match mode.as_str() {
        "serve" => serve(&listener, &answers),
        "prefork" => {
            // The parent keeps the socket and a worker it starts serves from it.
            // Its own path as it was started (under valgrind, /proc/self/exe is valgrind's tool).
            let socket = listener.try_clone().map(std::os::fd::OwnedFd::from);
            let worker = socket
                .and_then(|socket| std::process::Command::new(&args[0]).args([addr, "worker"]).stdin(socket).spawn())
                .and_then(|mut child| child.wait());
            if let Err(e) = worker {
                eprintln!("bare_server: cannot start its worker: {e}");
                return ExitCode::from(1);
            }
        }
        other => {
            eprintln!("bare_server: mode '{other}' is neither serve nor prefork");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
