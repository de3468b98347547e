//! The one place a game's positions become dataset rows, whether the game
//! comes from a record file ([`super::record_rows`]: imports, self-play
//! runs, the Amazons database) or was just played in memory
//! ([`played_rows`]: the loop's generations, `plies data generate`).
//!
//! Each position is encoded and described once (ply, side to move, text,
//! the move played from it); the labels (the result for the side to move)
//! and the heights (plies to the end) are set when the game's outcome is
//! known.

use crate::dataset::{GameRows, PolicyTarget};
use crate::encode::Encoder;
use crate::game::{Game, Outcome, Side};

/// The fields every row of one game shares.
#[derive(Clone, Debug, Default)]
pub struct GameHeader {
    pub game_id: String,
    pub source: String,
    pub termination: Option<String>,
    pub white_rating: Option<u32>,
    pub black_rating: Option<u32>,
}

/// A game's rows, position by position.
pub struct GameRowsBuilder<'e, G: Game> {
    rows: GameRows,
    encoder: &'e dyn Encoder<G>,
    /// Whether every position has a policy target slot.
    policies: bool,
}

impl<'e, G: Game> GameRowsBuilder<'e, G> {
    /// An empty game with room for `positions` rows; with `policies`, each
    /// position gets a policy target slot ([`GameRowsBuilder::set_policy`]).
    pub fn new(
        header: GameHeader,
        encoder: &'e dyn Encoder<G>,
        positions: usize,
        policies: bool,
    ) -> Self {
        let (planes, globals) = (encoder.plane_len(), encoder.globals_len());
        let rows = GameRows {
            game_id: header.game_id,
            source: header.source,
            termination: header.termination,
            white_rating: header.white_rating,
            black_rating: header.black_rating,
            ply: Vec::with_capacity(positions),
            plies_to_end: Vec::with_capacity(positions),
            side_to_move: Vec::with_capacity(positions),
            label: Vec::with_capacity(positions),
            positions: String::new(),
            position_ends: Vec::with_capacity(positions),
            moves: String::new(),
            move_ends: Vec::with_capacity(positions),
            planes: Vec::with_capacity(positions * planes),
            globals: Vec::with_capacity(positions * globals),
            policies: Vec::with_capacity(if policies { positions } else { 0 }),
        };
        GameRowsBuilder {
            rows,
            encoder,
            policies,
        }
    }

    /// Adds position `ply`, `state`, from which `move_played` was played
    /// (none for the final position).
    pub fn position(&mut self, ply: u32, state: &G, move_played: Option<&str>) {
        let rows = &mut self.rows;
        let at = rows.planes.len();
        rows.planes.resize(at + self.encoder.plane_len(), 0);
        let gat = rows.globals.len();
        rows.globals.resize(gat + self.encoder.globals_len(), 0.0);
        self.encoder
            .encode(state, &mut rows.planes[at..], &mut rows.globals[gat..]);
        rows.ply.push(ply);
        // Set by `finish`, once the last ply is known.
        rows.plies_to_end.push(0);
        rows.side_to_move.push(state.side_to_move().index() as u8);
        rows.label.push(0.0);
        rows.positions.push_str(&state.to_text());
        rows.position_ends.push(rows.positions.len());
        rows.move_ends.push(move_played.map(|m| {
            rows.moves.push_str(m);
            rows.moves.len()
        }));
        if self.policies {
            rows.policies.push(None);
        }
    }

    /// Sets the policy target of the last position added (nothing without
    /// policy slots or positions).
    pub fn set_policy(&mut self, target: Option<PolicyTarget>) {
        if let Some(slot) = self.rows.policies.last_mut() {
            *slot = target;
        }
    }

    /// The rows, labelled with `outcome` for each position's side to move;
    /// each position's height counts to the last position added.
    pub fn finish(mut self, outcome: Outcome) -> GameRows {
        let rows = &mut self.rows;
        let last = rows.ply.last().copied().unwrap_or(0);
        for (height, &ply) in rows.plies_to_end.iter_mut().zip(&rows.ply) {
            *height = last - ply;
        }
        for (label, &side) in rows.label.iter_mut().zip(&rows.side_to_move) {
            let side = if side == 0 { Side::First } else { Side::Second };
            *label = outcome.score_for(side);
        }
        self.rows
    }
}

/// The rows of a game just played: `states[k]` is the position before
/// `moves[k]`, and `states` has one more entry (the final position, whose
/// outcome labels every row). `None` when the final position is not over.
/// The termination column says only `win` or `draw`; `policies`, when
/// given, are the targets of the positions before each move.
pub fn played_rows<G: Game>(
    header: GameHeader,
    states: &[G],
    moves: &[G::Move],
    encoder: &dyn Encoder<G>,
    policies: Option<&[Option<PolicyTarget>]>,
) -> Option<GameRows> {
    let outcome = states.last()?.outcome()?;
    let header = GameHeader {
        termination: Some(match outcome {
            Outcome::Draw => "draw".into(),
            Outcome::Win(_) => "win".into(),
        }),
        ..header
    };
    let mut rows = GameRowsBuilder::new(header, encoder, states.len(), policies.is_some());
    for (k, s) in states.iter().enumerate() {
        let played = moves.get(k).map(|&m| s.move_to_string(m));
        rows.position(k as u32, s, played.as_deref());
        if let Some(target) = policies.and_then(|p| p.get(k)) {
            rows.set_policy(target.clone());
        }
    }
    Some(rows.finish(outcome))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::PositionRow;
    use crate::encode::TttPlanes;
    use crate::game::TicTacToe;

    /// What rows of a played game are, written out field by field.
    fn expected(states: &[TicTacToe], moves: &[<TicTacToe as Game>::Move]) -> Vec<PositionRow> {
        let outcome = states.last().unwrap().outcome().unwrap();
        let last = states.len() - 1;
        states
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let mut planes = vec![0i8; TttPlanes.plane_len()];
                let mut globals = vec![0f32; TttPlanes.globals_len()];
                TttPlanes.encode(s, &mut planes, &mut globals);
                PositionRow {
                    game_id: "g".into(),
                    ply: k as u32,
                    plies_to_end: (last - k) as u32,
                    side_to_move: s.side_to_move().index() as u8,
                    position: s.to_text(),
                    planes,
                    globals,
                    label: outcome.score_for(s.side_to_move()),
                    move_played: moves.get(k).map(|&m| s.move_to_string(m)),
                    source: "unit".into(),
                    termination: Some("win".into()),
                    white_rating: None,
                    black_rating: None,
                    policy: None,
                }
            })
            .collect()
    }

    #[test]
    fn a_played_game_gives_one_labelled_row_per_position() {
        let mut g = TicTacToe::new();
        let mut states = vec![g];
        let mut moves = Vec::new();
        for text in ["a1", "b1", "a2", "b2", "a3"] {
            let mv = g.parse_move(text).unwrap();
            g.play(mv);
            moves.push(mv);
            states.push(g);
        }
        let header = GameHeader {
            game_id: "g".into(),
            source: "unit".into(),
            ..GameHeader::default()
        };
        let rows = played_rows(header.clone(), &states, &moves, &TttPlanes, None).unwrap();
        let (p, n) = (TttPlanes.plane_len(), TttPlanes.globals_len());
        assert_eq!(rows.rows(p, n), expected(&states, &moves));
        assert_eq!(rows.label, vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0]);
        assert_eq!(rows.plies_to_end, vec![5, 4, 3, 2, 1, 0]);

        // Policy targets land on the positions before their moves.
        let targets: Vec<Option<PolicyTarget>> = (0..5)
            .map(|k| (k % 2 == 0).then(|| PolicyTarget::best(k)))
            .collect();
        let with =
            played_rows(header.clone(), &states, &moves, &TttPlanes, Some(&targets)).unwrap();
        assert_eq!(with.policies.len(), 6);
        assert_eq!(with.policy(2), Some(&PolicyTarget::best(2)));
        assert_eq!(with.policy(1), None);
        assert_eq!(with.policy(5), None);

        // An unfinished game has no rows.
        assert!(played_rows(header, &states[..3], &moves[..2], &TttPlanes, None).is_none());
    }
}
