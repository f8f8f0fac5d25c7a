//! TLS end to end: every server answers every route with the same bytes
//! over its HTTPS listener as over HTTP; `load https://…` verifies every
//! body through rustls in the engine's loop, trusting a CA file or nothing;
//! a handshake the client refuses fails its requests as `tls`, apart.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bench_client::engine::{Target, TlsClient, Trust};
use bench_client::preflight::{self, Fetched};
use bench_client::sys::ServerProcess;
use common::tls::TlsIdentity;

use crate::util::{self, FRAMEWORKS};

fn get(target: &Target, what: &str) -> Fetched {
    preflight::fetch(target).unwrap_or_else(|e| panic!("{what} {}: {e:#}", target.path))
}

#[test]
fn every_server_answers_every_route_with_the_same_bytes_over_tls() {
    let args = ["--tls-addr".to_owned(), "127.0.0.1:0".to_owned()];
    for f in FRAMEWORKS {
        let server = ServerProcess::start(&util::server_binary(f), &args, &util::all_cpus()).unwrap();
        let tls_addr = server.tls_addr.expect("the second listening line, https");
        assert_ne!(tls_addr, server.addr, "{f}: two listeners");
        let client = TlsClient::new("127.0.0.1", Trust::Any, true).unwrap();
        for route in common::ROUTES {
            let plain = get(&Target::new(server.addr, route.path), f);
            let tls = get(&Target::new(tls_addr, route.path).with_tls(client.clone()), f);
            assert_eq!(preflight::difference(route, &tls), None, "{f} {} over TLS", route.path);
            assert_eq!(tls, plain, "{f} {}: the same status, type and bytes", route.path);
        }
        // The HTTPS listener speaks TLS only: plain HTTP gets no HTTP answer from it.
        assert!(preflight::fetch(&Target::new(tls_addr, "/plaintext")).map_or(true, |a| a.status != 200), "{f}");
    }
}

/// Writes a new identity's certificate and key into `dir`; returns their paths.
fn identity_files(dir: &Path, identity: &TlsIdentity) -> (String, String) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, &identity.cert_pem).unwrap();
    std::fs::write(&key, &identity.key_pem).unwrap();
    (cert.display().to_string(), key.display().to_string())
}

#[test]
fn load_over_tls_verifies_every_body_trusting_the_ca_file_it_is_given() {
    let _lock = util::exclusive();
    let dir = util::temp_dir("tls-load");
    let (cert, key) = identity_files(&dir, &TlsIdentity::generate().unwrap());
    let args = ["--tls", "--tls-cert", &cert, "--tls-key", &key].map(str::to_owned);
    let server = ServerProcess::start(&util::server_binary("axum"), &args, &util::all_cpus()).unwrap();
    let port = server.addr.port();
    let json = dir.join("tls.json");
    // By address and by name: the generated certificate names both.
    for (host, trust) in [("127.0.0.1", ["--ca", &cert]), ("localhost", ["--insecure", "--tls-resumption"])] {
        let url = format!("https://{host}:{port}/api/devices/preserialized");
        let mut argv = vec!["load", &url, "-c", "4", "-d", "2s", "--warmup", "0s", "--json"];
        argv.push(json.to_str().unwrap());
        argv.extend(trust);
        if trust[0] == "--insecure" {
            argv.push("off");
        }
        let out = util::client(&argv);
        assert!(out.status.success(), "{url}: {}", String::from_utf8_lossy(&out.stderr));
        let figures: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        assert!(figures["successful"].as_u64().unwrap() > 100, "{url}: {figures}");
        assert_eq!(figures["failed_total"], 0, "{url}: {figures}");
        assert_eq!(figures["failed"]["tls"], 0, "{url}");
        util::assert_runs_add_up(std::slice::from_ref(&figures));
    }
    // Another CA: refused in preflight, before anything is measured, saying
    // why (exit 1, as for a server that cannot be reached).
    let other = util::temp_dir("tls-other-ca");
    let (other_cert, _) = identity_files(&other, &TlsIdentity::generate().unwrap());
    let url = format!("https://127.0.0.1:{port}/plaintext");
    let out = util::client(&["load", &url, "--ca", &other_cert, "-d", "1s", "--warmup", "0s"]);
    let line = util::one_line_exit(&out, 1);
    assert!(line.contains("invalid peer certificate") && line.contains(&url), "{line}");
}

/// A TLS server of its own: preflight's connections present the
/// certificate the client trusts, every later one another; each answers
/// `Hello, World!` to every request head it reads.
fn server_that_changes_its_certificate(good: &TlsIdentity, bad: &TlsIdentity) -> std::net::SocketAddr {
    let configs = [good.server_config().unwrap(), bad.server_config().unwrap()];
    let accepted = Arc::new(AtomicU64::new(0));
    util::serve_each(move |tcp| {
        let n = accepted.fetch_add(1, Ordering::Relaxed);
        let config = configs[usize::from(n >= preflight::STABLE_FETCHES as u64)].clone();
        let mut tls = rustls::StreamOwned::new(rustls::ServerConnection::new(config).unwrap(), tcp);
        let (mut buf, mut chunk) = (Vec::new(), [0u8; 4096]);
        loop {
            while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                buf.drain(..end + 4);
                if tls.write_all(util::HELLO).is_err() {
                    return;
                }
            }
            match tls.read(&mut chunk) {
                Ok(0) | Err(_) => return,
                Ok(k) => buf.extend_from_slice(&chunk[..k]),
            }
        }
    })
}

#[test]
fn a_handshake_the_client_refuses_fails_its_requests_as_tls() {
    let _lock = util::exclusive();
    let dir = util::temp_dir("tls-refused");
    let good = TlsIdentity::generate().unwrap();
    let (cert, _) = identity_files(&dir, &good);
    let addr = server_that_changes_its_certificate(&good, &TlsIdentity::generate().unwrap());
    let url = format!("https://{addr}/");
    let json = dir.join("refused.json");
    let argv = ["load", &url, "--ca", &cert, "-c", "2", "-d", "1s", "--warmup", "0s", "--json", json.to_str().unwrap()];
    let out = util::client(&argv);
    assert_eq!(out.status.code(), Some(1), "failures fail the run: {}", String::from_utf8_lossy(&out.stderr));
    let figures: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let failed = &figures["failed"];
    assert!(failed["tls"].as_u64().unwrap() >= 2, "every connection's request: {failed}");
    for kind in ["io", "timeout", "body", "protocol", "connect"] {
        assert_eq!(failed[kind], 0, "{kind}: {failed}");
    }
    assert_eq!(figures["successful"], 0, "{figures}");
    assert_eq!(figures["failed_total"], failed["tls"], "{figures}");
    let windows_failed: u64 = figures["windows_failed"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum();
    assert_eq!(Some(windows_failed), failed["tls"].as_u64(), "the windows add up: {figures}");
}
