//! Tic-tac-toe on bitmasks.
//!
//! Cells are numbered in reading order, `row * 3 + col` with row 0 at the
//! top. Notation is `a1`..`c3`: file = column, rank 1 = the bottom row, so
//! `a1` is cell 6. The text form is the three rows top first, joined by `/`,
//! with `x`, `o` and `.` (e.g. `x../.o./...`); `x` moves first.

use super::grid;
use super::{Game, GameError, Outcome, Side};
use crate::util::SeededRng;
use rand::RngExt;

const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];
const FULL: u16 = 0b111_111_111;

/// `NTH_CELL[mask][k]`: the `k`-th set bit of the 9-bit `mask` (a table so
/// that [`TicTacToe::random_move`] has no data-dependent loop).
static NTH_CELL: [[u8; 9]; 512] = {
    let mut t = [[0u8; 9]; 512];
    let mut m = 0;
    while m < 512 {
        let (mut c, mut k) = (0, 0);
        while c < 9 {
            if m >> c & 1 == 1 {
                t[m][k] = c as u8;
                k += 1;
            }
            c += 1;
        }
        m += 1;
    }
    t
};

/// `HAS_LINE[mask]`: whether the 9-bit `mask` holds a line (a table for
/// [`TicTacToe::random_move`]'s game-over test).
static HAS_LINE: [bool; 512] = {
    let mut t = [false; 512];
    let mut m = 0;
    while m < 512 {
        let mut i = 0;
        while i < LINES.len() {
            if LINES[i] & !m == 0 {
                t[m as usize] = true;
            }
            i += 1;
        }
        m += 1;
    }
    t
};

/// A Tic-tac-toe move: the cell index 0..9 in reading order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TttMove(pub u8);

/// A Tic-tac-toe position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct TicTacToe {
    x: u16,
    o: u16,
}

impl TicTacToe {
    /// Bitmask of the cells held by `side`.
    pub fn stones(&self, side: Side) -> u16 {
        match side {
            Side::First => self.x,
            Side::Second => self.o,
        }
    }

    /// Who holds cell `i` (0..9), if anyone.
    pub fn cell(&self, i: usize) -> Option<Side> {
        grid::bit_owner([self.x.into(), self.o.into()], i)
    }

    fn cell_char(&self, i: usize) -> char {
        match self.cell(i) {
            Some(Side::First) => 'x',
            Some(Side::Second) => 'o',
            None => '.',
        }
    }

    fn has_line(mask: u16) -> bool {
        LINES.iter().any(|&l| l & !mask == 0)
    }

    /// Cells where `side` would complete a line now.
    pub fn winning_cells(&self, side: Side) -> Vec<TttMove> {
        let own = self.stones(side);
        let empty = FULL & !(self.x | self.o);
        (0..9u8)
            .filter(|&c| empty >> c & 1 == 1 && Self::has_line(own | 1 << c))
            .map(TttMove)
            .collect()
    }

    pub fn square_name(cell: u8) -> String {
        let (row, col) = (cell / 3, cell % 3);
        format!("{}{}", (b'a' + col) as char, 3 - row)
    }
}

impl Game for TicTacToe {
    type Move = TttMove;
    const NAME: &'static str = "tictactoe";
    const DEFAULT_SIZE: usize = 3;

    fn new() -> Self {
        TicTacToe::default()
    }

    /// x has as many marks as o or one more, so the count's parity says.
    fn side_to_move(&self) -> Side {
        Side::after_plies(self.ply())
    }

    fn ply(&self) -> u32 {
        (self.x | self.o).count_ones()
    }

    fn legal_moves(&self, out: &mut Vec<TttMove>) {
        out.clear();
        if self.outcome().is_some() {
            return;
        }
        let empty = FULL & !(self.x | self.o);
        out.extend((0..9u8).filter(|&c| empty >> c & 1 == 1).map(TttMove));
    }

    /// Uniform over the empty cells (the legal moves) without building the
    /// list: a uniform index into the empty cells, then a table select.
    fn random_move(&self, rng: &mut SeededRng, _scratch: &mut Vec<TttMove>) -> Option<TttMove> {
        // Over (as `outcome` says): a line for either side or a full board.
        let empty = FULL & !(self.x | self.o);
        if empty == 0 || HAS_LINE[self.x as usize] || HAS_LINE[self.o as usize] {
            return None;
        }
        let k = rng.random_range(0..empty.count_ones() as usize);
        Some(TttMove(NTH_CELL[empty as usize][k]))
    }

    fn play(&mut self, mv: TttMove) {
        let bit = 1u16 << mv.0;
        debug_assert!((self.x | self.o) & bit == 0, "cell {} is taken", mv.0);
        match self.side_to_move() {
            Side::First => self.x |= bit,
            Side::Second => self.o |= bit,
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        if Self::has_line(self.x) {
            Some(Outcome::Win(Side::First))
        } else if Self::has_line(self.o) {
            Some(Outcome::Win(Side::Second))
        } else if self.x | self.o == FULL {
            Some(Outcome::Draw)
        } else {
            None
        }
    }

    fn hash_key(&self) -> u64 {
        super::hash_of(self)
    }

    fn policy_index(&self, mv: TttMove) -> Option<usize> {
        Some(mv.0 as usize)
    }

    fn move_to_string(&self, mv: TttMove) -> String {
        Self::square_name(mv.0)
    }

    fn parse_move(&self, text: &str) -> Result<TttMove, GameError> {
        let bad = |why: &str| GameError::BadMove {
            token: text.to_string(),
            why: why.to_string(),
        };
        let t = text.trim().as_bytes();
        if t.len() != 2 {
            return Err(bad("expected a square a1..c3"));
        }
        let col = t[0].to_ascii_lowercase().wrapping_sub(b'a');
        let rank = t[1].wrapping_sub(b'0');
        if col > 2 {
            return Err(bad("file must be a, b or c"));
        }
        if !(1..=3).contains(&rank) {
            return Err(bad("rank must be 1, 2 or 3"));
        }
        let cell = (3 - rank) * 3 + col;
        if self.outcome().is_some() {
            return Err(bad("the game is already over"));
        }
        if (self.x | self.o) >> cell & 1 == 1 {
            return Err(bad("that square is taken"));
        }
        Ok(TttMove(cell))
    }

    fn to_text(&self) -> String {
        grid::grid_text(3, |i| self.cell_char(i))
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let bad = |why: &str| GameError::BadPosition {
            text: text.to_string(),
            why: why.to_string(),
        };
        let rows: Vec<&str> = text.trim().split('/').collect();
        if rows.len() != 3 || rows.iter().any(|r| r.chars().count() != 3) {
            return Err(bad("expected three rows of three cells joined by '/'"));
        }
        let mut g = TicTacToe::default();
        for (r, row) in rows.iter().enumerate() {
            for (c, ch) in row.chars().enumerate() {
                let bit = 1u16 << (r * 3 + c);
                match ch {
                    'x' | 'X' => g.x |= bit,
                    'o' | 'O' => g.o |= bit,
                    '.' => {}
                    _ => return Err(bad(&format!("cell '{ch}' is not x, o or '.'"))),
                }
            }
        }
        let (nx, no) = (g.x.count_ones(), g.o.count_ones());
        if nx != no && nx != no + 1 {
            return Err(bad(
                "x moves first, so x has as many marks as o or one more",
            ));
        }
        if Self::has_line(g.x) && Self::has_line(g.o) {
            return Err(bad("both sides have a line"));
        }
        Ok(g)
    }

    fn render(&self) -> String {
        let mut s = String::new();
        for row in 0..3 {
            s.push_str(&format!("{} ", 3 - row));
            for col in 0..3 {
                s.push(self.cell_char(row * 3 + col));
                s.push(' ');
            }
            s.push('\n');
        }
        s.push_str("  a b c\n");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::test_support::{assert_refused, legal, play_all};

    #[test]
    fn a1_is_bottom_left() {
        let g = TicTacToe::new();
        assert_eq!(g.parse_move("a1").unwrap(), TttMove(6));
        assert_eq!(g.parse_move("c3").unwrap(), TttMove(2));
        assert_eq!(g.move_to_string(TttMove(6)), "a1");
    }

    #[test]
    fn bad_moves_name_the_token() {
        let mut g = TicTacToe::new();
        g.play_str("b2").unwrap();
        assert_refused(
            &g,
            &[
                ("d1", "file"),
                ("a4", "rank"),
                ("b2", "taken"),
                ("", "square"),
            ],
        );
    }

    #[test]
    fn text_round_trip_and_refusals() {
        let g = TicTacToe::from_text("x../.o./..x").unwrap();
        assert_eq!(g.to_text(), "x../.o./..x");
        assert_eq!(g.side_to_move(), Side::Second);
        assert!(TicTacToe::from_text("xx./.../...").is_err());
        assert!(TicTacToe::from_text("xxx/ooo/...").is_err());
        assert!(TicTacToe::from_text("x../...").is_err());
    }

    #[test]
    fn wins_and_draws() {
        let mut g = TicTacToe::new();
        play_all(&mut g, &["a1", "a2", "b1", "b2", "c1"]);
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
        assert!(legal(&g).is_empty());
        let d = TicTacToe::from_text("xox/xox/oxo").unwrap();
        assert_eq!(d.outcome(), Some(Outcome::Draw));
    }
}
