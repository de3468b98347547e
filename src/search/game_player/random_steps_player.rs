//! The `random-steps` player (Arimaa).

use super::spec::GamePlayerSpec;
use crate::games::GameSupport;
use crate::search::Chosen;
use crate::search::{Budget, Player, SearchError};
use crate::util::SeededRng;

/// `random-steps` (Arimaa): see [`crate::game::arimaa::random_steps`].
pub struct RandomStepsPlayer {
    pub(super) end: f64,
}

impl<G: GameSupport> Player<G> for RandomStepsPlayer {
    fn name(&self) -> String {
        GamePlayerSpec::RandomSteps { end: self.end }.to_string()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        state
            .random_steps_move(self.end, rng, &mut Vec::new())
            .ok_or(SearchError::NoMoves)
    }
}
