//! A server process under the suite's control: started pinned, its address
//! read from its first line, stopped with SIGTERM then SIGKILL, and never
//! left behind (also stopped on drop, so on errors and Ctrl-C), nor its
//! temporary files: it runs with `TMPDIR` set to a directory of its own,
//! removed once it has exited (a server killed with SIGKILL cannot remove
//! its fortunes database itself).

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use common::process::{parse_listening_line, parse_tls_listening_line};

use super::affinity::CpuList;
use super::proc::listener_in_group;

/// How long a server may take to print its listening line.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server may take to exit after SIGTERM before SIGKILL.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running server child process.
#[derive(Debug)]
pub struct ServerProcess {
    name: String,
    child: Option<Child>,
    /// The server's `TMPDIR` (`bench-server-XXXXXX` under ours), removed
    /// after the child is reaped.
    scratch: Option<tempfile::TempDir>,
    /// The address it listens on, from its listening line (`common::process`).
    pub addr: SocketAddr,
    /// Started with `--tls-addr`: the address of its HTTPS listener, from
    /// its second listening line.
    pub tls_addr: Option<SocketAddr>,
    /// Everything it wrote on stderr, once its stderr closed.
    stderr: Option<mpsc::Receiver<String>>,
    /// A shell command's process that listens (found once it does), whose
    /// CPU is the server's; `None`: the child itself.
    listener: Option<u32>,
    /// Started by [`ServerProcess::start_shell`].
    shell: bool,
}

/// The lines a server writes on stdout, as they are written (`None` at the end).
type Lines = mpsc::Receiver<Option<std::io::Result<String>>>;

impl ServerProcess {
    /// Starts `binary args…` pinned to `cpus`, with `TMPDIR` a new directory
    /// of its own, and waits for its listening line.
    ///
    /// # Errors
    /// When the binary is missing, the temporary directory cannot be made,
    /// the binary fails to start, exits or prints anything else first (its
    /// stderr is quoted), or is silent for 30 s.
    pub fn start(binary: &Path, args: &[String], cpus: &CpuList) -> anyhow::Result<Self> {
        let name =
            binary.file_name().map_or_else(|| binary.display().to_string(), |n| n.to_string_lossy().into_owned());
        Self::check_binary(binary)?;
        let mut command = Command::new(binary);
        command.args(args);
        let (mut server, lines) = Self::spawn(name, command, cpus)?;
        let next_line = || match lines.recv_timeout(START_TIMEOUT) {
            Ok(Some(Ok(line))) => Some(line),
            _ => None,
        };
        // Its first listener: HTTP, or HTTPS with `--tls`.
        let first =
            next_line().and_then(|line| parse_listening_line(&line).or_else(|| parse_tls_listening_line(&line)));
        let Some(addr) = first else { bail!("{}", server.failed_to_start()) };
        server.addr = addr;
        if args.iter().any(|a| a == "--tls-addr") {
            let Some(tls_addr) = next_line().and_then(|line| parse_tls_listening_line(&line)) else {
                bail!("{}", server.failed_to_start())
            };
            server.tls_addr = Some(tls_addr);
        }
        Ok(server)
    }

    /// Starts `sh -c SHELL_COMMAND` pinned to `cpus` as [`ServerProcess::start`]
    /// does, named `name`; it is to listen on `addr` (which the caller wrote
    /// into the command): see [`ServerProcess::wait_listening`]. Stopping it
    /// stops its whole process group, whatever the shell started.
    ///
    /// # Errors
    /// When the temporary directory cannot be made or `sh` cannot start.
    pub fn start_shell(name: &str, shell_command: &str, addr: SocketAddr, cpus: &CpuList) -> anyhow::Result<Self> {
        let mut command = Command::new("sh");
        command.args(["-c", shell_command]);
        let (mut server, _) = Self::spawn(name.to_owned(), command, cpus)?;
        server.addr = addr;
        server.shell = true;
        Ok(server)
    }

    /// Waits until its address accepts a connection; gives up within 50 ms
    /// once `stop` is set.
    ///
    /// # Errors
    /// When it exits first (its first line on stderr quoted), has not
    /// within `timeout`, or `stop` was set (it is stopped then).
    pub fn wait_listening(&mut self, timeout: Duration, stop: &AtomicBool) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if stop.load(Ordering::Relaxed) {
                self.stop();
                bail!("{}: interrupted while waiting for it to listen", self.name);
            }
            if TcpStream::connect_timeout(&self.addr, Duration::from_millis(100)).is_ok() {
                self.listener = listener_in_group(self.addr.port(), self.child.as_ref().map_or(0, Child::id));
                return Ok(());
            }
            if self.has_exited() {
                bail!("{}", self.failed_to_start());
            }
            if Instant::now() >= deadline {
                let addr = self.addr;
                self.stop();
                bail!("{} did not listen on {addr} within {}", self.name, humantime::format_duration(timeout));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Spawns `command` pinned to `cpus` in its own process group, with
    /// `TMPDIR` a new directory of its own; its stdout is drained (the
    /// first line sent on the returned channel), its stderr kept for
    /// [`ServerProcess::failed_to_start`].
    fn spawn(name: String, mut command: Command, cpus: &CpuList) -> anyhow::Result<(Self, Lines)> {
        let scratch = tempfile::Builder::new()
            .prefix("bench-server-")
            .tempdir()
            .with_context(|| format!("cannot make a temporary directory for {name}"))?;
        command.env("TMPDIR", scratch.path());
        // Its own process group: a terminal's Ctrl-C reaches the client only,
        // which records what it measured and then stops the server itself.
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut child = cpus.spawn_pinned(&mut command).with_context(|| format!("cannot start {name}"))?;
        let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{name}: no pipes to read its output");
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            // Every line, until the reader is gone; then drained, so the
            // server never blocks on a full pipe.
            let mut lines = BufReader::new(stdout).lines();
            for line in lines.by_ref() {
                if tx.send(Some(line)).is_err() {
                    break;
                }
            }
            let _ = tx.send(None);
            for _ in lines {}
        });
        let (err_tx, err_rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            let _ = err_tx.send(text);
        });
        let addr = SocketAddr::from(([127, 0, 0, 1], 0));
        Ok((
            Self {
                name,
                child: Some(child),
                scratch: Some(scratch),
                addr,
                tls_addr: None,
                stderr: Some(err_rx),
                listener: None,
                shell: false,
            },
            rx,
        ))
    }

    /// Stops it and says why it did not start: its exit status and the first
    /// line it wrote on stderr.
    fn failed_to_start(&mut self) -> String {
        let status = self.stop();
        let stderr = self.stderr.take().and_then(|rx| rx.recv_timeout(Duration::from_secs(1)).ok()).unwrap_or_default();
        let reason = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        format!("{} did not start ({}): {reason}", self.name, describe(status))
    }

    /// Checks that `binary` exists.
    ///
    /// # Errors
    /// A one-line error naming the missing file.
    pub fn check_binary(binary: &Path) -> anyhow::Result<()> {
        if !binary.is_file() {
            bail!("server binary {} is missing (build it, or drop --no-build)", binary.display());
        }
        Ok(())
    }

    /// Whether the process that listens is known: always for a server of
    /// its own, for a shell command when a process of its group holds the
    /// socket (its CPU is then what the figures sample).
    pub fn serves_from_its_group(&self) -> bool {
        !self.shell || self.listener.is_some()
    }

    /// The pid of the process that serves: the child, or for a shell
    /// command the process of its group that listens (0 once stopped).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, |child| self.listener.unwrap_or(child.id()))
    }

    /// Its binary name, e.g. `server-axum`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it has exited (crashed) while it should be running.
    pub fn has_exited(&mut self) -> bool {
        self.child.as_mut().is_none_or(|c| matches!(c.try_wait(), Ok(Some(_)) | Err(_)))
    }

    /// Stops it: SIGTERM, then SIGKILL after [`STOP_GRACE`]; waits for it,
    /// then removes its `TMPDIR` with whatever it left there. Idempotent;
    /// returns its exit status when it was still ours to reap.
    pub fn stop(&mut self) -> Option<ExitStatus> {
        let status = self.reap();
        // Only after the child is gone: nothing writes there any more.
        if let Some(scratch) = self.scratch.take() {
            let _ = scratch.close();
        }
        status
    }

    fn reap(&mut self) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        // The whole process group (a shell's children too, `start_shell`):
        // SIGTERM, the grace for the leader and then for the rest of the
        // group, and SIGKILL to whatever is left.
        let group = Pid::from_raw(i32::try_from(child.id()).ok()?);
        let deadline = Instant::now() + STOP_GRACE;
        let status = match child.try_wait() {
            Ok(Some(status)) => Some(status),
            _ => {
                let _ = killpg(group, Signal::SIGTERM);
                loop {
                    if let Ok(Some(status)) = child.try_wait() {
                        break Some(status);
                    }
                    if Instant::now() >= deadline {
                        let _ = child.kill();
                        break child.wait().ok();
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        };
        // A member of the group still running (a forking shell's server); an exited one that
        // nobody has reaped yet (a zombie) is gone for what matters.
        while killpg(group, None).is_ok()
            && super::proc::group_has_live_member(group.as_raw().unsigned_abs())
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = killpg(group, Signal::SIGKILL);
        status
    }
}

fn describe(status: Option<ExitStatus>) -> String {
    match status {
        Some(s) => s.to_string(),
        None => "status unknown".to_owned(),
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}
