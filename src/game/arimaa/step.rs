//! Single steps: plain steps, the two halves of a push, pulls; the turn
//! state that links them; and the generator of every legal next step.
//!
//! The semantics follow pyrimaa (the reference): a push starts by moving a
//! weaker enemy piece next to one of our unfrozen stronger pieces onto an
//! empty neighbour (only with 2 or more steps left) and must be completed at
//! once by any of our unfrozen pieces stronger than it stepping into the
//! vacated square; a pull is an enemy piece weaker than the piece we just
//! stepped with moving into the square that piece left (allowed even when
//! the puller was captured on a trap). An enemy step that could be a pull is
//! a pull.

use super::bitboard::{neighbors, Dir, Squares, FILE_A, FILE_H};
use super::piece::PieceType;
use super::position::Position;
use super::zobrist;
use crate::game::Side;

/// Why a step is illegal ([`Position::classify_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IllegalStep {
    #[error("no piece on the from square")]
    NoPiece,
    #[error("the target square is occupied")]
    Occupied,
    #[error("no steps left in this turn")]
    NoStepsLeft,
    #[error("a push must be completed first")]
    PushPending,
    #[error("the piece is frozen or too weak to complete the push")]
    CannotCompletePush,
    #[error("the piece is frozen")]
    Frozen,
    #[error("rabbits may not step backwards")]
    RabbitBackwards,
    #[error("no step left to complete a push")]
    NoStepForPush,
    #[error("no stronger unfrozen piece next to it to push or pull it")]
    NoPusher,
}

/// One step: a piece moves from `from` to the adjacent square `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Step {
    pub from: u8,
    pub to: u8,
}

impl Step {
    pub fn new(from: u8, to: u8) -> Step {
        Step { from, to }
    }

    pub fn dir(self) -> Dir {
        Dir::between(self.from, self.to).expect("steps join adjacent squares")
    }

    /// One byte: the from square and the direction.
    #[inline]
    pub(crate) fn pack(self) -> u8 {
        let d = match self.to.wrapping_sub(self.from) {
            8 => 0,
            0xf8 => 1,
            1 => 2,
            _ => 3,
        };
        self.from | (d << 6)
    }

    #[inline]
    pub(crate) fn unpack(b: u8) -> Step {
        let from = b & 63;
        let to = match b >> 6 {
            0 => from + 8,
            1 => from - 8,
            2 => from + 1,
            _ => from - 1,
        };
        Step { from, to }
    }
}

/// The most steps one turn state can offer (64 plain + 48 push starts + 3 pulls).
pub(crate) const MAX_STEPS: usize = 128;

/// The legal steps of one turn state gathered on the stack, for searches
/// that play each in turn ([`Position::step_list`]).
pub(crate) struct StepList {
    steps: [(Step, StepKind); MAX_STEPS],
    len: usize,
}

impl std::ops::Deref for StepList {
    type Target = [(Step, StepKind)];

    #[inline]
    fn deref(&self) -> &Self::Target {
        &self.steps[..self.len]
    }
}

/// What a step does, as pyrimaa's `steps` listing names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKind {
    /// Our piece moves on its own.
    Step,
    /// An enemy piece is pushed away; the push must be completed next.
    Push1,
    /// Our piece steps into the square the pushed piece left.
    Push2,
    /// An enemy piece follows the piece we just moved.
    Pull,
}

impl StepKind {
    pub fn name(self) -> &'static str {
        match self {
            StepKind::Step => "step",
            StepKind::Push1 => "push1",
            StepKind::Push2 => "push2",
            StepKind::Pull => "pull",
        }
    }
}

/// Where a turn stands between steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TurnState {
    /// Steps still allowed this turn (4 at the start).
    pub steps_left: u8,
    /// A push in progress: the pushed piece's type and the square it left.
    pub push: Option<(PieceType, u8)>,
    /// Our last plain step: the piece type and the square it left, which a
    /// weaker enemy piece next to it may be pulled into.
    pub last: Option<(PieceType, u8)>,
}

impl TurnState {
    pub const START: TurnState = TurnState {
        steps_left: 4,
        push: None,
        last: None,
    };

    /// Whether the turn may end here.
    pub fn can_end(&self) -> bool {
        self.push.is_none()
    }

    /// Drops the pull option when no enemy piece could use it, so that
    /// states that allow the same continuations compare equal.
    #[inline]
    pub fn normalized(self, pos: &Position) -> TurnState {
        match self.last {
            Some((kind, sq)) if !pos.has_weaker_enemy_next_to(kind, sq) => {
                TurnState { last: None, ..self }
            }
            _ => self,
        }
    }

    /// A hash of the state beyond the board, for transposition tables.
    #[inline]
    pub fn key(&self) -> u64 {
        let mut k = zobrist::STEPS_LEFT[self.steps_left as usize & 3];
        if let Some((kind, sq)) = self.push {
            k ^= zobrist::PUSH_FROM[kind as usize * 64 + sq as usize];
        }
        if let Some((kind, sq)) = self.last {
            k ^= zobrist::PULL_FROM[kind as usize * 64 + sq as usize];
        }
        k
    }
}

impl Position {
    /// Whether an enemy piece weaker than `kind` stands next to `sq`.
    #[inline]
    pub(crate) fn has_weaker_enemy_next_to(&self, kind: PieceType, sq: u8) -> bool {
        let them = self.side.other().index();
        let around = neighbors(1u64 << sq);
        self.pieces[them][..kind as usize]
            .iter()
            .any(|&b| b & around != 0)
    }

    /// Calls `f(step, kind)` for every legal step in `state`, in a fixed
    /// order (pulls, push starts, then plain steps; or push completions).
    #[inline]
    pub fn for_each_step(&self, state: &TurnState, mut f: impl FnMut(Step, StepKind)) {
        let side = self.side;
        let (me, them) = (side.index(), side.other().index());
        let frozen = self.frozen(side);
        let empty = self.empty_squares();
        if let Some((pushed, vacated)) = state.push {
            let mut pushers = 0;
            for k in pushed as usize + 1..6 {
                pushers |= self.pieces[me][k];
            }
            for from in Squares(pushers & !frozen & neighbors(1u64 << vacated)) {
                f(Step::new(from, vacated), StepKind::Push2);
            }
            return;
        }
        // Pulls into the square our last-moved piece left.
        let mut pull_victims = 0;
        if let Some((puller, left)) = state.last {
            let around = neighbors(1u64 << left);
            for k in 0..puller as usize {
                pull_victims |= self.pieces[them][k] & around;
            }
            for from in Squares(pull_victims) {
                f(Step::new(from, left), StepKind::Pull);
            }
        }
        // Push starts: an enemy piece next to one of our stronger unfrozen pieces.
        if state.steps_left >= 2 {
            let active = self.occ[me] & !frozen;
            let mut pushers = 0;
            for k in (1..6).rev() {
                pushers |= self.pieces[me][k] & active;
                let victims = self.pieces[them][k - 1] & neighbors(pushers);
                for from in Squares(victims) {
                    let pulled_into = match state.last {
                        Some((_, left)) if pull_victims >> from & 1 == 1 => Some(left),
                        _ => None,
                    };
                    for to in Squares(neighbors(1u64 << from) & empty) {
                        if Some(to) != pulled_into {
                            f(Step::new(from, to), StepKind::Push1);
                        }
                    }
                }
            }
        }
        // Plain steps; rabbits may not step backwards.
        let movable = self.occ[me] & !frozen;
        let rabbits = self.pieces[me][PieceType::Rabbit as usize] & movable;
        let others = movable & !rabbits;
        let forward = |b: u64| match side {
            Side::First => b << 8,
            Side::Second => b >> 8,
        };
        for from in Squares(others) {
            for to in Squares(neighbors(1u64 << from) & empty) {
                f(Step::new(from, to), StepKind::Step);
            }
        }
        for from in Squares(rabbits) {
            let b = 1u64 << from;
            let sideways = ((b & !FILE_A) >> 1) | ((b & !FILE_H) << 1);
            for to in Squares((sideways | forward(b)) & empty) {
                f(Step::new(from, to), StepKind::Step);
            }
        }
    }

    /// Every legal step in `state`, with its kind, in `for_each_step`'s
    /// order, without a heap allocation.
    #[inline]
    pub(crate) fn step_list(&self, state: &TurnState) -> StepList {
        let mut list = StepList {
            steps: [(Step::new(0, 0), StepKind::Step); MAX_STEPS],
            len: 0,
        };
        self.for_each_step(state, |step, kind| {
            list.steps[list.len] = (step, kind);
            list.len += 1;
        });
        list
    }

    /// Every legal step in `state`, with its kind.
    pub fn steps(&self, state: &TurnState) -> Vec<(Step, StepKind)> {
        let mut out = Vec::with_capacity(64);
        self.for_each_step(state, |s, k| out.push((s, k)));
        out
    }

    /// Plays a step that `for_each_step` produced, returning the new turn
    /// state (with `steps_left` 0 when the turn is used up; the side to move
    /// does not change here) and the capture it caused, if any.
    #[inline]
    pub fn apply_step(
        &mut self,
        state: &TurnState,
        step: Step,
        kind: StepKind,
    ) -> (TurnState, Option<(u8, super::piece::Piece)>) {
        let moved = self
            .piece_at(step.from)
            .expect("step from an occupied square");
        let captured = self.move_piece(step.from, step.to);
        let steps_left = state.steps_left - 1;
        let (push, last) = match kind {
            StepKind::Step => (None, Some((moved.kind, step.from))),
            StepKind::Push1 => (Some((moved.kind, step.from)), None),
            StepKind::Push2 | StepKind::Pull => (None, None),
        };
        (
            TurnState {
                steps_left,
                push,
                last,
            },
            captured,
        )
    }

    /// What kind of step `step` would be in `state`, or why it is illegal.
    pub fn classify_step(&self, state: &TurnState, step: Step) -> Result<StepKind, IllegalStep> {
        let mut found = None;
        self.for_each_step(state, |s, k| {
            if s == step && found.is_none() {
                found = Some(k);
            }
        });
        found.ok_or_else(|| self.why_illegal(state, step))
    }

    fn why_illegal(&self, state: &TurnState, step: Step) -> IllegalStep {
        let Some(piece) = self.piece_at(step.from) else {
            return IllegalStep::NoPiece;
        };
        if self.piece_at(step.to).is_some() {
            return IllegalStep::Occupied;
        }
        if state.steps_left == 0 {
            return IllegalStep::NoStepsLeft;
        }
        if piece.side == self.side {
            if let Some((_, vacated)) = state.push {
                if step.to != vacated {
                    return IllegalStep::PushPending;
                }
                return IllegalStep::CannotCompletePush;
            }
            if self.is_frozen(step.from) {
                return IllegalStep::Frozen;
            }
            return IllegalStep::RabbitBackwards;
        }
        if state.push.is_some() {
            return IllegalStep::PushPending;
        }
        if state.steps_left < 2 {
            return IllegalStep::NoStepForPush;
        }
        IllegalStep::NoPusher
    }
}
