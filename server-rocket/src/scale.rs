//! Routes at scale in Rocket: `--filler-routes N` routes of each kind
//! mounted ahead of the two targets (`common::scale`). Rocket's router
//! tries every route of a method in order of rank, and routes of one rank
//! in the order they were mounted.

use common::scale::{self, FILLER_BODY, TARGET_BODY};
use rocket::http::Method;
use rocket::route::{BoxFuture, Outcome, Route};
use rocket::{Build, Data, Request, Rocket, get, routes};

/// `rocket` with `fillers` routes of each kind, then the two targets,
/// mounted after every route mounted before.
pub(crate) fn mount(rocket: Rocket<Build>, fillers: u16) -> Rocket<Build> {
    let fillers: Vec<Route> = (0..fillers)
        .flat_map(|i| {
            let path = scale::filler_path(i);
            [Route::new(Method::Get, &path, filler), Route::new(Method::Get, &format!("{path}/<id>"), filler)]
        })
        .collect();
    rocket.mount("/", fillers).mount(scale::TARGET, routes![target, target_param])
}

/// Every filler's handler: Rocket's manual routes take a function of the
/// request and its data.
fn filler<'r>(request: &'r Request<'_>, _: Data<'r>) -> BoxFuture<'r> {
    Box::pin(std::future::ready(Outcome::from(request, FILLER_BODY)))
}

#[get("/")]
fn target() -> &'static str {
    TARGET_BODY
}

#[get("/<id>")]
fn target_param(id: u32) -> String {
    scale::target_answer(id)
}
