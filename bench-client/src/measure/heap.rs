//! Bytes a server allocates, counted: the server runs under valgrind's
//! memcheck with its heap tree kept (`--xtree-memory=full`), and `vgdb`'s
//! `xtmemory` command writes the tree's totals before and after a stretch
//! of requests. Its `totB` and `totBk` grow with every block allocated,
//! whatever is freed, so their difference is what the stretch allocated,
//! in bytes and in blocks; its `curB` is what is allocated and not yet
//! freed (live) when it is written, what `memory` reads per connection. Callgrind cannot give bytes (it sees the calls
//! into `malloc`, not their arguments) and DHAT answers no monitor command
//! in valgrind 3.19, so the bytes come from a memcheck process of their own.

use std::path::Path;

use anyhow::Context;

use super::counted::Vgdb;

/// What one stretch allocated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heap {
    /// Bytes asked of the allocator (each block's requested size).
    pub bytes: u64,
    /// Blocks allocated.
    pub blocks: u64,
}

/// A server process under memcheck with its heap tree, driven by `vgdb`.
#[derive(Debug)]
pub struct Memcheck {
    vgdb: Vgdb,
    /// Trees written so far (each to a file of its own, read and removed).
    taken: u32,
}

impl Memcheck {
    /// The arguments that run a program under memcheck keeping its heap
    /// tree, with only what the totals need: no leak check, no checks of
    /// undefined values (the slowest part of memcheck, and not asked here).
    pub fn wrapper(dir: &Path) -> Vec<String> {
        let [vgdb, prefix] = Vgdb::args(dir);
        vec![
            "valgrind".to_owned(),
            "--tool=memcheck".to_owned(),
            "--xtree-memory=full".to_owned(),
            "--undef-value-errors=no".to_owned(),
            "--leak-check=no".to_owned(),
            format!("--xtree-memory-file={}/xtmemory.final.%p", dir.display()),
            vgdb,
            prefix,
        ]
    }

    /// The process `pid`, started with [`Memcheck::wrapper`] and `dir`.
    pub fn attach(pid: u32, dir: &Path) -> Self {
        Self { vgdb: Vgdb { pid, dir: dir.to_owned() }, taken: 0 }
    }

    /// The heap tree's totals now, as written by memcheck.
    fn tree(&mut self) -> anyhow::Result<(String, std::path::PathBuf)> {
        self.taken += 1;
        let path = self.vgdb.dir.join(format!("xtmemory.{}.{}", self.vgdb.pid, self.taken));
        self.vgdb.monitor(&["xtmemory", &path.to_string_lossy()])?;
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read memcheck's heap tree {}", path.display()))?;
        let _ = std::fs::remove_file(&path);
        Ok((text, path))
    }

    /// The totals of the heap tree now.
    fn totals(&mut self) -> anyhow::Result<Heap> {
        let (text, path) = self.tree()?;
        parse_totals(&text).with_context(|| format!("{}: no totB and totBk totals", path.display()))
    }

    /// Bytes allocated and not freed now (the tree's `curB`): the heap the
    /// process holds, counted block by block.
    ///
    /// # Errors
    /// A monitor command that fails, or a tree that cannot be read.
    pub fn live_bytes(&mut self) -> anyhow::Result<u64> {
        let (text, path) = self.tree()?;
        total(&text, "curB").with_context(|| format!("{}: no curB total", path.display()))
    }

    /// What the server allocates while `work` runs.
    ///
    /// # Errors
    /// A monitor command that fails, `work`'s error, or a tree that cannot be read.
    pub fn count(&mut self, work: impl FnOnce() -> anyhow::Result<()>) -> anyhow::Result<Heap> {
        let before = self.totals()?;
        work()?;
        let after = self.totals()?;
        Ok(Heap { bytes: after.bytes.saturating_sub(before.bytes), blocks: after.blocks.saturating_sub(before.blocks) })
    }
}

/// The `totB` and `totBk` totals of a heap tree in callgrind's format
/// (`events: curB curBk totB totBk totFdB totFdBk`, then `totals: …`).
fn parse_totals(text: &str) -> Option<Heap> {
    Some(Heap { bytes: total(text, "totB")?, blocks: total(text, "totBk")? })
}

/// The total of the event `name` in a heap tree, read by the column its
/// `events:` line gives it.
fn total(text: &str, name: &str) -> Option<u64> {
    let mut events: Vec<&str> = Vec::new();
    let mut totals: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(names) = line.strip_prefix("events:") {
            events = names.split_whitespace().collect();
        } else if let Some(values) = line.strip_prefix("totals:") {
            totals = values.split_whitespace().collect();
        }
    }
    if totals.len() != events.len() {
        return None;
    }
    totals.get(events.iter().position(|e| *e == name)?)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heap_tree_gives_its_total_bytes_and_blocks_by_name() {
        let tree = "# callgrind format\nversion: 1\ncreator: xtree-1\npid: 28011\ncmd: server\n\n\
            events: curB  curBk  totB  totBk  totFdB  totFdBk \n\nfn=(1) main\n0 10 1 588 7 0 0\n\
            totals: 199733 821 588997 2370 389264 1549\n";
        assert_eq!(parse_totals(tree), Some(Heap { bytes: 588_997, blocks: 2_370 }));
        // The columns are read by name, not by place.
        let moved = "events: totBk totB\ntotals: 5 700\n";
        assert_eq!(parse_totals(moved), Some(Heap { bytes: 700, blocks: 5 }));
        assert_eq!(
            parse_totals("events: curB curBk\ntotals: 1 2\n"),
            None,
            "no cumulative totals: memcheck without =full"
        );
        assert_eq!(parse_totals("events: curB curBk totB totBk\n"), None, "no totals line");
        assert_eq!(total(tree, "curB"), Some(199_733), "live bytes");
        assert_eq!(total("events: curB curBk\ntotals: 1\n", "curB"), None, "a totals line short of its events");
        assert_eq!(total("events: curB\ntotals: x\n", "curB"), None, "not a count");
    }
}
