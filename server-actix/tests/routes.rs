//! Every route of `common::ROUTES`, in process through `server_actix::app`,
//! and `POST /fortunes` with its refusals.

use actix_web::http::{Method, StatusCode, header};
use actix_web::{App, test};
use common::{RouteRequest, conformance};

type Answer = (StatusCode, Option<String>, Vec<u8>);

/// `ask` (its method, and a body with its type) of `path` through `layers` layers:
/// status, `Content-Type`, body.
async fn ask(layers: usize, path: &str, ask: RouteRequest) -> (u16, Option<String>, Vec<u8>) {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let app = test::init_service(App::new().configure(server_actix::app(layers, 0, fortunes))).await;
    let mut request = test::TestRequest::default().method(Method::from_bytes(ask.method.as_bytes()).unwrap());
    if let Some(content_type) = ask.content_type {
        request = request.insert_header((header::CONTENT_TYPE, content_type));
    }
    let response = test::call_service(&app, request.uri(path).set_payload(ask.body).to_request()).await;
    let status = response.status().as_u16();
    let content_type = response.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    (status, content_type, test::read_body(response).await.to_vec())
}

#[actix_web::test]
async fn every_route_answers_the_table_byte_for_byte_and_no_other_path_answers() {
    conformance::assert_every_route(ask).await;
}

#[actix_web::test]
async fn filler_routes_answer_beside_the_scale_targets() {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let app = test::init_service(App::new().configure(server_actix::app(0, conformance::FILLERS, fortunes))).await;
    for (path, answer) in conformance::scale_answers() {
        let response = test::call_service(&app, test::TestRequest::get().uri(&path).to_request()).await;
        let status = response.status();
        let body = test::read_body(response).await.to_vec();
        match answer {
            Some(answer) => assert_eq!((status, body), (StatusCode::OK, answer.into_bytes()), "{path}"),
            None => assert_eq!(status, StatusCode::NOT_FOUND, "{path}"),
        }
    }
}

#[actix_web::test]
async fn post_fortune_adds_a_row_to_both_pages_and_refuses_bad_bodies() {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let app = test::init_service(App::new().configure(server_actix::app(0, 0, fortunes))).await;
    let call = async |method: Method, path: &str, body: Vec<u8>| -> Answer {
        let request = test::TestRequest::default().method(method).uri(path).set_payload(body).to_request();
        let response = test::call_service(&app, request).await;
        let status = response.status();
        let content_type = response.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
        (status, content_type, test::read_body(response).await.to_vec())
    };
    let seed = common::fortunes::seed_page().to_vec();
    for (body, status) in conformance::refused_fortunes() {
        let (got, content_type, reason) = call(Method::POST, "/fortunes", body).await;
        conformance::assert_refusal(status, got.as_u16(), content_type.as_deref(), &reason);
        assert_eq!(call(Method::GET, "/fortunes/cached", vec![]).await.2, seed, "nothing added");
    }
    let (status, _, _) = call(Method::POST, "/fortunes", conformance::NEW_FORTUNE.into()).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let expected = conformance::page_with_new_fortune();
    for path in ["/fortunes", "/fortunes/cached"] {
        assert_eq!(call(Method::GET, path, vec![]).await.2, expected, "{path}");
    }
}

/// (touches, FatState clones) of one request to `path` through `layers` layers.
async fn counted(layers: usize, path: &str) -> (u64, u64) {
    let (_db, fortunes) = conformance::fresh_fortunes();
    let app = test::init_service(App::new().configure(server_actix::app(layers, 0, fortunes))).await;
    common::state::counts::take();
    let response = test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    common::state::counts::take()
}

#[actix_web::test]
async fn every_layer_obtains_the_state_as_documented() {
    // ThinData clones the state on every extraction: each layer and the handler clone FatState.
    conformance::assert_state_uses(counted, |layers| layers + 1).await;
}

#[actix_web::test]
async fn every_middleware_offered_answers_the_devices_with_what_it_adds() {
    let (_db, fortunes) = conformance::fresh_fortunes();
    for on in conformance::stacks("actix") {
        server_actix::stack::init_trace(&on);
        let app =
            test::init_service(server_actix::stack::layered(server_actix::app(0, 0, fortunes.clone()), &on)).await;
        let mut request = test::TestRequest::get().uri(conformance::LAYERED_PATH);
        for header in common::middleware::REQUEST_HEADERS {
            request = request.insert_header(header);
        }
        let lines = common::middleware::LogSink::lines();
        let response = test::call_service(&app, request.to_request()).await;
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> =
            response.headers().iter().map(|(n, v)| (n.to_string(), v.to_str().unwrap().to_owned())).collect();
        let body = test::read_body(response).await.to_vec();
        conformance::assert_layered_answer(&on, status, &headers, &body);
        conformance::assert_trace_lines("actix", &on, common::middleware::LogSink::lines() - lines);
    }
}
