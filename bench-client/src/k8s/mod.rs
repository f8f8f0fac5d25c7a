//! Kubernetes manifests for one distributed run (`bench-client k8s
//! render`): a Deployment and Service for the server, with `watch` as a
//! sidecar recording its CPU; an Indexed Job of N client pods that run
//! `load --segment auto --start-at T --json -`; optionally a PodMonitor for
//! the Prometheus Operator. Kubernetes is the only distributed engine: no
//! operator, controller or coordinator of ours. The pods start at a shared
//! realtime instant, print their results into their logs, and `merge` reads
//! `kubectl logs` of all of them.
//!
//! The output is plain text, deterministic for a given [`RenderPlan`], so
//! golden files hold it; the tests read it back and round-trip every
//! document through the typed API structs of `k8s-openapi`, and
//! `kubernetes-validate` checks it against the API's schemas.
//!
//! Imports the vocabulary (`model`), the engine's timing and rate, and the
//! start barrier's limit (`measure`); only the command line is above it.

mod manifests;
pub mod yaml;

use std::time::Duration;

pub use self::manifests::{RUN_AS_USER, render};
use crate::engine::{Rate, Timing};
use crate::model::Framework;

/// The server's HTTP port in its pod.
pub const SERVER_PORT: u16 = 8080;
/// The metrics port of the client pods and of the server's `watch` sidecar.
pub const METRICS_PORT: u16 = 9464;
/// How long a client pod stays up after its run, serving its last metrics
/// (three scrapes at the PodMonitor's interval).
pub const CLIENT_LINGER: Duration = Duration::from_secs(15);
/// The PodMonitor's scrape interval.
pub const SCRAPE_INTERVAL: Duration = Duration::from_secs(5);
/// How long `watch` waits for the server process to appear in the pod.
pub const WATCH_WAIT_FOR_PROCESS: Duration = Duration::from_secs(120);

/// A checked `k8s render`: everything the manifests say.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderPlan {
    /// The server's framework (its image runs `server-<name>`).
    pub framework: Framework,
    /// The route every client loads.
    pub route: String,
    /// Client pods (`--clients`), each a segment of the load.
    pub clients: u32,
    /// Connections over all clients.
    pub connections: u32,
    /// Open loop: requests per second over all clients.
    pub rate: Option<Rate>,
    /// Requests outstanding per connection.
    pub pipeline: u16,
    /// HTTP/2 with prior knowledge (h2c), with this many streams per
    /// connection; `None`: HTTP/1.1.
    pub http2_streams: Option<u16>,
    /// Warm-up, duration and window of every client and of `watch`.
    pub timing: Timing,
    /// Whole CPUs of the server container (its workers).
    pub server_cpus: u32,
    /// Whole CPUs of each client container (its engine threads).
    pub client_cpus: u32,
    /// Memory of the server container (a Kubernetes quantity, e.g. 256Mi).
    pub server_memory: String,
    /// Memory of each client container.
    pub client_memory: String,
    /// The server's state layers (`--layers`).
    pub layers: u16,
    /// The server image (its entrypoint is `server-<framework>`).
    pub image_server: String,
    /// The client image (its entrypoint is `bench-client`).
    pub image_client: String,
    /// The namespace of every object; `None`: the one `kubectl` uses.
    pub namespace: Option<String>,
    /// The shared start, milliseconds since the Unix epoch.
    pub start_at_unix_ms: u64,
    /// A node label `key=value` the server pod must run on.
    pub server_node_selector: Option<(String, String)>,
    /// A node label `key=value` the client pods must run on.
    pub client_node_selector: Option<(String, String)>,
    /// Also render a PodMonitor (Prometheus Operator).
    pub podmonitor: bool,
}

/// One rendered file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// Its file name (`server.yaml`, `clients.yaml`, `podmonitor.yaml`).
    pub name: &'static str,
    /// Its text.
    pub text: String,
}

/// `d` as the client's duration flags read it: whole seconds as `10s`,
/// otherwise milliseconds.
pub fn duration_arg(d: Duration) -> String {
    if d.subsec_millis() == 0 { format!("{}s", d.as_secs()) } else { format!("{}ms", d.as_millis()) }
}

/// `ms` since the Unix epoch in RFC 3339, UTC (with milliseconds only when
/// it has some).
pub fn rfc3339(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_millis(ms);
    if ms.is_multiple_of(1000) {
        humantime::format_rfc3339_seconds(t).to_string()
    } else {
        humantime::format_rfc3339_millis(t).to_string()
    }
}

impl RenderPlan {
    /// The run's id: framework and start, e.g. `axum-20261201t100000z`; it
    /// names the Job and labels every pod of the run
    /// (`app.kubernetes.io/instance`).
    pub fn run_id(&self) -> String {
        let stamp: String = rfc3339(self.start_at_unix_ms)
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .map(|c| c.to_ascii_lowercase())
            .collect();
        format!("{}-{stamp}", self.framework.name())
    }

    /// The command line that renders these manifests again.
    pub fn command_line(&self) -> String {
        let mut args = vec![
            format!("--framework {}", self.framework.name()),
            format!("--route {}", self.route),
            format!("--clients {}", self.clients),
            format!("--connections {}", self.connections),
        ];
        if let Some(rate) = self.rate {
            args.push(format!("--rate-per-s {}", rate.per_s()));
        }
        if self.pipeline != 1 {
            args.push(format!("--pipeline {}", self.pipeline));
        }
        if let Some(streams) = self.http2_streams {
            args.push(format!("--http2 --streams {streams}"));
        }
        let t = self.timing;
        args.push(format!(
            "--warmup {} --duration {} --window {}",
            duration_arg(t.warmup()),
            duration_arg(t.duration()),
            duration_arg(t.window())
        ));
        args.push(format!("--server-cpus {} --client-cpus {}", self.server_cpus, self.client_cpus));
        args.push(format!("--server-memory {} --client-memory {}", self.server_memory, self.client_memory));
        args.push(format!("--layers {}", self.layers));
        args.push(format!("--image-server {} --image-client {}", self.image_server, self.image_client));
        if let Some(ns) = &self.namespace {
            args.push(format!("--namespace {ns}"));
        }
        args.push(format!("--start-at {}", rfc3339(self.start_at_unix_ms)));
        if let Some((k, v)) = &self.server_node_selector {
            args.push(format!("--server-node-selector {k}={v}"));
        }
        if let Some((k, v)) = &self.client_node_selector {
            args.push(format!("--client-node-selector {k}={v}"));
        }
        if self.podmonitor {
            args.push("--podmonitor".to_owned());
        }
        format!("bench-client k8s render {}", args.join(" "))
    }
}
