//! The file-descriptor limit: every connection is one descriptor, so a run
//! of 4096 connections needs more than the common soft limit of 1024. The
//! client raises its soft `RLIMIT_NOFILE` towards the hard limit before it
//! starts (servers it starts inherit the raised limit), or refuses the run
//! with the number of connections it could open, instead of meeting a storm
//! of `EMFILE` errors mid-run.

use anyhow::{Context, bail};
use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// Descriptors kept for everything but connections: stdio, the epoll
/// instances, `/proc` reads, pipes to servers and perf, the results files.
pub const SPARE_FDS: u64 = 64;

/// Soft limit the client raises to when it raises at all, so that servers it
/// starts can also accept that many connections.
const COMFORTABLE_FDS: u64 = 65_536;

/// Makes room for `connections` connections: raises the soft `RLIMIT_NOFILE`
/// (to at least `connections + SPARE_FDS`, up to the hard limit) when it is
/// too low. Returns the soft limit now in force.
///
/// # Errors
/// When the hard limit is too low: the message says how many connections
/// fit and how to raise it.
pub fn ensure_fds_for(connections: usize) -> anyhow::Result<u64> {
    let needed = connections as u64 + SPARE_FDS;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).context("cannot read RLIMIT_NOFILE")?;
    if soft >= needed {
        return Ok(soft);
    }
    if hard < needed {
        bail!(
            "--connections {connections} needs {needed} file descriptors but the hard limit (ulimit -Hn) is {hard}: \
             at most {} connections can be opened",
            hard.saturating_sub(SPARE_FDS)
        );
    }
    let target = needed.max(COMFORTABLE_FDS).min(hard);
    setrlimit(Resource::RLIMIT_NOFILE, target, hard)
        .with_context(|| format!("cannot raise the soft RLIMIT_NOFILE from {soft} to {target}"))?;
    Ok(target)
}
