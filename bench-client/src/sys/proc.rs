//! What `/proc` says about processes: CPU time, liveness,
//! peak memory; and a sleep that a stop flag can cut short.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::unistd::{SysconfVar, sysconf};

/// User + system CPU time of process `pid` (`None`: this process), seconds,
/// from fields 14 and 15 of `/proc/PID/stat`; `None` when unreadable.
pub fn process_cpu_s(pid: Option<u32>) -> Option<f64> {
    let path = pid.map_or_else(|| "/proc/self/stat".to_owned(), |p| format!("/proc/{p}/stat"));
    let text = std::fs::read_to_string(path).ok()?;
    // The command name (field 2) may hold spaces: count fields after its ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = sysconf(SysconfVar::CLK_TCK).ok().flatten().filter(|&t| t > 0)?;
    Some((utime + stime) as f64 / ticks as f64)
}

/// Whether process `pid` is alive: its `/proc/PID/stat` exists and its state
/// (field 3) is neither zombie (`Z`) nor dead (`X`).
pub fn process_alive(pid: u32) -> bool {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    let state = text.rfind(')').and_then(|i| text[i + 1..].split_whitespace().next());
    !matches!(state, None | Some("Z" | "X"))
}

/// Resident set size of this process now, bytes (0 when unknown): `VmRSS`
/// of `/proc/self/status`.
pub fn rss_bytes() -> u64 {
    status_kib("VmRSS:") * 1024
}

/// A `kB` line of `/proc/self/status`, KiB (0 when unreadable).
fn status_kib(key: &str) -> u64 {
    kib_line(&std::fs::read_to_string("/proc/self/status").unwrap_or_default(), key).unwrap_or(0)
}

/// Peak resident set size of this process's image, bytes (0 when unknown):
/// `VmHWM` of `/proc/self/status`. Not `getrusage`'s `ru_maxrss`, which
/// Linux carries over `exec` from the process that forked: a client started
/// by a large parent (a test binary, a shell of a big program) would report
/// the parent's peak instead of its own.
pub fn peak_rss_bytes() -> u64 {
    status_kib("VmHWM:") * 1024
}

/// What a process holds in memory now, KiB: its resident set, and where
/// the kernel has `/proc/PID/smaps_rollup`, its proportional share and the
/// pages only it has written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Resident {
    /// Resident set size (`Rss`; `VmRSS` without `smaps_rollup`).
    pub rss_kib: u64,
    /// Proportional set size (`Pss`): shared pages divided among their sharers.
    pub pss_kib: Option<u64>,
    /// Pages written by this process alone (`Private_Dirty`): its heap, stacks and buffers.
    pub private_dirty_kib: Option<u64>,
}

/// What process `pid` holds now; `None` once it has gone.
pub fn resident(pid: u32) -> Option<Resident> {
    match std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")) {
        Ok(text) => parse_rollup(&text),
        Err(_) => {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            Some(Resident { rss_kib: kib_line(&status, "VmRSS:")?, pss_kib: None, private_dirty_kib: None })
        }
    }
}

/// How many file descriptors process `pid` holds open now (its sockets
/// among them); `None` once it has gone or may not be read.
pub fn open_fds(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// [`resident`] of the text of a `smaps_rollup`.
fn parse_rollup(text: &str) -> Option<Resident> {
    Some(Resident {
        rss_kib: kib_line(text, "Rss:")?,
        pss_kib: kib_line(text, "Pss:"),
        private_dirty_kib: kib_line(text, "Private_Dirty:"),
    })
}

/// The value of the `kB` line `key` of `text`.
fn kib_line(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// This machine's host name (`/proc/sys/kernel/hostname`: in a Kubernetes
/// pod, the pod's name), or `localhost` when unreadable.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_owned())
}

/// The command name of process `pid` (`/proc/PID/comm`); `None` when it
/// does not exist.
pub fn process_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|c| c.trim_end_matches('\n').to_owned())
}

/// Processes whose command name (`/proc/PID/comm`, which the kernel cuts
/// at 15 bytes) is `name` (or its first 15 bytes), this process excluded,
/// in pid order.
pub fn pids_named(name: &str) -> Vec<u32> {
    let wanted = &name.as_bytes()[..name.len().min(15)];
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut pids: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.strip_suffix(b"\n") == Some(wanted))
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether process group `group` has a member that has not exited: one
/// whose state (field 3 of `/proc/PID/stat`) is not zombie or dead. A
/// server a shell forked outlives the shell killed first; once it exits it
/// is a zombie of whoever adopted it, which may reap it late, and a zombie
/// neither runs nor holds a port.
pub(super) fn group_has_live_member(group: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()).any(|pid| {
        let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
        // After the command's ')': state, parent, process group.
        let mut fields = text.rfind(')').map(|i| text[i + 1..].split_whitespace()).into_iter().flatten();
        let (state, pgrp) = (fields.next(), fields.nth(1).and_then(|g| g.parse::<u32>().ok()));
        pgrp == Some(group) && !matches!(state, None | Some("Z" | "X"))
    })
}

/// The process of process group `group` holding the socket that listens on
/// TCP `port` (IPv4 or IPv6, any address), from `/proc/net/tcp*` and the
/// group's open files; `None` when there is none or it cannot be read.
pub fn listener_in_group(port: u16, group: u32) -> Option<u32> {
    // `sl local_address rem_address st … inode`: the port is the hex after
    // the colon, state 0A is LISTEN.
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    let listening = fields.get(3) == Some(&"0A");
                    let local_port = fields.get(1)?.rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
                    let inode = fields.get(9)?;
                    (listening && local_port == Some(port)).then(|| format!("socket:[{inode}]"))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let in_group = |pid: u32| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // Fields after the command name in parentheses: state, ppid, pgrp.
        stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse::<u32>().ok().filter(|&g| g == group)
    };
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| in_group(pid).is_some())
        .find(|pid| {
            std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
                fds.filter_map(Result::ok)
                    .filter_map(|fd| std::fs::read_link(fd.path()).ok())
                    .any(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
            })
        })
}

/// Sleeps until `at` in steps of at most 50 ms; false if `stop` was set first.
pub fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= at {
            return true;
        }
        std::thread::sleep((at - now).min(Duration::from_millis(50)));
    }
}

/// Sets the nice value of process `pid` (19: the lowest priority, which
/// still runs whenever its CPU is otherwise idle).
///
/// # Errors
/// When the kernel refuses (no such process, or not permitted).
pub fn set_nice(pid: u32, nice: i32) -> std::io::Result<()> {
    let pid = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw);
    let pid = pid.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    Ok(rustix::process::setpriority_process(Some(pid), nice)?)
}

/// `at` on `CLOCK_MONOTONIC`, nanoseconds: the clock std's `Instant` reads on
/// Linux, and the one `perf record -k monotonic` stamps its samples with.
pub fn monotonic_ns(at: Instant) -> i128 {
    let (now, instant) = (nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC), Instant::now());
    let now_ns = now.map_or(0, |t| i128::from(t.tv_sec()) * 1_000_000_000 + i128::from(t.tv_nsec()));
    if at >= instant { now_ns + (at - instant).as_nanos() as i128 } else { now_ns - (instant - at).as_nanos() as i128 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rollup_gives_rss_pss_and_private_dirty_and_this_process_holds_memory() {
        let rollup = "55d0c0000000-7ffd5a5f1000 ---p 00000000 00:00 0    [rollup]\nRss:   5316 kB\n\
            Pss:   1841 kB\nPss_Anon: 1024 kB\nPrivate_Clean: 12 kB\nPrivate_Dirty:  1100 kB\n";
        let held = parse_rollup(rollup).unwrap();
        assert_eq!(held, Resident { rss_kib: 5316, pss_kib: Some(1841), private_dirty_kib: Some(1100) });
        assert_eq!(parse_rollup("Pss: 3 kB\n"), None, "no Rss line: not a rollup");
        let me = resident(std::process::id()).unwrap();
        assert!(me.rss_kib > 100 && me.private_dirty_kib.unwrap_or(1) > 0, "{me:?}");
        assert_eq!(resident(u32::MAX), None, "no such process");
        let before = open_fds(std::process::id()).unwrap();
        let file = std::fs::File::open("/proc/self/status").unwrap();
        assert_eq!(open_fds(std::process::id()), Some(before + 1), "one more open");
        drop(file);
    }

    #[test]
    fn a_group_left_with_a_zombie_has_no_live_member() {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new("sleep").arg("5").process_group(0).spawn().unwrap();
        let group = child.id();
        assert!(group_has_live_member(group), "a running member");
        child.kill().unwrap();
        // Killed and not yet reaped: a zombie, still in its group.
        let deadline = Instant::now() + Duration::from_secs(5);
        while group_has_live_member(group) {
            assert!(Instant::now() < deadline, "the killed member still counted as live");
            std::thread::sleep(Duration::from_millis(10));
        }
        let group_pid = nix::unistd::Pid::from_raw(i32::try_from(group).unwrap());
        assert!(nix::sys::signal::killpg(group_pid, None).is_ok(), "the zombie is still in the group");
        child.wait().unwrap();
        assert!(!group_has_live_member(group));
    }

    #[test]
    fn a_child_made_nice_reads_its_nice_value_back() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        set_nice(child.id(), 19).unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
        let after_comm = &stat[stat.rfind(')').unwrap() + 2..];
        let nice: i32 = after_comm.split(' ').nth(16).unwrap().parse().unwrap(); // field 19 of stat
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(nice, 19);
        assert!(set_nice(u32::MAX >> 2, 19).is_err(), "no such process");
    }

    #[test]
    fn an_instant_on_the_monotonic_clock_is_the_clock_read_then() {
        let before = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
        let at = Instant::now();
        let after = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).unwrap();
        let ns = |t: nix::sys::time::TimeSpec| i128::from(t.tv_sec()) * 1_000_000_000 + i128::from(t.tv_nsec());
        let slack = 1_000_000; // the two readings of the helper itself, 1 ms at most
        let got = monotonic_ns(at);
        assert!(got >= ns(before) - slack && got <= ns(after) + slack, "{} not in {} … {}", got, ns(before), ns(after));
        let later = monotonic_ns(at + Duration::from_secs(3));
        assert!((later - got - 3_000_000_000).abs() < slack, "3 s later reads {} ns later", later - got);
    }

    #[test]
    fn own_cpu_time_grows_with_work() {
        let before = process_cpu_s(None).unwrap();
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let used = process_cpu_s(None).unwrap() - before;
        assert!(used >= 0.1, "spinning 300 ms used {used} s of CPU");
        assert_eq!(process_cpu_s(Some(u32::MAX)), None, "no such process");
    }

    #[test]
    fn processes_are_found_by_name() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let found = pids_named("sleep");
        let name = process_name(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert!(found.contains(&child.id()), "{found:?}");
        assert_eq!(name.as_deref(), Some("sleep"));
        assert!(pids_named("no-such-process-name-here").is_empty());
        assert!(!hostname().is_empty());
    }

    #[test]
    fn peak_rss_grows_with_touched_memory() {
        let before = peak_rss_bytes();
        assert!(before > 0);
        let touched = vec![1u8; 64 << 20];
        std::hint::black_box(&touched);
        assert!(peak_rss_bytes() >= before.max(64 << 20), "64 MiB touched: {} bytes", peak_rss_bytes());
    }
}
