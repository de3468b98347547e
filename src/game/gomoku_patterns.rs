//! Gomoku's line patterns, counted the way classic engines score a
//! position: every window of five consecutive points on a row, column or
//! diagonal that holds stones of one side only is a chance for that side
//! to make five, worth more the more of its stones it holds (a window
//! with four is a four: five next move; two windows with three that share
//! their empty points are an open three). Summed per side, the windows
//! tell fives, fours and threes, open and closed, apart by weight: an
//! open four (`.XXXX.`) fills two windows of four, a closed one
//! (`OXXXX.`) one.

use super::{Game, Gomoku, Side};

/// What a window holding `k` stones of one side and none of the other is
/// worth to that side (`k` = 0..=5); a five is left to the game's outcome.
pub const WINDOW_WEIGHTS: [i32; 6] = [0, 1, 12, 150, 2_000, 100_000];

/// The counts of each side's live windows by stones held, and the sum of
/// their weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinePatterns {
    /// `windows[side][k]`: live windows of `side` holding `k` stones.
    pub windows: [[u32; 6]; 2],
}

impl LinePatterns {
    /// Every window of five on `g`'s board, counted.
    pub fn of(g: &Gomoku) -> LinePatterns {
        let n = g.size() as isize;
        let mut windows = [[0u32; 6]; 2];
        // Directions: right, down, down-right, down-left.
        for (dr, dc) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)] {
            for r0 in 0..n {
                for c0 in 0..n {
                    let (r4, c4) = (r0 + 4 * dr, c0 + 4 * dc);
                    if r4 < 0 || r4 >= n || c4 < 0 || c4 >= n {
                        continue;
                    }
                    let mut held = [0usize; 2];
                    for i in 0..5 {
                        let cell = ((r0 + i * dr) * n + c0 + i * dc) as usize;
                        if let Some(side) = g.cell(cell) {
                            held[side.index()] += 1;
                        }
                    }
                    match held {
                        // An empty window is live for both sides.
                        [0, 0] => {
                            windows[0][0] += 1;
                            windows[1][0] += 1;
                        }
                        [k, 0] => windows[0][k] += 1,
                        [0, k] => windows[1][k] += 1,
                        _ => {}
                    }
                }
            }
        }
        LinePatterns { windows }
    }

    /// The weighted sum of `side`'s live windows.
    pub fn weight(&self, side: Side) -> i64 {
        self.windows[side.index()]
            .iter()
            .zip(WINDOW_WEIGHTS)
            .map(|(&count, w)| count as i64 * w as i64)
            .sum()
    }

    /// Live windows of `side` holding four: each is a point where `side`
    /// makes five.
    pub fn fours(&self, side: Side) -> u32 {
        self.windows[side.index()][4]
    }
}

/// The pattern score of `g` for its side to move: its windows' weight
/// less the opponent's, with the tempo read off the fours: a mover with a
/// four wins next move; an opponent with two fours the mover cannot both
/// block (and no four of the mover's) wins. Clamped to `±cap`.
pub fn pattern_score(g: &Gomoku, cap: i32) -> i32 {
    let me = g.side_to_move();
    let you = me.other();
    let p = LinePatterns::of(g);
    let score = if p.fours(me) > 0 {
        cap as i64
    } else if g.winning_cells(you).len() >= 2 {
        -(cap as i64) * 9 / 10
    } else {
        // The mover's threats count for more: it plays first.
        p.weight(me) * 3 / 2 - p.weight(you)
    };
    score.clamp(-(cap as i64), cap as i64) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, GomokuMove};

    /// A 15x15 game after `moves` (square names, alternating from Black).
    fn after(moves: &[&str]) -> Gomoku {
        let mut g = Gomoku::with_board_size(15).unwrap();
        crate::game::test_support::play_all(&mut g, moves);
        g
    }

    #[test]
    fn an_empty_board_has_only_empty_windows() {
        let p = LinePatterns::of(&Gomoku::with_board_size(15).unwrap());
        // 11 windows per row and column (15 each), 11*11 per diagonal
        // direction.
        assert_eq!(p.windows[0][0], 2 * 15 * 11 + 2 * 11 * 11);
        assert_eq!(p.windows[0][1..], [0; 5]);
        assert_eq!(p.windows, [p.windows[0]; 2]);
    }

    #[test]
    fn an_open_four_fills_two_windows_and_a_closed_one_one() {
        // Black h8 i8 j8 k8 (open on both ends); White plays far away.
        let open = after(&["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7"]);
        assert_eq!(LinePatterns::of(&open).fours(Side::First), 2);
        // The same four with White on g8: one end closed.
        let closed = after(&["h8", "g8", "i8", "a3", "j8", "a5", "k8", "a7"]);
        assert_eq!(LinePatterns::of(&closed).fours(Side::First), 1);
        assert!(
            LinePatterns::of(&open).weight(Side::First)
                > LinePatterns::of(&closed).weight(Side::First)
        );
    }

    #[test]
    fn the_mover_s_four_wins_and_two_of_the_opponent_s_lose() {
        let cap = 100_000;
        // Black to move with a four of its own.
        let g = after(&["h8", "a1", "i8", "a3", "j8", "a5", "k8", "a7"]);
        assert_eq!(g.side_to_move(), Side::First);
        assert_eq!(pattern_score(&g, cap), cap);
        // White to move facing Black's open four, with no four of its own.
        let mut g2 = g;
        g2.play(GomokuMove(0));
        assert!(pattern_score(&g2, cap) <= -cap * 9 / 10);
    }

    #[test]
    fn more_stones_in_line_score_higher_for_the_side_that_has_them() {
        let two = after(&["h8", "a1", "i8", "a3"]);
        let three = after(&["h8", "a1", "i8", "a3", "j8", "a15"]);
        // Black to move in both: Black's third stone adds weight.
        assert!(pattern_score(&three, 1 << 20) > pattern_score(&two, 1 << 20));
        assert!(pattern_score(&two, 1 << 20) > 0);
    }
}
