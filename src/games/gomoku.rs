//! Gomoku's support: the stone-grid encoder, EXPERT's immediate wins (the
//! point that makes five is the point that blocks it), the line-pattern
//! evaluator, OpenSpiel's `gomoku`.

use super::{cell_action, unknown_format, GameKind, GameSupport, ImportedFile, SupportError};
use crate::encode::{stones_encoder, EncodeError, Encoder, Stones2};
use crate::game::gomoku_patterns::pattern_score;
use crate::game::{Game, Gomoku, GomokuMove, Side};
use crate::infer::hand::gomoku_eval::TUNED_NAME;
use crate::infer::hand::{
    tuned_gomoku_eval, FeatureSet, HandEval, LinearEval, GOMOKU_FEATURE_SET, HAND_SCORE_CAP,
};
use crate::record::gomoku_pgn::import_playok_gomoku;
use std::path::Path;

impl GameSupport for Gomoku {
    const KIND: GameKind = GameKind::Gomoku;

    /// One stone on any empty point.
    fn most_legal_moves(size: usize) -> Option<u64> {
        Some((size * size) as u64)
    }

    const ENCODERS: &'static [&'static str] = &[Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        stones_encoder(name, size)
    }

    const HAND_EVALS: &'static [&'static str] = &["patterns", GOMOKU_FEATURE_SET.name, TUNED_NAME];

    /// `patterns`: live windows of five weighted by the stones they hold,
    /// the tempo read off the fours ([`crate::game::gomoku_patterns`]);
    /// two open threes' worth is a clear advantage. `gomoku-features`: the
    /// same counts as a weighted evaluator with `patterns`' weights, the
    /// start `plies tune` learns from. `gomoku-tuned`: those counts with the
    /// weights the threat player learned by self-play, shipped.
    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        if name == TUNED_NAME {
            // The shipped file is proven to load by a unit test.
            let eval = tuned_gomoku_eval().ok()?;
            return Some(HandEval::from_formula(name, GOMOKU_FEATURE_SET.scale, eval));
        }
        if let Some(set) = Self::feature_set(name) {
            return Some(HandEval::from_formula(
                name,
                set.scale,
                LinearEval::default_for(set),
            ));
        }
        (name == "patterns")
            .then(|| HandEval::new(name, 600.0, |g: &Gomoku| pattern_score(g, HAND_SCORE_CAP)))
    }

    const FEATURE_SETS: &'static [&'static str] = &[GOMOKU_FEATURE_SET.name];

    fn feature_set(name: &str) -> Option<FeatureSet<Self>> {
        (name == GOMOKU_FEATURE_SET.name).then_some(GOMOKU_FEATURE_SET)
    }

    fn immediate_wins(&self, side: Side) -> Option<Vec<GomokuMove>> {
        Some(self.winning_cells(side))
    }

    /// Black's five after its fifth stone (move 9); a full board.
    fn game_length_bounds(size: usize) -> Option<(u32, u32)> {
        Some((9, (size * size) as u32))
    }

    /// PlayOK's PGN-like text (`data/gomoku`).
    const RECORD_FORMATS: &'static [&'static str] = &["playok-pgn"];

    fn import_records(format: &str, path: &Path) -> Result<ImportedFile, SupportError> {
        match format {
            "playok-pgn" => {
                let file = import_playok_gomoku(path)?;
                Ok(ImportedFile {
                    records: file.records,
                    skipped: file.skipped,
                })
            }
            _ => Err(unknown_format::<Self>(format)),
        }
    }

    const SPIEL_NAME: Option<&'static str> = Some("gomoku");

    fn spiel_params(size: usize) -> Vec<(&'static str, i64)> {
        vec![("size", size as i64), ("connect", 5)]
    }

    fn to_spiel_actions(&self, mv: GomokuMove) -> Vec<i64> {
        vec![mv.0 as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<GomokuMove> {
        cell_action(actions, self.size() * self.size()).map(|c| GomokuMove(c as u16))
    }
}
