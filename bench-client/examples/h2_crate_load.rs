//! The `h2` crate as an HTTP/2 load client, for `bench/h2-framing.sh` alone.
//!
//! The engine frames HTTP/2 itself on its `mio` loop. The alternative was the
//! `h2` crate, which runs on tokio: this program is that alternative, built as
//! its documentation shows (one `SendRequest` per connection, cloned per
//! stream; every body read to its end, its flow-control capacity released, and
//! compared byte for byte with the route's), on a tokio runtime of one thread,
//! as the engine's one worker. The script sets the two side by side on the
//! same pinned server: requests per second and CPU per request.
//!
//! Usage: `h2_crate_load URL CONNECTIONS STREAMS DURATION_S` (h2c only: an
//! `http://` URL). Prints one line, `successful=N failed=M duration_us=D`.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use tokio::net::TcpStream;
use tokio::time::Instant;

struct Plan {
    url: url::Url,
    connections: usize,
    streams: usize,
    duration: Duration,
}

fn plan(args: &[String]) -> Result<Plan> {
    let [url, connections, streams, duration_s] = args else {
        bail!("usage: h2_crate_load URL CONNECTIONS STREAMS DURATION_S");
    };
    let url = url::Url::parse(url).with_context(|| format!("{url}: not a URL"))?;
    if url.scheme() != "http" {
        bail!("{url}: h2c only, an http:// URL");
    }
    let number = |text: &String, what: &str| -> Result<u64> {
        text.parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .with_context(|| format!("{what} {text}: not a whole number above 0"))
    };
    Ok(Plan {
        connections: usize::try_from(number(connections, "CONNECTIONS")?)?,
        streams: usize::try_from(number(streams, "STREAMS")?)?,
        duration: Duration::from_secs(number(duration_s, "DURATION_S")?),
        url,
    })
}

#[derive(Default)]
struct Counts {
    successful: u64,
    failed: u64,
}

/// One request on `sender`: whether it came back 200 with the route's body.
async fn one(sender: &mut h2::client::SendRequest<Bytes>, uri: &http::Uri, expected: &[u8]) -> Result<bool, h2::Error> {
    let request = http::Request::get(uri.clone()).body(()).expect("a GET with a parsed URI");
    std::future::poll_fn(|cx| sender.poll_ready(cx)).await?;
    let (response, _) = sender.send_request(request, true)?;
    let response = response.await?;
    let ok = response.status() == http::StatusCode::OK;
    let mut body = response.into_body();
    let mut received = Vec::with_capacity(expected.len());
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        body.flow_control().release_capacity(chunk.len())?;
        received.extend_from_slice(&chunk);
    }
    Ok(ok && received == expected)
}

/// One stream's loop: a request, its whole body checked, again, until the deadline.
async fn stream(
    mut sender: h2::client::SendRequest<Bytes>,
    uri: http::Uri,
    expected: Bytes,
    deadline: Instant,
) -> Counts {
    let mut counts = Counts::default();
    while Instant::now() < deadline {
        match one(&mut sender, &uri, &expected).await {
            Ok(true) if Instant::now() <= deadline => counts.successful += 1,
            Ok(true) => {}
            Ok(false) => counts.failed += 1,
            Err(_) => {
                counts.failed += 1;
                break;
            }
        }
    }
    counts
}

async fn run(plan: Plan) -> Result<(Counts, Duration)> {
    let host = plan.url.host_str().context("a URL without a host")?;
    let port = plan.url.port_or_known_default().context("a URL without a port")?;
    let path = plan.url.path();
    let route = common::routes::Route::by_path(path).with_context(|| format!("{path}: not a route"))?;
    let expected = Bytes::from(route.expected_body());
    let uri: http::Uri = plan.url.as_str().parse()?;
    let mut senders = Vec::with_capacity(plan.connections);
    for _ in 0..plan.connections {
        let tcp = TcpStream::connect((host, port)).await.with_context(|| format!("connect to {host}:{port}"))?;
        tcp.set_nodelay(true)?;
        let (sender, connection) = h2::client::handshake(tcp).await.context("HTTP/2 handshake")?;
        tokio::spawn(connection);
        senders.push(sender);
    }
    let start = Instant::now();
    let deadline = start + plan.duration;
    let mut tasks = tokio::task::JoinSet::new();
    for sender in &senders {
        for _ in 0..plan.streams {
            tasks.spawn(stream(sender.clone(), uri.clone(), expected.clone(), deadline));
        }
    }
    let mut total = Counts::default();
    while let Some(counts) = tasks.join_next().await {
        let counts = counts?;
        total.successful += counts.successful;
        total.failed += counts.failed;
    }
    Ok((total, plan.duration))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let plan = match plan(&args) {
        Ok(plan) => plan,
        Err(error) => {
            eprintln!("h2_crate_load: {error:#}");
            return ExitCode::from(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    match runtime.block_on(run(plan)) {
        Ok((counts, duration)) => {
            println!("successful={} failed={} duration_us={}", counts.successful, counts.failed, duration.as_micros());
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("h2_crate_load: {error:#}");
            ExitCode::FAILURE
        }
    }
}
