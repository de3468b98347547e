//! `spiel-mcts:sims=N[,rollouts=R,c=C,seed=S]`: OpenSpiel's MCTS bot, run
//! by Python ([`crate::search::spiel_bot`]).

use super::{bad, Options, PlayerKind};
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::spiel_bot::{spiel_mcts_player, SpielMctsOptions};
use crate::search::{Player, SearchError};
use std::fmt;
use std::sync::Arc;

/// A `spiel-mcts` spec: its options as given, read when the bot is built.
#[derive(Clone, Debug, PartialEq)]
pub struct SpielMctsSpec(pub Vec<(String, String)>);

impl fmt::Display for SpielMctsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("spiel-mcts")?;
        if self.0.is_empty() {
            return Ok(());
        }
        let parts: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(f, ":{}", parts.join(","))
    }
}

impl PlayerKind for SpielMctsSpec {
    const NAMES: &'static [&'static str] = &["spiel-mcts"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let keys = ["sims", "rollouts", "c", "seed", "impl", "python", "timeout"];
        let opts = Options::parse(text, name, args, &keys)?;
        Ok(SpielMctsSpec(
            opts.pairs()
                .iter()
                .map(|&(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ))
    }

    fn build<G: GameSupport>(&self, _: &PlayerContext) -> Result<Arc<dyn Player<G>>, SearchError> {
        if G::SPIEL_NAME.is_none() {
            return Err(bad(
                &self.to_string(),
                format!(
                    "OpenSpiel's MCTS plays amazons, pentago, gomoku, tictactoe, connect-four and atari-go, not {}",
                    G::NAME
                ),
            ));
        }
        let pairs: Vec<(&str, &str)> = self
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let opts = SpielMctsOptions::from_pairs(&pairs)
            .map_err(|why| bad(&self.to_string(), why.to_string()))?;
        spiel_mcts_player::<G>(opts)
    }
}
