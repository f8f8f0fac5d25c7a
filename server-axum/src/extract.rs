//! The extractor routes in axum: `Json`, `Path`, `Query` and `Form`, each
//! beside a route that reads the same request raw (`Bytes`, `Uri`) and
//! parses it by hand through `common::extract`, with the same answer.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Form, Json, Path, Query};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use common::RouteId;
use common::extract::{self, Batch, Params};

/// The extractor routes of the table, typed and raw.
pub(crate) fn routes() -> Router {
    Router::new()
        .route(RouteId::ExtractJson.path(), post(json))
        .route(RouteId::ExtractJsonRaw.path(), post(json_raw))
        .route(RouteId::ExtractJsonLarge.path(), post(json))
        .route(RouteId::ExtractJsonLargeRaw.path(), post(json_raw))
        .route(&format!("{}{{device}}/{{reading}}", extract::PATH_PREFIX), get(path))
        .route(&format!("{}{{device}}/{{reading}}", extract::PATH_RAW_PREFIX), get(path_raw))
        .route(extract::QUERY_PATH, get(query))
        .route(extract::QUERY_RAW_PATH, get(query_raw))
        .route(RouteId::ExtractForm.path(), post(form))
        .route(RouteId::ExtractFormRaw.path(), post(form_raw))
}

/// An answer, or what was wrong with the request as a 400.
fn answer<E: std::fmt::Display>(read: Result<String, E>) -> Response {
    match read {
        Ok(answer) => answer.into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

async fn json(Json(batch): Json<Batch>) -> String {
    batch.answer()
}

async fn json_raw(body: Bytes) -> Response {
    answer(extract::batch_from_slice(&body).map(|b| b.answer()))
}

async fn path(Path(params): Path<Params>) -> String {
    params.answer()
}

async fn path_raw(uri: Uri) -> Response {
    answer(Params::from_path(uri.path(), extract::PATH_RAW_PREFIX).map(|p| p.answer()))
}

async fn query(Query(params): Query<Params>) -> String {
    params.answer()
}

async fn query_raw(uri: Uri) -> Response {
    answer(Params::from_pairs(uri.query().unwrap_or_default().as_bytes()).map(|p| p.answer()))
}

async fn form(Form(params): Form<Params>) -> String {
    params.answer()
}

async fn form_raw(body: Bytes) -> Response {
    answer(Params::from_pairs(&body).map(|p| p.answer()))
}
