//! One counted run: a server process under valgrind's callgrind answers a
//! known number of requests, with instrumentation switched on only over
//! them, and the instructions it executed and the allocations it made are
//! read from callgrind's dump. What a request costs, counted rather than
//! timed: the same for the same binary and input whatever else the machine
//! does (the method of rustc-perf's `instructions:u` and of SQLite's
//! cachegrind counts; gungraun runs benchmarks under callgrind the same way).
//!
//! Callgrind is driven through `vgdb`'s monitor commands (`instrumentation
//! on` once, then `zero` and `dump` around each stretch), which valgrind's
//! gdbserver answers even while the server sleeps in `epoll_wait` (vgdb wakes
//! it with ptrace). The requests go one
//! after another on one keep-alive connection, each verified (status and
//! body byte for byte), through the engine's own [`Protocol`].

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use crate::engine::{Exchange, RouteLoad};

/// How long one request of a counted run may take (valgrind slows a server
/// 20 to 100 times).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The glibc entry points that allocate: a call to any of them is one
/// allocation (Rust's `System` allocator calls `malloc`, `calloc`,
/// `realloc` or, for large alignments, `posix_memalign`).
const ALLOCATORS: [&str; 6] = ["malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign"];

/// What one counted stretch cost the server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counted {
    /// User-space instructions executed (callgrind's `Ir`), every thread.
    pub instructions: u64,
    /// Calls into glibc's allocator (`malloc`, `calloc`, `realloc`, `posix_memalign`, …).
    pub allocations: u64,
    /// System calls the server made (callgrind's `sysCount`, every thread).
    pub system_calls: u64,
}

/// Checks that the process `pid` still runs under valgrind: a command that
/// execs another program (`env`, a shell script, a pyenv shim) leaves
/// valgrind at the exec, since valgrind does not follow it, and the server
/// then runs uncounted.
///
/// # Errors
/// One line naming the program the process runs instead.
pub fn ensure_under_valgrind(pid: u32) -> anyhow::Result<()> {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).with_context(|| format!("cannot read process {pid}"))?;
    let tool = exe.file_name().is_some_and(|n| n.to_string_lossy().ends_with("-linux"))
        && exe.components().any(|c| c.as_os_str() == "valgrind");
    ensure!(
        tool,
        "the server runs {} outside valgrind: its command execs another program (a wrapper such as env, a shell \
         script or a pyenv shim), which valgrind does not follow; give the program itself",
        exe.display()
    );
    Ok(())
}

/// A process running under one of valgrind's tools with `--vgdb=yes`,
/// reached through `vgdb`'s monitor commands.
#[derive(Debug)]
pub(super) struct Vgdb {
    pub(super) pid: u32,
    /// The folder of its `--vgdb-prefix` (and of the tool's files).
    pub(super) dir: PathBuf,
}

impl Vgdb {
    /// valgrind's arguments that let `vgdb` reach a process, its pipes in `dir`.
    pub(super) fn args(dir: &Path) -> [String; 2] {
        ["--vgdb=yes".to_owned(), format!("--vgdb-prefix={}/vgdb-pipe", dir.display())]
    }

    /// Sends the monitor command `command` and waits for its answer, at most
    /// [`VGDB_DEADLINE`]. vgdb can miss the wake-up of a process asleep in a
    /// system call and then wait for ever: a command that may be given twice
    /// is given again ([`VGDB_ATTEMPTS`] in all); `dump`, which numbers its
    /// files, is not.
    ///
    /// # Errors
    /// When `vgdb` cannot be run, does not reach the process, or never answers.
    pub(super) fn monitor(&self, command: &[&str]) -> anyhow::Result<()> {
        let attempts = if command.first() == Some(&"dump") { 1 } else { VGDB_ATTEMPTS };
        for _ in 0..attempts {
            let mut child = Command::new("vgdb")
                .arg(format!("--pid={}", self.pid))
                .arg(format!("--vgdb-prefix={}/vgdb-pipe", self.dir.display()))
                // Wake a server asleep in a system call after 1 ms, not vgdb's default 100 ms.
                .arg("--max-invoke-ms=1")
                .args(command)
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .context("cannot run vgdb (valgrind's gdbserver client): install valgrind")?;
            let deadline = Instant::now() + VGDB_DEADLINE;
            while Instant::now() < deadline {
                if let Some(status) = child.try_wait()? {
                    let mut stderr = String::new();
                    if let Some(mut pipe) = child.stderr.take() {
                        let _ = pipe.read_to_string(&mut stderr);
                    }
                    ensure!(
                        status.success(),
                        "vgdb {}: {}",
                        command.join(" "),
                        stderr.lines().last().unwrap_or("no answer")
                    );
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        bail!("vgdb {}: no answer within {} s, {attempts} times", command.join(" "), VGDB_DEADLINE.as_secs())
    }
}

/// How long a vgdb command may take: a monitor command answers in
/// milliseconds, a dump of a large process in a second or two.
const VGDB_DEADLINE: Duration = Duration::from_secs(20);

/// How many times a command that may be given twice is given.
const VGDB_ATTEMPTS: usize = 3;

/// A server process running under callgrind, driven by `vgdb`.
#[derive(Debug)]
pub struct Callgrind {
    vgdb: Vgdb,
    /// Dumps taken so far (callgrind numbers them from 1).
    taken: u32,
}

impl Callgrind {
    /// The arguments that run a program under callgrind with instrumentation
    /// off until asked, its dumps in `dumps` (with the process id in their name).
    pub fn wrapper(dumps: &Path) -> Vec<String> {
        vec![
            "valgrind".to_owned(),
            "--tool=callgrind".to_owned(),
            "--instr-atstart=no".to_owned(),
            // Counts the server's own system calls (`sysCount`), not valgrind's.
            "--collect-systime=usec".to_owned(),
            Vgdb::args(dumps)[0].clone(),
            Vgdb::args(dumps)[1].clone(),
            format!("--callgrind-out-file={}/callgrind.out.%p", dumps.display()),
        ]
    }

    /// The process `pid`, started with [`Callgrind::wrapper`] and `dumps`.
    pub fn attach(pid: u32, dumps: &Path) -> Self {
        Self { vgdb: Vgdb { pid, dir: dumps.to_owned() }, taken: 0 }
    }

    /// Switches instrumentation on, once, before the first [`Callgrind::count`]:
    /// it stays on, since a switch made while the server sleeps in a system
    /// call can reach its code only later (two stretches in 54 of a
    /// `make count` ran uncounted when each stretch switched it on and off).
    ///
    /// # Errors
    /// When `vgdb` cannot reach the process.
    pub fn instrument(&self) -> anyhow::Result<()> {
        self.vgdb.monitor(&["instrumentation", "on"])
    }

    /// Counts what the server executes while `work` runs: counters zeroed,
    /// `work`, a dump read back.
    ///
    /// # Errors
    /// A monitor command that fails, `work`'s error, or a dump that cannot be read.
    pub fn count(&mut self, work: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<Counted> {
        self.vgdb.monitor(&["zero"])?;
        let worked = work();
        // The stretch's own error (a server that died, a wrong answer) says more than a failed dump.
        let dumped = self.vgdb.monitor(&["dump"]);
        worked?;
        dumped?;
        self.taken += 1;
        let path = self.vgdb.dir.join(format!("callgrind.out.{}.{}", self.vgdb.pid, self.taken));
        let text = read_dump(&path)?;
        let _ = std::fs::remove_file(&path);
        Ok(text)
    }
}

/// The instructions and allocations of one callgrind dump.
///
/// # Errors
/// A file that cannot be read or has no `summary:` (or `totals:`) line.
fn read_dump(path: &Path) -> anyhow::Result<Counted> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read callgrind's dump {}", path.display()))?;
    parse_dump(&text).with_context(|| format!("{}: not a callgrind dump with totals", path.display()))
}

/// [`read_dump`] of the text of a dump.
fn parse_dump(text: &str) -> Option<Counted> {
    let mut totals: Option<Vec<u64>> = None;
    let mut events: Vec<&str> = Vec::new();
    let mut allocations = 0;
    // Function names are compressed: `cfn=(7) malloc` the first time, `cfn=(7)` after.
    let mut names: std::collections::HashMap<&str, &str> = std::collections::HashMap::new();
    let mut calling_allocator = false;
    for line in text.lines() {
        if let Some(names) = line.strip_prefix("events:") {
            events = names.split_whitespace().collect();
        } else if let Some(total) = line.strip_prefix("summary:").or_else(|| line.strip_prefix("totals:")) {
            totals = total.split_whitespace().map(|n| n.parse::<u64>().ok()).collect();
        } else if let Some(callee) = line.strip_prefix("cfn=") {
            let name = match callee.strip_prefix('(').and_then(|rest| rest.split_once(')')) {
                Some((id, rest)) if !rest.trim().is_empty() => {
                    names.insert(id, rest.trim());
                    rest.trim()
                }
                Some((id, _)) => names.get(id).copied().unwrap_or(""),
                None => callee.trim(),
            };
            calling_allocator = ALLOCATORS.contains(&name);
        } else if let Some(calls) = line.strip_prefix("calls=") {
            if std::mem::take(&mut calling_allocator) {
                allocations += calls.split_whitespace().next().and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
            }
        } else if let Some(fun) = line.strip_prefix("fn=") {
            // Names are shared between fn= and cfn= lines.
            if let Some((id, rest)) = fun.strip_prefix('(').and_then(|rest| rest.split_once(')'))
                && !rest.trim().is_empty()
            {
                names.insert(id, rest.trim());
            }
        }
    }
    let totals = totals?;
    // Each total is that of the event named at its place in `events:`.
    let event = |name: &str| events.iter().position(|e| *e == name).and_then(|i| totals.get(i).copied());
    let instructions = event("Ir").or_else(|| totals.first().copied())?;
    Some(Counted { instructions, allocations, system_calls: event("sysCount").unwrap_or(0) })
}

/// Sends `requests` requests of `route` on one new keep-alive connection
/// and checks that each answer is a success (its status and exact body),
/// then closes the connection and waits until the server has closed its
/// end. HTTP/1.1: one request after another. HTTP/2 (h2c): `streams`
/// requests at once, each batch written together and answered before the
/// next, so what multiplexing saves per request shows in the counts.
///
/// # Errors
/// A connection that fails, an answer that is not a success (named), or
/// `stop` set (looked at before every request, or batch).
pub fn exchange(route: &RouteLoad, requests: u64, streams: usize, stop: &AtomicBool) -> anyhow::Result<()> {
    let target = &route.target;
    ensure!(target.tls.is_none(), "counted runs are over plain HTTP");
    let mut exchange = Exchange::open(target, false, REQUEST_TIMEOUT, Some(stop))
        .with_context(|| format!("{} on {}: the connection's start", target.path, target.addr))?;
    let mut answered = 0;
    while answered < requests {
        if stop.load(Ordering::Relaxed) {
            bail!("interrupted after {answered} of {requests} requests of {}", target.path);
        }
        // Over HTTP/2 a batch of `streams` at once, written together and answered before the
        // next, so what multiplexing saves per request shows in the counts.
        let batch = (requests - answered).min(streams.max(1) as u64);
        exchange
            .succeed_shaped(
                usize::try_from(batch)?,
                route.expected_status,
                &route.expected_body,
                &route.shape,
                Some(stop),
            )
            .with_context(|| format!("{}: request {answered} (of a batch of {batch})", target.path))?;
        answered += batch;
    }
    // Close, and wait for the server's end of the connection: its cleanup is inside the stretch,
    // not racing the dump that follows.
    exchange.close();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_gives_its_total_and_the_calls_into_the_allocator() {
        let dump = "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\n\
            fn=(1) main\n5 100\ncfn=(2) malloc\ncalls=3 0x10\n5 30\ncfn=(3) free\ncalls=2 0x20\n5 9\n\
            fn=(4) handler\ncfn=(2)\ncalls=4 0x10\n7 40\ncfn=(5) __rust_alloc\ncalls=6 0x30\n7 60\n\
            fn=(2)\n1 70\nsummary: 12345\ntotals: 12345\n";
        assert_eq!(parse_dump(dump), Some(Counted { instructions: 12_345, allocations: 7, system_calls: 0 }));
        assert_eq!(parse_dump("events: Ir\nfn=(1) main\n1 2\n"), None, "no totals: not a dump to read");
        // With --collect-systime: each total is read by its event's name.
        let systime = "events: Ir sysCount sysTime\nfn=(1) main\n5 100 2 31\nsummary: 567132 176 108065\n";
        assert_eq!(parse_dump(systime), Some(Counted { instructions: 567_132, allocations: 0, system_calls: 176 }));
    }
}
