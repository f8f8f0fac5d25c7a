//! A suite asked to profile when perf cannot record: no perf on `PATH`, or
//! a stand-in perf that refuses to attach (`-p`) to any process or only to
//! the servers. It runs on, says so once quoting perf's own reason, and
//! claims no run profiled (`meta.profiler`, `runs[].profiled`, report).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util;

/// Writes a stand-in `perf` into `dir`: it refuses `-p PID` with an
/// `Error:` paragraph, as perf does under a restricted ptrace scope (all
/// pids when `refuse_all`, else all but its parent's, so that the client's
/// probe of itself passes and the servers are refused); otherwise it
/// creates its `-o` file and records until SIGINT.
fn stand_in_perf(dir: &Path, refuse_all: bool) {
    let sleep = ["/bin/sleep", "/usr/bin/sleep"].into_iter().find(|p| Path::new(p).is_file()).expect("a sleep binary");
    let script = format!(
        "#!/bin/sh\n\
         pid=; out=; prev=\n\
         for a in \"$@\"; do\n  [ \"$prev\" = -p ] && pid=$a\n  [ \"$prev\" = -o ] && out=$a\n  prev=$a\ndone\n\
         if [ -n \"$pid\" ] && {{ {refuse} || [ \"$pid\" != \"$PPID\" ]; }}; then\n\
         \x20 printf 'Error:\\nstand-in perf may not attach to pid %s:\\nptrace scope\\n\\nHint: none.\\n' \"$pid\" >&2\n\
         \x20 exit 255\nfi\n\
         [ -n \"$out\" ] && : > \"$out\"\n\
         exec {sleep} 600\n",
        refuse = if refuse_all { "true" } else { "false" },
    );
    let path = dir.join("perf");
    std::fs::write(&path, script).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&path, permissions).unwrap();
}

/// Runs a one-round profiled suite of axum's payload scenario with `PATH`
/// set to `path` only; returns its stderr and its results folder.
fn profiled_suite(path: &Path, out: &Path) -> String {
    let output = util::output_within(
        util::dev_suite()
            .args(["--profiler", "perf", "--frameworks", "axum"])
            .args([
                "--scenarios",
                "payload",
                "--rounds",
                "1",
                "--duration",
                "1s",
                "--warmup",
                "0s",
                "--connections",
                "4",
            ])
            .args(util::split_cpus())
            .arg("--out")
            .arg(out)
            .env("PATH", path),
        Duration::from_secs(300),
    );
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{}\n{stderr}", output.status);
    stderr
}

/// No run profiled: `meta.profiler` empty, every run `profiled: false`, no
/// flame graph, and the report claims no perf.
fn assert_nothing_profiled(out: &Path) {
    let results = bench_client::results::read(&out.join("latest")).unwrap();
    assert_eq!(results.meta.profiler, None, "perf recorded no run");
    assert_eq!(results.runs.len(), 4, "floor + per_request, preserialized, cached");
    assert!(results.runs.iter().all(|r| !r.figures.profiled));
    assert!(!out.join("latest/flamegraphs").exists());
    let report = std::fs::read_to_string(out.join("latest/report.md")).unwrap();
    assert!(!report.contains("perf attached") && !report.contains("## Flame graphs"), "{report}");
}

#[test]
fn suite_without_perf_on_path_runs_on_and_says_so() {
    let _shared = util::shared();
    let empty_path = util::temp_dir("no-perf");
    let out = util::temp_dir("bench-noperf");
    let stderr = profiled_suite(&empty_path, &out);
    assert_eq!(
        stderr.matches("running without the profiler: perf is not installed").count(),
        1,
        "said once:\n{stderr}"
    );
    assert_nothing_profiled(&out);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&empty_path);
}

/// A profiled suite with the stand-in perf (see [`stand_in_perf`]) in a
/// folder named `name`: that folder, the output folder, and what the suite
/// said.
fn with_stand_in(name: &str, refuse_all: bool) -> (PathBuf, PathBuf, String) {
    let bin = util::temp_dir(name);
    stand_in_perf(&bin, refuse_all);
    let out = util::temp_dir(&format!("bench-{name}"));
    let stderr = profiled_suite(&bin, &out);
    (bin, out, stderr)
}

#[test]
fn suite_with_a_perf_that_may_not_attach_says_why_once() {
    let _shared = util::shared();
    let (bin, out, stderr) = with_stand_in("refusing-perf", true);
    let reason = "stand-in perf may not attach to pid";
    assert_eq!(stderr.matches(reason).count(), 1, "said once:\n{stderr}");
    let said = stderr.lines().find(|l| l.contains(reason)).unwrap();
    assert!(said.starts_with("note: running without the profiler: perf may not record here"), "{said}");
    assert!(said.contains("ptrace scope"), "perf's whole paragraph is quoted: {said}");
    assert!(!said.contains("Hint"), "only its first paragraph: {said}");
    assert!(!stderr.contains("wrote nothing"), "{stderr}");
    assert_nothing_profiled(&out);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&bin);
}

#[test]
fn suite_whose_perf_refuses_the_servers_stops_profiling_at_the_first_run() {
    let _shared = util::shared();
    let (bin, out, stderr) = with_stand_in("server-refusing-perf", false);
    assert!(stderr.contains("profiling each server with perf record"), "the probe passed:\n{stderr}");
    let reason = "stand-in perf may not attach to pid";
    assert_eq!(stderr.matches(reason).count(), 1, "said once, not once per run:\n{stderr}");
    let said = stderr.lines().find(|l| l.contains(reason)).unwrap();
    assert!(said.contains("warning: profiling stopped at axum round 1/1 floor/plaintext"), "{said}");
    assert!(said.contains("perf record failed (exit status: 255)"), "{said}");
    assert_nothing_profiled(&out);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&bin);
}
