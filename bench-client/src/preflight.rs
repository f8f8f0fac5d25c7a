//! Checks before any timing, with `reqwest` (correctness, not speed, matters
//! here): a server is healthy, and every route answers the status,
//! `Content-Type` and body of `common::ROUTES`. Imports nothing else of the
//! crate.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use common::{ROUTES, Route};
use reqwest::Url;

/// A preflight failure that is the server's answer, not the way to it.
///
/// The `Display` text names server, route and difference; it is for people,
/// not a contract: tell kinds apart with the predicates.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    kind: Kind,
    message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Another status, `Content-Type` or body than the route table's.
    Mismatch,
}

impl Error {
    /// The server answered a route with another status, `Content-Type` or
    /// body than the route table's.
    pub fn is_mismatch(&self) -> bool {
        self.kind == Kind::Mismatch
    }
}

/// One response as preflight saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Status code.
    pub status: u16,
    /// `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// Body bytes.
    pub body: Vec<u8>,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_current_thread().enable_all().build()?)
}

fn client() -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build()?)
}

async fn fetch_with(client: &reqwest::Client, url: &Url) -> anyhow::Result<Fetched> {
    let response = client.get(url.clone()).send().await.with_context(|| format!("GET {url}"))?;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let body = response.bytes().await.with_context(|| format!("GET {url}: reading the body"))?.to_vec();
    Ok(Fetched { status, content_type, body })
}

/// Fetches `url` once.
///
/// # Errors
/// When the server cannot be reached or the response cannot be read.
pub fn fetch(url: &Url) -> anyhow::Result<Fetched> {
    runtime()?.block_on(async { fetch_with(&client()?, url).await })
}

/// Describes how `got` differs from what `route` must answer, or `None`.
pub fn difference(route: &Route, got: &Fetched) -> Option<String> {
    if got.status != 200 {
        return Some(format!("status {} instead of 200", got.status));
    }
    let expected_type = route.content_type.as_str();
    if got.content_type.as_deref() != Some(expected_type) {
        return Some(format!(
            "Content-Type {:?} instead of {expected_type:?}",
            got.content_type.as_deref().unwrap_or("(none)")
        ));
    }
    let expected = route.expected_body();
    if got.body != expected {
        let at = got.body.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(got.body.len().min(expected.len()));
        return Some(format!(
            "body differs from byte {at} ({} bytes instead of {}): {:?}",
            got.body.len(),
            expected.len(),
            String::from_utf8_lossy(&got.body[at.min(got.body.len())..got.body.len().min(at + 40)])
        ));
    }
    None
}

/// Waits until `base/healthz` answers 200 `OK`, polling every 50 ms.
///
/// # Errors
/// When it has not within `timeout`; the last failure is quoted.
pub fn wait_healthy(base: &Url, timeout: Duration) -> anyhow::Result<()> {
    let url = base.join(common::RouteId::Healthz.path())?;
    runtime()?.block_on(async {
        let client = client()?;
        let deadline = Instant::now() + timeout;
        loop {
            let last = match fetch_with(&client, &url).await {
                Ok(f) if f.status == 200 && f.body == common::routes::HEALTHZ_BODY.as_bytes() => return Ok(()),
                Ok(f) => format!("status {}", f.status),
                Err(e) => format!("{e:#}"),
            };
            if Instant::now() >= deadline {
                bail!("{url} not healthy after {}: {last}", humantime::format_duration(timeout));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

/// Fetches every route of `common::ROUTES` from `base` and checks status,
/// `Content-Type` and body.
///
/// # Errors
/// The first mismatch, naming `server`, the route and the difference.
pub fn check_routes(server: &str, base: &Url) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let client = client()?;
        for route in ROUTES {
            let url = base.join(route.path)?;
            let got = fetch_with(&client, &url).await.with_context(|| format!("preflight {server} {}", route.path))?;
            if let Some(diff) = difference(route, &got) {
                return Err(Error {
                    kind: Kind::Mismatch,
                    message: format!("preflight {server} {}: {diff}", route.path),
                }
                .into());
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::RouteId;

    #[test]
    fn differences_are_named_by_kind() {
        let route = Route::get(RouteId::Plaintext);
        let ok = Fetched {
            status: 200,
            content_type: Some("text/plain; charset=utf-8".into()),
            body: b"Hello, World!".to_vec(),
        };
        assert_eq!(difference(route, &ok), None);
        let status = Fetched { status: 503, ..ok.clone() };
        assert_eq!(difference(route, &status).unwrap(), "status 503 instead of 200");
        let ctype = Fetched { content_type: Some("text/html".into()), ..ok.clone() };
        assert!(difference(route, &ctype).unwrap().starts_with("Content-Type \"text/html\""));
        let body = Fetched { body: "Hello, Wörld!".as_bytes().to_vec(), ..ok };
        let diff = difference(route, &body).unwrap();
        assert!(diff.starts_with("body differs from byte 8 (14 bytes instead of 13)"), "{diff}");
    }
}
