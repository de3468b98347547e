use super::*;
use crate::dataset::{EncoderInfo, PolicyTarget, Split};

fn spec() -> DatasetSpec {
    DatasetSpec {
        shard_rows: 4,
        ..DatasetSpec::new(
            "tic_tac_toe",
            EncoderInfo {
                name: "ttt".into(),
                version: 1,
                shape: [2, 3, 3],
                globals: 1,
            },
        )
    }
}

fn row(game: &str, ply: u32) -> PositionRow {
    PositionRow {
        position: format!("pos{ply}"),
        planes: vec![ply as i8; 18],
        globals: vec![0.5],
        move_played: Some("a1".into()),
        source: "test".into(),
        black_rating: Some(1500),
        policy: None,
        ..PositionRow::for_tests(game.into(), ply, 10)
    }
}

#[test]
fn push_rejects_bad_rows_with_named_fields() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec()).unwrap();
    let cases: Vec<(PositionRow, &str)> = vec![
        (
            PositionRow {
                planes: vec![0; 17],
                ..row("g", 0)
            },
            "`planes`",
        ),
        (
            PositionRow {
                globals: vec![],
                ..row("g", 0)
            },
            "`globals`",
        ),
        (
            PositionRow {
                globals: vec![f32::NAN],
                ..row("g", 0)
            },
            "`globals`",
        ),
        (
            PositionRow {
                side_to_move: 2,
                ..row("g", 0)
            },
            "`side_to_move`",
        ),
        (
            PositionRow {
                label: 2.0,
                ..row("g", 0)
            },
            "`label`",
        ),
        (row("", 0), "`game_id`"),
    ];
    for (r, field) in cases {
        let msg = w.push(r).unwrap_err().to_string();
        assert!(msg.contains(field), "{msg}");
    }
    w.push(row("g", 0)).unwrap();
    let msg = w.push(row("g", 0)).unwrap_err().to_string();
    assert!(msg.contains("`ply`") && msg.contains("game `g`"), "{msg}");
    assert_eq!(w.rows(), 1);
}

#[test]
fn shards_are_cut_at_shard_rows_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec()).unwrap();
    for g in 0..3 {
        for p in 0..3 {
            w.push(row(&format!("g{g}"), p)).unwrap();
        }
    }
    let m = w.finish(serde_json::json!({"test": true})).unwrap();
    assert_eq!(
        m.shards.iter().map(|s| s.rows).collect::<Vec<_>>(),
        [4, 4, 1]
    );
    assert_eq!(m.totals.rows, 9);
    assert_eq!(m.totals.games, 3);
    let rule = m.split.rule();
    let mut games = SplitCounts::default();
    for g in 0..3 {
        games[rule.split_of(&format!("g{g}"))] += 1;
    }
    assert_eq!(m.totals.games_per_split, games);
    for s in Split::ALL {
        assert_eq!(m.totals.rows_per_split[s], 3 * games[s]);
    }
    let names = list(dir.path(), |_| true).unwrap();
    assert_eq!(
        names,
        [
            "manifest.json",
            "part-00000.arrow",
            "part-00001.arrow",
            "part-00002.arrow"
        ]
    );
}

/// A row of game `g` with a policy target at even plies.
fn policy_row(game: &str, ply: u32) -> PositionRow {
    PositionRow {
        policy: ply.is_multiple_of(2).then(|| PolicyTarget {
            index: vec![ply, 8],
            prob: vec![0.75, 0.25],
        }),
        ..row(game, ply)
    }
}

#[test]
fn policy_targets_round_trip_and_stream_as_dense_rows() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec()).unwrap();
    let rows: Vec<PositionRow> = (0..5).map(|p| policy_row("g", p)).collect();
    for r in &rows {
        w.push(r.clone()).unwrap();
    }
    let m = w.finish(serde_json::json!({})).unwrap();
    assert_eq!(m.format_version, FORMAT_VERSION);
    let ds = crate::dataset::Dataset::open(dir.path()).unwrap();
    ds.verify().unwrap();
    assert_eq!(ds.rows(None).unwrap(), rows);
    let cfg = crate::dataset::StreamConfig {
        split: None,
        batch_size: 5,
        policy_len: 9,
        ..Default::default()
    };
    let loader = crate::dataset::StreamLoader::new(&ds, cfg).unwrap();
    let b = loader.epoch(0).next().unwrap().unwrap();
    for (i, &ply) in b.ply.iter().enumerate() {
        let dense = &b.policy[i * 9..(i + 1) * 9];
        let mut want = vec![0.0f32; 9];
        if ply.is_multiple_of(2) {
            want[ply as usize] += 0.75;
            want[8] += 0.25;
        }
        assert_eq!(dense, want, "ply {ply}");
    }
    // A policy head smaller than an index is refused, naming the column.
    let small = crate::dataset::StreamConfig {
        split: None,
        policy_len: 4,
        ..Default::default()
    };
    let loader = crate::dataset::StreamLoader::new(&ds, small).unwrap();
    let msg = loader.epoch(0).find_map(|b| b.err()).unwrap().to_string();
    assert!(
        msg.contains("policy_index") && msg.contains("below 4"),
        "{msg}"
    );
}

#[test]
fn bad_policy_targets_are_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec()).unwrap();
    for (index, prob, why) in [
        (vec![1, 2], vec![0.5], "2 indices but 1"),
        (vec![1, 2], vec![0.5, 0.4], "summing to 0.9"),
        (vec![1, 1], vec![0.5, 0.5], "index 1 twice"),
        (vec![3], vec![f32::NAN], "probability NaN"),
    ] {
        let r = PositionRow {
            policy: Some(PolicyTarget { index, prob }),
            ..row("g", 0)
        };
        let msg = w.push(r).unwrap_err().to_string();
        assert!(msg.contains("policy") && msg.contains(why), "{msg}");
    }
    assert_eq!(w.rows(), 0);
}

#[test]
fn format_2_datasets_are_still_read_without_policies() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec())
        .unwrap()
        .with_format_version(2);
    assert!(
        w.push(policy_row("g", 0)).is_err(),
        "no policy column in format 2"
    );
    for p in 0..3 {
        w.push(row("g", p)).unwrap();
    }
    w.finish(serde_json::json!({})).unwrap();
    let manifest = std::fs::read_to_string(dir.path().join(MANIFEST_FILE)).unwrap();
    assert!(manifest.contains("\"format_version\": 2"), "{manifest}");
    let ds = crate::dataset::Dataset::open(dir.path()).unwrap();
    assert!(ds.schema().field_with_name("policy_index").is_err());
    ds.verify().unwrap();
    let read = ds.rows(None).unwrap();
    assert_eq!(read, (0..3).map(|p| row("g", p)).collect::<Vec<_>>());
    let cfg = crate::dataset::StreamConfig {
        split: None,
        policy_len: 9,
        ..Default::default()
    };
    let loader = crate::dataset::StreamLoader::new(&ds, cfg).unwrap();
    let b = loader.epoch(0).next().unwrap().unwrap();
    assert!(b.policy.len() == 27 && b.policy.iter().all(|&p| p == 0.0));
    // Formats do not mix in a merge: one schema per dataset.
    let newer = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(newer.path(), spec()).unwrap();
    w.push(row("h", 0)).unwrap();
    w.finish(serde_json::json!({})).unwrap();
    let out = tempfile::tempdir().unwrap();
    let msg = crate::dataset::merge(
        &[dir.path().to_path_buf(), newer.path().to_path_buf()],
        &out.path().join("m"),
    )
    .unwrap_err()
    .to_string();
    assert!(msg.contains("format_version"), "{msg}");
}

fn game(id: &str, plies: u32) -> GameRows {
    let mut g = GameRows {
        game_id: id.into(),
        source: "test".into(),
        termination: None,
        white_rating: None,
        black_rating: Some(1500),
        ..GameRows::default()
    };
    for p in 0..plies {
        let r = row(id, p);
        g.push(
            p,
            r.plies_to_end,
            r.side_to_move,
            &r.position,
            r.move_played.as_deref(),
            &r.planes,
            &r.globals,
        );
        *g.label.last_mut().unwrap() = r.label;
    }
    g
}

#[test]
fn push_game_writes_the_same_bytes_as_push() {
    let by_rows = tempfile::tempdir().unwrap();
    let by_games = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(by_rows.path(), spec()).unwrap();
    let mut v = DatasetWriter::create(by_games.path(), spec()).unwrap();
    for g in 0..3 {
        let id = format!("g{g}");
        for p in 0..3 {
            w.push(row(&id, p)).unwrap();
        }
        let game = game(&id, 3);
        assert_eq!(
            game.rows(18, 1),
            (0..3).map(|p| row(&id, p)).collect::<Vec<_>>()
        );
        v.push_game(&game).unwrap();
    }
    let a = w.finish(serde_json::Value::Null).unwrap();
    let b = v.finish(serde_json::Value::Null).unwrap();
    assert_eq!(a.shards, b.shards);
    assert_eq!(a.totals, b.totals);

    // A refused row refuses the whole game.
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec()).unwrap();
    let mut bad = game("g", 3);
    bad.label[2] = 2.0;
    let msg = w.push_game(&bad).unwrap_err().to_string();
    assert!(msg.contains("`label`"), "{msg}");
    assert_eq!(w.rows(), 0);
    let mut short = game("g", 3);
    short.planes.pop();
    assert!(w.push_game(&short).is_err());
    w.push_game(&game("g", 3)).unwrap();
    assert!(w.push_game(&game("g", 1)).is_err());
}

#[test]
fn empty_dataset_has_no_shards() {
    let dir = tempfile::tempdir().unwrap();
    let w = DatasetWriter::create(dir.path(), spec()).unwrap();
    let m = w.finish(serde_json::Value::Null).unwrap();
    assert!(m.shards.is_empty());
    assert_eq!(m.totals, Totals::default());
}

#[test]
fn create_refuses_stray_shards_and_staging() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("part-00000.arrow"), b"x").unwrap();
    let msg = DatasetWriter::create(dir.path(), spec())
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("part-00000.arrow"), "{msg}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(STAGING_DIR)).unwrap();
    assert!(DatasetWriter::create(dir.path(), spec()).is_err());
}

#[test]
fn invalid_spec_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = spec();
    s.shard_rows = 0;
    let msg = DatasetWriter::create(dir.path(), s)
        .err()
        .unwrap()
        .to_string();
    assert!(msg.contains("shard_rows"), "{msg}");
}
