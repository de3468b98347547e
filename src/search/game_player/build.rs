//! Players built from specs, for any game: the one place a spec becomes
//! a player, and the evaluator lookup the kinds with `eval=` share.

use super::grammar::{bad, in_spec};
use super::GamePlayerSpec;
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::scorer::Scorer;
use crate::search::{Player, SearchError};
use std::fmt;
use std::sync::Arc;

/// The evaluator `eval` names for `spec`'s player, or the game's default;
/// the error names the game and its evaluators.
pub(super) fn resolve_eval<G: GameSupport>(
    spec: &impl fmt::Display,
    eval: Option<&str>,
    ctx: &PlayerContext,
) -> Result<(String, Scorer<G>), SearchError> {
    let names = G::HAND_EVALS;
    let name = match eval {
        Some(n) => n,
        None => names.first().copied().ok_or_else(|| {
            bad(
                &spec.to_string(),
                format!(
                    "{} has no hand evaluator; give eval=random or eval=ckpt:PATH, or use random, naive or mcts",
                    G::NAME
                ),
            )
        })?,
    };
    let scorer = Scorer::by_name(name, ctx).map_err(in_spec(spec))?;
    Ok((name.to_string(), scorer))
}

/// Builds the player a spec describes for game `G` on the standard board,
/// checkpoints on the CPU.
pub fn build_player<G: GameSupport>(
    spec: &GamePlayerSpec,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player_in(spec, &PlayerContext::default_for::<G>())
}

/// Builds the player a spec describes for game `G` in `ctx`. Its
/// [`Player::name`] is the spec with the evaluator filled in.
pub fn build_player_in<G: GameSupport>(
    spec: &GamePlayerSpec,
    ctx: &PlayerContext,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    spec.build_for::<G>(ctx)
}

/// Parses and builds in one go, on the standard board.
pub fn player_from_spec<G: GameSupport>(text: &str) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player(&text.parse()?)
}

/// Parses and builds in one go, in `ctx`.
pub fn player_from_spec_in<G: GameSupport>(
    text: &str,
    ctx: &PlayerContext,
) -> Result<Arc<dyn Player<G>>, SearchError> {
    build_player_in(&text.parse()?, ctx)
}
