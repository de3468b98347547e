//! Square boards: cells numbered `row * n + col` with row 0 at the top,
//! squares named `a1`-style (file letter, rank 1 = the bottom row), the text
//! form (rows top first joined by `/`), and the drawing for people (rank
//! numbers on the left, file letters underneath). The stone games (Gomoku,
//! Atari-Go) share their cell codes and text reading here too.

use std::ops::RangeInclusive;

use super::{GameError, Side};

/// Refuses a board side outside `sizes`.
pub fn check_size(
    game: &'static str,
    n: usize,
    sizes: RangeInclusive<usize>,
) -> Result<(), GameError> {
    if sizes.contains(&n) {
        return Ok(());
    }
    Err(GameError::BadSize {
        game,
        size: n,
        allowed: format!("{}..={}", sizes.start(), sizes.end()),
    })
}

/// The name of cell `row * n + col`: `files[col]` and rank `n - row`.
pub fn square_name(files: &[u8], n: usize, cell: usize) -> String {
    format!("{}{}", files[cell % n] as char, n - cell / n)
}

/// Parses an `a1`-style square (file letters `files`, rank 1 = bottom row)
/// on an `n` x `n` board into `(row, col)`.
pub(crate) fn parse_square(
    text: &str,
    n: usize,
    files: &[u8],
) -> Result<(usize, usize), GameError> {
    let bad = |why: String| GameError::BadMove {
        token: text.to_string(),
        why,
    };
    let t = text.trim();
    let mut chars = t.chars();
    let Some(f) = chars.next() else {
        return Err(bad("expected a square such as a1".into()));
    };
    let f = f.to_ascii_lowercase();
    let col = files[..n]
        .iter()
        .position(|&c| c as char == f)
        .ok_or_else(|| {
            bad(format!(
                "file '{f}' is not one of {}..{}",
                files[0] as char,
                files[n - 1] as char
            ))
        })?;
    let rank_text = chars.as_str();
    let rank: usize = rank_text
        .parse()
        .map_err(|_| bad(format!("rank '{rank_text}' is not a number 1..{n}")))?;
    if !(1..=n).contains(&rank) {
        return Err(bad(format!("rank {rank} is off the board (1..{n})")));
    }
    Ok((n - rank, col))
}

/// The text form of an `n` x `n` board: `glyph(cell)` for each cell, rows
/// top first joined by `/`.
pub fn grid_text(n: usize, glyph: impl Fn(usize) -> char) -> String {
    let mut s = String::with_capacity(n * (n + 1));
    for row in 0..n {
        if row > 0 {
            s.push('/');
        }
        for col in 0..n {
            s.push(glyph(row * n + col));
        }
    }
    s
}

/// Largest side of a [`StoneBoard`].
pub const STONE_MAX_SIZE: usize = 19;
const STONE_MAX_CELLS: usize = STONE_MAX_SIZE * STONE_MAX_SIZE;

/// An `n` x `n` board (5..=19) of stone cell codes (0 empty, 1 Black, 2
/// White), cells numbered `row * n + col`: the board Gomoku and Atari-Go
/// share. Squares are named with the caller's file letters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StoneBoard {
    n: u8,
    pub cells: [u8; STONE_MAX_CELLS],
}

impl StoneBoard {
    /// An empty `n` x `n` board for `game`.
    pub fn empty(game: &'static str, n: usize) -> Result<Self, GameError> {
        check_size(game, n, 5..=STONE_MAX_SIZE)?;
        Ok(StoneBoard {
            n: n as u8,
            cells: [0; STONE_MAX_CELLS],
        })
    }

    /// The board side.
    #[inline]
    pub fn n(&self) -> usize {
        self.n as usize
    }

    /// Number of cells (`n * n`).
    #[inline]
    pub fn cell_count(&self) -> usize {
        self.n() * self.n()
    }

    /// Who holds cell `i`, if anyone.
    pub fn owner(&self, i: usize) -> Option<Side> {
        stone_owner(self.cells[i])
    }

    /// The square name of `cell` with file letters `files`.
    pub fn square_name(&self, files: &[u8], cell: usize) -> String {
        square_name(files, self.n(), cell)
    }

    /// The empty point a move names: the square (file letters `files`),
    /// refused when the game is `over` or the point is taken.
    pub fn free_point(&self, text: &str, files: &[u8], over: bool) -> Result<usize, GameError> {
        let (row, col) = parse_square(text, self.n(), files)?;
        let bad = |why: &str| GameError::BadMove {
            token: text.to_string(),
            why: why.to_string(),
        };
        if over {
            return Err(bad("the game is already over"));
        }
        let cell = row * self.n() + col;
        if self.cells[cell] != 0 {
            return Err(bad("that point is taken"));
        }
        Ok(cell)
    }

    /// The text form (see [`grid_text`]) with `glyphs` for the codes 0, 1
    /// and 2.
    pub fn text(&self, glyphs: [char; 3]) -> String {
        grid_text(self.n(), |i| glyphs[self.cells[i] as usize])
    }

    /// The drawing for people (see [`render_grid`]).
    pub fn render(&self, files: &[u8]) -> String {
        render_grid(self.n(), files, |i| stone_glyph(self.cells[i]))
    }
}

/// The longest line (row, column or diagonal) through `cell` on an `n x n`
/// board of cells `owned` says are one side's, counting `cell` itself
/// whatever it holds: the step-by-step scan, for boards outside a game's
/// fast line tables.
pub fn longest_line_through(n: usize, cell: usize, owned: impl Fn(usize) -> bool) -> usize {
    let n = n as i64;
    let (r, c) = (cell as i64 / n, cell as i64 % n);
    [(0, 1), (1, 0), (1, 1), (1, -1)]
        .iter()
        .map(|&(dr, dc)| {
            let mut len = 1;
            for s in [1, -1] {
                let (mut rr, mut cc) = (r + s * dr, c + s * dc);
                while (0..n).contains(&rr) && (0..n).contains(&cc) && owned((rr * n + cc) as usize)
                {
                    len += 1;
                    rr += s * dr;
                    cc += s * dc;
                }
            }
            len
        })
        .max()
        .unwrap_or(1)
}

/// Who holds cell `i` of a board kept as one bitmask per side.
pub fn bit_owner(masks: [u64; 2], i: usize) -> Option<Side> {
    if masks[0] >> i & 1 == 1 {
        Some(Side::First)
    } else if masks[1] >> i & 1 == 1 {
        Some(Side::Second)
    } else {
        None
    }
}

/// Who holds a stone cell: code 0 empty, 1 Black (first), 2 White.
pub fn stone_owner(code: u8) -> Option<Side> {
    match code {
        1 => Some(Side::First),
        2 => Some(Side::Second),
        _ => None,
    }
}

/// The drawing glyph of a stone cell code: `X` Black, `O` White, `.` empty.
pub fn stone_glyph(code: u8) -> char {
    match code {
        1 => 'X',
        2 => 'O',
        _ => '.',
    }
}

/// The characters of a stone position's text form.
pub struct StoneChars {
    pub black: [char; 2],
    pub white: [char; 2],
    pub empty: &'static [char],
    /// The list for the error message, e.g. `X, O or '.'`.
    pub expected: &'static str,
}

/// Reads a stone position's text form (see [`grid_text`]): `new(n)` makes
/// the empty board for its `n` rows, `place(board, cell, code)` puts each
/// stone (code 1 Black, 2 White). Black moves first, so Black must have as
/// many stones as White or one more. Returns the board and the numbers of
/// Black and White stones.
pub fn read_stones<B>(
    text: &str,
    new: impl FnOnce(usize) -> Result<B, GameError>,
    chars: &StoneChars,
    mut place: impl FnMut(&mut B, usize, u8),
) -> Result<(B, u16, u16), GameError> {
    let bad = |why: String| GameError::BadPosition {
        text: text.to_string(),
        why,
    };
    let rows: Vec<&str> = text.trim().split('/').collect();
    let n = rows.len();
    let mut board = new(n).map_err(|e| bad(format!("{n} rows: {e}")))?;
    let mut counts = [0u16; 2];
    for (r, row) in rows.iter().enumerate() {
        if row.chars().count() != n {
            return Err(bad(format!("row {} does not have {n} cells", r + 1)));
        }
        for (c, ch) in row.chars().enumerate() {
            let code = if chars.black.contains(&ch) {
                1
            } else if chars.white.contains(&ch) {
                2
            } else if chars.empty.contains(&ch) {
                continue;
            } else {
                return Err(bad(format!("cell '{ch}' is not {}", chars.expected)));
            };
            counts[code as usize - 1] += 1;
            place(&mut board, r * n + c, code);
        }
    }
    let [nb, nw] = counts;
    if nb != nw && nb != nw + 1 {
        return Err(bad(
            "Black moves first, so Black has as many stones as White or one more".into(),
        ));
    }
    Ok((board, nb, nw))
}

/// The board `n` x `n` with `glyph(cell)` for cell `row * n + col` (row 0 at
/// the top) and `files[col]` under each column.
pub fn render_grid(n: usize, files: &[u8], glyph: impl Fn(usize) -> char) -> String {
    let mut s = String::with_capacity((n + 1) * (2 * n + 4));
    for row in 0..n {
        s.push_str(&format!("{:>2} ", n - row));
        for col in 0..n {
            s.push(glyph(row * n + col));
            s.push(' ');
        }
        s.push('\n');
    }
    s.push_str("   ");
    for &f in &files[..n] {
        s.push(f as char);
        s.push(' ');
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_squares_round_trip() {
        let chars = StoneChars {
            black: ['X', 'x'],
            white: ['O', 'o'],
            empty: &['.'],
            expected: "X, O or '.'",
        };
        let read = |text| read_stones(text, |n| Ok(vec![0u8; n * n]), &chars, |b, i, c| b[i] = c);
        let (cells, nb, nw) = read("X../.o./...").unwrap();
        assert_eq!((nb, nw), (1, 1));
        assert_eq!(grid_text(3, |i| stone_glyph(cells[i])), "X../.O./...");
        assert_eq!(stone_owner(cells[4]), Some(Side::Second));
        for (text, why) in [
            ("X../.../..", "row 3"),
            ("X.#/.../...", "cell '#'"),
            ("XX./.../...", "Black moves first"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
        assert_eq!(square_name(b"abc", 3, 6), "a1");
        assert_eq!(parse_square("a1", 3, b"abc").unwrap(), (2, 0));
        assert!(check_size("g", 4, 5..=19).is_err());
    }

    #[test]
    fn ranks_count_down_and_files_run_across() {
        let s = super::render_grid(2, b"ab", |i| if i == 2 { 'X' } else { '.' });
        assert_eq!(s, " 2 . . \n 1 X . \n   a b \n");
    }
}
