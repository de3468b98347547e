//! Arimaa played one step at a time: a [`Game`] whose moves are single
//! steps and ending the turn early, for searches and policy heads that work
//! over steps instead of whole turns.
//!
//! A whole turn has thousands of distinct outcomes (3,353 at the standard
//! opening) and no single board point, so a policy head cannot score it and
//! MCTS spends its simulations one per child. Over steps the branching is a
//! few dozen, and every step is a from-square and a direction: the policy
//! index is `direction * 64 + point` on four direction planes, with a fifth
//! plane whose first point is "end the turn now" ([`STEP_POLICY_PLANES`]).
//!
//! The rules stay the whole-turn game's: the turn in progress is played on
//! the [`Arimaa`] it started from when it ends (after the fourth step, or a
//! pass), which applies goal, elimination, immobilization and repetition.
//! A step is legal only if the turn can still end legally after it (it
//! changes the board, completes any push, and does not make a position for
//! the third time), so no line of steps leads into a dead end; a pass is
//! legal when the turn so far may end. The side to move stays the same for
//! the steps of one turn: searches over this game must back values up by
//! who moved, not by alternation.
//!
//! Step orders that reach the same board mid-turn are transpositions:
//! [`Game::hash_key`] is the board, the side, the turn state and the board
//! the turn started from (which decides whether a pass is legal), so equal
//! keys have equal futures.

use super::bitboard::Dir;
use super::game::Arimaa;
use super::moves::Move;
use super::notation;
use super::piece::side_letter;
use super::position::Position;
use super::step::{Step, StepKind, TurnState};
use crate::game::{Game, GameError, Outcome, Side};

/// Policy planes of the step game: north, south, east, west steps from
/// each square, then a plane whose point 0 is the pass.
pub const STEP_POLICY_PLANES: usize = 5;

/// One move of the step game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepMove {
    /// One step of the turn in progress (a plain step, either half of a
    /// push, a pull).
    Step(Step, StepKind),
    /// End the turn before its fourth step.
    Pass,
}

/// Arimaa inside a turn: the game at the turn's start, the board after the
/// steps played since, and the turn's state.
#[derive(Clone, Debug)]
pub struct ArimaaSteps {
    /// The game as it was when the turn in progress began.
    start: Arimaa,
    /// The board now (its side to move is the mover of the turn).
    pos: Position,
    turn: TurnState,
    /// The steps played so far in this turn.
    steps: Move,
    /// Step moves (steps and passes) played since the start.
    ply: u32,
}

impl ArimaaSteps {
    /// The step game at the start of `game`'s next turn.
    pub fn from_game(game: Arimaa) -> Self {
        let pos = *game.position();
        ArimaaSteps {
            start: game,
            pos,
            turn: TurnState::START,
            steps: Move::EMPTY,
            ply: 0,
        }
    }

    /// The whole-turn game at the start of the turn in progress.
    pub fn turn_start(&self) -> &Arimaa {
        &self.start
    }

    /// The board after the steps played so far.
    pub fn position(&self) -> &Position {
        &self.pos
    }

    /// The steps played so far in this turn.
    pub fn steps_this_turn(&self) -> Move {
        self.steps
    }

    pub fn turn_state(&self) -> TurnState {
        self.turn
    }

    /// Whether a turn that leaves `pos` is a legal move: the board changed
    /// and the position (the opponent to move) is not there a third time.
    fn may_finish_on(&self, pos: &Position) -> bool {
        if pos.board_hash() == self.start.position().board_hash() {
            return false;
        }
        let mut after = *pos;
        after.set_side_to_move(pos.side_to_move().other());
        self.start.occurrences(after.key()) < 2
    }

    /// Whether the turn, at `pos` in `turn` after at least one step, can
    /// still end legally (here, or after more steps).
    fn completable(&self, pos: &Position, turn: &TurnState) -> bool {
        if turn.can_end() && self.may_finish_on(pos) {
            return true;
        }
        if turn.steps_left == 0 {
            return false;
        }
        let mut found = false;
        pos.for_each_step(turn, |step, kind| {
            if !found {
                let mut next = *pos;
                let (next_turn, _) = next.apply_step(turn, step, kind);
                found = self.completable(&next, &next_turn);
            }
        });
        found
    }

    /// Whether ending the turn now is legal.
    fn may_pass(&self) -> bool {
        !self.steps.is_empty() && self.turn.can_end() && self.may_finish_on(&self.pos)
    }

    /// Plays the turn in progress on the game and starts the next one.
    fn end_turn(&mut self) {
        self.start.play_move(self.steps);
        self.pos = *self.start.position();
        self.turn = TurnState::START;
        self.steps = Move::EMPTY;
    }

    fn bad_move(text: &str, why: impl Into<String>) -> GameError {
        GameError::BadMove {
            token: text.to_string(),
            why: why.into(),
        }
    }
}

impl Game for ArimaaSteps {
    type Move = StepMove;
    const NAME: &'static str = "arimaa-steps";
    const DEFAULT_SIZE: usize = 8;
    const POLICY_PLANES: usize = STEP_POLICY_PLANES;

    fn new() -> Self {
        ArimaaSteps::from_game(Arimaa::new())
    }

    fn side_to_move(&self) -> Side {
        self.pos.side_to_move()
    }

    fn ply(&self) -> u32 {
        self.ply
    }

    fn legal_moves(&self, out: &mut Vec<StepMove>) {
        out.clear();
        if self.start.outcome().is_some() {
            return;
        }
        self.pos.for_each_step(&self.turn, |step, kind| {
            let mut next = self.pos;
            let (next_turn, _) = next.apply_step(&self.turn, step, kind);
            if self.completable(&next, &next_turn) {
                out.push(StepMove::Step(step, kind));
            }
        });
        if self.may_pass() {
            out.push(StepMove::Pass);
        }
    }

    fn play(&mut self, mv: StepMove) {
        self.ply += 1;
        match mv {
            StepMove::Step(step, kind) => {
                self.turn = self.pos.apply_step(&self.turn, step, kind).0;
                self.steps = self.steps.with(step);
                if self.turn.steps_left == 0 {
                    self.end_turn();
                }
            }
            StepMove::Pass => self.end_turn(),
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.start.outcome()
    }

    fn move_to_string(&self, mv: StepMove) -> String {
        match mv {
            StepMove::Step(step, _) => notation::move_to_string(&self.pos, Move::EMPTY.with(step)),
            StepMove::Pass => "pass".into(),
        }
    }

    fn parse_move(&self, text: &str) -> Result<StepMove, GameError> {
        if self.start.outcome().is_some() {
            return Err(Self::bad_move(text, "the game is over"));
        }
        let mut legal = Vec::new();
        self.legal_moves(&mut legal);
        if text.trim() == "pass" {
            return legal
                .contains(&StepMove::Pass)
                .then_some(StepMove::Pass)
                .ok_or_else(|| {
                    Self::bad_move(
                        text,
                        "the turn may not end here (no step yet, a push to complete, \
                         the board unchanged, or a third repetition)",
                    )
                });
        }
        let mut tokens = text.split_whitespace();
        let token = tokens.next().unwrap_or("");
        // A capture token after the step is allowed, as in whole turns.
        if let Some(extra) = tokens.find(|t| !(t.len() == 4 && t.ends_with('x'))) {
            return Err(Self::bad_move(
                text,
                format!("one step or 'pass' is one move; '{extra}' is a second step"),
            ));
        }
        let (piece, step) = notation::parse_step_token(token)?;
        if self.pos.piece_at(step.from) != Some(piece) {
            return Err(Self::bad_move(
                text,
                format!("no '{}' on the step's square", piece.to_char()),
            ));
        }
        let found = legal
            .iter()
            .find(|m| matches!(m, StepMove::Step(s, _) if *s == step));
        let Some(&mv) = found else {
            return Err(Self::bad_move(text, "not a legal step here"));
        };
        // Capture tokens must name the capture that happens.
        if text != self.move_to_string(mv) && text.split_whitespace().count() > 1 {
            return Err(Self::bad_move(
                text,
                format!("the step writes as '{}'", self.move_to_string(mv)),
            ));
        }
        Ok(mv)
    }

    /// The turn's start and the steps since: `<side> <board> | <steps>`.
    fn to_text(&self) -> String {
        let line = notation::position_line(self.start.position());
        if self.steps.is_empty() {
            line
        } else {
            format!(
                "{line} | {}",
                notation::move_to_string(self.start.position(), self.steps)
            )
        }
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let (pos, tail) = notation::parse_position_line(text)?;
        let mut g = ArimaaSteps::from_game(Arimaa::from_position(pos, 2));
        for token in tail.unwrap_or("").split_whitespace() {
            if token.len() == 4 && token.ends_with('x') {
                continue;
            }
            if g.side_to_move() != pos.side_to_move() || g.steps.len() == 4 {
                return Err(GameError::BadPosition {
                    text: text.to_string(),
                    why: format!("'{token}' is past the end of the turn"),
                });
            }
            let mv = g.parse_move(token).map_err(|e| GameError::BadPosition {
                text: text.to_string(),
                why: e.to_string(),
            })?;
            g.play(mv);
        }
        g.ply = 0;
        Ok(g)
    }

    fn render(&self) -> String {
        let header = format!(
            "{}{} after {} step(s)",
            self.start.turn_number(),
            side_letter(self.pos.side_to_move()),
            self.steps.len()
        );
        notation::long_diagram(&self.pos, &header)
    }

    fn hash_key(&self) -> u64 {
        let inside = if self.steps.is_empty() {
            0
        } else {
            self.start.position().board_hash().rotate_left(29)
        };
        self.pos.key() ^ self.turn.normalized(&self.pos).key() ^ inside
    }

    /// In the mover's frame, as Arimaa's side-to-move encoders draw the
    /// board: row 0 is the mover's goal rank (rank 8 for gold, rank 1 for
    /// silver) and "north" is towards it, so a policy head sees each step
    /// where the planes put its piece.
    fn policy_index(&self, mv: StepMove) -> Option<usize> {
        Some(match mv {
            StepMove::Step(step, _) => {
                let dir = Dir::between(step.from, step.to)?;
                let (file, rank) = (step.from as usize % 8, step.from as usize / 8);
                let (row, dir) = match self.side_to_move() {
                    Side::First => (7 - rank, dir),
                    Side::Second => (
                        rank,
                        match dir {
                            Dir::North => Dir::South,
                            Dir::South => Dir::North,
                            other => other,
                        },
                    ),
                };
                dir as usize * 64 + row * 8 + file
            }
            StepMove::Pass => 4 * 64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;
    use rand::RngExt;
    use std::collections::HashSet;

    /// Every board a whole turn can reach by walking the step game, with
    /// the check that no line of legal steps is a dead end.
    fn boards_by_steps(g: &ArimaaSteps, out: &mut HashSet<u64>, visited: &mut HashSet<u64>) {
        if !visited.insert(g.hash_key()) {
            return;
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        assert!(
            !moves.is_empty(),
            "a dead end inside a turn:\n{}",
            g.render()
        );
        for mv in moves {
            let mut next = g.clone();
            next.play(mv);
            if next.side_to_move() != g.side_to_move() || next.outcome().is_some() {
                // The turn ended: the board it ended on.
                let mut board = *next.turn_start().position();
                board.set_side_to_move(g.side_to_move());
                out.insert(board.board_hash());
            } else {
                boards_by_steps(&next, out, visited);
            }
        }
    }

    /// Random positions along random games (random whole turns).
    fn random_positions(games: u64, every: u32) -> Vec<Arimaa> {
        let mut positions = Vec::new();
        for seed in 0..games {
            let mut rng = seeded_rng(seed, 11);
            let mut g = Arimaa::new();
            let mut moves = Vec::new();
            while g.outcome().is_none() && g.ply() < 120 {
                g.legal_moves(&mut moves);
                let mv = moves[rng.random_range(0..moves.len())];
                g.play(mv);
                if g.ply() % every == 0 && g.outcome().is_none() {
                    positions.push(g.clone());
                }
            }
        }
        positions
    }

    #[test]
    fn step_lines_reach_exactly_the_whole_turn_moves_boards() {
        let positions = random_positions(6, 7);
        assert!(positions.len() > 40, "{}", positions.len());
        for game in positions {
            let mut want = HashSet::new();
            let mut keyed = Vec::new();
            game.legal_moves_with_hashes(&mut keyed);
            for (mv, _) in &keyed {
                let mut after = game.clone();
                after.play(*mv);
                let mut board = *after.position();
                board.set_side_to_move(game.side_to_move());
                want.insert(board.board_hash());
            }
            let mut got = HashSet::new();
            boards_by_steps(
                &ArimaaSteps::from_game(game.clone()),
                &mut got,
                &mut HashSet::new(),
            );
            assert_eq!(got, want, "{}", game.render());
        }
    }

    #[test]
    fn a_turn_of_steps_plays_the_same_move_as_the_whole_turn_game() {
        for game in random_positions(4, 5) {
            let mut rng = seeded_rng(game.ply() as u64, 3);
            let mut g = ArimaaSteps::from_game(game.clone());
            let mover = g.side_to_move();
            let mut moves = Vec::new();
            let mut texts = Vec::new();
            while g.side_to_move() == mover && g.outcome().is_none() {
                g.legal_moves(&mut moves);
                let mv = moves[rng.random_range(0..moves.len())];
                // Every move writes and reads back, and has its own logit.
                let text = g.move_to_string(mv);
                assert_eq!(g.parse_move(&text).unwrap(), mv, "{text}");
                let indices: HashSet<_> = moves.iter().map(|&m| g.policy_index(m)).collect();
                assert_eq!(indices.len(), moves.len());
                assert!(indices.iter().all(|i| i.is_some_and(|i| i < 5 * 64)));
                if mv != StepMove::Pass {
                    texts.push(text);
                }
                g.play(mv);
            }
            let mut whole = game.clone();
            whole.play_str(&texts.join(" ")).unwrap();
            assert_eq!(g.turn_start().position(), whole.position());
            assert_eq!(g.outcome(), whole.outcome());
        }
    }

    #[test]
    fn text_round_trips_inside_a_turn_and_bad_moves_are_refused() {
        let mut g = ArimaaSteps::new();
        let start_key = g.hash_key();
        assert!(g.parse_move("pass").is_err(), "no pass before a step");
        let e = g.parse_move("Ee2n Md2n").unwrap_err().to_string();
        assert!(e.contains("second step"), "{e}");
        let e = g.parse_move("Ee2s").unwrap_err().to_string();
        assert!(e.contains("Ee2s"), "{e}");
        g.play_str("Ee2n").unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        assert_ne!(g.hash_key(), start_key);
        let text = g.to_text();
        assert!(text.ends_with("| Ee2n"), "{text}");
        let back = ArimaaSteps::from_text(&text).unwrap();
        assert_eq!(back.position(), g.position());
        assert_eq!(back.hash_key(), g.hash_key());
        // Back to the start board: legal as a step, but the turn may not
        // end there, so the pass is not offered.
        g.play_str("Ee3s").unwrap();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        assert!(!moves.contains(&StepMove::Pass));
        g.play_str("Ee2n").unwrap();
        g.play_str("pass").unwrap();
        assert_eq!(g.side_to_move(), Side::Second);
        assert_eq!(g.ply(), 4);
        let e = ArimaaSteps::from_text("g 12345").unwrap_err().to_string();
        assert!(!e.is_empty());
    }

    #[test]
    fn policy_indices_are_in_the_movers_frame_with_the_pass_last() {
        let mut g = ArimaaSteps::new();
        let north = g.parse_move("Ee2n").unwrap();
        // e2: file 4, rank 2 -> row 6 for gold; north, towards gold's goal, is plane 0.
        assert_eq!(g.policy_index(north), Some(6 * 8 + 4));
        assert!(g.parse_move("Md2w").is_err(), "c2 is occupied");
        assert_eq!(g.policy_index(StepMove::Pass), Some(256));
        for step in ["Ee2n", "Ee3n", "Ee4n", "Ee5e"] {
            g.play_str(step).unwrap();
        }
        // Silver's mirror image of gold's first step: d7 south, towards
        // silver's goal, is row 6 of silver's frame, plane 0.
        assert_eq!(g.side_to_move(), Side::Second);
        let south = g.parse_move("ed7s").unwrap();
        assert_eq!(g.policy_index(south), Some(6 * 8 + 3));
        let west = g.parse_move("ed7w");
        assert!(west.is_err(), "c7 is occupied");
    }
}
