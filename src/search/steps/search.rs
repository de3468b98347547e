//! Negamax alpha-beta over Arimaa steps.
//!
//! A node is a position inside a turn: the board, the turn state (steps
//! left, a push to complete, a piece that may pull) and the steps played
//! since the turn began. Its children are the legal next steps
//! ([`Position::for_each_step`]) and, once at least one step has been
//! played, ending the turn early (a pass). The side to move changes only
//! when a turn ends; the turn is then played on the game
//! ([`Arimaa::play_move`]), which applies the goal, elimination,
//! immobilization and repetition rules, so the step search has no rules of
//! its own. A turn may not end on the board it started from, nor on a
//! position already seen twice.
//!
//! Depth counts steps, and a pass spends the steps it gives up: four steps
//! are exactly one turn and eight two, so at those depths the search sees
//! the same positions as the full-move search at depth 1 and 2.
//!
//! Around the negamax: iterative deepening one step at a time from one
//! turn; a transposition table ([`TranspositionTable`]) keyed by the board,
//! the side to move, the turn state and (inside a turn) the board the turn
//! started from, which decides whether a pass is allowed; move ordering
//! (the table's move, a rabbit stepping onto goal, captures, killers,
//! pushes and pulls, then the rest); and at the horizon, a turn start
//! whose side to move can reach goal within the turn
//! ([`goal::can_reach_goal`]) is scored as won.

use super::psq_eval::{StepScorer, Sums};
use crate::game::arimaa::bitboard::{RANK_1, RANK_8};
use crate::game::arimaa::{
    goal, Arimaa, Move, Piece, PieceType, Position, Step, StepKind, TurnState,
};
use crate::game::{Game, Side};
use crate::search::alphabeta::{terminal_score, WIN};
use crate::search::tt::{Bound, TranspositionTable};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const INF: i32 = i32::MAX - 1;

/// Nodes between two readings of the clock.
const CLOCK_EVERY: u64 = 512;

/// Marks the table keys of a short iteration's nodes inside the root's turn.
const SHORT_TURN_KEY: u64 = 0x5bd1_e995_8f3c_a7d3;

/// A node with no legal continuation (a turn that can only end where it
/// began or on a third repetition): worse than any real line, so never
/// chosen while another exists.
const DEAD_END: i32 = -(WIN + 1_000);

/// One move of the step tree: a step, or ending the turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StepChoice {
    Step(Step, StepKind),
    Pass,
}

/// What the search may spend and how it searches.
#[derive(Clone, Copy, Debug)]
pub struct StepLimits<'a> {
    /// The deepest iteration in steps (at least 4: one whole turn).
    pub max_steps: u32,
    pub deadline: Option<Instant>,
    pub max_nodes: Option<u64>,
    pub stop: Option<&'a AtomicBool>,
    /// Score horizon turn starts whose mover can reach goal as won.
    pub goal_threats: bool,
    /// Use the transposition table.
    pub table: bool,
    /// Shuffles the root's steps before ordering them, so equal scores are
    /// broken by this seed; `None` keeps the generator's order.
    pub tie_seed: Option<u64>,
}

impl StepLimits<'static> {
    /// Only a depth, with goal threats and the table on.
    pub fn steps(max_steps: u32) -> Self {
        StepLimits {
            max_steps,
            deadline: None,
            max_nodes: None,
            stop: None,
            goal_threats: true,
            table: true,
            tie_seed: None,
        }
    }
}

/// What the table keeps as a node's best: the step or pass, and inside
/// the root's turn the rest of that turn from the node (so a result taken
/// from the table still says which turn it is the value of).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TableMove {
    choice: StepChoice,
    rest_of_turn: Move,
}

/// What a step search found.
#[derive(Clone, Debug, PartialEq)]
pub struct StepSearchResult {
    /// The turn chosen (its steps in order); `None` when no iteration
    /// finished or the game is over.
    pub best: Option<Move>,
    /// Its score for the side to move.
    pub score: i32,
    /// The deepest finished iteration, in steps (0: none).
    pub depth: u32,
    /// Nodes visited: every position a step or a pass led to.
    pub nodes: u64,
    pub elapsed: Duration,
}

/// A child generated at a node, with what ordering needs.
#[derive(Clone, Copy)]
struct Child {
    choice: StepChoice,
    pos: Position,
    turn: TurnState,
    sums: Sums,
    rank: u8,
}

struct StepSearcher<'a> {
    scorer: &'a StepScorer,
    limits: StepLimits<'a>,
    nodes: u64,
    aborted: bool,
    /// Searching the first iteration, which budgets do not cut.
    first_iteration: bool,
    /// An iteration of fewer than 4 steps: the root's turn ends at the
    /// horizon, so its answer is a whole (short) turn.
    short_turn: bool,
    /// The node count at which the clock is read next.
    next_clock_read: u64,
    tt: Option<TranspositionTable<TableMove>>,
    killers: Vec<[Option<StepChoice>; 2]>,
    /// Child lists reused per step ply.
    lists: Vec<Vec<Child>>,
    /// Inside the root's turn: the best line's remaining steps of that
    /// turn from the node last searched at each step ply.
    rest_of_turn: Vec<Move>,
}

/// Where a node stands: the game at the start of its turn, and the turn so
/// far.
struct Node<'g> {
    game: &'g Arimaa,
    pos: Position,
    turn: TurnState,
    steps: Move,
    sums: Sums,
    /// Turns ended between the root and here (wins are scored in turns).
    turns: u32,
    /// Steps between the root and here.
    ply: usize,
}

impl StepSearcher<'_> {
    fn out_of_budget(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        // The first iteration (one turn) always finishes unless stopped:
        // it is the least answer, and cut short it would leave none.
        let limited = !self.first_iteration
            && (self.limits.max_nodes.is_some_and(|n| self.nodes >= n) || self.past_deadline());
        let stop = self.limits.stop.is_some_and(|s| s.load(Ordering::Relaxed)) || limited;
        self.aborted = stop;
        stop
    }

    /// Whether the deadline has passed, reading the clock once every
    /// [`CLOCK_EVERY`] nodes (leaves count: they are most of the work).
    fn past_deadline(&mut self) -> bool {
        let Some(deadline) = self.limits.deadline else {
            return false;
        };
        if self.nodes < self.next_clock_read {
            return false;
        }
        self.next_clock_read = self.nodes + CLOCK_EVERY;
        Instant::now() >= deadline
    }

    fn key(node: &Node) -> u64 {
        let pos = &node.pos;
        let mut key = pos.key() ^ node.turn.key();
        if !node.steps.is_empty() {
            // Whether a pass is allowed depends on the turn's first board.
            key ^= node.game.position().board_hash().rotate_left(17);
        }
        key
    }

    /// Whether the turn may end on `pos` (the turn's steps played): not on
    /// its first board, not on a position seen twice, not mid-push.
    fn may_end(game: &Arimaa, pos: &Position, turn: &TurnState) -> bool {
        turn.can_end()
            && pos.board_hash() != game.position().board_hash()
            && game.occurrences(pos.board_hash() ^ Position::side_key(pos.side_to_move().other()))
                < 2
    }

    /// The table's value of the node `key` at `depth` steps (for `turns`
    /// turns below the root) when it settles the window; sets the rest of
    /// the root's turn from there.
    fn table_cut(
        &mut self,
        key: u64,
        ply: usize,
        turns: u32,
        depth: u32,
        alpha: i32,
        beta: i32,
    ) -> Option<i32> {
        let e = self.tt.as_mut()?.probe(key, turns)?;
        // Only a result of this very depth: a deeper one would make the
        // answer depend on the order positions were met in.
        if e.depth != depth {
            return None;
        }
        let cut = match e.bound {
            Bound::Exact => true,
            Bound::Lower => e.score >= beta,
            Bound::Upper => e.score <= alpha,
        };
        if !cut {
            return None;
        }
        self.set_rest(ply, e.best.map_or(Move::EMPTY, |m| m.rest_of_turn));
        Some(e.score)
    }

    /// Negamax value of `node` for the side whose turn it is.
    fn negamax(&mut self, node: &Node, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        self.set_rest(node.ply, Move::EMPTY);
        let at_turn_start = node.steps.is_empty();
        let mut key = Self::key(node);
        if self.short_turn && !at_turn_start {
            // Inside the root's turn a short iteration's horizon ends the
            // turn; a full iteration's does not: keep their entries apart.
            key ^= SHORT_TURN_KEY;
        }
        if depth == 0 {
            let v = if at_turn_start && self.limits.goal_threats && goal::can_reach_goal(&node.pos)
            {
                WIN - (node.turns as i32 + 1)
            } else {
                self.scorer.score(&node.sums, &node.pos)
            };
            if at_turn_start {
                // Turns that transpose to this position are then answered
                // by the table before the game is played on.
                if let Some(tt) = self.tt.as_mut() {
                    tt.store(key, node.turns, 0, v, Bound::Exact, None);
                }
            }
            return v;
        }
        if self.out_of_budget() {
            return 0;
        }
        if let Some(v) = self.table_cut(key, node.ply, node.turns, depth, alpha, beta) {
            return v;
        }
        let tt_move = self
            .tt
            .as_mut()
            .and_then(|tt| tt.probe(key, node.turns))
            .and_then(|e| e.best)
            .map(|m| m.choice);
        let mut children = self
            .lists
            .get_mut(node.ply)
            .map(std::mem::take)
            .unwrap_or_default();
        self.children(node, tt_move, &mut children);
        let alpha0 = alpha;
        let mut best = DEAD_END;
        let mut best_move = None;
        for child in &children {
            let v = match self.child_value(node, child, depth, alpha, beta) {
                Some(v) => v,
                None => continue,
            };
            if self.aborted {
                break;
            }
            if v > best {
                best = v;
                let rest_of_turn = if node.turns == 0 {
                    self.rest_through(node.ply, child)
                } else {
                    Move::EMPTY
                };
                best_move = Some(TableMove {
                    choice: child.choice,
                    rest_of_turn,
                });
                if v > alpha {
                    alpha = v;
                    if alpha >= beta {
                        self.note_killer(node.ply, child.choice);
                        break;
                    }
                }
            }
        }
        self.put_list(node.ply, children);
        self.set_rest(node.ply, best_move.map_or(Move::EMPTY, |m| m.rest_of_turn));
        if !self.aborted && best_move.is_some() {
            if let Some(tt) = self.tt.as_mut() {
                let bound = if best <= alpha0 {
                    Bound::Upper
                } else if best >= beta {
                    Bound::Lower
                } else {
                    Bound::Exact
                };
                tt.store(key, node.turns, depth, best, bound, best_move);
            }
        }
        best
    }

    /// The rest of the root's turn through `child` of the node at `ply`:
    /// its step, then (unless it ended the turn) the rest found below it.
    fn rest_through(&self, ply: usize, child: &Child) -> Move {
        match child.choice {
            StepChoice::Pass => Move::EMPTY,
            StepChoice::Step(step, _) => {
                let mut mv = Move::EMPTY.with(step);
                if child.turn.steps_left > 0 {
                    if let Some(below) = self.rest_of_turn.get(ply + 1) {
                        for s in below.steps().take(3) {
                            mv = mv.with(s);
                        }
                    }
                }
                mv
            }
        }
    }

    fn set_rest(&mut self, ply: usize, rest: Move) {
        if self.rest_of_turn.len() <= ply + 1 {
            self.rest_of_turn.resize(ply + 2, Move::EMPTY);
        }
        self.rest_of_turn[ply] = rest;
    }

    /// The value of one child for the side at `node`; `None` when it is
    /// not a legal way on (a turn that may not end there).
    fn child_value(
        &mut self,
        node: &Node,
        child: &Child,
        depth: u32,
        alpha: i32,
        beta: i32,
    ) -> Option<i32> {
        let (steps, ends, spent) = match child.choice {
            StepChoice::Pass => (node.steps, true, node.turn.steps_left as u32),
            StepChoice::Step(step, _) => (node.steps.with(step), child.turn.steps_left == 0, 1),
        };
        let depth_left = depth.saturating_sub(spent);
        // In a short iteration the root's turn ends where the steps run out.
        let ends = ends || (self.short_turn && node.turns == 0 && depth_left == 0);
        if !ends {
            let next = Node {
                game: node.game,
                pos: child.pos,
                turn: child.turn,
                steps,
                sums: child.sums,
                turns: node.turns,
                ply: node.ply + 1,
            };
            return Some(self.negamax(&next, depth_left, alpha, beta));
        }
        if !Self::may_end(node.game, &child.pos, &child.turn) {
            return None;
        }
        let next_key = child.pos.board_hash()
            ^ Position::side_key(child.pos.side_to_move().other())
            ^ TurnState::START.key();
        if let Some(v) = self.table_cut(
            next_key,
            node.ply + 1,
            node.turns + 1,
            depth_left,
            -beta,
            -alpha,
        ) {
            return Some(-v);
        }
        let mut game = node.game.clone();
        game.play_move(steps);
        debug_assert_eq!(game.position().board_hash(), child.pos.board_hash());
        if let Some(outcome) = game.outcome() {
            self.nodes += 1;
            return Some(-terminal_score(
                outcome,
                game.side_to_move(),
                node.turns + 1,
            ));
        }
        let next = Node {
            game: &game,
            pos: *game.position(),
            turn: TurnState::START,
            steps: Move::EMPTY,
            sums: child.sums,
            turns: node.turns + 1,
            ply: node.ply + 1,
        };
        Some(-self.negamax(&next, depth_left, -beta, -alpha))
    }

    /// The legal steps of `node` and a pass where one may be allowed,
    /// ordered.
    fn children(&self, node: &Node, tt_move: Option<StepChoice>, out: &mut Vec<Child>) {
        out.clear();
        let mover = node.pos.side_to_move();
        let goal_rank = match mover {
            Side::First => RANK_8,
            Side::Second => RANK_1,
        };
        let killers = self.killers.get(node.ply).copied().unwrap_or([None; 2]);
        let rank_of = |choice: StepChoice, captured: Option<(u8, Piece)>, onto_goal: bool| -> u8 {
            if Some(choice) == tt_move {
                0
            } else if onto_goal {
                1
            } else if captured.is_some_and(|(_, p)| p.side != mover) {
                2
            } else if killers.contains(&Some(choice)) {
                3
            } else if matches!(choice, StepChoice::Step(_, k) if k != StepKind::Step) {
                4
            } else {
                5
            }
        };
        node.pos.for_each_step(&node.turn, |step, kind| {
            let mut pos = node.pos;
            let (turn, captured) = pos.apply_step(&node.turn, step, kind);
            let mut sums = node.sums;
            self.scorer.step(&mut sums, &node.pos, step, captured);
            let choice = StepChoice::Step(step, kind);
            let onto_goal = kind == StepKind::Step
                && (1u64 << step.to) & goal_rank != 0
                && pos.piece_at(step.to) == Some(Piece::new(mover, PieceType::Rabbit));
            out.push(Child {
                choice,
                pos,
                turn: turn.normalized(&pos),
                sums,
                rank: rank_of(choice, captured, onto_goal),
            });
        });
        if !node.steps.is_empty() && node.turn.can_end() {
            out.push(Child {
                choice: StepChoice::Pass,
                pos: node.pos,
                turn: node.turn,
                sums: node.sums,
                rank: rank_of(StepChoice::Pass, None, false).min(4),
            });
        }
        if node.ply == 0 {
            if let Some(seed) = self.limits.tie_seed {
                use rand::seq::SliceRandom;
                out.shuffle(&mut crate::util::seeded_rng(seed, 0));
            }
        }
        // Stable: equal ranks keep the generator's (or shuffled) order.
        out.sort_by_key(|c| c.rank);
    }

    fn note_killer(&mut self, ply: usize, choice: StepChoice) {
        if self.killers.len() <= ply {
            self.killers.resize(ply + 1, [None; 2]);
        }
        let k = &mut self.killers[ply];
        if k[0] != Some(choice) {
            k[1] = k[0];
            k[0] = Some(choice);
        }
    }

    fn put_list(&mut self, ply: usize, list: Vec<Child>) {
        if self.lists.len() <= ply {
            self.lists.resize_with(ply + 1, Vec::new);
        }
        self.lists[ply] = list;
    }
}

/// Searches the turn of `root` by iterative deepening over steps up to
/// `limits.max_steps`, scoring leaves with `scorer`; `progress` is called
/// after every finished iteration. The answer is the deepest finished
/// iteration's turn. Time and node limits apply from the second iteration:
/// the first always finishes unless the stop flag is raised.
///
/// Without a time or node limit deepening starts at one whole turn (4
/// steps). With one it starts at one step: iterations of 1 to 3 steps find
/// the best turn of at most that many steps (the turn ends at the horizon),
/// so a budget shorter than one whole turn's search (up to seconds in the
/// middle game) still gets a considered answer in milliseconds.
pub fn step_search(
    root: &Arimaa,
    scorer: &StepScorer,
    limits: &StepLimits<'_>,
    mut progress: impl FnMut(&StepSearchResult),
) -> StepSearchResult {
    let start = Instant::now();
    let mut result = StepSearchResult {
        best: None,
        score: 0,
        depth: 0,
        nodes: 0,
        elapsed: Duration::ZERO,
    };
    if let Some(o) = root.outcome() {
        result.score = terminal_score(o, root.side_to_move(), 0);
        return result;
    }
    let mut s = StepSearcher {
        scorer,
        limits: *limits,
        nodes: 0,
        aborted: false,
        first_iteration: true,
        short_turn: false,
        next_clock_read: 0,
        tt: limits.table.then(|| TranspositionTable::new(18)),
        killers: Vec::new(),
        lists: Vec::new(),
        rest_of_turn: Vec::new(),
    };
    let root_node = Node {
        game: root,
        pos: *root.position(),
        turn: TurnState::START,
        steps: Move::EMPTY,
        sums: scorer.sums(root.position()),
        turns: 0,
        ply: 0,
    };
    let budgeted = limits.deadline.is_some() || limits.max_nodes.is_some();
    let first = if budgeted { 1 } else { 4 };
    for depth in first..=limits.max_steps.max(4) {
        s.first_iteration = depth == first;
        s.short_turn = depth < 4;
        let score = s.negamax(&root_node, depth, -INF, INF);
        if s.aborted {
            break;
        }
        let best = s.rest_of_turn[0];
        if best.is_empty() {
            break;
        }
        result.best = Some(best);
        result.score = score;
        result.depth = depth;
        result.nodes = s.nodes;
        result.elapsed = start.elapsed();
        progress(&result);
        if score.abs() >= crate::search::alphabeta::WIN_THRESHOLD {
            break;
        }
    }
    result.nodes = s.nodes;
    result.elapsed = start.elapsed();
    result
}
