use super::{pick, Budget, Player};
use crate::game::Game;
use crate::search::{legal_or_none, Chosen};
use crate::util::SeededRng;

/// RANDOM: a uniformly random legal move.
pub struct RandomPlayer;

impl<G: Game> Player<G> for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        let moves = legal_or_none(state)?;
        Ok(pick(&moves, rng))
    }
}
