//! `bench-client k8s render`, offline: the manifests are byte-identical from
//! one render to the next and equal to the golden files
//! (`golden/k8s/*/`; `BLESS=1` rewrites them); every document reads back
//! (YAML 1.2, `yaml-rust2`) and round-trips unchanged through the typed
//! Kubernetes API structs of `k8s-openapi` (which drop unknown fields, so a
//! misspelt field shows up as a difference), the PodMonitor through a strict
//! struct of its own; the manifests mean what they should (Guaranteed pods,
//! an Indexed Job without retries, selectors that select, one start for
//! every pod, arguments the binaries accept); `kubernetes-validate --strict`
//! (PyPI, when installed) accepts them and refuses a misspelt field; bad
//! flags are refused with one line and exit 2.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Container, PodTemplateSpec, Service};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use bench_client::cli::{Cli, Commands};
use bench_client::engine::Segment;

use crate::util::{self, CLIENT};

const DEADLINE: Duration = Duration::from_secs(30);
const IMAGES: [&str; 4] = [
    "--image-server",
    "registry.example/bench/server-axum:0.1.0",
    "--image-client",
    "registry.example/bench/bench-client:0.1.0",
];

/// The golden cases: a name and the flags besides the images.
const CASES: [(&str, &[&str]); 2] = [
    (
        "closed",
        &["--framework", "axum", "--clients", "4", "--connections", "256", "--start-at", "2099-12-01T10:00:00Z"],
    ),
    (
        "open",
        &[
            "--framework",
            "rocket",
            "--route",
            "/state/arc",
            "--clients",
            "3",
            "--connections",
            "64",
            "--rate-per-s",
            "30000",
            "--pipeline",
            "2",
            "--server-cpus",
            "2",
            "--client-cpus",
            "2",
            "--server-memory",
            "512Mi",
            "--layers",
            "5",
            "--namespace",
            "bench",
            "--server-node-selector",
            "bench.example/role=server",
            "--client-node-selector",
            "bench.example/role=client",
            "--warmup",
            "5s",
            "--duration",
            "30s",
            "--window",
            "500ms",
            "--start-at",
            "2099-12-01T10:00:00.250Z",
            "--podmonitor",
        ],
    ),
];

pub(crate) fn golden(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/golden/k8s").join(case)
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn render(args: &[&str], out: &Path) -> Output {
    let mut command = Command::new(CLIENT);
    command.args(["k8s", "render"]).args(IMAGES).args(args).arg("--out").arg(out);
    util::output_within(&mut command, DEADLINE)
}

/// The YAML files of `dir`, by name.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            out.insert(
                path.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&path).unwrap(),
            );
        }
    }
    out
}

#[test]
fn rendered_manifests_are_deterministic_and_equal_the_golden_files() {
    let dir = util::temp_dir("k8s-golden");
    for (case, args) in CASES {
        let (a, b) = (dir.join(format!("{case}-a")), dir.join(format!("{case}-b")));
        for out in [&a, &b] {
            let output = render(args, out);
            assert!(output.status.success(), "{case}: {}", text(&output));
        }
        let first = files(&a);
        assert_eq!(first, files(&b), "{case}: a second render differs");
        let expected_names: Vec<&str> = if args.contains(&"--podmonitor") {
            vec!["clients.yaml", "podmonitor.yaml", "server.yaml"]
        } else {
            vec!["clients.yaml", "server.yaml"]
        };
        assert_eq!(first.keys().map(String::as_str).collect::<Vec<_>>(), expected_names, "{case}");
        let golden = golden(case);
        if std::env::var_os("BLESS").is_some() {
            std::fs::create_dir_all(&golden).unwrap();
            for (name, text) in &first {
                std::fs::write(golden.join(name), text).unwrap();
            }
        }
        assert_eq!(first, files(&golden), "{case}: differs from {} (BLESS=1 rewrites it)", golden.display());
    }
    // `--out -`: the same documents on stdout.
    let (case, args) = CASES[1];
    let mut command = Command::new(CLIENT);
    command.args(["k8s", "render"]).args(IMAGES).args(args).args(["--out", "-"]);
    let out = util::output_within(&mut command, DEADLINE);
    assert!(out.status.success(), "{}", text(&out));
    let all: String = files(&golden(case)).values().cloned().collect();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut printed: Vec<&str> = stdout.lines().collect();
    let mut expected: Vec<&str> = all.lines().collect();
    printed.sort_unstable();
    expected.sort_unstable();
    assert_eq!(printed, expected, "stdout holds the files' lines");
}

/// A YAML node as JSON.
fn json(y: &Yaml) -> Value {
    match y {
        Yaml::Hash(h) => Value::Object(
            h.iter().map(|(k, v)| (k.as_str().unwrap_or_else(|| panic!("key {k:?}")).to_owned(), json(v))).collect(),
        ),
        Yaml::Array(a) => Value::Array(a.iter().map(json).collect()),
        Yaml::String(s) => Value::from(s.as_str()),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::Boolean(b) => Value::from(*b),
        Yaml::Real(r) => Value::from(r.parse::<f64>().unwrap()),
        Yaml::Null => Value::Null,
        other => panic!("unexpected YAML {other:?}"),
    }
}

/// Every document of the YAML files of `dir`, as JSON.
pub(crate) fn documents(dir: &Path) -> Vec<Value> {
    files(dir)
        .values()
        .flat_map(|t| YamlLoader::load_from_str(t).unwrap().iter().map(json).collect::<Vec<_>>())
        .collect()
}

/// The PodMonitor fields the render writes, refusing any other.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PodMonitor {
    api_version: String,
    kind: String,
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    spec: PodMonitorSpec,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PodMonitorSpec {
    selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    pod_metrics_endpoints: Vec<PodMetricsEndpoint>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PodMetricsEndpoint {
    port: String,
    path: String,
    interval: String,
}

/// `doc` read into its typed struct and written back.
fn round_trip(doc: &Value) -> Result<Value, String> {
    fn through<T: serde::de::DeserializeOwned + Serialize>(doc: &Value) -> Result<Value, String> {
        let typed: T = serde_json::from_value(doc.clone()).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }
    match doc["kind"].as_str() {
        Some("Service") => through::<Service>(doc),
        Some("Deployment") => through::<Deployment>(doc),
        Some("Job") => through::<Job>(doc),
        Some("PodMonitor") => through::<PodMonitor>(doc),
        other => Err(format!("unexpected kind {other:?}")),
    }
}

#[test]
fn every_document_round_trips_through_the_typed_api_structs_and_a_misspelling_does_not() {
    for (case, _) in CASES {
        for doc in documents(&golden(case)) {
            assert_eq!(round_trip(&doc).as_ref(), Ok(&doc), "{case}: {} changed in the round trip", doc["kind"]);
        }
    }
    let docs = documents(&golden("closed"));
    let mut job = docs.iter().find(|d| d["kind"] == "Job").unwrap().clone();
    let spec = job["spec"].as_object_mut().unwrap();
    let n = spec.remove("parallelism").unwrap();
    spec.insert("paralelism".into(), n);
    assert_ne!(round_trip(&job).as_ref(), Ok(&job), "a misspelt field is dropped, so the round trip shows it");
    let mut job = docs.iter().find(|d| d["kind"] == "Job").unwrap().clone();
    job["spec"]["completions"] = "four".into();
    assert!(round_trip(&job).is_err(), "a wrong type does not read");
}

/// The pod template of a Deployment or Job.
fn template(doc: &Value) -> PodTemplateSpec {
    serde_json::from_value(doc["spec"]["template"].clone()).unwrap()
}

/// The value after `flag` in `args`.
fn flag<'a>(args: &'a [String], flag: &str) -> &'a str {
    let i = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag} in {args:?}"));
    &args[i + 1]
}

fn whole_cpus(c: &Container) -> u32 {
    let r = c.resources.as_ref().unwrap();
    assert_eq!(r.requests, r.limits, "{}: requests = limits", c.name);
    r.requests.as_ref().unwrap()["cpu"].0.parse().unwrap_or_else(|_| panic!("{}: whole CPUs", c.name))
}

#[test]
fn the_manifests_mean_what_the_flags_say() {
    for (case, args) in CASES {
        let arg = |f: &str| args.iter().position(|a| *a == f).map(|i| args[i + 1]);
        let docs = documents(&golden(case));
        let kind = |k: &str| docs.iter().filter(|d| d["kind"] == k).cloned().collect::<Vec<_>>();
        let deployment = &kind("Deployment")[0];
        let job = &kind("Job")[0];
        let (server_pod, client_pod) = (template(deployment), template(job));
        let (server_spec, client_spec) = (server_pod.spec.clone().unwrap(), client_pod.spec.clone().unwrap());
        // Guaranteed pods: every container's requests equal its limits; whole CPUs where it matters.
        for c in server_spec.containers.iter().chain(&client_spec.containers) {
            let r = c.resources.as_ref().unwrap();
            assert_eq!(r.requests, r.limits, "{case} {}", c.name);
        }
        let server = &server_spec.containers[0];
        let client = &client_spec.containers[0];
        assert_eq!(whole_cpus(server).to_string(), arg("--server-cpus").unwrap_or("1"), "{case}");
        assert_eq!(whole_cpus(client).to_string(), arg("--client-cpus").unwrap_or("1"), "{case}");
        // The Job: every client at once, no retries, its index its segment.
        let clients: i64 = arg("--clients").unwrap().parse().unwrap();
        let spec = &job["spec"];
        assert_eq!((spec["completions"].as_i64(), spec["parallelism"].as_i64()), (Some(clients), Some(clients)));
        assert_eq!((spec["completionMode"].as_str(), spec["backoffLimit"].as_i64()), (Some("Indexed"), Some(0)));
        assert_eq!(client_spec.restart_policy.as_deref(), Some("Never"));
        // Every Service selects pods of the run, on a port they name.
        for service in kind("Service") {
            let selector = service["spec"]["selector"].as_object().unwrap();
            let pods: Vec<&PodTemplateSpec> = [&server_pod, &client_pod]
                .into_iter()
                .filter(|p| {
                    let labels = p.metadata.as_ref().unwrap().labels.as_ref().unwrap();
                    selector.iter().all(|(k, v)| labels.get(k).map(String::as_str) == v.as_str())
                })
                .collect();
            assert_eq!(pods.len(), 1, "{case}: {} selects one side", service["metadata"]["name"]);
            for port in service["spec"]["ports"].as_array().unwrap() {
                let named = port["targetPort"].as_str().unwrap();
                let ports = pods[0].spec.as_ref().unwrap().containers.iter().flat_map(|c| c.ports.iter().flatten());
                assert!(ports.clone().any(|p| p.name.as_deref() == Some(named)), "{case}: port {named} exists");
            }
        }
        // Server and clients keep off each other's nodes.
        for (pod, other) in [(&server_spec, "client"), (&client_spec, "server")] {
            let anti = pod.affinity.as_ref().unwrap().pod_anti_affinity.as_ref().unwrap();
            let term = &anti.required_during_scheduling_ignored_during_execution.as_ref().unwrap()[0];
            let labels = term.label_selector.as_ref().unwrap().match_labels.as_ref().unwrap();
            assert_eq!(labels["app.kubernetes.io/component"], other);
            assert_eq!(term.topology_key, "kubernetes.io/hostname");
        }
        // Every pod starts at the one instant, on the same windows.
        let watch = &server_spec.containers[1];
        let (load_args, watch_args) = (client.args.clone().unwrap(), watch.args.clone().unwrap());
        for f in ["--start-at", "--warmup", "--duration", "--window"] {
            assert_eq!(flag(&load_args, f), flag(&watch_args, f), "{case} {f}");
        }
        assert_eq!(flag(&load_args, "--start-at"), arg("--start-at").unwrap());
        assert!(server_spec.share_process_namespace == Some(true), "watch sees the server's /proc");
        assert_eq!(flag(&watch_args, "--process"), format!("server-{}", arg("--framework").unwrap()));
        // The segments' connections add up to the total.
        let connections: u64 = flag(&load_args, "--connections").parse().unwrap();
        let n = u32::try_from(clients).unwrap();
        assert_eq!((0..n).map(|i| Segment::new(i, n).unwrap().share(connections)).sum::<u64>(), connections);
        // The binaries accept these arguments (with the pod's variables expanded).
        let expand = |a: &String| a.replace("$(POD_NAME)", "pod-0").replace("$(POD_IP)", "10.1.2.3");
        for args in [&load_args, &watch_args] {
            let argv = std::iter::once("bench-client".to_owned()).chain(args.iter().map(expand));
            let parsed = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{case}: {args:?}: {e}"));
            assert!(matches!(parsed.command, Commands::Load(_) | Commands::Watch(_)));
        }
        let server_args = std::iter::once("server".to_owned()).chain(server.args.iter().flatten().map(expand));
        let parsed = common::config::ServerArgs::try_parse_from(server_args).unwrap();
        assert_eq!(parsed.addr.ip().to_string(), "10.1.2.3", "{case}: the pod's address, not loopback");
        assert_eq!(parsed.workers.to_string(), arg("--server-cpus").unwrap_or("1"));
        assert!(load_args[1].starts_with("http://bench-server:8080/"), "{case}");
    }
}

#[test]
fn kubernetes_validate_accepts_the_manifests_and_refuses_a_misspelt_field() {
    let probe = util::output_within(Command::new("python3").args(["-m", "kubernetes_validate", "--version"]), DEADLINE);
    if !probe.status.success() {
        println!(
            "skipped: kubernetes-validate is not installed (pip install kubernetes-validate): {}",
            String::from_utf8_lossy(&probe.stderr).lines().last().unwrap_or("")
        );
        return;
    }
    let validate = |paths: &[PathBuf]| {
        let mut command = Command::new("python3");
        command.args(["-m", "kubernetes_validate", "-k", "1.33.0", "--strict"]).args(paths);
        util::output_within(&mut command, Duration::from_secs(120))
    };
    for (case, _) in CASES {
        let paths: Vec<PathBuf> = files(&golden(case)).keys().map(|n| golden(case).join(n)).collect();
        let out = validate(&paths);
        assert!(out.status.success(), "{case}: {}", text(&out));
        let printed = text(&out);
        assert_eq!(printed.matches(" passed for resource ").count(), 4, "{case}: {printed}");
    }
    let dir = util::temp_dir("k8s-validate");
    let bad = dir.join("clients.yaml");
    let clients = std::fs::read_to_string(golden("closed").join("clients.yaml")).unwrap();
    std::fs::write(&bad, clients.replace("parallelism:", "paralelism:")).unwrap();
    let out = validate(&[bad]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("'paralelism' was unexpected"), "{}", text(&out));
}

#[test]
fn bad_render_flags_are_refused_with_one_line_and_exit_2() {
    let dir = util::temp_dir("k8s-refusals");
    let base = ["--framework", "axum", "--connections", "256"];
    for (more, expected) in [
        (&["--clients", "0"][..], "0 is not in 1..=10000"),
        (&["--clients", "300"][..], "--clients 300 exceeds --connections 256"),
        (&["--clients", "2", "--server-cpus", "1.5"][..], "'1.5' is not a whole number of CPUs"),
        (&["--clients", "2", "--start-at", "2020-01-01T00:00:00Z"][..], "is in the past"),
    ] {
        let args: Vec<&str> = base.iter().chain(more).copied().collect();
        let out = render(&args, &dir.join("out"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{more:?}: {}", text(&out));
        assert_eq!(err.trim_end().lines().count(), 1, "{more:?}: one line: {err}");
        assert!(err.contains(expected), "{more:?}: {err}");
        assert!(!dir.join("out").exists(), "{more:?}: nothing written");
    }
}

#[test]
fn image_references_and_label_values_are_checked_as_kubernetes_checks_them() {
    let dir = util::temp_dir("k8s-references");
    let flags = ["k8s", "render", "--framework", "axum", "--clients", "2", "--connections", "4"];
    let with = |server_image: &str, more: &[&str]| {
        let images = ["--image-server", server_image, "--image-client", "registry.example/bench/bench-client:1"];
        let mut command = Command::new(CLIENT);
        command.args(flags).args(images).args(more).arg("--out").arg(dir.join("out"));
        util::output_within(&mut command, DEADLINE)
    };
    // The runtimes' grammar (distribution/reference): a lowercase repository, a tag starting with a
    // word character, a digest of its algorithm's length.
    for (image, kind) in [
        ("registry.example/Bench/server-axum:1", "PathInvalidChar"),
        ("registry.example/bench/server-axum:-1", "TagInvalidChar"),
        ("registry.example/bench/server-axum@sha256:abc", "OciRegisteredAlgorithmWrongDigestLength"),
    ] {
        let out = with(image, &[]);
        let line = util::one_line_exit(&out, 2);
        assert!(line.contains(&format!("'{image}' is not an image reference")) && line.contains(kind), "{line}");
        assert!(!dir.join("out").exists(), "{image}: nothing written");
    }
    let digest = format!("registry.example:5000/bench/server-axum:1.0_rc-2@sha256:{}", "ab".repeat(32));
    // An empty label value is a label value (`node-role.kubernetes.io/bench=`).
    let out = with(&digest, &["--server-node-selector", "node-role.kubernetes.io/bench="]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let docs: Vec<Value> = files(&dir.join("out"))
        .values()
        .flat_map(|y| YamlLoader::load_from_str(y).unwrap())
        .map(|d| json(&d))
        .collect();
    let server = docs.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let pod = &server["spec"]["template"]["spec"];
    assert_eq!(pod["nodeSelector"]["node-role.kubernetes.io/bench"], Value::from(""), "{pod}");
    assert_eq!(pod["containers"][0]["image"], Value::from(digest.as_str()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_binary_has_a_dockerfile_built_from_the_workspace_root() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join("common").join("Dockerfile");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(text.contains("COPY . ."), "the workspace is the build context");
    assert!(text.contains("ARG BIN\n") && text.contains("cargo build --release --locked -p \"$BIN\""), "{text}");
    assert!(text.contains("COPY --from=build /src/target/release/${BIN} /usr/local/bin/${BIN}"), "{text}");
    assert!(text.contains("exec \\\"/usr/local/bin/$BIN\\\" \\\"$@\\\""), "runs the binary under its name: {text}");
    let makefile = std::fs::read_to_string(root.join("Makefile")).unwrap();
    let images = makefile.lines().find(|l| l.starts_with("IMAGES")).expect("the Makefile lists the images");
    for bin in ["bench-client", "server-actix", "server-axum", "server-rocket"] {
        assert!(root.join(bin).join("Cargo.toml").is_file(), "{bin} is a package of the workspace");
        assert!(images.split_whitespace().any(|w| w == bin), "make images builds {bin}: {images}");
        assert!(
            text.contains(&format!("BIN={bin}"))
                || text.contains("BIN: bench-client, server-actix, server-axum or server-rocket"),
            "{bin}: says how to build it"
        );
    }
    assert!(makefile.contains("docker build -f common/Dockerfile --build-arg BIN=$$b"), "make images uses it");
    let ignored = std::fs::read_to_string(root.join(".dockerignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "target"), "the build context leaves target/ out");
}
