//! A game being replayed from its move list: the two setups, then the
//! moves through the rules engine, with takebacks.

use super::fail::{outcome_words, Fail};
use super::reason;
use super::ArchiveError;
use crate::game::arimaa::{Arimaa, Setup};
use crate::game::{Game, Side};

/// `<piece><file><rank><n|s|e|w|x>`.
fn is_step_or_capture_token(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 4
        && b"RCDHMErcdhme".contains(&b[0])
        && (b'a'..=b'h').contains(&b[1])
        && (b'1'..=b'8').contains(&b[2])
        && b"nsewx".contains(&b[3])
}

/// A game being replayed: the setups, then the moves.
pub(super) struct Replay {
    pub(super) gold: Option<Setup>,
    pub(super) silver: Option<Setup>,
    pub(super) game: Option<Arimaa>,
    /// Canonical move strings (engine notation with capture tokens).
    pub(super) moves: Vec<String>,
}

impl Replay {
    pub(super) fn new() -> Replay {
        Replay {
            gold: None,
            silver: None,
            game: None,
            moves: Vec::new(),
        }
    }

    /// The turn expected next: `(1, First)` and `(1, Second)` for the setups.
    pub(super) fn expected(&self) -> (u32, Side) {
        match (&self.gold, &self.silver, &self.game) {
            (None, _, _) => (1, Side::First),
            (Some(_), None, _) => (1, Side::Second),
            (_, _, Some(g)) => (g.turn_number(), g.side_to_move()),
            _ => unreachable!("the game starts with the second setup"),
        }
    }

    fn start_game(&mut self) -> Result<(), ArchiveError> {
        let (Some(gold), Some(silver)) = (&self.gold, &self.silver) else {
            return Err(ArchiveError::SetupMissing);
        };
        let mut g = Arimaa::from_setups(gold, silver)?;
        for m in &self.moves {
            let mv = g.parse_move(m).map_err(|error| ArchiveError::Takeback {
                mv: m.clone(),
                error,
            })?;
            g.play(mv);
        }
        self.game = Some(g);
        Ok(())
    }

    /// Undoes the last turn (a move or a setup); returns its label.
    pub(super) fn take_back(&mut self) -> Option<(u32, Side)> {
        if self.game.is_some() {
            if self.moves.pop().is_none() {
                self.game = None;
                self.silver = None;
                return Some((1, Side::Second));
            }
            self.start_game().expect("moves that were legal replay");
            return Some(self.expected());
        }
        if self.silver.take().is_some() {
            return Some((1, Side::Second));
        }
        self.gold.take().map(|_| (1, Side::First))
    }

    /// Plays one turn (label already checked) given as its tokens after the label.
    pub(super) fn play_turn(&mut self, label: &str, steps: &[&str]) -> Result<(), Fail> {
        let text = steps.join(" ");
        if self.gold.is_none() || self.silver.is_none() {
            let side = if self.gold.is_none() {
                Side::First
            } else {
                Side::Second
            };
            let setup = Setup::parse(side, &text).map_err(|e| {
                let mut f = Fail::from_game_error(reason::BAD_SETUP, label, e);
                // Name the piece whose square the complaint is about.
                if f.token.as_deref() == Some(text.as_str()) {
                    if let Some(t) = steps.iter().find(|t| {
                        t.len() == 3 && t.is_char_boundary(1) && f.detail.contains(&t[1..])
                    }) {
                        f.token = Some(t.to_string());
                    }
                }
                f
            })?;
            if side == Side::First {
                self.gold = Some(setup);
            } else {
                self.silver = Some(setup);
                self.start_game()
                    .map_err(|e| Fail::new(reason::BAD_SETUP, Some(label), None, e.to_string()))?;
            }
            return Ok(());
        }
        if let Some(bad) = steps.iter().find(|t| !is_step_or_capture_token(t)) {
            return Err(Fail::new(
                reason::UNPARSEABLE_TOKEN,
                Some(label),
                Some(*bad),
                "a step is a piece letter, a square and n/s/e/w (e.g. Ed2n); a capture is the piece, the trap and x (e.g. Dc3x)".into(),
            ));
        }
        let g = self.game.as_mut().expect("both setups played");
        if let Some((outcome, term)) = g.result() {
            return Err(Fail::new(
                reason::CONTRADICTS_RULES,
                Some(label),
                Some(&text),
                format!(
                    "the game was already over ({} by {}) but the record goes on",
                    outcome_words(Some(outcome)),
                    term.name()
                ),
            ));
        }
        let mv = g
            .parse_move(&text)
            .map_err(|e| Fail::from_game_error(reason::ILLEGAL_MOVE, label, e))?;
        self.moves.push(g.move_to_string(mv));
        g.play(mv);
        Ok(())
    }
}
