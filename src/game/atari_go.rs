//! Atari-Go (capture Go) on an N x N board (5..=19, standard 9).
//!
//! Black (the first player) and White place stones on empty points with the
//! Go capture rules: a placed stone removes every adjacent enemy group left
//! without liberties; a move that leaves its own group without liberties
//! (suicide) is illegal unless it captures; simple ko is illegal (retaking a
//! single stone at once where the last move captured exactly one stone with
//! a lone stone). There is no pass. **The first capture ends the game and
//! the capturer wins**, so in play a ko can never arise; [`AtariGo::ko_point`]
//! and [`AtariGo::point_is_legal`] still apply it to positions past a capture.
//!
//! A player with no legal move: the rules leave this open. We follow the
//! OpenSpiel oracle (`scripts/oracles/spiel_oracle.py`, reason
//! `no_legal_moves`), which ends the game as a **draw** (returns [0, 0]), so
//! that replays of its records agree. It only happens on small, nearly full
//! boards.
//!
//! Cells are numbered `row * n + col` with row 0 at the top. Moves use Go
//! coordinates: file letters `a`..`t` **without `i`**, rank 1 = the bottom
//! row (`c3`). The text form is the rows top first joined by `/`, with `.`,
//! `X` (Black) and `O` (White); the side to move follows from the stone
//! counts (no stone has been captured in a game that is still going).

use super::grid::{self, StoneBoard};
use super::{Game, GameError, Outcome, Side};
use crate::util::SeededRng;
use rand::RngExt;

/// Largest board side supported.
pub const MAX_SIZE: usize = grid::STONE_MAX_SIZE;
const MAX_CELLS: usize = MAX_SIZE * MAX_SIZE;
const FILES: &[u8; 19] = b"abcdefghjklmnopqrst";

/// An Atari-Go move: the cell index `row * n + col`, row 0 at the top.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AtariGoMove(pub u16);

/// An Atari-Go position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AtariGo {
    board: StoneBoard,
    /// Moves played.
    ply: u16,
    to_move: Side,
    /// The point the side to move may not play because of simple ko.
    ko: Option<u16>,
    outcome: Option<Outcome>,
}

fn code(side: Side) -> u8 {
    side.index() as u8 + 1
}

/// Up to four neighbour cells and how many of them are used.
type Neighbours = ([u16; 4], u8);

/// For board side `n`, each cell's on-board neighbours (up, down, left,
/// right order) and how many there are; built once for all sizes.
fn neighbour_table(n: usize) -> &'static [Neighbours] {
    static TABLES: std::sync::OnceLock<Vec<Vec<Neighbours>>> = std::sync::OnceLock::new();
    let tables = TABLES.get_or_init(|| {
        (5..=MAX_SIZE)
            .map(|n| {
                (0..n * n)
                    .map(|i| {
                        let (r, c) = (i / n, i % n);
                        let mut out = [0u16; 4];
                        let mut len = 0;
                        for (ok, q) in [
                            (r > 0, i.wrapping_sub(n)),
                            (r + 1 < n, i + n),
                            (c > 0, i.wrapping_sub(1)),
                            (c + 1 < n, i + 1),
                        ] {
                            if ok {
                                out[len] = q as u16;
                                len += 1;
                            }
                        }
                        (out, len as u8)
                    })
                    .collect()
            })
            .collect()
    });
    &tables[n - 5]
}

impl AtariGo {
    /// An empty `n` x `n` board (5..=19).
    pub fn with_board_size(n: usize) -> Result<Self, GameError> {
        Ok(AtariGo {
            board: StoneBoard::empty(Self::NAME, n)?,
            ply: 0,
            to_move: Side::First,
            ko: None,
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

    /// The simple-ko point barred to the side to move, if any.
    pub fn ko_point(&self) -> Option<AtariGoMove> {
        self.ko.map(AtariGoMove)
    }

    /// The square name of `cell` (Go coordinates, no `i`).
    pub fn square_name(&self, cell: usize) -> String {
        self.board.square_name(FILES, cell)
    }

    /// The on-board neighbours of `i` (up, down, left, right order): the
    /// first `len` entries of the array.
    #[inline]
    fn neighbours(&self, i: usize) -> ([usize; 4], usize) {
        let (a, k) = neighbour_table(self.board.n())[i];
        (a.map(|q| q as usize), k as usize)
    }

    /// Flood fill of the group holding the stone on `start`, breadth first
    /// into `buf` (which ends up holding its stones, `start` first). An
    /// empty point other than `except` is a liberty; with `stop` the fill
    /// ends at the first liberty found. Returns the stones filled and
    /// whether a liberty was seen. No allocation: a bitset marks the
    /// visited stones.
    fn flood(
        &self,
        start: usize,
        except: usize,
        stop: bool,
        buf: &mut [u16; MAX_CELLS],
    ) -> (usize, bool) {
        let colour = self.board.cells[start];
        let mut seen = [0u64; MAX_CELLS.div_ceil(64)];
        seen[start / 64] |= 1 << (start % 64);
        buf[0] = start as u16;
        let (mut head, mut len) = (0, 1);
        let mut liberty = false;
        while head < len {
            let p = buf[head] as usize;
            head += 1;
            let (ns, k) = self.neighbours(p);
            for &q in &ns[..k] {
                let cq = self.board.cells[q];
                if cq == 0 {
                    if q != except {
                        liberty = true;
                        if stop {
                            return (len, true);
                        }
                    }
                } else if cq == colour && seen[q / 64] >> (q % 64) & 1 == 0 {
                    seen[q / 64] |= 1 << (q % 64);
                    buf[len] = q as u16;
                    len += 1;
                }
            }
        }
        (len, liberty)
    }

    /// Whether `i` has an empty neighbour other than `except` (then its
    /// group has a liberty other than `except`).
    #[inline]
    fn touches_empty(&self, i: usize, except: usize) -> bool {
        let (ns, k) = self.neighbours(i);
        ns[..k]
            .iter()
            .any(|&q| self.board.cells[q] == 0 && q != except)
    }

    /// Whether the group on `start` has a liberty other than `except`.
    fn has_liberty_except(&self, start: usize, except: usize) -> bool {
        if self.touches_empty(start, except) {
            return true;
        }
        let mut buf = [0u16; MAX_CELLS];
        self.flood(start, except, true, &mut buf).1
    }

    /// Places a `side` stone on empty `cell` and removes the enemy groups it
    /// leaves without liberties; returns how many stones were captured and
    /// the first of them (the neighbour through which it was found).
    fn place(&mut self, cell: usize, side: Side) -> (usize, usize) {
        self.board.cells[cell] = code(side);
        let enemy = code(side.other());
        let (mut count, mut first) = (0, 0);
        let (ns, k) = self.neighbours(cell);
        for &q in &ns[..k] {
            if self.board.cells[q] == enemy && !self.touches_empty(q, usize::MAX) {
                let mut buf = [0u16; MAX_CELLS];
                let (len, liberty) = self.flood(q, usize::MAX, true, &mut buf);
                if !liberty {
                    for &s in &buf[..len] {
                        self.board.cells[s as usize] = 0;
                    }
                    if count == 0 {
                        first = q;
                    }
                    count += len;
                }
            }
        }
        (count, first)
    }

    /// Whether the side to move may play on `cell` by the Go rules (empty,
    /// not suicide unless it captures, not the ko point), whether or not
    /// the game is over.
    pub fn point_is_legal(&self, cell: usize) -> bool {
        if cell >= self.cell_count() || self.board.cells[cell] != 0 || self.ko == Some(cell as u16)
        {
            return false;
        }
        // Fast path: an empty neighbour is a liberty.
        let (ns, k) = self.neighbours(cell);
        let ns = &ns[..k];
        if ns.iter().any(|&q| self.board.cells[q] == 0) {
            return true;
        }
        // Every neighbour is a stone, so with `cell` filled: the move
        // captures iff an enemy neighbour group has no liberty but `cell`,
        // and otherwise the new group's liberties are those of the own
        // neighbour groups other than `cell`.
        let own = code(self.to_move);
        ns.iter().any(|&q| {
            let free = self.has_liberty_except(q, cell);
            if self.board.cells[q] == own {
                free
            } else {
                !free
            }
        })
    }

    /// A cheap sufficient condition for [`AtariGo::any_legal`] in a game
    /// without a capture yet and no ko point: then `ply` stones are on the
    /// board, and more than `ceil(cells / 2)` empty points (the largest set
    /// of pairwise non-adjacent points on the grid) include two adjacent
    /// ones, either of which is a legal move (it has a liberty).
    fn surely_has_a_move(&self) -> bool {
        let cells = self.cell_count();
        let empties = cells.saturating_sub(self.ply as usize);
        self.ko.is_none() && self.outcome.is_none() && empties > cells.div_ceil(2)
    }

    fn any_legal(&self) -> bool {
        (0..self.cell_count()).any(|i| self.point_is_legal(i))
    }
}

impl Game for AtariGo {
    type Move = AtariGoMove;
    const NAME: &'static str = "atari_go";
    const DEFAULT_SIZE: usize = 9;

    fn new() -> Self {
        Self::with_board_size(Self::DEFAULT_SIZE).expect("9 is a valid size")
    }

    fn with_size(size: usize) -> Result<Self, GameError> {
        Self::with_board_size(size)
    }

    fn size(&self) -> usize {
        self.board.n()
    }

    fn side_to_move(&self) -> Side {
        self.to_move
    }

    fn ply(&self) -> u32 {
        self.ply as u32
    }

    fn legal_moves(&self, out: &mut Vec<AtariGoMove>) {
        out.clear();
        if self.outcome.is_some() {
            return;
        }
        out.extend(
            (0..self.cell_count())
                .filter(|&i| self.point_is_legal(i))
                .map(|i| AtariGoMove(i as u16)),
        );
    }

    /// Uniform over the legal points without building the list: up to 8
    /// uniform random cells are tried with [`AtariGo::point_is_legal`] and
    /// the first legal one is taken (uniform over the legal points given
    /// acceptance); when all 8 are rejected, a uniform pick from the full
    /// `legal_moves` list in `scratch`. Both branches are uniform over the
    /// legal moves, so their mixture is too.
    fn random_move(
        &self,
        rng: &mut SeededRng,
        scratch: &mut Vec<AtariGoMove>,
    ) -> Option<AtariGoMove> {
        if self.outcome.is_some() {
            return None;
        }
        let cells = self.cell_count();
        for _ in 0..8 {
            let i = rng.random_range(0..cells as u32) as usize;
            if self.point_is_legal(i) {
                return Some(AtariGoMove(i as u16));
            }
        }
        self.legal_moves(scratch);
        if scratch.is_empty() {
            None
        } else {
            Some(scratch[rng.random_range(0..scratch.len())])
        }
    }

    fn play(&mut self, mv: AtariGoMove) {
        let cell = mv.0 as usize;
        debug_assert!(self.point_is_legal(cell), "illegal point {cell}");
        let side = self.to_move;
        let (captured, first) = self.place(cell, side);
        self.ply += 1;
        self.to_move = side.other();
        // Simple ko: a lone stone that captured exactly one stone and now
        // has exactly one liberty (the captured point).
        self.ko = None;
        if captured == 1 {
            let own = code(side);
            let (ns, k) = self.neighbours(cell);
            let lone = ns[..k].iter().all(|&q| self.board.cells[q] != own);
            let libs = ns[..k]
                .iter()
                .filter(|&&q| self.board.cells[q] == 0)
                .count();
            if lone && libs == 1 {
                self.ko = Some(first as u16);
            }
        }
        if captured > 0 {
            if self.outcome.is_none() {
                self.outcome = Some(Outcome::Win(side));
            }
        } else if self.outcome.is_none() && !self.surely_has_a_move() && !self.any_legal() {
            self.outcome = Some(Outcome::Draw);
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    fn hash_key(&self) -> u64 {
        super::hash_of(self)
    }

    fn policy_index(&self, mv: AtariGoMove) -> Option<usize> {
        Some(mv.0 as usize)
    }

    fn move_to_string(&self, mv: AtariGoMove) -> String {
        self.square_name(mv.0 as usize)
    }

    fn parse_move(&self, text: &str) -> Result<AtariGoMove, GameError> {
        let bad = |why: &str| GameError::BadMove {
            token: text.to_string(),
            why: why.to_string(),
        };
        if text.trim().eq_ignore_ascii_case("i")
            || text.trim().to_ascii_lowercase().starts_with('i')
        {
            return Err(bad("Go coordinates skip the letter i"));
        }
        let cell = self.board.free_point(text, FILES, self.outcome.is_some())?;
        if self.ko == Some(cell as u16) {
            return Err(bad("retaking the ko at once is illegal"));
        }
        if !self.point_is_legal(cell) {
            return Err(bad("suicide: the stone would have no liberty"));
        }
        Ok(AtariGoMove(cell as u16))
    }

    fn to_text(&self) -> String {
        self.board.text(['.', 'X', 'O'])
    }

    fn from_text(text: &str) -> Result<Self, GameError> {
        let bad = |why: String| GameError::BadPosition {
            text: text.to_string(),
            why,
        };
        let chars = grid::StoneChars {
            black: ['X', 'x'],
            white: ['O', 'o'],
            empty: &['.', '+'],
            expected: "X, O or '.'",
        };
        let (mut g, nb, nw) = grid::read_stones(text, Self::with_board_size, &chars, |g, i, c| {
            g.board.cells[i] = c
        })?;
        for i in 0..g.cell_count() {
            if g.board.cells[i] != 0 && !g.has_liberty_except(i, usize::MAX) {
                return Err(bad(format!(
                    "the group at {} has no liberty",
                    g.square_name(i)
                )));
            }
        }
        g.ply = nb + nw;
        g.to_move = if nb == nw { Side::First } else { Side::Second };
        if !g.any_legal() {
            g.outcome = Some(Outcome::Draw);
        }
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
    fn notation_skips_i() {
        let g = AtariGo::new();
        assert_eq!(g.parse_move("a1").unwrap(), AtariGoMove(72));
        assert_eq!(g.parse_move("j9").unwrap(), AtariGoMove(8));
        assert_eq!(g.move_to_string(AtariGoMove(8)), "j9");
        assert_notation_round_trips(&g, (0..81).map(AtariGoMove));
        let g19 = AtariGo::with_size(19).unwrap();
        assert_eq!(g19.move_to_string(AtariGoMove(18)), "t19");
        assert!(AtariGo::with_size(4).is_err());
        assert!(AtariGo::with_size(21).is_err());
    }

    #[test]
    fn bad_moves_name_the_token() {
        let mut g = AtariGo::with_size(9).unwrap();
        g.play_str("e5").unwrap();
        assert_refused(
            &g,
            &[
                ("i3", "letter i"),
                ("k1", "file"),
                ("a10", "rank"),
                ("e5", "taken"),
                ("", "square"),
            ],
        );
    }

    #[test]
    fn first_capture_wins() {
        let mut g = AtariGo::with_size(5).unwrap();
        // White a1 surrounded by Black a2, b1.
        play_all(&mut g, &["a2", "a1", "e5"]);
        assert!(g.outcome().is_none());
        play_all(&mut g, &["e4"]);
        g.play_str("b1").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
        assert_eq!(g.cell(20), None, "a1 was removed");
        assert!(legal(&g).is_empty());
        // A two-stone group captured by White.
        let mut g = AtariGo::from_text("XX.../OOO../...../...../...XX").unwrap();
        assert_eq!(g.side_to_move(), Side::Second);
        g.play_str("c5").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::Second)));
        assert_eq!(g.to_text(), "..O../OOO../...../...../...XX");
    }

    #[test]
    fn suicide_is_illegal_unless_it_captures() {
        // Black to move; a5 is surrounded by White b5 and a4: suicide.
        let g = AtariGo::from_text(".O.../O..../...../....X/....X").unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        assert_refused(&g, &[("a5", "suicide")]);
        let v = legal(&g);
        assert!(!v.contains(&AtariGoMove(0)));
        assert_eq!(v.len(), 25 - 4 - 1);
        // The same point captures when a White stone there is in atari:
        // White b5 has only the liberty a5 after Black c5 and b4.
        let mut g = AtariGo::from_text(".OX../OX.../...../...../.....").unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        assert!(g.point_is_legal(0));
        g.play_str("a5").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
    }

    #[test]
    fn simple_ko_is_barred() {
        // Black b5 a4 b3 surround White b4, which has the one liberty c4;
        // Black c4 captures it and then has the one liberty b4.
        let mut g = AtariGo::from_text(".XO../XO.O./.XO../...../....X").unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        g.play_str("c4").unwrap();
        assert_eq!(g.outcome(), Some(Outcome::Win(Side::First)));
        assert_eq!(g.ko_point(), Some(AtariGoMove(6)));
        assert!(!g.point_is_legal(6), "retaking the ko is barred");
        assert!(g.point_is_legal(4), "another point is fine");
        // Without the ko rule White's b4 would capture c4.
        let mut probe = g;
        probe.ko = None;
        assert!(probe.point_is_legal(6));
    }

    #[test]
    fn no_legal_move_is_a_draw() {
        // From an oracle game (reason "no_legal_moves"): Black to move, and
        // each of c5, d2 and a1 is suicide without a capture.
        let g = AtariGo::from_text("XX.XO/XXOOO/OOOOX/XOO.X/.XOXX").unwrap();
        assert_eq!(g.side_to_move(), Side::First);
        assert_eq!(g.outcome(), Some(Outcome::Draw));
        assert_eq!(g.outcome().unwrap().returns(), [0.0, 0.0]);
        assert!(legal(&g).is_empty());
    }

    #[test]
    fn text_round_trip() {
        let mut g = AtariGo::with_size(5).unwrap();
        play_all(&mut g, &["a1", "e5", "c3"]);
        let t = g.to_text();
        assert_eq!(t, "....O/...../..X../...../X....");
        let h = AtariGo::from_text(&t).unwrap();
        assert_eq!(h, g);
        assert!(AtariGo::from_text("XX.../...../...../...../.....").is_err());
        assert!(AtariGo::from_text("XO.../O..../...../...../.....").is_err());
    }

    /// The allocating group search the flood fill replaces.
    fn group_ref(g: &AtariGo, start: usize) -> (Vec<usize>, bool) {
        let colour = g.board.cells[start];
        let mut seen = [false; MAX_CELLS];
        let mut stack = vec![start];
        let mut stones = Vec::new();
        let mut liberty = false;
        seen[start] = true;
        while let Some(p) = stack.pop() {
            stones.push(p);
            let (ns, k) = g.neighbours(p);
            for &q in &ns[..k] {
                if seen[q] {
                    continue;
                }
                match g.board.cells[q] {
                    0 => liberty = true,
                    c if c == colour => {
                        seen[q] = true;
                        stack.push(q);
                    }
                    _ => {}
                }
            }
        }
        (stones, liberty)
    }

    fn place_ref(g: &mut AtariGo, cell: usize, side: Side) -> Vec<usize> {
        g.board.cells[cell] = code(side);
        let enemy = code(side.other());
        let mut captured = Vec::new();
        let (ns, k) = g.neighbours(cell);
        for &q in &ns[..k] {
            if g.board.cells[q] == enemy {
                let (stones, liberty) = group_ref(g, q);
                if !liberty {
                    for &s in &stones {
                        g.board.cells[s] = 0;
                    }
                    captured.extend(stones);
                }
            }
        }
        captured
    }

    fn legal_ref(g: &AtariGo, cell: usize) -> bool {
        if g.board.cells[cell] != 0 || g.ko == Some(cell as u16) {
            return false;
        }
        let mut probe = *g;
        let captured = place_ref(&mut probe, cell, g.to_move);
        !captured.is_empty() || group_ref(&probe, cell).1
    }

    fn play_ref(g: &mut AtariGo, cell: usize) {
        let side = g.to_move;
        let captured = place_ref(g, cell, side);
        g.ply += 1;
        g.to_move = side.other();
        g.ko = None;
        if captured.len() == 1 {
            let (stones, _) = group_ref(g, cell);
            let (ns, k) = g.neighbours(cell);
            let libs = ns[..k].iter().filter(|&&q| g.board.cells[q] == 0).count();
            if stones.len() == 1 && libs == 1 {
                g.ko = Some(captured[0] as u16);
            }
        }
        if !captured.is_empty() {
            if g.outcome.is_none() {
                g.outcome = Some(Outcome::Win(side));
            }
        } else if g.outcome.is_none() && !(0..g.cell_count()).any(|i| legal_ref(g, i)) {
            g.outcome = Some(Outcome::Draw);
        }
    }

    /// Random games played on past captures (so ko and suicide arise):
    /// legality of every point and every resulting position agree with the
    /// allocating reference.
    #[test]
    fn matches_the_reference_past_captures() {
        let mut x = 0x1234_5678_9abc_def1u64;
        let mut kos = 0;
        for (n, games) in [(5, 60), (6, 60), (7, 60), (9, 60), (19, 3)] {
            for _ in 0..games {
                let mut g = AtariGo::with_size(n).unwrap();
                let mut r = g;
                for _ in 0..3 * n * n {
                    let legal: Vec<usize> = (0..n * n).filter(|&i| legal_ref(&r, i)).collect();
                    for i in 0..n * n {
                        assert_eq!(g.point_is_legal(i), legal.contains(&i), "{}", g.to_text());
                    }
                    if legal.is_empty() {
                        break;
                    }
                    let cell = legal[(xorshift(&mut x) % legal.len() as u64) as usize];
                    g.play(AtariGoMove(cell as u16));
                    play_ref(&mut r, cell);
                    assert_eq!(g, r);
                    kos += g.ko.is_some() as usize;
                }
            }
        }
        assert!(kos > 0);
    }
}
