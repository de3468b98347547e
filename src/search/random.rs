use super::{Budget, Player, SearchError};
use crate::game::Game;
use crate::search::Chosen;
use crate::util::SeededRng;

/// RANDOM: a uniformly random legal move, drawn by the game's own sampler
/// ([`Game::random_move`], which may skip building the move list).
pub struct RandomPlayer;

impl<G: Game> Player<G> for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        state
            .random_move(rng, &mut Vec::new())
            .ok_or(SearchError::NoMoves)
    }
}
