//! Every route of `common::ROUTES`, in process through `server_axum::app`.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use tower::ServiceExt;

async fn get(layers: usize, path: &str) -> (StatusCode, Option<String>, Vec<u8>) {
    let response = server_axum::app(layers).oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
    let content_type = response.headers().get(header::CONTENT_TYPE).map(|v| v.to_str().unwrap().to_owned());
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes().to_vec();
    (status, content_type, body)
}

#[tokio::test]
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

#[tokio::test]
async fn unknown_path_is_404() {
    let (status, _, _) = get(10, common::UNKNOWN_PATH).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = get(10, "/state/unknown").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// (touches, FatState clones) of one request to `path` through `layers` layers.
async fn counted(layers: usize, path: &str) -> (u64, u64) {
    let app = server_axum::app(layers);
    common::state::counts::take();
    let response = app.oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    common::state::counts::take()
}

#[tokio::test]
async fn every_layer_obtains_the_state_as_documented() {
    for layers in [0, 1, 7] {
        // Each layer's and the handler's State extractor clones FatState, and every
        // from_fn layer also clones the service it wraps on each call (tower's
        // ready-service swap), which holds the states of the layers below it:
        // (L + 1)(L + 3) clones per request through L layers.
        let l = layers as u64;
        assert_eq!(counted(layers, "/state/fat").await, (l, (l + 1) * (l + 3)), "{layers} layers");
        // The same through one Arc: no FatState clone.
        assert_eq!(counted(layers, "/state/arc").await, (layers as u64, 0), "{layers} layers");
        assert_eq!(counted(layers, "/plaintext").await, (0, 0), "no layer in front of /plaintext");
    }
}
