//! Pentago on bitboards (OpenSpiel's rules and notation).
//!
//! The 6x6 board is split into four 3x3 quadrants. A move places a stone on
//! an empty cell and then **must** rotate one quadrant (any of the four,
//! empty ones included) a quarter turn either way; all 8 rotations are
//! separate moves even when they give the same board. Five or more in a row
//! is checked **only after the rotation**: a five made by the placement and
//! broken by the rotation does not count. If the rotation gives both players
//! five, the game is a draw; a full board without a five is a draw.
//!
//! Cells are `y * 6 + x` with `y = 0` the top row. Notation is OpenSpiel's
//! `a1s`: file `a`..`f` = x, rank `1`..`6` = y + 1 (**rank 1 is the top
//! row**), then the rotation letter `s`..`z` = r 0..7. Quadrant `r >> 1`:
//! 0 top-left, 1 top-right, 2 bottom-right, 3 bottom-left. Even r turns
//! counter-clockwise, a stone at local (lx, ly) going to (ly, 2 - lx); odd
//! r turns clockwise, (lx, ly) going to (2 - ly, lx). The move id
//! `cell * 8 + r` is OpenSpiel's action. The text form is the six rows top
//! first joined by `/`, with `.`, `O` (first player) and `@` (second).

use super::grid;
use super::{Game, GameError, Outcome, Side};
use crate::util::SeededRng;
use rand::RngExt;

const FULL: u64 = (1 << 36) - 1;

/// A Pentago move: `cell * 8 + rotation` (OpenSpiel's action id).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PentagoMove(pub u16);

impl PentagoMove {
    pub fn new(cell: usize, rotation: usize) -> Self {
        PentagoMove((cell * 8 + rotation) as u16)
    }
    /// The cell `y * 6 + x` where the stone goes.
    pub fn cell(self) -> usize {
        self.0 as usize / 8
    }
    /// The rotation 0..8: quadrant `r >> 1`, clockwise when odd.
    pub fn rotation(self) -> usize {
        self.0 as usize % 8
    }
}

/// All 32 lines of five cells (the reference for [`has_five`]'s masks).
#[cfg(test)]
fn lines() -> [u64; 32] {
    let mut out = [0u64; 32];
    let mut k = 0;
    for (dx, dy) in [(1i32, 0i32), (0, 1), (1, 1), (1, -1)] {
        for y in 0..6i32 {
            for x in 0..6i32 {
                let (ex, ey) = (x + 4 * dx, y + 4 * dy);
                if !(0..6).contains(&ex) || !(0..6).contains(&ey) {
                    continue;
                }
                out[k] = (0..5).fold(0u64, |m, i| m | 1 << ((y + i * dy) * 6 + x + i * dx));
                k += 1;
            }
        }
    }
    assert_eq!(k, 32);
    out
}

/// Start cells of the horizontal fives: x in 0..2, every row.
const H_STARTS: u64 = 0b11 | 0b11 << 6 | 0b11 << 12 | 0b11 << 18 | 0b11 << 24 | 0b11 << 30;
/// Start cells of the vertical fives: rows 0 and 1.
const V_STARTS: u64 = (1 << 12) - 1;
/// Start cells of the down-right fives (step 7): x, y in 0..2.
const D_STARTS: u64 = 0b11 | 0b11 << 6;
/// Start cells of the down-left fives (step 5): x in 4..6, y in 0..2.
const A_STARTS: u64 = 0b11 << 4 | 0b11 << 10;

/// Whether `bb` holds five or more in a row.
pub fn has_five(bb: u64) -> bool {
    let run = |step: u32| bb & bb >> step & bb >> (2 * step) & bb >> (3 * step) & bb >> (4 * step);
    (run(1) & H_STARTS) | (run(6) & V_STARTS) | (run(7) & D_STARTS) | (run(5) & A_STARTS) != 0
}

/// `ROT[d][p]`: the 9-bit quadrant pattern `p` (bit `ly * 3 + lx`) turned
/// counter-clockwise (`d = 0`, (lx, ly) -> (ly, 2 - lx)) or clockwise
/// (`d = 1`, (lx, ly) -> (2 - ly, lx)).
static ROT: [[u16; 512]; 2] = {
    let mut t = [[0u16; 512]; 2];
    let mut p = 0;
    while p < 512 {
        let mut b = 0;
        while b < 9 {
            if p >> b & 1 == 1 {
                let (lx, ly) = (b % 3, b / 3);
                t[0][p] |= 1 << ((2 - lx) * 3 + ly);
                t[1][p] |= 1 << (lx * 3 + 2 - ly);
            }
            b += 1;
        }
        p += 1;
    }
    t
};

/// Bit of local (0, 0) of each quadrant.
const QUAD_BASE: [u32; 4] = [0, 3, 21, 18];
/// The nine cells of a quadrant whose base is bit 0.
const QUAD_CELLS: u64 = 0b111 | 0b111 << 6 | 0b111 << 12;

/// `bb` with rotation `r` applied.
pub fn rotate(bb: u64, r: usize) -> u64 {
    let base = QUAD_BASE[r >> 1 & 3];
    let q = bb >> base;
    let p = (q & 7) | (q >> 3 & 0o70) | (q >> 6 & 0o700);
    let t = ROT[r & 1][p as usize] as u64;
    let back = (t & 7) | (t & 0o70) << 3 | (t & 0o700) << 6;
    (bb & !(QUAD_CELLS << base)) | back << base
}

/// A Pentago position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Pentago {
    /// Stones of the first (`O`) and second (`@`) player, bit `y * 6 + x`.
    bb: [u64; 2],
    /// Stones on the board (= plies played), so that the side to move and
    /// the empty count need no popcount.
    ply: u8,
    outcome: Option<Outcome>,
}

impl Pentago {
    /// Bitboard of `side`'s stones (bit `y * 6 + x`, y = 0 on top).
    pub fn stones(&self, side: Side) -> u64 {
        self.bb[side.index()]
    }

    /// Who holds cell `i`, if anyone.
    pub fn cell(&self, i: usize) -> Option<Side> {
        grid::bit_owner(self.bb, i)
    }

    fn judge(bb: [u64; 2]) -> Option<Outcome> {
        match (has_five(bb[0]), has_five(bb[1])) {
            (true, true) => Some(Outcome::Draw),
            (true, false) => Some(Outcome::Win(Side::First)),
            (false, true) => Some(Outcome::Win(Side::Second)),
            (false, false) => ((bb[0] | bb[1]) == FULL).then_some(Outcome::Draw),
        }
    }

    fn cell_char(&self, i: usize) -> char {
        match self.cell(i) {
            Some(Side::First) => 'O',
            Some(Side::Second) => '@',
            None => '.',
        }
    }
}

impl Game for Pentago {
    type Move = PentagoMove;
    const NAME: &'static str = "pentago";
    const DEFAULT_SIZE: usize = 6;
    const POLICY_PLANES: usize = 8;

    fn new() -> Self {
        Pentago::default()
    }

    fn side_to_move(&self) -> Side {
        Side::after_plies(self.ply.into())
    }

    fn ply(&self) -> u32 {
        self.ply as u32
    }

    fn legal_moves(&self, out: &mut Vec<PentagoMove>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        let empty = FULL & !(self.bb[0] | self.bb[1]);
        for cell in 0..36 {
            if empty >> cell & 1 == 1 {
                out.extend((0..8).map(|r| PentagoMove::new(cell, r)));
            }
        }
    }

    /// Uniform over `legal_moves` (every empty cell x all 8 rotations)
    /// without building the list. While at least a quarter of the cells are
    /// empty, up to 8 uniform move ids `0..288` are tried and the first on an
    /// empty cell is taken (uniform over the legal moves given acceptance);
    /// otherwise, or when all 8 hit stones, one uniform index `k` into the
    /// `8 * empties` legal moves: the `k / 8`-th empty cell, rotation `k % 8`.
    /// Both branches are uniform over the legal moves, so their mixture is too.
    fn random_move(
        &self,
        rng: &mut SeededRng,
        _scratch: &mut Vec<PentagoMove>,
    ) -> Option<PentagoMove> {
        if self.outcome.is_some() {
            return None;
        }
        let taken = self.bb[0] | self.bb[1];
        let mut empty = FULL & !taken;
        let count = 36 - self.ply as u32;
        if count == 0 {
            return None;
        }
        if count >= 9 {
            for _ in 0..8 {
                let id = rng.random_range(0..288u32);
                if taken >> (id / 8) & 1 == 0 {
                    return Some(PentagoMove(id as u16));
                }
            }
        }
        let k = rng.random_range(0..count * 8);
        for _ in 0..k / 8 {
            empty &= empty - 1;
        }
        Some(PentagoMove::new(
            empty.trailing_zeros() as usize,
            (k % 8) as usize,
        ))
    }

    fn play(&mut self, mv: PentagoMove) {
        let s = self.side_to_move().index();
        debug_assert!((self.bb[0] | self.bb[1]) >> mv.cell() & 1 == 0);
        self.bb[s] |= 1 << mv.cell();
        self.ply += 1;
        let r = mv.rotation();
        self.bb = [rotate(self.bb[0], r), rotate(self.bb[1], r)];
        self.outcome = Self::judge(self.bb);
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn hash_key(&self) -> u64 {
        super::hash_of(self)
    }

    /// The placement's point on the rotation's plane: all 288 moves apart.
    fn policy_index(&self, mv: PentagoMove) -> Option<usize> {
        Some(mv.rotation() * 36 + mv.cell())
    }

    fn move_to_string(&self, mv: PentagoMove) -> String {
        let cell = mv.cell();
        format!(
            "{}{}{}",
            (b'a' + (cell % 6) as u8) as char,
            cell / 6 + 1,
            (b's' + mv.rotation() as u8) as char
        )
    }

    fn parse_move(&self, text: &str) -> Result<PentagoMove, GameError> {
        let bad = |why: &str| GameError::BadMove {
            token: text.to_string(),
            why: why.to_string(),
        };
        let t = text.trim().as_bytes();
        if t.len() != 3 {
            return Err(bad(
                "expected a cell a1..f6 and a rotation s..z, such as a1s",
            ));
        }
        let x = t[0].to_ascii_lowercase().wrapping_sub(b'a') as usize;
        let y = t[1].wrapping_sub(b'1') as usize;
        let r = t[2].to_ascii_lowercase().wrapping_sub(b's') as usize;
        if x >= 6 {
            return Err(bad("file must be a..f"));
        }
        if y >= 6 {
            return Err(bad("rank must be 1..6"));
        }
        if r >= 8 {
            return Err(bad("rotation must be s..z"));
        }
        if self.outcome.is_some() {
            return Err(bad("the game is already over"));
        }
        let cell = y * 6 + x;
        if (self.bb[0] | self.bb[1]) >> cell & 1 == 1 {
            return Err(bad("that cell is taken"));
        }
        Ok(PentagoMove::new(cell, r))
    }

    fn to_text(&self) -> String {
        grid::grid_text(6, |i| self.cell_char(i))
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let bad = |why: String| GameError::BadPosition {
            text: text.to_string(),
            why,
        };
        let rows: Vec<&str> = text.trim().split('/').collect();
        if rows.len() != 6 || rows.iter().any(|r| r.chars().count() != 6) {
            return Err(bad("expected six rows of six cells joined by '/'".into()));
        }
        let mut bb = [0u64; 2];
        for (y, row) in rows.iter().enumerate() {
            for (x, ch) in row.chars().enumerate() {
                let bit = 1u64 << (y * 6 + x);
                match ch {
                    'O' | 'o' => bb[0] |= bit,
                    '@' => bb[1] |= bit,
                    '.' => {}
                    _ => return Err(bad(format!("cell '{ch}' is not O, @ or '.'"))),
                }
            }
        }
        let (n0, n1) = (bb[0].count_ones(), bb[1].count_ones());
        if n0 != n1 && n0 != n1 + 1 {
            return Err(bad(
                "O moves first, so O has as many stones as @ or one more".into(),
            ));
        }
        Ok(Pentago {
            bb,
            ply: (n0 + n1) as u8,
            outcome: Self::judge(bb),
        })
    }

    fn render(&self) -> String {
        let mut s = String::from("   a b c   d e f\n");
        for y in 0..6 {
            if y == 3 {
                s.push('\n');
            }
            s.push_str(&format!("{} ", y + 1));
            for x in 0..6 {
                if x == 3 {
                    s.push_str("  ");
                } else {
                    s.push(' ');
                }
                s.push(self.cell_char(y * 6 + x));
            }
            s.push('\n');
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::test_support::{assert_notation_round_trips, assert_refused, legal, xorshift};

    #[test]
    fn every_move_has_its_own_policy_logit() {
        let mut g = Pentago::new();
        let mut state = 7u64;
        for _ in 0..12 {
            let moves = legal(&g);
            let mut seen = vec![false; Pentago::POLICY_PLANES * 36];
            for &m in &moves {
                let i = g.policy_index(m).unwrap();
                assert!(!seen[i], "{} shares logit {i}", g.move_to_string(m));
                seen[i] = true;
            }
            // Rotations of one placement are on different planes.
            assert_eq!(g.policy_index(moves[0]).unwrap() % 36, moves[0].cell());
            g.play(moves[xorshift(&mut state) as usize % moves.len()]);
        }
    }

    #[test]
    fn notation_round_trip() {
        let g = Pentago::new();
        assert_eq!(g.parse_move("a1s").unwrap(), PentagoMove(0));
        assert_eq!(g.parse_move("f6z").unwrap(), PentagoMove(287));
        assert_eq!(g.parse_move("b1t").unwrap(), PentagoMove(9));
        let v = legal(&g);
        assert_eq!(v.len(), 288);
        assert_notation_round_trips(&g, v);
    }

    #[test]
    fn bad_moves_name_the_token() {
        let mut g = Pentago::new();
        g.play_str("a1s").unwrap();
        // The top-left quadrant turned: the stone on a1 went to a3.
        assert_refused(
            &g,
            &[
                ("g1s", "file"),
                ("a7s", "rank"),
                ("a2a", "rotation"),
                ("a3s", "taken"),
                ("a1", "rotation"),
            ],
        );
    }

    #[test]
    fn rotation_directions() {
        // A stone on the top-left corner of a quadrant (local 0,0).
        // Even r (counter-clockwise as printed): (0,0) -> (0,2), bottom-left.
        assert_eq!(rotate(1 << 0, 0), 1 << 12);
        // Odd r (clockwise): (0,0) -> (2,0), top-right.
        assert_eq!(rotate(1 << 0, 1), 1 << 2);
        // Top-right quadrant, local (1,0) = cell 4: ccw -> (0,1) = cell 9;
        // cw -> (2,1) = cell 11.
        assert_eq!(rotate(1 << 4, 2), 1 << 9);
        assert_eq!(rotate(1 << 4, 3), 1 << 11);
        // Bottom-right quadrant rotations leave other quadrants alone.
        assert_eq!(rotate(1 << 0, 4), 1 << 0);
        // Bottom-left quadrant: cell (0,3) = 18 -> ccw (0,2) local -> cell 30.
        assert_eq!(rotate(1 << 18, 6), 1 << 30);
        // The centre never moves, four turns are the identity.
        for r in 0..8 {
            let b = 0xf0f3_c5a9u64 & FULL;
            let four = (0..4).fold(b, |x, _| rotate(x, r));
            assert_eq!(four, b);
        }
        // a1s in notation: place on a1 (top-left), rotate ccw: lands on a3.
        let mut g = Pentago::new();
        g.play_str("a1s").unwrap();
        assert_eq!(g.to_text(), "....../....../O...../....../....../......");
    }

    #[test]
    fn five_counts_only_after_rotation() {
        // O holds a1..d1 (top row) and plays e1: the placement makes five,
        // but rotating the top-left quadrant breaks it.
        let g0 = Pentago::from_text("OOOO../@@@@../....../....../....../......").unwrap();
        assert_eq!(g0.side_to_move(), Side::First);
        let mut g = g0;
        g.play_str("e1s").unwrap();
        assert_eq!(g.outcome(), None, "{}", g.to_text());
        // Rotating an unrelated quadrant keeps the five.
        let mut g = g0;
        g.play_str("e1w").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
        // A rotation can also make a five without the placement.
        assert!(legal(&g).is_empty());
    }

    #[test]
    fn both_fives_draw_and_full_board_draw() {
        let both = Pentago::from_text("OOOOO./@@@@@./O@O@O@/@O@O@O/....../......");
        assert_eq!(both.unwrap().outcome(), Some(Outcome::Draw));
        let full = Pentago::from_text("OO@@OO/@@OO@@/OO@@OO/@@OO@@/OO@@OO/@@OO@@").unwrap();
        assert_eq!(full.outcome(), Some(Outcome::Draw));
        let t = "OO..../....../....../....../....../......";
        assert!(Pentago::from_text(t).is_err());
        let t = "O...../.@..../....../....../....../......";
        assert_eq!(Pentago::from_text(t).unwrap().to_text(), t);
    }

    /// The per-cell rotation the table replaces.
    fn rotate_slow(bb: u64, r: usize) -> u64 {
        let (ox, oy) = [(0, 0), (3, 0), (3, 3), (0, 3)][r >> 1];
        let mut out = bb;
        for ly in 0..3 {
            for lx in 0..3 {
                out &= !(1u64 << ((oy + ly) * 6 + ox + lx));
            }
        }
        for ly in 0..3 {
            for lx in 0..3 {
                if bb >> ((oy + ly) * 6 + ox + lx) & 1 == 1 {
                    let (nx, ny) = if r.is_multiple_of(2) {
                        (ly, 2 - lx)
                    } else {
                        (2 - ly, lx)
                    };
                    out |= 1u64 << ((oy + ny) * 6 + ox + nx);
                }
            }
        }
        out
    }

    #[test]
    fn tables_match_the_per_cell_definitions() {
        let lines = lines();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..200_000u64 {
            let x = xorshift(&mut x);
            // Mix sparse and dense boards.
            let bb = match i % 3 {
                0 => x & FULL,
                1 => x & (x >> 20) & FULL,
                _ => (x | x >> 17) & FULL,
            };
            for r in 0..8 {
                assert_eq!(rotate(bb, r), rotate_slow(bb, r), "{bb:#x} r {r}");
            }
            let slow = lines.iter().any(|&l| l & !bb == 0);
            assert_eq!(has_five(bb), slow, "{bb:#x}");
        }
        for &l in &lines {
            assert!(has_five(l));
            for b in 0..36 {
                if l >> b & 1 == 1 {
                    assert!(!has_five(l & !(1 << b)));
                }
            }
        }
    }
}
