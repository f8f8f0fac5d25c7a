//! The extractor routes in actix-web: `web::Json`, `web::Path`, `web::Query`
//! and `web::Form`, each beside a route that reads the same request raw
//! (`web::Bytes`, `HttpRequest`) and parses it by hand through
//! `common::extract`, with the same answer.

use actix_web::web::{self, Bytes};
use actix_web::{HttpRequest, HttpResponse};
use common::RouteId;
use common::extract::{self, Batch, Params};

use crate::get_or_head;

/// Registers the extractor routes of the table, typed and raw.
pub(crate) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route(RouteId::ExtractJson.path(), web::post().to(json))
        .route(RouteId::ExtractJsonRaw.path(), web::post().to(json_raw))
        .route(RouteId::ExtractJsonLarge.path(), web::post().to(json))
        .route(RouteId::ExtractJsonLargeRaw.path(), web::post().to(json_raw))
        .route(&format!("{}{{device}}/{{reading}}", extract::PATH_PREFIX), get_or_head().to(path))
        .route(&format!("{}{{device}}/{{reading}}", extract::PATH_RAW_PREFIX), get_or_head().to(path_raw))
        .route(extract::QUERY_PATH, get_or_head().to(query))
        .route(extract::QUERY_RAW_PATH, get_or_head().to(query_raw))
        .route(RouteId::ExtractForm.path(), web::post().to(form))
        .route(RouteId::ExtractFormRaw.path(), web::post().to(form_raw));
}

/// An answer, or what was wrong with the request as a 400.
fn answer<E: std::fmt::Display>(read: Result<String, E>) -> HttpResponse {
    match read {
        Ok(answer) => HttpResponse::Ok().content_type(common::ContentType::TextPlain.as_str()).body(answer),
        Err(e) => HttpResponse::BadRequest().body(e.to_string()),
    }
}

async fn json(batch: web::Json<Batch>) -> String {
    batch.answer()
}

async fn json_raw(body: Bytes) -> HttpResponse {
    answer(extract::batch_from_slice(&body).map(|b| b.answer()))
}

async fn path(params: web::Path<Params>) -> String {
    params.answer()
}

async fn path_raw(request: HttpRequest) -> HttpResponse {
    answer(Params::from_path(request.path(), extract::PATH_RAW_PREFIX).map(|p| p.answer()))
}

async fn query(params: web::Query<Params>) -> String {
    params.answer()
}

async fn query_raw(request: HttpRequest) -> HttpResponse {
    answer(Params::from_pairs(request.query_string().as_bytes()).map(|p| p.answer()))
}

async fn form(params: web::Form<Params>) -> String {
    params.answer()
}

async fn form_raw(body: Bytes) -> HttpResponse {
    answer(Params::from_pairs(&body).map(|p| p.answer()))
}
