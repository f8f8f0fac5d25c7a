//! A server under test: started pinned from its binary, checked healthy,
//! every route preflighted before anything is measured.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use common::Route;
use common::middleware::{Middleware, REQUEST_HEADERS};

use super::build::server_binary;
use super::progress::Progress;
use crate::engine::{Load, LoadSettings, Protocol, Reply, Request, RouteLoad, Shape, Target, TlsClient, Trust};
use crate::model::{Framework, Profile, Variant};
use crate::preflight;
use crate::results::Http2Grant;
use crate::sys::{CpuList, ServerProcess};

/// What a server under test is started with beyond its CPUs and layers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerFlags {
    /// An HTTPS listener beside the HTTP one (`--tls-addr`).
    pub tls: bool,
    /// TCP_NODELAY on its connections (`--tcp-nodelay`).
    pub tcp_nodelay: bool,
    /// Its `--middleware` (empty: `none`); `None`: the framework's defaults.
    pub middleware: Option<&'static [Middleware]>,
    /// Its `--filler-routes` (0: none).
    pub filler_routes: u16,
}

impl ServerFlags {
    /// Its command-line flags.
    pub(super) fn args(self) -> Vec<String> {
        let mut args = Vec::new();
        if self.tls {
            args.extend(["--tls-addr".to_owned(), "127.0.0.1:0".to_owned()]);
        }
        if self.tcp_nodelay {
            args.push("--tcp-nodelay".to_owned());
        }
        if let Some(on) = self.middleware {
            let names: Vec<&str> = on.iter().map(|m| m.name()).collect();
            let list = if names.is_empty() { "none".to_owned() } else { names.join(",") };
            args.extend(["--middleware".to_owned(), list]);
        }
        if self.filler_routes > 0 {
            args.extend(["--filler-routes".to_owned(), self.filler_routes.to_string()]);
        }
        args
    }
}

/// Starts `framework`'s server of `profile` pinned to `cpus` (workers = their
/// count) with `layers` state layers and `flags` (with `flags.tls` an HTTPS
/// listener beside its HTTP one), waits until it is healthy and checks every
/// route (on both).
///
/// # Errors
/// A missing binary, a server that does not start, or a preflight mismatch
/// (the message names server, route and difference).
pub fn start_server(
    profile: Profile,
    framework: Framework,
    cpus: &CpuList,
    layers: u16,
    flags: ServerFlags,
) -> anyhow::Result<ServerProcess> {
    let server = start_healthy(&server_binary(profile, framework), cpus, layers, flags)?;
    preflight::check_routes(server.name(), &Target::new(server.addr, "/"))?;
    if let Some(tls_addr) = server.tls_addr {
        preflight::check_routes(server.name(), &tls_target(tls_addr, "/", true)?)?;
    }
    Ok(server)
}

/// `path` on the HTTPS listener `tls_addr` of a server under test, whose
/// certificate it made itself (trusted as it is; see [`Trust::Any`]).
fn tls_target(tls_addr: SocketAddr, path: &str, resumption: bool) -> anyhow::Result<Target> {
    let client = TlsClient::new(&tls_addr.ip().to_string(), Trust::Any, resumption)?;
    Ok(Target::new(tls_addr, path).with_tls(client))
}

/// Starts the server `binary` pinned to `cpus` (workers = their count) with
/// `layers` state layers and `flags`, and waits until it is healthy; its routes are the
/// caller's to check.
///
/// # Errors
/// A missing binary, a server that does not start or is not healthy.
pub(super) fn start_healthy(
    binary: &Path,
    cpus: &CpuList,
    layers: u16,
    flags: ServerFlags,
) -> anyhow::Result<ServerProcess> {
    let mut args = vec![
        "--addr".to_owned(),
        "127.0.0.1:0".to_owned(),
        "--workers".to_owned(),
        cpus.len().to_string(),
        "--layers".to_owned(),
        layers.to_string(),
    ];
    args.extend(flags.args());
    let server = ServerProcess::start(binary, &args, cpus)?;
    let base = Target::new(server.addr, "/");
    preflight::wait_healthy(&base, Duration::from_secs(10))
        .with_context(|| format!("{} is not healthy", server.name()))?;
    Ok(server)
}

/// The load of one run of `route` against `server`.
pub fn load_of(settings: LoadSettings, server: &ServerProcess, route: &Route) -> Load {
    Load::new(route_load(server.addr, route), settings)
}

/// `route` of the table on the server at `addr`, with the body a successful
/// response carries.
pub fn route_load(addr: SocketAddr, route: &Route) -> RouteLoad {
    RouteLoad::of_table(Target::new(addr, route.path), route)
}

/// A server of a round, with what a successful response of each route it
/// is loaded on carries.
pub(super) struct Started {
    /// The framework it serves with (its runs are recorded under it).
    pub(super) framework: Framework,
    /// The process.
    pub(super) process: ServerProcess,
    /// Its `--layers`.
    pub(super) layers: u16,
    /// `ab`: each compared route's answer as this server gave it in
    /// preflight, the same every time (its own bytes, whatever the other
    /// side answers); empty: the route table's.
    pub(super) answers: Vec<(&'static str, Reply)>,
    /// What it granted HTTP/2, when read in preflight (the `http2`
    /// scenario, once per framework).
    pub(super) grant: Option<Http2Grant>,
    /// Its `--middleware` (the `middleware` scenario's servers): every
    /// request then sends `common::middleware::REQUEST_HEADERS` and every
    /// answer has the shape the layers give it.
    pub(super) middleware: Option<&'static [Middleware]>,
}

impl Started {
    /// A server whose routes answer the route table (checked at start).
    pub(super) fn of_table(framework: Framework, process: ServerProcess, layers: u16) -> Self {
        Self { framework, process, layers, answers: Vec::new(), grant: None, middleware: None }
    }

    /// A server of `ab` whose `paths` each answer with `status`, the same
    /// bytes [`preflight::STABLE_FETCHES`] times; `side` names it in errors.
    ///
    /// # Errors
    /// A route that answers another status, or other bytes from one request
    /// to the next (the process is stopped).
    pub(super) fn of_answers(
        framework: Framework,
        process: ServerProcess,
        layers: u16,
        paths: &[&'static str],
        status: u16,
        side: &str,
        stop: &AtomicBool,
    ) -> anyhow::Result<Self> {
        let name = format!("{side} {}", process.name());
        let answers = paths
            .iter()
            .map(|&p| preflight::stable_answer(&name, &Target::new(process.addr, p), status, stop).map(|f| (p, f)))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { framework, process, layers, answers, grant: None, middleware: None })
    }

    /// The load of `path` on this server as `variant` is loaded (over TLS
    /// on its HTTPS listener, sessions resumed when `resumption`; over
    /// HTTP/2): its own answer, else the route table's.
    ///
    /// # Errors
    /// A path with neither; TLS on a server without an HTTPS listener.
    pub(super) fn route_load(&self, path: &str, variant: Variant, resumption: bool) -> anyhow::Result<RouteLoad> {
        let target = match (variant.tls(), self.process.tls_addr) {
            (false, _) => Target::new(self.process.addr, path),
            (true, Some(tls_addr)) => tls_target(tls_addr, path, resumption)?,
            (true, None) => anyhow::bail!("{}: no HTTPS listener to load {path} over TLS", self.process.name()),
        };
        let target = target.speaking(if variant.http2() { Protocol::Http2 } else { Protocol::Http1 });
        if let Some(on) = self.middleware {
            return layered_load(target, on, path);
        }
        match self.answers.iter().find(|(p, _)| *p == path) {
            Some((_, answer)) => {
                Ok(RouteLoad { expected_status: answer.status, ..RouteLoad::ok(target, answer.body.clone()) })
            }
            None => Route::by_path(path)
                .map(|route| RouteLoad::of_table(target, route))
                .with_context(|| format!("{path}: no answer to verify it against")),
        }
    }
}

/// The load of `path` of the route table on a server behind the layers
/// `on`: the request with [`REQUEST_HEADERS`], a gzip body with
/// compression, every header the layers add.
///
/// # Errors
/// A path not in the table.
pub(super) fn layered_load(target: Target, on: &[Middleware], path: &str) -> anyhow::Result<RouteLoad> {
    let route = Route::by_path(path).with_context(|| format!("{path}: not a route of the table"))?;
    let headers: Vec<String> = REQUEST_HEADERS.iter().map(|(name, value)| format!("{name}: {value}")).collect();
    let request = Request::new("GET", &headers, None)?;
    let shape = Shape {
        gzip: on.contains(&Middleware::Compression),
        headers: on.iter().flat_map(|m| m.added_headers()).copied().collect(),
    };
    Ok(RouteLoad { shape, ..RouteLoad::ok(Target { request, ..target }, route.expected_body()) })
}

/// Stops `servers`, noting any that stopped with a failure status (ended
/// by the SIGTERM that stopped it is no failure: a server without a handler
/// for it ends so).
pub(super) fn stop_servers(servers: &mut Vec<Started>, progress: &Progress) {
    use nix::sys::signal::Signal;
    use std::os::unix::process::ExitStatusExt;
    for Started { process: mut server, .. } in servers.drain(..) {
        match server.stop() {
            Some(status) if !status.success() && status.signal() != Some(Signal::SIGTERM as i32) => {
                progress.line(&format!("note: {} stopped with {status}", server.name()))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_the_servers_arguments() {
        let flags = ServerFlags { tcp_nodelay: true, filler_routes: 1000, ..ServerFlags::default() };
        assert_eq!(flags.args(), ["--tcp-nodelay", "--filler-routes", "1000"]);
        let bare = ServerFlags { middleware: Some(&[]), ..ServerFlags::default() };
        assert_eq!(bare.args(), ["--middleware", "none"]);
        assert!(ServerFlags::default().args().is_empty(), "the framework's defaults");
    }
}
