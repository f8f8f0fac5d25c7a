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
