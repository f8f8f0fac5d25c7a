//! Ctrl-C during `make bench`: SIGINT to the whole process group, as a
//! terminal sends it, once the suite is measuring. The client writes the
//! partial results and stops its server; make then dies of SIGINT itself
//! (GNU make re-raises it once its recipe ended), which a shell reports as
//! 130 and which stops a calling script, as Ctrl-C should.
//!
//! `make bench NO_BUILD=1 CLIENT=…` runs this test's own client on the dev
//! servers `cargo test --workspace` built: no cargo runs inside `cargo test`.

use crate::util;
use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// Whether `pid` is a live (not zombie) process named `name`.
fn alive(pid: u32, name: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    // "pid (comm) state …"; comm is cut to 15 bytes.
    let Some((comm, rest)) = stat.split_once('(').and_then(|(_, r)| r.rsplit_once(')')) else { return false };
    name.starts_with(comm) && !rest.trim_start().starts_with('Z')
}

#[test]
fn ctrl_c_during_make_bench_writes_partial_results_and_leaves_no_server() {
    let _exclusive = util::exclusive();
    let (server_cpu, client_cpu) = util::cpu_pair();
    let out = util::temp_dir("bench-interrupt");
    let _ = std::fs::remove_dir_all(&out);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    // make with SIGINT at its default action, as a terminal's job has it (coreutils' env): a test
    // run from a background shell inherits it ignored, and make, finding it ignored, would not
    // die of it.
    let mut make = Command::new("env");
    make.args(["--default-signal=INT", "make", "-C"])
        .arg(root)
        .args(["bench", "NO_BUILD=1", "PROFILE=dev", "FRAMEWORKS=axum", "DURATION=1s", "WARMUP=250ms"])
        .args(["ROUNDS=2", "CONNECTIONS=4"])
        .arg(format!("SERVER_CPUS={server_cpu}"))
        .arg(format!("CLIENT_CPUS={client_cpu}"))
        .arg(format!("CLIENT={}", env!("CARGO_BIN_EXE_bench-client")))
        .arg(format!("OUT={}", out.display()))
        .env("CARGO_TARGET_DIR", util::bin_dir().parent().unwrap())
        // Not a sub-make of a `make test` that may be running this test.
        .env_remove("MAKEFLAGS")
        .env_remove("MAKELEVEL")
        .env_remove("MFLAGS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        // Its own group, as a terminal's foreground job: the signal reaches make and the client.
        .process_group(0);

    let mut child = make.spawn().expect("make runs");
    let group = Pid::from_raw(i32::try_from(child.id()).unwrap());
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });

    // The server's pid, then the first measured run.
    let mut seen = Vec::new();
    let mut server_pid = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let line = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())).unwrap_or_else(|_| {
            let _ = killpg(group, Signal::SIGKILL);
            panic!("the suite did not start measuring: {seen:#?}")
        });
        if let Some(rest) = line.trim_start().strip_prefix("server-axum pid ") {
            server_pid = rest.split_whitespace().next().and_then(|p| p.parse::<u32>().ok());
        }
        let measured = line.contains("round 1/2") && line.contains("successful");
        seen.push(line);
        if measured {
            break;
        }
    }
    let server_pid = server_pid.unwrap_or_else(|| panic!("the suite names its server's pid: {seen:#?}"));
    assert!(alive(server_pid, "server-axum"), "the server runs while measuring");

    killpg(group, Signal::SIGINT).unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = killpg(group, Signal::SIGKILL);
            panic!("make still runs 30 s after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    reader.join().unwrap();
    seen.extend(rx.try_iter());

    assert_eq!(status.signal(), Some(Signal::SIGINT as i32), "make dies of SIGINT, got {status}: {seen:#?}");
    assert!(seen.iter().any(|l| l == "interrupted: partial results written"), "{seen:#?}");
    let results = bench_client::results::read(&out.join("latest")).expect("partial results.json");
    assert!(!results.complete, "an interrupted suite is not complete");
    assert!(results.runs.iter().any(|r| r.figures.successful > 0), "the measured run is kept: {seen:#?}");
    assert!(!alive(server_pid, "server-axum"), "server-axum (pid {server_pid}) outlived the suite");
    let _ = std::fs::remove_dir_all(&out);
}
