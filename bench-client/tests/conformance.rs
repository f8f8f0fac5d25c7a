//! The three servers, each a real process on a real socket on an ephemeral
//! port, answer every route of `common::ROUTES` with the same status,
//! `Content-Type` and bytes, and unknown paths with 404.

mod support;

use bench_client::preflight::{self, Fetched};
use bench_client::server::ServerProcess;
use reqwest::Url;

const FRAMEWORKS: [&str; 3] = ["actix", "axum", "rocket"];

fn get(server: &ServerProcess, path: &str) -> Fetched {
    let url = Url::parse(&format!("http://{}{path}", server.addr)).unwrap();
    preflight::fetch(&url).unwrap_or_else(|e| panic!("{} {path}: {e:#}", server.name()))
}

#[test]
fn every_server_answers_every_route_identically() {
    for layers in ["0", "10"] {
        let servers: Vec<ServerProcess> = FRAMEWORKS
            .iter()
            .map(|f| {
                let args = ["--layers".to_owned(), layers.to_owned()];
                ServerProcess::start(&support::server_binary(f), &args, &support::all_cpus()).unwrap()
            })
            .collect();
        for server in &servers {
            assert!(server.addr.ip().is_loopback(), "binds loopback by default");
            assert_ne!(server.addr.port(), 0, "reports the ephemeral port it got");
        }
        for route in common::ROUTES {
            let answers: Vec<Fetched> = servers.iter().map(|s| get(s, route.path)).collect();
            for (server, answer) in servers.iter().zip(&answers) {
                assert_eq!(preflight::difference(route, answer), None, "{} {}", server.name(), route.path);
            }
            assert!(answers.windows(2).all(|w| w[0] == w[1]), "{}: {answers:?}", route.path);
        }
        for server in &servers {
            assert_eq!(get(server, common::UNKNOWN_PATH).status, 404, "{}", server.name());
        }
    }
}

#[test]
fn servers_stop_cleanly_on_sigterm_and_refuse_a_used_port() {
    for f in FRAMEWORKS {
        let mut first = ServerProcess::start(&support::server_binary(f), &[], &support::all_cpus()).unwrap();
        let args = ["--addr".to_owned(), first.addr.to_string()];
        let err = ServerProcess::start(&support::server_binary(f), &args, &support::all_cpus()).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("exit status: 2"), "{f}: {text}");
        assert!(text.contains("cannot listen on"), "{f}: {text}");
        let status = first.stop().expect("still running until stopped");
        assert!(status.success(), "{f} exits 0 on SIGTERM, got {status}");
    }
}
