//! Every route of `common::ROUTES`, in process through `server_rocket::app`,
//! and `POST /fortunes` with its refusals.

use common::{FortuneDb, RouteRequest, conformance};
use rocket::config::LogLevel;
use rocket::http::Status;
use rocket::local::asynchronous::Client as AsyncClient;
use rocket::local::blocking::Client;

/// A client of the app on a fresh database (removed when the returned owner is dropped).
fn client(layers: usize) -> (FortuneDb, Client) {
    client_with_fillers(layers, 0)
}

/// The same with `fillers` routes of each kind ahead of the scale targets.
fn client_with_fillers(layers: usize, fillers: u16) -> (FortuneDb, Client) {
    let (db, fortunes) = conformance::fresh_fortunes();
    let figment = rocket::Config::figment().merge(("log_level", LogLevel::Off));
    (db, Client::tracked(server_rocket::app(figment, layers, fillers, fortunes)).unwrap())
}

/// An asynchronous client of the app through `layers` layers, on a fresh
/// database (removed when the returned owner is dropped).
async fn async_client(layers: usize) -> (FortuneDb, AsyncClient) {
    let (db, fortunes) = conformance::fresh_fortunes();
    let figment = rocket::Config::figment().merge(("log_level", LogLevel::Off));
    (db, AsyncClient::tracked(server_rocket::app(figment, layers, 0, fortunes)).await.unwrap())
}

/// `ask` (its method, and a body with its type) of `path` through `layers` layers:
/// status, `Content-Type`, body.
async fn ask(layers: usize, path: &str, ask: RouteRequest) -> (u16, Option<String>, Vec<u8>) {
    let (_db, client) = async_client(layers).await;
    let mut request = client.req(ask.method.parse().unwrap(), path).body(ask.body);
    if let Some(content_type) = ask.content_type {
        request.add_header(rocket::http::ContentType::parse_flexible(content_type).unwrap());
    }
    let response = request.dispatch().await;
    let (status, content_type) = (response.status().code, response.headers().get_one("Content-Type"));
    let content_type = content_type.map(str::to_owned);
    (status, content_type, response.into_bytes().await.unwrap())
}

#[rocket::async_test]
async fn every_route_answers_the_table_byte_for_byte_and_no_other_path_answers() {
    conformance::assert_every_route(ask).await;
}

#[test]
fn filler_routes_answer_beside_the_scale_targets() {
    let (_db, client) = client_with_fillers(0, conformance::FILLERS);
    for (path, answer) in conformance::scale_answers() {
        let response = client.get(path.as_str()).dispatch();
        let status = response.status();
        match answer {
            Some(answer) => {
                assert_eq!((status, response.into_bytes().unwrap()), (Status::Ok, answer.into_bytes()), "{path}")
            }
            None => assert_eq!(status, Status::NotFound, "{path}"),
        }
    }
}

#[test]
fn post_fortune_adds_a_row_to_both_pages_and_refuses_bad_bodies() {
    let (_db, client) = client(0);
    let seed = common::fortunes::seed_page().to_vec();
    let cached = || client.get("/fortunes/cached").dispatch().into_bytes().unwrap();
    for (body, status) in conformance::refused_fortunes() {
        let response = client.post("/fortunes").body(body).dispatch();
        let (got, content_type) = (response.status().code, response.headers().get_one("Content-Type"));
        let content_type = content_type.map(str::to_owned);
        let reason = response.into_bytes().unwrap();
        conformance::assert_refusal(status, got, content_type.as_deref(), &reason);
        assert_eq!(cached(), seed, "nothing added");
    }
    assert_eq!(client.post("/fortunes").body(conformance::NEW_FORTUNE).dispatch().status(), Status::NoContent);
    let expected = conformance::page_with_new_fortune();
    for path in ["/fortunes", "/fortunes/cached"] {
        assert_eq!(client.get(path).dispatch().into_bytes().unwrap(), expected, "{path}");
    }
}

/// (touches, FatState clones) of one request to `path` through `layers` layers.
async fn counted(layers: usize, path: &str) -> (u64, u64) {
    let (_db, client) = async_client(layers).await;
    common::state::counts::take();
    assert_eq!(client.get(path).dispatch().await.status(), Status::Ok);
    common::state::counts::take()
}

#[rocket::async_test]
async fn every_layer_obtains_the_state_as_documented() {
    // Each fairing borrows the managed state (`&State<T>`): touched, never
    // cloned; the fairings run on every route but touch the state only on /state/*.
    conformance::assert_state_uses(counted, |_| 0).await;
}

#[test]
fn every_middleware_offered_answers_the_devices_with_what_it_adds() {
    use rocket::http::Header;
    for on in conformance::stacks("rocket") {
        let selection = Some(on.clone());
        server_rocket::stack::init_trace(&selection);
        let (_db, fortunes) = conformance::fresh_fortunes();
        let figment = rocket::Config::figment().merge(("log_level", LogLevel::Off));
        let rocket = server_rocket::stack::layered(server_rocket::app(figment, 0, 0, fortunes), &selection).unwrap();
        let client = Client::tracked(rocket).unwrap();
        let mut request = client.get(conformance::LAYERED_PATH);
        for (name, value) in common::middleware::REQUEST_HEADERS {
            request = request.header(Header::new(name, value));
        }
        let lines = common::middleware::LogSink::lines();
        let response = request.dispatch();
        let status = response.status().code;
        let headers: Vec<(String, String)> =
            response.headers().iter().map(|h| (h.name().to_string(), h.value().to_owned())).collect();
        let body = response.into_bytes().unwrap();
        conformance::assert_layered_answer(&on, status, &headers, &body);
        conformance::assert_trace_lines("rocket", &on, common::middleware::LogSink::lines() - lines);
    }
}

#[test]
fn without_security_headers_a_middleware_stack_has_no_shield_and_without_middleware_the_default_one() {
    let answer = |selection: common::middleware::Selection| {
        let (_db, fortunes) = conformance::fresh_fortunes();
        let figment = rocket::Config::figment().merge(("log_level", LogLevel::Off));
        let rocket = server_rocket::stack::layered(server_rocket::app(figment, 0, 0, fortunes), &selection).unwrap();
        let client = Client::tracked(rocket).unwrap();
        client.get("/plaintext").dispatch().headers().get_one("X-Content-Type-Options").map(str::to_owned)
    };
    assert_eq!(answer(None).as_deref(), Some("nosniff"), "Rocket's default Shield");
    assert_eq!(answer(Some(vec![])), None, "--middleware none");
    assert_eq!(answer(Some(vec![common::middleware::Middleware::Cors])), None);
}
