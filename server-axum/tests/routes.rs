//! Every route of `common::ROUTES`, in process through `server_axum::app`,
//! and `POST /fortunes` with its refusals.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use common::{RouteRequest, conformance};
use http_body_util::BodyExt;
use tower::ServiceExt;

type Answer = (StatusCode, Option<String>, Vec<u8>);

async fn call(app: axum::Router, method: Method, path: &str, body: Vec<u8>) -> Answer {
    call_with(app, Request::builder().method(method).uri(path).body(Body::from(body)).unwrap()).await
}

async fn call_with(app: axum::Router, request: Request<Body>) -> Answer {
    let response = app.oneshot(request).await.unwrap();
    let content_type = response.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, content_type, body)
}

/// `ask` (its method, and a body with its type) of `path` through `layers` layers:
/// status, `Content-Type`, body.
async fn ask(layers: usize, path: &str, ask: RouteRequest) -> (u16, Option<String>, Vec<u8>) {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let mut request = Request::builder().method(ask.method).uri(path);
    if let Some(content_type) = ask.content_type {
        request = request.header(header::CONTENT_TYPE, content_type);
    }
    let (status, content_type, body) =
        call_with(server_axum::app(layers, 0, fortunes), request.body(Body::from(ask.body)).unwrap()).await;
    (status.as_u16(), content_type, body)
}

#[tokio::test]
async fn every_route_answers_the_table_byte_for_byte_and_no_other_path_answers() {
    conformance::assert_every_route(ask).await;
}

#[tokio::test]
async fn filler_routes_answer_beside_the_scale_targets() {
    for (path, answer) in conformance::scale_answers() {
        let (_db, fortunes) = conformance::fresh_fortunes();
        let app = server_axum::app(0, conformance::FILLERS, fortunes);
        let (status, _, body) = call(app, Method::GET, &path, Vec::new()).await;
        match answer {
            Some(answer) => assert_eq!((status, body), (StatusCode::OK, answer.into_bytes()), "{path}"),
            None => assert_eq!(status, StatusCode::NOT_FOUND, "{path}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn post_fortune_adds_a_row_to_both_pages_and_refuses_bad_bodies() {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let app = server_axum::app(0, 0, fortunes);
    let seed = common::fortunes::seed_page().to_vec();
    for (body, status) in conformance::refused_fortunes() {
        let (got, content_type, reason) = call(app.clone(), Method::POST, "/fortunes", body).await;
        conformance::assert_refusal(status, got.as_u16(), content_type.as_deref(), &reason);
        assert_eq!(call(app.clone(), Method::GET, "/fortunes/cached", vec![]).await.2, seed, "nothing added");
    }
    let (status, _, _) = call(app.clone(), Method::POST, "/fortunes", conformance::NEW_FORTUNE.into()).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let expected = conformance::page_with_new_fortune();
    for path in ["/fortunes", "/fortunes/cached"] {
        assert_eq!(call(app.clone(), Method::GET, path, vec![]).await.2, expected, "{path}");
    }
}

/// (touches, FatState clones) of one request to `path` through `layers` layers.
async fn counted(layers: usize, path: &str) -> (u64, u64) {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let app = server_axum::app(layers, 0, fortunes);
    common::state::counts::take();
    let response = app.oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    common::state::counts::take()
}

#[tokio::test]
async fn every_layer_obtains_the_state_as_documented() {
    // Each layer's and the handler's State extractor clones FatState, and every
    // from_fn layer also clones the service it wraps on each call (tower's
    // ready-service swap), which holds the states of the layers below it:
    // (L + 1)(L + 3) clones per request through L layers.
    conformance::assert_state_uses(counted, |l| (l + 1) * (l + 3)).await;
}

#[tokio::test]
async fn every_middleware_offered_answers_the_devices_with_what_it_adds() {
    let (_db, fortunes) = conformance::fresh_fortunes();
    for on in conformance::stacks("axum") {
        server_axum::stack::init_trace(&on);
        let app = server_axum::stack::layered(server_axum::app(0, 0, fortunes.clone()), &on);
        let mut request = Request::get(conformance::LAYERED_PATH);
        for (name, value) in common::middleware::REQUEST_HEADERS {
            request = request.header(name, value);
        }
        let lines = common::middleware::LogSink::lines();
        let response = app.oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> =
            response.headers().iter().map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned())).collect();
        let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
        conformance::assert_layered_answer(&on, status, &headers, &body);
        conformance::assert_trace_lines("axum", &on, common::middleware::LogSink::lines() - lines);
    }
}
