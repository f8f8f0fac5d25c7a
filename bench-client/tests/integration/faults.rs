//! Faults a real benchmark run meets, injected into real server processes:
//! a server killed in the middle of a window, a server stalled and resumed,
//! and the suite going on when one framework's server dies. Nothing hangs,
//! nothing is lost, nothing is counted as a success that was not one.

use crate::util;
use crate::util::CLIENT;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bench_client::sys::ServerProcess;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;

fn out_dir(name: &str) -> PathBuf {
    util::temp_dir(&format!("faults-{name}"))
}

/// `bench-client load` on `server`'s /plaintext with 1 s windows, started now.
fn load(server: &ServerProcess, duration: &str, json: &Path) -> Child {
    Command::new(CLIENT)
        .args(["load", &format!("http://{}/plaintext", server.addr), "--connections", "8", "--warmup", "0s"])
        .args(["--duration", duration, "--window", "1s", "--server-pid", &server.pid().to_string()])
        .arg("--json")
        .arg(json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(i32::try_from(pid).unwrap()), signal).unwrap();
}

fn windows(run: &Value) -> Vec<u64> {
    run["windows"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).collect()
}

#[test]
fn a_server_killed_mid_window_ends_the_run_with_that_window_marked_incomplete() {
    let _exclusive = util::exclusive();
    let mut server = ServerProcess::start(&util::server_binary("axum"), &[], &util::all_cpus()).unwrap();
    let json = out_dir("kill").join("run.json");
    let started = Instant::now();
    let client = load(&server, "10s", &json);
    std::thread::sleep(Duration::from_millis(1500));
    signal(server.pid(), Signal::SIGKILL);
    let out = client.wait_with_output().unwrap();
    let took = started.elapsed();
    assert!(server.has_exited());
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    // Killed in window 2 of 10: the run ends with that window, not at 10 s.
    assert!(took < Duration::from_secs(6), "took {took:?}");
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(run["complete"], false, "{run}");
    assert_eq!(run["server_lost"], true, "{run}");
    let w = windows(&run);
    assert!(w[0] > 0, "the first window measured: {w:?}");
    assert!(w[3..].iter().all(|&n| n == 0), "nothing after the server died: {w:?}");
    let failed = &run["failed"];
    let errors = failed["connect"].as_u64().unwrap() + failed["io"].as_u64().unwrap();
    assert!(errors > 0, "connect and io errors counted: {failed}");
    let n = |k: &str| run[k].as_u64().unwrap();
    assert_eq!(
        n("sent"),
        n("successful") + n("failed_total") + n("in_flight_at_deadline") + n("warmup_completed") + n("retried")
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("INCOMPLETE"));
}

#[test]
fn a_stalled_server_costs_timeouts_and_its_recovery_shows_in_the_windows() {
    let _exclusive = util::exclusive();
    let server = ServerProcess::start(&util::server_binary("axum"), &[], &util::all_cpus()).unwrap();
    let json = out_dir("stall").join("run.json");
    let client = load(&server, "8s", &json);
    std::thread::sleep(Duration::from_millis(1500));
    signal(server.pid(), Signal::SIGSTOP);
    std::thread::sleep(Duration::from_secs(3));
    signal(server.pid(), Signal::SIGCONT);
    let out = client.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "timeouts are failures: {}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(run["complete"], true, "the server never went away: {run}");
    assert!(run["failed"]["timeout"].as_u64().unwrap() > 0, "{run}");
    let w = windows(&run);
    assert_eq!(w.len(), 8);
    // A 3 s stall covers at least two whole 1 s windows, wherever the
    // client's start-up put the window boundaries: served, then nothing,
    // then served again up to the end.
    let first_empty = w.iter().position(|&n| n == 0).unwrap_or_else(|| panic!("no stalled window: {w:?}"));
    let empty = w[first_empty..].iter().take_while(|&&n| n == 0).count();
    assert!(first_empty >= 1 && empty >= 2, "served, then stalled: {w:?}");
    assert!(w[first_empty + empty..].iter().all(|&n| n > 0) && first_empty + empty < w.len(), "recovered: {w:?}");
    let failed_windows: Vec<u64> =
        run["windows_failed"].as_array().unwrap().iter().map(|w| w.as_u64().unwrap()).collect();
    assert_eq!(failed_windows.iter().sum::<u64>(), run["failed_total"].as_u64().unwrap());
}

/// Pids of this process's grandchildren named `name` (servers the suite started).
fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else { continue };
        let comm = &stat[open + 1..close];
        let ppid = stat[close + 1..].split_whitespace().nth(1).and_then(|p| p.parse::<u32>().ok());
        if comm == name && ppid == Some(parent) && bench_client::sys::process_alive(pid) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn the_suite_reports_a_killed_server_as_failed_and_goes_on() {
    let _shared = util::shared();
    let out = out_dir("suite");
    // The servers' temporary files go under TMPDIR: none may be left there,
    // not even the fortunes database of the server killed with SIGKILL.
    let tmp = out_dir("suite-tmp");
    let mut suite = util::dev_suite()
        .args(["--frameworks", "axum,actix", "--scenarios", "payload"])
        .args(["--rounds", "2", "--duration", "1s", "--warmup", "0s", "--connections", "4"])
        .args(util::split_cpus())
        .arg("--out")
        .arg(&out)
        .env("TMPDIR", &tmp)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let axum = loop {
        if let Some(&pid) = children_named(suite.id(), "server-axum").first() {
            break pid;
        }
        assert!(Instant::now() < deadline, "the suite never started server-axum");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Let it measure a run or two, then kill it.
    std::thread::sleep(Duration::from_millis(2500));
    signal(axum, Signal::SIGKILL);
    let status = suite.wait().unwrap();
    assert_eq!(status.code(), Some(1), "a failed framework makes the suite fail");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("latest/results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], false);
    let failures = results["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["framework"], "axum");
    assert!(failures[0]["error"].as_str().unwrap().contains("server-axum"), "{failures:?}");
    let runs = results["runs"].as_array().unwrap();
    let actix = runs.iter().filter(|r| r["framework"] == "actix" && r["complete"] == true).count();
    assert_eq!(actix, 2 * 4, "actix measured in full after axum failed: 2 rounds × (floor + 3 payload variants)");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}
