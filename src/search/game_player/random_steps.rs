//! `random-steps[:end=P]` (Arimaa): a turn built one random step at a
//! time, ending after each step with probability `end`.

use super::{bad, Options, PlayerKind};
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::{Budget, Chosen, Player, SearchError};
use crate::util::SeededRng;
use std::fmt;
use std::sync::Arc;

/// The default chance of ending a `random-steps` turn after each step.
pub const DEFAULT_END_PROB: f64 = 0.1;

/// A `random-steps` spec.
#[derive(Clone, Debug, PartialEq)]
pub struct RandomStepsSpec {
    pub end: f64,
}

impl fmt::Display for RandomStepsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.end == DEFAULT_END_PROB {
            f.write_str("random-steps")
        } else {
            write!(f, "random-steps:end={}", self.end)
        }
    }
}

impl PlayerKind for RandomStepsSpec {
    const NAMES: &'static [&'static str] = &["random-steps"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let opts = Options::parse(text, name, args, &["end"])?;
        let end = opts
            .read("end", "a probability in 0..=1", |t| {
                t.parse().ok().filter(|p: &f64| (0.0..=1.0).contains(p))
            })?
            .unwrap_or(DEFAULT_END_PROB);
        Ok(RandomStepsSpec { end })
    }

    fn build<G: GameSupport>(&self, _: &PlayerContext) -> Result<Arc<dyn Player<G>>, SearchError> {
        if !G::RANDOM_STEPS {
            return Err(bad(
                &self.to_string(),
                format!("random-steps is an Arimaa player, not one for {}", G::NAME),
            ));
        }
        Ok(Arc::new(RandomStepsPlayer { end: self.end }))
    }
}

/// `random-steps` (Arimaa): see [`crate::game::arimaa::random_steps`].
pub struct RandomStepsPlayer {
    end: f64,
}

impl<G: GameSupport> Player<G> for RandomStepsPlayer {
    fn name(&self) -> String {
        RandomStepsSpec { end: self.end }.to_string()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        state
            .random_steps_move(self.end, rng, &mut Vec::new())
            .ok_or(SearchError::NoMoves)
    }
}
