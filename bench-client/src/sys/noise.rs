//! What on this machine moves the numbers, read before anything is measured:
//! pinned CPUs already busy, the frequency governor and turbo, SMT siblings
//! of the pinned CPUs, transparent huge pages, a hypervisor. Each finding is
//! one line for the terminal, the results' `meta` and the report; none stops
//! a run.

use std::path::Path;
use std::time::Duration;

use super::CpuList;

/// Share of a pinned CPU busy before the suite starts above which something
/// else is said to run there, percent.
pub const BUSY_PERCENT: f64 = 5.0;

/// How long the pinned CPUs' idleness is sampled.
const SAMPLE: Duration = Duration::from_millis(200);

fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

/// Busy and total jiffies of each CPU, from `/proc/stat`.
fn cpu_times(stat: &str) -> Vec<(usize, u64, u64)> {
    stat.lines()
        .filter_map(|l| {
            let mut fields = l.split_whitespace();
            let cpu: usize = fields.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
            let total: u64 = v.iter().take(8).sum();
            let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
            Some((cpu, total - idle, total))
        })
        .collect()
}

/// The share of each CPU of `cpus` that was busy between two `/proc/stat`
/// readings, percent.
fn busy_percent(before: &str, after: &str, cpus: &[usize]) -> Vec<(usize, f64)> {
    let (a, b) = (cpu_times(before), cpu_times(after));
    cpus.iter()
        .filter_map(|&c| {
            let (_, busy0, total0) = a.iter().find(|t| t.0 == c)?;
            let (_, busy1, total1) = b.iter().find(|t| t.0 == c)?;
            let total = total1.checked_sub(*total0).filter(|t| *t > 0)?;
            Some((c, busy1.saturating_sub(*busy0) as f64 / total as f64 * 100.0))
        })
        .collect()
}

/// The lines of what moves the numbers on this machine with the server on
/// `server` and the client on `client` (the client's own thread sleeps
/// while the CPUs are sampled).
pub fn noise_check(server: &CpuList, client: &CpuList) -> Vec<String> {
    let mut lines = Vec::new();
    let pinned: Vec<usize> = server.cpus().iter().chain(client.cpus()).copied().collect();
    if let Some(before) = read("/proc/stat") {
        std::thread::sleep(SAMPLE);
        if let Some(after) = read("/proc/stat") {
            for (cpu, busy) in busy_percent(&before, &after, &pinned).into_iter().filter(|b| b.1 > BUSY_PERCENT) {
                lines.push(format!("CPU {cpu} was {busy:.0} % busy before the first run: something else runs there"));
            }
        }
    }
    let cpu_dir = |c: usize, leaf: &str| format!("/sys/devices/system/cpu/cpu{c}/{leaf}");
    for &c in &pinned {
        if let Some(governor) = read(cpu_dir(c, "cpufreq/scaling_governor")).filter(|g| g != "performance") {
            lines.push(format!("CPU {c}: frequency governor {governor} (performance holds the clock steady)"));
        }
        if let Some(siblings) = read(cpu_dir(c, "topology/thread_siblings_list")).filter(|s| s.contains([',', '-'])) {
            lines.push(format!("CPU {c} shares its core with CPUs {siblings} (SMT): a sibling's work slows it"));
        }
    }
    match (read("/sys/devices/system/cpu/intel_pstate/no_turbo"), read("/sys/devices/system/cpu/cpufreq/boost")) {
        (Some(no_turbo), _) if no_turbo == "0" => lines.push("turbo is on: the clock follows temperature".to_owned()),
        (_, Some(boost)) if boost == "1" => {
            lines.push("frequency boost is on: the clock follows temperature".to_owned())
        }
        _ => {}
    }
    if let Some(thp) = read("/sys/kernel/mm/transparent_hugepage/enabled").filter(|t| t.contains("[always]")) {
        lines.push(format!("transparent huge pages: {thp} (a process's layout varies more)"));
    }
    if read("/proc/cpuinfo").is_some_and(|c| c.lines().any(|l| l.starts_with("flags") && l.contains(" hypervisor"))) {
        lines.push("a virtual machine (hypervisor flag): the host's other guests share its cores".to_owned());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_share_comes_from_the_jiffies_between_two_readings() {
        let before = "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 100 0 0 900 0 0 0 0 0 0\ncpu1 0 0 0 1000 0 0 0 0 0 0\n";
        // CPU 0: 30 busy of 100 jiffies (user 20 + system 10, idle 60, iowait 10); CPU 1 idle.
        let after = "cpu  1 0 1 10 0 0 0 0 0 0\ncpu0 120 0 10 960 10 0 0 0 0 0\ncpu1 0 0 0 1100 0 0 0 0 0 0\n";
        let got = busy_percent(before, after, &[0, 1, 7]);
        assert_eq!(got, [(0, 30.0), (1, 0.0)], "CPU 7 is not in /proc/stat");
    }
}
