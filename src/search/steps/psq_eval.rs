//! Evaluations the step search keeps up to date one step at a time.
//!
//! Material and a `linear` checkpoint over `arimaa-6x8x8` are both sums of
//! one term per piece and square (plus, for material, the rabbits' count,
//! read from the board at the leaf). Each term is stored as an integer for
//! both points of view (gold to move, silver to move), so a step changes
//! the two sums by the moved piece's two squares and a capture by one
//! square; being integers, the updated sums equal a recomputation exactly,
//! whatever the order of the steps. Any other evaluator is called on the
//! leaf's position ([`StepScorer::Position`]).

use crate::checkpoint::{CheckpointError, CheckpointSource};
use crate::encode::ArimaaTypePlanes;
use crate::game::arimaa::{Arimaa, Piece, Position, Step};
use crate::game::{Game, Side};
use crate::infer::hand::arimaa_material::{PIECE_VALUES, RABBITS_TOTAL, RABBIT_ADVANCE};
use crate::model::{ModelConfig, OutputActivation};
use crate::search::alphabeta::WIN_THRESHOLD;
use crate::search::scorer::{value_score, Scorer};
use crate::search::Score;

/// Sums of the per-piece terms, indexed by the point of view (gold 0,
/// silver 1).
pub type Sums = [i64; 2];

/// A linear checkpoint's weights are held as integers in units of
/// `2^-LINEAR_FRACTION_BITS` (far below the 1/10,000 the scores resolve).
const LINEAR_FRACTION_BITS: i32 = 24;

/// What turns the sums into a score for the side to move.
#[derive(Clone, Debug, PartialEq)]
enum Finish {
    /// Material: the sum plus the value of each side's rabbits together.
    Material,
    /// A linear model: `output(sum + bias)` on `[-1, 1]`, in the scorer's
    /// ten-thousandths.
    Linear { bias: f64, output: OutputActivation },
}

/// A piece-square evaluation with its terms per point of view.
#[derive(Clone, Debug, PartialEq)]
pub struct PieceSquareEval {
    /// `terms[view][piece code][square]`.
    terms: Box<[[[i64; 64]; 13]; 2]>,
    finish: Finish,
}

fn view_index(side: Side) -> usize {
    side.index()
}

impl PieceSquareEval {
    /// `material` (`infer::hand::arimaa_material`): piece values and
    /// rabbit advancement per square, the rabbits' count at the leaf.
    pub fn material() -> PieceSquareEval {
        PieceSquareEval::from_terms(Finish::Material, |view, piece, sq| {
            let kind = piece.kind as usize;
            let own = if kind == 0 {
                let rank = (sq / 8) as usize;
                let advance = match piece.side {
                    Side::First => rank,
                    Side::Second => 7 - rank,
                };
                i64::from(RABBIT_ADVANCE[advance])
            } else {
                i64::from(PIECE_VALUES[kind])
            };
            if piece.side == view {
                own
            } else {
                -own
            }
        })
    }

    /// The piece-square weights of a `linear` checkpoint over
    /// `arimaa-6x8x8` (no global features), laid out as that encoder lays
    /// out the board: the side to move's goal rank in row 0. `None` when
    /// the checkpoint is another model (it is then scored position by
    /// position).
    pub fn linear(name: &str) -> Result<Option<PieceSquareEval>, CheckpointError> {
        let ck = CheckpointSource::parse(name)?.open(Some(Arimaa::NAME), None)?;
        let ModelConfig::Linear(cfg) = &ck.config.model else {
            return Ok(None);
        };
        if ck.config.encoder.name != ArimaaTypePlanes::NAME
            || !cfg.board
            || cfg.input.planes != [6, 8, 8]
            || cfg.input.globals != 0
        {
            return Ok(None);
        }
        let read = |tensor: &str, len: usize| -> Option<Vec<f32>> {
            let v = ck
                .tensors
                .get(tensor)?
                .flatten_all()
                .ok()?
                .to_vec1::<f32>()
                .ok()?;
            (v.len() == len).then_some(v)
        };
        let (Some(weights), Some(bias)) = (read("psq.weight", 6 * 64), read("psq.bias", 1)) else {
            return Ok(None);
        };
        let bias = f64::from(bias[0]);
        let unit = f64::from(2f32.powi(LINEAR_FRACTION_BITS));
        let finish = Finish::Linear {
            bias,
            output: cfg.output,
        };
        Ok(Some(PieceSquareEval::from_terms(
            finish,
            |view, piece, sq| {
                let (rank, file) = ((sq / 8) as usize, (sq % 8) as usize);
                let row = match view {
                    Side::First => 7 - rank,
                    Side::Second => rank,
                };
                let w = f64::from(weights[piece.kind as usize * 64 + row * 8 + file]);
                let term = (w * unit).round() as i64;
                if piece.side == view {
                    term
                } else {
                    -term
                }
            },
        )))
    }

    fn from_terms(finish: Finish, term: impl Fn(Side, Piece, u8) -> i64) -> PieceSquareEval {
        let mut terms = Box::new([[[0i64; 64]; 13]; 2]);
        for view in [Side::First, Side::Second] {
            for code in 1..13u8 {
                let piece = Piece::from_code(code).expect("codes 1..=12 are pieces");
                for sq in 0..64u8 {
                    terms[view_index(view)][code as usize][sq as usize] = term(view, piece, sq);
                }
            }
        }
        PieceSquareEval { terms, finish }
    }

    /// The sums of `pos`, computed from scratch.
    pub fn sums(&self, pos: &Position) -> Sums {
        let mut sums = [0i64; 2];
        for (sq, piece) in pos.pieces() {
            for (v, s) in sums.iter_mut().enumerate() {
                *s += self.terms[v][piece.code() as usize][sq as usize];
            }
        }
        sums
    }

    /// Updates `sums` for `piece` moving from `from` to `to`.
    #[inline]
    pub fn moved(&self, sums: &mut Sums, piece: Piece, from: u8, to: u8) {
        let code = piece.code() as usize;
        for (v, s) in sums.iter_mut().enumerate() {
            let t = &self.terms[v][code];
            *s += t[to as usize] - t[from as usize];
        }
    }

    /// Updates `sums` for `piece` taken off `sq` (a capture).
    #[inline]
    pub fn removed(&self, sums: &mut Sums, piece: Piece, sq: u8) {
        let code = piece.code() as usize;
        for (v, s) in sums.iter_mut().enumerate() {
            *s -= self.terms[v][code][sq as usize];
        }
    }

    /// A score of this evaluation's as a [`Score`]: material's own units,
    /// a linear model's value on `[-1, 1]`; forced results as they are.
    pub fn score_of(&self, score: i32) -> Score {
        match self.finish {
            Finish::Linear { .. } if score.abs() < WIN_THRESHOLD => {
                Score::Value(f64::from(score) / 10_000.0)
            }
            _ => Score::Hand(score),
        }
    }

    /// The score of `pos` for its side to move, from its sums.
    pub fn score(&self, sums: &Sums, pos: &Position) -> i32 {
        let me = pos.side_to_move();
        let sum = sums[view_index(me)];
        match &self.finish {
            Finish::Material => {
                let rabbits =
                    |side: Side| i64::from(RABBITS_TOTAL[(pos.rabbit_count(side) as usize).min(8)]);
                let cap = i64::from(crate::infer::hand::HAND_SCORE_CAP);
                (sum + rabbits(me) - rabbits(me.other())).clamp(-cap, cap) as i32
            }
            Finish::Linear { bias, output } => {
                let logit = sum as f64 / f64::from(2f32.powi(LINEAR_FRACTION_BITS)) + bias;
                let raw = match output {
                    OutputActivation::Sigmoid => 1.0 / (1.0 + (-logit).exp()),
                    OutputActivation::Tanh => logit.tanh(),
                    OutputActivation::Identity => logit,
                };
                value_score(output.to_symmetric(raw as f32))
            }
        }
    }
}

/// How the step search scores its leaves: a piece-square evaluation kept
/// up to date per step, or any evaluator called on the leaf's position.
pub enum StepScorer {
    Incremental(PieceSquareEval),
    Position(Scorer<Arimaa>),
}

impl StepScorer {
    /// The sums to carry down the tree from `pos` (none for
    /// [`StepScorer::Position`]).
    pub fn sums(&self, pos: &Position) -> Sums {
        match self {
            StepScorer::Incremental(e) => e.sums(pos),
            StepScorer::Position(_) => [0; 2],
        }
    }

    /// Updates `sums` for one step played in `before`, with the capture it
    /// caused.
    #[inline]
    pub fn step(
        &self,
        sums: &mut Sums,
        before: &Position,
        step: Step,
        captured: Option<(u8, Piece)>,
    ) {
        if let StepScorer::Incremental(e) = self {
            let piece = before
                .piece_at(step.from)
                .expect("a step moves a piece that is there");
            e.moved(sums, piece, step.from, step.to);
            if let Some((sq, victim)) = captured {
                e.removed(sums, victim, sq);
            }
        }
    }

    /// The score of `pos` for its side to move (mid-turn: the side whose
    /// turn it is).
    pub fn score(&self, sums: &Sums, pos: &Position) -> i32 {
        match self {
            StepScorer::Incremental(e) => e.score(sums, pos),
            StepScorer::Position(s) => s.score(&Arimaa::from_position(*pos, 2)),
        }
    }

    /// An evaluator error met while scoring, if any (models only).
    pub fn take_error(&self) -> Result<(), crate::search::SearchError> {
        match self {
            StepScorer::Incremental(_) => Ok(()),
            StepScorer::Position(s) => s.take_error(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::TurnState;
    use crate::infer::hand::arimaa_material::evaluate;
    use crate::util::seeded_rng;
    use rand::RngExt;

    /// Random walks of steps from the standard opening: after every step
    /// the updated sums equal the sums recomputed from the board, and the
    /// material score at every turn start equals `material`'s.
    #[test]
    fn updated_material_equals_recomputation() {
        let eval = PieceSquareEval::material();
        let mut rng = seeded_rng(5, 0);
        let mut captures = 0;
        for _ in 0..20 {
            let mut g = Arimaa::new();
            let mut sums = eval.sums(g.position());
            for _turn in 0..60 {
                if g.outcome().is_some() {
                    break;
                }
                assert_eq!(eval.score(&sums, g.position()), evaluate(&g));
                let mut pos = *g.position();
                let mut state = TurnState::START;
                let mut steps = Vec::new();
                while state.steps_left > 0 {
                    let options = pos.steps(&state);
                    if options.is_empty() {
                        break;
                    }
                    let (step, kind) = options[rng.random_range(0..options.len())];
                    let before = pos;
                    let (next, captured) = pos.apply_step(&state, step, kind);
                    captures += usize::from(captured.is_some());
                    StepScorer::Incremental(eval.clone()).step(&mut sums, &before, step, captured);
                    assert_eq!(sums, eval.sums(&pos));
                    steps.push(step);
                    state = next;
                }
                let mv = crate::game::arimaa::Move::from_steps(&steps).unwrap();
                if !state.can_end() || g.parse_move(&g.move_to_string(mv)).is_err() {
                    break;
                }
                g.play(mv);
                assert_eq!(sums, eval.sums(g.position()));
            }
        }
        assert!(captures > 0, "the walks should capture something");
    }
}
