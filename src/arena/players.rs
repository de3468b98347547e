//! Players for matches and tournaments from spec strings, for every game.
//!
//! Specs are those of [`crate::search::game_player`] (`random`, `naive`,
//! `alphabeta:depth=2,eval=mindist`, ...). Tic-tac-toe also takes its
//! older specs: `expert`, `greedy:CHECKPOINT_DIR` and
//! `greedy+:CHECKPOINT_DIR` ([`crate::search::PlayerSpec`]).

use super::ArenaError;
use crate::game::{Amazons, Arimaa, AtariGo, Gomoku, Pentago, TicTacToe};
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::search::{build_tictactoe_player, Player, PlayerSpec, SearchError};
use crate::selfplay::run::SelfplayGame;
use std::sync::Arc;

/// A game the arena plays: self-play's start positions and players built
/// from spec strings.
pub trait ArenaGame: SelfplayGame {
    /// The player `spec` describes, for boards and checkpoints of `ctx`.
    fn arena_player(spec: &str, ctx: &PlayerContext) -> Result<Arc<dyn Player<Self>>, SearchError> {
        player_from_spec_in::<Self>(spec, ctx)
    }
}

impl ArenaGame for Arimaa {}
impl ArenaGame for Amazons {}
impl ArenaGame for Pentago {}
impl ArenaGame for Gomoku {}
impl ArenaGame for AtariGo {}

impl ArenaGame for TicTacToe {
    fn arena_player(spec: &str, ctx: &PlayerContext) -> Result<Arc<dyn Player<Self>>, SearchError> {
        if is_tictactoe_spec(spec) {
            let parsed: PlayerSpec = spec.parse()?;
            build_tictactoe_player(&parsed, &ctx.eval.device)
        } else {
            player_from_spec_in::<Self>(spec, ctx)
        }
    }
}

/// Whether `spec` is one of Tic-tac-toe's older specs: `random`,
/// `expert`, `greedy+...`, or `greedy:` followed by a path (no `key=value`).
fn is_tictactoe_spec(spec: &str) -> bool {
    let (name, arg) = match spec.split_once(':') {
        Some((n, a)) => (n, Some(a)),
        None => (spec, None),
    };
    match name {
        "expert" | "greedy+" => true,
        "random" => arg.is_none(),
        "greedy" => arg.is_some_and(|a| !a.is_empty() && !a.contains('=')),
        _ => false,
    }
}

/// Builds one player per spec; an error names the spec's place (`label`
/// of its index) and the bad key or value.
pub fn build_players<G: ArenaGame>(
    specs: &[String],
    ctx: &PlayerContext,
    label: impl Fn(usize) -> String,
) -> Result<Vec<Arc<dyn Player<G>>>, ArenaError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            G::arena_player(s, ctx).map_err(|source| ArenaError::Spec {
                player: label(i),
                error: Box::new(source),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tictactoe_takes_both_kinds_of_spec() {
        assert_eq!(
            TicTacToe::arena_player("expert", &PlayerContext::default_for::<TicTacToe>())
                .unwrap()
                .name(),
            "expert"
        );
        assert_eq!(
            TicTacToe::arena_player("naive", &PlayerContext::default_for::<TicTacToe>())
                .unwrap()
                .name(),
            "naive"
        );
        assert_eq!(
            TicTacToe::arena_player("random", &PlayerContext::default_for::<TicTacToe>())
                .unwrap()
                .name(),
            "random"
        );
        let e = TicTacToe::arena_player(
            "greedy:/nonexistent/ck",
            &PlayerContext::default_for::<TicTacToe>(),
        )
        .err()
        .unwrap()
        .to_string();
        assert!(e.contains("/nonexistent/ck"), "{e}");
        assert!(is_tictactoe_spec("greedy+:ck"));
        assert!(!is_tictactoe_spec("greedy:eval=x"));
        assert!(!is_tictactoe_spec("random:depth=1"));
    }

    #[test]
    fn errors_name_the_place_and_the_key() {
        let specs = vec!["random".to_string(), "alphabeta:depth=2,width=3".into()];
        let e = build_players::<Amazons>(&specs, &PlayerContext::default_for::<Amazons>(), |i| {
            format!("player {} of --players", i + 1)
        })
        .err()
        .unwrap()
        .to_string();
        assert!(
            e.contains("player 2 of --players") && e.contains("'width'"),
            "{e}"
        );
    }
}
