//! `steps[:depth=S,time=SECS,nodes=N,eval=NAME]` (Arimaa): alpha-beta over
//! single steps, `depth` in steps ([`crate::search::steps::player`]).

use super::grammar::{in_spec, SearchOptions, SEARCH_KEYS};
use super::{bad, Options, PlayerKind};
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::steps::player::{step_search_player_for, MAX_STEPS, MIN_STEPS};
use crate::search::{Player, SearchError};
use std::sync::Arc;

pub use crate::search::steps::player::StepsSpec;

impl PlayerKind for StepsSpec {
    const NAMES: &'static [&'static str] = &["steps"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let opts = Options::parse(text, name, args, &SEARCH_KEYS)?;
        SearchOptions::read(&opts, MIN_STEPS, MAX_STEPS).map(StepsSpec)
    }

    fn build<G: GameSupport>(
        &self,
        ctx: &PlayerContext,
    ) -> Result<Arc<dyn Player<G>>, SearchError> {
        step_search_player_for::<G>(self, ctx)
            .unwrap_or_else(|| {
                Err(bad(
                    &self.to_string(),
                    format!("steps is an Arimaa player, not one for {}", G::NAME),
                ))
            })
            .map_err(in_spec(self))
    }
}
