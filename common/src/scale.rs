//! Routes at scale: what a request costs when its route is the last of
//! many. Every server serves the `routes` scenario's two targets,
//! `/scale/target` and `/scale/target/{id}`; started with
//! `--filler-routes N`, it first registers N static routes
//! (`/scale/r0000` …) and N with a path parameter (`/scale/r0000/{id}` …),
//! so that the same request reaches the last of N + 1 routes of its kind.
//! Routers that try routes in order (actix-web, Rocket) then pass N routes
//! first; a router that looks a path up (axum's) does not.

/// The static target's path.
pub const TARGET: &str = "/scale/target";
/// The parameterized target's path before its id.
pub const TARGET_PARAM_PREFIX: &str = "/scale/target/";
/// What the static target answers.
pub const TARGET_BODY: &str = "target";
/// What every filler answers.
pub const FILLER_BODY: &str = "filler";
/// The most filler routes of each kind a server registers.
pub const MAX_FILLER_ROUTES: u16 = 10_000;

/// Filler `i`'s static path, e.g. `/scale/r0007`; its parameterized route
/// is this path, `/`, and the parameter.
pub fn filler_path(i: u16) -> String {
    format!("/scale/r{i:04}")
}

/// What the parameterized target answers for `id`, e.g. `target 42`.
pub fn target_answer(id: u32) -> String {
    format!("target {id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillers_never_shadow_a_target() {
        let last = filler_path(MAX_FILLER_ROUTES - 1);
        assert_eq!((filler_path(0).as_str(), last.as_str()), ("/scale/r0000", "/scale/r9999"));
        assert!(!TARGET.starts_with(&filler_path(0)[..9]) && TARGET_PARAM_PREFIX.starts_with(TARGET));
        assert_eq!(target_answer(42), "target 42");
    }
}
