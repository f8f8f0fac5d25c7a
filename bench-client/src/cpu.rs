//! CPU time of processes from `/proc`, sampled once per window off the hot
//! path, to show whether the server was saturated (the client did not limit
//! the measurement) and what the client itself used.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::unistd::{SysconfVar, sysconf};

/// A server is called saturated when its CPU use reaches this share of its
/// CPUs, percent; below it a run is flagged client-bound.
pub const SATURATED_PERCENT: f64 = 95.0;

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

/// CPU use per window, percent of one CPU (200 = two CPUs fully busy).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuWindows {
    /// The server's, one value per window; empty when no server pid was given.
    pub server: Vec<f64>,
    /// This client process's, one value per window.
    pub client: Vec<f64>,
}

/// Samples the CPU time of `server` and of this process at `measure_start`
/// and at the end of each of `windows` windows of length `window`; returns
/// early (with the windows completed) when `stop` is set, or when the server
/// is found dead at the end of a window, after setting `server_lost`.
pub fn sample_windows(
    server: Option<u32>,
    measure_start: Instant,
    window: Duration,
    windows: usize,
    stop: &AtomicBool,
    server_lost: &AtomicBool,
) -> CpuWindows {
    let mut out = CpuWindows::default();
    let sample = || (server.and_then(|p| process_cpu_s(Some(p))), process_cpu_s(None), Instant::now());
    if !sleep_until(measure_start, stop) {
        return out;
    }
    let mut last = sample();
    for k in 1..=windows {
        let boundary = measure_start + window * u32::try_from(k).unwrap_or(u32::MAX);
        if !sleep_until(boundary, stop) {
            break;
        }
        let now = sample();
        let wall = now.2.duration_since(last.2).as_secs_f64().max(1e-9);
        if let (Some(a), Some(b)) = (last.0, now.0) {
            out.server.push((b - a) / wall * 100.0);
        }
        if let (Some(a), Some(b)) = (last.1, now.1) {
            out.client.push((b - a) / wall * 100.0);
        }
        last = now;
        if server.is_some_and(|p| !process_alive(p)) {
            server_lost.store(true, Ordering::Relaxed);
            break;
        }
    }
    out
}

/// Sleeps until `at` in steps of at most 50 ms; false if `stop` was set first.
pub(crate) fn sleep_until(at: Instant, stop: &AtomicBool) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn an_idle_server_reads_near_zero_per_window() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        let stop = AtomicBool::new(false);
        let lost = AtomicBool::new(false);
        let w = sample_windows(Some(child.id()), Instant::now(), Duration::from_millis(200), 2, &stop, &lost);
        assert!(process_alive(child.id()));
        child.kill().unwrap();
        // Delivery is asynchronous; a killed child is a zombie until waited for.
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_alive(child.id()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!process_alive(child.id()), "killed, not yet waited for");
        child.wait().unwrap();
        assert!(!process_alive(child.id()));
        assert!(!lost.load(Ordering::Relaxed));
        assert_eq!(w.server.len(), 2);
        assert!(w.server.iter().all(|&p| p < 20.0), "{:?}", w.server);
        assert_eq!(w.client.len(), 2);
    }

    #[test]
    fn sampling_ends_at_the_window_in_which_the_server_died() {
        let mut child = std::process::Command::new("sleep").arg("0.3").spawn().unwrap();
        let (stop, lost) = (AtomicBool::new(false), AtomicBool::new(false));
        let w = sample_windows(Some(child.id()), Instant::now(), Duration::from_millis(200), 50, &stop, &lost);
        child.wait().unwrap();
        assert!(lost.load(Ordering::Relaxed));
        // It exited about 0.3 s in: sampling stopped with the first window
        // that saw it gone, far before the 50 planned.
        assert!((1..50).contains(&w.server.len()), "{} windows", w.server.len());
    }
}
