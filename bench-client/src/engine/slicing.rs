//! Routes measured in alternation, the one owner of slicing: time is cut
//! into slices of the timing's window (counted from the start of the
//! measured windows, backwards through the warm-up), and every request
//! written during a slice goes to that slice's route. Responses count to the
//! route of their request, in the window they complete in: a route's own
//! slices hold its rate, and its completions that fall in another route's
//! slice (the one round trip after each switch) are the transition.

use std::time::Duration;

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

    /// The route of slice `index`, counted from the start of the measured
    /// windows (negative: in the warm-up).
    pub fn route_of(&self, index: i128) -> usize {
        self.block[usize::try_from(index.rem_euclid(self.block.len() as i128)).unwrap_or(0)]
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
        assert_eq!((0..8).map(|i| s.route_of(i)).collect::<Vec<_>>(), [0, 1, 2, 2, 1, 0, 0, 1]);
        assert_eq!(s.route_of(-1), 0, "the warm-up counts backwards");
        assert_eq!(s.route_of(-2), 1);
        assert!(Slicing::new(3, vec![0, 1, 1, 0]).is_err(), "route 2 left out");
        assert!(Slicing::new(2, vec![0, 1, 2]).is_err(), "no route 2");
        assert!(Slicing::new(0, vec![]).is_err());
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
