//! `bench-client k8s render …`: the flags of one distributed run, checked
//! into a [`RenderPlan`], rendered into manifests (`crate::k8s`) and written
//! to a folder or stdout, with the commands that run it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, ensure};
use clap::{Args, Subcommand};

use super::Outcome;
use super::args::{duration, positive_duration, rate, timing, unix_ms};
use crate::engine::Rate;
use crate::k8s::{RenderPlan, Rendered, render, rfc3339};
use crate::measure::unix_ms_now;
use crate::model::Framework;

/// `k8s …`.
#[derive(Debug, Args)]
pub struct K8sArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: K8sCommand,
}

/// The subcommands of `k8s`.
#[derive(Debug, Subcommand)]
pub enum K8sCommand {
    /// Write the manifests of one run: the server (Deployment + Service, `watch` beside it), an
    /// Indexed Job of client pods starting together, optionally a PodMonitor.
    Render(RenderArgs),
}

/// Flags of `k8s render`, as typed.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// The server's framework.
    #[arg(long, value_enum)]
    pub framework: Framework,
    /// Route every client loads, one of the route table's paths.
    #[arg(long, default_value = "/api/devices")]
    pub route: String,
    /// Client pods, each a segment of the load (an Indexed Job: completions = parallelism = N).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub clients: u32,
    /// Connections over all clients.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub connections: u32,
    /// Open loop: requests per second over all clients (default: closed loop).
    #[arg(long = "rate-per-s", visible_alias = "rate", value_parser = rate)]
    pub rate_per_s: Option<Rate>,
    /// Requests outstanding per connection (1: no pipelining).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub pipeline: u16,
    /// Every client speaks HTTP/2 with prior knowledge (h2c) to the server's plain port, as `load
    /// --http2` does.
    #[arg(long, conflicts_with = "pipeline")]
    pub http2: bool,
    /// With --http2: concurrent streams per connection (`load --streams`).
    #[arg(long, requires = "http2", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub streams: Option<u16>,
    /// Measured duration (a whole number of windows).
    #[arg(long, default_value = "60s", value_parser = positive_duration)]
    pub duration: Duration,
    /// Discarded warm-up before the first window.
    #[arg(long, default_value = "10s", value_parser = duration)]
    pub warmup: Duration,
    /// Length of one window.
    #[arg(long, default_value = "1s", value_parser = positive_duration)]
    pub window: Duration,
    /// Whole CPUs of the server container (requests = limits; its workers).
    #[arg(long, default_value = "1", value_parser = whole_cpus)]
    pub server_cpus: u32,
    /// Whole CPUs of each client container (requests = limits; its engine threads).
    #[arg(long, default_value = "1", value_parser = whole_cpus)]
    pub client_cpus: u32,
    /// Memory of the server container, a Kubernetes quantity.
    #[arg(long, default_value = "256Mi", value_parser = quantity)]
    pub server_memory: String,
    /// Memory of each client container.
    #[arg(long, default_value = "256Mi", value_parser = quantity)]
    pub client_memory: String,
    /// The server's state layers (--layers).
    #[arg(long, default_value_t = 10)]
    pub layers: u16,
    /// The server's image (entrypoint `server-<framework>`), e.g. registry.example/bench/server-axum:1.
    #[arg(long, value_parser = image)]
    pub image_server: String,
    /// The client's image (entrypoint bench-client), e.g. registry.example/bench/bench-client:1.
    #[arg(long, value_parser = image)]
    pub image_client: String,
    /// Namespace of every object (default: kubectl's current one).
    #[arg(long, value_parser = dns_label)]
    pub namespace: Option<String>,
    /// The shared start: RFC 3339 in UTC or Unix seconds; in the future.
    #[arg(long, value_parser = unix_ms, conflicts_with = "start_in")]
    pub start_at: Option<u64>,
    /// Or the start this long from now, rounded up to a whole second (default 120s: time to apply,
    /// schedule and pull images).
    #[arg(long, value_parser = positive_duration)]
    pub start_in: Option<Duration>,
    /// Run the server pod on nodes with this label, key=value.
    #[arg(long, value_parser = node_label)]
    pub server_node_selector: Option<(String, String)>,
    /// Run the client pods on nodes with this label, key=value.
    #[arg(long, value_parser = node_label)]
    pub client_node_selector: Option<(String, String)>,
    /// Also write podmonitor.yaml (Prometheus Operator) scraping every pod of the run.
    #[arg(long)]
    pub podmonitor: bool,
    /// Folder to write server.yaml, clients.yaml (and podmonitor.yaml) into, made if missing; `-`: stdout.
    #[arg(long, default_value = "k8s")]
    pub out: PathBuf,
}

/// The default of `--start-in`.
const DEFAULT_START_IN: Duration = Duration::from_secs(120);

/// A whole number of CPUs, at least 1.
fn whole_cpus(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=1024).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' is not a whole number of CPUs from 1 to 1024 (requests = limits in whole CPUs make \
             the pod Guaranteed, with exclusive cores)"
        )),
    }
}

/// A memory quantity such as 256Mi or 1Gi.
fn quantity(text: &str) -> Result<String, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, suffix) = t.split_at(digits);
    let ok = number.parse::<u64>().is_ok_and(|n| n > 0)
        && ["", "k", "M", "G", "T", "Ki", "Mi", "Gi", "Ti"].contains(&suffix);
    if ok { Ok(t.to_owned()) } else { Err(format!("'{text}' is not a memory quantity such as 256Mi or 1Gi")) }
}

/// An image reference as the container runtimes parse it (the grammar of
/// distribution/reference: a lowercase repository, a tag of at most 128
/// word characters, dots and dashes starting with a word character, a
/// digest of its algorithm's length).
fn image(text: &str) -> Result<String, String> {
    match container_image_dist_ref::ImgRef::new(text) {
        Ok(_) => Ok(text.to_owned()),
        Err(e) => Err(format!(
            "'{text}' is not an image reference such as registry.example/bench/server-axum:1 ({:?} at byte {})",
            e.kind(),
            e.index()
        )),
    }
}

/// Whether `t` is a DNS label (RFC 1123): what a namespace name must be.
fn is_dns_label(t: &str) -> bool {
    (1..=63).contains(&t.len())
        && t.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !t.starts_with('-')
        && !t.ends_with('-')
}

fn dns_label(text: &str) -> Result<String, String> {
    if is_dns_label(text) {
        Ok(text.to_owned())
    } else {
        Err(format!("'{text}' is not a namespace name (RFC 1123 label)"))
    }
}

/// Whether `t` is a label name or a non-empty value: at most 63 of
/// `[A-Za-z0-9._-]`, starting and ending alphanumeric.
fn is_label_part(t: &str) -> bool {
    (1..=63).contains(&t.len())
        && t.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && t.starts_with(|c: char| c.is_ascii_alphanumeric())
        && t.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// A node label `key=value` (the key optionally `prefix/name`).
fn node_label(text: &str) -> Result<(String, String), String> {
    let bad = || format!("'{text}' is not a node label such as bench.example/role=client");
    let (key, value) = text.split_once('=').ok_or_else(bad)?;
    let name = key.rsplit_once('/').map_or(key, |(prefix, name)| {
        let prefix_ok = !prefix.is_empty() && prefix.len() <= 253 && prefix.split('.').all(is_dns_label);
        if prefix_ok { name } else { "" }
    });
    // A value may be empty (`node-role.kubernetes.io/bench=`); a name may not.
    let value_ok = value.is_empty() || is_label_part(value);
    if is_label_part(name) && value_ok { Ok((key.to_owned(), value.to_owned())) } else { Err(bad()) }
}

impl RenderArgs {
    /// Checks the flags into a [`RenderPlan`], with the realtime clock at
    /// `now_unix_ms` (a start must be after it).
    ///
    /// # Errors
    /// More clients than connections, a route not in the table, a duration
    /// not a whole number of windows, a start in the past.
    pub fn plan(self, now_unix_ms: u64) -> anyhow::Result<RenderPlan> {
        ensure!(
            self.clients <= self.connections,
            "--clients {} exceeds --connections {}: every client needs at least one connection",
            self.clients,
            self.connections
        );
        common::Route::by_path(&self.route).with_context(|| {
            let paths: Vec<&str> = common::ROUTES.iter().map(|r| r.path).collect();
            format!("--route {} is not in the route table ({})", self.route, paths.join(", "))
        })?;
        let timing = timing(self.warmup, self.duration, self.window)?;
        let start_at_unix_ms = match (self.start_at, self.start_in) {
            (Some(at), _) => {
                ensure!(
                    at > now_unix_ms,
                    "--start-at {} is in the past (now {}): every pod would miss it",
                    rfc3339(at),
                    rfc3339(now_unix_ms)
                );
                at
            }
            (None, lead) => {
                let lead = u64::try_from(lead.unwrap_or(DEFAULT_START_IN).as_millis()).unwrap_or(u64::MAX);
                now_unix_ms.saturating_add(lead).div_ceil(1000).saturating_mul(1000)
            }
        };
        Ok(RenderPlan {
            framework: self.framework,
            route: self.route,
            clients: self.clients,
            connections: self.connections,
            rate: self.rate_per_s,
            pipeline: self.pipeline,
            http2_streams: self.http2.then(|| self.streams.unwrap_or(1)),
            timing,
            server_cpus: self.server_cpus,
            client_cpus: self.client_cpus,
            server_memory: self.server_memory,
            client_memory: self.client_memory,
            layers: self.layers,
            image_server: self.image_server,
            image_client: self.image_client,
            namespace: self.namespace,
            start_at_unix_ms,
            server_node_selector: self.server_node_selector,
            client_node_selector: self.client_node_selector,
            podmonitor: self.podmonitor,
        })
    }
}

/// The commands that run the rendered files in `dir`.
fn next_steps(plan: &RenderPlan, dir: &str, files: &[Rendered]) -> String {
    let run = plan.run_id();
    let ns = plan.namespace.as_ref().map(|n| format!(" -n {n}")).unwrap_or_default();
    let clients = format!("app.kubernetes.io/instance={run},app.kubernetes.io/component=client");
    let mut steps =
        vec![format!("kubectl{ns} apply -f {dir}/server.yaml && kubectl{ns} rollout status deploy/bench-server")];
    if files.iter().any(|f| f.name == "podmonitor.yaml") {
        steps.push(format!("kubectl{ns} apply -f {dir}/podmonitor.yaml"));
    }
    steps.extend([
        format!("kubectl{ns} apply -f {dir}/clients.yaml"),
        format!("kubectl{ns} wait --for=condition=complete --timeout=1h job/bench-clients-{run}"),
        format!("kubectl{ns} logs -l {clients} --tail=-1 --prefix > clients.log"),
        format!("kubectl{ns} logs deploy/bench-server -c watch --tail=-1 > server.log"),
        "bench-client merge clients.log --server server.log --json merged.json".to_owned(),
    ]);
    format!(
        "run {run}: every pod starts at {} (apply before then)\n{}\n",
        rfc3339(plan.start_at_unix_ms),
        steps.iter().map(|s| format!("  {s}")).collect::<Vec<_>>().join("\n")
    )
}

/// Renders and writes.
///
/// # Errors
/// When a file cannot be written.
pub(super) fn run(plan: &RenderPlan, out: &std::path::Path) -> anyhow::Result<Outcome> {
    let files = render(plan);
    if out.as_os_str() == "-" {
        let text: String = files.iter().map(|f| f.text.as_str()).collect();
        print!("{text}");
        return Ok(Outcome::Success);
    }
    for f in &files {
        let path = out.join(f.name);
        crate::sys::write_or_keep(&path, f.text.as_bytes())?;
        println!("wrote {}", path.display());
    }
    print!("{}", next_steps(plan, &out.display().to_string(), &files));
    Ok(Outcome::Success)
}

/// Checks and runs `k8s …`; bad flags end with [`Outcome::Usage`].
pub(super) fn dispatch(args: K8sArgs) -> Outcome {
    match args.command {
        K8sCommand::Render(args) => {
            let out = args.out.clone();
            let planned = args.plan(unix_ms_now()).and_then(|plan| {
                if out.as_os_str() != "-" {
                    crate::sys::prepare_folder("--out", &out)?;
                }
                Ok(plan)
            });
            match planned {
                Ok(plan) => run(&plan, &out).unwrap_or_else(|e| super::report(&e, Outcome::Failed)),
                Err(e) => super::report(&e, Outcome::Usage),
            }
        }
    }
}

#[cfg(test)]
mod tests {

    use super::super::{Commands, parsed};
    use super::*;

    const NOW: u64 = 1_796_119_000_000;

    fn plan(argv: &[&str]) -> anyhow::Result<RenderPlan> {
        let head = ["k8s", "render", "--image-server", "r/s:1", "--image-client", "r/c:1"];
        let Commands::K8s(K8sArgs { command: K8sCommand::Render(args) }) = parsed(&[&head[..], argv].concat())? else {
            unreachable!()
        };
        args.plan(NOW)
    }

    #[test]
    fn render_flags_are_checked_and_the_start_defaults_to_two_minutes_ahead() {
        let p = plan(&["--framework", "axum", "--clients", "4", "--connections", "256"]).unwrap();
        assert_eq!(p.start_at_unix_ms, NOW + 120_000);
        assert_eq!((p.server_cpus, p.client_cpus, p.route.as_str()), (1, 1, "/api/devices"));
        let p = plan(&["--framework", "axum", "--clients", "1", "--connections", "1", "--start-in", "1500ms"]).unwrap();
        assert_eq!(p.start_at_unix_ms, NOW + 2_000, "rounded up to a whole second");
        let err = |argv: &[&str]| format!("{:#}", plan(argv).unwrap_err());
        let base = ["--framework", "axum", "--connections", "256"];
        let with = |more: &[&'static str]| -> Vec<&'static str> { base.iter().chain(more).copied().collect() };
        assert!(err(&with(&["--clients", "0"])).contains("0 is not in 1..=10000"));
        assert!(err(&with(&["--clients", "300"])).contains("--clients 300 exceeds --connections 256"));
        assert!(
            err(&with(&["--clients", "2", "--server-cpus", "1.5"])).contains("'1.5' is not a whole number of CPUs")
        );
        assert!(err(&with(&["--clients", "2", "--client-cpus", "500m"])).contains("'500m'"));
        assert!(err(&with(&["--clients", "2", "--start-at", "2020-01-01T00:00:00Z"])).contains("is in the past"));
        assert!(
            err(&with(&["--clients", "2", "--start-at", "2099-01-01T00:00:00Z", "--start-in", "5s"]))
                .contains("cannot be used with")
        );
        assert!(err(&with(&["--clients", "2", "--route", "/nope"])).contains("not in the route table"));
        assert!(err(&with(&["--clients", "2", "--duration", "1500ms"])).contains("whole number"));
        assert!(err(&with(&["--clients", "2", "--server-memory", "lots"])).contains("memory quantity"));
        assert!(err(&with(&["--clients", "2", "--namespace", "Bench"])).contains("namespace"));
        assert!(err(&with(&["--clients", "2", "--client-node-selector", "role"])).contains("node label"));
        let p = plan(&with(&["--clients", "2", "--client-node-selector", "bench.example/role=client"])).unwrap();
        assert_eq!(p.client_node_selector, Some(("bench.example/role".into(), "client".into())));
        // HTTP/2: h2c on the plain port, streams as `load` takes them; pipelining is HTTP/1.1's.
        let h2 = plan(&with(&["--clients", "2", "--http2", "--streams", "16"])).unwrap();
        assert_eq!(h2.http2_streams, Some(16));
        assert!(h2.command_line().contains("--http2 --streams 16"), "{}", h2.command_line());
        let clients = crate::k8s::render(&h2).into_iter().find(|r| r.name == "clients.yaml").unwrap().text;
        assert!(clients.contains("- \"--http2\"\n") && clients.contains("- \"--streams\"\n"), "{clients}");
        assert_eq!(plan(&with(&["--clients", "2", "--http2"])).unwrap().http2_streams, Some(1));
        assert!(err(&with(&["--clients", "2", "--streams", "4"])).contains("--http2"));
        assert!(err(&with(&["--clients", "2", "--http2", "--pipeline", "4"])).contains("cannot be used with"));
    }
}
