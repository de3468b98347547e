//! Game records for the builds: hand-made Tic-tac-toe games, random games
//! of any game, and writing them as a JSONL records file.

use crate::common;
use plies::game::{Game, Outcome, Side, TicTacToe};
use plies::record::{GameRecord, PerSide};
use std::path::Path;

pub fn record(
    game: &str,
    id: &str,
    moves: &[String],
    result: Option<Side>,
    termination: &str,
    ratings: (Option<i32>, Option<i32>),
    board_size: Option<usize>,
) -> GameRecord {
    GameRecord {
        game: game.into(),
        id: id.into(),
        source: format!("test:{id}"),
        event: String::new(),
        players: PerSide::new("a".into(), "b".into()),
        ratings: PerSide::new(ratings.0, ratings.1),
        player_types: None,
        setups: vec![],
        moves: moves.to_vec(),
        result,
        termination: termination.into(),
        plies: moves.len() as u32,
        rated: None,
        start_time: None,
        board_size,
        explored: Vec::new(),
    }
}

pub fn ttt(
    id: &str,
    moves: &[&str],
    result: Option<Side>,
    termination: &str,
    ratings: (Option<i32>, Option<i32>),
) -> GameRecord {
    let moves: Vec<String> = moves.iter().map(|m| m.to_string()).collect();
    record(
        TicTacToe::NAME,
        id,
        &moves,
        result,
        termination,
        ratings,
        None,
    )
}

pub fn write_jsonl(path: &Path, records: &[GameRecord]) {
    let mut s = String::new();
    for r in records {
        s.push_str(&r.to_json_line());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

/// A random game of `G` from the start position at `size`, as a record
/// (winner from the rules; draws marked `draw`).
pub fn random_record<G: Game>(id: &str, size: usize, seed: u64, max_plies: usize) -> GameRecord {
    let (moves, outcome) = common::random_game::<G>(size, seed, max_plies);
    let (result, termination) = match outcome {
        Some(Outcome::Win(side)) => (Some(side), "win"),
        Some(Outcome::Draw) => (None, "draw"),
        None => (None, "unfinished"),
    };
    let board_size = (size != G::DEFAULT_SIZE).then_some(size);
    record(
        G::NAME,
        id,
        &moves,
        result,
        termination,
        (None, None),
        board_size,
    )
}

pub fn random_ttt(n: usize, seed: u64) -> Vec<GameRecord> {
    (0..n)
        .map(|i| {
            random_record::<TicTacToe>(
                &format!("t{seed}-{i:06}"),
                3,
                seed * 1_000_003 + i as u64,
                9,
            )
        })
        .collect()
}

/// The seven hand-made Tic-tac-toe games of the filter tests.
pub fn filter_games() -> Vec<GameRecord> {
    let first_wins = ["a1", "b1", "a2", "b2", "a3"];
    let second_wins = ["a1", "b1", "a2", "b2", "c3", "b3"];
    let r = (Some(1600), Some(1700));
    vec![
        // 5 moves, 6 positions, first wins.
        ttt("win1", &first_wins, Some(Side::First), "line", r),
        // 6 moves, 7 positions, second wins.
        ttt("win2", &second_wins, Some(Side::Second), "line", r),
        // 2 moves, 3 positions, a draw.
        ttt("draw", &["b2", "a1"], None, "draw", r),
        ttt("resigned", &first_wins, Some(Side::First), "resignation", r),
        ttt("open", &["b2"], None, "unfinished", r),
        ttt(
            "low",
            &first_wins,
            Some(Side::First),
            "line",
            (Some(1400), Some(1700)),
        ),
        ttt(
            "unrated",
            &second_wins,
            Some(Side::Second),
            "line",
            (None, Some(1700)),
        ),
    ]
}
