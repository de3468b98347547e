//! The board: bitboards per side and piece type, a mailbox for lookups, and
//! an incrementally updated Zobrist hash of the pieces.

use super::bitboard::{neighbors, Bitboard, Squares, RANK_1, RANK_8, TRAPS};
use super::piece::{Piece, PieceType};
use super::zobrist;
use crate::game::Side;

/// Pieces on the board and the side to move. Cheap to copy (about 200 bytes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub(crate) pieces: [[Bitboard; 6]; 2],
    pub(crate) occ: [Bitboard; 2],
    /// Piece code per square (0 = empty), see [`Piece::code`].
    pub(crate) board: [u8; 64],
    pub(crate) side: Side,
    /// Zobrist hash of the pieces only (not the side to move).
    pub(crate) hash: u64,
}

impl std::hash::Hash for Position {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.key());
    }
}

impl std::fmt::Debug for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({})", super::notation::position_line(self))
    }
}

impl Position {
    /// An empty board with `side` to move.
    pub fn empty(side: Side) -> Position {
        Position {
            pieces: [[0; 6]; 2],
            occ: [0; 2],
            board: [0; 64],
            side,
            hash: 0,
        }
    }

    pub fn side_to_move(&self) -> Side {
        self.side
    }

    pub fn set_side_to_move(&mut self, side: Side) {
        self.side = side;
    }

    /// Zobrist hash of the pieces, independent of the side to move.
    pub fn board_hash(&self) -> u64 {
        self.hash
    }

    /// Hash of pieces and side to move: the repetition key.
    pub fn key(&self) -> u64 {
        self.hash ^ Position::side_key(self.side)
    }

    /// What [`Position::key`] mixes in for `side` to move.
    pub fn side_key(side: Side) -> u64 {
        match side {
            Side::First => 0,
            Side::Second => zobrist::SILVER_TO_MOVE,
        }
    }

    #[inline(always)]
    pub fn piece_at(&self, sq: u8) -> Option<Piece> {
        Piece::from_code(self.board[sq as usize])
    }

    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.occ[0] | self.occ[1]
    }

    #[inline(always)]
    pub fn empty_squares(&self) -> Bitboard {
        !self.occupied()
    }

    /// Squares holding `side`'s pieces.
    pub fn side_bits(&self, side: Side) -> Bitboard {
        self.occ[side.index()]
    }

    /// Squares holding `side`'s pieces of type `kind`.
    pub fn piece_bits(&self, side: Side, kind: PieceType) -> Bitboard {
        self.pieces[side.index()][kind as usize]
    }

    /// Puts a piece on an empty square (no capture check).
    pub fn place(&mut self, sq: u8, piece: Piece) {
        debug_assert_eq!(self.board[sq as usize], 0);
        let bit = 1u64 << sq;
        let (s, k) = (piece.side.index(), piece.kind as usize);
        self.pieces[s][k] |= bit;
        self.occ[s] |= bit;
        self.board[sq as usize] = piece.code();
        self.hash ^= zobrist::PIECE[piece.code() as usize][sq as usize];
    }

    /// Takes the piece off `sq`, returning it.
    pub fn remove(&mut self, sq: u8) -> Option<Piece> {
        let piece = self.piece_at(sq)?;
        let bit = 1u64 << sq;
        let (s, k) = (piece.side.index(), piece.kind as usize);
        self.pieces[s][k] &= !bit;
        self.occ[s] &= !bit;
        self.board[sq as usize] = 0;
        self.hash ^= zobrist::PIECE[piece.code() as usize][sq as usize];
        Some(piece)
    }

    /// Moves the piece on `from` to the empty square `to`, then removes a
    /// piece of the mover's colour left unsupported on a trap. Returns the
    /// square of the captured piece and the piece.
    #[inline]
    pub fn move_piece(&mut self, from: u8, to: u8) -> Option<(u8, Piece)> {
        let code = self.board[from as usize];
        debug_assert!(code != 0 && self.board[to as usize] == 0);
        let c = (code - 1) as usize;
        let (s, k) = (c / 6, c % 6);
        let bits = (1u64 << from) | (1u64 << to);
        self.pieces[s][k] ^= bits;
        self.occ[s] ^= bits;
        self.board[from as usize] = 0;
        self.board[to as usize] = code;
        let keys = &zobrist::PIECE[code as usize];
        self.hash ^= keys[from as usize] ^ keys[to as usize];
        // Only a trap next to the vacated square can lose its last defender
        // (this includes `to` when `to` is a trap).
        let around = neighbors(1u64 << from) & TRAPS & self.occ[s];
        if around != 0 && neighbors(around) & self.occ[s] == 0 {
            let trap = around.trailing_zeros() as u8;
            let captured = self.remove(trap).expect("trap is occupied");
            return Some((trap, captured));
        }
        None
    }

    /// `side`'s pieces that cannot move: next to a stronger enemy piece and
    /// to no friendly piece.
    #[inline]
    pub fn frozen(&self, side: Side) -> Bitboard {
        let (me, them) = (side.index(), side.other().index());
        let unguarded = !neighbors(self.occ[me]);
        let mut stronger: Bitboard = 0;
        let mut frozen: Bitboard = 0;
        for k in (0..6).rev() {
            frozen |= self.pieces[me][k] & neighbors(stronger);
            stronger |= self.pieces[them][k];
        }
        frozen & unguarded
    }

    pub fn is_frozen(&self, sq: u8) -> bool {
        match self.piece_at(sq) {
            Some(p) => self.frozen(p.side) >> sq & 1 == 1,
            None => false,
        }
    }

    /// Rabbits of `side` standing on their goal rank.
    pub fn rabbits_on_goal(&self, side: Side) -> Bitboard {
        let goal = match side {
            Side::First => RANK_8,
            Side::Second => RANK_1,
        };
        self.pieces[side.index()][PieceType::Rabbit as usize] & goal
    }

    pub fn rabbit_count(&self, side: Side) -> u32 {
        self.pieces[side.index()][PieceType::Rabbit as usize].count_ones()
    }

    /// Number of pieces per type for `side`.
    pub fn material(&self, side: Side) -> [u8; 6] {
        let mut out = [0u8; 6];
        for (k, o) in out.iter_mut().enumerate() {
            *o = self.pieces[side.index()][k].count_ones() as u8;
        }
        out
    }

    /// Every piece with its square, squares in increasing order.
    pub fn pieces(&self) -> impl Iterator<Item = (u8, Piece)> + '_ {
        Squares(self.occupied()).map(move |sq| (sq, self.piece_at(sq).expect("occupied")))
    }

    /// Recomputes the hash and occupancy from the mailbox: a consistency check.
    pub fn is_consistent(&self) -> bool {
        let mut fresh = Position::empty(self.side);
        for sq in 0..64u8 {
            if let Some(p) = self.piece_at(sq) {
                fresh.place(sq, p);
            }
        }
        fresh == *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(c: char) -> Piece {
        Piece::from_char(c).unwrap()
    }

    #[test]
    fn unsupported_piece_on_a_trap_is_captured() {
        let mut p = Position::empty(Side::First);
        p.place(18, piece('D')); // c3, trap
        p.place(17, piece('R')); // b3 supports it
        let captured = p.move_piece(17, 9); // b3 -> b2
        assert_eq!(captured, Some((18, piece('D'))));
        assert!(p.piece_at(18).is_none());
        assert!(p.is_consistent());
    }

    #[test]
    fn supported_piece_stays_and_enemy_support_does_not_count() {
        let mut p = Position::empty(Side::First);
        p.place(18, piece('D'));
        p.place(17, piece('R'));
        p.place(26, piece('R')); // c4 also supports
        p.place(19, piece('e')); // d3 enemy next to trap
        assert_eq!(p.move_piece(17, 9), None);
        assert_eq!(p.move_piece(26, 34), Some((18, piece('D'))));
    }

    #[test]
    fn freezing_needs_a_stronger_enemy_and_no_friend() {
        let mut p = Position::empty(Side::First);
        p.place(27, piece('D')); // d4
        p.place(28, piece('c')); // e4 weaker: no freeze
        assert_eq!(p.frozen(Side::First), 0);
        p.place(35, piece('h')); // d5 stronger
        assert_eq!(p.frozen(Side::First), 1 << 27);
        assert!(p.is_frozen(27));
        p.place(26, piece('R')); // c4 friend unfreezes
        assert_eq!(p.frozen(Side::First), 0);
        // Without the horse the silver cat has no friend beside the gold dog.
        p.remove(35);
        assert_eq!(p.frozen(Side::Second), 1 << 28);
    }
}
