//! `plies dataset build | verify | stats`: filters with exact counts,
//! labels and heights, folds, determinism across thread counts, bad records,
//! every encoder family, and crash safety (kill mid-write, corrupt shard).

mod common;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{plies, text};
use plies::dataset::{fold_of, staging_dir, Dataset, STAGING_DIR};
use plies::game::{Amazons, AtariGo, Game, Gomoku, Outcome, Pentago, Side, TicTacToe};
use plies::record::{GameRecord, PerSide};

fn record(
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

fn ttt(
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

fn write_jsonl(path: &Path, records: &[GameRecord]) {
    let mut s = String::new();
    for r in records {
        s.push_str(&r.to_json_line());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

/// A random game of `G` from the start position at `size`, as a record
/// (winner from the rules; draws marked `draw`).
fn random_record<G: Game>(id: &str, size: usize, seed: u64, max_plies: usize) -> GameRecord {
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

fn build(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["dataset", "build", "--quiet", "--json"];
    all.extend_from_slice(args);
    let o = plies(&all);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

/// The seven hand-made Tic-tac-toe games of the filter tests.
fn filter_games() -> Vec<GameRecord> {
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

fn dropped(report: &serde_json::Value, filter: &str) -> (u64, u64) {
    let d = &report["dropped"][filter];
    (
        d["games"].as_u64().unwrap(),
        d["positions"].as_u64().unwrap(),
    )
}

#[test]
fn filters_drop_exactly_what_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &filter_games());
    let out = dir.path().join("ds");
    let out_s = out.to_str().unwrap();
    let recs_s = recs.to_str().unwrap();

    // Defaults: resignation and unfinished are dropped, ratings ignored.
    let r = build(&["--records", recs_s, "--out", out_s]);
    assert_eq!(r["games_read"], 7);
    assert_eq!(r["positions_read"], 6 + 7 + 3 + 6 + 2 + 6 + 7);
    assert_eq!(dropped(&r, "termination"), (2, 6 + 2));
    assert_eq!(dropped(&r, "min_rating"), (0, 0));
    assert_eq!(r["games_kept"], 5);
    assert_eq!(r["positions"], 6 + 7 + 3 + 6 + 7);
    assert!(out.join("build-report.json").exists());

    // --min-rating 1500 --last-plies 4.
    let r = build(&[
        "--records",
        recs_s,
        "--out",
        out_s,
        "--force",
        "--min-rating",
        "1500",
        "--last-plies",
        "4",
    ]);
    assert_eq!(dropped(&r, "termination"), (2, 8));
    assert_eq!(dropped(&r, "min_rating"), (2, 6 + 7));
    assert_eq!(r["games_kept"], 3);
    // win1 keeps 4 of 6, win2 4 of 7, draw all 3.
    assert_eq!(r["positions"], 4 + 4 + 3);
    assert_eq!(dropped(&r, "last_plies"), (2, 2 + 3));
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.num_rows(None), 11);
    assert!(ds
        .rows(None)
        .unwrap()
        .iter()
        .all(|row| row.plies_to_end < 4));

    // --terminations all: the unfinished game is dropped for having no result.
    let r = build(&[
        "--records",
        recs_s,
        "--out",
        out_s,
        "--force",
        "--terminations",
        "all",
    ]);
    assert_eq!(dropped(&r, "termination"), (0, 0));
    assert_eq!(dropped(&r, "no_result"), (1, 2));
    assert_eq!(r["games_kept"], 6);

    // An explicit list.
    let r = build(&[
        "--records",
        recs_s,
        "--out",
        out_s,
        "--force",
        "--terminations",
        "resignation",
    ]);
    assert_eq!(r["games_kept"], 1);
    assert_eq!(r["positions"], 6);

    // Without --force an existing dataset is kept.
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--records",
        recs_s,
        "--out",
        out_s,
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--force"), "{}", text(&o));
}

#[test]
fn labels_and_heights_follow_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &filter_games());
    let out = dir.path().join("ds");
    build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let games = Dataset::open(&out).unwrap().games(None).unwrap();
    let by_id: HashMap<&str, &Vec<_>> = games.iter().map(|g| (g[0].game_id.as_str(), g)).collect();
    let winner = |id: &str, side: u8| {
        let rows = by_id[id];
        let n = rows.len() as u32 - 1;
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.ply, i as u32);
            assert_eq!(r.plies_to_end, n - i as u32, "{id}");
            assert_eq!(r.side_to_move, (i % 2) as u8);
            let want = if r.side_to_move == side { 1.0 } else { 0.0 };
            assert_eq!(r.label, want, "{id} ply {i}");
            assert_eq!(r.move_played.is_none(), i as u32 == n);
            assert_eq!(r.termination.as_deref(), Some("line"));
            assert_eq!((r.white_rating, r.black_rating), (Some(1600), Some(1700)));
        }
    };
    winner("win1", 0);
    winner("win2", 1);
    assert!(by_id["draw"].iter().all(|r| r.label == 0.5));
    assert_eq!(
        TicTacToe::from_text(&by_id["win1"][5].position)
            .unwrap()
            .outcome(),
        Some(Outcome::Win(Side::First))
    );
}

fn random_ttt(n: usize, seed: u64) -> Vec<GameRecord> {
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

fn shard_hashes(dir: &Path) -> Vec<String> {
    Dataset::open(dir)
        .unwrap()
        .manifest()
        .shards
        .iter()
        .map(|s| s.sha256.clone())
        .collect()
}

#[test]
fn output_is_the_same_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &random_ttt(3000, 1));
    let mut hashes = Vec::new();
    for threads in ["1", "2", "3"] {
        let out = dir.path().join(format!("ds{threads}"));
        build(&[
            "--records",
            recs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
            "--shard-rows",
            "2000",
        ]);
        hashes.push(shard_hashes(&out));
    }
    assert!(hashes[0].len() > 3, "{hashes:?}");
    assert_eq!(hashes[0], hashes[1]);
    assert_eq!(hashes[0], hashes[2]);
}

#[test]
fn folds_are_in_range_stable_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &random_ttt(400, 2));
    let out = dir.path().join("ds");
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--folds",
        "3",
    ]);
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.manifest().folds.k, 3);
    let mut per_fold = [0u64; 3];
    for shard in &ds.manifest().shards {
        let file = File::open(out.join(&shard.file)).unwrap();
        for batch in arrow_ipc::reader::FileReader::try_new(file, None).unwrap() {
            let batch = batch.unwrap();
            let ids = batch
                .column_by_name("game_id")
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap();
            let folds = batch
                .column_by_name("fold")
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::UInt8Array>()
                .unwrap();
            for i in 0..batch.num_rows() {
                let f = folds.value(i);
                assert!(f < 3);
                assert_eq!(f, fold_of(ids.value(i), 3));
                per_fold[f as usize] += 1;
            }
        }
    }
    assert!(per_fold.iter().all(|&n| n > 0), "{per_fold:?}");
    assert_eq!(
        per_fold.iter().sum::<u64>(),
        r["positions"].as_u64().unwrap()
    );

    let o = plies(&["dataset", "verify", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows_per_fold"], serde_json::json!(per_fold));
    let o = plies(&["dataset", "stats", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["rows_per_fold"], serde_json::json!(per_fold));
    let heights: u64 = s["heights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(heights, r["positions"].as_u64().unwrap());
    assert_eq!(s["heights"][0]["from"], 0);
    assert_eq!(s["heights"][0]["to"], 9);
    let table = text(&plies(&["dataset", "stats", out.to_str().unwrap()]));
    assert!(
        table.contains("plies to end") && table.contains("0-9"),
        "{table}"
    );
    // The old command shares the code.
    let o = plies(&["data", "verify", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn bad_records_are_reported_with_file_and_line_and_strict_stops() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    let good = ttt("good", &["a1", "b1"], None, "draw", (None, None));
    let illegal = ttt(
        "twice",
        &["a1", "a1"],
        Some(Side::First),
        "line",
        (None, None),
    );
    let text_in = format!(
        "{}\n{{not json\n\n{}\n",
        good.to_json_line(),
        illegal.to_json_line()
    );
    std::fs::write(&recs, text_in).unwrap();
    let out = dir.path().join("ds");
    let args = [
        "dataset",
        "build",
        "--quiet",
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = plies(&args);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(all.contains("games.jsonl:2:"), "{all}");
    assert!(
        all.contains("games.jsonl:4: game twice: ply 1: move 'a1' refused"),
        "{all}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build-report.json")).unwrap()).unwrap();
    assert_eq!(dropped(&report, "bad_record"), (2, 3));
    assert_eq!(report["games_kept"], 1);
    assert_eq!(report["bad_records"].as_array().unwrap().len(), 2);

    let mut strict = args.to_vec();
    strict.extend(["--strict", "--force"]);
    let o = plies(&strict);
    assert!(!o.status.success());
    assert!(text(&o).contains("games.jsonl:2:"), "{}", text(&o));
    // A first line that is not a record: the game is taken from the next one.
    let first_bad = dir.path().join("first-bad.jsonl");
    std::fs::write(&first_bad, format!("oops\n{}\n", good.to_json_line())).unwrap();
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--records",
        first_bad.to_str().unwrap(),
        "--out",
        dir.path().join("ds-first-bad").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("first-bad.jsonl:1:"), "{}", text(&o));

    // The failed overwrite left the old dataset as it was, and no staging folder.
    assert_eq!(Dataset::open(&out).unwrap().num_rows(None), 3);
    assert!(!staging_dir(&out).exists());
}

#[test]
fn duplicate_ids_across_files_name_both() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    let g = ttt("same", &["a1"], None, "draw", (None, None));
    write_jsonl(
        &a,
        &[ttt("other", &["b2"], None, "draw", (None, None)), g.clone()],
    );
    write_jsonl(&b, &[g]);
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--records",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        dir.path().join("ds").to_str().unwrap(),
    ]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains("`same`") && all.contains("a.jsonl:2") && all.contains("b.jsonl:1"),
        "{all}"
    );

    // Found after shards were written: they are removed, so the directory
    // takes a new build without --force.
    let many = dir.path().join("many.jsonl");
    let games = random_ttt(1500, 6);
    write_jsonl(&many, &games);
    write_jsonl(&b, &games[..1]);
    let out = dir.path().join("ds2");
    let args = |files: &[&Path]| {
        let mut v = vec![
            "dataset",
            "build",
            "--quiet",
            "--shard-rows",
            "100",
            "--records",
        ];
        v.extend(files.iter().map(|f| f.to_str().unwrap()));
        v.extend(["--out", out.to_str().unwrap()]);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let a1: Vec<String> = args(&[&many, &b]);
    let o = plies(&a1.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("many.jsonl:1"), "{}", text(&o));
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    let a2: Vec<String> = args(&[&many]);
    let o = plies(&a2.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
}

fn check_family(dir: &Path, name: &str, records: &[GameRecord], encoder: &str, shape: [usize; 3]) {
    let recs = dir.join(format!("{name}.jsonl"));
    write_jsonl(&recs, records);
    let out = dir.join(format!("{name}-{encoder}"));
    // The game is inferred from the records.
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--encoder",
        encoder,
        "--terminations",
        "all",
    ]);
    assert!(r["positions"].as_u64().unwrap() > 0, "{name}: {r}");
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.manifest().encoder.name, encoder);
    assert_eq!(ds.manifest().encoder.shape, shape, "{name} {encoder}");
    ds.verify().unwrap();
    let rows = ds.rows(None).unwrap();
    assert!(rows
        .iter()
        .all(|r| r.planes.len() == shape.iter().product::<usize>()));
}

#[test]
fn amazons_and_stone_encoders_go_through_the_same_command() {
    let dir = tempfile::tempdir().unwrap();
    let amazons: Vec<_> = (0..6)
        .map(|i| random_record::<Amazons>(&format!("am{i}"), 6, i, 400))
        .collect();
    for enc in ["amazons-units", "amazons-mobility", "amazons-bits"] {
        let planes = if enc == "amazons-bits" { 4 } else { 2 };
        check_family(dir.path(), "amazons", &amazons, enc, [planes, 6, 6]);
    }
    let gomoku: Vec<_> = (0..6)
        .map(|i| random_record::<Gomoku>(&format!("go{i}"), 9, i, 400))
        .collect();
    check_family(dir.path(), "gomoku", &gomoku, "stones-2", [2, 9, 9]);
    let atari: Vec<_> = (0..6)
        .map(|i| random_record::<AtariGo>(&format!("ag{i}"), 7, i, 400))
        .collect();
    check_family(dir.path(), "atari", &atari, "stones-2", [2, 7, 7]);
    let pentago: Vec<_> = (0..6)
        .map(|i| random_record::<Pentago>(&format!("pe{i}"), Pentago::DEFAULT_SIZE, i, 400))
        .collect();
    check_family(
        dir.path(),
        "pentago",
        &pentago,
        "stones-2",
        [2, Pentago::DEFAULT_SIZE, Pentago::DEFAULT_SIZE],
    );
    let ttt = random_ttt(20, 3);
    check_family(dir.path(), "ttt", &ttt, "stones-2", [2, 3, 3]);
}

fn staged_shards(dir: &Path) -> usize {
    std::fs::read_dir(staging_dir(dir))
        .map(|e| e.flatten().count())
        .unwrap_or(0)
}

#[test]
fn an_interrupted_overwrite_keeps_the_old_dataset_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.jsonl");
    write_jsonl(&small, &random_ttt(50, 4));
    let big = dir.path().join("big.jsonl");
    write_jsonl(&big, &random_ttt(60_000, 5));
    let out = dir.path().join("ds");
    let r = build(&[
        "--records",
        small.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let old_rows = r["positions"].as_u64().unwrap();
    let old_hashes = shard_hashes(&out);

    // (b) A bigger build into the same directory, killed mid-write.
    let mut child = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args([
            "dataset",
            "build",
            "--quiet",
            "--force",
            "--threads",
            "1",
            "--shard-rows",
            "500",
            "--records",
            big.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while staged_shards(&out) < 2 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before it could be interrupted"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "no shard staged");
        std::thread::sleep(Duration::from_millis(2));
    }
    // One writer per directory: a second build is refused, naming the first.
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--force",
        "--records",
        small.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains(&format!("pid {}", child.id())) && all.contains("dataset build"),
        "{all}"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.num_rows(None), old_rows);
    assert_eq!(shard_hashes(&out), old_hashes);
    let report = ds.verify().unwrap();
    assert!(!report.interrupted_write.is_empty());
    let o = plies(&["dataset", "verify", out.to_str().unwrap()]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("interrupted write") && all.contains(STAGING_DIR),
        "{all}"
    );
    let o = plies(&["dataset", "stats", out.to_str().unwrap()]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("interrupted write") && all.contains(STAGING_DIR),
        "{all}"
    );

    // Shards without a manifest: a half-written dataset, named as such.
    let half = dir.path().join("half");
    std::fs::create_dir(&half).unwrap();
    for shard in &ds.manifest().shards {
        std::fs::copy(out.join(&shard.file), half.join(&shard.file)).unwrap();
    }
    for cmd in ["verify", "stats"] {
        let o = plies(&["dataset", cmd, half.to_str().unwrap()]);
        let all = text(&o);
        assert!(!o.status.success(), "{all}");
        assert!(all.contains("interrupted/half-written dataset"), "{all}");
        assert!(all.contains("part-00000.arrow"), "{all}");
    }

    // A new --force build cleans up and replaces the dataset.
    let r = build(&[
        "--records",
        small.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(r["positions"].as_u64().unwrap(), old_rows);
    assert!(!staging_dir(&out).exists());
    assert!(Dataset::open(&out)
        .unwrap()
        .verify()
        .unwrap()
        .interrupted_write
        .is_empty());

    // (c) A corrupt shard: verify fails naming it.
    let shard: PathBuf = out.join("part-00000.arrow");
    let mut bytes = std::fs::read(&shard).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&shard, bytes).unwrap();
    let o = plies(&["dataset", "verify", out.to_str().unwrap()]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains("part-00000.arrow") && all.contains("corrupt"),
        "{all}"
    );
}

#[test]
fn arimaa_archive_games_with_the_study_filters() {
    let dir = tempfile::tempdir().unwrap();
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/arimaa/allgames2002.txt");
    let imported = dir.path().join("imported");
    let o = plies(&[
        "import",
        "--game",
        "arimaa",
        archive.to_str().unwrap(),
        "--out",
        imported.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let recs = imported.join("games.jsonl");
    let records = plies::record::read_records(&recs).unwrap();
    let meaningful = |r: &GameRecord| {
        ["goal", "elimination", "immobilization"].contains(&r.termination.as_str())
    };
    let rated = |r: &GameRecord| {
        r.ratings.first.is_some_and(|x| x >= 1500) && r.ratings.second.is_some_and(|x| x >= 1500)
    };
    let out = dir.path().join("ds");
    // The game is inferred from the records; defaults: the meaningful endings.
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let kept: Vec<&GameRecord> = records.iter().filter(|r| meaningful(r)).collect();
    assert!(!kept.is_empty() && kept.len() < records.len());
    assert_eq!(r["games_read"], records.len() as u64);
    assert_eq!(r["games_kept"], kept.len() as u64);
    let positions: u64 = kept.iter().map(|r| r.plies as u64 + 1).sum();
    assert_eq!(r["positions"], positions);
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.manifest().game, "arimaa");
    assert_eq!(ds.manifest().encoder.shape, [6, 8, 8]);
    ds.verify().unwrap();
    for row in ds.rows(None).unwrap() {
        let t = row.termination.as_deref().unwrap();
        assert!(
            ["goal", "elimination", "immobilization"].contains(&t),
            "{t}"
        );
    }

    // The study's settings: last 10 positions, both players rated 1500+.
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
        "--game",
        "arimaa",
        "--last-plies",
        "10",
        "--min-rating",
        "1500",
    ]);
    let kept: Vec<&GameRecord> = records
        .iter()
        .filter(|r| meaningful(r) && rated(r))
        .collect();
    assert_eq!(r["games_kept"], kept.len() as u64);
    let positions: u64 = kept.iter().map(|r| (r.plies as u64 + 1).min(10)).sum();
    assert_eq!(r["positions"], positions);
    assert_eq!(
        dropped(&r, "min_rating").0,
        records
            .iter()
            .filter(|r| meaningful(r) && !rated(r))
            .count() as u64
    );

    // --game must agree with the records.
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--game",
        "gomoku",
        "--records",
        recs.to_str().unwrap(),
        "--out",
        dir.path().join("other").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("arimaa game"), "{}", text(&o));
}

/// A records file behind a UTF-8 byte-order mark builds the same dataset.
#[test]
fn a_byte_order_mark_loses_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, bom) = (dir.path().join("plain.jsonl"), dir.path().join("bom.jsonl"));
    write_jsonl(&plain, &filter_games());
    let text = std::fs::read(&plain).unwrap();
    std::fs::write(&bom, [b"\xEF\xBB\xBF".as_slice(), &text].concat()).unwrap();
    let report = |records: &Path, out: &str| {
        let out = dir.path().join(out);
        build(&[
            "--records",
            records.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let (a, b) = (report(&plain, "a"), report(&bom, "b"));
    assert_eq!(a["games_read"], 7);
    for k in ["games_read", "games_kept", "positions_read", "positions"] {
        assert_eq!(a[k], b[k], "{k}");
    }
}
