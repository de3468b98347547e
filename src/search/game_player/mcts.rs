//! `mcts:sims=N[,threads=T,eval=NAME,...]`: Monte Carlo tree search
//! ([`MctsConfig`] lists the options).

use super::grammar::in_spec;
use super::{Options, PlayerKind};
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::mcts::MctsPlayer;
use crate::search::scorer::mcts_evaluator;
use crate::search::{Player, SearchError};
use std::sync::Arc;

pub use crate::search::mcts::MctsConfig;

impl PlayerKind for MctsConfig {
    const NAMES: &'static [&'static str] = &["mcts"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let opts = Options::parse(text, name, args, &MctsConfig::KEYS)?;
        MctsConfig::from_pairs(opts.pairs()).map_err(|why| opts.bad(why.to_string()))
    }

    fn build<G: GameSupport>(
        &self,
        ctx: &PlayerContext,
    ) -> Result<Arc<dyn Player<G>>, SearchError> {
        let eval = mcts_evaluator::<G>(self, ctx).map_err(in_spec(self))?;
        Ok(Arc::new(MctsPlayer::new(self.clone(), eval)?))
    }
}
