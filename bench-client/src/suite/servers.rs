//! A server under test: started pinned from its binary, checked healthy,
//! every route preflighted before anything is measured.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use common::Route;

use super::build::server_binary;
use crate::engine::{Load, LoadSettings, RouteLoad, Target};
use crate::model::{Framework, Profile};
use crate::preflight;
use crate::sys::{CpuList, ServerProcess};

/// Starts `framework`'s server of `profile` pinned to `cpus` (workers = their
/// count) with `layers` state layers, waits until it is healthy and checks
/// every route.
///
/// # Errors
/// A missing binary, a server that does not start, or a preflight mismatch
/// (the message names server, route and difference).
pub fn start_server(
    profile: Profile,
    framework: Framework,
    cpus: &CpuList,
    layers: u16,
) -> anyhow::Result<ServerProcess> {
    start_binary(&server_binary(profile, framework), cpus, layers)
}

/// Starts the server `binary` pinned to `cpus` (workers = their count) with
/// `layers` state layers, waits until it is healthy and checks every route.
///
/// # Errors
/// A missing binary, a server that does not start, or a preflight mismatch.
pub(super) fn start_binary(binary: &Path, cpus: &CpuList, layers: u16) -> anyhow::Result<ServerProcess> {
    let args = [
        "--addr".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--workers".to_owned(),
        cpus.len().to_string(),
        "--layers".to_owned(),
        layers.to_string(),
    ];
    let server = ServerProcess::start(binary, &args, cpus)?;
    let base = Target::new(server.addr, "/");
    preflight::wait_healthy(&base, Duration::from_secs(10))
        .with_context(|| format!("{} is not healthy", server.name()))?;
    preflight::check_routes(server.name(), &base)?;
    Ok(server)
}

/// The load of one run of `route` against `server`.
pub fn load_of(settings: LoadSettings, server: &ServerProcess, route: &Route) -> Load {
    let RouteLoad { target, expected_body } = route_load(server.addr, route);
    Load::new(target, expected_body, settings)
}

/// `route` of the table on the server at `addr`, with the body a successful
/// response carries.
pub fn route_load(addr: SocketAddr, route: &Route) -> RouteLoad {
    RouteLoad { target: Target::new(addr, route.path), expected_body: route.expected_body() }
}
