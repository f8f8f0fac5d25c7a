//! Every route of `common::ROUTES`, in process through `server_actix::app`.

use actix_web::http::{StatusCode, header};
use actix_web::{App, test};

async fn get(layers: usize, path: &str) -> (StatusCode, Option<String>, Vec<u8>) {
    let app = test::init_service(App::new().configure(server_actix::app(layers))).await;
    let response = test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
    let status = response.status();
    let content_type = response.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    let body = test::read_body(response).await.to_vec();
    (status, content_type, body)
}

#[actix_web::test]
async fn every_route_answers_the_table_byte_for_byte() {
    for layers in [0, 1, 10] {
        for route in common::ROUTES {
            let (status, content_type, body) = get(layers, route.path).await;
            assert_eq!(status, StatusCode::OK, "{} layers={layers}", route.path);
            assert_eq!(content_type.as_deref(), Some(route.content_type.as_str()), "{}", route.path);
            assert_eq!(body, route.expected_body(), "{} layers={layers}", route.path);
        }
    }
}

#[actix_web::test]
async fn unknown_path_is_404() {
    let (status, _, _) = get(10, common::UNKNOWN_PATH).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = get(10, "/state/unknown").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// (touches, FatState clones) of one request to `path` through `layers` layers.
async fn counted(layers: usize, path: &str) -> (u64, u64) {
    let app = test::init_service(App::new().configure(server_actix::app(layers))).await;
    common::state::counts::take();
    let response = test::call_service(&app, test::TestRequest::get().uri(path).to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    common::state::counts::take()
}

#[actix_web::test]
async fn every_layer_obtains_the_state_as_documented() {
    for layers in [0, 1, 7] {
        // ThinData clones the state on every extraction: each layer and the handler clone FatState.
        assert_eq!(counted(layers, "/state/fat").await, (layers as u64, layers as u64 + 1), "{layers} layers");
        assert_eq!(counted(layers, "/state/arc").await, (layers as u64, 0), "{layers} layers");
        assert_eq!(counted(layers, "/plaintext").await, (0, 0), "no layer in front of /plaintext");
    }
}
