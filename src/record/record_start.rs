//! Where a [`GameRecord`]'s moves start: the standard position at the
//! record's board size, or for Arimaa the position after its two setups.

use super::GameRecord;
use crate::game::arimaa::Setup;
use crate::game::{Amazons, Arimaa, AtariGo, Game, Gomoku, Pentago, Side, TicTacToe};

/// A game whose records can be replayed: the start position of a record.
pub trait RecordStart: Game {
    /// The position before `rec.moves[0]`; the error says what is wrong
    /// with the record (wrong game, bad size, bad setup).
    fn record_start(rec: &GameRecord) -> Result<Self, String> {
        check_game::<Self>(rec)?;
        match rec.board_size {
            Some(n) => Self::with_size(n).map_err(|e| e.to_string()),
            None => Ok(Self::new()),
        }
    }
}

fn check_game<G: Game>(rec: &GameRecord) -> Result<(), String> {
    if rec.game != G::NAME {
        return Err(format!(
            "game {}: the record is a '{}' game, expected '{}'",
            rec.id,
            rec.game,
            G::NAME
        ));
    }
    Ok(())
}

impl RecordStart for TicTacToe {}
impl RecordStart for Amazons {}
impl RecordStart for Pentago {}
impl RecordStart for Gomoku {}
impl RecordStart for AtariGo {}

impl RecordStart for Arimaa {
    fn record_start(rec: &GameRecord) -> Result<Self, String> {
        check_game::<Self>(rec)?;
        if rec.setups.len() != 2 {
            return Err(format!(
                "game {}: an Arimaa record needs 2 setups (gold's, silver's), found {}",
                rec.id,
                rec.setups.len()
            ));
        }
        let gold = Setup::parse(Side::First, &rec.setups[0])
            .map_err(|e| format!("game {}: gold's setup: {e}", rec.id))?;
        let silver = Setup::parse(Side::Second, &rec.setups[1])
            .map_err(|e| format!("game {}: silver's setup: {e}", rec.id))?;
        Arimaa::from_setups(&gold, &silver).map_err(|e| format!("game {}: {e}", rec.id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::PerSide;

    fn record(game: &str, size: Option<usize>, setups: Vec<String>) -> GameRecord {
        GameRecord {
            game: game.into(),
            id: "g1".into(),
            source: "test".into(),
            event: String::new(),
            players: PerSide::new("a".into(), "b".into()),
            ratings: PerSide::new(None, None),
            player_types: None,
            setups,
            moves: vec![],
            result: None,
            termination: "unfinished".into(),
            plies: 0,
            rated: None,
            start_time: None,
            board_size: size,
        }
    }

    #[test]
    fn the_board_size_comes_from_the_record() {
        let g = Gomoku::record_start(&record("gomoku", Some(9), vec![])).unwrap();
        assert_eq!(g.size(), 9);
        let g = Gomoku::record_start(&record("gomoku", None, vec![])).unwrap();
        assert_eq!(g.size(), Gomoku::DEFAULT_SIZE);
        let err = Pentago::record_start(&record("pentago", Some(9), vec![])).unwrap_err();
        assert!(err.contains('9'), "{err}");
    }

    #[test]
    fn a_record_of_another_game_is_refused() {
        let err = Amazons::record_start(&record("gomoku", None, vec![])).unwrap_err();
        assert!(
            err.contains("'gomoku'") && err.contains("'amazons'"),
            "{err}"
        );
    }

    #[test]
    fn arimaa_starts_after_the_setups() {
        let gold = Setup::standard(Side::First).to_notation();
        let silver = Setup::standard(Side::Second).to_notation();
        let g = Arimaa::record_start(&record("arimaa", None, vec![gold, silver])).unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        assert_eq!(g.position().occupied().count_ones(), 32);
        let err = Arimaa::record_start(&record("arimaa", None, vec![])).unwrap_err();
        assert!(err.contains("2 setups"), "{err}");
    }
}
