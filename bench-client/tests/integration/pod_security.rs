//! The rendered pods meet the "restricted" Pod Security Standard
//! (kubernetes.io/docs/concepts/security/pod-security-standards), checked
//! by a small checker of its rules (with the baseline rules it includes)
//! that names the field a rule fails on; the images run as the same non-root
//! user; and `watch` reads the server's CPU from `/proc` as that user with
//! every capability dropped, as the sidecar does in the pod.

use std::process::{Command, Stdio};
use std::time::Duration;

use bench_client::k8s::RUN_AS_USER;
use serde_json::{Value, json};

use crate::k8s::{documents, golden};
use crate::util::{self, CLIENT, Guarded};

/// Volume types the restricted standard allows.
const VOLUME_TYPES: [&str; 8] =
    ["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];

/// The pod spec of a workload document, and the path to it.
fn pod_spec(doc: &Value) -> Option<(&Value, &'static str)> {
    match doc["kind"].as_str()? {
        "Pod" => Some((&doc["spec"], "spec")),
        "Deployment" | "Job" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => {
            Some((&doc["spec"]["template"]["spec"], "spec.template.spec"))
        }
        _ => None,
    }
}

/// Every rule of the restricted standard `doc` breaks, each naming the field
/// (`Deployment/bench-server: spec.template.spec.containers[server].securityContext.allowPrivilegeEscalation …`);
/// and a writable root file system, which these manifests also refuse.
fn violations(doc: &Value) -> Vec<String> {
    let Some((spec, at)) = pod_spec(doc) else { return Vec::new() };
    let who = format!("{}/{}", doc["kind"].as_str().unwrap_or("?"), doc["metadata"]["name"].as_str().unwrap_or("?"));
    let mut out = Vec::new();
    let mut fail = |field: String, why: &str| out.push(format!("{who}: {field} {why}"));
    for host in ["hostNetwork", "hostPID", "hostIPC"] {
        if spec[host] == true {
            fail(format!("{at}.{host}"), "must be unset or false");
        }
    }
    let pod = &spec["securityContext"];
    for (i, volume) in spec["volumes"].as_array().into_iter().flatten().enumerate() {
        let kinds: Vec<&String> =
            volume.as_object().into_iter().flat_map(|m| m.keys()).filter(|k| *k != "name").collect();
        if kinds.iter().any(|k| !VOLUME_TYPES.contains(&k.as_str())) {
            fail(format!("{at}.volumes[{i}]"), &format!("is of a type the standard refuses: {kinds:?}"));
        }
    }
    if pod["runAsUser"] == 0 {
        fail(format!("{at}.securityContext.runAsUser"), "must not be 0");
    }
    let seccomp_ok =
        |ctx: &Value| matches!(ctx["seccompProfile"]["type"].as_str(), Some("RuntimeDefault" | "Localhost"));
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for c in spec[list].as_array().into_iter().flatten() {
            let field = |f: &str| format!("{at}.{list}[{}].securityContext.{f}", c["name"].as_str().unwrap_or("?"));
            let ctx = &c["securityContext"];
            if ctx["privileged"] == true {
                fail(field("privileged"), "must be unset or false");
            }
            if ctx["allowPrivilegeEscalation"] != false {
                fail(field("allowPrivilegeEscalation"), "must be false");
            }
            let inherits_non_root = pod["runAsNonRoot"] == true && ctx["runAsNonRoot"].is_null();
            if !(ctx["runAsNonRoot"] == true || inherits_non_root) {
                fail(field("runAsNonRoot"), "must be true (here or in the pod's securityContext)");
            }
            if ctx["runAsUser"] == 0 {
                fail(field("runAsUser"), "must not be 0");
            }
            let inherits_seccomp = seccomp_ok(pod) && ctx["seccompProfile"].is_null();
            if !(seccomp_ok(ctx) || inherits_seccomp) {
                fail(field("seccompProfile.type"), "must be RuntimeDefault or Localhost (here or in the pod)");
            }
            let caps = &ctx["capabilities"];
            if !caps["drop"].as_array().is_some_and(|d| d.iter().any(|c| c == "ALL")) {
                fail(field("capabilities.drop"), "must hold ALL");
            }
            if caps["add"].as_array().is_some_and(|a| a.iter().any(|c| c != "NET_BIND_SERVICE")) {
                fail(field("capabilities.add"), "may hold NET_BIND_SERVICE only");
            }
            if ctx["readOnlyRootFilesystem"] != true {
                fail(field("readOnlyRootFilesystem"), "must be true (these manifests write only to an emptyDir)");
            }
            for (i, p) in c["ports"].as_array().into_iter().flatten().enumerate() {
                if p["hostPort"].as_u64().is_some_and(|h| h != 0) {
                    fail(
                        format!("{at}.{list}[{}].ports[{i}].hostPort", c["name"].as_str().unwrap_or("?")),
                        "must be unset",
                    );
                }
            }
        }
    }
    out
}

/// The rendered workloads of both golden cases.
fn workloads() -> Vec<Value> {
    let docs: Vec<Value> = ["closed", "open"].iter().flat_map(|case| documents(&golden(case))).collect();
    docs.into_iter().filter(|d| pod_spec(d).is_some()).collect()
}

#[test]
fn every_rendered_pod_meets_the_restricted_standard() {
    let workloads = workloads();
    assert_eq!(workloads.len(), 4, "a Deployment and a Job per case");
    for doc in &workloads {
        assert_eq!(violations(doc), Vec::<String>::new());
        let (spec, _) = pod_spec(doc).unwrap();
        assert_eq!(spec["securityContext"]["runAsUser"], RUN_AS_USER);
        assert_eq!(spec["securityContext"]["runAsGroup"], RUN_AS_USER);
    }
    // The server writes its database to an emptyDir at its TMPDIR; `watch`
    // shares its process namespace.
    let deployment = workloads.iter().find(|d| d["kind"] == "Deployment").unwrap();
    let spec = &deployment["spec"]["template"]["spec"];
    assert_eq!(spec["shareProcessNamespace"], true);
    let server = &spec["containers"][0];
    assert!(server["env"].as_array().unwrap().contains(&json!({"name": "TMPDIR", "value": "/tmp"})), "{server}");
    assert_eq!(server["volumeMounts"], json!([{"name": "tmp", "mountPath": "/tmp"}]));
    assert_eq!(spec["volumes"], json!([{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]));
}

#[test]
fn the_checker_names_the_field_each_broken_rule_is_on() {
    let deployment = workloads().into_iter().find(|d| d["kind"] == "Deployment").unwrap();
    let server = "Deployment/bench-server: spec.template.spec.containers[server].securityContext";
    type Edit = fn(&mut Value);
    let cases: Vec<(Edit, String)> = vec![
        (|s| s["securityContext"]["runAsNonRoot"] = Value::Null, format!("{server}.runAsNonRoot must be true")),
        (
            |s| s["securityContext"]["runAsUser"] = json!(0),
            "spec.template.spec.securityContext.runAsUser must not be 0".into(),
        ),
        (
            |s| s["securityContext"]["seccompProfile"]["type"] = json!("Unconfined"),
            format!("{server}.seccompProfile.type must be RuntimeDefault"),
        ),
        (
            |s| s["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = json!(true),
            format!("{server}.allowPrivilegeEscalation must be false"),
        ),
        (
            |s| s["containers"][0]["securityContext"]["capabilities"]["drop"] = json!([]),
            format!("{server}.capabilities.drop must hold ALL"),
        ),
        (
            |s| s["containers"][0]["securityContext"]["capabilities"]["add"] = json!(["SYS_ADMIN"]),
            format!("{server}.capabilities.add may hold NET_BIND_SERVICE only"),
        ),
        (
            |s| s["containers"][0]["securityContext"]["privileged"] = json!(true),
            format!("{server}.privileged must be unset or false"),
        ),
        (
            |s| s["containers"][0]["securityContext"]["readOnlyRootFilesystem"] = json!(false),
            format!("{server}.readOnlyRootFilesystem must be true"),
        ),
        (|s| s["hostPID"] = json!(true), "spec.template.spec.hostPID must be unset or false".into()),
        (
            |s| s["volumes"][0] = json!({"name": "tmp", "hostPath": {"path": "/tmp"}}),
            "spec.template.spec.volumes[0] is of a type the standard refuses".into(),
        ),
        (
            |s| s["containers"][0]["ports"][0]["hostPort"] = json!(8080),
            "spec.template.spec.containers[server].ports[0].hostPort must be unset".into(),
        ),
    ];
    for (edit, expected) in cases {
        let mut doc = deployment.clone();
        edit(&mut doc["spec"]["template"]["spec"]);
        let found = violations(&doc);
        assert!(found.iter().any(|v| v.contains(&expected)), "expected {expected}, found {found:?}");
    }
}

#[test]
fn every_image_runs_as_the_user_the_manifests_name() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("common").join("Dockerfile")).unwrap();
    let last_stage = text.rsplit("\nFROM ").next().unwrap();
    let users: Vec<&str> = last_stage.lines().filter(|l| l.starts_with("USER ")).collect();
    assert_eq!(users, [format!("USER {RUN_AS_USER}:{RUN_AS_USER}")], "the final stage's user, of every image");
}

/// `setpriv` arguments that drop to the manifests' user with no capability
/// and no way to gain one, as the restricted pod runs its containers.
fn unprivileged() -> Vec<String> {
    let id = RUN_AS_USER.to_string();
    ["--reuid", &id, "--regid", &id, "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

#[test]
fn watch_reads_the_servers_cpu_as_the_same_unprivileged_user() {
    let root = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata("/proc/self").unwrap()) == 0;
    if !root || Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: needs root and setpriv (util-linux) to run the processes as user {RUN_AS_USER}");
        return;
    }
    let _exclusive = util::exclusive();
    let dir = util::temp_dir("pod-security-watch");
    std::os::unix::fs::chown(&dir, Some(RUN_AS_USER as u32), Some(RUN_AS_USER as u32)).unwrap();
    // The server as the pod runs it: the manifests' user, its TMPDIR its own.
    let mut server = Guarded::spawn(
        Command::new("setpriv")
            .args(unprivileged())
            .arg(util::server_binary("axum"))
            .args(["--addr", "127.0.0.1:0", "--workers", "1"])
            .env("TMPDIR", &dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(server.0.stdout.take().unwrap()), &mut line).unwrap();
    let addr = common::process::parse_listening_line(&line).expect("listening line");
    let json = dir.join("watch.json");
    let mut watch = Guarded::spawn(
        Command::new("setpriv")
            .args(unprivileged())
            .arg(CLIENT)
            .args(["watch", "--pid", &server.0.id().to_string()])
            .args(["--warmup", "0s", "--duration", "2s", "--window", "500ms"])
            .arg("--json")
            .arg(&json)
            .stdout(Stdio::null())
            .stderr(Stdio::piped()),
    );
    // Load it meanwhile, so that there is CPU to see.
    let load = util::output_within(
        Command::new(CLIENT).args(["load", &format!("http://{addr}/plaintext"), "--duration", "2s", "--warmup", "0s"]),
        Duration::from_secs(30),
    );
    assert!(load.status.success(), "{}", String::from_utf8_lossy(&load.stdout));
    let status = watch.0.wait().unwrap();
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut watch.0.stderr.take().unwrap(), &mut err);
    assert!(status.success(), "watch as user {RUN_AS_USER}: {err}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cpu = report["server_cpu_percent"].as_f64().unwrap_or(0.0);
    assert!(cpu > 10.0, "the server's CPU read from /proc without privileges: {report}");
    let _ = std::fs::remove_dir_all(&dir);
}
