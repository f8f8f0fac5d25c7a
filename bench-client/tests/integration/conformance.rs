//! The three servers, each a real process on a real socket on an ephemeral
//! port, answer every route of `common::ROUTES` with the same status,
//! `Content-Type` and bytes, and unknown paths with 404.

use crate::util;
use crate::util::FRAMEWORKS;
use bench_client::engine::{Reply, RouteLoad, Target};
use bench_client::preflight;
use bench_client::sys::ServerProcess;

fn get(server: &ServerProcess, path: &str) -> Reply {
    preflight::fetch(&Target::new(server.addr, path)).unwrap_or_else(|e| panic!("{} {path}: {e:#}", server.name()))
}

/// The answer to `route`'s request of the table (a `GET`, or its `POST` with its body).
fn ask(server: &ServerProcess, route: &common::Route) -> Reply {
    let target = RouteLoad::of_table(Target::new(server.addr, "/"), route).target;
    preflight::fetch(&target).unwrap_or_else(|e| panic!("{} {}: {e:#}", server.name(), route.path))
}

#[test]
fn every_server_answers_every_route_identically() {
    for layers in ["0", "10"] {
        let servers = every_server(&["--layers".to_owned(), layers.to_owned()]);
        for server in &servers {
            assert!(server.addr.ip().is_loopback(), "binds loopback by default");
            assert_ne!(server.addr.port(), 0, "reports the ephemeral port it got");
        }
        for route in common::ROUTES {
            let answers: Vec<Reply> = servers.iter().map(|s| ask(s, route)).collect();
            for (server, answer) in servers.iter().zip(&answers) {
                assert_eq!(preflight::difference(route, answer), None, "{} {}", server.name(), route.path);
            }
            assert!(answers.windows(2).all(|w| w[0].answer() == w[1].answer()), "{}: {answers:?}", route.path);
        }
        for server in &servers {
            assert_eq!(get(server, common::UNKNOWN_PATH).status, 404, "{}", server.name());
        }
    }
}

#[test]
fn servers_stop_cleanly_on_sigterm_and_refuse_a_used_port() {
    for f in FRAMEWORKS {
        let mut first = ServerProcess::start(&util::server_binary(f), &[], &util::all_cpus()).unwrap();
        let args = ["--addr".to_owned(), first.addr.to_string()];
        let err = ServerProcess::start(&util::server_binary(f), &args, &util::all_cpus()).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("exit status: 2"), "{f}: {text}");
        assert!(text.contains("cannot listen on"), "{f}: {text}");
        let status = first.stop().expect("still running until stopped");
        assert!(status.success(), "{f} exits 0 on SIGTERM, got {status}");
    }
}

/// `(status, Content-Type, body)` of `method path` with `body`.
fn send(
    addr: std::net::SocketAddr,
    method: reqwest::Method,
    path: &str,
    body: Vec<u8>,
) -> (u16, Option<String>, Vec<u8>) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let client = reqwest::Client::builder().no_proxy().build().unwrap();
        let r = client.request(method, format!("http://{addr}{path}")).body(body).send().await.unwrap();
        let status = r.status().as_u16();
        let ctype = r.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned());
        (status, ctype, r.bytes().await.unwrap().to_vec())
    })
}

/// Every framework's server with `args`, each on a fresh database of its own.
fn every_server(args: &[String]) -> Vec<ServerProcess> {
    FRAMEWORKS.iter().map(|f| ServerProcess::start(&util::server_binary(f), args, &util::all_cpus()).unwrap()).collect()
}

const NEW_LIST: &str =
    r#"[{"id":7,"mac":"AA-BB-CC-DD-EE-07","firmware":"4.0.0"},{"id":8,"mac":"AA-BB-CC-DD-EE-08","firmware":"4.0.1"}]"#;

#[test]
fn put_replaces_the_list_identically_on_every_server_and_refuses_bad_input() {
    let servers = every_server(&[]);
    let original = common::devices_json();
    let mut refusals = Vec::new();
    for server in &servers {
        let name = server.name();
        // Bad input first: 400 or 413 with a short text reason, the old list kept.
        for (body, status) in [
            (b"not json".to_vec(), 400),
            (br#"{"id":1}"#.to_vec(), 400),
            (br#"[{"id":1,"mac":"m"}]"#.to_vec(), 400),
            (vec![b' '; common::MAX_BODY_BYTES + 1], 413),
            (vec![b' '; 100 * 1024], 413),
        ] {
            let (got, ctype, reason) = send(server.addr, reqwest::Method::PUT, "/api/devices", body);
            assert_eq!(got, status, "{name}: {}", String::from_utf8_lossy(&reason));
            assert_eq!(ctype.as_deref(), Some("text/plain; charset=utf-8"), "{name}");
            assert!(!reason.is_empty() && reason.len() < 200, "{name}: a short reason");
            refusals.push((got, reason));
            assert_eq!(get(server, "/api/devices/cached").body, original, "{name}: old list kept");
        }
        let (status, _, _) = send(server.addr, reqwest::Method::PUT, "/api/devices", NEW_LIST.as_bytes().to_vec());
        assert_eq!(status, 204, "{name}");
        for path in ["/api/devices", "/api/devices/cached"] {
            let f = get(server, path);
            assert_eq!((f.status, f.content_type.as_deref()), (200, Some("application/json")), "{name} {path}");
            assert_eq!(f.body, NEW_LIST.as_bytes(), "{name} {path} serves the new list byte for byte");
        }
        assert_eq!(get(server, "/api/devices/preserialized").body, original, "{name}: preserialized stays static");
    }
    // The refusals read the same on every server.
    let per_server = refusals.len() / servers.len();
    for r in refusals.chunks(per_server).collect::<Vec<_>>().windows(2) {
        assert_eq!(r[0], r[1]);
    }
}

#[test]
fn readers_never_see_a_torn_or_empty_body_while_a_writer_replaces_the_list() {
    let a = r#"[{"id":1,"mac":"5F-33-CC-1F-43-82","firmware":"2.1.6"}]"#;
    let b = NEW_LIST;
    for f in FRAMEWORKS {
        let args = ["--workers".to_owned(), "2".to_owned()];
        let server = ServerProcess::start(&util::server_binary(f), &args, &util::all_cpus()).unwrap();
        let addr = server.addr;
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let bodies = rt.block_on(async move {
            let client = reqwest::Client::builder().no_proxy().build().unwrap();
            let writer = {
                let client = client.clone();
                tokio::spawn(async move {
                    for i in 0..200 {
                        let body = if i % 2 == 0 { a } else { b };
                        let r = client.put(format!("http://{addr}/api/devices")).body(body).send().await.unwrap();
                        assert_eq!(r.status().as_u16(), 204);
                    }
                })
            };
            let readers: Vec<_> = (0..4)
                .map(|_| {
                    let client = client.clone();
                    tokio::spawn(async move {
                        let mut seen = Vec::new();
                        for _ in 0..150 {
                            let r = client.get(format!("http://{addr}/api/devices/cached")).send().await.unwrap();
                            seen.push(r.bytes().await.unwrap().to_vec());
                        }
                        seen
                    })
                })
                .collect();
            writer.await.unwrap();
            let mut all = Vec::new();
            for r in readers {
                all.extend(r.await.unwrap());
            }
            all
        });
        let original = common::devices_json();
        assert_eq!(bodies.len(), 600);
        for body in &bodies {
            assert!(
                body == a.as_bytes() || body == b.as_bytes() || body == &original,
                "{f}: torn or unexpected body {:?}",
                String::from_utf8_lossy(body)
            );
        }
        assert!(bodies.iter().any(|x| x == a.as_bytes() || x == b.as_bytes()), "{f}: the writer's lists were seen");
    }
}

/// The page of the seed rows plus `added` (ids 13, 14, … in order), as
/// every server must render it.
fn fortunes_page_with(added: &[&str]) -> Vec<u8> {
    let mut rows = common::fortunes::seed();
    let first = i64::try_from(rows.len()).unwrap() + 1;
    rows.extend(added.iter().zip(first..).map(|(m, id)| common::fortunes::Fortune { id, message: (*m).to_owned() }));
    common::fortunes::render(rows).to_vec()
}

#[test]
fn post_adds_a_fortune_identically_on_every_server_and_refuses_bad_input() {
    let servers = every_server(&[]);
    let seed = common::fortunes::seed_page().to_vec();
    let message = "<script>alert('x & y')</script> — ありがとう";
    let added = fortunes_page_with(&[message]);
    assert!(added.windows(15).any(|w| w == "ありがとう".as_bytes()), "UTF-8 bytes kept");
    let mut refusals = Vec::new();
    for server in &servers {
        let name = server.name();
        for (body, status) in [
            (Vec::new(), 400),
            (b"   ".to_vec(), 400),
            (b"\xff\xfe".to_vec(), 400),
            (b"two\nlines".to_vec(), 400),
            (vec![b'a'; common::MAX_FORTUNE_BYTES + 1], 413),
            (vec![b'a'; 64 * 1024], 413),
        ] {
            let (got, ctype, reason) = send(server.addr, reqwest::Method::POST, "/fortunes", body);
            assert_eq!(got, status, "{name}: {}", String::from_utf8_lossy(&reason));
            assert_eq!(ctype.as_deref(), Some("text/plain; charset=utf-8"), "{name}");
            assert!(!reason.is_empty() && reason.len() < 200 && !reason.contains(&b'\n'), "{name}: one short line");
            refusals.push((got, reason));
            for path in ["/fortunes", "/fortunes/cached"] {
                assert_eq!(get(server, path).body, seed, "{name} {path}: nothing added");
            }
        }
        let (status, _, _) = send(server.addr, reqwest::Method::POST, "/fortunes", message.as_bytes().to_vec());
        assert_eq!(status, 204, "{name}");
        for path in ["/fortunes", "/fortunes/cached"] {
            let f = get(server, path);
            assert_eq!((f.status, f.content_type.as_deref()), (200, Some("text/html; charset=utf-8")), "{name} {path}");
            assert_eq!(f.body, added, "{name} {path}: the new row, escaped, in its place");
        }
    }
    let per_server = refusals.len() / servers.len();
    for r in refusals.chunks(per_server).collect::<Vec<_>>().windows(2) {
        assert_eq!(r[0], r[1], "refusals read the same on every server");
    }
}

#[test]
fn fortune_readers_never_see_a_stale_or_torn_page_after_a_write() {
    const WRITES: usize = 40;
    let messages: Vec<String> = (0..WRITES).map(|i| format!("fortune #{i:02} <é>")).collect();
    let refs: Vec<&str> = messages.iter().map(String::as_str).collect();
    // Page k: the seed rows and the first k messages.
    let pages: std::collections::HashMap<Vec<u8>, usize> =
        (0..=WRITES).map(|k| (fortunes_page_with(&refs[..k]), k)).collect();
    let pages = std::sync::Arc::new(pages);
    for f in FRAMEWORKS {
        let args = ["--workers".to_owned(), "2".to_owned()];
        let server = ServerProcess::start(&util::server_binary(f), &args, &util::all_cpus()).unwrap();
        let addr = server.addr;
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let (messages, pages) = (messages.clone(), std::sync::Arc::clone(&pages));
        rt.block_on(async move {
            let client = reqwest::Client::builder().no_proxy().build().unwrap();
            let writer = {
                let (client, pages) = (client.clone(), std::sync::Arc::clone(&pages));
                tokio::spawn(async move {
                    for (i, message) in messages.into_iter().enumerate() {
                        let r = client.post(format!("http://{addr}/fortunes")).body(message).send().await.unwrap();
                        assert_eq!(r.status().as_u16(), 204, "{f}");
                        // Answered: from now on no reader may see an older page.
                        for path in ["/fortunes/cached", "/fortunes"] {
                            let body = client.get(format!("http://{addr}{path}")).send().await.unwrap();
                            let body = body.bytes().await.unwrap();
                            assert_eq!(pages.get(body.as_ref()), Some(&(i + 1)), "{f} {path} after write {i}");
                        }
                    }
                })
            };
            let readers: Vec<_> = (0..3)
                .map(|_| {
                    let (client, pages) = (client.clone(), std::sync::Arc::clone(&pages));
                    tokio::spawn(async move {
                        let mut last = [0; 2];
                        for n in 0..120 {
                            let (slot, path) = [(0, "/fortunes/cached"), (1, "/fortunes")][n % 2];
                            let r = client.get(format!("http://{addr}{path}")).send().await.unwrap();
                            assert_eq!(r.status().as_u16(), 200, "{f} {path}");
                            let body = r.bytes().await.unwrap();
                            let k = *pages.get(body.as_ref()).unwrap_or_else(|| {
                                panic!("{f} {path}: torn or unexpected page {:?}", String::from_utf8_lossy(&body))
                            });
                            assert!(k >= last[slot], "{f} {path}: page {k} after page {}", last[slot]);
                            last[slot] = k;
                        }
                    })
                })
                .collect();
            writer.await.unwrap();
            for r in readers {
                r.await.unwrap();
            }
        });
    }
}
