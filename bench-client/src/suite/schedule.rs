//! The order of runs in a round: the floor first, then each scenario's
//! variants back to back, baseline first in odd rounds and last in even
//! rounds, so a slow drift of the machine favours neither side.

use crate::model::{Scenario, Variant};

/// One measured run of a round: what to load and where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Scenario (`Floor` for `/plaintext`).
    pub scenario: Scenario,
    /// Variant; its route is what is loaded.
    pub variant: Variant,
    /// Round, from 1.
    pub round: u32,
    /// Position within the round, from 1.
    pub position: u32,
}

/// The runs of `round` (from 1): the floor, then each scenario's variants,
/// baseline first in odd rounds and second in even rounds.
pub fn round(scenarios: &[Scenario], round: u32) -> Vec<Slot> {
    let mut slots = vec![Slot { scenario: Scenario::Floor, variant: Variant::Plaintext, round, position: 1 }];
    for &scenario in scenarios {
        let mut variants = scenario.variants().to_vec();
        if round.is_multiple_of(2) {
            variants.reverse();
        }
        for variant in variants {
            let position = u32::try_from(slots.len()).unwrap_or(u32::MAX) + 1;
            slots.push(Slot { scenario, variant, round, position });
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_alternate_which_variant_goes_first() {
        let odd = round(&[Scenario::Payload, Scenario::State], 1);
        let even = round(&[Scenario::Payload, Scenario::State], 2);
        let names = |s: &[Slot]| s.iter().map(|r| r.variant.name()).collect::<Vec<_>>();
        assert_eq!(names(&odd), ["plaintext", "per_request", "preserialized", "cached", "fat", "arc"]);
        assert_eq!(names(&even), ["plaintext", "cached", "preserialized", "per_request", "arc", "fat"]);
        assert_eq!(even.iter().map(|r| r.position).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
    }
}
