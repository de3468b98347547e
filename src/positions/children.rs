//! A dataset row's position and the positions after each of its legal
//! moves, encoded for one batched forward pass: what comparison training
//! (`train::comparison`) and move prediction (`eval::move_prediction`) rank
//! the move played among.
//!
//! The game is chosen once, from the dataset's game name, by
//! [`expander`]; from there on rows are expanded through the game-free
//! [`ChildExpander`] trait. The played move is found among the legal moves
//! by the position it leads to, so a transposed Arimaa turn (the same steps
//! in another order) matches the generator's representative.

use rand::seq::index::sample;

use crate::dataset::EncoderInfo;
use crate::encode::{Encoder, Perspective};
use crate::game::Game;
use crate::games::{GameKind, GameSupport};
use crate::infer::{hand::HandEval, to_side_to_move};
use crate::util::seeded_rng;

/// What refuses a row or an expander.
#[derive(Debug, thiserror::Error)]
pub enum ChildrenError {
    /// The played move does not parse, is not legal, or leads to a position
    /// no legal move leads to.
    #[error("game {game_id}, ply {ply}: the move played `{played}` is not legal in the row's position ({why}); position: {position}")]
    IllegalMove {
        game_id: String,
        ply: u32,
        played: String,
        position: String,
        why: String,
    },
    /// The row's position text does not read back as a position of the game.
    #[error("game {game_id}, ply {ply}: the position does not parse as {game}: {why}")]
    BadPosition {
        game_id: String,
        ply: u32,
        game: String,
        why: String,
    },
    /// The dataset names a game or encoder this build does not have.
    #[error("dataset of game `{game}` with encoder `{encoder}`: {why}")]
    Setup {
        game: String,
        encoder: String,
        why: String,
    },
}

/// One row to expand: the position before the move and the move played.
#[derive(Clone, Debug, PartialEq)]
pub struct MoveRow {
    pub game_id: String,
    pub ply: u32,
    pub plies_to_end: u32,
    pub position: String,
    pub played: String,
}

/// The children of one position: the played move's first, then the others
/// (all of them, or the sample asked for), encoded row-major.
#[derive(Clone, Debug, Default)]
pub struct Children {
    /// Children kept (1 + the other moves kept).
    pub len: usize,
    /// Legal moves of the position, before any sampling.
    pub legal_moves: usize,
    /// `len * C*H*W` plane values as the encoder writes them (int8: a
    /// quarter of f32's memory, which matters for the tens of thousands of
    /// children of an Arimaa turn); [`Children::planes_f32`] widens a chunk
    /// at a time for the model.
    pub planes: Vec<i8>,
    /// `len * G` global features.
    pub globals: Vec<f32>,
    /// Per child: +1 where the model's value of the child is the mover's,
    /// -1 where it is the opponent's (the mover's value is `sign * value`).
    pub sign: Vec<f32>,
    /// Per hand evaluator asked for, per child: its score for the mover.
    pub hand: Vec<Vec<i64>>,
}

impl Children {
    /// The plane values of children `from..to` as f32, appended to `out`
    /// (`plane_len` values per child).
    pub fn planes_f32(&self, from: usize, to: usize, plane_len: usize, out: &mut Vec<f32>) {
        out.extend(
            self.planes[from * plane_len..to * plane_len]
                .iter()
                .map(|&v| f32::from(v)),
        );
    }

    /// Bytes this holds (planes, globals, signs and hand scores).
    pub fn bytes(&self) -> usize {
        self.planes.len()
            + 4 * (self.globals.len() + self.sign.len())
            + 8 * self.hand.iter().map(Vec::len).sum::<usize>()
    }
}

/// Where the played move (child 0) ranks among the children by a score for
/// the mover (higher is better): `better` others score above it, `tied`
/// others the same. Ties are broken uniformly at random, so the figures
/// below are expectations over that draw (a scorer that ties every move
/// gets exactly what random ranking gets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayedRank {
    pub better: usize,
    pub tied: usize,
}

impl PlayedRank {
    /// The rank of child 0 among `scores`.
    pub fn of<T: PartialOrd + Copy>(scores: &[T]) -> PlayedRank {
        let played = scores[0];
        let (mut better, mut tied) = (0, 0);
        for &s in &scores[1..] {
            if s > played {
                better += 1;
            } else if s == played {
                tied += 1;
            }
        }
        PlayedRank { better, tied }
    }

    /// The rank of a uniformly random ordering of `moves` moves.
    pub fn random(moves: usize) -> PlayedRank {
        PlayedRank {
            better: 0,
            tied: moves.saturating_sub(1),
        }
    }

    /// The probability that the played move is among the first `k`.
    pub fn top(&self, k: usize) -> f64 {
        let places = (self.tied + 1) as f64;
        (k.saturating_sub(self.better) as f64 / places).min(1.0)
    }

    /// The expected reciprocal of the played move's rank.
    pub fn reciprocal(&self) -> f64 {
        let first = self.better + 1;
        let sum: f64 = (first..=first + self.tied).map(|r| 1.0 / r as f64).sum();
        sum / (self.tied + 1) as f64
    }
}

/// Expands rows of one game with one encoder.
pub trait ChildExpander: Send + Sync {
    /// The children of `row`: every legal move's position, or with
    /// `sample = Some((k, seed))` the played move's and `k` others drawn by
    /// `seed` (all of them when there are no more than `k`).
    fn expand(
        &self,
        row: &MoveRow,
        sample: Option<(usize, u64)>,
    ) -> Result<Children, ChildrenError>;

    /// Plane values per child (`C*H*W`).
    fn plane_len(&self) -> usize;

    /// Global features per child.
    fn globals_len(&self) -> usize;

    /// The most children one position of the game is expected to have
    /// ([`GameSupport::most_legal_moves`]); `None`: not known.
    fn widest(&self) -> Option<u64>;
}

/// The expander of `game` positions encoded as `encoder` describes (no
/// hand scores; [`GameChildren::new`] takes hand evaluators).
pub fn expander(
    game: &str,
    encoder: &EncoderInfo,
) -> Result<Box<dyn ChildExpander>, ChildrenError> {
    let setup = |why: String| ChildrenError::Setup {
        game: game.to_string(),
        encoder: encoder.name.clone(),
        why,
    };
    let kind: GameKind = game.parse().map_err(|e| setup(format!("{e}")))?;
    with_game!(kind, G => {
        let enc = G::encoder(&encoder.name, encoder.shape[2]).map_err(|e| setup(e.to_string()))?;
        Ok(Box::new(GameChildren::<G>::new(kind.name(), enc, Vec::new())) as Box<dyn ChildExpander>)
    })
}

/// [`ChildExpander`] for the game `G`.
pub struct GameChildren<G: Game> {
    game: String,
    encoder: Box<dyn Encoder<G>>,
    hands: Vec<HandEval<G>>,
    widest: Option<u64>,
}

impl<G: GameSupport> GameChildren<G> {
    /// Children encoded by `encoder`, each scored by every one of `hands`.
    pub fn new(game: &str, encoder: Box<dyn Encoder<G>>, hands: Vec<HandEval<G>>) -> Self {
        let widest = G::most_legal_moves(encoder.shape()[2]);
        GameChildren {
            game: game.to_string(),
            encoder,
            hands,
            widest,
        }
    }
}

impl<G: Game> GameChildren<G> {
    /// The children states of `row`'s position, the played one first.
    fn states(&self, row: &MoveRow) -> Result<(G, Vec<G>), ChildrenError> {
        let state = G::from_text(&row.position).map_err(|e| ChildrenError::BadPosition {
            game_id: row.game_id.clone(),
            ply: row.ply,
            game: self.game.clone(),
            why: e.to_string(),
        })?;
        let illegal = |why: String| ChildrenError::IllegalMove {
            game_id: row.game_id.clone(),
            ply: row.ply,
            played: row.played.clone(),
            position: row.position.clone(),
            why,
        };
        let mv = state
            .parse_move(&row.played)
            .map_err(|e| illegal(e.to_string()))?;
        let mut moves = Vec::new();
        if !state.is_legal(mv, &mut moves) {
            return Err(illegal("the rules refuse it".into()));
        }
        let mut played = state.clone();
        played.play(mv);
        moves.clear();
        state.legal_moves(&mut moves);
        let key = played.hash_key();
        let text = played.to_text();
        let mut others = Vec::with_capacity(moves.len().saturating_sub(1));
        let mut found = false;
        for &m in &moves {
            let mut child = state.clone();
            child.play(m);
            if !found && child.hash_key() == key && child.to_text() == text {
                found = true;
            } else {
                others.push(child);
            }
        }
        if !found {
            return Err(illegal(format!(
                "no legal move of the {} leads to its position",
                moves.len()
            )));
        }
        let mut all = Vec::with_capacity(others.len() + 1);
        all.push(played);
        all.extend(others);
        Ok((state, all))
    }
}

impl<G: Game> ChildExpander for GameChildren<G> {
    fn widest(&self) -> Option<u64> {
        self.widest
    }

    fn expand(
        &self,
        row: &MoveRow,
        sample_k: Option<(usize, u64)>,
    ) -> Result<Children, ChildrenError> {
        let (state, mut kids) = self.states(row)?;
        let legal_moves = kids.len();
        if let Some((k, seed)) = sample_k {
            let others = kids.len() - 1;
            if k < others {
                let mut picked = sample(&mut seeded_rng(seed, 0x6b69_6473), others, k).into_vec();
                picked.sort_unstable();
                let mut kept = Vec::with_capacity(k + 1);
                kept.push(kids[0].clone());
                kept.extend(picked.into_iter().map(|i| kids[i + 1].clone()));
                kids = kept;
            }
        }
        let mover = state.side_to_move();
        let perspective = self.encoder.perspective();
        let (p, g) = (self.encoder.plane_len(), self.encoder.globals_len());
        let mut out = Children {
            len: kids.len(),
            legal_moves,
            planes: Vec::with_capacity(kids.len() * p),
            globals: Vec::with_capacity(kids.len() * g),
            sign: Vec::with_capacity(kids.len()),
            hand: vec![Vec::with_capacity(kids.len()); self.hands.len()],
        };
        let mut planes = vec![0i8; p];
        let mut globals = vec![0f32; g];
        for child in &kids {
            self.encoder.encode(child, &mut planes, &mut globals);
            out.planes.extend_from_slice(&planes);
            out.globals.extend_from_slice(&globals);
            let same = if child.side_to_move() == mover {
                1.0
            } else {
                -1.0
            };
            out.sign.push(same * perspective_sign(child, perspective));
            for (h, scores) in self.hands.iter().zip(out.hand.iter_mut()) {
                scores.push(same as i64 * i64::from(h.score(child)));
            }
        }
        Ok(out)
    }

    fn plane_len(&self) -> usize {
        self.encoder.plane_len()
    }

    fn globals_len(&self) -> usize {
        self.encoder.globals_len()
    }
}

/// +1 when an encoder of `perspective` gives `child`'s value for its side to
/// move, the first player's sign otherwise.
fn perspective_sign<G: Game>(child: &G, perspective: Perspective) -> f32 {
    to_side_to_move(child, 1.0, perspective)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;

    fn ttt_expander() -> Box<dyn ChildExpander> {
        let enc = TicTacToe::encoder("tictactoe-9", 3).unwrap();
        let info = EncoderInfo {
            name: enc.name().to_string(),
            version: 1,
            shape: enc.shape(),
            globals: enc.globals_len(),
        };
        expander("tictactoe", &info).unwrap()
    }

    fn row(position: &str, played: &str) -> MoveRow {
        MoveRow {
            game_id: "g7".into(),
            ply: 3,
            plies_to_end: 2,
            position: position.into(),
            played: played.into(),
        }
    }

    #[test]
    fn every_legal_move_is_a_child_and_the_played_one_comes_first() {
        let x = ttt_expander();
        let start = TicTacToe::new();
        let mut moves = Vec::new();
        start.legal_moves(&mut moves);
        let played = start.move_to_string(moves[4]);
        let c = x.expand(&row(&start.to_text(), &played), None).unwrap();
        assert_eq!((c.len, c.legal_moves), (9, 9));
        assert_eq!(c.planes.len(), 9 * x.plane_len());
        let mut after = start;
        after.play(moves[4]);
        let mut first = Vec::new();
        crate::encode::encode_f32(
            TicTacToe::encoder("tictactoe-9", 3).unwrap().as_ref(),
            &after,
            &mut first,
        );
        let mut widened = Vec::new();
        c.planes_f32(0, 1, x.plane_len(), &mut widened);
        assert_eq!(widened, first[..x.plane_len()]);
        let sampled = x
            .expand(&row(&start.to_text(), &played), Some((3, 5)))
            .unwrap();
        assert_eq!((sampled.len, sampled.legal_moves), (4, 9));
        assert_eq!(&sampled.planes[..x.plane_len()], &c.planes[..x.plane_len()]);
    }

    #[test]
    fn ranks_count_better_and_tied_moves_and_break_ties_evenly() {
        let r = PlayedRank::of(&[2, 5, 2, 1, 2]);
        assert_eq!(r, PlayedRank { better: 1, tied: 2 });
        // Rank 2, 3 or 4 with equal chance.
        assert!((r.top(1) - 0.0).abs() < 1e-12);
        assert!((r.top(2) - 1.0 / 3.0).abs() < 1e-12);
        assert!((r.top(5) - 1.0).abs() < 1e-12);
        assert!((r.reciprocal() - (1.0 / 2.0 + 1.0 / 3.0 + 1.0 / 4.0) / 3.0).abs() < 1e-12);
        let best = PlayedRank::of(&[9.0, 1.0, 3.0]);
        assert_eq!((best.top(1), best.reciprocal()), (1.0, 1.0));
        let random = PlayedRank::random(4);
        assert!((random.top(1) - 0.25).abs() < 1e-12);
        assert!((random.reciprocal() - (1.0 + 0.5 + 1.0 / 3.0 + 0.25) / 4.0).abs() < 1e-12);
    }

    #[test]
    fn an_illegal_move_names_the_game_and_ply() {
        let x = ttt_expander();
        let mut s = TicTacToe::new();
        let mut moves = Vec::new();
        s.legal_moves(&mut moves);
        let taken = s.move_to_string(moves[0]);
        s.play(moves[0]);
        let e = x.expand(&row(&s.to_text(), &taken), None).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ChildrenError::IllegalMove { .. }), "{msg}");
        assert!(
            msg.contains("game g7, ply 3") && msg.contains(&taken),
            "{msg}"
        );
    }
}
