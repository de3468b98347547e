//! Gomoku, Atari-Go and Pentago against OpenSpiel 2.0.2: every ply of 500
//! random oracle games per fixture (board string, side to move, terminal
//! flag, returns and the legal-move list or its count + digest) must agree.
//! Regenerate the fixtures with `bash scripts/gen_spiel_fixtures.sh`; the
//! larger ones are stored gzipped and unpacked here with `gzip -dc`.

use plies::game::{AtariGo, Game, Gomoku, Pentago};
use plies::record::replay_file;
use std::path::{Path, PathBuf};

mod common;

/// The fixture `NAME_oracle`.
fn fixture(name: &str, dir: &Path) -> PathBuf {
    common::oracle_fixture(&format!("{name}_oracle"), dir)
}

fn replay<G: Game>(name: &str, games: usize, plies: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(name, dir.path());
    let summary = replay_file::<G>(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(summary.games, games, "{name}");
    assert_eq!(summary.plies, plies, "{name}");
    assert!(summary.legal_moves_compared > plies, "{name}");
}

#[test]
fn gomoku_9x9_matches_openspiel() {
    replay::<Gomoku>("gomoku_9", 500, 27442);
}

#[test]
fn gomoku_15x15_matches_openspiel() {
    replay::<Gomoku>("gomoku_15", 500, 54327);
}

#[test]
fn atari_go_5x5_matches_openspiel() {
    // Includes 4 games that end with no legal move (a draw).
    replay::<AtariGo>("atari_go_5", 500, 9417);
}

#[test]
fn atari_go_9x9_matches_openspiel() {
    replay::<AtariGo>("atari_go_9", 500, 24519);
}

#[test]
fn atari_go_13x13_matches_openspiel() {
    replay::<AtariGo>("atari_go_13", 500, 44679);
}

#[test]
fn pentago_matches_openspiel() {
    // 448 wins and 52 draws (both fives or a full board).
    replay::<Pentago>("pentago", 500, 14624);
}

/// The PlayOK import on the shipped files (`data/gomoku`, or another folder
/// of PlayOK `.pgn` files in `PLIES_GOMOKU_PGN_DIR`).
#[test]
fn playok_gomoku_files_import() {
    let dir = std::env::var("PLIES_GOMOKU_PGN_DIR")
        .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/data/gomoku").to_string());
    let mut total = 0;
    let mut skipped = 0;
    let mut terminations = std::collections::BTreeMap::new();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pgn"))
        .collect();
    paths.sort();
    for path in paths {
        let imp = plies::record::gomoku_pgn::import_playok_gomoku(&path)
            .unwrap_or_else(|e| panic!("{e}"));
        for why in &imp.skipped {
            eprintln!("skipped {why}");
        }
        skipped += imp.skipped.len();
        for r in &imp.records {
            r.check().unwrap();
            *terminations.entry(r.termination.clone()).or_insert(0) += 1;
        }
        total += imp.records.len();
    }
    eprintln!("{total} games: {terminations:?}");
    if std::env::var("PLIES_GOMOKU_PGN_DIR").is_err() {
        // The shipped files: 284 games, 4 with a pass in mid-game that no
        // Gomoku replay can follow.
        assert_eq!((total, skipped), (280, 4), "{terminations:?}");
    }
    assert!(total > 0);
}
