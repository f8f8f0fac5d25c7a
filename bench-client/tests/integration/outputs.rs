//! Nothing measured is lost to a place it cannot be written: every output
//! flag is checked when the plan is made (a missing folder made, as
//! `mkdir -p`; a place that cannot be written refused in one line, exit 2,
//! before any request), and a file that fails at the end all the same is
//! kept in the system's temporary folder, the error naming where (exit 1).
//! Tests run as root, whom permissions do not stop: an unwritable place is
//! one under a regular file.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{self, CLIENT};

/// `bench-client load URL` for `duration` on one connection, with `extra`.
fn load(url: &str, duration: &str, extra: &[&str]) -> Command {
    let mut command = Command::new(CLIENT);
    command.args(["load", url, "-c", "1", "--warmup", "0s", "-d", duration]).args(extra);
    command
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

#[test]
fn json_into_a_missing_nested_folder_makes_it_and_writes_the_figures() {
    let _exclusive = util::exclusive();
    let dir = util::temp_dir("outputs-nested");
    let (url, _) = util::counted_server();
    let path = dir.join("no/such/dir/run.json");
    let out = util::output_within(&mut load(&url, "1s", &["--json", path.to_str().unwrap()]), Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let report = json(&path);
    assert!(report["successful"].as_u64().unwrap() > 0, "{report}");
    let names: Vec<_> = std::fs::read_dir(dir.join("no/such/dir")).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(names, ["run.json"], "no temporary file left");
}

#[test]
fn an_output_place_under_a_regular_file_is_refused_in_one_line_before_any_request() {
    let dir = util::temp_dir("outputs-unwritable");
    let (url, requests) = util::counted_server();
    let file = dir.join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let under = file.join("sub/run.json");
    let under = under.to_str().unwrap();
    let folder = file.join("sub");
    let expected = |flag: &str, path: &str| {
        format!("error: {flag} {path}: cannot create the folder {}: Not a directory (os error 20)", folder.display())
    };
    let started = Instant::now();
    let out = util::output_within(&mut load(&url, "1s", &["--json", under]), Duration::from_secs(30));
    let took = started.elapsed();
    assert_eq!(util::one_line_exit(&out, 2).trim_end(), expected("--json", under));
    assert!(took < Duration::from_secs(1), "refused before the 1 s load: {took:?}");
    assert_eq!(requests.load(Ordering::Relaxed), 0, "not even preflight");

    // Every other subcommand's output flag, refused alike before it runs.
    let pid = std::process::id().to_string();
    let folder_flag = folder.to_str().unwrap();
    for (argv, flag, path) in [
        (vec!["watch", "--pid", &pid, "-d", "1s", "--warmup", "0s", "--json", under], "--json", under),
        (vec!["merge", "x.json", "--json", under], "--json", under),
        (vec!["suite", "--no-build", "--out", folder_flag], "--out", folder_flag),
        (vec!["suite", "--no-build", "--junit", under], "--junit", under),
        (vec!["k8s", "render", "--framework", "axum", "--clients", "2", "--connections", "8"], "--out", folder_flag),
        (vec!["count", "--no-build", "--out", folder_flag], "--out", folder_flag),
    ] {
        let mut command = Command::new(CLIENT);
        command.current_dir(&dir).args(&argv);
        if argv[0] == "k8s" {
            command.args(["--image-server", "r.example/s:1", "--image-client", "r.example/c:1", "--out", folder_flag]);
        }
        let out = util::output_within(&mut command, Duration::from_secs(30));
        let line = util::one_line_exit(&out, 2);
        assert_eq!(line.trim_end(), expected(flag, path), "{argv:?}");
    }
}

#[test]
fn a_results_file_that_fails_at_the_end_is_kept_elsewhere_and_named() {
    let _exclusive = util::exclusive();
    let dir = util::temp_dir("outputs-late");
    let (url, _) = util::counted_server();
    let folder = dir.join("run");
    let path = folder.join("run.json");
    // The folder, there before the run and checked when the plan is made,
    // replaced by a file during the 2 s of load.
    std::fs::create_dir_all(&folder).unwrap();
    let saboteur = {
        let folder = folder.clone();
        std::thread::spawn(move || {
            let end = Instant::now() + Duration::from_secs(10);
            while !folder.is_dir() && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(10));
            }
            std::thread::sleep(Duration::from_millis(500));
            std::fs::remove_dir_all(&folder).unwrap();
            std::fs::write(&folder, "in the way").unwrap();
        })
    };
    let mut command = load(&url, "2s", &["--json", path.to_str().unwrap()]);
    let out = util::output_within(&mut command, Duration::from_secs(30));
    saboteur.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap();
    let prefix = format!("error: cannot write {} (File exists (os error 17)); kept in ", path.display());
    let kept = last.strip_prefix(&prefix).and_then(|l| l.strip_suffix(" instead")).unwrap_or_else(|| panic!("{last}"));
    let kept = Path::new(kept);
    assert!(kept.starts_with(std::env::temp_dir()) && kept.to_string_lossy().ends_with("-run.json"), "{last}");
    let report = json(kept);
    assert!(report["successful"].as_u64().unwrap() > 0, "the figures, kept: {report}");
    assert_eq!(report["windows"].as_array().unwrap().len(), 2, "{report}");
    std::fs::remove_file(kept).unwrap();
}
