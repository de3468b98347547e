//! Connect Four on two bitboards: 7 columns x 6 rows, stones drop to the
//! lowest empty cell of a column, four in a row (horizontal, vertical or
//! diagonal) wins, a full board without one is a draw. `x` (the first
//! player) moves first. These are OpenSpiel's `connect_four` rules (tested
//! against its random games in `tests/connect_four_rules.rs`).
//!
//! A move is a column letter `a`..`g`, left to right. Cells are numbered
//! `row * 7 + col` with row 0 at the top, like every grid game here; error
//! messages name a cell by its column letter and its height from the
//! bottom (`d1` is the bottom cell of column `d`). The text form is
//! OpenSpiel's board: the rows top first joined by `/`, with `.`, `x` and
//! `o` (e.g. `......./......./......./......./......./...xo..`); the side
//! to move follows from the stone counts.
//!
//! Inside, bit `col * 7 + h` is the cell of column `col` at height `h`
//! (`h` = 0 at the bottom). The seventh bit of each column (`h` = 6) is
//! never set: it keeps shifted lines from running from one column into the
//! next, so a four is found with three shifts and ANDs per direction, and
//! `occupied + BOTTOM` lands on the next free cell of every column at once.

use super::{Game, GameError, Outcome, Side};
use crate::util::SeededRng;
use rand::RngExt;

/// Board width.
pub const COLUMNS: usize = 7;
/// Board height.
pub const ROWS: usize = 6;
/// Number of cells (`COLUMNS * ROWS`).
pub const CELLS: usize = COLUMNS * ROWS;

/// Bits per column in the inner layout: the rows and one empty guard bit.
const STRIDE: u32 = ROWS as u32 + 1;
const COLUMN: u64 = (1 << ROWS) - 1;
const FILES: &[u8; COLUMNS] = b"abcdefg";

/// The bit of column `col` at height `h` in the inner layout.
const fn bit(col: usize, h: usize) -> u64 {
    1 << (col * STRIDE as usize + h)
}

/// Bits set at height `h` of every column.
const fn row_bits(h: usize) -> u64 {
    let mut m = 0;
    let mut c = 0;
    while c < COLUMNS {
        m |= bit(c, h);
        c += 1;
    }
    m
}

/// The bottom cell of every column.
const BOTTOM: u64 = row_bits(0);
/// The top cell of every column (set there: the column is full).
const TOP: u64 = row_bits(ROWS - 1);
/// Every cell of the board (no guard bits).
const BOARD: u64 = BOTTOM * COLUMN;

/// Line directions as bit shifts: vertical, horizontal, diagonal `/` and
/// diagonal `\` (as `(dcol, dh)`: (0,1), (1,0), (1,1), (1,-1)).
const SHIFTS: [u32; 4] = [1, STRIDE, STRIDE + 1, STRIDE - 1];

/// For each of [`SHIFTS`], the cells where a window of four in that
/// direction starts and stays on the board: 21, 24, 12 and 12 windows.
const WINDOW_STARTS: [u64; 4] = {
    const fn starts(dc: isize, dh: isize) -> u64 {
        let mut m = 0;
        let mut c = 0;
        while c < COLUMNS as isize {
            let mut h = 0;
            while h < ROWS as isize {
                let (ec, eh) = (c + 3 * dc, h + 3 * dh);
                if ec >= 0 && ec < COLUMNS as isize && eh >= 0 && eh < ROWS as isize {
                    m |= bit(c as usize, h as usize);
                }
                h += 1;
            }
            c += 1;
        }
        m
    }
    [starts(0, 1), starts(1, 0), starts(1, 1), starts(1, -1)]
};

/// Whether `stones` (inner layout) hold four in a row.
#[inline]
fn has_four(stones: u64) -> bool {
    SHIFTS.iter().any(|&s| {
        let pairs = stones & stones >> s;
        pairs & pairs >> (2 * s) != 0
    })
}

/// Empty-or-not cells (inner layout) that would complete a four of
/// `stones`: the three others of some window are in `stones`.
#[inline]
fn four_completions(stones: u64) -> u64 {
    let p = stones;
    // Vertical: only three below can complete it.
    let mut r = p << 1 & p << 2 & p << 3;
    for s in [STRIDE, STRIDE + 1, STRIDE - 1] {
        let before = p << s & p << (2 * s);
        r |= before & p << (3 * s);
        r |= before & p >> s;
        let after = p >> s & p >> (2 * s);
        r |= after & p << s;
        r |= after & p >> (3 * s);
    }
    r & BOARD
}

/// An inner-layout bitboard in cell layout (bit `row * 7 + col`, row 0 at
/// the top).
fn to_cells(mut inner: u64) -> u64 {
    let mut out = 0;
    while inner != 0 {
        let i = inner.trailing_zeros();
        let (col, h) = ((i / STRIDE) as usize, (i % STRIDE) as usize);
        out |= 1 << ((ROWS - 1 - h) * COLUMNS + col);
        inner &= inner - 1;
    }
    out
}

/// A Connect Four move: the column 0..7, left to right.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnectFourMove(pub u8);

/// A Connect Four position: the stones of each side (inner layout, see the
/// module docs); everything else follows from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ConnectFour {
    stones: [u64; 2],
}

impl ConnectFour {
    /// Board width.
    pub const COLUMNS: usize = COLUMNS;
    /// Board height.
    pub const ROWS: usize = ROWS;

    #[inline]
    fn occupied(&self) -> u64 {
        self.stones[0] | self.stones[1]
    }

    /// The next free cell of every column that has one (inner layout).
    #[inline]
    fn drop_cells(&self) -> u64 {
        (self.occupied() + BOTTOM) & BOARD
    }

    /// Columns that are not full, as bits 0..7.
    #[inline]
    fn open_columns(&self) -> u32 {
        let free_tops = !self.occupied() & TOP;
        (0..COLUMNS).fold(0, |m, c| {
            m | ((free_tops >> (c * STRIDE as usize + ROWS - 1)) as u32 & 1) << c
        })
    }

    /// Who holds cell `index` (`row * 7 + col`, row 0 at the top), if
    /// anyone; `None` off the board too.
    pub fn cell(&self, index: usize) -> Option<Side> {
        if index >= CELLS {
            return None;
        }
        let b = bit(index % COLUMNS, ROWS - 1 - index / COLUMNS);
        if self.stones[0] & b != 0 {
            Some(Side::First)
        } else if self.stones[1] & b != 0 {
            Some(Side::Second)
        } else {
            None
        }
    }

    /// The stones of `side`, bit `row * 7 + col` (row 0 at the top).
    pub fn stones(&self, side: Side) -> u64 {
        to_cells(self.stones[side.index()])
    }

    /// Number of stones in column `col` (0..7).
    pub fn height(&self, col: usize) -> usize {
        (self.occupied() >> (col * STRIDE as usize) & COLUMN).count_ones() as usize
    }

    /// Empty cells (bit `row * 7 + col`) where a `side` stone would make
    /// four in a row, whether a stone can drop there now or only later.
    /// The raw material of threat analysis: which of them lie on odd or
    /// even rows, and which sit on top of one another.
    pub fn threats(&self, side: Side) -> u64 {
        to_cells(four_completions(self.stones[side.index()]) & !self.occupied())
    }

    /// Cells (bit `row * 7 + col`) where dropping a `side` stone now would
    /// make four in a row, whoever is to move; 0 once the game is over.
    pub fn immediate_wins(&self, side: Side) -> u64 {
        if self.outcome().is_some() {
            return 0;
        }
        to_cells(four_completions(self.stones[side.index()]) & self.drop_cells())
    }

    /// For `side`, the number of windows of four cells in a row (69 on the
    /// board: 24 horizontal, 21 vertical, 24 diagonal) that hold none of the
    /// opponent's stones and exactly `k` of `side`'s, at index `k` = 0..=3
    /// (index 0 counts the empty windows, the same for both sides). A
    /// window with four is a won game and is not counted.
    ///
    /// All windows of one direction are counted at once: the four cells of
    /// every window are shifted onto its start bit and summed bit-sliced.
    pub fn open_lines(&self, side: Side) -> [u32; 4] {
        let own = self.stones[side.index()];
        let opp = self.stones[side.other().index()];
        let mut counts = [0u32; 4];
        for (&s, &starts) in SHIFTS.iter().zip(&WINDOW_STARTS) {
            let free = starts & !(opp | opp >> s | opp >> (2 * s) | opp >> (3 * s));
            let (a, b, c, d) = (own, own >> s, own >> (2 * s), own >> (3 * s));
            let (s0, c0) = (a ^ b, a & b);
            let (s1, c1) = (c ^ d, c & d);
            // The count a + b + c + d as the bits `four`, `two`, `one`.
            let one = s0 ^ s1;
            let two = c0 ^ c1 ^ (s0 & s1);
            let four = c0 & c1;
            counts[0] += (free & !one & !two & !four).count_ones();
            counts[1] += (free & one & !two).count_ones();
            counts[2] += (free & !one & two).count_ones();
            counts[3] += (free & one & two).count_ones();
        }
        counts
    }

    /// The name of the cell of column `col` at height `h` (0 = bottom) in
    /// error messages: `d1` is the bottom of column `d`.
    fn cell_name(col: usize, h: usize) -> String {
        format!("{}{}", FILES[col] as char, h + 1)
    }
}

impl Game for ConnectFour {
    type Move = ConnectFourMove;
    const NAME: &'static str = "connect-four";
    /// The number of columns (the board has [`ROWS`] rows).
    const DEFAULT_SIZE: usize = COLUMNS;

    fn new() -> Self {
        ConnectFour::default()
    }

    fn side_to_move(&self) -> Side {
        Side::after_plies(self.ply())
    }

    fn ply(&self) -> u32 {
        self.occupied().count_ones()
    }

    fn legal_moves(&self, out: &mut Vec<ConnectFourMove>) {
        out.clear();
        if self.outcome().is_some() {
            return;
        }
        let open = self.open_columns();
        out.extend(
            (0..COLUMNS as u8)
                .filter(|&c| open >> c & 1 == 1)
                .map(ConnectFourMove),
        );
    }

    /// Uniform over the open columns (the legal moves) without building the
    /// list: the `k`-th open column for a uniform `k`, the same pick as the
    /// default from the same generator.
    fn random_move(
        &self,
        rng: &mut SeededRng,
        _scratch: &mut Vec<ConnectFourMove>,
    ) -> Option<ConnectFourMove> {
        // Over (as `outcome` says): a four for either side or a full board.
        let mut open = self.open_columns();
        if open == 0 || has_four(self.stones[0]) || has_four(self.stones[1]) {
            return None;
        }
        let k = rng.random_range(0..open.count_ones() as usize);
        for _ in 0..k {
            open &= open - 1;
        }
        Some(ConnectFourMove(open.trailing_zeros() as u8))
    }

    fn play(&mut self, mv: ConnectFourMove) {
        let col = mv.0 as usize;
        debug_assert!(col < COLUMNS, "column {col} is off the board");
        debug_assert!(self.outcome().is_none(), "the game is over");
        let cell = self.drop_cells() & COLUMN << (col * STRIDE as usize);
        debug_assert!(cell != 0, "column {col} is full");
        let side = self.side_to_move().index();
        self.stones[side] |= cell;
    }

    fn outcome(&self) -> Option<Outcome> {
        if has_four(self.stones[0]) {
            Some(Outcome::Win(Side::First))
        } else if has_four(self.stones[1]) {
            Some(Outcome::Win(Side::Second))
        } else if self.occupied() == BOARD {
            Some(Outcome::Draw)
        } else {
            None
        }
    }

    /// `x + occupied + BOTTOM` is one-to-one on positions (in each column
    /// the height becomes a marker bit above the `x` stones), then a
    /// bijective mix spreads it over all 64 bits: distinct positions never
    /// share a key.
    fn hash_key(&self) -> u64 {
        let mut z = self.stones[0] + self.occupied() + BOTTOM;
        z = (z ^ z >> 30).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ z >> 27).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ z >> 31
    }

    /// The cell the stone lands on; `None` for a full column.
    fn policy_index(&self, mv: ConnectFourMove) -> Option<usize> {
        let col = mv.0 as usize;
        if col >= COLUMNS {
            return None;
        }
        let h = self.height(col);
        (h < ROWS).then(|| (ROWS - 1 - h) * COLUMNS + col)
    }

    fn move_to_string(&self, mv: ConnectFourMove) -> String {
        ((b'a' + mv.0) as char).to_string()
    }

    fn parse_move(&self, text: &str) -> Result<ConnectFourMove, GameError> {
        let bad = |why: String| GameError::BadMove {
            token: text.to_string(),
            why,
        };
        let t = text.trim();
        let mut chars = t.chars();
        let (Some(ch), None) = (chars.next(), chars.next()) else {
            return Err(bad("expected one column letter a..g".into()));
        };
        let ch = ch.to_ascii_lowercase();
        let col = FILES
            .iter()
            .position(|&f| f as char == ch)
            .ok_or_else(|| bad(format!("column '{ch}' is not one of a..g")))?;
        if self.outcome().is_some() {
            return Err(bad("the game is already over".into()));
        }
        if self.height(col) == ROWS {
            return Err(bad(format!("column '{ch}' is full")));
        }
        Ok(ConnectFourMove(col as u8))
    }

    fn to_text(&self) -> String {
        let mut s = String::with_capacity(ROWS * (COLUMNS + 1));
        for row in 0..ROWS {
            if row > 0 {
                s.push('/');
            }
            for col in 0..COLUMNS {
                s.push(match self.cell(row * COLUMNS + col) {
                    Some(Side::First) => 'x',
                    Some(Side::Second) => 'o',
                    None => '.',
                });
            }
        }
        s
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let bad = |why: String| GameError::BadPosition {
            text: text.to_string(),
            why,
        };
        let rows: Vec<&str> = text.trim().split('/').collect();
        if rows.len() != ROWS || rows.iter().any(|r| r.chars().count() != COLUMNS) {
            return Err(bad(format!(
                "expected {ROWS} rows of {COLUMNS} cells joined by '/'"
            )));
        }
        let mut g = ConnectFour::default();
        for (row, cells) in rows.iter().enumerate() {
            for (col, ch) in cells.chars().enumerate() {
                let b = bit(col, ROWS - 1 - row);
                match ch {
                    'x' | 'X' => g.stones[0] |= b,
                    'o' | 'O' => g.stones[1] |= b,
                    '.' => {}
                    _ => return Err(bad(format!("cell '{ch}' is not x, o or '.'"))),
                }
            }
        }
        for col in 0..COLUMNS {
            let column = g.occupied() >> (col * STRIDE as usize) & COLUMN;
            // Stacked from the bottom: the bits are 0..height.
            if column & (column + 1) != 0 {
                let h = (!column & COLUMN).trailing_zeros() as usize;
                let above = (column >> h).trailing_zeros() as usize + h;
                let who = if g.stones[0] & bit(col, above) != 0 {
                    'x'
                } else {
                    'o'
                };
                return Err(bad(format!(
                    "the {who} on {} floats above the empty {}",
                    Self::cell_name(col, above),
                    Self::cell_name(col, h)
                )));
            }
        }
        let (nx, no) = (g.stones[0].count_ones(), g.stones[1].count_ones());
        if nx != no && nx != no + 1 {
            return Err(bad(format!(
                "x moves first, so x has as many stones as o or one more (found {nx} x, {no} o)"
            )));
        }
        let fours = [has_four(g.stones[0]), has_four(g.stones[1])];
        if fours[0] && fours[1] {
            return Err(bad("both sides have four in a row".into()));
        }
        for (i, (who, other)) in [('x', 'o'), ('o', 'x')].into_iter().enumerate() {
            if !fours[i] {
                continue;
            }
            let last_mover = if nx > no { 0 } else { 1 };
            if i != last_mover {
                return Err(bad(format!(
                    "{who} has four in a row, yet {other} has moved since"
                )));
            }
            // The game stopped at the first four: one stone on top of its
            // column, the last one dropped, is in every four of the winner.
            let tops = (g.occupied() + BOTTOM) >> 1 & g.occupied() & g.stones[i];
            let mut candidates = tops;
            let mut made_by_last = false;
            while candidates != 0 {
                let b = candidates & candidates.wrapping_neg();
                made_by_last |= !has_four(g.stones[i] & !b);
                candidates &= candidates - 1;
            }
            if !made_by_last {
                return Err(bad(format!(
                    "no single stone on top of a column is in all of {who}'s fours, \
                     yet play stops at the first four"
                )));
            }
        }
        Ok(g)
    }

    fn render(&self) -> String {
        let mut s = String::with_capacity((ROWS + 1) * (2 * COLUMNS + 1));
        for row in 0..ROWS {
            for col in 0..COLUMNS {
                s.push(match self.cell(row * COLUMNS + col) {
                    Some(Side::First) => 'x',
                    Some(Side::Second) => 'o',
                    None => '.',
                });
                s.push(if col + 1 < COLUMNS { ' ' } else { '\n' });
            }
        }
        for (col, &f) in FILES.iter().enumerate() {
            s.push(f as char);
            s.push(if col + 1 < COLUMNS { ' ' } else { '\n' });
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::test_support::{assert_refused, legal};

    fn played(moves: &str) -> ConnectFour {
        let mut g = ConnectFour::new();
        for m in moves.chars() {
            g.play_str(&m.to_string())
                .unwrap_or_else(|e| panic!("{moves}: {e}"));
        }
        g
    }

    #[test]
    fn wins_in_all_four_directions() {
        // Vertical on a; horizontal a..d; `/` from a1 to d4; `\` for o from
        // d1 up to a4.
        for (moves, winner) in [
            ("abababa", Side::First),
            ("aabbccd", Side::First),
            ("abbccdcddgd", Side::First),
            ("gdccbbabbaaa", Side::Second),
        ] {
            let g = played(moves);
            assert_eq!(g.outcome(), Some(Outcome::Win(winner)), "{moves}");
            assert!(legal(&g).is_empty(), "{moves}");
            assert!(g.parse_move("a").is_err());
            let before = played(&moves[..moves.len() - 1]);
            assert!(before.outcome().is_none(), "{moves}");
            let last = moves.as_bytes()[moves.len() - 1] - b'a';
            let point = before.policy_index(ConnectFourMove(last)).unwrap();
            assert_eq!(before.immediate_wins(winner) >> point & 1, 1, "{moves}");
        }
    }

    #[test]
    fn full_board_without_four_is_a_draw() {
        // A drawn game from the OpenSpiel fixture.
        let moves = "aecfbdcagadgcbbdggbcdggcebafdcbaffadefeefe";
        let g = played(&moves[..41]);
        assert!(g.outcome().is_none());
        assert_eq!(legal(&g), [ConnectFourMove(4)]);
        let g = played(moves);
        assert_eq!(g.outcome(), Some(Outcome::Draw));
        assert_eq!(g.ply(), 42);
        assert!(legal(&g).is_empty());
        let back = ConnectFour::from_text(&g.to_text()).unwrap();
        assert_eq!(back.outcome(), Some(Outcome::Draw));
    }

    #[test]
    fn notation_round_trip() {
        let g = played("ddd");
        for c in 0..7 {
            let mv = ConnectFourMove(c);
            let s = g.move_to_string(mv);
            assert_eq!(s, ((b'a' + c) as char).to_string());
            assert_eq!(g.parse_move(&s).unwrap(), mv);
        }
        assert_eq!(g.parse_move(" D ").unwrap(), ConnectFourMove(3));
        // Stones land from the bottom: the fourth in d goes on row 2.
        assert_eq!(g.policy_index(ConnectFourMove(3)), Some(2 * 7 + 3));
        assert_eq!(g.policy_index(ConnectFourMove(0)), Some(5 * 7));
        assert_eq!(played("dddddd").policy_index(ConnectFourMove(3)), None);
    }

    #[test]
    fn bad_moves_name_the_token() {
        let g = played("dddddd");
        assert_refused(
            &g,
            &[
                ("h", "not one of a..g"),
                ("1", "not one of a..g"),
                ("", "one column letter"),
                ("ab", "one column letter"),
                ("d", "full"),
            ],
        );
        assert_refused(&played("abababa"), &[("c", "over")]);
    }

    #[test]
    fn text_is_openspiels_board() {
        let g = played("eff");
        let t = g.to_text();
        assert_eq!(t, "......./......./......./......./.....x./....xo.");
        let back = ConnectFour::from_text(&t).unwrap();
        assert_eq!(back, g);
        assert_eq!(back.side_to_move(), Side::Second);
        assert_eq!(back.ply(), 3);
        assert_eq!(back.cell(5 * 7 + 4), Some(Side::First));
        assert_eq!(back.cell(4 * 7 + 5), Some(Side::First));
        assert_eq!(back.cell(5 * 7 + 5), Some(Side::Second));
        assert_eq!(back.cell(0), None);
        assert_eq!(back.cell(42), None);
        assert_eq!(back.stones(Side::Second), 1 << (5 * 7 + 5));
        assert_eq!(back.height(5), 2);
        assert_eq!(
            ConnectFour::new().to_text(),
            "......./".repeat(5) + "......."
        );
        assert_eq!(
            g.render(),
            ". . . . . . .\n".repeat(4) + ". . . . . x .\n. . . . x o .\na b c d e f g\n"
        );
    }

    #[test]
    fn from_text_refuses_impossible_boards() {
        let e = |text: &str| ConnectFour::from_text(text).unwrap_err().to_string();
        let floating = e("......./......./......./......./...x.../..o....");
        assert!(
            floating.contains("x on d2 floats above the empty d1"),
            "{floating}"
        );
        let gap = e("......./......./......./...x.../......./...o...");
        assert!(gap.contains("x on d3 floats above the empty d2"), "{gap}");
        let counts = e("......./......./......./......./......./xx.....");
        assert!(counts.contains("found 2 x, 0 o"), "{counts}");
        let counts = e("......./......./......./......./......./o......");
        assert!(counts.contains("found 0 x, 1 o"), "{counts}");
        assert!(e("......./......./......./......./.......").contains("6 rows"));
        assert!(e("......./......./......./......./......./........").contains("7 cells"));
        assert!(e("......./......./......./......./......./b......").contains("'b'"));
        let both = e("......./......./......./......./xxxx.../oooo...");
        assert!(both.contains("both sides"), "{both}");
        // o moved after x's four.
        let after = e("......./......./......./......./ooo..../xxxxo..");
        assert!(after.contains("o has moved since"), "{after}");
        // Two separate fours for x: no one last stone made both.
        let two = e("......./......./x...x../x...x../xo..xo./xoooxoo");
        assert!(two.contains("first four"), "{two}");
        // x's four is buried under an o: its last stone is not on top.
        let buried = e("......./o....../x....../x....../x....../xoo....");
        assert!(buried.contains("first four"), "{buried}");
        // Capitals are read too.
        let g = ConnectFour::from_text("......./......./......./......./......./X.O....").unwrap();
        assert_eq!(
            g.to_text(),
            "......./......./......./......./......./x.o...."
        );
    }

    /// The cells of every window of four, cell layout.
    fn windows() -> Vec<[usize; 4]> {
        let mut out = Vec::new();
        for r in 0..ROWS as isize {
            for c in 0..COLUMNS as isize {
                for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
                    let cells: Vec<_> = (0..4).map(|k| (r + k * dr, c + k * dc)).collect();
                    if cells.iter().all(|&(rr, cc)| {
                        (0..ROWS as isize).contains(&rr) && (0..COLUMNS as isize).contains(&cc)
                    }) {
                        let w: Vec<usize> = cells
                            .iter()
                            .map(|&(rr, cc)| (rr * 7 + cc) as usize)
                            .collect();
                        out.push(w.try_into().unwrap());
                    }
                }
            }
        }
        out
    }

    /// Random positions from random games (some finished).
    fn positions() -> Vec<ConnectFour> {
        let mut rng = crate::util::seeded_rng(7, 0);
        let mut scratch = Vec::new();
        let mut out = Vec::new();
        for _ in 0..300 {
            let mut g = ConnectFour::new();
            out.push(g);
            while let Some(mv) = g.random_move(&mut rng, &mut scratch) {
                g.play(mv);
                out.push(g);
            }
        }
        out
    }

    #[test]
    fn open_lines_count_every_window() {
        let windows = windows();
        assert_eq!(windows.len(), 69);
        assert_eq!(ConnectFour::new().open_lines(Side::First), [69, 0, 0, 0]);
        let g = played("d");
        // The bottom-centre cell is in 7 windows: 4 horizontal, 1 vertical,
        // 1 of each diagonal.
        assert_eq!(g.open_lines(Side::First), [62, 7, 0, 0]);
        assert_eq!(g.open_lines(Side::Second), [62, 0, 0, 0]);
        for g in positions() {
            for side in [Side::First, Side::Second] {
                let mut want = [0u32; 4];
                for w in &windows {
                    let owners: Vec<_> = w.iter().map(|&i| g.cell(i)).collect();
                    let own = owners.iter().filter(|&&o| o == Some(side)).count();
                    if own < 4 && !owners.contains(&Some(side.other())) {
                        want[own] += 1;
                    }
                }
                assert_eq!(g.open_lines(side), want, "{}", g.to_text());
            }
        }
    }

    #[test]
    fn threats_and_immediate_wins_match_trial_drops() {
        let windows = windows();
        for g in positions() {
            for side in [Side::First, Side::Second] {
                let mut threats = 0u64;
                for i in 0..CELLS {
                    let completes = windows.iter().any(|w| {
                        w.contains(&i) && w.iter().all(|&j| j == i || g.cell(j) == Some(side))
                    });
                    if g.cell(i).is_none() && completes {
                        threats |= 1 << i;
                    }
                }
                assert_eq!(g.threats(side), threats, "{}", g.to_text());
                let mut wins = 0u64;
                if g.outcome().is_none() {
                    for mv in legal(&g) {
                        let mut t = g;
                        let cell = g.policy_index(mv).unwrap();
                        t.stones[side.index()] |= bit(mv.0 as usize, ROWS - 1 - cell / 7);
                        if t.outcome() == Some(Outcome::Win(side)) {
                            wins |= 1 << cell;
                        }
                    }
                }
                assert_eq!(g.immediate_wins(side), wins, "{}", g.to_text());
            }
        }
    }

    #[test]
    fn random_move_picks_as_the_default_does() {
        let mut a = crate::util::seeded_rng(3, 1);
        let mut b = crate::util::seeded_rng(3, 1);
        let mut scratch = Vec::new();
        for _ in 0..200 {
            let mut g = ConnectFour::new();
            loop {
                let fast = g.random_move(&mut a, &mut scratch);
                let slow = legal(&g);
                let slow = (!slow.is_empty()).then(|| slow[b.random_range(0..slow.len())]);
                assert_eq!(fast, slow, "{}", g.to_text());
                match fast {
                    Some(mv) => g.play(mv),
                    None => break,
                }
            }
        }
    }

    #[test]
    fn only_the_standard_size() {
        assert!(ConnectFour::with_size(7).is_ok());
        assert!(ConnectFour::with_size(6).is_err());
        assert_eq!(ConnectFour::new().size(), 7);
    }
}
