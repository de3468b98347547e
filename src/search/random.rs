use super::{pick, Budget, Player, SearchError};
use crate::game::Game;
use crate::util::SeededRng;

/// RANDOM: a uniformly random legal move.
pub struct RandomPlayer;

impl<G: Game> Player<G> for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose_within(
        &self,
        state: &G,
        _budget: &Budget,
        rng: &mut SeededRng,
    ) -> Result<G::Move, SearchError> {
        let mut moves = Vec::new();
        state.legal_moves(&mut moves);
        if moves.is_empty() {
            return Err(SearchError::NoMoves);
        }
        Ok(pick(&moves, rng))
    }
}
