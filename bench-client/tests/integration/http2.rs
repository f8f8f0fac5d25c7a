//! HTTP/2 on the servers, checked with an independent client (curl with
//! nghttp2): every route answers the same status, type and bytes over h2c
//! with prior knowledge on the plain listener and over h2 after ALPN on the
//! TLS one as over HTTP/1.1, and a client offering only `http/1.1` over TLS
//! still gets HTTP/1.1.

use std::net::SocketAddr;
use std::process::Command;

use bench_client::engine::{Reply, RouteLoad, Target, http2};
use bench_client::preflight;
use bench_client::sys::ServerProcess;

use crate::util::{self, FRAMEWORKS};

/// What curl got: status, HTTP version as curl names it (`2`, `1.1`),
/// content type and body.
#[derive(Debug, PartialEq)]
struct Got {
    status: u16,
    version: String,
    content_type: Option<String>,
    body: Vec<u8>,
}

/// `GET url` with curl and `flags`, the body kept apart from curl's
/// write-out line (status, version, content type, separated by tabs).
fn curl(flags: &[&str], url: &str) -> Got {
    let dir = util::temp_dir("http2-curl");
    let body = dir.join("body");
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10", "-o"])
        .arg(&body)
        .args(["-w", "%{http_code}\t%{http_version}\t%{content_type}"])
        .args(flags)
        .arg(url)
        .output()
        .expect("curl runs");
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "curl {flags:?} {url}: {line} {}", String::from_utf8_lossy(&out.stderr));
    let fields: Vec<&str> = line.split('\t').collect();
    let got = Got {
        status: fields[0].parse().unwrap_or_else(|_| panic!("curl's status: {line}")),
        version: fields[1].to_owned(),
        content_type: Some(fields[2].to_owned()).filter(|t| !t.is_empty()),
        body: std::fs::read(&body).unwrap(),
    };
    std::fs::remove_dir_all(&dir).unwrap();
    got
}

/// Whether this curl speaks HTTP/2 (its features list `HTTP2`).
fn curl_speaks_http2() -> bool {
    Command::new("curl").arg("-V").output().is_ok_and(|out| {
        String::from_utf8_lossy(&out.stdout).lines().any(|l| l.starts_with("Features:") && l.contains("HTTP2"))
    })
}

fn url(scheme: &str, addr: SocketAddr, path: &str) -> String {
    format!("{scheme}://{addr}{path}")
}

#[test]
fn every_server_answers_every_route_with_the_same_bytes_over_h2c_and_h2_as_over_http1() {
    if !curl_speaks_http2() {
        eprintln!("skipped: no curl with HTTP/2 (Debian's curl has it)");
        return;
    }
    let _shared = util::shared();
    for f in FRAMEWORKS {
        let (server, tls_addr) = util::with_tls_listener(f);
        for route in common::ROUTES {
            let http1: Reply = preflight::fetch(&RouteLoad::of_table(Target::new(server.addr, "/"), route).target)
                .unwrap_or_else(|e| panic!("{f} {}: {e:#}", route.path));
            // The route's request as curl sends it: its method, and a body with its type.
            let ask = route.request();
            let body = String::from_utf8(ask.body.to_vec()).unwrap();
            let content_type = ask.content_type.map(|t| format!("Content-Type: {t}"));
            let mut asked = vec!["-X", ask.method];
            if let Some(header) = &content_type {
                asked.extend(["-H", header, "--data-binary", &body]);
            }
            assert_eq!(preflight::difference(route, &http1), None, "{f} {} over HTTP/1.1", route.path);
            let expected = |version: &str| Got {
                status: http1.status,
                version: version.to_owned(),
                content_type: http1.content_type.clone(),
                body: http1.body.clone(),
            };
            let h2c = curl(&[&asked[..], &["--http2-prior-knowledge"]].concat(), &url("http", server.addr, route.path));
            assert_eq!(h2c, expected("2"), "{f} {} over h2c (prior knowledge)", route.path);
            let h2 = curl(&[&asked[..], &["--http2", "--insecure"]].concat(), &url("https", tls_addr, route.path));
            assert_eq!(h2, expected("2"), "{f} {} over h2 (ALPN)", route.path);
        }
        // A TLS client that offers only http/1.1 is served HTTP/1.1.
        let http1_over_tls = curl(&["--http1.1", "--insecure"], &url("https", tls_addr, "/plaintext"));
        assert_eq!((http1_over_tls.status, http1_over_tls.version.as_str()), (200, "1.1"), "{f}");
        // Upgrade from HTTP/1.1 (h2c by `Upgrade:`) is not offered: curl --http2 over plain HTTP
        // asks for it, and the answer stays HTTP/1.1 with the same bytes.
        let asked = curl(&["--http2"], &url("http", server.addr, "/plaintext"));
        assert_eq!((asked.status, asked.version.as_str()), (200, "1.1"), "{f}: no h2c upgrade");
    }
}

/// Each framework's HTTP/2 defaults, as its server grants them over h2c:
/// hyper's 1 MiB window under all three (actix-http sets the same), hyper's
/// 200 streams and 16 KiB header list under axum (hyper 1), no bound on
/// streams under actix and Rocket (hyper 0.14: a 16 MiB header list).
fn granted() -> [(&'static str, http2::Settings); 3] {
    let mib = 1_048_576;
    let defaults = http2::Settings { initial_window_size: mib, ..http2::Settings::default() };
    [
        ("actix", defaults),
        ("axum", http2::Settings { max_concurrent_streams: Some(200), max_header_list_size: Some(16_384), ..defaults }),
        ("rocket", http2::Settings { max_header_list_size: Some(16 * mib), ..defaults }),
    ]
}

#[test]
fn each_server_grants_its_frameworks_http2_settings_and_an_http1_answer_is_named() {
    let _lock = util::exclusive();
    for (f, expected) in granted() {
        let server = ServerProcess::start(&util::server_binary(f), &[], &util::all_cpus()).unwrap();
        let got = preflight::http2_settings(server.addr).unwrap_or_else(|e| panic!("{f}: {e:#}"));
        assert_eq!(got, expected, "{f}: {got}");
    }
    // A server that answers HTTP/2's preface with HTTP/1.1.
    let addr = util::serve_each(|mut stream| {
        let mut preface = [0u8; 33];
        let _ = std::io::Read::read_exact(&mut stream, &mut preface);
        let _ = std::io::Write::write_all(&mut stream, b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
    });
    let err = format!("{:#}", preflight::http2_settings(addr).unwrap_err());
    assert_eq!(err, format!("h2c to {addr}: answered HTTP/1.x to HTTP/2's preface (no h2c with prior knowledge here)"));
}
