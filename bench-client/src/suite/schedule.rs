//! The order of runs in a round: the floor first, then each scenario's
//! variants. Paired by rounds, the variants are runs back to back, baseline
//! first in odd rounds and last in even rounds, so a slow drift of the
//! machine favours neither side. Paired by slices, a scenario is one run
//! whose variants alternate in blocks of slices `v0 v1 … vn vn … v1 v0`
//! (reversed in even rounds; the engine's [`Slicing::mirrored_block`] says
//! why this shape).

use crate::engine::Slicing;
use common::middleware::Middleware;

use crate::model::{Framework, Pairing, Scenario, Variant};

/// One run of a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// One route for the whole run.
    Single(Slot),
    /// A scenario's variants alternating in slices within one run.
    Sliced(Sliced),
}

/// A run of alternating slices (the engine's [`Slicing`] owns their
/// arithmetic and the block's shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sliced {
    /// The variants, with their places in the round; route `i` of the load
    /// is `slots[i].variant`.
    pub slots: Vec<Slot>,
    /// The route of each slice of a block.
    pub block: Vec<usize>,
}

impl Sliced {
    /// One round of `ab` on `path`: BEFORE's server is route 0, AFTER's
    /// route 1, alternating in blocks `0 1 1 0` (`1 0 0 1` in even rounds).
    pub fn before_after(path: &'static str, round: u32) -> Self {
        let variant = Variant::of_path(path).unwrap_or(Variant::Own);
        let slot = |scenario, server, position| Slot { scenario, variant, path, round, position, server };
        let block = Slicing::mirrored_block(2, round.is_multiple_of(2));
        Self { slots: vec![slot(Scenario::Before, 0, 1), slot(Scenario::After, 1, 2)], block }
    }
}

/// The runs of round `round_number` of the `frameworks` scenario over
/// `servers` servers (one per framework, server `i` the `i`-th): per route
/// of [`Scenario::Frameworks`] (and `/fortunes` when `scenarios` has
/// `fortunes`), one run alternating between the servers in mirrored blocks
/// (`0 1 2 2 1 0`, reversed in even rounds), each on connections of its own,
/// so that every pair of frameworks is paired within each block. The routes'
/// order is reversed in even rounds.
pub(super) fn rivals(scenarios: &[Scenario], round_number: u32, servers: usize) -> Vec<Step> {
    let mut variants = Scenario::Frameworks.variants().to_vec();
    if scenarios.contains(&Scenario::Fortunes) {
        variants.push(Variant::Fortunes);
    }
    if round_number.is_multiple_of(2) {
        variants.reverse();
    }
    let block = Slicing::mirrored_block(servers, round_number.is_multiple_of(2));
    variants
        .into_iter()
        .enumerate()
        .map(|(i, variant)| {
            let slots = (0..servers)
                .map(|server| Slot {
                    scenario: Scenario::Frameworks,
                    variant,
                    path: variant.label(),
                    round: round_number,
                    position: u32::try_from(i * servers + server + 1).unwrap_or(u32::MAX),
                    server,
                })
                .collect();
            Step::Sliced(Sliced { slots, block: block.clone() })
        })
        .collect()
}

/// The runs of round `round` (from 1) of `scenarios`, paired as `pairing`
/// says (the `frameworks` scenario apart: its own `rivals` schedule).
pub fn steps(scenarios: &[Scenario], round_number: u32, pairing: Pairing) -> Vec<Step> {
    let slots = round(scenarios, round_number);
    match pairing {
        Pairing::Rounds => slots.into_iter().map(Step::Single).collect(),
        Pairing::Slices => {
            let mut steps = vec![Step::Single(slots[0])];
            for &scenario in scenarios.iter().filter(|s| **s != Scenario::Frameworks) {
                let mut of: Vec<Slot> = slots.iter().copied().filter(|s| s.scenario == scenario).collect();
                of.sort_by_key(|s| scenario.variants().iter().position(|v| *v == s.variant));
                let block = Slicing::mirrored_block(of.len(), round_number.is_multiple_of(2));
                steps.push(Step::Sliced(Sliced { slots: of, block }));
            }
            steps
        }
    }
}

/// What a variant's own server is started with beyond the framework's
/// defaults: the `middleware` scenario's layers, the `routes` scenario's
/// filler routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct OwnServer {
    /// Its `--middleware` (empty: `none`); `None`: the framework's defaults.
    pub(super) middleware: Option<&'static [Middleware]>,
    /// Its `--filler-routes`.
    pub(super) filler_routes: u16,
}

/// Where `variant` of `scenario` is measured in `framework`'s rounds:
/// `Some(None)` on the framework's own server, `Some(Some(own))` on a
/// server of its own, `None` not at all (a layer the framework does not
/// offer).
fn placement(scenario: Scenario, variant: Variant, framework: Framework) -> Option<Option<OwnServer>> {
    match scenario {
        Scenario::Middleware => {
            variant.middleware(framework).map(|on| Some(OwnServer { middleware: Some(on), filler_routes: 0 }))
        }
        Scenario::Routes => {
            Some(variant.filler_routes().filter(|n| *n > 0).map(|n| OwnServer { middleware: None, filler_routes: n }))
        }
        _ => Some(None),
    }
}

/// The servers a round of `framework` starts beside its own for
/// `scenarios`, in order (server `i + 1` is the `i`-th), each with the
/// variants it serves.
pub(super) fn own_servers(scenarios: &[Scenario], framework: Framework) -> Vec<(OwnServer, Vec<Variant>)> {
    let mut own: Vec<(OwnServer, Vec<Variant>)> = Vec::new();
    for &scenario in scenarios {
        for &variant in scenario.variants() {
            let Some(Some(server)) = placement(scenario, variant, framework) else { continue };
            match own.iter_mut().find(|(s, _)| *s == server) {
                Some((_, variants)) => variants.push(variant),
                None => own.push((server, vec![variant])),
            }
        }
    }
    own
}

/// `steps` of `framework` with each slot on its server ([`own_servers`]):
/// those of a layer it does not offer left out, the block of slices made
/// again for the ones left.
pub(super) fn place_on_servers(
    steps: Vec<Step>,
    scenarios: &[Scenario],
    framework: Framework,
    round: u32,
) -> Vec<Step> {
    let own = own_servers(scenarios, framework);
    let place = |slot: &Slot| -> Option<Slot> {
        match placement(slot.scenario, slot.variant, framework)? {
            None => Some(*slot),
            Some(server) => Some(Slot { server: 1 + own.iter().position(|(s, _)| *s == server)?, ..*slot }),
        }
    };
    steps
        .into_iter()
        .filter_map(|step| match step {
            Step::Single(slot) => place(&slot).map(Step::Single),
            Step::Sliced(sliced) => {
                let slots: Vec<Slot> = sliced.slots.iter().filter_map(place).collect();
                let block = match slots.len() {
                    0 => return None,
                    n if n == sliced.slots.len() => sliced.block,
                    n => Slicing::mirrored_block(n, round.is_multiple_of(2)),
                };
                Some(Step::Sliced(Sliced { slots, block }))
            }
        })
        .collect()
}

/// One measured variant of a round: what to load and where it stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Scenario (`Floor` for `/plaintext`).
    pub scenario: Scenario,
    /// Variant.
    pub variant: Variant,
    /// The path loaded: the variant's (its [`Variant::label`], with the
    /// scheme for the `tls` scenario's), or with `ab` any path of the sides'
    /// servers (then the variant is [`Variant::Own`] when not in the table).
    pub path: &'static str,
    /// Round, from 1.
    pub round: u32,
    /// Position within the round, from 1.
    pub position: u32,
    /// Which of the round's servers it loads (the suite has one; `ab` has
    /// BEFORE, 0, and AFTER, 1).
    pub server: usize,
}

impl Slot {
    /// The path its requests fetch (without a label's scheme).
    pub fn request_path(&self) -> &'static str {
        match self.variant.route() {
            Some(route) => route.path(),
            None => self.path,
        }
    }
}

/// The runs of `round` (from 1): the floor, then each scenario's variants,
/// baseline first in odd rounds and second in even rounds.
pub fn round(scenarios: &[Scenario], round: u32) -> Vec<Slot> {
    let mut slots = vec![Slot {
        scenario: Scenario::Floor,
        variant: Variant::Plaintext,
        path: Variant::Plaintext.path(),
        round,
        position: 1,
        server: 0,
    }];
    for &scenario in scenarios.iter().filter(|s| **s != Scenario::Frameworks) {
        let mut variants = scenario.variants().to_vec();
        if round.is_multiple_of(2) {
            variants.reverse();
        }
        for variant in variants {
            let position = u32::try_from(slots.len()).unwrap_or(u32::MAX) + 1;
            slots.push(Slot { scenario, variant, path: variant.label(), round, position, server: 0 });
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

    #[test]
    fn slices_alternate_in_palindromic_blocks_reversed_every_other_round() {
        let odd = steps(&[Scenario::Payload, Scenario::State], 1, Pairing::Slices);
        assert!(matches!(odd[0], Step::Single(Slot { variant: Variant::Plaintext, .. })));
        let Step::Sliced(payload) = &odd[1] else { panic!("{odd:?}") };
        assert_eq!(
            payload.slots.iter().map(|s| s.variant).collect::<Vec<_>>(),
            [Variant::PerRequest, Variant::Preserialized, Variant::Cached]
        );
        assert_eq!(payload.block, [0, 1, 2, 2, 1, 0]);
        let Step::Sliced(state) = &steps(&[Scenario::State], 2, Pairing::Slices)[1] else { panic!() };
        assert_eq!(state.block, [1, 0, 0, 1]);
        assert_eq!(steps(&[Scenario::State], 1, Pairing::Rounds).len(), 3);
        let Step::Sliced(fortunes) = &steps(&[Scenario::Fortunes], 1, Pairing::Slices)[1] else { panic!() };
        assert_eq!(
            fortunes.slots.iter().map(|s| s.variant).collect::<Vec<_>>(),
            [Variant::Fortunes, Variant::FortunesCached]
        );
        assert_eq!(fortunes.block, [0, 1, 1, 0]);
    }

    #[test]
    fn middleware_slots_go_to_their_own_servers_and_a_layer_not_offered_is_left_out() {
        let odd = place_on_servers(
            steps(&[Scenario::Middleware], 1, Pairing::Slices),
            &[Scenario::Middleware],
            Framework::Actix,
            1,
        );
        let Step::Sliced(sliced) = &odd[1] else { panic!("{odd:?}") };
        let placed: Vec<(Variant, usize)> = sliced.slots.iter().map(|s| (s.variant, s.server)).collect();
        assert_eq!(
            placed,
            [
                (Variant::Bare, 1),
                (Variant::Trace, 2),
                (Variant::Cors, 3),
                (Variant::SecurityHeaders, 4),
                (Variant::Compression, 5),
                (Variant::Stacked, 6)
            ]
        );
        assert_eq!(sliced.block, [0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0]);
        assert!(matches!(odd[0], Step::Single(Slot { server: 0, .. })), "the floor on the framework's own server");
        assert_eq!(own_servers(&[Scenario::Middleware], Framework::Axum).len(), 8);
        let rounds = place_on_servers(
            steps(&[Scenario::Middleware], 2, Pairing::Rounds),
            &[Scenario::Middleware],
            Framework::Rocket,
            2,
        );
        assert_eq!(rounds.len(), 1 + 6, "the floor, then rocket's six variants one run each");
    }

    #[test]
    fn routes_slots_share_a_server_per_count_of_filler_routes_after_the_middleware_ones() {
        let scenarios = [Scenario::Middleware, Scenario::Routes];
        let own = own_servers(&scenarios, Framework::Axum);
        let fillers: Vec<(u16, usize)> = own.iter().map(|(s, v)| (s.filler_routes, v.len())).collect();
        assert_eq!(fillers[8..], [(10, 2), (100, 2), (1000, 2)], "{fillers:?}");
        let placed = place_on_servers(steps(&scenarios, 1, Pairing::Slices), &scenarios, Framework::Axum, 1);
        let Step::Sliced(routes) = &placed[2] else { panic!("{placed:?}") };
        let servers: Vec<usize> = routes.slots.iter().map(|s| s.server).collect();
        assert_eq!(servers, [0, 9, 10, 11, 0, 9, 10, 11], "the 0 variants on the framework's own server");
        assert_eq!(routes.block.len(), 16);
    }

    #[test]
    fn frameworks_alternate_between_servers_route_by_route_and_not_among_the_variants() {
        let with = [Scenario::Payload, Scenario::Frameworks];
        assert_eq!(round(&with, 1), round(&[Scenario::Payload], 1), "no slot of its own in a framework's round");
        assert_eq!(steps(&with, 1, Pairing::Slices).len(), 2, "the floor and payload");
        let odd = rivals(&with, 1, 3);
        let routes = |steps: &[Step]| -> Vec<&str> {
            steps
                .iter()
                .map(|s| match s {
                    Step::Sliced(s) => s.slots[0].path,
                    Step::Single(s) => s.path,
                })
                .collect()
        };
        assert_eq!(routes(&odd), ["/plaintext", "/api/devices", "/api/devices/preserialized", "/state/arc"]);
        let Step::Sliced(first) = &odd[0] else { panic!("{odd:?}") };
        assert_eq!(first.slots.iter().map(|s| s.server).collect::<Vec<_>>(), [0, 1, 2]);
        assert!(first.slots.iter().all(|s| s.scenario == Scenario::Frameworks && s.round == 1));
        assert_eq!(first.block, [0, 1, 2, 2, 1, 0]);
        let even = rivals(&[Scenario::Fortunes, Scenario::Frameworks], 2, 2);
        assert_eq!(
            routes(&even),
            ["/fortunes", "/state/arc", "/api/devices/preserialized", "/api/devices", "/plaintext"]
        );
        let Step::Sliced(first) = &even[0] else { panic!("{even:?}") };
        assert_eq!(first.block, [1, 0, 0, 1]);
    }
}
