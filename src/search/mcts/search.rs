//! The parallel search: threads walk the shared tree from the root,
//! expand and value one leaf each, and back the value up.
//!
//! A leaf is valued by the evaluator (with priors from its policy head in
//! PUCT mode), after a random playout of up to `rollout` moves when one is
//! asked for (the thesis' and Lorentz's scheme: playouts cut off at a depth
//! and scored by the evaluator), or by a playout to the end without any
//! evaluator (plain UCT, as OpenSpiel's MCTS bot). Threads in flight below
//! a node count as virtual losses there, so concurrent threads spread over
//! different paths.

use super::tree::{Edge, Node};
use super::{MctsConfig, Rollout};
use crate::game::{Game, Outcome, Side};
use crate::games::GameSupport;
use crate::infer::{priors, Evaluator};
use crate::search::SearchError;
use crate::util::{seeded_rng, SeededRng};
use rand::seq::SliceRandom;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What one search did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Simulations run by this search (one leaf valued each).
    pub simulations: u64,
    /// Visits of the root after the search (reused ones included).
    pub root_visits: u64,
    /// Evaluator calls.
    pub evaluations: u64,
    pub elapsed: Duration,
}

impl SearchStats {
    pub fn simulations_per_second(&self) -> f64 {
        self.simulations as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

struct Shared<'a, G: Game> {
    cfg: &'a MctsConfig,
    puct: bool,
    c: f64,
    eval: Option<&'a dyn Evaluator<G>>,
    started: AtomicU64,
    evaluations: AtomicU64,
    stop: AtomicBool,
    /// A caller's flag that ends the search early (an engine's `stop`).
    external_stop: Option<&'a AtomicBool>,
    deadline: Option<Instant>,
    error: Mutex<Option<SearchError>>,
}

/// The value of a finished game for its side to move.
fn terminal_value(outcome: Outcome, state_side: crate::game::Side) -> f64 {
    match outcome {
        Outcome::Draw => 0.0,
        Outcome::Win(w) if w == state_side => 1.0,
        Outcome::Win(_) => -1.0,
    }
}

/// Runs `cfg`'s simulations from `state` into the tree under `root`
/// (which may hold a reused subtree), ending early (between simulations)
/// once `stop` is set; the tree keeps every finished simulation. `seed`
/// seeds thread `t`'s stream `t`; with one thread the search is a function
/// of the seed.
pub fn run_search<G: GameSupport>(
    root: &Node<G::Move>,
    state: &G,
    cfg: &MctsConfig,
    eval: Option<&dyn Evaluator<G>>,
    seed: u64,
    stop: Option<&AtomicBool>,
) -> Result<SearchStats, SearchError> {
    let start = Instant::now();
    let puct = cfg.uses_puct(eval.is_some_and(|e| e.has_policy()));
    let shared = Shared {
        cfg,
        puct,
        c: cfg.exploration(puct),
        eval,
        started: AtomicU64::new(0),
        evaluations: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        external_stop: stop,
        deadline: cfg.time.map(|t| start + t),
        error: Mutex::new(None),
    };
    let threads = cfg.threads.max(1);
    if threads == 1 {
        worker(root, state, &shared, seeded_rng(seed, 0));
    } else {
        std::thread::scope(|s| {
            for t in 0..threads {
                let shared = &shared;
                s.spawn(move || worker(root, state, shared, seeded_rng(seed, t as u64)));
            }
        });
    }
    if let Some(e) = shared.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(SearchStats {
        simulations: shared.started.load(Ordering::Relaxed).min(cfg.simulations),
        root_visits: root.visits() as u64,
        evaluations: shared.evaluations.load(Ordering::Relaxed),
        elapsed: start.elapsed(),
    })
}

fn worker<G: GameSupport>(
    root: &Node<G::Move>,
    state: &G,
    shared: &Shared<'_, G>,
    mut rng: SeededRng,
) {
    let mut scratch = Vec::new();
    let mut path = Vec::new();
    let mut movers = Vec::new();
    loop {
        if shared.stop.load(Ordering::Relaxed)
            || shared
                .external_stop
                .is_some_and(|s| s.load(Ordering::Relaxed))
            || shared.deadline.is_some_and(|d| Instant::now() >= d)
        {
            return;
        }
        if shared.started.fetch_add(1, Ordering::Relaxed) >= shared.cfg.simulations {
            return;
        }
        let walk = (&mut path, &mut movers);
        if let Err(e) = simulate(root, state, shared, &mut rng, &mut scratch, walk) {
            shared.stop.store(true, Ordering::Relaxed);
            let mut slot = shared.error.lock().unwrap_or_else(|p| p.into_inner());
            slot.get_or_insert(e);
            return;
        }
    }
}

/// One simulation: select down to a leaf, value it, back up. `walk` is
/// working space: the nodes of the path and the side that moved into each.
fn simulate<'t, G: GameSupport>(
    root: &'t Node<G::Move>,
    state: &G,
    shared: &Shared<'_, G>,
    rng: &mut SeededRng,
    scratch: &mut Vec<G::Move>,
    walk: (&mut Vec<&'t Node<G::Move>>, &mut Vec<Side>),
) -> Result<(), SearchError> {
    let (path, movers) = walk;
    path.clear();
    movers.clear();
    path.push(root);
    // The root's value is kept for the side that did not move next, as in
    // a game of alternating moves.
    movers.push(state.side_to_move().other());
    let mut g = state.clone();
    let mut node = root;
    // The leaf's value for its side to move.
    let value = loop {
        if let Some(o) = g.outcome() {
            break terminal_value(o, g.side_to_move());
        }
        match node.children() {
            None => match expand(node, &g, shared, rng, scratch, path.len() == 1) {
                Ok(v) => break v,
                Err(e) => {
                    // Leave the tree as it was: undo this walk's virtual losses.
                    for n in path.iter().skip(1) {
                        n.record(0.0, true);
                    }
                    return Err(e);
                }
            },
            // A game without moves that does not say it is over: a loss.
            Some([]) => break -1.0,
            Some(children) => {
                let edge = select(node, children, shared);
                let child = edge.node_or_create();
                child.add_in_flight();
                path.push(child);
                movers.push(g.side_to_move());
                g.play(edge.mv);
                node = child;
            }
        }
    };
    // Each node keeps values for the player who moved into it; in games
    // where one side moves several times in a row (Arimaa's steps) that is
    // not simply every other node.
    let leaf_side = g.side_to_move();
    for (depth, (n, &mover)) in path.iter().zip(movers.iter()).enumerate().rev() {
        n.record(if mover == leaf_side { value } else { -value }, depth > 0);
    }
    Ok(())
}

/// The child to walk into: UCT, or PUCT with priors.
fn select<'a, G: Game>(
    parent: &Node<G::Move>,
    children: &'a [Edge<G::Move>],
    shared: &Shared<'_, G>,
) -> &'a Edge<G::Move> {
    let vl = shared.cfg.virtual_loss;
    let parent_n = (parent.visits() + parent.in_flight()).max(1) as f64;
    let mut best = &children[0];
    let mut best_score = f64::NEG_INFINITY;
    if shared.puct {
        // Unvisited children start a little below the parent's value.
        let fpu = -parent.mean() - 0.2;
        let sqrt_n = parent_n.sqrt();
        for e in children {
            let (q, n) = match e.node() {
                Some(c) => (c.q(vl, fpu), (c.visits() + c.in_flight()) as f64),
                None => (fpu, 0.0),
            };
            let score = q + shared.c * e.prior as f64 * sqrt_n / (1.0 + n);
            if score > best_score {
                best_score = score;
                best = e;
            }
        }
    } else {
        let ln_n = parent_n.ln();
        for e in children {
            let Some(c) = e.node().filter(|c| c.visits() + c.in_flight() > 0) else {
                // Every child once before any twice (they were shuffled).
                return e;
            };
            let n = (c.visits() + c.in_flight()) as f64;
            let score = c.q(vl, 0.0) + shared.c * (ln_n / n).sqrt();
            if score > best_score {
                best_score = score;
                best = e;
            }
        }
    }
    best
}

/// Creates the leaf's children and values it for its side to move.
fn expand<G: GameSupport>(
    node: &Node<G::Move>,
    g: &G,
    shared: &Shared<'_, G>,
    rng: &mut SeededRng,
    scratch: &mut Vec<G::Move>,
    is_root: bool,
) -> Result<f64, SearchError> {
    let cfg = shared.cfg;
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    if moves.is_empty() {
        node.expand(Vec::new());
        return Ok(-1.0);
    }
    moves.shuffle(rng);
    if cfg.decisive {
        let me = g.side_to_move();
        let wins = |&mv: &G::Move| {
            let mut next = g.clone();
            next.play(mv);
            next.outcome() == Some(Outcome::Win(me))
        };
        if let Some(&win) = moves.iter().find(|m| wins(m)) {
            moves = vec![win];
        }
    }
    let use_policy = shared.puct && shared.eval.is_some_and(|e| e.has_policy());
    let (value, policy) = match (cfg.rollout, shared.eval) {
        (Rollout::Plies(0), Some(e)) => {
            shared.evaluations.fetch_add(1, Ordering::Relaxed);
            if use_policy {
                let mut out = e.evaluate_full(std::slice::from_ref(g))?;
                let first = out.pop().ok_or_else(|| empty_answer(e))?;
                (first.value as f64, first.policy)
            } else {
                let v = e.evaluate(std::slice::from_ref(g))?;
                (*v.first().ok_or_else(|| empty_answer(e))? as f64, None)
            }
        }
        (rollout, eval) => (playout(g, rollout, eval, shared, rng, scratch)?, None),
    };
    let mut p = priors(g, &moves, policy.as_deref());
    if let (true, Some(noise)) = (is_root, &cfg.root_noise) {
        noise.apply(&mut p, rng);
    }
    node.expand(
        moves
            .into_iter()
            .zip(p)
            .map(|(mv, prior)| Edge::new(mv, prior))
            .collect(),
    );
    Ok(value)
}

fn empty_answer<G: Game>(e: &dyn Evaluator<G>) -> SearchError {
    SearchError::Infer(crate::infer::InferError::Other(format!(
        "evaluator {} answered no value",
        e.name()
    )))
}

/// Random moves from `g` until the game ends or `rollout` moves were
/// played, then the evaluator's value (0 without one), all for `g`'s side
/// to move.
fn playout<G: GameSupport>(
    g: &G,
    rollout: Rollout,
    eval: Option<&dyn Evaluator<G>>,
    shared: &Shared<'_, G>,
    rng: &mut SeededRng,
    scratch: &mut Vec<G::Move>,
) -> Result<f64, SearchError> {
    let me = g.side_to_move();
    let mut p = g.clone();
    let limit = match rollout {
        Rollout::Plies(n) => n,
        Rollout::ToEnd => u32::MAX,
    };
    let mut played = 0;
    while played < limit {
        if let Some(o) = p.outcome() {
            return Ok(terminal_value(o, me));
        }
        match p.exploration_move(rng, scratch) {
            Some(mv) => p.play(mv),
            None => {
                // No move but not over: the side to move loses.
                let mover = p.side_to_move();
                return Ok(if mover == me { -1.0 } else { 1.0 });
            }
        }
        played += 1;
    }
    if let Some(o) = p.outcome() {
        return Ok(terminal_value(o, me));
    }
    let Some(e) = eval else {
        return Ok(0.0);
    };
    shared.evaluations.fetch_add(1, Ordering::Relaxed);
    let v = *e
        .evaluate(std::slice::from_ref(&p))?
        .first()
        .ok_or_else(|| empty_answer(e))? as f64;
    Ok(if p.side_to_move() == me { v } else { -v })
}

/// The most visited root move (ties: the better mean, then the first).
pub fn best_move<M: Copy>(root: &Node<M>) -> Option<M> {
    best_edge(root).map(|(mv, _, _)| mv)
}

/// [`best_move`] with its visits and mean value (for the side to move at
/// the root; `f64::MIN` when the child was never expanded).
pub fn best_edge<M: Copy>(root: &Node<M>) -> Option<(M, u32, f64)> {
    let mut best: Option<(M, u32, f64)> = None;
    for e in root.children()? {
        let (visits, mean) = (e.visits(), e.node().map_or(f64::MIN, Node::mean));
        if best.is_none_or(|(_, bv, bm)| visits > bv || (visits == bv && mean > bm)) {
            best = Some((e.mv, visits, mean));
        }
    }
    best
}
