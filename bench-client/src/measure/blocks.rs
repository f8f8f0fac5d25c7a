//! Latency per block of an open-loop alternation: each route's percentiles
//! over the windows of one block of slices, so that a change of a
//! percentile can be paired block by block as a change of the rate is.
//! A block's percentile is read from every success of the route completed
//! in the block's windows (its own slices and the round trip after each
//! switch), from the time each request was due.

use serde::{Deserialize, Serialize};

use crate::engine::{RunStats, Slicing, latency_histogram};

/// The percentiles compared per block, with the fewest successful requests
/// a block needs for each: ten beyond it (10 / (1 − q)), so that the
/// percentile is read from at least ten requests of the tail and not from
/// the one or two slowest.
pub const BLOCK_PERCENTILES: [(&str, f64, u64); 4] =
    [("p50", 0.50, 20), ("p90", 0.90, 100), ("p99", 0.99, 1_000), ("p99.9", 0.999, 10_000)];

/// One route's latency in one block of slices, microseconds (corrected for
/// coordinated omission: from when each request was due).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockLatency {
    /// Successful requests of the route completed in the block.
    pub requests: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    #[serde(rename = "p99.9")]
    pub p999: u64,
}

impl BlockLatency {
    /// The percentile named as in [`BLOCK_PERCENTILES`], when the block holds
    /// enough requests for it.
    pub fn get(&self, name: &str) -> Option<u64> {
        let &(_, _, needs) = BLOCK_PERCENTILES.iter().find(|(n, ..)| *n == name)?;
        let value = match name {
            "p50" => self.p50,
            "p90" => self.p90,
            "p99" => self.p99,
            _ => self.p999,
        };
        (self.requests >= needs).then_some(value)
    }
}

/// The latency of `route` per block of `slicing`, over the first `lived`
/// windows (whole blocks only); empty when `route` kept no latency per
/// window (not an open-loop alternation).
pub(super) fn block_latency(route: &RunStats, slicing: &Slicing, lived: usize) -> Vec<BlockLatency> {
    let per_window = &route.window_latency_us;
    let block = slicing.block().len();
    if per_window.is_empty() || block == 0 {
        return Vec::new();
    }
    per_window[..lived.min(per_window.len())]
        .chunks_exact(block)
        .map(|windows| {
            let mut h = latency_histogram();
            for w in windows.iter().flatten() {
                h.add(w).expect("same histogram bounds");
            }
            let at = |q: f64| h.value_at_quantile(q);
            BlockLatency { requests: h.len(), p50: at(0.50), p90: at(0.90), p99: at(0.99), p999: at(0.999) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_reads_its_windows_together_and_a_percentile_needs_ten_requests_beyond_it() {
        // Two routes alternating 0 1 1 0: blocks of four windows.
        let slicing = Slicing::new(2, vec![0, 1, 1, 0]).unwrap();
        let mut stats = RunStats::new(9, true);
        stats.keep_window_latency();
        // Block 0: 990 requests of 100 µs in window 0, 10 of 5 ms in window 1 (the switch).
        for _ in 0..990 {
            stats.record_success(0, 100, 100);
        }
        for _ in 0..10 {
            stats.record_success(1, 5_000, 5_000);
        }
        // Block 1: 50 requests of 200 µs.
        for _ in 0..50 {
            stats.record_success(4, 200, 200);
        }
        // Window 8 starts a third block that the run did not finish.
        stats.record_success(8, 300, 300);
        let blocks = block_latency(&stats, &slicing, 9);
        assert_eq!(blocks.len(), 2, "the unfinished block is left out");
        assert_eq!((blocks[0].requests, blocks[0].p50, blocks[0].p90), (1000, 100, 100));
        assert_eq!(blocks[0].p99, 100, "the 990th of 1,000 is still 100 µs");
        assert!((4_995..=5_005).contains(&blocks[0].p999), "{:?}", blocks[0]);
        assert_eq!(blocks[0].get("p99"), Some(100), "1,000 requests are enough for p99");
        assert_eq!(blocks[0].get("p99.9"), None, "not for p99.9");
        assert_eq!((blocks[1].requests, blocks[1].get("p50"), blocks[1].get("p90")), (50, Some(200), None));
        assert!(block_latency(&RunStats::new(9, true), &slicing, 9).is_empty(), "no latency per window kept");
        assert_eq!(block_latency(&stats, &slicing, 6).len(), 1, "an interrupted run: whole blocks it lived");
    }
}
