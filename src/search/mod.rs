//! Players: something that picks a move in a position.
//!
//! Players are `Send + Sync` and keep no per-game state; the randomness they
//! use comes from the caller's seeded generator, so a match is reproducible
//! from its seed whatever the number of threads.

pub mod alphabeta;
pub mod arimaa_material;
mod error;
mod expert;
pub mod game_player;
mod greedy;
pub mod naive;
mod random;
mod spec;

pub use alphabeta::{search as alphabeta_search, PositionEval, SearchLimits, SearchResult};
pub use error::SearchError;
pub use expert::{ExpertPlayer, ImmediateWins};
pub use greedy::greedy_choice;
pub use greedy::GreedyPlayer;
pub use naive::NaivePlayer;
pub use random::RandomPlayer;
pub use spec::{build_tictactoe_player, PlayerSpec};

use crate::game::Game;
use crate::util::SeededRng;

pub trait Player<G: Game>: Send + Sync {
    /// A short name for reports.
    fn name(&self) -> String;
    /// Picks a legal move; the game must not be over.
    fn choose(&self, state: &G, rng: &mut SeededRng) -> Result<G::Move, SearchError>;
}

/// Picks uniformly among `candidates` (non-empty).
pub(crate) fn pick<M: Copy>(candidates: &[M], rng: &mut SeededRng) -> M {
    use rand::RngExt;
    candidates[rng.random_range(0..candidates.len())]
}
