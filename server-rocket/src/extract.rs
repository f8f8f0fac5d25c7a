//! The extractor routes in Rocket: `Json<T>`, typed path and query
//! parameters, and `Form<T>`, each beside a route that reads the same
//! request raw (`Data` under the same limit, `&Origin`) and parses it by
//! hand through `common::extract`, with the same answer.

use common::RouteId;
use common::extract::{self, Batch, Params};
use rocket::data::{Data, Limits};
use rocket::form::{Form, FromForm};
use rocket::http::Status;
use rocket::http::uri::Origin;
use rocket::response::status::Custom;
use rocket::serde::json::Json;
use rocket::{Build, Rocket, get, post, routes};

/// `rocket` with the extractor routes of the table, typed and raw.
pub(crate) fn mount(rocket: Rocket<Build>) -> Rocket<Build> {
    rocket
        .mount(RouteId::ExtractJson.path(), routes![json])
        .mount(RouteId::ExtractJsonRaw.path(), routes![json_raw])
        .mount(RouteId::ExtractJsonLarge.path(), routes![json])
        .mount(RouteId::ExtractJsonLargeRaw.path(), routes![json_raw])
        .mount(extract::PATH_PREFIX, routes![path])
        .mount(extract::PATH_RAW_PREFIX, routes![path_raw])
        .mount(extract::QUERY_PATH, routes![query])
        .mount(extract::QUERY_RAW_PATH, routes![query_raw])
        .mount(RouteId::ExtractForm.path(), routes![form])
        .mount(RouteId::ExtractFormRaw.path(), routes![form_raw])
}

/// An answer, or what was wrong with the request as a 400.
type Answer = Result<String, Custom<String>>;

fn answer<E: std::fmt::Display>(read: Result<String, E>) -> Answer {
    read.map_err(|e| Custom(Status::BadRequest, e.to_string()))
}

/// The body, read raw under `limit` (the limit Rocket's own guard for it reads under).
async fn read(data: Data<'_>, limit: rocket::data::ByteUnit) -> Result<Vec<u8>, Custom<String>> {
    match data.open(limit).into_bytes().await {
        Ok(bytes) if bytes.is_complete() => Ok(bytes.into_inner()),
        Ok(_) => Err(Custom(Status::PayloadTooLarge, format!("body over {limit}"))),
        Err(e) => Err(Custom(Status::BadRequest, format!("cannot read the body: {e}"))),
    }
}

#[post("/", data = "<batch>")]
fn json(batch: Json<Batch>) -> String {
    batch.answer()
}

#[post("/", data = "<data>")]
async fn json_raw(data: Data<'_>) -> Answer {
    answer(extract::batch_from_slice(&read(data, Limits::JSON).await?).map(|b| b.answer()))
}

#[get("/<device>/<reading>")]
fn path(device: &str, reading: u32) -> String {
    extract::answer(device, reading)
}

#[get("/<_>/<_>")]
fn path_raw(uri: &Origin<'_>) -> Answer {
    answer(Params::from_path(uri.path().as_str(), extract::PATH_RAW_PREFIX).map(|p| p.answer()))
}

#[get("/?<device>&<reading>")]
fn query(device: &str, reading: u32) -> String {
    extract::answer(device, reading)
}

#[get("/")]
fn query_raw(uri: &Origin<'_>) -> Answer {
    answer(Params::from_pairs(uri.query().map_or("", |q| q.as_str()).as_bytes()).map(|p| p.answer()))
}

/// The form's fields, as Rocket's `FromForm` reads them (borrowed, not copied).
#[derive(FromForm)]
struct Fields<'r> {
    device: &'r str,
    reading: u32,
}

#[post("/", data = "<fields>")]
fn form(fields: Form<Fields<'_>>) -> String {
    extract::answer(fields.device, fields.reading)
}

#[post("/", data = "<data>")]
async fn form_raw(data: Data<'_>) -> Answer {
    answer(Params::from_pairs(&read(data, Limits::FORM).await?).map(|p| p.answer()))
}
