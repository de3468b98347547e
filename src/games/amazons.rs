//! The Amazons' support: the UNITS / MOBILITY / BITS / TERRITORY encoders, the
//! minimal-distance and Lieberum hand evaluators, OpenSpiel's `amazons`
//! (a move is three actions: from, to, arrow).

use super::{unknown_format, GameKind, GameSupport, ImportedFile, SupportError};
use crate::encode::{amazons_encoder, EncodeError, Encoder};
use crate::game::{Amazons, AmazonsMove, Game};
use crate::infer::hand::{AmazonsLieberum, AmazonsMinDist, HandEval};
use crate::record::amazons_text::read_amazons_records;
use crate::record::{GameRecord, PerSide};
use std::path::Path;

impl GameSupport for Amazons {
    const KIND: GameKind = GameKind::Amazons;

    /// Each of at most 4 amazons moves along at most `4 (n - 1)` squares of
    /// its lines and shoots along as many.
    fn most_legal_moves(size: usize) -> Option<u64> {
        let line = 4 * size.saturating_sub(1) as u64;
        Some(4 * line * line)
    }

    const ENCODERS: &'static [&'static str] = &[
        "amazons-units",
        "amazons-mobility",
        "amazons-bits",
        "amazons-territory",
    ];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        amazons_encoder(name, size)
    }

    const HAND_EVALS: &'static [&'static str] = &["mindist", "lieberum"];

    /// Both score territory-like differences in squares (x1000): ten
    /// squares is a clear advantage.
    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        const TEN_SQUARES: f32 = 10_000.0;
        match name {
            "mindist" => Some(HandEval::from_formula(name, TEN_SQUARES, AmazonsMinDist)),
            "lieberum" => Some(HandEval::from_formula(name, TEN_SQUARES, AmazonsLieberum)),
            _ => None,
        }
    }

    /// One game per line: size, `from-to/arrow` moves, result.
    const RECORD_FORMATS: &'static [&'static str] = &["amazons-text"];

    fn import_records(format: &str, path: &Path) -> Result<ImportedFile, SupportError> {
        if format != "amazons-text" {
            return Err(unknown_format::<Self>(format));
        }
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        let file = path.file_name().unwrap_or_default().to_string_lossy();
        let records = read_amazons_records(path)?
            .into_iter()
            .enumerate()
            .map(|(i, rec)| {
                let end = rec.replay().map_err(|e| SupportError::Record {
                    id: format!("{stem}:{}", i + 1),
                    why: e.to_string(),
                })?;
                let termination = match end.outcome() {
                    Some(_) => "no_moves",
                    None if rec.winner.is_some() => "resignation",
                    None => "unfinished",
                };
                Ok(GameRecord {
                    game: Self::NAME.into(),
                    id: format!("{stem}:{}", i + 1),
                    source: format!("{file}:{}", i + 1),
                    event: String::new(),
                    players: PerSide::new("first".into(), "second".into()),
                    ratings: PerSide::new(None, None),
                    player_types: None,
                    setups: Vec::new(),
                    plies: rec.moves.len() as u32,
                    moves: rec.moves,
                    result: rec.winner,
                    termination: termination.into(),
                    rated: None,
                    start_time: None,
                    board_size: (rec.size != Self::DEFAULT_SIZE).then_some(rec.size),
                    explored: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, SupportError>>()?;
        Ok(ImportedFile {
            records,
            skipped: Vec::new(),
        })
    }

    const SPIEL_NAME: Option<&'static str> = Some("amazons");
    const SPIEL_ACTIONS: usize = 3;

    fn spiel_params(size: usize) -> Vec<(&'static str, i64)> {
        vec![("board_size", size as i64)]
    }

    fn to_spiel_actions(&self, mv: AmazonsMove) -> Vec<i64> {
        vec![mv.from as i64, mv.to as i64, mv.arrow as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<AmazonsMove> {
        let cells = (self.size() * self.size()) as i64;
        match *actions {
            [from, to, arrow] if [from, to, arrow].iter().all(|a| (0..cells).contains(a)) => {
                Some(AmazonsMove {
                    from: from as u8,
                    to: to as u8,
                    arrow: arrow as u8,
                })
            }
            _ => None,
        }
    }
}
