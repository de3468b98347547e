//! The game: a position at the start of a turn, the history the repetition
//! rule needs, and the end-of-game checks in the official order.

use super::movegen::MoveGen;
use super::moves::Move;
use super::notation::{self, Setup};
use super::piece::side_letter;
use super::position::Position;
use super::setup::SetupError;
use super::step::TurnState;
use super::termination::Termination;
use crate::game::{Game, GameError, Outcome, Side};
use std::cell::RefCell;

thread_local! {
    static MOVEGEN: RefCell<MoveGen> = RefCell::new(MoveGen::new());
}

/// Runs `f` with this thread's move generator.
pub fn with_movegen<R>(f: impl FnOnce(&mut MoveGen) -> R) -> R {
    MOVEGEN.with(|g| f(&mut g.borrow_mut()))
}

/// An Arimaa game after both setups: whose turn it is, the move number, the
/// positions seen so far (for the third-repetition rule) and the result.
#[derive(Clone, Debug)]
pub struct Arimaa {
    pos: Position,
    turn: u32,
    ply: u32,
    /// Repetition keys (board and side to move) of every turn start so far,
    /// the current one included.
    history: Vec<u64>,
    result: Option<(Outcome, Termination)>,
}

impl PartialEq for Arimaa {
    fn eq(&self, other: &Self) -> bool {
        self.pos == other.pos && self.history == other.history
    }
}

impl Arimaa {
    /// The game after the two setups, gold to move (turn `2g`).
    pub fn from_setups(gold: &Setup, silver: &Setup) -> Result<Arimaa, SetupError> {
        if gold.side != Side::First || silver.side != Side::Second {
            return Err(SetupError::Sides);
        }
        let mut pos = Position::empty(Side::First);
        gold.place_on(&mut pos)?;
        silver.place_on(&mut pos)?;
        Ok(Arimaa::from_position(pos, 2))
    }

    /// A game starting from any position (the side to move is the
    /// position's); `turn` is the move number shown in labels.
    pub fn from_position(pos: Position, turn: u32) -> Arimaa {
        let mut g = Arimaa {
            pos,
            turn,
            ply: 0,
            history: vec![pos.key()],
            result: None,
        };
        g.result = g.check_start();
        g
    }

    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The move number of the turn about to be played (2 is the first after the setups).
    pub fn turn_number(&self) -> u32 {
        self.turn
    }

    /// `12g` for the turn about to be played.
    pub fn turn_label(&self) -> String {
        notation::turn_label(self.turn, self.pos.side)
    }

    /// How the game ended, once it has.
    pub fn termination(&self) -> Option<Termination> {
        self.result.map(|(_, t)| t)
    }

    /// The result with its reason.
    pub fn result(&self) -> Option<(Outcome, Termination)> {
        self.result
    }

    /// How often the position with this repetition key has occurred.
    pub fn occurrences(&self, key: u64) -> usize {
        self.history.iter().filter(|&&k| k == key).count()
    }

    /// Repetition keys of positions already seen twice: moves reaching them are illegal.
    fn banned_keys(&self) -> Vec<u64> {
        let mut seen_twice = Vec::new();
        for (i, &k) in self.history.iter().enumerate() {
            if self.history[..i].contains(&k) && !seen_twice.contains(&k) {
                seen_twice.push(k);
            }
        }
        seen_twice
    }

    /// The distinct legal moves with the board hash each leads to.
    pub fn legal_moves_with_hashes(&self, out: &mut Vec<(Move, u64)>) {
        out.clear();
        if self.result.is_some() {
            return;
        }
        with_movegen(|g| g.generate_with_hashes(&self.pos, out));
        let banned = self.banned_keys();
        if !banned.is_empty() {
            let side_key = Position::side_key(self.pos.side.other());
            out.retain(|&(_, h)| !banned.contains(&(h ^ side_key)));
        }
    }

    /// Whether `side` has any step at the start of its turn.
    fn can_step(pos: &Position) -> bool {
        let mut any = false;
        pos.for_each_step(&TurnState::START, |_, _| any = true);
        any
    }

    /// End checks for a position nobody has moved into yet (loaded from text).
    fn check_start(&self) -> Option<(Outcome, Termination)> {
        let mover = self.pos.side.other();
        Self::board_result(&self.pos, mover).or_else(|| {
            (!Self::can_step(&self.pos))
                .then_some((Outcome::Win(mover), Termination::Immobilization))
        })
    }

    /// Goal, then elimination, after `mover` moved (the order of the rules).
    fn board_result(pos: &Position, mover: Side) -> Option<(Outcome, Termination)> {
        let opp = mover.other();
        if pos.rabbits_on_goal(mover) != 0 {
            return Some((Outcome::Win(mover), Termination::Goal));
        }
        if pos.rabbits_on_goal(opp) != 0 {
            return Some((Outcome::Win(opp), Termination::Goal));
        }
        if pos.rabbit_count(opp) == 0 {
            return Some((Outcome::Win(mover), Termination::Elimination));
        }
        if pos.rabbit_count(mover) == 0 {
            return Some((Outcome::Win(opp), Termination::Elimination));
        }
        None
    }

    fn check_after_move(&self) -> Option<(Outcome, Termination)> {
        let mover = self.pos.side.other();
        if let Some(r) = Self::board_result(&self.pos, mover) {
            return Some(r);
        }
        if !Self::can_step(&self.pos) {
            return Some((Outcome::Win(mover), Termination::Immobilization));
        }
        // Only when some position has occurred twice can every move be barred.
        let banned = self.banned_keys();
        if !banned.is_empty() && !self.has_unbarred_move(&banned) {
            return Some((Outcome::Win(mover), Termination::Repetition));
        }
        None
    }

    /// Whether some move avoids the `banned` repetition keys. One-step moves
    /// almost always settle it; the full generation runs only when every one
    /// of them is barred.
    fn has_unbarred_move(&self, banned: &[u64]) -> bool {
        let side_key = Position::side_key(self.pos.side.other());
        let mut found = false;
        self.pos.for_each_step(&TurnState::START, |step, kind| {
            if found || kind == super::step::StepKind::Push1 {
                return;
            }
            let mut after = self.pos;
            after.move_piece(step.from, step.to);
            if !banned.contains(&(after.board_hash() ^ side_key)) {
                found = true;
            }
        });
        if found {
            return true;
        }
        let mut moves = Vec::new();
        with_movegen(|g| g.generate_with_hashes(&self.pos, &mut moves));
        moves
            .iter()
            .any(|&(_, h)| !banned.contains(&(h ^ side_key)))
    }

    /// Plays a move known to be legal here (from `legal_moves` or `parse_move`).
    pub fn play_move(&mut self, mv: Move) {
        debug_assert!(self.result.is_none(), "game is over");
        for step in mv.steps() {
            self.pos.move_piece(step.from, step.to);
        }
        let mover = self.pos.side;
        self.pos.side = mover.other();
        if mover == Side::Second {
            self.turn += 1;
        }
        self.ply += 1;
        self.history.push(self.pos.key());
        self.result = self.check_after_move();
    }

    /// Declares the game over for a reason the board cannot show
    /// (resignation, time), as game records do.
    pub fn set_result(&mut self, outcome: Outcome, termination: Termination) {
        self.result = Some((outcome, termination));
    }
}

impl Arimaa {
    /// Whether each step of `mv` is a legal step in turn from the start of
    /// the turn (its notation can then be written).
    fn steps_are_legal(&self, mv: Move) -> bool {
        if self.outcome().is_some() {
            return false;
        }
        let mut p = *self.position();
        let mut turn = TurnState::START;
        for step in mv.steps() {
            if p.piece_at(step.from).is_none() {
                return false;
            }
            match p.classify_step(&turn, step) {
                Ok(kind) => turn = p.apply_step(&turn, step, kind).0,
                Err(_) => return false,
            }
        }
        true
    }
}

impl Game for Arimaa {
    type Move = Move;
    const NAME: &'static str = "arimaa";
    const DEFAULT_SIZE: usize = 8;

    /// `legal_moves` lists one step sequence per distinct resulting board
    /// (and takes about a millisecond), while players may reach that board
    /// by other steps: a move is legal when every step is legal in turn
    /// and its notation reads back as the same steps (a turn that changes
    /// the board and repeats no position a third time).
    fn is_legal(&self, mv: Move, _scratch: &mut Vec<Move>) -> bool {
        self.steps_are_legal(mv)
            && self
                .parse_move(&self.move_to_string(mv))
                .is_ok_and(|back| back == mv)
    }

    fn describe_move(&self, mv: Move) -> String {
        if self.steps_are_legal(mv) {
            self.move_to_string(mv)
        } else {
            format!("{mv:?}")
        }
    }

    fn new() -> Self {
        Arimaa::from_setups(
            &Setup::standard(Side::First),
            &Setup::standard(Side::Second),
        )
        .expect("standard setups")
    }

    fn side_to_move(&self) -> Side {
        self.pos.side
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn legal_moves(&self, out: &mut Vec<Move>) {
        let mut keyed = Vec::new();
        self.legal_moves_with_hashes(&mut keyed);
        out.clear();
        out.extend(keyed.into_iter().map(|(m, _)| m));
    }

    fn play(&mut self, mv: Move) {
        self.play_move(mv);
    }

    fn outcome(&self) -> Option<Outcome> {
        self.result.map(|(o, _)| o)
    }

    fn hash_key(&self) -> u64 {
        self.pos.key()
    }

    fn move_to_string(&self, mv: Move) -> String {
        notation::move_to_string(&self.pos, mv)
    }

    fn parse_move(&self, text: &str) -> Result<Move, GameError> {
        if self.result.is_some() {
            return Err(GameError::BadMove {
                token: text.to_string(),
                why: "the game is over".into(),
            });
        }
        let (mv, mut after) = notation::parse_move(&self.pos, text)?;
        after.side = self.pos.side.other();
        if self.occurrences(after.key()) >= 2 {
            return Err(GameError::BadMove {
                token: text.to_string(),
                why: "it would make the same position a third time".into(),
            });
        }
        Ok(mv)
    }

    fn to_text(&self) -> String {
        notation::position_line(&self.pos)
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let (pos, tail) = notation::parse_position_line(text)?;
        if tail.is_some() {
            return Err(GameError::BadPosition {
                text: text.to_string(),
                why: "a game position starts a turn: no '| steps' part".into(),
            });
        }
        Ok(Arimaa::from_position(pos, 2))
    }

    fn render(&self) -> String {
        let header = format!("{}{}", self.turn, side_letter(self.pos.side));
        notation::long_diagram(&self.pos, &header)
    }
}
