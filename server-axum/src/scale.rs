//! Routes at scale in axum: `--filler-routes N` routes of each kind beside
//! the two targets (`common::scale`). axum's router (matchit, a radix tree)
//! finds a route by its path's bytes, whatever the count or order.

use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use common::scale::{self, FILLER_BODY, TARGET_BODY};

/// `fillers` routes of each kind, then the two targets.
pub(crate) fn routes(fillers: u16) -> Router {
    let mut router = Router::new();
    for i in 0..fillers {
        let path = scale::filler_path(i);
        router = router.route(&path, get(filler)).route(&format!("{path}/{{id}}"), get(filler));
    }
    router.route(scale::TARGET, get(target)).route(&format!("{}{{id}}", scale::TARGET_PARAM_PREFIX), get(target_param))
}

async fn filler() -> &'static str {
    FILLER_BODY
}

async fn target() -> &'static str {
    TARGET_BODY
}

async fn target_param(Path(id): Path<u32>) -> String {
    scale::target_answer(id)
}
