//! A small generic negamax alpha-beta search with iterative deepening.
//!
//! Depth counts whole moves of the [`Game`] (for Arimaa a whole turn). The
//! search stops at a deadline, a node budget or an external stop flag and
//! then answers with the best move of the deepest iteration it could trust:
//! a finished iteration, or an unfinished one whose first root move (the
//! previous best) was searched to the end. Root moves are ordered by the
//! previous iteration's scores, best first. Finished games are scored
//! exactly, with faster wins (and slower losses) preferred. A
//! transposition table keyed by [`Game::hash_key`] answers positions met
//! again and gives the move to try first; then killer moves (the last two
//! moves that cut off at the same ply) and the history heuristic (moves
//! that cut off often, weighted by depth) order the rest.
//!
//! A deadline may come with an [`Extension`]: in a critical position, one
//! whose best move changed in the last iterations or whose previous best
//! lost value at the new depth (the search has just seen a refutation and
//! not yet the answer to it), the search runs on past the deadline to the
//! extension's instant, and stops once an iteration ends calm again, as
//! engines spend more of their clock where a move matters.
//!
//! ```
//! use plies::game::{Game, TicTacToe};
//! use plies::search::alphabeta::{search, SearchLimits};
//! let g = TicTacToe::new();
//! let r = search(&g, None, &|_: &TicTacToe| 0, &SearchLimits::depth(9));
//! assert_eq!(r.score, 0); // Tic-tac-toe is a draw
//! assert_eq!(r.depth, 9);
//! ```

use super::tt::{Bound, TranspositionTable};
use crate::game::{Game, Outcome};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The score of a won game one move from the root is `WIN - 1`.
pub const WIN: i32 = 1_000_000;
/// Scores at or beyond this magnitude are forced wins or losses.
pub const WIN_THRESHOLD: i32 = WIN - 10_000;
const INF: i32 = i32::MAX - 1;

/// A static evaluation: the value of a position (not finished) for the side
/// to move, in any unit well below [`WIN_THRESHOLD`].
pub trait PositionEval<G: Game> {
    fn eval(&self, state: &G) -> i32;

    /// Whether [`PositionEval::eval_batch`] is much cheaper per position than
    /// [`PositionEval::eval`] (a model's forward pass): then the search
    /// values all children of a node one move above the horizon in one
    /// call, giving up the cut-offs among them.
    fn prefers_batches(&self) -> bool {
        false
    }

    /// The values of `states`, in order.
    fn eval_batch(&self, states: &[G]) -> Vec<i32> {
        states.iter().map(|s| self.eval(s)).collect()
    }
}

impl<G: Game, F: Fn(&G) -> i32> PositionEval<G> for F {
    fn eval(&self, state: &G) -> i32 {
        self(state)
    }
}

/// When to stop.
#[derive(Clone, Copy, Debug)]
pub struct SearchLimits<'a> {
    /// The deepest iteration, in moves (at least 1).
    pub max_depth: u32,
    /// Stop searching at this instant.
    pub deadline: Option<Instant>,
    /// Stop after visiting this many nodes.
    pub max_nodes: Option<u64>,
    /// Stop as soon as this becomes true (checked at every node).
    pub stop: Option<&'a AtomicBool>,
    /// How far past `deadline` a critical position may run.
    pub extend: Option<Extension>,
}

/// More time for a critical position: the instant the search may run to
/// when the deadline finds it critical, and the fall in score of the
/// previous best move that makes a position critical (in the
/// evaluator's units; a change of best move always does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extension {
    pub until: Instant,
    pub drop: i32,
}

impl SearchLimits<'static> {
    /// Only a depth limit.
    pub fn depth(max_depth: u32) -> Self {
        SearchLimits {
            max_depth,
            deadline: None,
            max_nodes: None,
            stop: None,
            extend: None,
        }
    }
}

/// What a search found.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult<M> {
    /// The chosen move; `None` only when the root has no legal move.
    pub best: Option<M>,
    /// Its score for the side to move at the root.
    pub score: i32,
    /// The deepest iteration the answer comes from (0: none finished, the
    /// move is a fallback).
    pub depth: u32,
    /// Whether that iteration was finished.
    pub complete: bool,
    /// Nodes visited (every position played into or evaluated).
    pub nodes: u64,
    pub elapsed: Duration,
    /// Whether the search ran past its deadline on an [`Extension`].
    pub extended: bool,
}

/// The exact value of a finished game for the side to move, `ply` moves
/// below the root.
pub fn terminal_score(outcome: Outcome, state_side: crate::game::Side, ply: u32) -> i32 {
    match outcome {
        Outcome::Draw => 0,
        Outcome::Win(w) if w == state_side => WIN - ply as i32,
        Outcome::Win(_) => -(WIN - ply as i32),
    }
}

struct Searcher<'a, G: Game, E: ?Sized> {
    eval: &'a E,
    limits: SearchLimits<'a>,
    start: Instant,
    nodes: u64,
    aborted: bool,
    /// Whether the position is critical now (see [`Extension`]).
    critical: bool,
    /// Whether the deadline has been moved to the extension's instant.
    extended: bool,
    /// Move lists reused per ply.
    lists: Vec<Vec<G::Move>>,
    tt: TranspositionTable<G::Move>,
    /// Two moves per ply that last caused a cut-off there.
    killers: Vec<[Option<G::Move>; 2]>,
    /// Cut-offs per move, weighted by depth squared.
    history: foldhash::HashMap<G::Move, u32>,
}

impl<G: Game, E: PositionEval<G> + ?Sized> Searcher<'_, G, E> {
    fn out_of_budget(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        let stop = self.limits.stop.is_some_and(|s| s.load(Ordering::Relaxed))
            || self.limits.max_nodes.is_some_and(|n| self.nodes >= n)
            || self.past_deadline();
        self.aborted = stop;
        stop
    }

    /// Whether the deadline has passed, moving it to the extension's
    /// instant the first time it passes in a critical position.
    fn past_deadline(&mut self) -> bool {
        let Some(due) = self.limits.deadline else {
            return false;
        };
        let now = Instant::now();
        if now < due {
            return false;
        }
        match self.limits.extend {
            Some(e) if self.critical && !self.extended && now < e.until => {
                self.limits.deadline = Some(e.until);
                self.extended = true;
                false
            }
            _ => true,
        }
    }

    /// Negamax value of `state` for its side to move.
    fn negamax(&mut self, state: &G, depth: u32, ply: u32, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        if let Some(o) = state.outcome() {
            return terminal_score(o, state.side_to_move(), ply);
        }
        if depth == 0 {
            return self.eval.eval(state);
        }
        if self.out_of_budget() {
            return 0;
        }
        let key = state.hash_key();
        let mut tt_move = None;
        if let Some(e) = self.tt.probe(key, ply) {
            tt_move = e.best;
            if e.depth >= depth {
                match e.bound {
                    Bound::Exact => return e.score,
                    Bound::Lower if e.score >= beta => return e.score,
                    Bound::Upper if e.score <= alpha => return e.score,
                    _ => {}
                }
            }
        }
        let mut moves = self
            .lists
            .get_mut(ply as usize)
            .map(std::mem::take)
            .unwrap_or_default();
        state.legal_moves(&mut moves);
        if moves.is_empty() {
            // A game without moves that does not say it is over: a loss.
            self.put_list(ply, moves);
            return -(WIN - ply as i32);
        }
        self.order(&mut moves, tt_move, ply);
        let alpha0 = alpha;
        let mut best = -INF;
        let mut best_move = None;
        let frontier = (depth == 1 && self.eval.prefers_batches())
            .then(|| self.frontier_values(state, &moves, ply + 1));
        for (i, &mv) in moves.iter().enumerate() {
            let v = match &frontier {
                Some(values) => values[i],
                None => {
                    let mut child = state.clone();
                    child.play(mv);
                    self.child_value(state, &child, depth - 1, ply + 1, alpha, beta)
                }
            };
            if self.aborted {
                break;
            }
            if v > best {
                best = v;
                best_move = Some(mv);
                if v > alpha {
                    alpha = v;
                    if alpha >= beta {
                        self.note_cutoff(mv, depth, ply);
                        break;
                    }
                }
            }
        }
        self.put_list(ply, moves);
        if !self.aborted {
            let bound = if best <= alpha0 {
                Bound::Upper
            } else if best >= beta {
                Bound::Lower
            } else {
                Bound::Exact
            };
            self.tt.store(key, ply, depth, best, bound, best_move);
        }
        best
    }

    /// The value of each move's position for its side to move, `ply`
    /// moves below the root: finished games exactly, the others in one call
    /// of the evaluator. Every child counts as a node.
    fn frontier_values(&mut self, state: &G, moves: &[G::Move], ply: u32) -> Vec<i32> {
        let me = state.side_to_move();
        let mut values = vec![0; moves.len()];
        let mut open = Vec::new();
        let mut open_at = Vec::new();
        for (i, &mv) in moves.iter().enumerate() {
            let mut child = state.clone();
            child.play(mv);
            match child.outcome() {
                Some(o) => values[i] = terminal_score(o, me, ply),
                None => {
                    open.push(child);
                    open_at.push(i);
                }
            }
        }
        self.nodes += moves.len() as u64;
        if !open.is_empty() {
            let values_there = self.eval.eval_batch(&open);
            for ((i, v), child) in open_at.into_iter().zip(values_there).zip(&open) {
                values[i] = if child.side_to_move() == me { v } else { -v };
            }
        }
        values
    }

    /// `child`'s value for the side to move at `parent`, searched in the
    /// window (`alpha`, `beta`) of that side: the negamax of the other side
    /// negated, or, where the same side moves again (Arimaa's steps), its
    /// own.
    fn child_value(
        &mut self,
        parent: &G,
        child: &G,
        depth: u32,
        ply: u32,
        alpha: i32,
        beta: i32,
    ) -> i32 {
        if child.side_to_move() == parent.side_to_move() {
            self.negamax(child, depth, ply, alpha, beta)
        } else {
            -self.negamax(child, depth, ply, -beta, -alpha)
        }
    }

    /// The table's move first, then this ply's killers, then by history.
    fn order(&self, moves: &mut [G::Move], tt_move: Option<G::Move>, ply: u32) {
        let killers = self.killers.get(ply as usize).copied().unwrap_or([None; 2]);
        let rank = |mv: &G::Move| -> (u8, std::cmp::Reverse<u32>) {
            let class = if Some(*mv) == tt_move {
                0
            } else if killers.contains(&Some(*mv)) {
                1
            } else {
                2
            };
            (
                class,
                std::cmp::Reverse(self.history.get(mv).copied().unwrap_or(0)),
            )
        };
        // Stable: equal moves keep the generator's (or the caller's) order.
        moves.sort_by_key(rank);
    }

    fn note_cutoff(&mut self, mv: G::Move, depth: u32, ply: u32) {
        let i = ply as usize;
        if self.killers.len() <= i {
            self.killers.resize(i + 1, [None; 2]);
        }
        let k = &mut self.killers[i];
        if k[0] != Some(mv) {
            k[1] = k[0];
            k[0] = Some(mv);
        }
        let h = self.history.entry(mv).or_insert(0);
        *h = h.saturating_add(depth * depth);
    }

    fn put_list(&mut self, ply: u32, list: Vec<G::Move>) {
        let i = ply as usize;
        if self.lists.len() <= i {
            self.lists.resize_with(i + 1, Vec::new);
        }
        self.lists[i] = list;
    }
}

/// Searches `root` by iterative deepening. `root_moves`, when given, are the
/// moves to consider at the root (in this order for ties; e.g. the game's own
/// legal moves when `root` is a copy with a shortened history); otherwise
/// the root's legal moves. `eval` is called on unfinished leaf positions.
pub fn search<G: Game, E: PositionEval<G> + ?Sized>(
    root: &G,
    root_moves: Option<&[G::Move]>,
    eval: &E,
    limits: &SearchLimits<'_>,
) -> SearchResult<G::Move> {
    search_with_progress(root, root_moves, eval, limits, |_| {})
}

/// [`search`], calling `progress` after every finished iteration.
pub fn search_with_progress<G: Game, E: PositionEval<G> + ?Sized>(
    root: &G,
    root_moves: Option<&[G::Move]>,
    eval: &E,
    limits: &SearchLimits<'_>,
    mut progress: impl FnMut(&SearchResult<G::Move>),
) -> SearchResult<G::Move> {
    let start = Instant::now();
    let mut moves: Vec<G::Move> = match root_moves {
        Some(m) => m.to_vec(),
        None => {
            let mut v = Vec::new();
            root.legal_moves(&mut v);
            v
        }
    };
    let mut result = SearchResult {
        best: moves.first().copied(),
        score: 0,
        depth: 0,
        complete: false,
        nodes: 0,
        elapsed: Duration::ZERO,
        extended: false,
    };
    if moves.is_empty() || root.outcome().is_some() {
        result.best = None;
        if let Some(o) = root.outcome() {
            result.score = terminal_score(o, root.side_to_move(), 0);
        }
        return result;
    }
    let mut s = Searcher {
        eval,
        limits: *limits,
        start,
        nodes: 0,
        aborted: false,
        critical: false,
        extended: false,
        lists: Vec::new(),
        // Deeper searches meet more positions: 2^12 entries at depth 1 up
        // to 2^20.
        tt: TranspositionTable::new((10 + 2 * limits.max_depth).min(20)),
        killers: Vec::new(),
        history: Default::default(),
    };
    // The deadline as given: an extended search stops once calm again.
    let due = limits.deadline;
    for depth in 1..=limits.max_depth.max(1) {
        // The previous iteration's best (first in `moves`) and its score.
        let previous = (depth > 1).then_some(result.score);
        // Whether this iteration has found the position critical.
        let mut unsettled = false;
        let mut alpha = -INF;
        let mut best: Option<(usize, i32)> = None;
        // This iteration's scores, parallel to `moves` (fail-lows are
        // upper bounds, good enough for ordering).
        let mut new_scores = vec![-INF; moves.len()];
        let frontier = (depth == 1 && eval.prefers_batches() && !s.out_of_budget())
            .then(|| s.frontier_values(root, &moves, 1));
        for (i, &mv) in moves.iter().enumerate() {
            if frontier.is_none() && s.out_of_budget() {
                break;
            }
            let v = match &frontier {
                Some(values) => values[i],
                None => {
                    let mut child = root.clone();
                    child.play(mv);
                    s.child_value(root, &child, depth - 1, 1, alpha, INF)
                }
            };
            if s.aborted {
                break;
            }
            new_scores[i] = v;
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((i, v));
                alpha = alpha.max(v);
            }
            if let (Some(last), Some(e)) = (previous, limits.extend) {
                // The previous best refuted, or another move now better.
                let fell = i == 0 && v <= last.saturating_sub(e.drop);
                unsettled |= fell || best.is_some_and(|(b, _)| b != 0);
                s.critical |= unsettled;
            }
        }
        let finished = !s.aborted;
        if let Some((i, v)) = best {
            // An unfinished iteration is trusted once its first move (the
            // previous best) has been searched: its best is at least as good.
            result.best = Some(moves[i]);
            result.score = v;
            result.depth = depth;
            result.complete = finished;
        }
        result.nodes = s.nodes;
        result.elapsed = s.start.elapsed();
        result.extended = s.extended;
        if !finished {
            break;
        }
        progress(&result);
        // The next iteration is critical only if this one was; an
        // extended search that has settled stops.
        s.critical = unsettled;
        if s.extended && !unsettled && due.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        // Order for the next iteration: best first, then by score (stable,
        // so ties keep the caller's order).
        let mut order: Vec<usize> = (0..moves.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(new_scores[i]));
        if let Some((b, _)) = best {
            if let Some(pos) = order.iter().position(|&i| i == b) {
                order[..=pos].rotate_right(1);
            }
        }
        moves = order.iter().map(|&i| moves[i]).collect();
        // A forced result needs no deeper look.
        if result.score.abs() >= WIN_THRESHOLD {
            break;
        }
    }
    result.nodes = s.nodes;
    result.elapsed = s.start.elapsed();
    result.extended = s.extended;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Side, TicTacToe, TttMove};
    use std::time::Duration;

    fn play(moves: &[&str]) -> TicTacToe {
        let mut g = TicTacToe::new();
        for m in moves {
            g.play_str(m).unwrap();
        }
        g
    }

    #[test]
    fn finds_the_immediate_win_and_prefers_the_fastest() {
        // x: a1 b1, o: a2 b2; x to move wins at c1 at once.
        let g = play(&["a1", "a2", "b1", "b2"]);
        let r = search(&g, None, &|_: &TicTacToe| 0, &SearchLimits::depth(5));
        assert_eq!(g.move_to_string(r.best.unwrap()), "c1");
        assert_eq!(r.score, WIN - 1);
    }

    #[test]
    fn blocks_the_threat_at_depth_two() {
        // x: a1 b1, o: c3; o to move must block c1.
        let g = play(&["a1", "c3", "b1"]);
        let r = search(&g, None, &|_: &TicTacToe| 0, &SearchLimits::depth(2));
        assert_eq!(g.move_to_string(r.best.unwrap()), "c1");
        assert!(r.complete);
    }

    #[test]
    fn a_side_that_moves_twice_keeps_its_own_values() {
        use crate::game::test_support::{double_turns_won, DoubleTurns};
        let mut checked = 0;
        for left in 3..=12 {
            for plies_left in [1, 2] {
                let g = DoubleTurns {
                    left,
                    plies_left,
                    ..DoubleTurns::new()
                };
                let r = search(&g, None, &|_: &DoubleTurns| 0, &SearchLimits::depth(12));
                let won = double_turns_won(&g);
                assert_eq!(r.score > 0, won, "{g:?}: {}", r.score);
                let mut after = g;
                after.play(r.best.unwrap());
                if won {
                    let still = after.outcome().is_some()
                        || (after.side_to_move() == g.side_to_move()) == double_turns_won(&after);
                    assert!(still, "{g:?}: the move kept no win");
                }
                checked += 1;
            }
        }
        assert_eq!(checked, 20);
    }

    #[test]
    fn full_depth_tictactoe_is_a_draw() {
        let g = TicTacToe::new();
        let r = search(&g, None, &|_: &TicTacToe| 0, &SearchLimits::depth(9));
        assert_eq!(r.score, 0);
        assert!(r.complete && r.depth == 9);
    }

    #[test]
    fn eval_is_from_the_side_to_move() {
        // An evaluation that likes x in the centre: x (to move) takes b2.
        let g = TicTacToe::new();
        let eval = |s: &TicTacToe| {
            let x_centre = s.to_text().chars().nth(5) == Some('x');
            let v = if x_centre { 10 } else { 0 };
            if s.side_to_move() == Side::First {
                v
            } else {
                -v
            }
        };
        let r = search(&g, None, &eval, &SearchLimits::depth(1));
        assert_eq!(g.move_to_string(r.best.unwrap()), "b2", "{}", g.to_text());
        assert_eq!(r.score, 10);
    }

    /// Values from the position's key, either one at a time or in batches.
    struct KeyEval {
        batches: std::cell::RefCell<Vec<usize>>,
        prefer: bool,
    }

    impl PositionEval<TicTacToe> for KeyEval {
        fn eval(&self, state: &TicTacToe) -> i32 {
            (state.hash_key() % 201) as i32 - 100
        }
        fn prefers_batches(&self) -> bool {
            self.prefer
        }
        fn eval_batch(&self, states: &[TicTacToe]) -> Vec<i32> {
            self.batches.borrow_mut().push(states.len());
            states.iter().map(|s| self.eval(s)).collect()
        }
    }

    /// Valuing the horizon's positions in batches changes the calls, not
    /// the answer: same move and score at every depth, from several
    /// positions.
    #[test]
    fn batched_horizon_gives_the_same_search() {
        for start in [vec![], vec!["b2"], vec!["a1", "b2"], vec!["a1", "b2", "c3"]] {
            let g = play(&start);
            for depth in 1..=4 {
                let one = KeyEval {
                    batches: Default::default(),
                    prefer: false,
                };
                let many = KeyEval {
                    batches: Default::default(),
                    prefer: true,
                };
                let a = search(&g, None, &one, &SearchLimits::depth(depth));
                let b = search(&g, None, &many, &SearchLimits::depth(depth));
                assert_eq!(
                    (a.best, a.score),
                    (b.best, b.score),
                    "{start:?} depth {depth}"
                );
                assert!(one.batches.borrow().is_empty());
                let sizes = many.batches.borrow();
                assert!(!sizes.is_empty(), "{start:?} depth {depth}: no batch");
                // The root's children at depth 1: all open ones in one call.
                if depth == 1 {
                    assert_eq!(sizes[0], 9 - start.len(), "{start:?}");
                }
            }
        }
    }

    #[test]
    fn budgets_and_stop_flags_still_give_a_move() {
        let g = TicTacToe::new();
        let limits = SearchLimits {
            max_depth: 9,
            deadline: None,
            max_nodes: Some(50),
            stop: None,
            extend: None,
        };
        let r = search(&g, None, &|_: &TicTacToe| 0, &limits);
        assert!(r.best.is_some() && r.depth < 9, "{r:?}");
        assert!(r.nodes <= 60, "{}", r.nodes);
        let stop = AtomicBool::new(true);
        let limits = SearchLimits {
            max_depth: 9,
            deadline: Some(Instant::now() + Duration::from_secs(60)),
            max_nodes: None,
            stop: Some(&stop),
            extend: None,
        };
        let r = search(&g, None, &|_: &TicTacToe| 0, &limits);
        assert!(r.best.is_some());
        assert_eq!(r.depth, 0);
        let past = SearchLimits {
            max_depth: 9,
            deadline: Some(Instant::now()),
            max_nodes: None,
            stop: None,
            extend: None,
        };
        assert!(search(&g, None, &|_: &TicTacToe| 0, &past).best.is_some());
    }

    /// o to move must block x's a1-b1 at c1; the root's moves in
    /// `first`-then-the-rest order, c1 last unless `first` is c1, and an
    /// evaluator that sleeps 40 ms wherever o holds `first`'s cell.
    fn block_with_slow_first(first: &str) -> (TicTacToe, Vec<TttMove>, impl Fn(&TicTacToe) -> i32) {
        let g = play(&["a1", "c3", "b1"]);
        let first = g.parse_move(first).unwrap();
        let c1 = g.parse_move("c1").unwrap();
        let mut order = Vec::new();
        g.legal_moves(&mut order);
        order.retain(|&m| m != first && m != c1);
        order.insert(0, first);
        if first != c1 {
            order.push(c1);
        }
        let slow = move |s: &TicTacToe| {
            if s.cell(first.0 as usize) == Some(Side::Second) {
                std::thread::sleep(Duration::from_millis(40));
            }
            0
        };
        (g, order, slow)
    }

    fn timed(deadline_ms: u64, until_ms: Option<u64>) -> SearchLimits<'static> {
        let start = Instant::now();
        SearchLimits {
            max_depth: 2,
            deadline: Some(start + Duration::from_millis(deadline_ms)),
            max_nodes: None,
            stop: None,
            extend: until_ms.map(|u| Extension {
                until: start + Duration::from_millis(u),
                drop: 1,
            }),
        }
    }

    #[test]
    fn a_refuted_best_move_runs_on_past_the_deadline() {
        // Depth 1 (40 ms) scores every move 0 and keeps a2 first; depth 2
        // refutes a2 (x wins at c1) after 160 ms of slow leaves, past the
        // 120 ms deadline: the position is critical, the search runs on
        // and finds the block.
        let (g, order, slow) = block_with_slow_first("a2");
        let c1 = g.parse_move("c1").unwrap();
        let r = search(&g, Some(&order), &slow, &timed(120, Some(30_000)));
        assert_eq!(r.best, Some(c1), "{r:?}");
        assert!(r.complete && r.extended && r.depth == 2, "{r:?}");
        // Without an extension, or with one already over, the deadline
        // ends depth 2 after a2 and the refuted move is all it has.
        for until in [None, Some(130)] {
            let r = search(&g, Some(&order), &slow, &timed(120, until));
            assert_ne!(r.best, Some(c1), "{until:?}: {r:?}");
            assert!(!r.complete && !r.extended, "{until:?}: {r:?}");
        }
    }

    #[test]
    fn a_calm_position_stops_at_the_deadline() {
        // c1 first: depth 2 confirms it (200 ms of slow leaves), nothing
        // changed, so the deadline stands.
        let (g, order, slow) = block_with_slow_first("c1");
        let r = search(&g, Some(&order), &slow, &timed(120, Some(30_000)));
        assert_eq!(r.best, Some(order[0]));
        assert!(!r.complete && !r.extended && r.depth == 2, "{r:?}");
        assert!(r.elapsed < Duration::from_secs(10), "{r:?}");
    }

    #[test]
    fn root_moves_restrict_the_root() {
        let g = play(&["a1", "a2", "b1", "b2"]);
        let only = [g.parse_move("c3").unwrap()];
        let r = search(&g, Some(&only), &|_: &TicTacToe| 0, &SearchLimits::depth(3));
        assert_eq!(r.best, Some(only[0]));
        let over = play(&["a1", "a2", "b1", "b2", "c1"]);
        let r = search(&over, None, &|_: &TicTacToe| 0, &SearchLimits::depth(3));
        assert_eq!(r.best, None);
        assert_eq!(r.score, -WIN);
    }

    #[test]
    fn progress_reports_each_finished_iteration() {
        let g = TicTacToe::new();
        let mut depths = Vec::new();
        search_with_progress(&g, None, &|_: &TicTacToe| 0, &SearchLimits::depth(3), |r| {
            depths.push(r.depth)
        });
        assert_eq!(depths, vec![1, 2, 3]);
    }
}
