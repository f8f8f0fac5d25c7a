//! `memory.json`: what a connection costs each server in memory. For every
//! repeat, a fresh server process is measured with no connection, then
//! with each count of idle keep-alive connections; a second fresh process
//! with no connection, then busy under load at each count, then once the
//! load has ended and every connection closed; and (unless `--no-heap`) a
//! third under valgrind's memcheck, whose live heap bytes are counted with
//! no connection and at each count of idle ones.
//! The file holds what `/proc` said at each point; what a connection costs
//! (the slope between the fewest and the most connections of a repeat) and
//! what is kept are computed from it, with their 95 % interval over the
//! repeats, so that a reader recomputes every figure from the samples.

use serde::{Deserialize, Serialize};

use super::counted::{OverRepeats, Provenance};
use crate::sys::Resident;

/// Version of the `memory.json` layout: 2 adds each repeat's `heap`
/// (version 1 files read as repeats without it).
pub const MEMORY_SCHEMA_VERSION: u32 = 2;

/// One `memory` session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// [`MEMORY_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// Where and when it was measured, and of which build.
    #[serde(flatten)]
    pub provenance: Provenance,
    /// The route each connection's requests ask for.
    pub route: String,
    /// Each idle connection's first request a `PUT /api/devices` of this
    /// many bytes, before its verified one (`--put-body-bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub put_body_bytes: Option<usize>,
    /// The connection counts measured, ascending.
    pub connections: Vec<usize>,
    /// How long each busy point is loaded before it is read, milliseconds
    /// (after a warm-up in which its connections open).
    pub busy_ms: u64,
    /// Every server measured every repeat (false: stopped or failed; what
    /// was measured is kept).
    pub complete: bool,
    /// Per server, in order.
    pub servers: Vec<MemoryServer>,
}

/// One server's repeats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryServer {
    /// The framework's name, or a `--cmd` server's.
    pub name: String,
    /// One per repeat, each a fresh process.
    pub repeats: Vec<MemoryRepeat>,
    /// Why the server's measurement ended early (it died, a wrong answer), if it did.
    pub error: Option<String>,
}

/// What the two processes of a repeat held at each point: one holds idle
/// connections, a second one carries the load (so that neither count
/// starts from memory the other left).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRepeat {
    /// The first process started, answered its health check, no connection open.
    pub idle_baseline: Resident,
    /// With `connections[i]` idle keep-alive connections open, each having
    /// carried one request (a point per count reached).
    pub idle: Vec<Resident>,
    /// The connections the server still held at each idle reading (its open
    /// descriptors over those before the first; at most `connections[i]`):
    /// one whose keep-alive timeout passes while the others open has closed
    /// the first ones. Absent from files before it was recorded.
    #[serde(default)]
    pub idle_held: Vec<usize>,
    /// The second process, as the first at its start.
    pub busy_baseline: Option<Resident>,
    /// Under a closed-loop load over `connections[i]` connections, read
    /// near the end of its `busy_ms` (a point per count reached).
    pub busy: Vec<Resident>,
    /// The connections the server held at each busy reading (its open
    /// descriptors over those before the load; at most `connections[i]`):
    /// a loaded server may not have accepted every one yet.
    #[serde(default)]
    pub busy_held: Vec<usize>,
    /// The second process once the load has ended and every connection is closed.
    pub kept: Option<Resident>,
    /// The third process's live heap, counted (`None` with `--no-heap`, or
    /// when the repeat ended before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heap: Option<HeapPoints>,
}

/// Live heap bytes of a process under memcheck (`curB` of its heap tree:
/// every block allocated and not yet freed, whatever the pages hold),
/// holding idle connections as the first process does.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeapPoints {
    /// Started, healthy, no connection open.
    pub baseline_bytes: u64,
    /// With `connections[i]` idle keep-alive connections open, each having
    /// carried its request (a point per count reached).
    pub idle_bytes: Vec<u64>,
    /// The connections the server still held at each of them, as
    /// [`MemoryRepeat::idle_held`].
    pub idle_held: Vec<usize>,
}

/// Which points a per-connection figure is taken over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// The idle keep-alive connections.
    Idle,
    /// The connections under load.
    Busy,
}

impl MemoryServer {
    /// KiB of resident memory per connection held `held`: per repeat, the
    /// slope between its first and last point (the fewest and the most
    /// connections it reached: those the server held when read), with
    /// the interval over the repeats; `None` without a repeat that reached
    /// two counts.
    pub fn kib_per_connection(&self, held: Held, connections: &[usize]) -> Option<OverRepeats> {
        let slopes: Vec<f64> = self
            .repeats
            .iter()
            .filter_map(|r| {
                let (points, counts) = match held {
                    Held::Idle if r.idle_held.len() == r.idle.len() => (&r.idle, r.idle_held.as_slice()),
                    Held::Idle => (&r.idle, connections),
                    Held::Busy if r.busy_held.len() == r.busy.len() => (&r.busy, r.busy_held.as_slice()),
                    Held::Busy => (&r.busy, connections),
                };
                let (first, last) = (points.first()?, points.last()?);
                let span = counts.get(points.len() - 1)?.checked_sub(*counts.first()?)?;
                (span > 0).then(|| (last.rss_kib as f64 - first.rss_kib as f64) / span as f64)
            })
            .collect();
        OverRepeats::of(&slopes)
    }

    /// KiB of live heap per idle connection: per repeat, the slope of its
    /// heap points between the fewest and the most connections the server held,
    /// with the interval over the repeats; `None` without heap points over
    /// two counts.
    pub fn heap_kib_per_connection(&self, connections: &[usize]) -> Option<OverRepeats> {
        let slopes: Vec<f64> = self
            .repeats
            .iter()
            .filter_map(|r| {
                let heap = r.heap.as_ref()?;
                let points = &heap.idle_bytes;
                let counts = if heap.idle_held.len() == points.len() { &heap.idle_held } else { connections };
                let (first, last) = (*points.first()?, *points.last()?);
                let span = counts.get(points.len() - 1)?.checked_sub(*counts.first()?)?;
                (span > 0).then(|| (last as f64 - first as f64) / 1024.0 / span as f64)
            })
            .collect();
        OverRepeats::of(&slopes)
    }

    /// The mean live heap MiB at each connection count held idle, over the
    /// repeats that reached it (for the chart).
    pub fn mean_heap_mib(&self, connections: &[usize]) -> Vec<(usize, f64)> {
        self.mean_at(connections, |r, i| Some(*r.heap.as_ref()?.idle_bytes.get(i)? as f64 / (1024.0 * 1024.0)))
    }

    /// The mean of `mib(repeat, i)` at each count `connections[i]`, over the
    /// repeats that have it.
    fn mean_at(&self, connections: &[usize], mib: impl Fn(&MemoryRepeat, usize) -> Option<f64>) -> Vec<(usize, f64)> {
        connections
            .iter()
            .enumerate()
            .filter_map(|(i, &n)| {
                let at: Vec<f64> = self.repeats.iter().filter_map(|r| mib(r, i)).collect();
                (!at.is_empty()).then(|| (n, at.iter().sum::<f64>() / at.len() as f64))
            })
            .collect()
    }

    /// The idle reading, of any repeat or process, at which the server held
    /// the smallest share of the connections asked for, as (held, asked);
    /// `None` when it held every one everywhere (or nothing was recorded).
    pub fn fewest_held(&self, connections: &[usize]) -> Option<(usize, usize)> {
        let heap = self.repeats.iter().filter_map(|r| r.heap.as_ref()).map(|h| &h.idle_held);
        self.repeats
            .iter()
            .map(|r| &r.idle_held)
            .chain(heap)
            .flat_map(|held| held.iter().zip(connections).map(|(&h, &n)| (h, n)))
            .filter(|&(h, n)| h < n)
            .min_by(|a, b| (a.0 as f64 / a.1 as f64).total_cmp(&(b.0 as f64 / b.1 as f64)))
    }

    /// MiB of resident memory kept once the load has ended and every
    /// connection closed, over the loaded process's start.
    pub fn kept_mib(&self) -> Option<OverRepeats> {
        let kept: Vec<f64> = self
            .repeats
            .iter()
            .filter_map(|r| Some((r.kept?.rss_kib as f64 - r.busy_baseline?.rss_kib as f64) / 1024.0))
            .collect();
        OverRepeats::of(&kept)
    }

    /// MiB a fresh process holds before any connection, over the repeats.
    pub fn baseline_mib(&self) -> Option<OverRepeats> {
        let base: Vec<f64> = self.repeats.iter().map(|r| r.idle_baseline.rss_kib as f64 / 1024.0).collect();
        OverRepeats::of(&base)
    }

    /// The mean resident MiB at each connection count held `held` (for the
    /// chart: memory against connections), over the repeats that reached it.
    pub fn mean_mib(&self, held: Held, connections: &[usize]) -> Vec<(usize, f64)> {
        self.mean_at(connections, |r, i| {
            let point = match held {
                Held::Idle => r.idle.get(i),
                Held::Busy => r.busy.get(i),
            };
            Some(point?.rss_kib as f64 / 1024.0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(rss_kib: u64) -> Resident {
        Resident { rss_kib, pss_kib: None, private_dirty_kib: None }
    }

    /// A server of one repeat read idle only: its baseline, then `idle` (KiB each).
    fn idle_only(name: &str, baseline: u64, idle: &[u64], error: Option<&str>) -> MemoryServer {
        let repeat = MemoryRepeat {
            idle_baseline: held(baseline),
            idle: idle.iter().map(|&kib| held(kib)).collect(),
            busy_baseline: None,
            busy: vec![],
            busy_held: vec![],
            idle_held: vec![],
            kept: None,
            heap: None,
        };
        MemoryServer { name: name.into(), repeats: vec![repeat], error: error.map(Into::into) }
    }

    #[test]
    fn a_connection_costs_the_slope_between_the_fewest_and_the_most_and_kept_is_over_the_baseline() {
        let connections = [1, 65, 1025];
        // 64 KiB per connection idle (+1 KiB of noise in the middle), 100 KiB busy.
        let repeat = |base: u64, kept: u64| MemoryRepeat {
            idle_baseline: held(base),
            idle: vec![held(base + 64), held(base + 65 * 64 + 1), held(base + 1025 * 64)],
            busy_baseline: Some(held(base)),
            // Busy, the last reading held 1001 of the 1025: 100 KiB each over the 1000 more.
            busy: vec![held(base + 100), held(base + 6500), held(base + 100_100)],
            busy_held: vec![1, 65, 1001],
            idle_held: vec![1, 65, 1025],
            kept: Some(held(base + kept)),
            // 64 KiB of heap per connection, the first connection's request 3 KiB more.
            heap: Some(HeapPoints {
                baseline_bytes: base * 100,
                idle_bytes: [1, 65, 1025].map(|n: u64| base * 100 + 3 * 1024 + n * 65_536).to_vec(),
                // Not recorded: the counts asked for.
                idle_held: Vec::new(),
            }),
        };
        let server = MemoryServer {
            name: "own".into(),
            repeats: vec![repeat(10_240, 2048), repeat(10_300, 1024), repeat(10_180, 3072)],
            error: None,
        };
        let idle = server.kib_per_connection(Held::Idle, &connections).unwrap();
        assert!((idle.mean - 64.0).abs() < 1e-9 && idle.interval == Some((64.0, 64.0)), "{idle:?}");
        assert!((server.kib_per_connection(Held::Busy, &connections).unwrap().mean - 100.0).abs() < 1e-9);
        let kept = server.kept_mib().unwrap();
        assert!((kept.mean - 2.0).abs() < 1e-9, "2048, 1024 and 3072 KiB kept: {kept:?}");
        let (lo, hi) = kept.interval.unwrap();
        assert!(lo < 2.0 && hi > 2.0 && hi - lo > 1.0, "three spread repeats: {kept:?}");
        assert_eq!(server.mean_mib(Held::Idle, &connections)[0].0, 1);
        let heap = server.heap_kib_per_connection(&connections).unwrap();
        assert!((heap.mean - 64.0).abs() < 1e-9 && heap.interval == Some((64.0, 64.0)), "{heap:?}");
        let heap_mib = server.mean_heap_mib(&connections);
        assert_eq!(heap_mib.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 65, 1025]);
        assert!((heap_mib[2].1 - (10_240.0 * 100.0 + 3072.0 + 1025.0 * 65_536.0) / 1_048_576.0).abs() < 1e-9);
        // A repeat cut short after one count has no slope; one after two counts has its own.
        let cut = idle_only("cut", 100, &[164], Some("died"));
        assert_eq!(cut.kib_per_connection(Held::Idle, &connections), None);
        assert_eq!(cut.kept_mib(), None);
        assert_eq!(cut.heap_kib_per_connection(&connections), None, "no heap points");
        // A server that closed the first 512 idle connections (its keep-alive timeout) by the last
        // reading: the slope is over the 512 it still held, whatever was asked.
        let closed = MemoryRepeat {
            idle: vec![held(100), held(100 + 512 * 30)],
            idle_held: vec![1, 513],
            heap: Some(HeapPoints { baseline_bytes: 0, idle_bytes: vec![0, 512 * 20 * 1024], idle_held: vec![1, 513] }),
            ..server.repeats[0].clone()
        };
        let closed = MemoryServer { name: "closes".into(), repeats: vec![closed], error: None };
        let (asked, idle) = ([1, 1025], closed.kib_per_connection(Held::Idle, &[1, 1025]).unwrap());
        assert!((idle.mean - 30.0).abs() < 1e-9, "{idle:?}");
        assert!((closed.heap_kib_per_connection(&asked).unwrap().mean - 20.0).abs() < 1e-9);
        assert_eq!(closed.fewest_held(&asked), Some((513, 1025)));
        assert_eq!(server.fewest_held(&connections), None, "every connection held");
        let two = idle_only("two", 0, &[0, 6400], None);
        assert_eq!(two.kib_per_connection(Held::Idle, &connections).unwrap().mean, 100.0, "over 1 → 65");
    }
}
