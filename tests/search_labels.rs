//! `plies dataset relabel` / `label_by_search`: a dataset's labels
//! replaced by alpha-beta values of its positions. Checked against a
//! perfect Tic-tac-toe solver written here, against Lieberum's evaluation
//! of every Amazons child at depth 1, mixed with the results, and refused
//! where it cannot be done.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{plies, text};
use plies::dataset::{Dataset, PositionRow};
use plies::game::{Amazons, Game, Outcome, Side, TicTacToe};
use plies::games::GameSupport;
use plies::positions::{build_dataset, label_by_search, BuildOptions, SearchLabels, Terminations};
use plies::record::{GameRecord, PerSide};

/// `games` random games of `G` on its `size` board, as records.
fn random_records<G: GameSupport>(size: usize, games: usize, max_plies: usize) -> Vec<GameRecord> {
    (0..games)
        .map(|i| {
            let (moves, outcome) = common::random_game::<G>(size, i as u64, max_plies);
            // Games cut short are given to the first player: the labels of
            // their positions are only what the search replaces.
            let (result, termination) = match outcome {
                Some(Outcome::Win(side)) => (Some(side), "win"),
                Some(Outcome::Draw) => (None, "draw"),
                None => (Some(Side::First), "adjudicated"),
            };
            GameRecord {
                game: G::NAME.into(),
                id: format!("g{i}"),
                source: "test".into(),
                event: String::new(),
                players: PerSide::new("a".into(), "b".into()),
                ratings: PerSide::new(None, None),
                player_types: None,
                setups: vec![],
                plies: moves.len() as u32,
                moves,
                result,
                termination: termination.into(),
                rated: None,
                start_time: None,
                board_size: (size != G::DEFAULT_SIZE).then_some(size),
                explored: Vec::new(),
            }
        })
        .collect()
}

/// A dataset of those games in the game's first encoder at `dir/data`.
fn dataset<G: GameSupport>(dir: &Path, size: usize, games: usize, max_plies: usize) -> PathBuf {
    let records = dir.join("games.jsonl");
    let lines: String = random_records::<G>(size, games, max_plies)
        .iter()
        .map(|r| r.to_json_line() + "\n")
        .collect();
    std::fs::write(&records, lines).unwrap();
    let out = dir.join("data");
    let encoder = Arc::from(G::encoder(G::ENCODERS[0], size).unwrap());
    let mut options = BuildOptions::new::<G>();
    options.filters.terminations = Terminations::All;
    options.strict = true;
    build_dataset::<G>(&[records], &out, encoder, size, &options, None).unwrap();
    out
}

/// Perfect-play value of a Tic-tac-toe position for its side to move.
fn solve(g: &TicTacToe) -> i32 {
    match g.outcome() {
        Some(Outcome::Draw) => return 0,
        Some(Outcome::Win(w)) => return if w == g.side_to_move() { 1 } else { -1 },
        None => {}
    }
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    moves
        .iter()
        .map(|&m| {
            let mut c = *g;
            c.play(m);
            -solve(&c)
        })
        .max()
        .unwrap()
}

fn rows(dir: &Path) -> Vec<PositionRow> {
    Dataset::open(dir).unwrap().rows(None).unwrap()
}

#[test]
fn a_full_depth_search_labels_tic_tac_toe_with_its_perfect_play_values() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset::<TicTacToe>(tmp.path(), 3, 40, 9);
    let out = tmp.path().join("solved");
    let labels = SearchLabels {
        // The leaves' evaluator never speaks: depth 9 reaches every end.
        eval: "random".into(),
        depth: 9,
        mix: 1.0,
    };
    let report = label_by_search::<TicTacToe>(&data, &out, &labels, None).unwrap();
    let (before, after) = (rows(&data), rows(&out));
    assert_eq!(before.len(), after.len());
    assert_eq!(report.rows, after.len() as u64);
    let mut searched = 0;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(
            (&b.game_id, b.ply, &b.planes),
            (&a.game_id, a.ply, &a.planes)
        );
        let g = TicTacToe::from_text(&a.position).unwrap();
        if g.outcome().is_some() {
            assert_eq!(a.label, b.label, "a finished game keeps its result");
        } else {
            searched += 1;
            let want = (solve(&g) as f32 + 1.0) / 2.0;
            assert_eq!(a.label, want, "{} ply {}: {}", a.game_id, a.ply, a.position);
        }
    }
    assert_eq!(report.searched, searched);
    assert!(searched > 100, "{searched}");
    // The empty board is a draw.
    let start = after.iter().find(|r| r.ply == 0).unwrap();
    assert_eq!(start.label, 0.5);
    // Split and manifest provenance are those of a dataset like any other.
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.spec(), Dataset::open(&data).unwrap().spec());
    assert_eq!(
        ds.manifest().provenance["search_labels"]["depth"],
        serde_json::json!(9)
    );
}

#[test]
fn depth_one_labels_are_the_best_child_under_lieberum_and_mix_with_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset::<Amazons>(tmp.path(), 6, 6, 12);
    let hand = Amazons::hand_eval("lieberum").unwrap();
    let half = SearchLabels {
        eval: "lieberum".into(),
        depth: 1,
        mix: 0.5,
    };
    let out = tmp.path().join("half");
    label_by_search::<Amazons>(&data, &out, &half, None).unwrap();
    let mut checked = 0;
    for (b, a) in rows(&data).iter().zip(&rows(&out)) {
        let g = Amazons::from_text(&a.position).unwrap();
        if g.outcome().is_some() {
            assert_eq!(a.label, b.label);
            continue;
        }
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        let best = moves
            .iter()
            .map(|&m| {
                let mut c = g;
                c.play(m);
                match c.outcome() {
                    Some(Outcome::Win(w)) if w == g.side_to_move() => 1.0,
                    Some(_) => -1.0,
                    None => -hand.value(&c),
                }
            })
            .fold(f32::MIN, f32::max);
        let want = 0.5 * b.label + 0.5 * (best + 1.0) / 2.0;
        assert!(
            (a.label - want).abs() < 1e-4,
            "{}: {} vs {want}",
            a.position,
            a.label
        );
        checked += 1;
    }
    assert!(checked > 50, "{checked}");
}

#[test]
fn the_command_relabels_and_refuses_what_it_cannot_do() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset::<TicTacToe>(tmp.path(), 3, 10, 9);
    let data_s = data.to_str().unwrap();
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["dataset", "relabel", data_s, "--quiet"];
        args.extend_from_slice(extra);
        plies(&args)
    };
    let o = run(&["--out", out_s, "--eval", "random", "--depth", "9", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(report["rows"], serde_json::json!(rows(&data).len()));
    // Every perfect-play value is a win, a draw or a loss.
    assert!(rows(&out)
        .iter()
        .all(|r| [0.0, 0.5, 1.0].contains(&r.label)));
    for (args, says) in [
        (vec!["--out", out_s, "--eval", "material"], "--eval"),
        (
            vec!["--out", out_s, "--eval", "random", "--mix", "1.5"],
            "--mix",
        ),
        (
            vec!["--out", out_s, "--eval", "random", "--depth", "0"],
            "--depth",
        ),
        (vec!["--out", data_s, "--eval", "random"], "--out"),
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?} was accepted");
        assert!(text(&o).contains(says), "{args:?}: {}", text(&o));
    }
    let o = plies(&[
        "dataset", "relabel", "nowhere", "--out", out_s, "--eval", "random",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("nowhere"), "{}", text(&o));
    // The refused runs left the first output as it was.
    assert!(Dataset::open(&out).unwrap().verify().is_ok());
}

#[test]
fn a_position_that_does_not_read_back_is_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset::<TicTacToe>(tmp.path(), 3, 4, 9);
    let ds = Dataset::open(&data).unwrap();
    let mut rows = ds.rows(None).unwrap();
    rows[3].position = "not a board".into();
    let (game, ply) = (rows[3].game_id.clone(), rows[3].ply);
    let bad = tmp.path().join("bad");
    let mut w = plies::dataset::DatasetWriter::create(&bad, ds.spec()).unwrap();
    for r in rows {
        w.push(r).unwrap();
    }
    w.finish(serde_json::Value::Null).unwrap();
    let out = tmp.path().join("out");
    let labels = SearchLabels {
        eval: "random".into(),
        depth: 1,
        mix: 1.0,
    };
    let e = label_by_search::<TicTacToe>(&bad, &out, &labels, None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad") && e.contains(&format!("ply {ply}")) && e.contains(&game),
        "{e}"
    );
    assert!(!out.exists(), "a failed relabel wrote {}", out.display());
}
