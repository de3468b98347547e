//! The study's settings, its grid of networks, the thesis' figures and
//! its game database, on tiny inputs.

use super::config::{check, player, AmazonsExperimentConfig};
use super::database::{
    chunk_count, chunk_games, chunk_path, database_game, games_dir, make_database,
};
use super::dataset::{dataset_key, record_files};
use super::error::AmazonsExperimentError;
use super::fingerprint::{claim_out, settings_path};
use super::networks::{best_run, jobs, net_name, run_dir, Job, NetResult};
use super::run;
use super::thesis::{is_thesis_net, thesis_equity};
use crate::game::Amazons;
use crate::search::evaluators::{evaluator_by_name, EvalContext};
use crate::search::Player;
use crate::util::run_dir::RunDir;
use indicatif::ProgressBar;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A 6x6 study of random players: every game is quick to play.
pub(super) fn tiny(out: PathBuf) -> AmazonsExperimentConfig {
    let mut cfg = AmazonsExperimentConfig::quick(out);
    cfg.size = 6;
    cfg.db_games = 3;
    cfg.db_chunk = 2;
    cfg.db_max_plies = 6;
    cfg.db_players = vec!["random".into()];
    cfg.good = "random".into();
    cfg.simple = "random".into();
    cfg
}

fn config_field(cfg: &AmazonsExperimentConfig) -> Option<&'static str> {
    match check(cfg) {
        Err(AmazonsExperimentError::Config { field, .. }) => Some(field),
        _ => None,
    }
}

pub(super) fn net_result(name: &str, run_errors: &[f64]) -> NetResult {
    NetResult {
        name: name.into(),
        encoder: "amazons-units".into(),
        hidden: 8,
        best_run: best_run(run_errors).unwrap_or(0),
        run_errors: run_errors.to_vec(),
    }
}

#[test]
fn both_budgets_pass_the_check_and_quick_only_shrinks_the_work() {
    let full = AmazonsExperimentConfig::new("out".into());
    let quick = AmazonsExperimentConfig::quick("out".into());
    check(&full).unwrap();
    check(&quick).unwrap();
    assert_eq!((full.size, full.db_games, full.runs), (10, 1200, 2));
    assert_eq!(full.td.examples, 20_000);
    assert!(full
        .value_net_searches
        .iter()
        .all(|s| full.searches.contains(s)));
    assert_eq!(
        (quick.db_games, quick.runs, quick.td.examples),
        (96, 1, 1_000)
    );
    assert_eq!(quick.equity_games, 10);
    assert_eq!(quick.alphabeta, "alphabeta:depth=1");
    assert_eq!(quick.mcts, "mcts:sims=50");
    assert_eq!(quick.value_nets.epochs, 1);
    assert_eq!(quick.value_nets.search_labels.depth, 1);
    // What is studied stays the same.
    assert_eq!(quick.encoders, full.encoders);
    assert_eq!(quick.hidden, full.hidden);
    assert_eq!(quick.searches, full.searches);
    assert_eq!(quick.db_players, full.db_players);
}

#[test]
fn the_check_names_the_setting_it_refuses() {
    let base = || tiny("out".into());
    type Spoil = fn(&mut AmazonsExperimentConfig);
    let cases: [(&str, Spoil); 10] = [
        ("size", |c| c.size = 7),
        ("db_games", |c| c.db_games = 0),
        ("db_games", |c| c.db_chunk = 0),
        ("db_players", |c| c.db_players.clear()),
        ("searches", |c| c.searches = vec![0, 3]),
        ("searches", |c| c.value_net_searches = vec![3]),
        ("networks", |c| c.runs = 0),
        ("networks", |c| c.hidden.clear()),
        ("test_fraction", |c| c.test_fraction = 1.0),
        ("value-nets", |c| {
            c.value_nets.models = vec!["no-such-model".into()]
        }),
    ];
    for (field, spoil) in cases {
        let mut cfg = base();
        spoil(&mut cfg);
        assert_eq!(config_field(&cfg), Some(field), "{field}");
    }
    let mut cfg = base();
    cfg.test_fraction = 0.0;
    assert_eq!(config_field(&cfg), Some("test_fraction"));
    let mut cfg = base();
    cfg.good = "no-such-player".into();
    assert!(matches!(
        check(&cfg),
        Err(AmazonsExperimentError::Player(_))
    ));
    check(&base()).unwrap();
}

#[test]
fn networks_and_their_runs_are_named_as_the_thesis_names_them() {
    assert_eq!(net_name("amazons-units", 40), "UNITS-40");
    assert_eq!(net_name("amazons-territory", 160), "TERRITORY-160");
    assert_eq!(net_name("bits", 8), "BITS-8");
    assert_eq!(
        run_dir(Path::new("out"), "amazons-mobility", 80, 1),
        Path::new("out/nets/MOBILITY-80/run-1")
    );
}

#[test]
fn the_grid_runs_by_encoder_then_hidden_size_then_run() {
    let job = |encoder, hidden, run| Job {
        encoder,
        hidden,
        run,
    };
    assert_eq!(
        jobs(2, &[40, 80], 2),
        vec![
            job(0, 40, 0),
            job(0, 40, 1),
            job(0, 80, 0),
            job(0, 80, 1),
            job(1, 40, 0),
            job(1, 40, 1),
            job(1, 80, 0),
            job(1, 80, 1),
        ]
    );
    assert!(jobs(0, &[40], 2).is_empty());
    assert!(jobs(2, &[40], 0).is_empty());
}

#[test]
fn the_kept_run_is_the_first_of_the_lowest_test_error() {
    assert_eq!(best_run(&[0.4, 0.3, 0.35]), Some(1));
    assert_eq!(best_run(&[0.3, 0.2, 0.2]), Some(1));
    assert_eq!(best_run(&[0.5]), Some(0));
    assert_eq!(best_run(&[]), None);
    let n = net_result("UNITS-8", &[0.4, 0.3]);
    assert_eq!(n.best_error(), 0.3);
    let lost = NetResult { best_run: 5, ..n };
    assert_eq!(lost.best_error(), f64::INFINITY);
}

#[test]
fn the_thesis_figures_belong_to_their_evaluators() {
    assert!(is_thesis_net("UNITS-40") && is_thesis_net("BITS-8"));
    assert!(!is_thesis_net("TERRITORY-40") && !is_thesis_net("lieberum"));
    // Against good, the thesis has one row for all its networks.
    assert_eq!(thesis_equity("lieberum", 1, "good"), Some(-0.02));
    assert_eq!(thesis_equity("BITS-8", 0, "good"), Some(-1.0));
    assert_eq!(thesis_equity("TERRITORY-40", 0, "good"), None);
    // Against simple, each network has its own.
    assert_eq!(thesis_equity("UNITS-80", 2, "simple"), Some(-0.68));
    assert_eq!(thesis_equity("MOBILITY-40", 2, "simple"), Some(-0.50));
    assert_eq!(thesis_equity("BITS-8", 0, "simple"), None);
}

#[test]
fn the_database_is_cut_into_chunks_of_games() {
    let mut cfg = tiny("out".into());
    cfg.db_games = 10;
    cfg.db_chunk = 4;
    assert_eq!(chunk_count(&cfg), 3);
    assert_eq!(chunk_games(&cfg, 0), 0..4);
    assert_eq!(chunk_games(&cfg, 2), 8..10);
    let dir = games_dir(&cfg.out);
    assert_eq!(dir, Path::new("out/db/games"));
    assert_eq!(
        chunk_path(&dir, 2, "jsonl"),
        Path::new("out/db/games/part-00002.jsonl")
    );
    let files = record_files(&cfg);
    assert_eq!(files.len(), 3);
    assert_eq!(files[0], dir.join("part-00000.jsonl"));
}

#[test]
fn the_dataset_key_changes_with_the_records_the_split_and_the_encoder() {
    let key = dataset_key(b"records", 0.1, "amazons-bits");
    assert!(key.starts_with("records ") && key.ends_with(", test 0.1, encoder amazons-bits"));
    assert_ne!(dataset_key(b"other", 0.1, "amazons-bits"), key);
    assert_ne!(dataset_key(b"records", 0.2, "amazons-bits"), key);
    assert_ne!(dataset_key(b"records", 0.1, "amazons-territory"), key);
    assert_eq!(dataset_key(b"records", 0.1, "amazons-bits"), key);
}

#[test]
fn a_database_game_is_seeded_by_its_index_and_counted_once() {
    let cfg = tiny("out".into());
    let players: Vec<Arc<dyn Player<Amazons>>> = vec![player(&cfg, "random").unwrap()];
    let other = player(&cfg, "random").unwrap();
    let judge = evaluator_by_name::<Amazons>("lieberum", 6, &EvalContext::default()).unwrap();
    let play = |i| {
        database_game(
            &cfg,
            &players,
            other.as_ref(),
            other.as_ref(),
            judge.as_ref(),
            i,
        )
        .unwrap()
    };
    for index in 0..4 {
        let (record, stats) = play(index);
        assert_eq!(stats.played, 1);
        assert_eq!(stats.finished + stats.adjudicated + stats.rejected, 1);
        assert_eq!(record.is_some(), stats.rejected == 0);
        let Some(record) = record else { continue };
        assert_eq!(record.id, format!("amazons-db-{index:06}"));
        assert_eq!(record.plies as usize, record.moves.len());
        assert_eq!(record.board_size, Some(6));
        if stats.adjudicated == 1 {
            assert_eq!(record.termination, "adjudicated");
            assert_eq!(record.moves.len(), cfg.db_max_plies);
        }
        let (again, _) = play(index);
        assert_eq!(
            serde_json::to_string(&again).unwrap(),
            serde_json::to_string(&Some(record)).unwrap()
        );
    }
}

#[test]
fn the_database_resumes_from_its_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tiny(tmp.path().join("study"));
    let said = RefCell::new(Vec::<String>::new());
    let say = |s: &str| said.borrow_mut().push(s.to_string());
    let progress = |_: u64, _: &str| ProgressBar::hidden();
    let first = make_database(&cfg, &progress, &say).unwrap();
    assert_eq!(first.played, 3);
    assert_eq!(first.finished + first.adjudicated + first.rejected, 3);
    assert_eq!(
        *said.borrow(),
        ["database: playing 2 of 2 chunks of 2 games"]
    );
    let dir = games_dir(&cfg.out);
    let read = |c| std::fs::read_to_string(chunk_path(&dir, c, "jsonl")).unwrap();
    let (records0, records1) = (read(0), read(1));
    assert!(records0.lines().count() <= 2 && records1.lines().count() <= 1);

    said.borrow_mut().clear();
    let again = make_database(&cfg, &progress, &say).unwrap();
    assert!(said.borrow().is_empty());
    assert_eq!(again.played, 3);
    assert_eq!(again.finished, first.finished);

    std::fs::remove_file(chunk_path(&dir, 0, "json")).unwrap();
    make_database(&cfg, &progress, &say).unwrap();
    assert_eq!(
        *said.borrow(),
        ["database: playing 1 of 2 chunks of 2 games"]
    );
    // The same games again: each is seeded by its index.
    assert_eq!((read(0), read(1)), (records0, records1));
}

#[test]
fn a_grown_database_replays_only_its_short_last_chunk() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = tiny(tmp.path().join("study"));
    let said = RefCell::new(Vec::<String>::new());
    let say = |s: &str| said.borrow_mut().push(s.to_string());
    let progress = |_: u64, _: &str| ProgressBar::hidden();
    make_database(&cfg, &progress, &say).unwrap();
    let dir = games_dir(&cfg.out);
    let read = |c| std::fs::read_to_string(chunk_path(&dir, c, "jsonl")).unwrap();
    let first = read(0);
    // 3 games were 2 chunks, the last of one game; 4 fill it.
    cfg.db_games = 4;
    said.borrow_mut().clear();
    let grown = make_database(&cfg, &progress, &say).unwrap();
    assert_eq!(
        *said.borrow(),
        ["database: playing 1 of 2 chunks of 2 games"]
    );
    assert_eq!(grown.played, 4);
    assert_eq!(read(0), first);
    // Played from scratch, the same database.
    let mut fresh = tiny(tmp.path().join("fresh"));
    fresh.db_games = 4;
    make_database(&fresh, &progress, &say).unwrap();
    let fresh_dir = games_dir(&fresh.out);
    for c in 0..2 {
        assert_eq!(
            read(c),
            std::fs::read_to_string(chunk_path(&fresh_dir, c, "jsonl")).unwrap()
        );
    }
}

#[test]
fn a_held_folder_refuses_the_study_before_it_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tiny(tmp.path().join("study"));
    let held = RunDir::claim(&cfg.out).unwrap();
    let progress = |_: u64, _: &str| ProgressBar::hidden();
    let err = run(&cfg, &progress, &|_| {}).unwrap_err();
    assert!(matches!(err, AmazonsExperimentError::RunDir(_)), "{err}");
    crate::util::run_dir::assert_refused_as_held(&err, &cfg.out);
    assert!(!cfg.out.exists());
    drop(held);
    drop(claim_out(&cfg).unwrap());
}

#[test]
fn the_database_settings_are_stored_and_other_ones_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = tiny(tmp.path().join("study"));
    drop(claim_out(&cfg).unwrap());
    let stored = std::fs::read_to_string(settings_path(&cfg.out)).unwrap();
    assert!(
        stored.contains("\"seed\": 1") && stored.ends_with("}\n"),
        "{stored}"
    );
    // What later stages key by their own files may change.
    let mut later = tiny(cfg.out.clone());
    later.equity_games += 10;
    later.db_games += 5;
    later.hidden = vec![4];
    later.td.examples += 1;
    later.value_nets.models.clear();
    drop(claim_out(&later).unwrap());
    type Change = fn(&mut AmazonsExperimentConfig);
    let cases: [(&str, &str, Change); 4] = [
        ("seed", "was 1, now 2", |c| c.seed = 2),
        ("size", "was 6, now 8", |c| c.size = 8),
        ("db_players", r#"was ["random"], now ["greedy"]"#, |c| {
            c.db_players = vec!["greedy".into()]
        }),
        ("good", r#"was "random", now "greedy""#, |c| {
            c.good = "greedy".into()
        }),
    ];
    for (field, values, change) in cases {
        let mut other = tiny(cfg.out.clone());
        change(&mut other);
        let err = claim_out(&other).unwrap_err();
        let AmazonsExperimentError::Settings { difference, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!(difference.field, field);
        let msg = err.to_string();
        assert!(msg.contains(&format!("`{field}` {values}")), "{msg}");
        assert!(msg.contains("settings.json"), "{msg}");
    }
    // A refused start leaves the folder free.
    drop(claim_out(&cfg).unwrap());
}
