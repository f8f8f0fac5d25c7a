//! What a stretch of requests costs the kernel side of a server, counted
//! by perf's software events on the native process (no valgrind, which
//! runs a process's threads one at a time and so changes how often they
//! sleep): system calls (`raw_syscalls:sys_enter`), context switches and
//! page faults. These count exactly on a machine without hardware
//! counters. `perf stat` attaches with its events disabled and is switched
//! on and off through its control FIFOs around the stretch alone, so its
//! own start and end are not in the count.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

/// perf's names of the events, in [`Kernel`]'s order.
const EVENTS: [&str; 3] = ["raw_syscalls:sys_enter", "context-switches", "page-faults"];

/// How long perf may take to answer a control command or to write its counts.
const PERF_ANSWER: Duration = Duration::from_secs(10);

/// What one stretch cost the kernel side of the server, every thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Kernel {
    /// System calls entered.
    pub system_calls: u64,
    /// Context switches (a thread that sleeps in `epoll_wait` and wakes is one).
    pub context_switches: u64,
    /// Page faults, minor and major.
    pub page_faults: u64,
}

/// Counts a native server process's software events, stretch by stretch.
#[derive(Debug)]
pub struct PerfStat {
    pid: u32,
    /// Where the control FIFOs and perf's output go.
    dir: PathBuf,
}

/// A `perf stat` child, stopped if left running (an error, Ctrl-C).
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

impl PerfStat {
    /// Checks that perf can count the events here, before anything runs.
    ///
    /// # Errors
    /// One line quoting perf and saying what to do.
    pub fn check() -> anyhow::Result<()> {
        let out = Command::new("perf").args(["stat", "-x,", "-e", &EVENTS.join(","), "--", "true"]).output();
        let said = match out {
            Err(_) => "perf is not installed".to_owned(),
            Ok(o) if o.status.success() && parse(&String::from_utf8_lossy(&o.stderr)).is_some() => return Ok(()),
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                let line =
                    err.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap_or("no answer");
                format!("perf cannot count {} here ({line})", EVENTS.join(", "))
            }
        };
        bail!(
            "{said}: count reads system calls, context switches and page faults with perf stat (apt-get install linux-perf; \
             as root, or with kernel.perf_event_paranoid at most 1 and tracefs readable); --no-perf counts without them"
        )
    }

    /// The native process `pid`; its FIFOs and counts go in `dir`.
    pub fn attach(pid: u32, dir: &Path) -> Self {
        Self { pid, dir: dir.to_owned() }
    }

    /// What the server's threads did while `work` ran.
    ///
    /// # Errors
    /// perf that does not start, answer or write its counts; `work`'s error.
    pub fn count(&mut self, work: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<Kernel> {
        let (ctl, ack) = (self.dir.join("perf-ctl.fifo"), self.dir.join("perf-ack.fifo"));
        for fifo in [&ctl, &ack] {
            if !fifo.exists() {
                nix::unistd::mkfifo(fifo, nix::sys::stat::Mode::S_IRUSR | nix::sys::stat::Mode::S_IWUSR)
                    .with_context(|| format!("cannot make the FIFO {}", fifo.display()))?;
            }
        }
        // Read and write, so that opening does not wait for perf; the answers are read without blocking.
        let open = |path: &Path| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(nix::fcntl::OFlag::O_NONBLOCK.bits())
                .open(path)
                .with_context(|| format!("cannot open {}", path.display()))
        };
        let (mut ctl_fd, mut ack_fd) = (open(&ctl)?, open(&ack)?);
        let out = self.dir.join("perf-stat.csv");
        let child = Command::new("perf")
            .args(["stat", "-x,", "-e", &EVENTS.join(","), "--delay=-1"])
            .arg(format!("--control=fifo:{},{}", ctl.display(), ack.display()))
            .arg("-o")
            .arg(&out)
            .args(["-p", &self.pid.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run perf stat")?;
        let mut perf = Running(child);
        command(&mut perf, &mut ctl_fd, &mut ack_fd, "enable")?;
        let worked = work();
        let disabled = command(&mut perf, &mut ctl_fd, &mut ack_fd, "disable");
        worked?;
        disabled?;
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(perf.0.id() as i32), nix::sys::signal::Signal::SIGINT)
            .context("cannot stop perf stat")?;
        let deadline = Instant::now() + PERF_ANSWER;
        while perf.0.try_wait()?.is_none() {
            ensure!(Instant::now() < deadline, "perf stat did not end within {PERF_ANSWER:?} of SIGINT");
            std::thread::sleep(Duration::from_millis(5));
        }
        let text =
            std::fs::read_to_string(&out).with_context(|| format!("cannot read perf's counts {}", out.display()))?;
        let _ = std::fs::remove_file(&out);
        parse(&text).with_context(|| format!("perf stat wrote no count of {} in {}", EVENTS.join(", "), out.display()))
    }
}

/// Sends `what` to perf's control FIFO and waits for its `ack`.
fn command(perf: &mut Running, ctl: &mut File, ack: &mut File, what: &str) -> anyhow::Result<()> {
    ctl.write_all(format!("{what}\n").as_bytes()).context("cannot write to perf's control FIFO")?;
    let deadline = Instant::now() + PERF_ANSWER;
    let mut answer = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match ack.read(&mut byte) {
            Ok(1) if byte[0] == b'\n' => break,
            // perf writes its answer with the string's terminating NUL ("ack\n\0").
            Ok(1) if byte[0] == 0 => {}
            Ok(1) => answer.push(byte[0]),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if let Some(status) = perf.0.try_wait()? {
                    let mut err = String::new();
                    if let Some(mut stderr) = perf.0.stderr.take() {
                        let _ = stderr.read_to_string(&mut err);
                    }
                    bail!(
                        "perf stat ended ({status}) before it was {what}d: {}",
                        err.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message")
                    );
                }
                ensure!(Instant::now() < deadline, "perf stat did not answer {what} within {PERF_ANSWER:?}");
                std::thread::sleep(Duration::from_micros(200));
            }
            Err(e) => return Err(e).context("cannot read perf's answer"),
        }
    }
    ensure!(answer == b"ack", "perf stat answered {what} with {:?}", String::from_utf8_lossy(&answer));
    Ok(())
}

/// The counts of perf stat's CSV (`-x,`: value, unit, event, …), every event
/// of [`EVENTS`] present; `None` if one is missing or not counted.
fn parse(text: &str) -> Option<Kernel> {
    let mut values = [None; 3];
    for line in text.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        if let [value, _unit, event, ..] = fields.as_slice()
            && let Some(i) = EVENTS.iter().position(|e| e == event)
        {
            values[i] = value.trim().parse::<u64>().ok();
        }
    }
    let [system_calls, context_switches, page_faults] = values;
    Some(Kernel { system_calls: system_calls?, context_switches: context_switches?, page_faults: page_faults? })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_stat_csv_gives_each_event_by_name() {
        let csv = "# started on Thu Dec  3 16:13:19 2026\n\n26,,context-switches,3662117,100.00,,\n\
            22,,page-faults,3662117,100.00,,\n139,,raw_syscalls:sys_enter,3662117,100.00,,\nEvents disabled\n";
        assert_eq!(parse(csv), Some(Kernel { system_calls: 139, context_switches: 26, page_faults: 22 }));
        let refused = "<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n3,,context-switches,1,100.00,,\n\
            1,,page-faults,1,100.00,,\n";
        assert_eq!(parse(refused), None, "an event perf could not count is no count");
        assert_eq!(parse("3,,context-switches,1,100.00,,\n"), None, "every event or none");
    }
}
