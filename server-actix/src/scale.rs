//! Routes at scale in actix-web: `--filler-routes N` routes of each kind
//! registered ahead of the two targets (`common::scale`). actix-web's
//! router tries an app's resources in the order they were registered.

use actix_web::web::{self, Path};
use common::scale::{self, FILLER_BODY, TARGET_BODY};

use crate::get_or_head;

/// Registers `fillers` routes of each kind, then the two targets, after
/// every route registered before.
pub(crate) fn routes(cfg: &mut web::ServiceConfig, fillers: u16) {
    for i in 0..fillers {
        let path = scale::filler_path(i);
        cfg.route(&path, get_or_head().to(filler)).route(&format!("{path}/{{id}}"), get_or_head().to(filler));
    }
    cfg.route(scale::TARGET, get_or_head().to(target))
        .route(&format!("{}{{id}}", scale::TARGET_PARAM_PREFIX), get_or_head().to(target_param));
}

async fn filler() -> &'static str {
    FILLER_BODY
}

async fn target() -> &'static str {
    TARGET_BODY
}

async fn target_param(id: Path<u32>) -> String {
    scale::target_answer(id.into_inner())
}
