//! Routes measured in alternation, the one owner of slicing: time is cut
//! into slices of the timing's window (counted from the start of the
//! measured windows, backwards through the warm-up), and every request
//! written during a slice goes to that slice's route. Responses count to the
//! route of their request, in the window they complete in: a route's own
//! slices hold its rate, and its completions that fall in another route's
//! slice (the one round trip after each switch) are the transition.

use std::time::{Duration, Instant};

use super::{Timing, TimingError};

/// The route of each slice of a block; blocks repeat. The slice's length is
/// the load's window: one value, stored once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slicing {
    block: Vec<usize>,
}

/// Why a [`Slicing`] was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SlicingError {
    /// The block is empty, names a route it does not have, or leaves one out.
    #[error("a block of slices must name each of its {routes} routes at least once, and only those: {block:?}")]
    BadBlock {
        /// Routes of the load.
        routes: usize,
        /// The block given.
        block: Vec<usize>,
    },
    /// The timing of the blocks.
    #[error(transparent)]
    Timing(#[from] TimingError),
}

impl Slicing {
    /// Slices of `routes` routes in the order of `block`.
    ///
    /// # Errors
    /// [`SlicingError::BadBlock`] unless `block` names every route in
    /// `0..routes` and nothing else.
    pub fn new(routes: usize, block: Vec<usize>) -> Result<Self, SlicingError> {
        let names_all = (0..routes).all(|r| block.contains(&r));
        if routes == 0 || !names_all || block.iter().any(|&r| r >= routes) {
            return Err(SlicingError::BadBlock { routes, block });
        }
        Ok(Self { block })
    }

    /// The route of each slice of a block.
    pub fn block(&self) -> &[usize] {
        &self.block
    }

    /// The block of `routes` routes there and back, `0 1 … n n … 1 0`
    /// (`backward`: `n … 1 0 0 1 … n`): each route has two slices per block,
    /// placed symmetrically about its middle, so that a linear drift within
    /// a block cancels in every ratio, and each route follows a switch once
    /// per block. The one place this shape is written.
    pub fn mirrored_block(routes: usize, backward: bool) -> Vec<usize> {
        let there = (0..routes).chain((0..routes).rev());
        if backward { there.map(|r| routes - 1 - r).collect() } else { there.collect() }
    }

    /// The length of a slice (the timing's window) as [`Slicing::slice_at`]
    /// divides it: nanoseconds, at least 1, computed once per run.
    pub fn slice_ns(slice: Duration) -> i64 {
        i64::try_from(slice.as_nanos()).unwrap_or(i64::MAX).max(1)
    }

    /// Nanoseconds from `from` to `at`, negative when `at` comes first: the
    /// signed clock that [`Slicing::slice_at`] divides (an `i64` spans 292
    /// years, and its division is one machine instruction).
    #[inline]
    pub fn offset_ns(at: Instant, from: Instant) -> i64 {
        match at.checked_duration_since(from) {
            Some(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
            None => -i64::try_from((from - at).as_nanos()).unwrap_or(i64::MAX),
        }
    }

    /// The slice that the instant `offset_ns` after the start of the
    /// measured windows falls in, in slices of `slice_ns` (the timing's
    /// window, positive): counted from 0 at the measure start, negative
    /// through the warm-up (floor division, so the slice before the start
    /// is -1).
    #[inline]
    pub fn slice_at(offset_ns: i64, slice_ns: i64) -> i64 {
        offset_ns.div_euclid(slice_ns)
    }

    /// Where slice `slice` starts, nanoseconds after the measure start.
    #[inline]
    pub fn slice_start_ns(slice: i64, slice_ns: i64) -> i64 {
        slice.saturating_mul(slice_ns)
    }

    /// The route of slice `slice` ([`Slicing::slice_at`]): `block[slice mod
    /// len]`, blocks repeating from the measure start both ways.
    #[inline]
    pub fn route_of_slice(&self, slice: i64) -> usize {
        // rem_euclid is in 0..len, so the index is in bounds.
        self.block[slice.rem_euclid(self.block.len() as i64) as usize]
    }

    /// The route of the instant `offset_ns` after the measure start, in
    /// slices of `slice_ns`: what the engine asks per request, two integer
    /// divisions and no allocation.
    #[inline]
    pub fn route_at(&self, offset_ns: i64, slice_ns: i64) -> usize {
        self.route_of_slice(Self::slice_at(offset_ns, slice_ns))
    }

    /// Blocks in which each route gets `own` of its own time in slices of
    /// `slice` (rounded to whole blocks, at least one).
    pub fn blocks_for(&self, own: Duration, slice: Duration) -> u32 {
        let routes = self.block.iter().max().map_or(1, |&r| r + 1);
        let per_block = self.block.len() / routes;
        let own_per_block = slice * u32::try_from(per_block).unwrap_or(1);
        u32::try_from((own.as_nanos() as f64 / own_per_block.as_nanos().max(1) as f64).round() as u64)
            .unwrap_or(1)
            .max(1)
    }

    /// The timing of a run in which every route gets `own` of its own time
    /// in slices of `slice`, after `warmup`: the window is the slice.
    ///
    /// # Errors
    /// A timing out of the engine's bounds ([`Timing::new`]).
    pub fn timing(&self, warmup: Duration, own: Duration, slice: Duration) -> Result<Timing, SlicingError> {
        let slices = self.blocks_for(own, slice).saturating_mul(u32::try_from(self.block.len()).unwrap_or(u32::MAX));
        Ok(Timing::new(warmup, slice.saturating_mul(slices), slice)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_names_every_route_and_the_slices_repeat_it_from_the_measure_start() {
        let s = Slicing::new(3, vec![0, 1, 2, 2, 1, 0]).unwrap();
        assert_eq!((0..8).map(|i| s.route_of_slice(i)).collect::<Vec<_>>(), [0, 1, 2, 2, 1, 0, 0, 1]);
        assert_eq!(s.route_of_slice(-1), 0, "the warm-up counts backwards");
        assert_eq!(s.route_of_slice(-2), 1);
        assert!(Slicing::new(3, vec![0, 1, 1, 0]).is_err(), "route 2 left out");
        assert!(Slicing::new(2, vec![0, 1, 2]).is_err(), "no route 2");
        assert!(Slicing::new(0, vec![]).is_err());
    }

    #[test]
    fn the_block_goes_there_and_back_and_backward_reverses_it() {
        assert_eq!(Slicing::mirrored_block(3, false), [0, 1, 2, 2, 1, 0]);
        assert_eq!(Slicing::mirrored_block(3, true), [2, 1, 0, 0, 1, 2]);
        assert_eq!(Slicing::mirrored_block(2, true), [1, 0, 0, 1]);
        assert_eq!(Slicing::mirrored_block(1, false), [0, 0]);
        assert!(Slicing::mirrored_block(0, false).is_empty());
    }

    #[test]
    fn an_instant_falls_in_the_slice_that_holds_it_counting_back_through_the_warm_up() {
        let s = Slicing::new(2, vec![0, 1, 1, 0]).unwrap();
        let ms = 1_000_000;
        assert_eq!(Slicing::slice_at(0, 250 * ms), 0);
        assert_eq!(Slicing::slice_at(250 * ms - 1, 250 * ms), 0);
        assert_eq!(Slicing::slice_at(250 * ms, 250 * ms), 1);
        assert_eq!(Slicing::slice_at(-1, 250 * ms), -1, "just before the start: the last warm-up slice");
        assert_eq!(Slicing::slice_at(-250 * ms, 250 * ms), -1);
        assert_eq!(Slicing::slice_at(-250 * ms - 1, 250 * ms), -2);
        assert_eq!(Slicing::slice_start_ns(Slicing::slice_at(-1, 250 * ms) + 1, 250 * ms), 0);
        assert_eq!(s.route_at(600 * ms, 250 * ms), 1, "slice 2");
        assert_eq!(s.route_at(800 * ms, 250 * ms), 0, "slice 3");
        assert_eq!(s.route_at(-1, 250 * ms), 0, "slice -1 is the block's last");
        let start = Instant::now();
        let later = start + Duration::from_millis(3);
        assert_eq!(Slicing::offset_ns(later, start), 3 * ms);
        assert_eq!(Slicing::offset_ns(start, later), -3 * ms);
    }

    #[test]
    fn blocks_give_each_route_its_own_time_in_whole_blocks() {
        let ms = Duration::from_millis;
        let s = Slicing::new(2, vec![0, 1, 1, 0]).unwrap();
        // Each route has two slices of 250 ms per block: 3 s of its own is 6 blocks.
        assert_eq!(s.blocks_for(Duration::from_secs(3), ms(250)), 6);
        assert_eq!(s.blocks_for(ms(100), ms(250)), 1, "at least one block");
        let t = s.timing(Duration::from_secs(1), Duration::from_secs(3), ms(250)).unwrap();
        assert_eq!((t.warmup(), t.duration(), t.window()), (Duration::from_secs(1), Duration::from_secs(6), ms(250)));
        let three = Slicing::new(3, vec![0, 1, 2, 2, 1, 0]).unwrap();
        assert_eq!(three.blocks_for(Duration::from_secs(3), ms(250)), 6);
        assert!(matches!(
            s.timing(Duration::ZERO, Duration::from_secs(3), Duration::from_micros(1)),
            Err(SlicingError::Timing(TimingError::WindowTooShort { .. }))
        ));
    }
}
