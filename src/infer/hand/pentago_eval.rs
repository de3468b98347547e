//! A hand-written Pentago evaluator over 35 features.
//!
//! [`pentago_features`] describes a position from the side to move's view:
//! 17 features for the mover ("own"), the same 17 for the opponent, and a
//! constant 1. Over the 32 windows of five cells (all lines where a five can
//! be made), with `k` own stones in a window:
//!
//! | # | feature |
//! | --- | --- |
//! | 0..4 | open windows (no enemy stone) with k = 1, 2, 3, 4 |
//! | 4..7 | blocked windows (at least one enemy stone) with k = 2, 3, 4 |
//! | 7 | full windows (a five; only in finished games) |
//! | 8 | quadrant centres held (they never move; 0..4) |
//! | 9 | board corners held (0..4) |
//! | 10 | other quadrant corners held (0..12) |
//! | 11 | quadrant edge midpoints held (0..16) |
//! | 12 | stones on the board |
//! | 13 | empty cells that complete an open four (a win by placement, if the rotation spares it) |
//! | 14 | quadrants where the side has more stones |
//! | 15 | most own stones in one open window (0..5) |
//! | 16 | empty cells in two or more open windows holding 3+ own stones (forks) |
//!
//! Features 17..34 are the same for the opponent and 34 is the constant.
//! [`PENTAGO_FEATURE_SET`] scores them linearly, `w · f` (no squashing,
//! [`LinearEval`]), with default weights chosen by hand: open threes and fours and
//! completion cells dominate, centres count a little, the opponent's terms
//! mirror the mover's with a slightly larger weight (the opponent moves
//! next). A finished game scores +-[`TERMINAL`] (0 for a draw).

use super::{FeatureSet, LinearEval};
use crate::game::pentago::has_five;
use crate::game::{Game, Pentago};

/// Number of features.
pub const PENTAGO_FEATURES: usize = 35;
/// Features per side.
pub const PER_SIDE: usize = 17;
/// The score of a won (lost) finished game.
pub const TERMINAL: f32 = 100.0;

const QUAD_ORIGIN: [(usize, usize); 4] = [(0, 0), (3, 0), (3, 3), (0, 3)];

fn windows() -> Vec<u64> {
    let mut out = Vec::with_capacity(32);
    for (dx, dy) in [(1i32, 0i32), (0, 1), (1, 1), (1, -1)] {
        for y in 0..6i32 {
            for x in 0..6i32 {
                let (ex, ey) = (x + 4 * dx, y + 4 * dy);
                if (0..6).contains(&ex) && (0..6).contains(&ey) {
                    out.push((0..5).fold(0u64, |m, i| m | 1 << ((y + i * dy) * 6 + x + i * dx)));
                }
            }
        }
    }
    out
}

struct Masks {
    windows: Vec<u64>,
    centres: u64,
    corners: u64,
    quad_corners: u64,
    edge_mids: u64,
    quads: [u64; 4],
}

fn masks() -> &'static Masks {
    static M: std::sync::OnceLock<Masks> = std::sync::OnceLock::new();
    M.get_or_init(|| {
        let bit = |x: usize, y: usize| 1u64 << (y * 6 + x);
        let mut m = Masks {
            windows: windows(),
            centres: 0,
            corners: bit(0, 0) | bit(5, 0) | bit(0, 5) | bit(5, 5),
            quad_corners: 0,
            edge_mids: 0,
            quads: [0; 4],
        };
        for (q, &(ox, oy)) in QUAD_ORIGIN.iter().enumerate() {
            for ly in 0..3 {
                for lx in 0..3 {
                    let b = bit(ox + lx, oy + ly);
                    m.quads[q] |= b;
                    match (lx, ly) {
                        (1, 1) => m.centres |= b,
                        (1, _) | (_, 1) => m.edge_mids |= b,
                        _ => m.quad_corners |= b,
                    }
                }
            }
        }
        m.quad_corners &= !m.corners;
        m
    })
}

fn side_features(own: u64, opp: u64, out: &mut [f32]) {
    let m = masks();
    let empty = !(own | opp) & ((1u64 << 36) - 1);
    let mut best = 0u32;
    let mut strong_cells = [0u8; 36];
    let mut completion = 0u64;
    for &w in &m.windows {
        let k = (own & w).count_ones();
        if opp & w == 0 {
            if (1..=4).contains(&k) {
                out[k as usize - 1] += 1.0;
            }
            best = best.max(k);
            if k == 4 {
                completion |= w & empty;
            }
            if k >= 3 {
                let mut cells = w & empty;
                while cells != 0 {
                    strong_cells[cells.trailing_zeros() as usize] += 1;
                    cells &= cells - 1;
                }
            }
        } else if (2..=4).contains(&k) {
            out[k as usize + 2] += 1.0;
        }
        if k == 5 {
            out[7] += 1.0;
        }
    }
    out[8] = (own & m.centres).count_ones() as f32;
    out[9] = (own & m.corners).count_ones() as f32;
    out[10] = (own & m.quad_corners).count_ones() as f32;
    out[11] = (own & m.edge_mids).count_ones() as f32;
    out[12] = own.count_ones() as f32;
    out[13] = completion.count_ones() as f32;
    out[14] = m
        .quads
        .iter()
        .filter(|&&q| (own & q).count_ones() > (opp & q).count_ones())
        .count() as f32;
    out[15] = best as f32;
    out[16] = strong_cells.iter().filter(|&&c| c >= 2).count() as f32;
}

/// The 35 features of `state` for its side to move (see the module docs).
pub fn pentago_features(state: &Pentago) -> [f32; PENTAGO_FEATURES] {
    let me = state.side_to_move();
    let own = state.stones(me);
    let opp = state.stones(me.other());
    let mut f = [0.0f32; PENTAGO_FEATURES];
    side_features(own, opp, &mut f[..PER_SIDE]);
    side_features(opp, own, &mut f[PER_SIDE..2 * PER_SIDE]);
    f[2 * PER_SIDE] = 1.0;
    f
}

/// The default hand-chosen weights for the mover's 17 features.
pub const OWN_WEIGHTS: [f32; PER_SIDE] = [
    0.05, 0.3, 1.0, 3.0, // open 1..4
    0.02, 0.1, 0.3, // blocked 2..4
    0.0, // fives (terminal)
    0.4, 0.0, 0.05, 0.1, // centres, corners, quadrant corners, edge midpoints
    0.0, // stones
    2.0, // completion cells
    0.2, // quadrant majorities
    0.3, // best window
    1.5, // forks
];

/// The names of the mover's 17 features, in order.
const SIDE_FEATURE_NAMES: [&str; PER_SIDE] = [
    "open_1",
    "open_2",
    "open_3",
    "open_4",
    "blocked_2",
    "blocked_3",
    "blocked_4",
    "fives",
    "centres",
    "corners",
    "quadrant_corners",
    "edge_midpoints",
    "stones",
    "completion_cells",
    "quadrant_majorities",
    "best_window",
    "forks",
];

/// Own weights as [`OWN_WEIGHTS`], the opponent's negated and 1.2x
/// larger (it moves next), bias 0.
pub fn default_weights() -> Vec<f32> {
    let mut weights = vec![0.0; PENTAGO_FEATURES];
    for (i, &w) in OWN_WEIGHTS.iter().enumerate() {
        weights[i] = w;
        weights[PER_SIDE + i] = -1.2 * w;
    }
    weights
}

fn feature_names() -> Vec<String> {
    let own = SIDE_FEATURE_NAMES.iter().map(|n| format!("own_{n}"));
    let opp = SIDE_FEATURE_NAMES.iter().map(|n| format!("opp_{n}"));
    own.chain(opp).chain(["bias".to_string()]).collect()
}

fn write_features(state: &Pentago, out: &mut [f32]) {
    debug_assert!(!has_five(state.stones(state.side_to_move())));
    out.copy_from_slice(&pentago_features(state));
}

/// `pentago-features`: the 35 features above, weighted (a won game scores
/// [`TERMINAL`]; five units are a clear advantage).
pub const PENTAGO_FEATURE_SET: FeatureSet<Pentago> = FeatureSet {
    name: "pentago-features",
    feature_names,
    features: write_features,
    default_weights,
    terminal: TERMINAL,
    scale: 5000.0,
};

/// The hand-set Pentago evaluator.
pub fn default_pentago_eval() -> LinearEval<Pentago> {
    LinearEval::default_for(PENTAGO_FEATURE_SET)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Outcome, Side};
    use crate::infer::hand::HandEvaluator;
    use crate::util::seeded_rng;
    use rand::RngExt;

    #[test]
    fn features_of_a_small_position() {
        // O: a1 b1 c1 d1 (top row) and the centre b2; @: a6 c6 f6 e5.
        let g = Pentago::from_text("OOOO../.O..../....../....../....@./@.@..@").unwrap();
        assert_eq!(g.side_to_move(), Side::Second);
        let f = pentago_features(&g);
        let (own, opp) = (&f[..PER_SIDE], &f[PER_SIDE..2 * PER_SIDE]);
        // O (the opponent here): a1..e1 is an open window with four.
        assert!(opp[3] >= 1.0);
        assert_eq!(opp[8], 1.0, "b2 is a quadrant centre");
        assert_eq!(opp[9], 1.0, "a1 is a board corner");
        assert_eq!(opp[12], 5.0);
        assert_eq!(
            opp[13], 1.0,
            "e1 completes the top row (f1 is not in a 4-window)"
        );
        assert_eq!(opp[15], 4.0);
        assert_eq!(own[9], 2.0, "a6 and f6");
        assert_eq!(own[8], 1.0, "e5 is a quadrant centre");
        assert_eq!(f[34], 1.0);
        let names = (PENTAGO_FEATURE_SET.feature_names)();
        assert_eq!(names.len(), PENTAGO_FEATURES);
        assert_eq!(
            (names[3].as_str(), names[PER_SIDE + 3].as_str()),
            ("own_open_4", "opp_open_4")
        );
        let w = default_pentago_eval();
        let dot: f32 = f.iter().zip(w.weights()).map(|(f, w)| f * w).sum();
        assert!((w.value(&g) - dot).abs() < 1e-4);
    }

    #[test]
    fn colour_swap_swaps_the_halves() {
        let mut rng = seeded_rng(5, 0);
        let mut g = Pentago::new();
        let mut v = Vec::new();
        for _ in 0..10 {
            g.legal_moves(&mut v);
            let m = v[rng.random_range(0..v.len())];
            g.play(m);
        }
        let t = g.to_text();
        let swapped: String = t
            .chars()
            .map(|c| match c {
                'O' => '@',
                '@' => 'O',
                c => c,
            })
            .collect();
        // Ten stones each way: the swapped position has O to move too, so
        // the own features of one are the opponent features of the other.
        let a = pentago_features(&g);
        let b = pentago_features(&Pentago::from_text(&swapped).unwrap());
        assert_eq!(&a[..PER_SIDE], &b[PER_SIDE..2 * PER_SIDE]);
        assert_eq!(&a[PER_SIDE..2 * PER_SIDE], &b[..PER_SIDE]);
    }

    #[test]
    fn one_ply_eval_beats_random() {
        let eval = default_pentago_eval();
        let mut rng = seeded_rng(6, 0);
        let mut v = Vec::new();
        let (mut wins, mut losses) = (0, 0);
        for game in 0..20 {
            let mut g = Pentago::new();
            let eval_side = if game % 2 == 0 {
                Side::First
            } else {
                Side::Second
            };
            while g.outcome().is_none() {
                g.legal_moves(&mut v);
                let m = if g.side_to_move() == eval_side {
                    *v.iter()
                        .max_by(|&&a, &&b| {
                            let score = |m| {
                                let mut c = g;
                                c.play(m);
                                -eval.value(&c)
                            };
                            score(a).total_cmp(&score(b))
                        })
                        .unwrap()
                } else {
                    v[rng.random_range(0..v.len())]
                };
                g.play(m);
            }
            match g.outcome() {
                Some(Outcome::Win(s)) if s == eval_side => wins += 1,
                Some(Outcome::Win(_)) => losses += 1,
                _ => {}
            }
        }
        assert!(wins >= 16 && losses <= 2, "{wins} wins, {losses} losses");
    }
}
