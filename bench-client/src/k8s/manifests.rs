//! The documents of one run, built as ordered trees ([`super::yaml`]).
//!
//! The server pod is Guaranteed (every container's requests equal its
//! limits) with whole CPUs for the server container, which is what the
//! kubelet's static CPU manager needs to give it exclusive cores; the
//! `watch` sidecar takes a fraction of a shared CPU. The server binds the
//! pod's own address (`$(POD_IP)` from the downward API), not loopback:
//! the only place the workspace's servers listen beyond 127.0.0.1. Client
//! and server pods keep off each other's nodes (required anti-affinity), so
//! the network between them is a real one.
//!
//! Every pod meets the "restricted" Pod Security Standard, which many shared
//! and production namespaces enforce: it runs as [`RUN_AS_USER`] (the user
//! the images' final stage names), with the runtime's default seccomp
//! profile, and every container without privilege escalation, with every
//! capability dropped and a read-only root file system; the server writes
//! its fortunes database to an `emptyDir` mounted at its `TMPDIR`.

use super::yaml::{Node, map, s, strings, to_yaml};
use super::{
    CLIENT_LINGER, METRICS_PORT, RenderPlan, Rendered, SCRAPE_INTERVAL, SERVER_PORT, WATCH_WAIT_FOR_PROCESS,
    duration_arg, rfc3339,
};
use crate::measure::MAX_BARRIER_AHEAD;

const PART_OF: (&str, &str) = ("app.kubernetes.io/part-of", "bench");
const COMPONENT: &str = "app.kubernetes.io/component";
const NAME: &str = "app.kubernetes.io/name";
const INSTANCE: &str = "app.kubernetes.io/instance";
/// The server's Deployment and Service.
const SERVER: &str = "bench-server";
/// The clients' headless Service (their pods' DNS subdomain).
const CLIENTS: &str = "bench-clients";
/// The user (and group) every container runs as: not root, and the one the
/// final stage of the Dockerfile (`common/Dockerfile`) names (`USER 65532:65532`, distroless's
/// "nonroot"). Sharing it lets `watch` read the server's `/proc` entries
/// without any capability.
pub const RUN_AS_USER: i64 = 65_532;
/// Where the server's `TMPDIR` (its fortunes database) is mounted, and the
/// most that `emptyDir` may hold.
const TMP_MOUNT: &str = "/tmp";
const TMP_SIZE_LIMIT: &str = "64Mi";
/// What every rendered file says of the Pod Security Standard it meets.
const RESTRICTED: &str = "Every pod meets the restricted Pod Security Standard (a namespace labelled \
pod-security.kubernetes.io/enforce=restricted admits it).";
/// CPU and memory of the `watch` sidecar.
const WATCH_CPU: &str = "100m";
const WATCH_MEMORY: &str = "32Mi";

/// Labels that select one side's pods (`server` or `client`), of any run.
fn side(component: &str) -> Node {
    map([(PART_OF.0, s(PART_OF.1)), (COMPONENT, s(component))])
}

/// The labels of one run's pods of one side.
fn pod_labels(component: &str, name: &str, run: &str) -> Node {
    side(component).with(NAME, s(name)).with(INSTANCE, s(run))
}

fn metadata(plan: &RenderPlan, name: &str, labels: Node) -> Node {
    let mut m = map([("name", s(name))]);
    if let Some(ns) = &plan.namespace {
        m = m.with("namespace", s(ns.as_str()));
    }
    m.with("labels", labels)
}

fn port(name: &str, port: u16) -> Node {
    map([("name", s(name)), ("containerPort", Node::Int(i64::from(port)))])
}

/// Requests equal to limits.
fn resources(cpu: &str, memory: &str) -> Node {
    let amounts = || map([("cpu", s(cpu)), ("memory", s(memory))]);
    map([("requests", amounts()), ("limits", amounts())])
}

/// An environment variable from the pod's own fields (downward API).
fn field_env(name: &str, field: &str) -> Node {
    map([("name", s(name)), ("valueFrom", map([("fieldRef", map([("fieldPath", s(field))]))]))])
}

/// Keeps the pod off nodes running pods of the other `component`.
fn away_from(component: &str) -> Node {
    let term =
        map([("labelSelector", map([("matchLabels", side(component))])), ("topologyKey", s("kubernetes.io/hostname"))]);
    map([("podAntiAffinity", map([("requiredDuringSchedulingIgnoredDuringExecution", Node::Seq(vec![term]))]))])
}

fn node_selector(spec: Node, selector: Option<&(String, String)>) -> Node {
    match selector {
        Some((k, v)) => spec.with("nodeSelector", Node::Map(vec![(k.clone(), s(v.as_str()))])),
        None => spec,
    }
}

/// A pod's security context under the restricted standard: a non-root user
/// and group, the runtime's default seccomp profile.
fn pod_security() -> Node {
    map([
        ("runAsNonRoot", Node::Bool(true)),
        ("runAsUser", Node::Int(RUN_AS_USER)),
        ("runAsGroup", Node::Int(RUN_AS_USER)),
        ("seccompProfile", map([("type", s("RuntimeDefault"))])),
    ])
}

/// A container's security context under the restricted standard, with a
/// read-only root file system.
fn container_security() -> Node {
    map([
        ("allowPrivilegeEscalation", Node::Bool(false)),
        ("readOnlyRootFilesystem", Node::Bool(true)),
        ("capabilities", map([("drop", strings(["ALL"]))])),
    ])
}

fn http_probe(path: &str, port: &str, period_s: i64) -> Node {
    map([("httpGet", map([("path", s(path)), ("port", s(port))])), ("periodSeconds", Node::Int(period_s))])
}

/// The timing flags every client and `watch` share.
fn timing_args(plan: &RenderPlan) -> Vec<String> {
    let t = plan.timing;
    vec![
        "--start-at".into(),
        rfc3339(plan.start_at_unix_ms),
        "--warmup".into(),
        duration_arg(t.warmup()),
        "--duration".into(),
        duration_arg(t.duration()),
        "--window".into(),
        duration_arg(t.window()),
    ]
}

/// The Service `name` in front of the pods of `component`, exposing their
/// port `port_name` as `port`; `headless`: a DNS name per pod (subdomain),
/// no load balancing.
fn service(plan: &RenderPlan, name: &str, component: &str, (port_name, port): (&str, u16), headless: bool) -> Node {
    let ports = Node::Seq(vec![map([
        ("name", s(port_name)),
        ("port", Node::Int(i64::from(port))),
        ("targetPort", s(port_name)),
    ])]);
    let mut spec = vec![("selector", side(component)), ("ports", ports)];
    if headless {
        spec.insert(0, ("clusterIP", s("None")));
    }
    map([
        ("apiVersion", s("v1")),
        ("kind", s("Service")),
        ("metadata", metadata(plan, name, side(component))),
        ("spec", map(spec)),
    ])
}

/// `server.yaml`: the Service and the Deployment (server + `watch`).
fn server(plan: &RenderPlan) -> Vec<Node> {
    let run = plan.run_id();
    let binary = plan.framework.binary();
    let service = service(plan, SERVER, "server", ("http", SERVER_PORT), false);
    let cpus = plan.server_cpus.to_string();
    let server = map([
        ("name", s("server")),
        ("image", s(plan.image_server.as_str())),
        (
            "args",
            strings([
                "--addr".to_owned(),
                format!("$(POD_IP):{SERVER_PORT}"),
                "--workers".to_owned(),
                cpus.clone(),
                "--layers".to_owned(),
                plan.layers.to_string(),
            ]),
        ),
        (
            "env",
            Node::Seq(vec![field_env("POD_IP", "status.podIP"), map([("name", s("TMPDIR")), ("value", s(TMP_MOUNT))])]),
        ),
        ("ports", Node::Seq(vec![port("http", SERVER_PORT)])),
        ("resources", resources(&cpus, &plan.server_memory)),
        ("readinessProbe", http_probe("/healthz", "http", 2)),
        ("securityContext", container_security()),
        ("volumeMounts", Node::Seq(vec![map([("name", s("tmp")), ("mountPath", s(TMP_MOUNT))])])),
    ]);
    let mut watch_args: Vec<String> = vec!["watch".into(), "--process".into(), binary.clone()];
    watch_args.extend(["--wait-for-process".into(), duration_arg(WATCH_WAIT_FOR_PROCESS)]);
    watch_args.extend(timing_args(plan));
    watch_args.extend(["--label".into(), "$(POD_NAME)".into(), "--json".into(), "-".into()]);
    watch_args.extend([
        "--metrics-addr".into(),
        format!("0.0.0.0:{METRICS_PORT}"),
        "--linger".into(),
        "forever".into(),
    ]);
    let watch = map([
        ("name", s("watch")),
        ("image", s(plan.image_client.as_str())),
        ("args", strings(watch_args)),
        ("env", Node::Seq(vec![field_env("POD_NAME", "metadata.name")])),
        ("ports", Node::Seq(vec![port("metrics", METRICS_PORT)])),
        ("resources", resources(WATCH_CPU, WATCH_MEMORY)),
        ("securityContext", container_security()),
    ]);
    let tmp = map([("name", s("tmp")), ("emptyDir", map([("sizeLimit", s(TMP_SIZE_LIMIT))]))]);
    let pod_spec =
        node_selector(map([("shareProcessNamespace", Node::Bool(true))]), plan.server_node_selector.as_ref())
            .with("securityContext", pod_security())
            .with("affinity", away_from("client"))
            .with("containers", Node::Seq(vec![server, watch]))
            .with("volumes", Node::Seq(vec![tmp]));
    let deployment = map([
        ("apiVersion", s("apps/v1")),
        ("kind", s("Deployment")),
        ("metadata", metadata(plan, SERVER, pod_labels("server", &binary, &run))),
        (
            "spec",
            map([
                ("replicas", Node::Int(1)),
                // Never two servers at once (a rolling update would start the next first).
                ("strategy", map([("type", s("Recreate"))])),
                ("selector", map([("matchLabels", side("server"))])),
                (
                    "template",
                    map([("metadata", map([("labels", pod_labels("server", &binary, &run))])), ("spec", pod_spec)]),
                ),
            ]),
        ),
    ]);
    vec![service, deployment]
}

/// The `load` arguments of every client pod.
fn load_args(plan: &RenderPlan) -> Vec<String> {
    let mut args: Vec<String> = vec![
        "load".into(),
        format!("http://{SERVER}:{SERVER_PORT}{}", plan.route),
        "--allow-remote".into(),
        "--clients".into(),
        plan.clients.to_string(),
        "--segment".into(),
        "auto".into(),
        "--connections".into(),
        plan.connections.to_string(),
        "--threads".into(),
        plan.client_cpus.to_string(),
    ];
    if let Some(rate) = plan.rate {
        args.extend(["--rate-per-s".into(), rate.per_s().to_string()]);
    }
    if plan.pipeline != 1 {
        args.extend(["--pipeline".into(), plan.pipeline.to_string()]);
    }
    if let Some(streams) = plan.http2_streams {
        args.extend(["--http2".into(), "--streams".into(), streams.to_string()]);
    }
    args.extend(timing_args(plan));
    args.extend(["--label".into(), "$(POD_NAME)".into(), "--json".into(), "-".into()]);
    args.extend(["--metrics-addr".into(), format!("0.0.0.0:{METRICS_PORT}")]);
    args.extend(["--linger".into(), duration_arg(CLIENT_LINGER)]);
    args
}

/// `clients.yaml`: the headless Service and the Indexed Job.
fn clients(plan: &RenderPlan) -> Vec<Node> {
    let run = plan.run_id();
    let service = service(plan, CLIENTS, "client", ("metrics", METRICS_PORT), true);
    let cpus = plan.client_cpus.to_string();
    let client = map([
        ("name", s("client")),
        ("image", s(plan.image_client.as_str())),
        ("args", strings(load_args(plan))),
        ("env", Node::Seq(vec![field_env("POD_NAME", "metadata.name")])),
        ("ports", Node::Seq(vec![port("metrics", METRICS_PORT)])),
        // 200 once preflight has passed: who is waiting at the barrier.
        ("readinessProbe", http_probe("/ready", "metrics", 1)),
        ("resources", resources(&cpus, &plan.client_memory)),
        ("securityContext", container_security()),
    ]);
    let pod_spec = node_selector(
        map([("restartPolicy", s("Never")), ("subdomain", s(CLIENTS))]),
        plan.client_node_selector.as_ref(),
    )
    .with("securityContext", pod_security())
    .with("affinity", away_from("server"))
    .with("containers", Node::Seq(vec![client]));
    let t = plan.timing;
    // The longest a pod can legitimately take: the furthest start a client
    // accepts, the run, its linger, and a minute of slack.
    let deadline = MAX_BARRIER_AHEAD + t.warmup() + t.duration() + CLIENT_LINGER + std::time::Duration::from_secs(60);
    let n = i64::from(plan.clients);
    let job = map([
        ("apiVersion", s("batch/v1")),
        ("kind", s("Job")),
        ("metadata", metadata(plan, &format!("{CLIENTS}-{run}"), side("client").with(INSTANCE, s(run.as_str())))),
        (
            "spec",
            map([
                // JOB_COMPLETION_INDEX = 0 … N-1 in each pod: its segment.
                ("completionMode", s("Indexed")),
                ("completions", Node::Int(n)),
                // All at once, or the later ones miss the barrier.
                ("parallelism", Node::Int(n)),
                // A client started again would start late: no restarts.
                ("backoffLimit", Node::Int(0)),
                (
                    "activeDeadlineSeconds",
                    Node::Int(i64::try_from(deadline.as_secs_f64().ceil() as u64).unwrap_or(i64::MAX)),
                ),
                (
                    "template",
                    map([
                        ("metadata", map([("labels", pod_labels("client", "bench-client", &run))])),
                        ("spec", pod_spec),
                    ]),
                ),
            ]),
        ),
    ]);
    vec![service, job]
}

/// `podmonitor.yaml`: Prometheus Operator scrapes every pod of the run.
fn podmonitor(plan: &RenderPlan) -> Node {
    let run = plan.run_id();
    map([
        ("apiVersion", s("monitoring.coreos.com/v1")),
        ("kind", s("PodMonitor")),
        (
            "metadata",
            metadata(plan, &format!("bench-{run}"), map([(PART_OF.0, s(PART_OF.1)), (INSTANCE, s(run.as_str()))])),
        ),
        (
            "spec",
            map([
                ("selector", map([("matchLabels", map([(PART_OF.0, s(PART_OF.1)), (INSTANCE, s(run.as_str()))]))])),
                (
                    "podMetricsEndpoints",
                    Node::Seq(vec![map([
                        ("port", s("metrics")),
                        ("path", s("/metrics")),
                        ("interval", s(duration_arg(SCRAPE_INTERVAL))),
                    ])]),
                ),
            ]),
        ),
    ])
}

/// The files of `plan`: `server.yaml`, `clients.yaml` and, with
/// `--podmonitor`, `podmonitor.yaml`; each starts with comments saying what
/// made it and what it needs.
pub fn render(plan: &RenderPlan) -> Vec<Rendered> {
    let head = |what: &str| -> Vec<String> {
        vec![
            format!("Rendered by bench-client {}: {}", env!("CARGO_PKG_VERSION"), plan.command_line()),
            format!("Run {}: {what}", plan.run_id()),
        ]
    };
    let start = rfc3339(plan.start_at_unix_ms);
    let mut server_comment = head("the server, and `watch` beside it recording its CPU per window.");
    server_comment.extend([
        "The pod is Guaranteed (requests = limits, whole CPUs for the server); its cores are".to_owned(),
        "exclusive only where the kubelet runs with cpuManagerPolicy: static.".to_owned(),
        format!("Apply it first; `kubectl rollout status deploy/{SERVER}` before the clients."),
        RESTRICTED.to_owned(),
    ]);
    let mut clients_comment = head(&format!("{} client pods, one segment of the load each.", plan.clients));
    clients_comment.extend([
        format!("Every pod starts its run at {start} (the nodes' clocks must agree: NTP); a pod"),
        "not running by then (image pull, scheduling) misses the barrier and fails the Job:".to_owned(),
        "render again with a later start. Results are in the pods' logs, for `bench-client merge`.".to_owned(),
        RESTRICTED.to_owned(),
    ]);
    let mut files = vec![
        Rendered { name: "server.yaml", text: to_yaml(&server_comment, &server(plan)) },
        Rendered { name: "clients.yaml", text: to_yaml(&clients_comment, &clients(plan)) },
    ];
    if plan.podmonitor {
        let mut comment = head("a PodMonitor (Prometheus Operator) for the live metrics of every pod of the run.");
        comment.push("Live counters only: the exact results are in the logs.".to_owned());
        files.push(Rendered { name: "podmonitor.yaml", text: to_yaml(&comment, &[podmonitor(plan)]) });
    }
    files
}
