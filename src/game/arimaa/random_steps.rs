//! A fast random Arimaa turn, built one random legal step at a time.
//!
//! Uniform sampling over whole turns needs the full list of distinct moves
//! (thousands per position, about a millisecond to generate). This sampler
//! instead walks the step generator: at every step of the partial turn it
//! draws one of the legal next steps uniformly (pulls, push starts and
//! completions, plain steps, as [`Position::for_each_step`](super::Position::for_each_step) lists them),
//! plays it with [`Position::apply_step`](super::Position::apply_step), and after each step that leaves
//! the turn in a state where it may end, stops with probability `end_prob`
//! (always after the fourth step, or when no step is left). The finished
//! turn is kept only if it is a legal move: it changed the board and does
//! not make a position for the third time; otherwise the walk starts over
//! (up to [`MAX_TRIES`] times). The distribution is not uniform over
//! distinct moves (turns with many step orders are more likely), which is
//! what self-play for diversity needs, at about a microsecond per turn.
//!
//! The returned [`Move`] is a legal turn that [`Arimaa::play_move`] accepts
//! and whose notation [`Game::parse_move`] reads back; it reaches the same
//! board as one of the moves of [`Game::legal_moves`], which lists one
//! shortest step sequence per distinct result, but its steps may differ
//! from that representative's (another order, or a longer path).
//!
//! ```
//! use plies::game::{Game, arimaa::{Arimaa, random_steps::random_steps_move}};
//! let g = Arimaa::new();
//! let mut rng = plies::util::seeded_rng(1, 0);
//! let mv = random_steps_move(&g, 0.1, &mut rng).unwrap();
//! let text = g.move_to_string(mv);
//! assert_eq!(g.parse_move(&text).unwrap(), mv);
//! ```

use super::game::Arimaa;
use super::moves::Move;
use super::step::TurnState;
use crate::game::Game;
use crate::util::SeededRng;
use rand::RngExt;

/// Walks started over before giving up (then `None`).
pub const MAX_TRIES: usize = 64;

/// One random walk of 1-4 steps from the start of the turn; `None` when it
/// did not end in a legal move.
fn walk(game: &Arimaa, end_prob: f64, rng: &mut SeededRng) -> Option<Move> {
    let start = game.position();
    let mut pos = *start;
    let mut state = TurnState::START;
    let mut mv = Move::EMPTY;
    loop {
        let steps = pos.step_list(&state);
        if steps.is_empty() {
            break;
        }
        let (step, kind) = steps[rng.random_range(0..steps.len())];
        state = pos.apply_step(&state, step, kind).0;
        mv = mv.with(step);
        if state.steps_left == 0 {
            break;
        }
        if state.can_end() && end_prob > 0.0 && rng.random_bool(end_prob.min(1.0)) {
            break;
        }
    }
    if mv.is_empty() || !state.can_end() || pos.board_hash() == start.board_hash() {
        return None;
    }
    pos.set_side_to_move(start.side_to_move().other());
    if game.occurrences(pos.key()) >= 2 {
        return None;
    }
    Some(mv)
}

/// A random legal turn built step by step (see the module docs); `None`
/// when the game is over or no walk found a legal turn in [`MAX_TRIES`]
/// tries (the caller may then fall back to a uniform move).
/// `end_prob` is the chance of ending the turn after each step that may end it.
pub fn random_steps_move(game: &Arimaa, end_prob: f64, rng: &mut SeededRng) -> Option<Move> {
    if game.outcome().is_some() {
        return None;
    }
    (0..MAX_TRIES).find_map(|_| walk(game, end_prob, rng))
}

/// [`random_steps_move`], falling back to a uniformly random move of
/// [`Game::legal_moves`] when the walks fail; `None` only when the game has
/// no legal move.
pub fn random_steps_or_uniform(
    game: &Arimaa,
    end_prob: f64,
    rng: &mut SeededRng,
    scratch: &mut Vec<Move>,
) -> Option<Move> {
    random_steps_move(game, end_prob, rng).or_else(|| game.random_move(rng, scratch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;
    use std::collections::HashSet;

    /// Plays random-steps games and checks every move against the full
    /// generator: same result board as a listed move, notation round trip.
    #[test]
    fn every_turn_is_a_legal_move() {
        let mut rng = seeded_rng(11, 0);
        let mut keyed = Vec::new();
        let mut checked = 0;
        let mut lengths = [0usize; 5];
        let mut game_no = 0;
        while checked < 3000 {
            let mut g = Arimaa::new();
            game_no += 1;
            while g.outcome().is_none() && g.ply() < 300 && checked < 3000 {
                let mv = random_steps_move(&g, 0.15, &mut rng).expect("a turn");
                g.legal_moves_with_hashes(&mut keyed);
                let hashes: HashSet<u64> = keyed.iter().map(|&(_, h)| h).collect();
                let mut after = *g.position();
                for s in mv.steps() {
                    after.move_piece(s.from, s.to);
                }
                assert!(
                    hashes.contains(&after.board_hash()),
                    "game {game_no} ply {}: {mv:?} reaches no listed move's board",
                    g.ply()
                );
                let text = g.move_to_string(mv);
                let parsed = g.parse_move(&text).unwrap();
                assert_eq!(parsed, mv, "{text}");
                lengths[mv.len()] += 1;
                g.play(mv);
                checked += 1;
            }
        }
        assert_eq!(lengths[0], 0);
        assert!(lengths[4] > lengths[1], "{lengths:?}");
        assert!(lengths[1] > 0, "{lengths:?}");
    }

    #[test]
    fn seeded_and_never_a_third_repetition() {
        let g = Arimaa::new();
        let a: Vec<Move> = (0..20)
            .scan(seeded_rng(5, 1), |r, _| random_steps_move(&g, 0.2, r))
            .collect();
        let b: Vec<Move> = (0..20)
            .scan(seeded_rng(5, 1), |r, _| random_steps_move(&g, 0.2, r))
            .collect();
        assert_eq!(a, b);
        // Shuffle the elephants back and forth: the opening occurs twice,
        // and silver's move back to it would be its third time.
        let mut g = Arimaa::new();
        let opening = g.position().key();
        for m in ["Ee2n", "ed7s", "Ee3s", "ed6n", "Ee2n", "ed7s", "Ee3s"] {
            g.play_str(m).unwrap();
        }
        assert_eq!(g.occurrences(opening), 2);
        let mut rng = seeded_rng(5, 2);
        for _ in 0..200 {
            let mv = random_steps_move(&g, 0.9, &mut rng).unwrap();
            let mut h = g.clone();
            h.play(mv);
            assert!(h.occurrences(h.position().key()) <= 2);
            assert_ne!(h.position().key(), opening);
        }
    }
}
