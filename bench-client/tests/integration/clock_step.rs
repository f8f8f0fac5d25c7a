//! The realtime clock stepped under a client waiting at its start barrier
//! (`--start-at`), with libfaketime: the client refuses in one line, exit 2,
//! and measures nothing, where it used to start at once, out of step with
//! the other clients. libfaketime is required (`.ci/run` installs it).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bench_client::measure::unix_ms_now;

use crate::util::{self, CLIENT};

/// libfaketime's shared object, where Debian and others install it.
fn libfaketime() -> PathBuf {
    let mut places = vec![PathBuf::from("/usr/lib/faketime"), PathBuf::from("/usr/local/lib/faketime")];
    if let Ok(lib) = std::fs::read_dir("/usr/lib") {
        places.extend(lib.flatten().map(|e| e.path().join("faketime")));
    }
    places.iter().map(|p| p.join("libfaketime.so.1")).find(|p| p.is_file()).unwrap_or_else(|| {
        panic!("libfaketime.so.1 not found under {places:?}: install it (apt-get install faketime; .ci/run does)")
    })
}

/// `bench-client args…` under libfaketime, its realtime clock offset by what
/// `offset` holds (re-read at every call), its monotonic clock real.
fn faked(offset: &Path, args: &[String]) -> Command {
    let mut command = Command::new(CLIENT);
    command
        .args(args)
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME_TIMESTAMP_FILE", offset)
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
        .env("FAKETIME_NO_CACHE", "1");
    command
}

#[test]
fn a_clock_step_while_waiting_at_the_barrier_is_refused_in_one_line_and_nothing_is_measured() {
    let _quiet = util::quiet();
    let dir = util::temp_dir("clock-step");
    let (url, requests) = util::counted_server();
    let json = dir.join("stepped.json");
    let watch_json = dir.join("watch.json");
    let pid = std::process::id().to_string();
    for name in ["load", "watch"] {
        // The barrier 4 s ahead; the clock steps 30 s forward 1.5 s into the wait.
        let at_ms = unix_ms_now() + 4_000;
        let at = format!("{}.{:03}", at_ms / 1000, at_ms % 1000);
        let args: Vec<String> = match name {
            "load" => vec!["load", &url, "-c", "4", "--json", json.to_str().unwrap()],
            _ => vec!["watch", "--pid", &pid, "--json", watch_json.to_str().unwrap()],
        }
        .into_iter()
        .chain(["--start-at", &at, "--warmup", "1s", "-d", "2s"])
        .map(str::to_owned)
        .collect();
        let offset = dir.join(format!("{name}.offset"));
        std::fs::write(&offset, "+0\n").unwrap();
        let stepper = {
            let offset = offset.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(1_500));
                std::fs::write(offset, "+30\n").unwrap();
            })
        };
        let out = util::output_within(&mut faked(&offset, &args), Duration::from_secs(30));
        stepper.join().unwrap();
        let err = util::one_line_exit(&out, 2);
        assert!(
            err.starts_with("error: the realtime clock stepped forward by 30.0")
                && err.contains("while waiting for the start barrier")
                && err.trim_end().ends_with("nothing measured"),
            "{name}: {err}"
        );
    }
    assert!(!json.exists() && !watch_json.exists(), "no results file");
    let preflight = requests.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(requests.load(Ordering::Relaxed), preflight, "no load after the refusal");
    assert!(preflight < 20, "preflight's requests only, no load: {preflight}");
}
