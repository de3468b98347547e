//! The Game of the Amazons on 6x6, 8x8 and 10x10 boards, with OpenSpiel's
//! rules and start positions.
//!
//! * Cells are numbered `row * n + col` with row 0 the top row (OpenSpiel's
//!   action ids). A square is named `chr('a' + col)` + `(n - row)`, so `a1`
//!   is the bottom-left corner.
//! * A move is one amazon's queen move followed by a queen-move arrow shot
//!   from its destination (the vacated square may be shot at): `d1-d7/g7`.
//! * White (`X`, [`Side::First`]) moves first. The player to move who has no
//!   legal move loses; there are no draws.
//! * Start squares (OpenSpiel's): 10x10 White a4 d1 g1 j4, Black a7 d10 g10
//!   j7; 8x8 White a3 c1 f1 h3, Black a6 c8 f8 h6; 6x6 White a2 b1 e1 f2,
//!   Black a5 b6 e6 f5.
//! * Text form ([`Game::to_text`]): the rows top first joined by `/`, with
//!   `.` empty, `X` White, `O` Black and `#` an arrow, exactly OpenSpiel's
//!   state string. Every move shoots one arrow, so the side to move is
//!   implied: White moves when the number of arrows is even, Black when it
//!   is odd, and the ply equals the number of arrows.
//!
//! Internally the board is a set of `u128` bitboards over a padded layout
//! of width `n + 1` (the extra column is a guard that stops row wrap-around),
//! so rays are walked by shifts.
//!
//! ```
//! use plies::game::{Amazons, Game};
//! let g = Amazons::new();
//! let mut moves = Vec::new();
//! g.legal_moves(&mut moves);
//! assert_eq!(moves.len(), 2176);
//! let mv = g.parse_move("d1-d7/g7").unwrap();
//! assert_eq!(g.move_to_string(mv), "d1-d7/g7");
//! ```

use super::{Game, GameError, Outcome, Side};

/// Board sizes this engine plays.
pub const AMAZONS_SIZES: [usize; 3] = [6, 8, 10];

/// An Amazons move: the amazon's square, its destination and the arrow's
/// square, as cell ids `row * n + col` (row 0 at the top).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AmazonsMove {
    pub from: u8,
    pub to: u8,
    pub arrow: u8,
}

/// What stands on a square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cell {
    Empty,
    Amazon(Side),
    Arrow,
}

/// How pieces travel when measuring distances: a queen (any distance along
/// the 8 lines through empty squares) or a king (one step to a neighbour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reach {
    Queen,
    King,
}

/// Distance marking a square a side cannot reach.
pub const UNREACHABLE: u8 = u8::MAX;

/// Why text is not a square of the board (`n` columns and rows).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum SquareError {
    #[error("'{text}' is not a square like d1")]
    Shape { text: String },
    #[error("'{text}': the file must be a..{}", (b'a' + .n - 1) as char)]
    File { text: String, n: u8 },
    #[error("'{text}': the rank must be 1..{n}")]
    Rank { text: String, n: u8 },
}

/// An Amazons position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Amazons {
    n: u8,
    /// Amazons of White (`[0]`) and Black (`[1]`), padded layout.
    queens: [u128; 2],
    /// Arrows (burnt squares), padded layout.
    arrows: u128,
}

/// The on-board squares of an `n` x `n` board in the padded layout.
const fn valid_mask(n: u32) -> u128 {
    let w = n + 1;
    let mut valid = 0u128;
    let mut r = 0;
    while r < n {
        let mut c = 0;
        while c < n {
            valid |= 1u128 << (r * w + c);
            c += 1;
        }
        r += 1;
    }
    valid
}

/// [`valid_mask`] of the sizes in [`AMAZONS_SIZES`].
const VALID: [u128; 3] = [valid_mask(6), valid_mask(8), valid_mask(10)];

/// `b` moved one step in direction `d` (0..8) on a board of padded width
/// `w`, masked to `valid`; the same directions as [`Geometry::shift`]
/// (even `d` shift up in bit index, odd `d` down).
const fn shift_const(b: u128, d: usize, w: u32, valid: u128) -> u128 {
    let s = match d {
        0 => b << 1,
        1 => b >> 1,
        2 => b << w,
        3 => b >> w,
        4 => b << (w + 1),
        5 => b >> (w + 1),
        6 => b << (w - 1),
        _ => b >> (w - 1),
    };
    s & valid
}

/// Padded squares of the largest board (10 rows of width 11).
const PADDED: usize = 110;

/// `rays[p][d]`: the squares a queen on padded square `p` crosses in
/// direction `d` on an empty `n` x `n` board (`p` itself excluded).
type Rays = [[u128; 8]; PADDED];

const fn rays_for(n: u32) -> Rays {
    let w = n + 1;
    let valid = valid_mask(n);
    let mut rays = [[0u128; 8]; PADDED];
    let mut p = 0;
    while p < PADDED {
        if p < 128 && (valid >> p) & 1 == 1 {
            let mut d = 0;
            while d < 8 {
                let mut acc = 0u128;
                let mut f = shift_const(1u128 << p, d, w, valid);
                while f != 0 {
                    acc |= f;
                    f = shift_const(f, d, w, valid);
                }
                rays[p][d] = acc;
                d += 1;
            }
        }
        p += 1;
    }
    rays
}

/// [`rays_for`] of the sizes in [`AMAZONS_SIZES`].
static RAYS: [Rays; 3] = [rays_for(6), rays_for(8), rays_for(10)];

/// Squares a queen on padded square `p` reaches through `empty`: per
/// direction the ray up to (not including) its first non-empty square.
#[inline(always)]
fn queen_rays(rays: &Rays, p: u32, empty: u128) -> u128 {
    let r = &rays[p as usize];
    let occ = !empty;
    let mut acc = 0u128;
    let mut d = 0;
    while d < 8 {
        // Even directions run up in bit index: stop below the lowest blocker.
        let up = r[d];
        let b = up & occ;
        let low = b & b.wrapping_neg();
        acc |= up & low.wrapping_sub(1);
        // Odd directions run down: stop above the highest blocker.
        let down = r[d + 1];
        let b = down & occ;
        let below = u128::MAX.checked_shr(b.leading_zeros()).unwrap_or(0);
        acc |= down & !below;
        d += 2;
    }
    acc
}

/// Most (amazon, destination) pairs in one position: 4 amazons, each with
/// at most `4 * (n - 1) - 1 = 35` queen destinations on 10x10.
const MAX_PAIRS: usize = 4 * 36;

/// The `k`-th set bit (0-based, from the low end) of `b`; `k < popcount`.
#[inline]
fn nth_bit(b: u128, mut k: u32) -> u32 {
    let lo = b as u64;
    let c = lo.count_ones();
    let (mut x, base) = if k < c {
        (lo, 0)
    } else {
        k -= c;
        ((b >> 64) as u64, 64)
    };
    for _ in 0..k {
        x &= x - 1;
    }
    base + x.trailing_zeros()
}

/// The 8 directions as (shift, left?) pairs resolved per board width.
#[derive(Clone, Copy)]
struct Geometry {
    w: u32,
    valid: u128,
}

impl Geometry {
    #[inline]
    fn new(n: u8) -> Geometry {
        let valid = match n {
            6 => VALID[0],
            8 => VALID[1],
            10 => VALID[2],
            _ => valid_mask(n as u32),
        };
        Geometry {
            w: n as u32 + 1,
            valid,
        }
    }

    /// `b` moved one step in direction `d` (0..8), off-board bits dropped.
    #[inline(always)]
    fn shift(&self, b: u128, d: usize) -> u128 {
        shift_const(b, d, self.w, self.valid)
    }

    /// Squares one king step from any square of `set`.
    #[inline]
    fn king(&self, set: u128) -> u128 {
        (0..8).fold(0, |acc, d| acc | self.shift(set, d))
    }

    /// Squares a queen on any square of `set` reaches through `empty`.
    #[inline]
    fn queen(&self, set: u128, empty: u128) -> u128 {
        let mut acc = 0;
        for d in 0..8 {
            let mut f = self.shift(set, d) & empty;
            while f != 0 {
                acc |= f;
                f = self.shift(f, d) & empty;
            }
        }
        acc
    }
}

#[inline]
fn bits(mut b: u128) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if b == 0 {
            None
        } else {
            let i = b.trailing_zeros();
            b &= b - 1;
            Some(i)
        }
    })
}

impl Amazons {
    fn geo(&self) -> Geometry {
        Geometry::new(self.n)
    }

    fn w(&self) -> u32 {
        self.n as u32 + 1
    }

    /// Padded bit index of cell `row * n + col`.
    #[inline]
    fn pad(&self, cell: u8) -> u32 {
        let n = self.n as u32;
        let c = cell as u32;
        c / n * self.w() + c % n
    }

    /// Cell id of padded bit index `p`.
    #[inline]
    fn unpad(&self, p: u32) -> u8 {
        let w = self.w();
        (p / w * self.n as u32 + p % w) as u8
    }

    fn occupied(&self) -> u128 {
        self.queens[0] | self.queens[1] | self.arrows
    }

    fn empty(&self, geo: &Geometry) -> u128 {
        geo.valid & !self.occupied()
    }

    /// The start position on an `n` x `n` board (6, 8 or 10).
    fn start(n: u8) -> Amazons {
        let mut g = Amazons {
            n,
            queens: [0, 0],
            arrows: 0,
        };
        let k = match n {
            6 => 1,
            8 => 2,
            _ => 3,
        };
        let last = n - 1;
        // Black: the top edge and the left/right edges; White mirrored.
        for (r, c) in [(0, k), (0, last - k), (k, 0), (k, last)] {
            let b = 1u128 << g.pad(r * n + c);
            g.queens[1] |= b;
            let w = 1u128 << g.pad((last - r) * n + c);
            g.queens[0] |= w;
        }
        g
    }

    /// What stands on cell `row * n + col`.
    pub fn cell(&self, cell: usize) -> Cell {
        let b = 1u128 << self.pad(cell as u8);
        if self.queens[0] & b != 0 {
            Cell::Amazon(Side::First)
        } else if self.queens[1] & b != 0 {
            Cell::Amazon(Side::Second)
        } else if self.arrows & b != 0 {
            Cell::Arrow
        } else {
            Cell::Empty
        }
    }

    /// Number of arrows on the board (= the ply).
    pub fn arrow_count(&self) -> u32 {
        self.arrows.count_ones()
    }

    /// Number of empty squares.
    pub fn empty_count(&self) -> u32 {
        self.empty(&self.geo()).count_ones()
    }

    /// The cells of `side`'s amazons, in increasing order.
    pub fn amazon_cells(&self, side: Side) -> Vec<u8> {
        bits(self.queens[side.index()])
            .map(|p| self.unpad(p))
            .collect()
    }

    /// Number of empty squares the amazon on `cell` reaches in one queen
    /// move (0 if there is no amazon there).
    pub fn mobility(&self, cell: u8) -> u32 {
        let b = 1u128 << self.pad(cell);
        if (self.queens[0] | self.queens[1]) & b == 0 {
            return 0;
        }
        let geo = self.geo();
        geo.queen(b, self.empty(&geo)).count_ones()
    }

    /// For every cell, the fewest moves (queen or king moves, through empty
    /// squares only) one of `side`'s amazons needs to reach it;
    /// [`UNREACHABLE`] where none can, and 0 on the amazons themselves.
    /// Indexed by cell id `row * n + col`.
    pub fn distances(&self, side: Side, reach: Reach) -> Vec<u8> {
        let n = self.n as usize;
        let mut out = vec![UNREACHABLE; n * n];
        for (d, level) in self.distance_levels(side, reach).iter().enumerate() {
            for p in bits(*level) {
                out[self.unpad(p) as usize] = d as u8;
            }
        }
        out
    }

    /// `levels[d]` = the squares first reached at distance `d` (level 0 is
    /// the amazons themselves), padded layout.
    fn distance_levels(&self, side: Side, reach: Reach) -> Vec<u128> {
        let geo = self.geo();
        let empty = self.empty(&geo);
        let start = self.queens[side.index()];
        let mut levels = vec![start];
        let mut seen = start;
        let mut frontier = start;
        loop {
            let next = match reach {
                Reach::Queen => geo.queen(frontier, empty),
                Reach::King => geo.king(frontier) & empty,
            } & !seen;
            if next == 0 {
                break;
            }
            seen |= next;
            levels.push(next);
            frontier = next;
        }
        levels
    }

    /// Whether `side` has at least one legal move: some amazon has an empty
    /// neighbour (it can step there and shoot back).
    pub fn can_move(&self, side: Side) -> bool {
        let geo = self.geo();
        geo.king(self.queens[side.index()]) & self.empty(&geo) != 0
    }

    /// The name of cell `row * n + col`, e.g. `d1`.
    pub fn square_name(&self, cell: u8) -> String {
        let n = self.n;
        format!("{}{}", (b'a' + cell % n) as char, n - cell / n)
    }

    /// The character of cell `cell` in the text form and the drawing.
    fn glyph(&self, cell: usize) -> char {
        match self.cell(cell) {
            Cell::Empty => '.',
            Cell::Amazon(Side::First) => 'X',
            Cell::Amazon(Side::Second) => 'O',
            Cell::Arrow => '#',
        }
    }

    /// Parses a square name on this board into a cell id.
    fn parse_square(&self, s: &str) -> Result<u8, SquareError> {
        let b = s.as_bytes();
        let text = || s.to_string();
        if b.len() < 2 || b.len() > 3 {
            return Err(SquareError::Shape { text: text() });
        }
        let n = self.n;
        let col = b[0].to_ascii_lowercase().wrapping_sub(b'a');
        if col >= n {
            return Err(SquareError::File { text: text(), n });
        }
        let rank: u8 = match s[1..].parse() {
            Ok(r) if (1..=n).contains(&r) => r,
            _ => return Err(SquareError::Rank { text: text(), n }),
        };
        Ok((n - rank) * n + col)
    }

    /// The ray table of this board size.
    #[inline]
    fn rays(&self) -> &'static Rays {
        match self.n {
            6 => &RAYS[0],
            8 => &RAYS[1],
            _ => &RAYS[2],
        }
    }

    /// Squares reachable by a queen from padded bit `p` through `empty`.
    #[inline]
    fn queen_from(&self, p: u32, empty: u128) -> u128 {
        queen_rays(self.rays(), p, empty)
    }
}

impl Game for Amazons {
    type Move = AmazonsMove;
    const NAME: &'static str = "amazons";
    const DEFAULT_SIZE: usize = 10;

    fn new() -> Self {
        Amazons::start(10)
    }

    fn with_size(size: usize) -> Result<Self, GameError> {
        if AMAZONS_SIZES.contains(&size) {
            Ok(Amazons::start(size as u8))
        } else {
            Err(GameError::BadSize {
                game: Self::NAME,
                size,
                allowed: "6, 8, 10".into(),
            })
        }
    }

    fn size(&self) -> usize {
        self.n as usize
    }

    fn side_to_move(&self) -> Side {
        // Each move shoots one arrow.
        Side::after_plies(self.arrows.count_ones())
    }

    fn ply(&self) -> u32 {
        self.arrows.count_ones()
    }

    fn legal_moves(&self, out: &mut Vec<AmazonsMove>) {
        out.clear();
        let geo = self.geo();
        let me = self.side_to_move().index();
        let empty = self.empty(&geo);
        for from in bits(self.queens[me]) {
            let empty_wo = empty | 1u128 << from;
            let dests = self.queen_from(from, empty);
            let f = self.unpad(from);
            for to in bits(dests) {
                let empty2 = empty_wo & !(1u128 << to);
                let t = self.unpad(to);
                for a in bits(self.queen_from(to, empty2)) {
                    out.push(AmazonsMove {
                        from: f,
                        to: t,
                        arrow: self.unpad(a),
                    });
                }
            }
        }
    }

    /// Exactly uniform over [`Game::legal_moves`] without listing them:
    /// counts the arrows of every (amazon, destination) pair (the queen
    /// reach from the destination with the amazon's square vacated), draws
    /// one index below the total and walks the pairs in the same order to
    /// the chosen arrow. Every pair has at least one arrow (back towards the
    /// vacated square), so the total is 0 exactly when no amazon can move.
    fn random_move(
        &self,
        rng: &mut crate::util::SeededRng,
        _scratch: &mut Vec<AmazonsMove>,
    ) -> Option<AmazonsMove> {
        use rand::RngExt;
        let geo = self.geo();
        let me = self.side_to_move().index();
        let empty = self.empty(&geo);
        let mut to = [0u8; MAX_PAIRS];
        let mut from = [0u8; MAX_PAIRS];
        let mut cum = [0u32; MAX_PAIRS];
        let mut len = 0usize;
        let mut total = 0u32;
        for f in bits(self.queens[me]) {
            let empty_wo = empty | 1u128 << f;
            for t in bits(self.queen_from(f, empty)) {
                total += self.queen_from(t, empty_wo).count_ones();
                to[len] = t as u8;
                from[len] = f as u8;
                cum[len] = total;
                len += 1;
            }
        }
        if total == 0 {
            return None;
        }
        let k = rng.random_range(0..total);
        // First pair whose cumulative count exceeds k.
        let i = cum[..len].partition_point(|&c| c <= k);
        let before = if i == 0 { 0 } else { cum[i - 1] };
        let (f, t) = (from[i] as u32, to[i] as u32);
        let arrows = self.queen_from(t, empty | 1u128 << f);
        let a = nth_bit(arrows, k - before);
        Some(AmazonsMove {
            from: self.unpad(f),
            to: self.unpad(t),
            arrow: self.unpad(a),
        })
    }

    fn play(&mut self, mv: AmazonsMove) {
        let me = self.side_to_move().index();
        let (f, t, a) = (self.pad(mv.from), self.pad(mv.to), self.pad(mv.arrow));
        debug_assert!(self.queens[me] >> f & 1 == 1, "no amazon to move");
        self.queens[me] &= !(1u128 << f);
        self.queens[me] |= 1u128 << t;
        debug_assert!(self.occupied() >> a & 1 == 0, "arrow square taken");
        self.arrows |= 1u128 << a;
    }

    fn outcome(&self) -> Option<Outcome> {
        let me = self.side_to_move();
        if self.can_move(me) {
            None
        } else {
            Some(Outcome::Win(me.other()))
        }
    }

    fn hash_key(&self) -> u64 {
        super::hash_of(self)
    }

    fn policy_index(&self, mv: AmazonsMove) -> Option<usize> {
        Some(mv.to as usize)
    }

    fn move_to_string(&self, mv: AmazonsMove) -> String {
        format!(
            "{}-{}/{}",
            self.square_name(mv.from),
            self.square_name(mv.to),
            self.square_name(mv.arrow)
        )
    }

    fn parse_move(&self, text: &str) -> Result<AmazonsMove, GameError> {
        let bad = |why: String| GameError::BadMove {
            token: text.to_string(),
            why,
        };
        let t = text.trim();
        let (from_s, rest) = t
            .split_once('-')
            .ok_or_else(|| bad("expected FROM-TO/ARROW, e.g. d1-d7/g7 (no '-')".into()))?;
        let (to_s, arrow_s) = rest
            .split_once('/')
            .ok_or_else(|| bad("expected FROM-TO/ARROW, e.g. d1-d7/g7 (no '/')".into()))?;
        let square = |s| self.parse_square(s).map_err(|e| bad(e.to_string()));
        let (from, to, arrow) = (square(from_s)?, square(to_s)?, square(arrow_s)?);
        if self.outcome().is_some() {
            return Err(bad("the game is already over".into()));
        }
        let me = self.side_to_move();
        if self.cell(from as usize) != Cell::Amazon(me) {
            return Err(bad(format!(
                "{from_s} holds no amazon of the side to move ({})",
                if me == Side::First { "X" } else { "O" }
            )));
        }
        let geo = self.geo();
        let empty = self.empty(&geo);
        let (pf, pt, pa) = (self.pad(from), self.pad(to), self.pad(arrow));
        if self.queen_from(pf, empty) >> pt & 1 == 0 {
            return Err(bad(format!(
                "{to_s} is not reachable from {from_s} by a queen move over empty squares"
            )));
        }
        let empty2 = (empty | 1u128 << pf) & !(1u128 << pt);
        if self.queen_from(pt, empty2) >> pa & 1 == 0 {
            return Err(bad(format!(
                "the arrow cannot reach {arrow_s} from {to_s} by a queen move over empty squares"
            )));
        }
        Ok(AmazonsMove { from, to, arrow })
    }

    fn to_text(&self) -> String {
        super::grid::grid_text(self.n as usize, |i| self.glyph(i))
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let bad = |why: String| GameError::BadPosition {
            text: text.to_string(),
            why,
        };
        let rows: Vec<&str> = text.trim().split('/').collect();
        let n = rows.len();
        if !AMAZONS_SIZES.contains(&n) {
            return Err(bad(format!("{n} rows; the board must be 6, 8 or 10 rows")));
        }
        let mut g = Amazons {
            n: n as u8,
            queens: [0, 0],
            arrows: 0,
        };
        for (r, row) in rows.iter().enumerate() {
            if row.chars().count() != n {
                return Err(bad(format!(
                    "row {} has {} cells, expected {n}",
                    r + 1,
                    row.chars().count()
                )));
            }
            for (c, ch) in row.chars().enumerate() {
                let b = 1u128 << g.pad((r * n + c) as u8);
                match ch {
                    '.' => {}
                    'X' | 'x' => g.queens[0] |= b,
                    'O' | 'o' => g.queens[1] |= b,
                    '#' => g.arrows |= b,
                    _ => return Err(bad(format!("cell '{ch}' is not '.', 'X', 'O' or '#'"))),
                }
            }
        }
        let (nx, no) = (g.queens[0].count_ones(), g.queens[1].count_ones());
        if nx != no || !(1..=4).contains(&nx) {
            return Err(bad(format!(
                "X has {nx} amazons and O {no}; each side needs the same number, 1 to 4"
            )));
        }
        Ok(g)
    }

    fn render(&self) -> String {
        let n = self.n as usize;
        let mut s = super::grid::render_grid(n, b"abcdefghij", |i| self.glyph(i));
        s.push_str(match self.outcome() {
            Some(Outcome::Win(Side::First)) => "X (White) has won\n",
            Some(Outcome::Win(Side::Second)) => "O (Black) has won\n",
            Some(Outcome::Draw) => "draw\n",
            None if self.side_to_move() == Side::First => "X (White) to move\n",
            None => "O (Black) to move\n",
        });
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_positions_match_openspiel() {
        let cases = [
            (6, ".O..O./O....O/....../....../X....X/.X..X."),
            (
                8,
                "..O..O../......../O......O/......../......../X......X/......../..X..X..",
            ),
            (
                10,
                "...O..O.../........../........../O........O/........../........../X........X/........../........../...X..X...",
            ),
        ];
        for (n, text) in cases {
            let g = Amazons::with_size(n).unwrap();
            assert_eq!(g.to_text(), text);
            assert_eq!(Amazons::from_text(text).unwrap(), g);
        }
        assert!(Amazons::with_size(7).is_err());
    }

    #[test]
    fn opening_move_counts() {
        let mut v = Vec::new();
        for (n, count) in [(6, 544), (8, 1232), (10, 2176)] {
            Amazons::with_size(n).unwrap().legal_moves(&mut v);
            assert_eq!(v.len(), count, "{n}x{n}");
        }
    }

    #[test]
    fn distances_on_the_start_board() {
        let g = Amazons::with_size(6).unwrap();
        let d = g.distances(Side::First, Reach::Queen);
        assert_eq!(d[4 * 6], 0); // a2 holds a White amazon
        assert_eq!(d[3 * 6], 1); // a3: straight up
        let k = g.distances(Side::First, Reach::King);
        assert_eq!(k[2 * 6 + 2], 2); // c4: two king steps from a2
    }
}
