//! Squares and bitboards. Square 0 is a1, 7 is h1, 8 is a2, 63 is h8
//! (pyrimaa's numbering); north is +8.

/// A set of squares, one bit per square.
pub type Bitboard = u64;

pub const FILE_A: Bitboard = 0x0101_0101_0101_0101;
pub const FILE_H: Bitboard = FILE_A << 7;
pub const RANK_1: Bitboard = 0xff;
pub const RANK_8: Bitboard = RANK_1 << 56;
/// The trap squares c3, f3, c6 and f6.
pub const TRAPS: Bitboard = (1 << 18) | (1 << 21) | (1 << 42) | (1 << 45);
/// Squares next to a trap.
pub const TRAP_NEIGHBORS: Bitboard = neighbors(TRAPS);

/// The squares orthogonally next to any square of `b`.
#[inline(always)]
pub const fn neighbors(b: Bitboard) -> Bitboard {
    ((b & !FILE_A) >> 1) | ((b & !FILE_H) << 1) | (b >> 8) | (b << 8)
}

/// The four step directions, in notation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dir {
    North,
    South,
    East,
    West,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::North, Dir::South, Dir::East, Dir::West];

    pub fn letter(self) -> char {
        ['n', 's', 'e', 'w'][self as usize]
    }

    pub fn from_letter(c: char) -> Option<Dir> {
        match c {
            'n' => Some(Dir::North),
            's' => Some(Dir::South),
            'e' => Some(Dir::East),
            'w' => Some(Dir::West),
            _ => None,
        }
    }

    /// The square one step this way from `sq`, if it is on the board.
    #[inline]
    pub fn apply(self, sq: u8) -> Option<u8> {
        match self {
            Dir::North if sq < 56 => Some(sq + 8),
            Dir::South if sq >= 8 => Some(sq - 8),
            Dir::East if sq % 8 != 7 => Some(sq + 1),
            Dir::West if !sq.is_multiple_of(8) => Some(sq - 1),
            _ => None,
        }
    }

    /// The direction from `from` to the adjacent square `to`.
    #[inline]
    pub fn between(from: u8, to: u8) -> Option<Dir> {
        Dir::ALL.into_iter().find(|d| d.apply(from) == Some(to))
    }

    pub fn from_index(i: u8) -> Dir {
        Dir::ALL[(i & 3) as usize]
    }
}

/// The lowest square of a non-empty bitboard.
#[inline(always)]
pub fn lsb(b: Bitboard) -> u8 {
    b.trailing_zeros() as u8
}

/// Iterates over the squares of a bitboard, lowest first.
#[derive(Clone, Copy)]
pub struct Squares(pub Bitboard);

impl Iterator for Squares {
    type Item = u8;
    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        if self.0 == 0 {
            None
        } else {
            let sq = lsb(self.0);
            self.0 &= self.0 - 1;
            Some(sq)
        }
    }
}

/// `a1`..`h8`.
pub fn square_name(sq: u8) -> String {
    let file = (b'a' + sq % 8) as char;
    let rank = (b'1' + sq / 8) as char;
    format!("{file}{rank}")
}

/// Reads `a1`..`h8`.
pub fn parse_square(s: &str) -> Option<u8> {
    let b = s.as_bytes();
    if b.len() != 2 || !(b'a'..=b'h').contains(&b[0]) || !(b'1'..=b'8').contains(&b[1]) {
        return None;
    }
    Some((b[1] - b'1') * 8 + (b[0] - b'a'))
}

/// For each square next to a trap, that trap (each such square touches one).
pub const fn trap_next_to(sq: u8) -> Option<u8> {
    let around = neighbors(1u64 << sq) & TRAPS;
    if around == 0 {
        None
    } else {
        Some(around.trailing_zeros() as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbors_stay_on_the_board() {
        assert_eq!(neighbors(1), 2 | 256); // a1 -> b1, a2
        assert_eq!(neighbors(1 << 63), (1 << 62) | (1 << 55)); // h8 -> g8, h7
        assert_eq!(neighbors(1 << 7).count_ones(), 2); // h1
        assert_eq!(neighbors(1 << 27).count_ones(), 4); // d4
    }

    #[test]
    fn square_names_round_trip() {
        for sq in 0..64 {
            assert_eq!(parse_square(&square_name(sq)), Some(sq));
        }
        assert_eq!(square_name(0), "a1");
        assert_eq!(square_name(63), "h8");
        assert_eq!(parse_square("i1"), None);
        assert_eq!(parse_square("a9"), None);
    }

    #[test]
    fn each_trap_neighbor_touches_exactly_one_trap() {
        assert_eq!(TRAP_NEIGHBORS.count_ones(), 16);
        for sq in Squares(TRAP_NEIGHBORS) {
            assert_eq!((neighbors(1 << sq) & TRAPS).count_ones(), 1);
            assert!(trap_next_to(sq).is_some());
        }
        assert_eq!(trap_next_to(0), None);
    }

    #[test]
    fn directions_stop_at_edges() {
        assert_eq!(Dir::North.apply(56), None);
        assert_eq!(Dir::West.apply(8), None);
        assert_eq!(Dir::East.apply(15), None);
        assert_eq!(Dir::South.apply(3), None);
        assert_eq!(Dir::between(11, 19), Some(Dir::North));
        assert_eq!(Dir::between(11, 13), None);
    }
}
