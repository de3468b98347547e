//! An imported Arimaa record replayed back into a finished game.

use super::{move_label, ArchiveError};
use crate::game::arimaa::{Arimaa, Setup, Termination};
use crate::game::{Game, Outcome, Side};
use crate::record::game_record::GameRecord;

/// Replays an Arimaa record (setups, then every move with the full rules)
/// and applies its result: the engine's own for a termination decided on the
/// board, which must agree with the record, else the recorded one. Returns
/// the finished game.
pub fn replay_record(rec: &GameRecord) -> Result<Arimaa, ArchiveError> {
    let id = || rec.id.clone();
    if rec.game != Arimaa::NAME {
        return Err(ArchiveError::NotArimaa {
            id: id(),
            game: rec.game.clone(),
        });
    }
    let [gold, silver] = rec.setups.as_slice() else {
        return Err(ArchiveError::SetupCount {
            id: id(),
            found: rec.setups.len(),
        });
    };
    let setup = |side, text| {
        Setup::parse(side, text).map_err(|error| ArchiveError::BadSetup {
            id: id(),
            side: if side == Side::First {
                "gold"
            } else {
                "silver"
            },
            error,
        })
    };
    let (gold, silver) = (setup(Side::First, gold)?, setup(Side::Second, silver)?);
    let mut g = Arimaa::from_setups(&gold, &silver)
        .map_err(|error| ArchiveError::Start { id: id(), error })?;
    for (k, m) in rec.moves.iter().enumerate() {
        g.play_str(m).map_err(|error| ArchiveError::BadMove {
            id: id(),
            label: move_label(k),
            error,
        })?;
    }
    let term = termination_from_name(&rec.termination).ok_or_else(|| {
        ArchiveError::UnknownTermination {
            id: id(),
            termination: rec.termination.clone(),
        }
    })?;
    let disagree = |engine| ArchiveError::ResultDiffers {
        id: id(),
        result: rec.result,
        termination: rec.termination.clone(),
        on_board: term.is_on_board(),
        engine,
    };
    if term.is_on_board() {
        match g.result() {
            Some((Outcome::Win(w), t)) if t == term && Some(w) == rec.result => {}
            other => return Err(disagree(other)),
        }
    } else if g.result().is_some() {
        return Err(disagree(g.result()));
    } else if let Some(w) = rec.result {
        g.set_result(Outcome::Win(w), term);
    }
    Ok(g)
}

/// The termination with this snake_case name (`goal`, `illegal_move`, ...).
pub fn termination_from_name(name: &str) -> Option<Termination> {
    "gempritfo"
        .chars()
        .map(|c| Termination::from_code(&c.to_string()))
        .find(|t| t.name() == name)
}
