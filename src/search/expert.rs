//! EXPERT (Patist & Wiering 2004): a random winning move if there is one,
//! else a move that blocks an immediate win of the opponent, else random.
//! It makes no forks and has no opening preference, so it can be beaten.

use super::{pick, Budget, Player, SearchError};
use crate::games::GameSupport;
use crate::search::{legal_or_none, Chosen};
use crate::util::SeededRng;

/// EXPERT, for the games with [`GameSupport::immediate_wins`] (placement
/// games, where the move that wins at once for one side blocks it for the
/// other).
pub struct ExpertPlayer;

impl<G: GameSupport> Player<G> for ExpertPlayer {
    fn name(&self) -> String {
        "expert".into()
    }

    fn choose_within(&self, state: &G, _budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        let moves = legal_or_none(state)?;
        let me = state.side_to_move();
        let no_wins = || SearchError::BadSpec {
            spec: "expert".into(),
            why: format!(
                "{} has no immediate-win test; expert plays tictactoe and gomoku",
                G::NAME
            ),
        };
        let wins = state.immediate_wins(me).ok_or_else(no_wins)?;
        if !wins.is_empty() {
            return Ok(pick(&wins, rng));
        }
        let blocks = state.immediate_wins(me.other()).ok_or_else(no_wins)?;
        if !blocks.is_empty() {
            return Ok(pick(&blocks, rng));
        }
        Ok(pick(&moves, rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, Side, TicTacToe};
    use crate::util::seeded_rng;

    #[test]
    fn wins_before_it_blocks() {
        // x to move: x wins at c3 (top row); o threatens a1..c1.
        let g = TicTacToe::from_text("xx./.../oo.").unwrap();
        let mut rng = seeded_rng(0, 0);
        for _ in 0..20 {
            let m = Player::<TicTacToe>::choose(&ExpertPlayer, &g, &mut rng).unwrap();
            assert_eq!(g.move_to_string(m), "c3");
        }
    }

    #[test]
    fn blocks_an_immediate_threat() {
        // o to move, no win of its own; x threatens c3 (top row).
        let g = TicTacToe::from_text("xx./.o./...").unwrap();
        assert_eq!(g.side_to_move(), Side::Second);
        let mut rng = seeded_rng(0, 1);
        for _ in 0..20 {
            let m = Player::<TicTacToe>::choose(&ExpertPlayer, &g, &mut rng).unwrap();
            assert_eq!(g.move_to_string(m), "c3");
        }
    }

    #[test]
    fn otherwise_plays_every_move_sometimes() {
        let g = TicTacToe::new();
        let mut rng = seeded_rng(0, 2);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            seen.insert(Player::<TicTacToe>::choose(&ExpertPlayer, &g, &mut rng).unwrap());
        }
        assert_eq!(seen.len(), 9);
    }
}
