//! Connect Four's support: the `stones-2` encoder on its 6 x 7 board, the `threats` hand
//! evaluator, EXPERT's immediate wins, OpenSpiel's `connect_four` (a move
//! is one action, its column).

use super::{cell_action, piece_code, GameKind, GameSupport};
use crate::encode::{EncodeError, Encoder, StoneGrid, Stones2};
use crate::game::connect_four::{COLUMNS, ROWS};
use crate::game::{ConnectFour, ConnectFourMove, Game, Side};
use crate::infer::hand::{HandEval, HandEvaluator};

impl GameSupport for ConnectFour {
    const KIND: GameKind = GameKind::ConnectFour;

    /// One drop a column.
    fn most_legal_moves(_size: usize) -> Option<u64> {
        Some(7)
    }

    const SIDE_NAMES: [&'static str; 2] = ["x", "o"];

    fn board_label(_size: usize) -> String {
        format!("{COLUMNS}x{ROWS}")
    }

    const ENCODERS: &'static [&'static str] = &[Stones2::NAME];

    fn encoder(name: &str, size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        match name {
            Stones2::NAME if size == COLUMNS => Ok(Box::new(Stones2::rect(ROWS, COLUMNS))),
            _ => Err(EncodeError::Unknown {
                game: Self::NAME.into(),
                name: format!("{name} (board size {size})"),
                known: Self::ENCODERS.to_vec(),
            }),
        }
    }

    const HAND_EVALS: &'static [&'static str] = &[Threats::NAME];

    /// Two open threes more than the opponent (20 points, x1000) is a
    /// clear advantage.
    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        (name == Threats::NAME).then(|| HandEval::from_formula(name, 20_000.0, Threats))
    }

    /// Row by row from the top.
    fn piece_codes(&self, out: &mut Vec<u8>) -> bool {
        out.clear();
        out.extend((0..ROWS * COLUMNS).map(|i| piece_code(self.cell(i))));
        true
    }

    fn immediate_wins(&self, side: Side) -> Option<Vec<ConnectFourMove>> {
        Some(columns_of(self.immediate_wins(side)))
    }

    const SPIEL_NAME: Option<&'static str> = Some("connect_four");

    fn to_spiel_actions(&self, mv: ConnectFourMove) -> Vec<i64> {
        vec![mv.0 as i64]
    }

    fn spiel_move(&self, actions: &[i64]) -> Option<ConnectFourMove> {
        cell_action(actions, COLUMNS).map(|c| ConnectFourMove(c as u8))
    }
}

/// The moves that drop a stone on the cells of `cells` (bit `row * 7 +
/// col`; one playable cell per column at most).
fn columns_of(cells: u64) -> Vec<ConnectFourMove> {
    (0..ROWS * COLUMNS)
        .filter(|&i| cells >> i & 1 == 1)
        .map(|i| ConnectFourMove((i % COLUMNS) as u8))
        .collect()
}

/// Connect Four is a grid of stones, so the placement games' `stones-2`
/// encoder reads it, as a 6 x 7 board.
impl StoneGrid for ConnectFour {
    fn stone_at(&self, cell: usize) -> Option<Side> {
        self.cell(cell)
    }
}

/// `threats`, for the side to move, in points: open windows of four
/// (1 per window holding one stone and none of the opponent's, 4 per two,
/// 16 per three), a bonus of 8 for each threat on a row that favours its
/// owner (odd rows from the bottom for the first player, even rows for
/// the second: the zugzwang at the end of the game fills the board row by
/// row), a won position for an immediate win of the side to move, and a
/// lost one when the opponent has two immediate wins.
pub struct Threats;

impl Threats {
    pub const NAME: &'static str = "threats";
    const WINDOW_POINTS: [f32; 4] = [0.0, 1.0, 4.0, 16.0];
    const PARITY_POINTS: f32 = 8.0;
    /// A decided position (well above any sum of windows).
    const DECIDED: f32 = 500.0;
}

/// The cells of rows that count as odd from the bottom (heights 1, 3, 5).
fn odd_rows_from_bottom() -> u64 {
    (0..ROWS)
        .filter(|row| (ROWS - row) % 2 == 1)
        .map(|row| ((1u64 << COLUMNS) - 1) << (row * COLUMNS))
        .fold(0, |a, b| a | b)
}

impl Threats {
    fn side_points(state: &ConnectFour, side: Side) -> f32 {
        let lines = state.open_lines(side);
        let windows: f32 = (1..4)
            .map(|k| lines[k] as f32 * Self::WINDOW_POINTS[k])
            .sum();
        let good_rows = match side {
            Side::First => odd_rows_from_bottom(),
            Side::Second => !odd_rows_from_bottom(),
        };
        let parity = (state.threats(side) & good_rows).count_ones() as f32 * Self::PARITY_POINTS;
        windows + parity
    }
}

impl HandEvaluator<ConnectFour> for Threats {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn value(&self, state: &ConnectFour) -> f32 {
        let me = state.side_to_move();
        if state.outcome().is_some() {
            return 0.0;
        }
        if state.immediate_wins(me) != 0 {
            return Self::DECIDED;
        }
        if state.immediate_wins(me.other()).count_ones() >= 2 {
            return -Self::DECIDED;
        }
        Self::side_points(state, me) - Self::side_points(state, me.other())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(moves: &str) -> ConnectFour {
        let mut g = ConnectFour::new();
        for m in moves.split_whitespace() {
            g.play_str(m).unwrap();
        }
        g
    }

    #[test]
    fn the_encoder_puts_the_side_to_move_first() {
        let g = play("d d c");
        let enc = ConnectFour::encoder(Stones2::NAME, 7).unwrap();
        let mut planes = vec![9i8; enc.plane_len()];
        enc.encode(&g, &mut planes, &mut []);
        // o to move: o's stone is in plane 0, x's two in plane 1.
        assert_eq!(planes[..42].iter().map(|&v| v as i32).sum::<i32>(), 1);
        assert_eq!(planes[42..].iter().map(|&v| v as i32).sum::<i32>(), 2);
        // d1 (bottom row, column d) is x's: cell 5 * 7 + 3 of plane 1.
        assert_eq!(planes[42 + 5 * 7 + 3], 1);
        assert_eq!(planes[4 * 7 + 3], 1, "d2 is o's");
        assert!(ConnectFour::encoder(Stones2::NAME, 6).is_err());
    }

    #[test]
    fn threats_see_wins_and_open_lines() {
        // x has three in the bottom row with both ends open.
        let g = play("b b c c d");
        assert_eq!(g.side_to_move(), Side::Second);
        // o to move cannot block both ends: lost.
        assert_eq!(Threats.value(&g), -Threats::DECIDED);
        let g = play("b b c c d d");
        assert_eq!(Threats.value(&g), Threats::DECIDED, "x wins at a1 or e1");
        // x's three a1-c1 blocked by o at d1: nothing is decided.
        let g = play("b b c c a d");
        assert!(Threats.value(&g).abs() < Threats::DECIDED);
        // A lone centre stone is worth more to its owner than an edge one.
        let centre = play("d");
        let edge = play("a");
        assert!(Threats.value(&centre) < Threats.value(&edge));
    }

    #[test]
    fn expert_moves_are_columns_that_win() {
        let g = play("b b c c d d");
        let wins = GameSupport::immediate_wins(&g, Side::First).unwrap();
        assert_eq!(wins, vec![ConnectFourMove(0), ConnectFourMove(4)]);
        for mv in wins {
            let mut child = g;
            child.play(mv);
            assert_eq!(
                child.outcome(),
                Some(crate::game::Outcome::Win(Side::First))
            );
        }
    }

    #[test]
    fn spiel_actions_are_columns() {
        let g = ConnectFour::new();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        for &mv in &moves {
            assert_eq!(g.spiel_move(&g.to_spiel_actions(mv)), Some(mv));
        }
        assert_eq!(g.spiel_move(&[7]), None);
    }
}
