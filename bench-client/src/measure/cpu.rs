//! CPU use of the server and of this client, sampled from `/proc` once per
//! window off the hot path, to show whether the server was saturated (the
//! client did not limit the measurement) and what the client itself used.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::sys::{process_alive, process_cpu_s, sleep_until};

/// CPU use per window, percent of one CPU (200 = two CPUs fully busy).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CpuWindows {
    /// The server's, one value per window; empty when no server pid was given.
    pub server: Vec<f64>,
    /// This client process's, one value per window.
    pub client: Vec<f64>,
}

/// Samples the CPU time of the `servers` (summed) and of this process at `measure_start`
/// and at the end of each of `windows` windows of length `window`; returns
/// early (with the windows completed) when `stop` is set, or when the server
/// is found dead at the end of a window, after setting `server_lost`.
pub fn sample_windows(
    servers: &[u32],
    measure_start: Instant,
    window: Duration,
    windows: usize,
    stop: &AtomicBool,
    server_lost: &AtomicBool,
) -> CpuWindows {
    let mut out = CpuWindows::default();
    // The servers' CPU time summed; unknown when any of them is unreadable.
    let server_cpu_s = || -> Option<f64> {
        if servers.is_empty() {
            return None;
        }
        servers.iter().map(|&p| process_cpu_s(Some(p))).sum()
    };
    let sample = || (server_cpu_s(), process_cpu_s(None), Instant::now());
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
        if servers.iter().any(|&p| !process_alive(p)) {
            server_lost.store(true, Ordering::Relaxed);
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;
    use crate::sys::process_alive;

    #[test]
    fn an_idle_server_reads_near_zero_per_window() {
        let mut child = Command::new("sleep").arg("5").spawn().unwrap();
        let stop = AtomicBool::new(false);
        let lost = AtomicBool::new(false);
        let w = sample_windows(&[child.id()], Instant::now(), Duration::from_millis(200), 2, &stop, &lost);
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
        let mut child = Command::new("sleep").arg("0.3").spawn().unwrap();
        let (stop, lost) = (AtomicBool::new(false), AtomicBool::new(false));
        let w = sample_windows(&[child.id()], Instant::now(), Duration::from_millis(200), 50, &stop, &lost);
        child.wait().unwrap();
        assert!(lost.load(Ordering::Relaxed));
        // It exited about 0.3 s in: sampling stopped with the first window
        // that saw it gone, far before the 50 planned.
        assert!((1..50).contains(&w.server.len()), "{} windows", w.server.len());
    }
}
