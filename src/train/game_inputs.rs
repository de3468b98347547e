//! A game as TD(lambda) sees it: encoded non-final positions, the sign that
//! turns each model output into a first-player value, and the result.

use super::TrainError;
use crate::dataset::PositionRow;
use crate::encode::{encode_f32, Encoder, Perspective};
use crate::game::{Game, Outcome, Side};

#[derive(Clone, Debug)]
pub struct TdGame {
    pub inputs: Vec<Vec<f32>>,
    /// +1 where the model's value is already the first player's, -1 where
    /// it is the side to move's and the second player moves.
    pub signs: Vec<f32>,
    /// +1 first player won, -1 lost, 0 draw.
    pub result: f32,
}

impl TdGame {
    /// From the states of a finished game (the last one is final).
    pub fn from_states<G: Game>(states: &[G], encoder: &dyn Encoder<G>) -> Option<TdGame> {
        let last = states.last()?;
        let outcome = last.outcome()?;
        Some(Self::encoded(
            &states[..states.len() - 1],
            outcome.value_for(Side::First),
            encoder,
        ))
    }

    /// From the states of a game cut before its end whose result (for the
    /// first player) was decided otherwise: every state is an input.
    pub fn from_decided<G: Game>(states: &[G], result: f32, encoder: &dyn Encoder<G>) -> TdGame {
        Self::encoded(states, result, encoder)
    }

    /// Every state of `states` encoded, with its sign, and the result.
    fn encoded<G: Game>(states: &[G], result: f32, encoder: &dyn Encoder<G>) -> TdGame {
        let persp = encoder.perspective();
        let mut inputs = Vec::with_capacity(states.len());
        let mut signs = Vec::with_capacity(states.len());
        for s in states {
            let mut x = Vec::new();
            encode_f32(encoder, s, &mut x);
            inputs.push(x);
            signs.push(match persp {
                Perspective::FirstPlayer => 1.0,
                Perspective::SideToMove => s.side_to_move().sign(),
            });
        }
        TdGame {
            inputs,
            signs,
            result,
        }
    }
}

/// Rebuilds a game from its dataset rows (sorted by ply): positions are
/// re-read from their text and encoded with `encoder`, the result comes
/// from the final row.
pub fn rows_to_td_game<G: Game>(
    rows: &[PositionRow],
    encoder: &dyn Encoder<G>,
) -> Result<TdGame, TrainError> {
    let ctx = |r: &PositionRow| format!("game '{}' ply {}", r.game_id, r.ply);
    let mut states = Vec::with_capacity(rows.len());
    for r in rows {
        let s = G::from_text(&r.position).map_err(|e| TrainError::BadData {
            context: ctx(r),
            why: e.to_string(),
        })?;
        states.push(s);
    }
    let Some(last) = states.last() else {
        return Err(TrainError::BadData {
            context: "dataset".into(),
            why: "a game with no rows".into(),
        });
    };
    let row = &rows[rows.len() - 1];
    let Some(outcome) = last.outcome() else {
        // A game decided before its end (adjudicated, resigned): the label
        // carries the result and every position is learned from.
        if !(0.0..=1.0).contains(&row.label) {
            return Err(TrainError::BadData {
                context: ctx(row),
                why: format!("label {} is not in [0, 1]", row.label),
            });
        }
        let for_mover = 2.0 * row.label - 1.0;
        let result = for_mover * last.side_to_move().sign();
        return Ok(TdGame::from_decided(&states, result, encoder));
    };
    let label = Outcome::score_for(outcome, last.side_to_move());
    if (label - row.label).abs() > 1e-6 {
        return Err(TrainError::BadData {
            context: ctx(row),
            why: format!(
                "label {} disagrees with the final position ({label})",
                row.label
            ),
        });
    }
    TdGame::from_states(&states, encoder).ok_or_else(|| TrainError::BadData {
        context: ctx(row),
        why: "empty game".into(),
    })
}
