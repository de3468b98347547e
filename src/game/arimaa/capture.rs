//! Capture threats: the strongest enemy piece the side to move can capture
//! this turn, by an exact search of its steps (pushes and pulls included),
//! pruned by a lower bound on the steps any capture still needs.

use super::bitboard::{neighbors, Bitboard, Squares, TRAPS};
use super::piece::PieceType;
use super::position::Position;
use super::step::TurnState;

/// The strongest enemy piece type the side to move can capture within this
/// turn (at most 4 steps), or `None` if it can capture none.
pub fn best_capture(pos: &Position) -> Option<PieceType> {
    let mut best = None;
    search(pos, &TurnState::START, &mut best);
    best
}

fn search(pos: &Position, state: &TurnState, best: &mut Option<PieceType>) {
    if state.steps_left == 0 {
        return;
    }
    let weakest = best.map_or(0, |k| k as usize + 1);
    if weakest == PieceType::ALL.len() {
        return;
    }
    // A push to complete or a pull on offer moves an enemy piece for one
    // step where the bound counts two, with the mover one square further
    // than it counts: two steps of slack keep the bound below the truth.
    let pending = state.push.is_some() || state.normalized(pos).last.is_some();
    let budget = state.steps_left + if pending { 2 } else { 0 };
    if !capture_within(pos, budget, weakest) {
        return;
    }
    let side = pos.side_to_move();
    for &(step, kind) in pos.step_list(state).iter() {
        let mut child = *pos;
        let (next, captured) = child.apply_step(state, step, kind);
        if let Some((_, piece)) = captured {
            if piece.side != side && best.is_none_or(|b| piece.kind > b) {
                *best = Some(piece.kind);
            }
        }
        search(&child, &next, best);
    }
}

/// Whether some enemy piece of type index `weakest` or stronger might be
/// captured within `budget` steps: a lower bound on the steps each needs,
/// never above the truth, so that pruning on it keeps the search exact.
///
/// An enemy piece moves only when pushed or pulled, two steps a square, by
/// one of our stronger pieces, which must first come next to it (a step a
/// square). It dies on a trap without a friend beside it, so each friend
/// there must be pushed or pulled away first (two steps each), and the trap
/// itself must be empty: an enemy piece on it must be moved off (two
/// steps); our own piece costs nothing apart, as its step off the trap may
/// be the first half of the pull that brings the victim in.
fn capture_within(pos: &Position, budget: u8, weakest: usize) -> bool {
    let us = pos.side_to_move();
    let them = us.other();
    let theirs = pos.side_bits(them);
    let budget = u32::from(budget);
    let mut stronger: Bitboard = 0;
    for k in (weakest..PieceType::ALL.len()).rev() {
        let victims = pos.piece_bits(them, PieceType::ALL[k]);
        for v in Squares(victims) {
            if TRAPS >> v & 1 == 1 {
                let guards = (neighbors(1 << v) & theirs).count_ones();
                if 2 * guards <= budget {
                    return true;
                }
                continue;
            }
            if stronger == 0 {
                continue;
            }
            let approach = Squares(stronger)
                .map(|s| distance(s, v))
                .min()
                .map_or(0, |d| d - 1);
            for trap in Squares(TRAPS) {
                let d = distance(v, trap);
                if 2 * d + approach > budget {
                    continue;
                }
                let guards = (neighbors(1 << trap) & theirs & !(1u64 << v)).count_ones();
                let occupant = 2 * u32::from(theirs >> trap & 1 == 1);
                if 2 * d + approach + 2 * guards + occupant <= budget {
                    return true;
                }
            }
        }
        // Pieces of type k may push or pull the weaker victims that follow.
        stronger |= pos.piece_bits(us, PieceType::ALL[k]);
    }
    false
}

/// Manhattan distance between two squares.
fn distance(a: u8, b: u8) -> u32 {
    let (a, b) = (i32::from(a), i32::from(b));
    ((a % 8 - b % 8).abs() + (a / 8 - b / 8).abs()) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::arimaa::random_steps::random_steps_or_uniform;
    use crate::game::arimaa::Arimaa;
    use crate::game::Game;
    use crate::util::seeded_rng;

    /// The strongest enemy type some legal turn captures, by playing every
    /// distinct turn of the full move generator.
    fn by_every_turn(
        game: &Arimaa,
        moves: &mut Vec<crate::game::arimaa::Move>,
    ) -> Option<PieceType> {
        let them = game.position().side_to_move().other();
        let before = game.position().material(them);
        game.legal_moves(moves);
        let mut best = None;
        for &mv in moves.iter() {
            let mut after = game.clone();
            after.play(mv);
            let left = after.position().material(them);
            for k in (0..6).rev() {
                if left[k] < before[k] {
                    if best.is_none_or(|b: PieceType| k > b as usize) {
                        best = Some(PieceType::ALL[k]);
                    }
                    break;
                }
            }
        }
        best
    }

    /// Over positions of random games, the pruned search finds exactly the
    /// strongest capture that playing out every legal turn finds.
    #[test]
    fn agrees_with_every_legal_turn_on_random_positions() {
        let mut rng = seeded_rng(5, 0);
        let mut moves = Vec::new();
        let (mut checked, mut with_capture) = (0, 0);
        let mut strongest = [0usize; 6];
        while checked < 1500 {
            let mut g = Arimaa::new();
            while g.outcome().is_none() && g.ply() < 120 && checked < 1500 {
                if g.ply() >= 2 {
                    let want = by_every_turn(&g, &mut moves);
                    let got = best_capture(g.position());
                    assert_eq!(got, want, "ply {}: {:?}", g.ply(), g.position());
                    checked += 1;
                    if let Some(k) = want {
                        with_capture += 1;
                        strongest[k as usize] += 1;
                    }
                }
                let mv = random_steps_or_uniform(&g, 0.15, &mut rng, &mut moves).expect("a turn");
                g.play(mv);
            }
        }
        // The sample must hold captures of several kinds to mean anything.
        assert!(
            with_capture > 200,
            "{with_capture} positions with a capture"
        );
        assert!(
            strongest.iter().filter(|&&n| n > 0).count() >= 4,
            "{strongest:?}"
        );
    }

    /// A position with gold to move and only the given pieces.
    fn gold_to_move(pieces: &[(&str, char)]) -> Position {
        let mut pos = Position::empty(crate::game::Side::First);
        for &(sq, c) in pieces {
            let sq = crate::game::arimaa::bitboard::parse_square(sq).unwrap();
            pos.place(sq, crate::game::arimaa::Piece::from_char(c).unwrap());
        }
        pos
    }

    #[test]
    fn hand_positions() {
        // A silver cat on c2 beside the c3 trap, a gold dog below it on c1:
        // pushed up, it dies.
        let open = gold_to_move(&[("c2", 'c'), ("c1", 'D')]);
        assert_eq!(best_capture(&open), Some(PieceType::Cat));
        // The same cat on c4 dies on c6 instead: the dog on c5 steps aside
        // and pulls it to c5 (2 steps), then pushes it up (2 steps).
        let pulled = gold_to_move(&[("c4", 'c'), ("c5", 'D')]);
        assert_eq!(best_capture(&pulled), Some(PieceType::Cat));
        // A silver dog on d3 guards c3, and the gold dog cannot move a dog.
        let guarded = gold_to_move(&[("c2", 'c'), ("c1", 'D'), ("d3", 'd')]);
        assert_eq!(best_capture(&guarded), None);
        // With a gold horse on e3 the guard itself dies: pushed onto the
        // trap (2 steps), then its last friend, the cat, pushed off c2 by
        // the gold dog (2 steps).
        let both = gold_to_move(&[("c2", 'c'), ("c1", 'D'), ("d3", 'd'), ("e3", 'H')]);
        assert_eq!(best_capture(&both), Some(PieceType::Dog));
        // Only a gold rabbit beside the cat: nothing can move it.
        let weak = gold_to_move(&[("c2", 'c'), ("c1", 'R')]);
        assert_eq!(best_capture(&weak), None);
        // Our own piece on the trap is no obstacle: the gold horse on f3
        // steps off and pulls the silver rabbit f4 in behind it (2 steps).
        let occupied = gold_to_move(&[("f3", 'H'), ("f4", 'r')]);
        assert_eq!(best_capture(&occupied), Some(PieceType::Rabbit));
        // A silver horse on the f6 trap guarded by a dog on f7, a gold
        // elephant on g7: the dog pushed or pulled away, the horse dies.
        let trapped = gold_to_move(&[("f6", 'h'), ("f7", 'd'), ("g7", 'E')]);
        assert_eq!(best_capture(&trapped), Some(PieceType::Horse));
        // Silver to move in the same position: silver captures nothing.
        let mut silver = trapped;
        silver.set_side_to_move(crate::game::Side::Second);
        assert_eq!(best_capture(&silver), None);
    }
}
