//! TLS end to end: every server answers every route with the same bytes
//! over its HTTPS listener as over HTTP; `load https://…` verifies every
//! body through rustls in the engine's loop, trusting a CA file or nothing;
//! a handshake the client refuses fails its requests as `tls`, apart.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bench_client::engine::{Reply, RouteLoad, Target, TlsClient, Trust};
use bench_client::preflight;
use bench_client::sys::ServerProcess;
use common::tls::TlsIdentity;

use crate::telemetry;
use crate::util::{self, FRAMEWORKS};

fn get(target: &Target, what: &str) -> Reply {
    preflight::fetch(target).unwrap_or_else(|e| panic!("{what} {}: {e:#}", target.path))
}

#[test]
fn every_server_answers_every_route_with_the_same_bytes_over_tls() {
    let _lock = util::exclusive();
    for f in FRAMEWORKS {
        let (server, tls_addr) = util::with_tls_listener(f);
        let client = TlsClient::new("127.0.0.1", Trust::Any, true).unwrap();
        for route in common::ROUTES {
            let plain = get(&RouteLoad::of_table(Target::new(server.addr, "/"), route).target, f);
            let tls = get(&RouteLoad::of_table(Target::new(tls_addr, "/"), route).target.with_tls(client.clone()), f);
            assert_eq!(preflight::difference(route, &tls), None, "{f} {} over TLS", route.path);
            assert_eq!(tls.answer(), plain.answer(), "{f} {}: the same status, type and bytes", route.path);
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
    let _shared = util::shared();
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

/// RFC 8446 §4.6.1: a resumed session lives no longer than its certificate.
/// A server whose certificate ends 4 s after it is made, every connection
/// after preflight's resuming: those resumed past the end fail as `tls`, exit 1.
#[test]
fn a_session_resumed_past_its_certificates_end_fails_as_tls() {
    let _shared = util::shared();
    let dir = util::temp_dir("tls-expiring");
    let mut params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap();
    let now = time::OffsetDateTime::now_utc();
    (params.not_before, params.not_after) = (now - time::Duration::days(1), now + time::Duration::seconds(4));
    // The certificate holds whole seconds: it fails from the second after its notAfter's.
    let end_ms = (params.not_after.unix_timestamp() as u64 + 1) * 1_000;
    let key = rcgen::KeyPair::generate().unwrap();
    let identity = TlsIdentity { cert_pem: params.self_signed(&key).unwrap().pem(), key_pem: key.serialize_pem() };
    let (cert, key) = identity_files(&dir, &identity);
    let args = ["--tls", "--tls-cert", &cert, "--tls-key", &key].map(str::to_owned);
    let server = ServerProcess::start(&util::server_binary("axum"), &args, &util::all_cpus()).unwrap();
    let url = format!("https://127.0.0.1:{}/plaintext", server.addr.port());
    // HTTP/1.1 and HTTP/2 at once: over HTTP/2 the refused session fails before its first stream.
    let load = |protocol: &[&str]| {
        let json = dir.join(format!("expiring{}.json", protocol.len()));
        let mut argv = vec!["load", &url, "--ca", &cert, "-c", "2", "--requests-per-connection", "5"];
        argv.extend(["-d", "7s", "--warmup", "0s", "--window", "1s", "--json", json.to_str().unwrap()]);
        let out = util::client(&[&argv[..], protocol].concat());
        let f: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        (out.status.code(), f)
    };
    let runs = std::thread::scope(|s| {
        let http2 = s.spawn(|| load(&["--http2"]));
        [load(&[]), http2.join().unwrap()]
    });
    for (code, f) in runs {
        assert_eq!(code, Some(1), "failures fail the run: {f}");
        let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k}: {f}"));
        let sum = |k: &str| f[k].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum::<u64>();
        assert_eq!((sum("windows"), sum("windows_failed")), (n("successful"), n("failed_total")), "{f}");
        assert!(n("successful") > 0 && n("tls_resumed") > 0, "valid until its end, resumed: {f}");
        assert_eq!(f["failed_total"], f["failed"]["tls"], "{f}");
        // Each window by the wall clock: before the end nothing fails; past
        // it (two seconds at least) connections fail, and none opens, so at
        // most the 2 × 5 requests of those opened before it succeed, however
        // late a loaded machine reads them.
        let start_ms = n("measure_start_unix_ms");
        let window = |i: usize| (start_ms + 1_000 * i as u64, start_ms + 1_000 * (i as u64 + 1));
        let (before, past): (Vec<usize>, Vec<usize>) =
            (0..7).filter(|&i| window(i).1 <= end_ms || window(i).0 >= end_ms).partition(|&i| window(i).1 <= end_ms);
        assert!(before.iter().all(|&i| f["windows_failed"][i] == 0), "nothing fails before the end: {f}");
        assert!(
            !past.is_empty() && past.iter().map(|&i| f["windows"][i].as_u64().unwrap()).sum::<u64>() <= 10,
            "past the end: {f}"
        );
        let failed_past: u64 = past.iter().map(|&i| f["windows_failed"][i].as_u64().unwrap()).sum();
        assert!(failed_past > 0, "past the end, resumed sessions fail: {f}");
        let c = &f;
        let settled = ["warmup_completed", "successful", "failed_total", "in_flight_at_deadline", "retried"];
        assert_eq!(n("sent"), settled.iter().map(|k| n(k)).sum::<u64>(), "every request settled once: {c}");
    }
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
    let _shared = util::shared();
    let dir = util::temp_dir("tls-refused");
    let good = TlsIdentity::generate().unwrap();
    let (cert, _) = identity_files(&dir, &good);
    let addr = server_that_changes_its_certificate(&good, &TlsIdentity::generate().unwrap());
    let url = format!("https://{addr}/");
    // With live metrics, lingering after the result: the failure is on /metrics too, by its kind.
    let (stdout, stderr) = (dir.join("load.stdout"), dir.join("load.stderr"));
    let mut load = std::process::Command::new(util::CLIENT);
    load.args(["load", &url, "--ca", &cert, "-c", "2", "-d", "1s", "--warmup", "0s", "--json", "-"])
        .args(["--metrics-addr", "127.0.0.1:0", "--linger", "2s"])
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    let mut child = util::Guarded::spawn(&mut load);
    let metrics = telemetry::metrics_addr(&stderr);
    telemetry::wait_for(&stdout, "-----END BENCH RESULT", std::time::Duration::from_secs(60));
    let (status, _, live) = telemetry::get(metrics, "/metrics");
    assert_eq!(status, 200, "{live}");
    let exit = util::exit_within(&mut child.0, std::time::Duration::from_secs(30), "load after its linger");
    assert_eq!(exit.code(), Some(1), "failures fail the run: {}", std::fs::read_to_string(&stderr).unwrap());
    let found = bench_client::results::read_loads(&stdout).unwrap();
    let figures = serde_json::to_value(&found[0].1).unwrap();
    let failed = &figures["failed"];
    assert!(failed["tls"].as_u64().unwrap() >= 2, "every connection's request: {failed}");
    for kind in ["io", "timeout", "body", "protocol", "connect"] {
        assert_eq!(failed[kind], 0, "{kind}: {failed}");
    }
    assert_eq!(figures["successful"], 0, "{figures}");
    assert_eq!(figures["failed_total"], failed["tls"], "{figures}");
    let on_metrics = telemetry::sample(&live, "bench_client_failures_total{kind=\"tls\"}");
    assert_eq!(Some(on_metrics as u64), failed["tls"].as_u64(), "{live}");
    let failed_requests =
        telemetry::sample(&live, "bench_client_requests_total{outcome=\"failure\",phase=\"measured\"}");
    assert_eq!(Some(failed_requests as u64), figures["failed_total"].as_u64(), "{live}");
    let windows_failed: u64 = figures["windows_failed"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).sum();
    assert_eq!(Some(windows_failed), failed["tls"].as_u64(), "the windows add up: {figures}");
}

#[test]
fn requests_per_connection_closes_each_connection_after_that_many_responses() {
    let _shared = util::shared();
    let dir = util::temp_dir("tls-churn");
    let (server, tls_addr) = util::with_tls_listener("actix");
    for (url, tls) in
        [(format!("http://{}/plaintext", server.addr), false), (format!("https://{tls_addr}/plaintext"), true)]
    {
        let json = dir.join("churn.json");
        let mut argv = vec!["load", &url, "-c", "2", "-d", "1s", "--warmup", "0s", "--requests-per-connection", "3"];
        argv.extend(["--insecure", "--json", json.to_str().unwrap()]);
        let out = util::client(&argv);
        assert!(out.status.success(), "{url}: {}", String::from_utf8_lossy(&out.stderr));
        let f: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
        let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k}: {f}"));
        util::assert_runs_add_up(std::slice::from_ref(&f));
        assert!(n("closed_by_client") >= 10, "{url}: {f}");
        assert_eq!(n("closed_by_server"), 0, "{url}");
        // Never more than 3 requests on a connection, and 3 on every one the client closed.
        assert!(n("sent") <= 3 * n("connections_established"), "{url}: {f}");
        assert!(n("sent") >= 3 * n("closed_by_client"), "{url}: {f}");
        if tls {
            // A handshake per connection that answered; resumed ones among them.
            assert!(n("tls_handshakes") >= n("closed_by_client"), "{url}: {f}");
            assert!(n("tls_resumed") > 0 && n("tls_resumed") <= n("tls_handshakes"), "{url}: {f}");
        } else {
            assert_eq!(n("tls_handshakes"), 0, "{url}");
        }
    }
}

#[test]
fn the_tls_and_http2_scenarios_alternate_one_server_over_its_listeners_and_protocols() {
    let _shared = util::shared();
    let out = util::temp_dir("tls-suite");
    let args = ["--frameworks", "axum", "--scenarios", "tls,http2", "--rounds", "2", "--warmup", "0s"];
    let timing = ["--duration", "500ms", "--window", "500ms", "--slice", "125ms", "--connections", "4"];
    let suite = util::Suite::run(&out, &[&args[..], &timing].concat()).succeeded();
    let (stderr, results) = (&suite.stderr, suite.results());
    assert_eq!(results["meta"]["tls_resumption"], true);
    let runs = results["runs"].as_array().unwrap();
    let tls: Vec<&serde_json::Value> = runs.iter().filter(|r| r["scenario"] == "tls").collect();
    assert_eq!(tls.len(), 4, "two variants, two rounds");
    for run in &tls {
        assert_eq!(run["route"], if run["variant"] == "https" { "https /plaintext" } else { "http /plaintext" });
        assert!(run["successful"].as_u64().unwrap() > 0 && run["failed_total"] == 0, "{run}");
    }
    let delta = |scenario: &str, to: &str| {
        results["deltas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["scenario"] == scenario && d["to"] == to)
            .unwrap_or_else(|| panic!("the {scenario} delta to {to}: {}", results["deltas"]))
            .clone()
    };
    let tls_delta = delta("tls", "https /plaintext");
    assert_eq!(tls_delta["from"], "http /plaintext");
    assert!(tls_delta["saved_us"].is_number(), "µs of server CPU TLS adds: {tls_delta}");
    // http2: each HTTP/2 variant against HTTP/1.1 on its own listener, every body verified.
    let http2: Vec<&serde_json::Value> = runs.iter().filter(|r| r["scenario"] == "http2").collect();
    assert_eq!(http2.len(), 16, "eight variants, two rounds");
    for run in &http2 {
        let route = run["route"].as_str().unwrap();
        assert_eq!(run["http2"], route.starts_with("h2"), "{route}");
        assert!(run["successful"].as_u64().unwrap() > 0 && run["failed_total"] == 0, "{run}");
    }
    for (from, to) in [
        ("http /plaintext", "h2c /plaintext"),
        ("https /plaintext", "h2 /plaintext"),
        ("http /api/devices", "h2c /api/devices"),
        ("https /api/devices", "h2 /api/devices"),
    ] {
        let d = delta("http2", to);
        assert_eq!(d["from"], from);
        assert!(d["saved_us"].is_number(), "µs of server CPU HTTP/2 saves or adds: {d}");
    }
    // What axum (hyper) grants by default, read in preflight and reported.
    let grants = results["meta"]["http2_settings"].as_array().unwrap();
    assert_eq!(grants.len(), 1, "once per framework, not per round: {grants:?}");
    assert_eq!(grants[0]["framework"], "axum");
    assert_eq!(grants[0]["max_concurrent_streams"], 200);
    assert!(stderr.contains("axum grants HTTP/2: 200 concurrent streams"), "{stderr}");
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(report.contains("| `http /plaintext` | `https /plaintext` |"), "the In proportion grid names both");
    assert!(report.contains("## HTTP/2 settings each server granted") && report.contains("| axum | 200 |"), "{report}");
    assert!(report.contains("| `http /api/devices` | `h2c /api/devices` |"), "{report}");
}

#[test]
fn the_open_loop_never_hands_a_connection_more_than_its_requests_per_connection() {
    // Pipelining allows two, the limit one: a connection at its limit is not
    // free (handing it due requests it cannot take would spin for ever). At
    // 50 requests/s a debug build reconnects well within each request's
    // 20 ms (at 200/s one run in three wrote a request late and was short);
    // a run short only of on-time sends (a busy machine) still shows it.
    let _lock = util::exclusive();
    let addr = util::serve_each(|mut stream| {
        util::answer_heads(&mut stream, |s, _| s.write_all(util::HELLO).is_ok());
    });
    let url = format!("http://{addr}/");
    let argv = ["load", &url, "--rate", "50", "--pipeline", "2", "--requests-per-connection", "1", "-c", "2"];
    let out = util::client(&[&argv[..], &["-d", "1s", "--warmup", "0s"]].concat());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() || util::only_late(&out),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("closed by the client"), "{stdout}");
    let successful: u64 = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("successful requests")?.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("a successful count: {stdout}"));
    assert!(successful >= 45, "50 due in the second, at most a few late: {successful}\n{stdout}");
}
