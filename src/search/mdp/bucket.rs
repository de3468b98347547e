//! The bucket of a board (Heon & Oetting 2012): the sum over cells of the
//! piece code (0 empty, 1 first player, 2 second) times `p^s`, where the
//! cells come in runs of nine (Pentago's quadrants), run `q` has the prime
//! `PRIMES[q]` and `s` is the cell's place in its run; the sum modulo
//! `buckets - 2`, plus 2. Buckets 0 and 1 are the first and the second
//! player's wins.

use crate::game::{Outcome, Side};

/// The primes of the runs of nine cells: the paper's 2, 3, 5, 7 for
/// Pentago's quadrants, then the next ones for larger boards.
pub const PRIMES: [u64; 8] = [2, 3, 5, 7, 11, 13, 17, 19];

/// Cells per run (a Pentago quadrant).
pub const RUN: usize = 9;

/// The bucket of a won game: 0 when the first player won, 1 the second.
pub fn win_bucket(winner: Side) -> usize {
    winner.index()
}

/// Hashes boards into `buckets` buckets (at least 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketHash {
    buckets: usize,
}

impl BucketHash {
    /// `None` for fewer than 3 buckets or a board longer than the primes
    /// reach.
    pub fn new(buckets: usize) -> Option<Self> {
        (buckets >= 3).then_some(BucketHash { buckets })
    }

    pub fn buckets(&self) -> usize {
        self.buckets
    }

    /// The most cells a board may have.
    pub const MAX_CELLS: usize = PRIMES.len() * RUN;

    /// The bucket of an unfinished (or drawn) board given as piece codes.
    pub fn of_codes(&self, codes: &[u8]) -> usize {
        let m = (self.buckets - 2) as u64;
        let mut sum = 0u64;
        for (run, cells) in codes.chunks(RUN).enumerate() {
            let p = PRIMES[run % PRIMES.len()];
            let mut power = 1u64;
            for &c in cells {
                sum = (sum + c as u64 * power) % m;
                power = power * p % m;
            }
        }
        2 + sum as usize
    }

    /// The bucket of a board: its winner's bucket when the game is won.
    pub fn of(&self, outcome: Option<Outcome>, codes: &[u8]) -> usize {
        match outcome {
            Some(Outcome::Win(w)) => win_bucket(w),
            _ => self.of_codes(codes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, Pentago, TicTacToe};
    use crate::games::GameSupport;

    #[test]
    fn buckets_match_hand_computed_sums() {
        let h = BucketHash::new(1500).unwrap();
        let mut codes = vec![0u8; 36];
        assert_eq!(h.of_codes(&codes), 2);
        // Quadrant 0, cell 4 (the centre) holds a first-player stone: 1 * 2^4.
        codes[4] = 1;
        assert_eq!(h.of_codes(&codes), 2 + 16);
        // Quadrant 3 (prime 7), cell 8, second player: 2 * 7^8 = 11529602;
        // with 16: 11529618 mod 1498 = 11529618 - 7696 * 1498 = 1010.
        codes[27 + 8] = 2;
        assert_eq!(h.of_codes(&codes), 2 + 1010);
        // Quadrant 1 (prime 3), cell 2, first player: + 9 -> 1019.
        codes[9 + 2] = 1;
        assert_eq!(h.of_codes(&codes), 2 + 1019);
        assert_eq!(h.of(Some(Outcome::Win(Side::Second)), &codes), 1);
        assert_eq!(h.of(Some(Outcome::Draw), &codes), 2 + 1019);
        assert!(BucketHash::new(2).is_none());
    }

    #[test]
    fn pentago_cells_go_quadrant_by_quadrant() {
        // O on a1 (top-left corner: quadrant 0, cell 0) and on f6
        // (bottom-right corner: quadrant 3, cell 8); @ on d1 (quadrant 1,
        // cell 0): 1 * 2^0 + 1 * 7^8 + 2 * 3^0 = 5764804 mod 1498 = 500.
        let g = Pentago::from_text("O..@../....../....../....../....../.....O").unwrap();
        let mut codes = Vec::new();
        assert!(g.piece_codes(&mut codes));
        assert_eq!(codes.len(), 36);
        assert_eq!((codes[0], codes[9], codes[35]), (1, 2, 1));
        let h = BucketHash::new(1500).unwrap();
        assert_eq!(h.of_codes(&codes), 2 + 5_764_804 % 1498);
        assert_eq!(5_764_804 % 1498, 500);
        // Tic-tac-toe: one run, prime 2; x on the centre: 2^4.
        let mut t = TicTacToe::new();
        t.play_str("b2").unwrap();
        assert!(t.piece_codes(&mut codes));
        assert_eq!(BucketHash::new(100).unwrap().of_codes(&codes), 2 + 16);
    }
}
