//! Helpers shared by the integration tests: the client and server binaries,
//! the CPUs a test may pin to, temporary folders, and a lock for tests that
//! measure or pin (tests of different modules run in parallel in this one
//! binary).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

use bench_client::model::Framework;
use bench_client::sys::{CpuList, affinity_of};

/// The `bench-client` binary Cargo built for these tests.
pub(crate) const CLIENT: &str = env!("CARGO_BIN_EXE_bench-client");

/// Every framework's name, in order.
pub(crate) const FRAMEWORKS: [&str; 3] = [Framework::ALL[0].name(), Framework::ALL[1].name(), Framework::ALL[2].name()];

/// `target/<profile>/` of this test binary, where `cargo test --workspace`
/// also builds the server binaries (each server crate has integration tests,
/// so Cargo builds its binary).
pub(crate) fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps").to_path_buf()
}

/// The binary of `server-<name>`, asserting it was built.
pub(crate) fn server_binary(name: &str) -> PathBuf {
    let path = bin_dir().join(format!("server-{name}"));
    assert!(
        path.is_file(),
        "{} missing: run `cargo test --workspace` (or `make test`), which builds it",
        path.display()
    );
    path
}

/// Every CPU this process may use, as a list.
pub(crate) fn all_cpus() -> CpuList {
    let cpus = affinity_of(0).expect("own affinity");
    cpus.iter().map(ToString::to_string).collect::<Vec<_>>().join(",").parse().expect("cpu list")
}

/// A fresh folder `name-<pid>` under Cargo's temporary folder for tests.
pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary folder");
    dir
}

static EXCLUSIVE: Mutex<()> = Mutex::new(());

/// Held by tests that run a load, pin CPUs or time a server, so that no two
/// of them share the machine's two cores; a panicking holder does not
/// poison it for the others.
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    EXCLUSIVE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A child process killed and reaped when dropped, so a failed assertion
/// leaves nothing running; its stdout and stderr go to files.
pub(crate) struct Reaped {
    child: std::process::Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Reaped {
    /// Starts `command` with its output in `<out>.stdout` and `<out>.stderr`.
    pub(crate) fn spawn(command: &mut std::process::Command, out: &std::path::Path) -> Self {
        let (stdout, stderr) = (out.with_extension("stdout"), out.with_extension("stderr"));
        let child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::fs::File::create(&stdout).expect("stdout file"))
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("start the child");
        Self { child, stdout, stderr }
    }

    /// The child's pid.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child to exit, at most `deadline` (then it is killed
    /// and the test fails), and returns its output.
    pub(crate) fn output(mut self, deadline: std::time::Duration) -> std::process::Output {
        let until = std::time::Instant::now() + deadline;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for the child") {
                break status;
            }
            assert!(std::time::Instant::now() < until, "still running after {deadline:?}: killed");
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        let read = |p: &PathBuf| std::fs::read(p).unwrap_or_default();
        std::process::Output { status, stdout: read(&self.stdout), stderr: read(&self.stderr) }
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `command` to its end, at most `deadline`.
pub(crate) fn output_within(
    command: &mut std::process::Command,
    out: &std::path::Path,
    deadline: std::time::Duration,
) -> std::process::Output {
    Reaped::spawn(command, out).output(deadline)
}
