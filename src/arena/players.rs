//! Players for matches and tournaments from spec strings, for every game:
//! the specs of [`crate::search::game_player`] (`random`, `naive`,
//! `expert`, `alphabeta:depth=2,eval=mindist`, `greedy:CHECKPOINT_DIR`, ...).

use super::ArenaError;
use crate::games::GameSupport;
use crate::search::game_player::{player_from_spec_in, PlayerContext};
use crate::search::Player;
use std::sync::Arc;

/// Builds one player per spec; an error names the spec's place (`label`
/// of its index) and the bad key or value.
pub fn build_players<G: GameSupport>(
    specs: &[String],
    ctx: &PlayerContext,
    label: impl Fn(usize) -> String,
) -> Result<Vec<Arc<dyn Player<G>>>, ArenaError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            player_from_spec_in::<G>(s, ctx).map_err(|source| ArenaError::Spec {
                player: label(i),
                error: Box::new(source),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Amazons, TicTacToe};

    /// The error of building `specs` for `G`, player `i` labelled `label(i)`.
    fn build_error<G: GameSupport>(specs: &[&str], label: impl Fn(usize) -> String) -> String {
        let specs: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
        build_players::<G>(&specs, &PlayerContext::default_for::<G>(), label)
            .err()
            .unwrap()
            .to_string()
    }

    #[test]
    fn tictactoe_takes_the_network_and_expert_specs() {
        let ctx = PlayerContext::default_for::<TicTacToe>();
        let names = |specs: &[&str]| -> Vec<String> {
            let specs: Vec<String> = specs.iter().map(|s| s.to_string()).collect();
            build_players::<TicTacToe>(&specs, &ctx, |i| i.to_string())
                .unwrap()
                .iter()
                .map(|p| p.name())
                .collect()
        };
        assert_eq!(
            names(&["expert", "naive", "random"]),
            ["expert", "naive", "random"]
        );
        let e = build_error::<TicTacToe>(&["greedy:/nonexistent/ck"], |_| "--a".into());
        assert!(e.contains("/nonexistent/ck") && e.contains("--a"), "{e}");
    }

    #[test]
    fn expert_is_refused_where_immediate_wins_are_not_defined() {
        let e = build_error::<Amazons>(&["expert"], |_| "--b".into());
        assert!(e.contains("expert") && e.contains("amazons"), "{e}");
    }

    #[test]
    fn errors_name_the_place_and_the_key() {
        let e = build_error::<Amazons>(&["random", "alphabeta:depth=2,width=3"], |i| {
            format!("player {} of --players", i + 1)
        });
        assert!(
            e.contains("player 2 of --players") && e.contains("'width'"),
            "{e}"
        );
    }
}
