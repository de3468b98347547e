//! One game record -> one dataset row per position.
//!
//! The record's moves are replayed through the game's rules from
//! [`GameSupport::record_start`](crate::games::GameSupport::record_start); each position before a move, and the
//! final one, becomes a [`PositionRow`](crate::dataset::PositionRow): its ply, its plies to the end (the
//! "height"), the side to move, the position as text, the encoded planes,
//! the move played from it (none at the final position) and the label, the
//! game's result for the side to move (1 win, 0 loss, 0.5 draw).

use std::time::Instant;

use super::error::PositionsError;
use super::game_rows::{GameHeader, GameRowsBuilder};
use super::PolicyTargets;
use crate::dataset::{GameRows, PolicyTarget};
use crate::encode::Encoder;
use crate::game::{Game, Outcome};
use crate::games::GameSupport;
use crate::record::GameRecord;

/// Time spent per stage, in nanoseconds, summed over games (and threads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Building the start position, parsing and playing the moves.
    pub replay_ns: u64,
    /// `to_text` and the encoder.
    pub encode_ns: u64,
}

impl StageTimes {
    pub fn add(&mut self, other: &StageTimes) {
        self.replay_ns += other.replay_ns;
        self.encode_ns += other.encode_ns;
    }
}

/// How the game ended for the labels: the record's winner, or a draw when
/// the record has none and says (or the final position shows) it was drawn.
pub fn record_outcome<G: Game>(rec: &GameRecord, final_state: &G) -> Option<Outcome> {
    match rec.result {
        Some(winner) => Some(Outcome::Win(winner)),
        None if rec.termination == "draw" => Some(Outcome::Draw),
        None => match final_state.outcome() {
            Some(Outcome::Draw) => Some(Outcome::Draw),
            _ => None,
        },
    }
}

/// The rows of the positions of `rec` from index `first_kept` on (0 keeps
/// the start position; the final position, after all moves, is always
/// kept), in columnar form, with the policy targets `policy` asks for
/// (checked by [`PolicyTargets::check`] first). `board_size` is the size the
/// encoder was made for: a record on another board is refused. `Ok(None)`:
/// the game has no winner and is not a draw (e.g. unfinished), so it cannot
/// be labelled.
pub fn record_rows<G: GameSupport>(
    rec: &GameRecord,
    encoder: &dyn Encoder<G>,
    board_size: usize,
    first_kept: u32,
    policy: PolicyTargets,
    times: &mut StageTimes,
) -> Result<Option<GameRows>, PositionsError> {
    let t0 = Instant::now();
    let bad_start = |why: String| PositionsError::BadStart {
        source_name: rec.source.clone(),
        id: rec.id.clone(),
        why,
    };
    let mut state = G::record_start(rec).map_err(|e| bad_start(e.to_string()))?;
    if state.size() != board_size {
        return Err(bad_start(format!(
            "board size {}, but the dataset (and its encoder) is for size {board_size}",
            state.size()
        )));
    }
    let n = rec.moves.len();
    let first = (first_kept as usize).min(n);
    let rating = |r: Option<i32>| r.and_then(|r| u32::try_from(r).ok());
    let header = GameHeader {
        game_id: rec.id.clone(),
        source: rec.source.clone(),
        termination: (!rec.termination.is_empty()).then(|| rec.termination.clone()),
        white_rating: rating(rec.ratings.first),
        black_rating: rating(rec.ratings.second),
    };
    let played = policy == PolicyTargets::Played;
    let mut game = GameRowsBuilder::new(header, encoder, n + 1 - first, played);
    let mut encode_ns = 0u64;
    for i in 0..=n {
        if i >= first {
            let te = Instant::now();
            game.position(i as u32, &state, rec.moves.get(i).map(String::as_str));
            encode_ns += te.elapsed().as_nanos() as u64;
        }
        if let Some(token) = rec.moves.get(i) {
            let mv = state
                .parse_move(token)
                .map_err(|e| PositionsError::IllegalMove {
                    source_name: rec.source.clone(),
                    id: rec.id.clone(),
                    ply: i,
                    token: token.clone(),
                    why: e.to_string(),
                })?;
            let chosen = rec.explored.binary_search(&(i as u32)).is_err();
            if i >= first && played && chosen {
                // `check` has made sure the game's moves have indices.
                if let Some(index) = state.policy_index(mv) {
                    game.set_policy(Some(PolicyTarget::best(index as u32)));
                }
            }
            state.play(mv);
        }
    }
    let outcome = record_outcome(rec, &state);
    times.encode_ns += encode_ns;
    times.replay_ns += (t0.elapsed().as_nanos() as u64).saturating_sub(encode_ns);
    Ok(outcome.map(|o| game.finish(o)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::TttPlanes;
    use crate::game::Side;
    use crate::game::TicTacToe;
    use crate::record::PerSide;

    fn ttt(moves: &[&str], result: Option<Side>, termination: &str) -> GameRecord {
        GameRecord {
            game: TicTacToe::NAME.into(),
            id: "g1".into(),
            source: "t.jsonl:1".into(),
            event: String::new(),
            players: PerSide::new("a".into(), "b".into()),
            ratings: PerSide::new(Some(1500), Some(-3)),
            player_types: None,
            setups: vec![],
            moves: moves.iter().map(|s| s.to_string()).collect(),
            result,
            termination: termination.into(),
            plies: moves.len() as u32,
            rated: None,
            start_time: None,
            board_size: None,
            explored: Vec::new(),
        }
    }

    #[test]
    fn rows_carry_labels_heights_and_moves() {
        let rec = ttt(&["a1", "b1", "a2", "b2", "a3"], Some(Side::First), "line");
        let mut t = StageTimes::default();
        let rows = record_rows::<TicTacToe>(&rec, &TttPlanes, 3, 0, PolicyTargets::None, &mut t)
            .unwrap()
            .unwrap()
            .rows(18, 0);
        assert_eq!(rows.len(), 6);
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.ply, i as u32);
            assert_eq!(r.plies_to_end, 5 - i as u32);
            assert_eq!(r.side_to_move, (i % 2) as u8);
            assert_eq!(r.label, if i % 2 == 0 { 1.0 } else { 0.0 });
            assert_eq!(r.move_played, rec.moves.get(i).cloned());
            assert_eq!(r.planes.len(), 18);
            assert_eq!(r.white_rating, Some(1500));
            assert_eq!(r.black_rating, None);
        }
        assert_eq!(TicTacToe::from_text(&rows[5].position).unwrap().ply(), 5);
        let last = record_rows::<TicTacToe>(&rec, &TttPlanes, 3, 4, PolicyTargets::None, &mut t)
            .unwrap()
            .unwrap()
            .rows(18, 0);
        assert_eq!(last.iter().map(|r| r.ply).collect::<Vec<_>>(), [4, 5]);
    }

    #[test]
    fn draws_are_half_and_unfinished_games_have_no_rows() {
        let draw = ttt(&["a1", "b1"], None, "draw");
        let rows = record_rows::<TicTacToe>(
            &draw,
            &TttPlanes,
            3,
            0,
            PolicyTargets::None,
            &mut StageTimes::default(),
        )
        .unwrap()
        .unwrap();
        assert!(rows.label.iter().all(|&l| l == 0.5));
        let open = ttt(&["a1", "b1"], None, "unfinished");
        let none = record_rows::<TicTacToe>(
            &open,
            &TttPlanes,
            3,
            0,
            PolicyTargets::None,
            &mut StageTimes::default(),
        )
        .unwrap();
        assert!(none.is_none());
    }

    #[test]
    fn played_targets_name_each_chosen_move_and_skip_explored_ones() {
        let mut rec = ttt(&["a1", "b1", "a2", "b2", "a3"], Some(Side::First), "line");
        rec.explored = vec![1, 3];
        let mut t = StageTimes::default();
        let rows = record_rows::<TicTacToe>(&rec, &TttPlanes, 3, 1, PolicyTargets::Played, &mut t)
            .unwrap()
            .unwrap()
            .rows(18, 0);
        assert_eq!(rows.len(), 5);
        let mut state = TicTacToe::new();
        state.play_str("a1").unwrap();
        for r in &rows {
            let Some(token) = &r.move_played else {
                assert_eq!(r.policy, None, "the final position has no move");
                continue;
            };
            let mv = state.parse_move(token).unwrap();
            let want = (!rec.explored.contains(&r.ply))
                .then(|| PolicyTarget::best(state.policy_index(mv).unwrap() as u32));
            assert_eq!(r.policy, want, "ply {}", r.ply);
            state.play(mv);
        }
        assert_eq!(
            rows.iter().filter(|r| r.policy.is_some()).count(),
            2,
            "a2 and a3 of the moves at plies 1-4"
        );
        let none = record_rows::<TicTacToe>(&rec, &TttPlanes, 3, 0, PolicyTargets::None, &mut t)
            .unwrap()
            .unwrap();
        assert!(none.policies.is_empty());
    }

    #[test]
    fn an_illegal_move_names_source_game_ply_and_token() {
        let rec = ttt(&["a1", "a1"], Some(Side::First), "line");
        let e = record_rows::<TicTacToe>(
            &rec,
            &TttPlanes,
            3,
            0,
            PolicyTargets::None,
            &mut StageTimes::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("t.jsonl:1")
                && e.contains("g1")
                && e.contains("ply 1")
                && e.contains("'a1'"),
            "{e}"
        );
    }
}
