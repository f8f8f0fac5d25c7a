//! CPU lists (`0`, `1-3`, `0,2`) and pinning with `sched_setaffinity`.
//!
//! A child process inherits the affinity of the thread that spawns it, so
//! [`CpuList::spawn_pinned`] pins the calling thread to the child's CPUs for
//! the moment of the spawn and restores it after.

use std::fmt;
use std::process::{Child, Command};
use std::str::FromStr;

use anyhow::Context;
use nix::sched::{CpuSet, sched_getaffinity, sched_setaffinity};
use nix::unistd::Pid;

/// A non-empty, sorted, duplicate-free list of CPU numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl FromStr for CpuList {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("'{text}' is not a CPU list such as 0, 1-3 or 0,2");
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let (lo, hi) = part.split_once('-').unwrap_or((part, part));
            let lo: usize = lo.trim().parse().map_err(|_| bad())?;
            let hi: usize = hi.trim().parse().map_err(|_| bad())?;
            if lo > hi || hi >= CpuSet::count() {
                return Err(bad());
            }
            cpus.extend(lo..=hi);
        }
        cpus.sort_unstable();
        cpus.dedup();
        Ok(Self(cpus))
    }
}

impl fmt::Display for CpuList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        f.write_str(&parts.join(","))
    }
}

impl CpuList {
    /// Number of CPUs in the list (at least one).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: a parsed list holds at least one CPU.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The CPU numbers, ascending.
    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// Whether the two lists share a CPU.
    pub fn overlaps(&self, other: &Self) -> bool {
        self.0.iter().any(|c| other.0.contains(c))
    }

    fn set(&self) -> anyhow::Result<CpuSet> {
        let mut set = CpuSet::new();
        for &c in &self.0 {
            set.set(c).with_context(|| format!("CPU {c} is out of range"))?;
        }
        Ok(set)
    }

    /// Checks that this process may run on every CPU of the list.
    ///
    /// # Errors
    /// Names the first CPU that is not available.
    pub fn check_available(&self) -> anyhow::Result<()> {
        let allowed = sched_getaffinity(Pid::from_raw(0)).context("sched_getaffinity")?;
        for &c in &self.0 {
            if !allowed.is_set(c).unwrap_or(false) {
                let usable: Vec<String> = (0..CpuSet::count())
                    .filter(|&i| allowed.is_set(i).unwrap_or(false))
                    .map(|i| i.to_string())
                    .collect();
                anyhow::bail!("CPU {c} is not available to this process (it may use {})", usable.join(","));
            }
        }
        Ok(())
    }

    /// Pins the calling thread (and the threads and processes it starts
    /// afterwards) to these CPUs.
    ///
    /// # Errors
    /// When the kernel refuses the mask.
    pub fn pin_current_thread(&self) -> anyhow::Result<()> {
        sched_setaffinity(Pid::from_raw(0), &self.set()?).with_context(|| format!("cannot pin to CPUs {self}"))
    }

    /// Spawns `command` with its affinity set to these CPUs from its first
    /// instruction, leaving the calling thread's affinity as it was.
    ///
    /// # Errors
    /// When the affinity cannot be set or restored, or the spawn fails.
    pub fn spawn_pinned(&self, command: &mut Command) -> anyhow::Result<Child> {
        let before = sched_getaffinity(Pid::from_raw(0)).context("sched_getaffinity")?;
        self.pin_current_thread()?;
        let child = command.spawn();
        sched_setaffinity(Pid::from_raw(0), &before).context("cannot restore this thread's CPU affinity")?;
        Ok(child?)
    }
}

/// The CPU mask of process (or thread) `pid`, 0 for the calling thread.
///
/// # Errors
/// When the process does not exist.
pub fn affinity_of(pid: u32) -> anyhow::Result<Vec<usize>> {
    let pid = i32::try_from(pid).context("pid out of range")?;
    let set = sched_getaffinity(Pid::from_raw(pid)).context("sched_getaffinity")?;
    Ok((0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        assert_eq!("1".parse::<CpuList>().unwrap().cpus(), [1]);
        assert_eq!("3,0-1,1".parse::<CpuList>().unwrap().cpus(), [0, 1, 3]);
        assert_eq!("0-1".parse::<CpuList>().unwrap().to_string(), "0,1");
        for bad in ["", "a", "2-1", "1,", "-1", "99999"] {
            assert!(bad.parse::<CpuList>().is_err(), "{bad:?}");
        }
        assert!("0".parse::<CpuList>().unwrap().overlaps(&"0-1".parse().unwrap()));
    }

    #[test]
    fn spawned_child_runs_on_its_cpus_and_parent_is_unchanged() {
        let before = affinity_of(0).unwrap();
        let first: CpuList = before[0].to_string().parse().unwrap();
        let mut child = first.spawn_pinned(Command::new("sleep").arg("2")).unwrap();
        let child_cpus = affinity_of(child.id()).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(child_cpus, [before[0]]);
        assert_eq!(affinity_of(0).unwrap(), before, "the spawning thread is restored");
    }
}
