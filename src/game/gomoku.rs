//! Free-style Gomoku on an N x N board (5..=19, standard 15).
//!
//! Black (the first player) and White place stones in turn on empty points;
//! five **or more** in a row (horizontal, vertical or diagonal) wins. There
//! are no renju restrictions and no swap opening. A full board without a
//! five is a draw. These are OpenSpiel's `gomoku` rules (tested against its
//! random games in `tests/stones_rules.rs`).
//!
//! Cells are numbered `row * n + col` with row 0 at the top. A move is a
//! square `a1`-style: file letter = column (`a` = left, the letter `i` is
//! used), rank 1 = the bottom row, so on 15x15 `a1` is cell 210. The text
//! form is the rows top first joined by `/`, with `.`, `b` (Black) and `w`
//! (White); the side to move follows from the stone counts (Black moves
//! first).
//!
//! The win test is incremental: after each stone only the four lines
//! through that stone are counted.

use super::grid::{self, StoneBoard};
use super::{Game, GameError, Outcome, Side};
use crate::util::SeededRng;
use rand::RngExt;

/// Largest board side supported.
pub const MAX_SIZE: usize = grid::STONE_MAX_SIZE;
const DIAGS: usize = 2 * MAX_SIZE - 1;
const LINES: usize = 2 * MAX_SIZE + 2 * DIAGS;

/// A Gomoku move: the cell index `row * n + col`, row 0 at the top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GomokuMove(pub u16);

/// A Gomoku position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gomoku {
    board: StoneBoard,
    /// The stones again as one bitmask per line and side, for the five
    /// test: `lines[s][k]` with `k` = row `r` (bit `c`), `MAX_SIZE + c`
    /// (column, bit `r`), `2 * MAX_SIZE + r - c + n - 1` (diagonal, bit
    /// `c`) and `2 * MAX_SIZE + DIAGS + r + c` (anti-diagonal, bit `c`).
    lines: [[u32; LINES]; 2],
    stones: u16,
    outcome: Option<Outcome>,
}

fn side_code(side: Side) -> u8 {
    side.index() as u8 + 1
}

const FILES: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";

impl Gomoku {
    /// An empty `n` x `n` board (5..=19).
    pub fn with_board_size(n: usize) -> Result<Self, GameError> {
        Ok(Gomoku {
            board: StoneBoard::empty(Self::NAME, n)?,
            lines: [[0; LINES]; 2],
            stones: 0,
            outcome: None,
        })
    }

    /// Who holds cell `i`, if anyone.
    pub fn cell(&self, i: usize) -> Option<Side> {
        self.board.owner(i)
    }

    /// Number of cells (`n * n`).
    pub fn cell_count(&self) -> usize {
        self.board.cell_count()
    }

    /// The four line words through `cell` (row, column, diagonal,
    /// anti-diagonal) and the bit of `cell` in each: `c`, `r`, `c`, `c`.
    #[inline]
    fn line_slots(&self, cell: usize) -> ([usize; 4], usize, usize) {
        let n = self.board.n();
        // 32-bit division: cells are below 361.
        let (r, c) = (
            (cell as u32 / n as u32) as usize,
            (cell as u32 % n as u32) as usize,
        );
        let slots = [
            r,
            MAX_SIZE + c,
            2 * MAX_SIZE + r + n - 1 - c,
            2 * MAX_SIZE + DIAGS + r + c,
        ];
        (slots, r, c)
    }

    /// Puts a stone with colour `code` (1 or 2) on empty `cell`.
    #[inline]
    fn set_stone(&mut self, cell: usize, code: u8) {
        self.board.cells[cell] = code;
        let (slots, r, c) = self.line_slots(cell);
        let words = &mut self.lines[code as usize - 1];
        words[slots[0]] |= 1 << c;
        words[slots[1]] |= 1 << r;
        words[slots[2]] |= 1 << c;
        words[slots[3]] |= 1 << c;
    }

    /// Whether a `side` stone on `cell` would be part of five or more.
    ///
    /// On each of the four line words through `cell`, with `cell` set,
    /// `x & x >> 1 & .. & x >> 4` marks the starts of runs of five; a run
    /// through `cell` starts at most four bits before it.
    pub fn makes_five(&self, cell: usize, side: Side) -> bool {
        let (slots, r, c) = self.line_slots(cell);
        let words = &self.lines[side.index()];
        let five = |w: u32, bit: usize| -> bool {
            let x = w | 1 << bit;
            let starts = x & x >> 1 & x >> 2 & x >> 3 & x >> 4;
            starts & (0x1f << bit) >> 4 != 0
        };
        five(words[slots[0]], c)
            | five(words[slots[1]], r)
            | five(words[slots[2]], c)
            | five(words[slots[3]], c)
    }

    /// Empty cells where `side` would make five or more now (empty once the
    /// game is over).
    pub fn winning_cells(&self, side: Side) -> Vec<GomokuMove> {
        if self.outcome.is_some() {
            return Vec::new();
        }
        (0..self.cell_count())
            .filter(|&i| self.board.cells[i] == 0 && self.makes_five(i, side))
            .map(|i| GomokuMove(i as u16))
            .collect()
    }

    /// The square name of `cell` on an `n` x `n` board.
    pub fn square_name(&self, cell: usize) -> String {
        self.board.square_name(FILES, cell)
    }

    fn scan_outcome(&self) -> Option<Outcome> {
        for i in 0..self.cell_count() {
            if let Some(side) = self.cell(i) {
                if self.makes_five(i, side) {
                    return Some(Outcome::Win(side));
                }
            }
        }
        (self.stones as usize == self.cell_count()).then_some(Outcome::Draw)
    }
}

impl Game for Gomoku {
    type Move = GomokuMove;
    const NAME: &'static str = "gomoku";
    const DEFAULT_SIZE: usize = 15;

    fn new() -> Self {
        Self::with_board_size(Self::DEFAULT_SIZE).expect("15 is a valid size")
    }

    fn with_size(size: usize) -> Result<Self, GameError> {
        Self::with_board_size(size)
    }

    fn size(&self) -> usize {
        self.board.n()
    }

    fn side_to_move(&self) -> Side {
        Side::after_plies(self.stones.into())
    }

    fn ply(&self) -> u32 {
        self.stones as u32
    }

    fn legal_moves(&self, out: &mut Vec<GomokuMove>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        out.extend(
            (0..self.cell_count())
                .filter(|&i| self.board.cells[i] == 0)
                .map(|i| GomokuMove(i as u16)),
        );
    }

    /// Uniform over the empty cells (the legal moves) without building the
    /// list. While at least a quarter of the board is empty, up to 8 uniform
    /// random cells are tried and the first empty one is taken (uniform
    /// over the empty cells given acceptance); otherwise, or when all 8 hit
    /// stones, the `k`-th empty cell for a uniform `k`. Both branches are
    /// uniform over the empty cells, so their mixture is too.
    fn random_move(
        &self,
        rng: &mut SeededRng,
        _scratch: &mut Vec<GomokuMove>,
    ) -> Option<GomokuMove> {
        if self.outcome.is_some() {
            return None;
        }
        let cells = self.cell_count();
        let empties = cells - self.stones as usize;
        if empties == 0 {
            return None;
        }
        if empties * 4 >= cells {
            for _ in 0..8 {
                let i = rng.random_range(0..cells);
                if self.board.cells[i] == 0 {
                    return Some(GomokuMove(i as u16));
                }
            }
        }
        let k = rng.random_range(0..empties);
        self.board.cells[..cells]
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c == 0)
            .nth(k)
            .map(|(i, _)| GomokuMove(i as u16))
    }

    fn play(&mut self, mv: GomokuMove) {
        let i = mv.0 as usize;
        debug_assert!(self.board.cells[i] == 0, "cell {i} is taken");
        debug_assert!(self.outcome.is_none(), "the game is over");
        let side = self.side_to_move();
        self.set_stone(i, side_code(side));
        self.stones += 1;
        if self.makes_five(i, side) {
            self.outcome = Some(Outcome::Win(side));
        } else if self.stones as usize == self.cell_count() {
            self.outcome = Some(Outcome::Draw);
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn hash_key(&self) -> u64 {
        super::hash_of(self)
    }

    fn policy_index(&self, mv: GomokuMove) -> Option<usize> {
        Some(mv.0 as usize)
    }

    fn move_to_string(&self, mv: GomokuMove) -> String {
        self.square_name(mv.0 as usize)
    }

    fn parse_move(&self, text: &str) -> Result<GomokuMove, GameError> {
        let cell = self.board.free_point(text, FILES, self.outcome.is_some())?;
        Ok(GomokuMove(cell as u16))
    }

    fn to_text(&self) -> String {
        self.board.text(['.', 'b', 'w'])
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let bad = |why: String| GameError::BadPosition {
            text: text.to_string(),
            why,
        };
        let chars = grid::StoneChars {
            black: ['b', 'B'],
            white: ['w', 'W'],
            empty: &['.'],
            expected: "b, w or '.'",
        };
        let (mut g, nb, nw) =
            grid::read_stones(text, Self::with_board_size, &chars, Self::set_stone)?;
        g.stones = nb + nw;
        let black_five =
            (0..g.cell_count()).any(|i| g.board.cells[i] == 1 && g.makes_five(i, Side::First));
        let white_five =
            (0..g.cell_count()).any(|i| g.board.cells[i] == 2 && g.makes_five(i, Side::Second));
        if black_five && white_five {
            return Err(bad("both sides have five in a row".into()));
        }
        g.outcome = g.scan_outcome();
        Ok(g)
    }

    fn render(&self) -> String {
        self.board.render(FILES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::test_support::{
        assert_notation_round_trips, assert_refused, legal, play_all, xorshift,
    };

    #[test]
    fn notation_round_trip() {
        let g = Gomoku::new();
        assert_eq!(g.parse_move("a1").unwrap(), GomokuMove(210));
        assert_eq!(g.parse_move("o15").unwrap(), GomokuMove(14));
        assert_eq!(g.parse_move("i8").unwrap(), GomokuMove(7 * 15 + 8));
        assert_notation_round_trips(&g, (0..225).map(GomokuMove));
        let g9 = Gomoku::with_size(9).unwrap();
        assert_eq!(g9.move_to_string(GomokuMove(0)), "a9");
        assert!(Gomoku::with_size(4).is_err());
        assert!(Gomoku::with_size(20).is_err());
        assert_eq!(Gomoku::with_size(19).unwrap().size(), 19);
    }

    #[test]
    fn bad_moves_name_the_token() {
        let mut g = Gomoku::with_size(9).unwrap();
        g.play_str("e5").unwrap();
        assert_refused(
            &g,
            &[
                ("j1", "file"),
                ("a10", "rank"),
                ("a0", "rank"),
                ("ax", "rank"),
                ("e5", "taken"),
                ("", "square"),
            ],
        );
    }

    #[test]
    fn five_wins_and_overline_wins() {
        let mut g = Gomoku::with_size(9).unwrap();
        play_all(&mut g, &["a1", "a9", "b1", "b9", "c1", "c9", "d1", "d9"]);
        assert_eq!(g.winning_cells(Side::First).len(), 1);
        g.play_str("e1").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
        assert!(legal(&g).is_empty());
        // Overline: filling the gap in b b b _ b b makes six, still a win.
        let mut g = Gomoku::with_size(9).unwrap();
        play_all(
            &mut g,
            &["a5", "a9", "b5", "b9", "c5", "c9", "e5", "h8", "f5", "h1"],
        );
        assert!(g.outcome().is_none());
        g.play_str("d5").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
        // Diagonal for White.
        let mut g = Gomoku::with_size(9).unwrap();
        play_all(
            &mut g,
            &["a9", "a1", "b9", "b2", "c9", "c3", "d8", "d4", "a7", "e5"],
        );
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::Second)));
    }

    #[test]
    fn text_round_trip_and_draw() {
        let mut g = Gomoku::with_size(5).unwrap();
        play_all(&mut g, &["a1", "e5", "c3"]);
        let t = g.to_text();
        assert_eq!(t, "....w/...../..b../...../b....");
        let h = Gomoku::from_text(&t).unwrap();
        assert_eq!(h, g);
        assert_eq!(h.side_to_move(), Side::Second);
        assert!(Gomoku::from_text("bb.../...../...../...../.....").is_err());
        assert!(Gomoku::from_text("..../..../..../....").is_err());
        assert!(Gomoku::from_text("....x/...../...../...../.....").is_err());
        // A full 5x5 board with no five is a draw.
        let d = Gomoku::from_text("bbwwb/wwbbw/bbwwb/wwbbw/bbwwb").unwrap();
        assert_eq!(d.outcome(), Some(Outcome::Draw));
        let w = Gomoku::from_text("bbbbb/wwww./...../...../.....").unwrap();
        assert_eq!(w.outcome(), Some(Outcome::Win(Side::First)));
    }

    /// The per-step scan the line words replace.
    fn makes_five_slow(g: &Gomoku, cell: usize, side: Side) -> bool {
        crate::game::longest_line_through(g.size(), cell, |i| g.cell(i) == Some(side)) >= 5
    }

    #[test]
    fn line_words_match_the_scan() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for n in [5, 6, 9, 15, 19] {
            for _ in 0..200 {
                let mut text = String::new();
                let (mut nb, mut nw) = (0, 0);
                for r in 0..n {
                    if r > 0 {
                        text.push('/');
                    }
                    for _ in 0..n {
                        text.push(match xorshift(&mut x) % 3 {
                            0 if nb <= nw => {
                                nb += 1;
                                'b'
                            }
                            1 if nw < nb => {
                                nw += 1;
                                'w'
                            }
                            _ => '.',
                        });
                    }
                }
                let Ok(g) = Gomoku::from_text(&text) else {
                    continue;
                };
                for cell in 0..n * n {
                    for side in [Side::First, Side::Second] {
                        assert_eq!(
                            g.makes_five(cell, side),
                            makes_five_slow(&g, cell, side),
                            "{text} {cell}"
                        );
                    }
                }
            }
        }
    }
}
