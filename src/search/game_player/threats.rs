//! `threats[:depth=D,width=K,eval=NAME]`: a player for the games where the
//! point that would win is the point that blocks it (Gomoku, Tic-tac-toe).
//! It wins at once when it can, blocks an immediate win, and plays a
//! forced win by continuous threats (VCF in Gomoku: each move makes a
//! four, the one answer is the block, until a double threat) of at most
//! `depth` threats. Otherwise it values every move with the evaluator
//! (Gomoku's `patterns` by default) and plays the best of the `width`
//! best that leaves the opponent no such forced win.

use super::build::resolve_eval;
use super::{bad, Options, PlayerKind};
use crate::game::{Game, Side};
use crate::games::GameSupport;
use crate::search::evaluators::PlayerContext;
use crate::search::scorer::Scorer;
use crate::search::{legal_or_none, Budget, Chosen, Player, SearchError};
use crate::util::SeededRng;
use rand::seq::SliceRandom;
use std::cell::Cell;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// Threats a forced-win search looks through unless the spec says.
const DEFAULT_DEPTH: u32 = 8;
/// Best-valued moves checked against the opponent's forced wins.
const DEFAULT_WIDTH: usize = 8;
/// Positions one forced-win search may expand: a search with no clock
/// (a match, self-play) must end too, and late in a game on a large board
/// many moves make fours. About a second at worst on 19x19.
const SEARCH_NODES: u32 = 4096;

/// A `threats` spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreatsSpec {
    pub depth: Option<u32>,
    pub width: Option<usize>,
    pub eval: Option<String>,
}

impl fmt::Display for ThreatsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut args = Vec::new();
        if let Some(d) = self.depth {
            args.push(format!("depth={d}"));
        }
        if let Some(w) = self.width {
            args.push(format!("width={w}"));
        }
        if let Some(e) = &self.eval {
            args.push(format!("eval={e}"));
        }
        f.write_str("threats")?;
        if !args.is_empty() {
            write!(f, ":{}", args.join(","))?;
        }
        Ok(())
    }
}

impl PlayerKind for ThreatsSpec {
    const NAMES: &'static [&'static str] = &["threats"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let opts = Options::parse(text, name, args, &["depth", "width", "eval"])?;
        Ok(ThreatsSpec {
            depth: opts.read("depth", "a whole number in 0..=32", |t| {
                t.parse().ok().filter(|d| *d <= 32)
            })?,
            width: opts.read("width", "a whole number of at least 1", |t| {
                t.parse().ok().filter(|&w: &usize| w > 0)
            })?,
            eval: opts.eval()?,
        })
    }

    fn build<G: GameSupport>(
        &self,
        ctx: &PlayerContext,
    ) -> Result<Arc<dyn Player<G>>, SearchError> {
        if G::new().immediate_wins(Side::First).is_none() {
            return Err(bad(
                &self.to_string(),
                format!("threats plays tictactoe and gomoku, not {}", G::NAME),
            ));
        }
        let (name, eval) = resolve_eval::<G>(self, self.eval.as_deref(), ctx)?;
        Ok(Arc::new(ThreatsPlayer {
            depth: self.depth.unwrap_or(DEFAULT_DEPTH),
            width: self.width.unwrap_or(DEFAULT_WIDTH),
            eval,
            label: ThreatsSpec {
                eval: Some(name),
                ..self.clone()
            }
            .to_string(),
        }))
    }
}

/// See the module docs.
pub struct ThreatsPlayer<G: Game> {
    depth: u32,
    width: usize,
    eval: Scorer<G>,
    label: String,
}

impl<G: Game> ThreatsPlayer<G> {
    /// The player at its default depth and width over `eval`, named
    /// `label` (`plies tune` builds its rivals so).
    pub fn with_scorer(eval: Scorer<G>, label: &str) -> Self {
        ThreatsPlayer {
            depth: DEFAULT_DEPTH,
            width: DEFAULT_WIDTH,
            eval,
            label: label.to_string(),
        }
    }
}

impl<G: GameSupport> Player<G> for ThreatsPlayer<G> {
    fn name(&self) -> String {
        self.label.clone()
    }

    fn choose_within(&self, state: &G, budget: &Budget, rng: &mut SeededRng) -> Chosen<G> {
        let mut moves = legal_or_none(state)?;
        let me = state.side_to_move();
        let wins = |g: &G, side| g.immediate_wins(side).unwrap_or_default();
        if let Some(&mv) = wins(state, me).first() {
            return Ok(mv);
        }
        if let Some(&mv) = wins(state, me.other()).first() {
            return Ok(mv);
        }
        let deadline = budget.deadline(Instant::now());
        let out_of_time = || budget.stopped() || deadline.is_some_and(|d| Instant::now() >= d);
        // A forced win for the side to move in `g`, within the node budget.
        let forced = |g: &G| {
            let nodes = Cell::new(0u32);
            let stop = || {
                nodes.set(nodes.get() + 1);
                nodes.get() > SEARCH_NODES || out_of_time()
            };
            forced_win(g, self.depth, &stop)
        };
        if let Some(mv) = forced(state) {
            return Ok(mv);
        }
        // Best-valued first; equal values in random order.
        moves.shuffle(rng);
        let mut valued: Vec<(i32, G::Move)> = moves
            .iter()
            .map(|&mv| {
                let mut child = state.clone();
                child.play(mv);
                (-self.eval.score(&child), mv)
            })
            .collect();
        self.eval.take_error()?;
        valued.sort_by_key(|&(v, _)| std::cmp::Reverse(v));
        for &(_, mv) in valued.iter().take(self.width) {
            if out_of_time() {
                break;
            }
            let mut child = state.clone();
            child.play(mv);
            if forced(&child).is_none() {
                return Ok(mv);
            }
        }
        Ok(valued[0].1)
    }
}

/// The first move of a win for the side to move in `state` by threats
/// alone: every move leaves it an immediate win the opponent must block,
/// until one leaves two (or the threat is a win now); at most `depth`
/// threats, none found once `stop` (asked once per position expanded)
/// says so.
pub fn forced_win<G: GameSupport>(
    state: &G,
    depth: u32,
    stop: &dyn Fn() -> bool,
) -> Option<G::Move> {
    let me = state.side_to_move();
    let mine = state.immediate_wins(me)?;
    if let Some(&mv) = mine.first() {
        return Some(mv);
    }
    // A threat of the opponent's must be blocked first.
    if depth == 0 || !state.immediate_wins(me.other())?.is_empty() || stop() {
        return None;
    }
    let mut moves = Vec::new();
    state.legal_moves(&mut moves);
    for mv in moves {
        let mut child = state.clone();
        child.play(mv);
        if child.outcome().is_some() {
            continue;
        }
        let threats = child.immediate_wins(me)?;
        match threats.as_slice() {
            [] => continue,
            [block] => {
                let mut answered = child.clone();
                answered.play(*block);
                if answered.outcome().is_none() && forced_win(&answered, depth - 1, stop).is_some()
                {
                    return Some(mv);
                }
            }
            _ => return Some(mv),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Gomoku;
    use crate::search::game_player::player_from_spec;
    use crate::util::seeded_rng;

    fn after(moves: &[&str]) -> Gomoku {
        let mut g = Gomoku::with_board_size(15).unwrap();
        crate::game::test_support::play_all(&mut g, moves);
        g
    }

    fn never() -> bool {
        false
    }

    #[test]
    fn finds_a_win_by_fours_that_one_move_does_not_show() {
        // Black (to move) has h8 i8 j8 (White closes g8) and k7 k6 k5:
        // k8 makes a closed four on row 8 (White must take l8) and a four
        // on the k-file at once: two threats.
        let g = after(&[
            "h8", "g8", "i8", "a1", "j8", "a3", "k7", "a5", "k6", "a7", "k5", "a9",
        ]);
        assert_eq!(g.side_to_move(), Side::First);
        let mv = forced_win(&g, 4, &never).expect("a forced win");
        assert_eq!(g.move_to_string(mv), "k8");
        // Without the k-file stones there is none.
        let g = after(&["h8", "g8", "i8", "a1", "j8", "a3"]);
        assert_eq!(forced_win(&g, 4, &never), None);
    }

    #[test]
    fn a_chain_of_fours_is_followed_to_its_end() {
        // Black (to move): h8 i8 j8 closed by White's g8, and k6 k10 k11.
        // k8 makes a four on row 8 (White must take l8); then k9 makes
        // k8-k11 with both ends open (k7 and k12): two threats.
        let g = after(&[
            "h8", "g8", "i8", "a1", "j8", "a3", "k6", "a5", "k10", "a7", "k11", "a9",
        ]);
        assert_eq!(g.side_to_move(), Side::First);
        assert_eq!(forced_win(&g, 1, &never), None);
        let mv = forced_win(&g, 2, &never).expect("a win in two threats");
        assert_eq!(g.move_to_string(mv), "k8");
        // A search told to stop at once finds nothing it has not expanded.
        assert_eq!(forced_win(&g, 2, &|| true), None);
    }

    #[test]
    fn the_player_blocks_an_open_three_s_forced_win() {
        // White to move; Black has an open three on row 8 (h8 i8 j8) and
        // would win by making an open four: the player must stop it.
        let g = after(&["h8", "a1", "i8", "a3", "j8"]);
        assert_eq!(g.side_to_move(), Side::Second);
        let player = player_from_spec::<Gomoku>("threats").unwrap();
        assert_eq!(player.name(), "threats:eval=patterns");
        let mut rng = seeded_rng(3, 0);
        let mv = player.choose(&g, &mut rng).unwrap();
        let mut child = g;
        child.play(mv);
        assert_eq!(
            forced_win(&child, 8, &never),
            None,
            "played {}",
            g.move_to_string(mv)
        );
    }

    #[test]
    fn specs_round_trip_and_other_games_are_refused() {
        for text in ["threats", "threats:depth=4,width=3,eval=patterns"] {
            let spec: super::super::GamePlayerSpec = text.parse().unwrap();
            assert_eq!(spec.to_string(), text);
        }
        let e = player_from_spec::<crate::game::Amazons>("threats")
            .err()
            .unwrap();
        assert!(e.to_string().contains("not amazons"), "{e}");
        let e = "threats:width=0"
            .parse::<super::super::GamePlayerSpec>()
            .unwrap_err();
        assert!(e.to_string().contains("width '0'"), "{e}");
    }
}
