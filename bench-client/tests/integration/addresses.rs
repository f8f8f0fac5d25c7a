//! Every loopback address a user may type reaches its listener: each server
//! bound with `--addr '[::1]:0'` and `--addr localhost:0`, loaded over
//! `http://[::1]:PORT` and `http://localhost:PORT` (which stands for both
//! loopback addresses), over TLS too; the `Host` header as RFC 3986 writes
//! the authority; `responder --addr`, `load`'s and `watch`'s
//! `--metrics-addr` in the same forms; a host outside loopback still refused
//! in one line with exit 2. The IPv6 cases say so and are skipped on a
//! machine without an IPv6 loopback.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bench_client::sys::ServerProcess;
use common::tls::TlsIdentity;

use crate::util::{self, CLIENT, FRAMEWORKS};

/// Whether this machine has `::1` (`lo` in `/proc/net/if_inet6`); prints
/// why the caller skips its IPv6 cases when not.
fn ipv6_loopback(test: &str) -> bool {
    let table = std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
    let has = table.lines().any(|l| l.starts_with("00000000000000000000000000000001 "));
    if !has {
        println!("skipped: {test}'s [::1] cases: this machine has no IPv6 loopback (no ::1 in /proc/net/if_inet6)");
    }
    has
}

/// `load URL -c 4 -d 1s --warmup 0s` plus `extra`, its figures; fails the
/// test unless it exits 0 with successful requests and no failure.
fn loads_cleanly(url: &str, extra: &[&str], dir: &Path) -> serde_json::Value {
    let json = dir.join("run.json");
    let _ = std::fs::remove_file(&json);
    let mut argv = vec!["load", url, "-c", "4", "-d", "1s", "--warmup", "0s", "--json", json.to_str().unwrap()];
    argv.extend(extra);
    let out = util::client(&argv);
    assert!(out.status.success(), "{url}: {}", String::from_utf8_lossy(&out.stderr));
    let figures: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(figures["successful"].as_u64().unwrap() > 0, "{url}: {figures}");
    assert_eq!(figures["failed_total"], 0, "{url}: {figures}");
    figures
}

/// Starts server `framework` with `args`; it listens where its listening line says.
fn server(framework: &str, args: &[&str]) -> ServerProcess {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    ServerProcess::start(&util::server_binary(framework), &args, &util::all_cpus())
        .unwrap_or_else(|e| panic!("{framework} {args:?}: {e:#}"))
}

/// One server: bound on `[::1]` it is loaded by address and by name; bound
/// on `localhost` it listens on 127.0.0.1 and is loaded by name.
fn every_form_reaches(framework: &str) {
    let _shared = util::shared();
    let dir = util::temp_dir(&format!("addresses-{framework}"));
    if ipv6_loopback(framework) {
        let v6 = server(framework, &["--addr", "[::1]:0"]);
        assert_eq!(v6.addr.ip().to_string(), "::1", "{framework}: its listening line");
        for url in [
            format!("http://[::1]:{}/plaintext", v6.addr.port()),
            format!("http://localhost:{}/plaintext", v6.addr.port()),
        ] {
            loads_cleanly(&url, &[], &dir);
        }
    }
    let named = server(framework, &["--addr", "localhost:0"]);
    assert_eq!(named.addr.ip().to_string(), "127.0.0.1", "{framework}: localhost binds 127.0.0.1");
    loads_cleanly(&format!("http://localhost:{}/api/devices", named.addr.port()), &[], &dir);
}

#[test]
fn actix_is_reached_at_every_loopback_form() {
    every_form_reaches(FRAMEWORKS[0]);
}

#[test]
fn axum_is_reached_at_every_loopback_form() {
    every_form_reaches(FRAMEWORKS[1]);
}

#[test]
fn rocket_is_reached_at_every_loopback_form() {
    every_form_reaches(FRAMEWORKS[2]);
}

#[test]
fn https_to_an_ipv6_literal_checks_the_certificate_for_the_address() {
    if !ipv6_loopback("https") {
        return;
    }
    let _shared = util::shared();
    let dir = util::temp_dir("addresses-tls");
    // A generated certificate names 127.0.0.1, ::1 and localhost.
    let identity = TlsIdentity::generate().unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, &identity.cert_pem).unwrap();
    std::fs::write(&key, &identity.key_pem).unwrap();
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let tls = server("axum", &["--tls", "--tls-cert", cert, "--tls-key", key, "--addr", "[::1]:0"]);
    let port = tls.addr.port();
    // No SNI for an IP address (RFC 6066): the certificate is checked for ::1 itself.
    loads_cleanly(&format!("https://[::1]:{port}/plaintext"), &["--ca", cert], &dir);
    loads_cleanly(&format!("https://localhost:{port}/plaintext"), &["--ca", cert], &dir);
}

/// A server on `[::1]` (or 127.0.0.1) answering `Hello, World!`, keeping
/// every `Host` header it reads.
fn recording_server(ip: &str) -> (SocketAddr, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind((ip, 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let hosts = Arc::new(Mutex::new(Vec::new()));
    let seen = hosts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if let Some(host) = line.strip_prefix("Host: ") {
                        seen.lock().unwrap().push(host.trim_end().to_owned());
                    }
                    if line == "\r\n" && stream.write_all(util::HELLO).is_err() {
                        return;
                    }
                    line.clear();
                }
            });
        }
    });
    (addr, hosts)
}

#[test]
fn the_host_header_is_the_authority_as_the_url_writes_it() {
    let _shared = util::shared();
    let dir = util::temp_dir("addresses-host");
    let mut cases = vec![("127.0.0.1", "127.0.0.1"), ("127.0.0.1", "localhost")];
    if ipv6_loopback("the Host header") {
        cases.extend([("::1", "[::1]"), ("::1", "localhost")]);
    }
    for (ip, url_host) in cases {
        let (addr, hosts) = recording_server(ip);
        loads_cleanly(&format!("http://{url_host}:{}/x", addr.port()), &[], &dir);
        let distinct: std::collections::BTreeSet<String> = hosts.lock().unwrap().iter().cloned().collect();
        let expected = format!("{url_host}:{}", addr.port());
        assert_eq!(distinct.into_iter().collect::<Vec<_>>(), [expected], "{url_host}: every request's Host header");
    }
}

#[test]
fn responder_and_metrics_listen_at_every_form() {
    let _lock = util::exclusive();
    let dir = util::temp_dir("addresses-listeners");
    let mut forms = vec![("localhost:0", "127.0.0.1")];
    if ipv6_loopback("responder and metrics") {
        forms.push(("[::1]:0", "::1"));
    }
    for (form, ip) in forms {
        // `responder --addr`: listens there, and a load reaches it.
        let mut responder =
            util::Guarded::spawn(Command::new(CLIENT).args(["responder", "--addr", form]).stdout(Stdio::piped()));
        let (mut stdout, mut line) = (BufReader::new(responder.0.stdout.take().unwrap()), String::new());
        stdout.read_line(&mut line).unwrap();
        let addr = common::process::parse_listening_line(&line).unwrap_or_else(|| panic!("{form}: {line}"));
        assert_eq!(addr.ip().to_string(), ip, "{form}");
        let url = format!("http://{}/plaintext", addr);
        // `load --metrics-addr` and `watch --metrics-addr`: serve /metrics there while they run.
        let json = dir.join("run.json");
        let load = ["load", &url, "-c", "2", "-d", "1s", "--warmup", "0s", "--json", json.to_str().unwrap()];
        let watch_pid = std::process::id().to_string();
        let watch = ["watch", "--pid", &watch_pid, "-d", "1s", "--warmup", "0s"];
        for argv in [&load[..], &watch[..]] {
            let stderr = dir.join("stderr");
            let mut child = util::Guarded::spawn(
                Command::new(CLIENT)
                    .args(argv)
                    .args(["--metrics-addr", form, "--linger", "10s"])
                    .stdout(Stdio::null())
                    .stderr(std::fs::File::create(&stderr).unwrap()),
            );
            let metrics = metrics_addr(&stderr);
            assert_eq!(metrics.ip().to_string(), ip, "{} --metrics-addr {form}", argv[0]);
            let (status, _, body) = crate::telemetry::get(metrics, "/metrics");
            assert_eq!(status, 200, "{} --metrics-addr {form}: {body}", argv[0]);
            assert!(body.ends_with("# EOF\n"), "{} --metrics-addr {form}: {body}", argv[0]);
            let _ = child.0.kill();
            let _ = child.0.wait();
        }
    }
}

/// The address of the `metrics on http://ADDR/metrics` line in `stderr`.
fn metrics_addr(stderr: &Path) -> SocketAddr {
    let end = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(stderr).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.starts_with("metrics on http://")) {
            return line.trim_start_matches("metrics on http://").trim_end_matches("/metrics").parse().unwrap();
        }
        assert!(Instant::now() < end, "no metrics line: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_host_outside_loopback_is_refused_in_one_line_with_exit_2() {
    for (url, says) in [
        ("http://192.0.2.1:80/", "192.0.2.1:80 is not a loopback address"),
        ("http://[2001:db8::1]:80/", "[2001:db8::1]:80 is not a loopback address"),
        ("http://[::]:80/", "[::]:80 is not a loopback address"),
        ("http://bench.example.invalid/", "bench.example.invalid is not a loopback name"),
    ] {
        let out = util::client(&["load", url, "-d", "1s", "--warmup", "0s"]);
        let line = util::one_line_exit(&out, 2);
        assert!(line.contains(says) && line.contains("--allow-remote"), "{url}: {line}");
    }
    // A listen address in a form no one can tell apart: refused before anything listens.
    let out = util::client(&["responder", "--addr", "::1:8080"]);
    let line = util::one_line_exit(&out, 2);
    assert!(line.contains("in brackets, e.g. [::1]:8080"), "{line}");
    for framework in FRAMEWORKS {
        let out = util::output_within(
            Command::new(util::server_binary(framework)).args(["--addr", "::1:8080"]),
            Duration::from_secs(30),
        );
        let line = util::one_line_exit(&out, 2);
        assert!(line.contains("'::1:8080'") && line.contains("in brackets"), "{framework}: {line}");
    }
}
