//! How games start: the standard position, or Arimaa's two setups.

use crate::game::arimaa::SetupSampler;
use std::sync::Arc;

/// How games start: the standard position, or for Arimaa the two setups.
#[derive(Clone, Debug)]
pub enum Openings {
    /// The game's start position at the configured size.
    Standard,
    /// Arimaa: gold's and silver's setups drawn independently from these.
    Setups(Arc<SetupSampler>),
    /// Arimaa: uniformly random setups.
    RandomSetups,
}

/// Openings resolved from `--setups`, with how reports name them.
#[derive(Clone, Debug)]
pub struct OpeningsChoice {
    pub openings: Openings,
    /// `standard`, `archive:...`, `random` or `file:PATH`.
    pub name: String,
    /// The sha256 of a setups file, for run configurations.
    pub file_sha256: Option<String>,
}

impl OpeningsChoice {
    /// The standard position.
    pub fn standard() -> Self {
        OpeningsChoice {
            openings: Openings::Standard,
            name: "standard".into(),
            file_sha256: None,
        }
    }
}

/// Draws `plies` uniformly random moves from `state` with `rng` (the
/// game's own stream), never one that ends the game: a random opening
/// diversifies matches between deterministic players. Stops early where
/// every move would end the game. Returns the moves, so that players which
/// rebuild positions from the moves since the start can be told them.
pub fn random_opening<G: crate::game::Game>(
    state: &G,
    plies: usize,
    rng: &mut crate::util::SeededRng,
) -> Vec<G::Move> {
    use rand::seq::IndexedRandom;
    let mut state = state.clone();
    let mut opening = Vec::with_capacity(plies);
    let mut legal = Vec::new();
    let mut quiet = Vec::new();
    for _ in 0..plies {
        if state.outcome().is_some() {
            break;
        }
        state.legal_moves(&mut legal);
        quiet.clear();
        quiet.extend(legal.iter().copied().filter(|&m| {
            let mut next = state.clone();
            next.play(m);
            next.outcome().is_none()
        }));
        match quiet.choose(rng) {
            Some(&m) => {
                state.play(m);
                opening.push(m);
            }
            None => break,
        }
    }
    opening
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, Pentago, TicTacToe};
    use crate::util::seeded_rng;

    fn after<G: Game>(start: G, plies: usize, seed: u64, stream: u64) -> G {
        let mut g = start.clone();
        for m in random_opening(&start, plies, &mut seeded_rng(seed, stream)) {
            g.play(m);
        }
        g
    }

    #[test]
    fn random_openings_play_that_many_plies_from_the_seed() {
        let a = after(Pentago::new(), 6, 3, 1);
        let b = after(Pentago::new(), 6, 3, 1);
        assert_eq!(a.ply(), 6);
        assert_eq!(a.to_text(), b.to_text());
        let differ = (2..10).any(|s| after(Pentago::new(), 6, 3, s).to_text() != a.to_text());
        assert!(differ, "every stream gave the same opening");
        assert!(random_opening(&Pentago::new(), 0, &mut seeded_rng(3, 1)).is_empty());
    }

    #[test]
    fn a_random_opening_never_ends_the_game() {
        for s in 0..50 {
            // Nine plies would fill the board: the opening stops short of
            // any move that finishes the game.
            let g = after(TicTacToe::new(), 9, 4, s);
            assert!(g.outcome().is_none(), "{}", g.to_text());
            assert!(g.ply() >= 4);
        }
    }
}
