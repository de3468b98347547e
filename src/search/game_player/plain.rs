//! The players that take no options and no evaluator: `random` (uniform
//! over the legal moves), `naive` (wins at once, avoids losing at once,
//! else random) and `expert` (wins at once, else blocks an immediate win,
//! else random; games with immediate wins).

use super::{bad, Options, PlayerKind};
use crate::game::Side;
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::{ExpertPlayer, NaivePlayer, Player, RandomPlayer, SearchError};
use std::fmt;
use std::sync::Arc;

/// `random` ([`RandomPlayer`]), `naive` ([`NaivePlayer`]) or `expert`
/// ([`ExpertPlayer`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlainSpec {
    Random,
    Naive,
    Expert,
}

impl fmt::Display for PlainSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlainSpec::Random => "random",
            PlainSpec::Naive => "naive",
            PlainSpec::Expert => "expert",
        })
    }
}

impl PlayerKind for PlainSpec {
    const NAMES: &'static [&'static str] = &["random", "naive", "expert"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        Options::parse(text, name, args, &[])?;
        Ok(match name {
            "random" => PlainSpec::Random,
            "naive" => PlainSpec::Naive,
            _ => PlainSpec::Expert,
        })
    }

    fn build<G: GameSupport>(&self, _: &PlayerContext) -> Result<Arc<dyn Player<G>>, SearchError> {
        Ok(match self {
            PlainSpec::Random => Arc::new(RandomPlayer),
            PlainSpec::Naive => Arc::new(NaivePlayer),
            PlainSpec::Expert => {
                if G::new().immediate_wins(Side::First).is_none() {
                    return Err(bad(
                        &self.to_string(),
                        format!("expert plays tictactoe and gomoku, not {}", G::NAME),
                    ));
                }
                Arc::new(ExpertPlayer)
            }
        })
    }
}
