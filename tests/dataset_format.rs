//! The dataset format end to end: write, reopen, verify, read, corrupt, load.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use plies::dataset::{
    staging_dir, Dataset, DatasetError, DatasetSpec, DatasetWriter, EncoderInfo, Loader, Manifest,
    PositionRow, Split, SplitRule, MANIFEST_FILE,
};

const SHAPE: [usize; 3] = [2, 3, 3];

fn spec(shard_rows: usize, valid: f64, test: f64, globals: usize) -> DatasetSpec {
    DatasetSpec {
        game: "tic_tac_toe".into(),
        encoder: EncoderInfo {
            name: "test-2x3x3".into(),
            version: 3,
            shape: SHAPE,
            globals,
        },
        split: SplitRule::new(valid, test).unwrap(),
        shard_rows,
        folds: plies::dataset::DEFAULT_FOLDS,
    }
}

/// Row `ply` of a game of `len` plies; `uid` (unique per row) is stored in
/// the first global feature when there is one.
fn row(game: &str, ply: u32, len: u32, uid: u32, globals: usize) -> PositionRow {
    let mut g = vec![0.25; globals];
    if let Some(first) = g.first_mut() {
        *first = uid as f32;
    }
    PositionRow {
        game_id: game.to_string(),
        ply,
        plies_to_end: len - ply,
        side_to_move: (ply % 2) as u8,
        position: format!("{game}@{ply}"),
        planes: (0..18)
            .map(|i| ((uid as i32 + i) % 256 - 128) as i8)
            .collect(),
        globals: g,
        label: [1.0, 0.0, 0.5][(uid % 3) as usize],
        move_played: (ply < len).then(|| format!("m{ply}")),
        source: if uid.is_multiple_of(2) {
            "selfplay:a-vs-b"
        } else {
            "games.jsonl"
        }
        .into(),
        termination: uid.is_multiple_of(4).then(|| "win".to_string()),
        white_rating: uid.is_multiple_of(3).then_some(1500 + uid),
        black_rating: uid.is_multiple_of(5).then_some(1400),
        policy: None,
    }
}

/// Writes `games` games of 1 to 9 plies (2 to 10 rows each); returns the rows.
fn write(dir: &Path, spec: DatasetSpec, games: u32) -> (Manifest, Vec<PositionRow>) {
    let globals = spec.encoder.globals;
    let mut w = DatasetWriter::create(dir, spec).unwrap();
    let mut rows = Vec::new();
    let mut uid = 0;
    for g in 0..games {
        let len = 1 + g % 9;
        for ply in 0..=len {
            let r = row(&format!("game-{g:05}"), ply, len, uid, globals);
            uid += 1;
            rows.push(r.clone());
            w.push(r).unwrap();
        }
    }
    let m = w
        .finish(serde_json::json!({"command": "dataset_format test", "seed": 0}))
        .unwrap();
    (m, rows)
}

fn shard(dir: &Path, i: usize) -> std::path::PathBuf {
    dir.join(format!("part-{i:05}.arrow"))
}

#[test]
fn round_trip_across_shards() {
    let dir = tempfile::tempdir().unwrap();
    let (m, rows) = write(dir.path(), spec(7, 0.2, 0.2, 2), 40);
    assert_eq!(m.totals.rows as usize, rows.len());
    assert_eq!(m.totals.games, 40);
    assert_eq!(m.shards.len(), rows.len().div_ceil(7));
    assert!(m.shards.iter().rev().skip(1).all(|s| s.rows == 7));
    assert_eq!(m.split.hash, "fnv1a64(game_id)");
    assert_eq!(m.created_by, format!("plies {}", env!("CARGO_PKG_VERSION")));
    assert_eq!(m.provenance["seed"], 0);
    for i in 0..m.shards.len() {
        assert!(shard(dir.path(), i).is_file());
    }
    // No temporary files left behind.
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(!name.starts_with('.'), "left over: {name}");
    }

    let ds = Dataset::open(dir.path()).unwrap();
    assert_eq!(ds.manifest(), &m);
    assert_eq!(ds.spec(), spec(7, 0.2, 0.2, 2));
    assert_eq!(ds.rows(None).unwrap(), rows);
    let mut by_split = 0;
    for s in Split::ALL {
        let part = ds.rows(Some(s)).unwrap();
        assert_eq!(part.len() as u64, m.totals.rows_per_split[s]);
        let expected: Vec<_> = rows
            .iter()
            .filter(|r| m.split.rule().split_of(&r.game_id) == s)
            .cloned()
            .collect();
        assert_eq!(part, expected);
        by_split += part.len();
    }
    assert_eq!(by_split, rows.len());
}

#[test]
fn zero_globals_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let (m, rows) = write(dir.path(), spec(5, 0.1, 0.1, 0), 6);
    let ds = Dataset::open(dir.path()).unwrap();
    ds.verify().unwrap();
    assert_eq!(ds.rows(None).unwrap(), rows);
    assert!(rows.iter().all(|r| r.globals.is_empty()));
    assert_eq!(m.encoder.globals, 0);
    // No zero-width column (polars cannot read one): `globals` is left out.
    assert!(ds.schema().field_with_name("globals").is_err());
    let loader = Loader::new(&ds, None, 8, 1, true, false).unwrap();
    for batch in loader.epoch(0) {
        assert!(batch.globals.is_empty());
        assert_eq!(batch.planes.len(), batch.len * 18);
    }
}

#[test]
fn split_by_game() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = write(dir.path(), spec(1000, 0.1, 0.2, 1), 2000);
    let ds = Dataset::open(dir.path()).unwrap();
    let mut split_of_game: HashMap<String, Split> = HashMap::new();
    for s in Split::ALL {
        for game in ds.games(Some(s)).unwrap() {
            let id = &game[0].game_id;
            assert!(game.iter().all(|r| &r.game_id == id));
            assert!(game.windows(2).all(|w| w[0].ply < w[1].ply));
            // The whole game is in this split: len + 1 rows.
            assert_eq!(game.len() as u32, game[0].plies_to_end + 1);
            let before = split_of_game.insert(id.clone(), s);
            assert!(before.is_none(), "game {id} in {before:?} and {s}");
        }
    }
    assert_eq!(split_of_game.len(), 2000);
    let fraction = |s: Split| m.totals.games_per_split[s] as f64 / 2000.0;
    assert!(
        (fraction(Split::Valid) - 0.1).abs() < 0.03,
        "{:?}",
        m.totals
    );
    assert!((fraction(Split::Test) - 0.2).abs() < 0.03, "{:?}", m.totals);
    assert!(
        (fraction(Split::Train) - 0.7).abs() < 0.03,
        "{:?}",
        m.totals
    );
    // Every split is non-empty and the per-split counts agree with the data.
    let report = ds.verify().unwrap();
    assert_eq!(report.games_per_split, m.totals.games_per_split);
    assert_eq!(report.rows_per_split, m.totals.rows_per_split);
}

#[test]
fn verify_and_stats_on_a_good_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let (m, rows) = write(dir.path(), spec(16, 0.2, 0.2, 1), 27);
    let ds = Dataset::open(dir.path()).unwrap();
    let report = ds.verify().unwrap();
    assert_eq!(report.rows, m.totals.rows);
    assert_eq!(report.games, 27);
    assert_eq!(report.shards.len(), m.shards.len());
    assert!(report.stray_files.is_empty());
    assert!(report.to_string().contains("part-00000.arrow"));

    let stats = ds.stats().unwrap();
    assert_eq!(stats.rows, rows.len() as u64);
    assert_eq!(stats.games, 27);
    assert_eq!(stats.games_per_split, m.totals.games_per_split);
    assert_eq!(stats.rows_per_split, m.totals.rows_per_split);
    // Game lengths are 1..=9 plies, three games each.
    assert_eq!(stats.plies_per_game.min, 1);
    assert_eq!(stats.plies_per_game.max, 9);
    assert!((stats.plies_per_game.mean - 5.0).abs() < 1e-9);
    let l = stats.labels;
    assert_eq!(
        l.wins,
        rows.iter().filter(|r| r.label == 1.0).count() as u64
    );
    assert_eq!(
        l.draws,
        rows.iter().filter(|r| r.label == 0.5).count() as u64
    );
    assert_eq!(l.wins + l.draws + l.losses, rows.len() as u64);
    assert_eq!(l.other, 0);
    assert_eq!(
        stats.side_to_move.first,
        rows.iter().filter(|r| r.side_to_move == 0).count() as u64
    );
    let table = stats.to_string();
    assert!(
        table.contains("plies per game") && table.contains("wins"),
        "{table}"
    );
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["games"], 27);
    assert_eq!(
        json["rows_per_split"]["train"],
        m.totals.rows_per_split.train
    );
}

#[test]
fn truncated_shard_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), spec(20, 0.1, 0.1, 1), 20);
    let path = shard(dir.path(), 1);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();

    let ds = Dataset::open(dir.path()).unwrap();
    let e = ds.verify().unwrap_err();
    assert!(
        matches!(e, DatasetError::ShardSize { shard: 1, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("part-00001.arrow"), "{e}");
    let e = ds.rows(None).unwrap_err();
    assert!(e.to_string().contains("part-00001.arrow"), "{e}");
    assert!(ds.games(None).is_err());
    assert!(ds.stats().is_err());
    assert!(Loader::new(&ds, None, 4, 0, true, false).is_err());
}

#[test]
fn flipped_byte_is_a_hash_mismatch_naming_the_shard() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = write(dir.path(), spec(20, 0.1, 0.1, 1), 20);
    let path = shard(dir.path(), 2);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();

    let ds = Dataset::open(dir.path()).unwrap();
    let e = ds.verify().unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(e, DatasetError::ShardHash { shard: 2, .. }),
        "{e:?}"
    );
    assert!(msg.contains("part-00002.arrow"), "{msg}");
    assert!(msg.contains(&m.shards[2].sha256), "{msg}");
    assert!(ds.rows(Some(Split::Train)).is_err());
}

#[test]
fn deleted_shard_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), spec(20, 0.1, 0.1, 1), 20);
    std::fs::remove_file(shard(dir.path(), 0)).unwrap();
    let ds = Dataset::open(dir.path()).unwrap();
    let e = ds.verify().unwrap_err();
    assert!(
        matches!(e, DatasetError::MissingShard { shard: 0, .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("part-00000.arrow"), "{e}");
    assert!(ds.rows(None).is_err());
}

#[test]
fn malformed_manifest_is_named() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), spec(20, 0.1, 0.1, 1), 5);
    let manifest = dir.path().join(MANIFEST_FILE);
    let good = std::fs::read_to_string(&manifest).unwrap();

    std::fs::write(&manifest, &good[..good.len() / 2]).unwrap();
    let e = Dataset::open(dir.path()).unwrap_err();
    assert!(matches!(e, DatasetError::ManifestJson { .. }), "{e:?}");
    assert!(e.to_string().contains("manifest.json"), "{e}");

    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["format_version"] = 99.into();
    std::fs::write(&manifest, v.to_string()).unwrap();
    let msg = Dataset::open(dir.path()).unwrap_err().to_string();
    assert!(
        msg.contains("manifest.json") && msg.contains("format_version"),
        "{msg}"
    );

    let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
    v["shards"][0]["rows"] = "many".into();
    std::fs::write(&manifest, v.to_string()).unwrap();
    let msg = Dataset::open(dir.path()).unwrap_err().to_string();
    assert!(
        msg.contains("manifest.json") && msg.contains("`shards`"),
        "{msg}"
    );

    std::fs::remove_file(&manifest).unwrap();
    let msg = Dataset::open(dir.path()).unwrap_err().to_string();
    assert!(msg.contains("manifest.json"), "{msg}");
}

#[test]
fn manifest_counts_that_disagree_with_the_data_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), spec(20, 0.1, 0.1, 1), 20);
    let manifest = dir.path().join(MANIFEST_FILE);
    let mut m: Manifest = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    // Move one train row of shard 0 to valid: still self-consistent.
    m.shards[0].rows_per_split.train -= 1;
    m.shards[0].rows_per_split.valid += 1;
    m.totals.rows_per_split.train -= 1;
    m.totals.rows_per_split.valid += 1;
    std::fs::write(&manifest, m.to_json_pretty()).unwrap();
    let e = Dataset::open(dir.path()).unwrap().verify().unwrap_err();
    assert!(matches!(e, DatasetError::CountMismatch { .. }), "{e:?}");
    assert!(e.to_string().contains("part-00000.arrow"), "{e}");
}

#[test]
fn shard_with_another_schema_is_refused() {
    // A shard from a dataset with another plane shape, with the manifest's
    // size and hash updated to match: the schema check catches it.
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write(a.path(), spec(1000, 0.1, 0.1, 1), 3);
    let mut other = spec(1000, 0.1, 0.1, 1);
    other.encoder.shape = [1, 3, 3];
    let mut w = DatasetWriter::create(b.path(), other).unwrap();
    let mut r = row("x", 0, 1, 0, 1);
    r.planes.truncate(9);
    w.push(r).unwrap();
    let mb = w.finish(serde_json::Value::Null).unwrap();

    std::fs::copy(shard(b.path(), 0), shard(a.path(), 0)).unwrap();
    let manifest = a.path().join(MANIFEST_FILE);
    let mut m: Manifest = serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    m.shards[0].bytes = mb.shards[0].bytes;
    m.shards[0].sha256 = mb.shards[0].sha256.clone();
    std::fs::write(&manifest, m.to_json_pretty()).unwrap();
    let e = Dataset::open(a.path()).unwrap().verify().unwrap_err();
    assert!(matches!(e, DatasetError::ShardSchema { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(
        msg.contains("part-00000.arrow") && msg.contains("`planes`"),
        "{msg}"
    );
}

#[test]
fn create_over_an_existing_dataset_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (m, rows) = write(dir.path(), spec(8, 0.1, 0.1, 1), 10);
    let e = DatasetWriter::create(dir.path(), spec(8, 0.1, 0.1, 1))
        .err()
        .unwrap();
    assert!(matches!(e, DatasetError::AlreadyExists { .. }), "{e:?}");
    assert!(e.to_string().contains("manifest.json"), "{e}");
    let ds = Dataset::open(dir.path()).unwrap();
    ds.verify().unwrap();
    assert_eq!(ds.manifest(), &m);
    assert_eq!(ds.rows(None).unwrap(), rows);
}

#[test]
fn overwrite_replaces_only_when_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (old, old_rows) = write(dir.path(), spec(4, 0.1, 0.1, 1), 10);
    assert!(old.shards.len() > 3);

    let mut w = DatasetWriter::create_overwrite(dir.path(), spec(4, 0.3, 0.0, 1)).unwrap();
    for ply in 0..=5 {
        w.push(row("new-game", ply, 5, 1000 + ply, 1)).unwrap();
    }
    // Half-way (and after a shard is on disk): the old dataset is intact.
    let ds = Dataset::open(dir.path()).unwrap();
    ds.verify().unwrap();
    assert_eq!(ds.rows(None).unwrap(), old_rows);

    let new = w.finish(serde_json::json!({"run": 2})).unwrap();
    assert_eq!(new.shards.len(), 2);
    let ds = Dataset::open(dir.path()).unwrap();
    let report = ds.verify().unwrap();
    assert_eq!(report.rows, 6);
    assert!(report.stray_files.is_empty(), "{:?}", report.stray_files);
    assert!(!staging_dir(dir.path()).exists());
    assert!(!shard(dir.path(), 2).exists());
    assert_eq!(ds.rows(None).unwrap().len(), 6);
}

#[test]
fn dropped_writer_leaves_no_dataset() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut w = DatasetWriter::create(dir.path(), spec(2, 0.1, 0.1, 1)).unwrap();
        for ply in 0..5 {
            w.push(row("g", ply, 5, ply, 1)).unwrap();
        }
    }
    assert!(shard(dir.path(), 0).exists());
    assert!(Dataset::open(dir.path()).is_err());
    // Stray shards are not silently overwritten either.
    assert!(DatasetWriter::create(dir.path(), spec(2, 0.1, 0.1, 1)).is_err());
    let w = DatasetWriter::create_overwrite(dir.path(), spec(2, 0.1, 0.1, 1)).unwrap();
    w.finish(serde_json::Value::Null).unwrap();
    let report = Dataset::open(dir.path()).unwrap().verify().unwrap();
    assert_eq!(report.rows, 0);
    assert!(report.stray_files.is_empty(), "{:?}", report.stray_files);
}

#[test]
fn wrong_planes_length_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), spec(8, 0.1, 0.1, 1)).unwrap();
    let mut r = row("game-7", 3, 5, 0, 1);
    r.planes.push(0);
    let e = w.push(r).unwrap_err();
    let msg = e.to_string();
    assert!(
        matches!(
            e,
            DatasetError::InvalidRow {
                field: "planes",
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        msg.contains("`planes`") && msg.contains("game-7") && msg.contains("ply 3"),
        "{msg}"
    );
    assert!(
        msg.contains("18 values") && msg.contains("19 values"),
        "{msg}"
    );
    // The writer is still usable after a refused row.
    w.push(row("game-7", 3, 5, 0, 1)).unwrap();
    assert_eq!(w.finish(serde_json::Value::Null).unwrap().totals.rows, 1);
}

/// Row uids of every batch of one epoch.
fn epoch_uids(loader: &Loader, epoch: u64) -> Vec<Vec<u32>> {
    loader
        .epoch(epoch)
        .map(|b| {
            assert_eq!(b.planes.len(), b.len * 18);
            assert_eq!(b.globals.len(), b.len * 2);
            assert_eq!(b.labels.len(), b.len);
            assert_eq!(b.side_to_move.len(), b.len);
            b.globals.chunks(2).map(|g| g[0] as u32).collect()
        })
        .collect()
}

#[test]
fn loader_is_deterministic_and_covers_every_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let (m, rows) = write(dir.path(), spec(13, 0.2, 0.1, 2), 60);
    let ds = Dataset::open(dir.path()).unwrap();
    let train: HashMap<u32, &PositionRow> = rows
        .iter()
        .filter(|r| m.split.rule().split_of(&r.game_id) == Split::Train)
        .map(|r| (r.globals[0] as u32, r))
        .collect();

    let a = Loader::new(&ds, Some(Split::Train), 16, 42, true, false).unwrap();
    let b = Loader::new(&ds, Some(Split::Train), 16, 42, true, false).unwrap();
    let c = Loader::new(&ds, Some(Split::Train), 16, 43, true, false).unwrap();
    assert_eq!(a.len(), train.len());
    assert_eq!(a.len() as u64, m.totals.rows_per_split.train);
    assert_eq!(a.shape(), SHAPE);
    assert_eq!(a.epoch(0).len(), a.num_batches());

    let e0 = epoch_uids(&a, 0);
    assert_eq!(e0, epoch_uids(&b, 0), "same seed, same batches");
    assert_ne!(e0, epoch_uids(&c, 0), "different seed, different order");
    assert_ne!(e0, epoch_uids(&a, 1), "different epoch, different order");
    assert_eq!(epoch_uids(&a, 5), epoch_uids(&b, 5), "epochs are seekable");
    assert_eq!(e0.len(), train.len().div_ceil(16));
    assert!(e0[..e0.len() - 1].iter().all(|b| b.len() == 16));

    for epoch in 0..3 {
        let mut seen = HashSet::new();
        for batch in a.epoch(epoch) {
            for i in 0..batch.len {
                let uid = batch.globals[2 * i] as u32;
                assert!(seen.insert(uid), "row {uid} twice in epoch {epoch}");
                let r = train[&uid];
                assert_eq!(batch.labels[i], r.label);
                assert_eq!(batch.side_to_move[i], r.side_to_move);
                let planes: Vec<f32> = r.planes.iter().map(|&v| v as f32).collect();
                assert_eq!(&batch.planes[i * 18..(i + 1) * 18], &planes[..]);
            }
        }
        assert_eq!(seen.len(), train.len());
    }

    // No shuffle: stored order. drop_last: only full batches.
    let plain = Loader::new(&ds, Some(Split::Train), 16, 42, false, true).unwrap();
    let flat: Vec<u32> = epoch_uids(&plain, 0).into_iter().flatten().collect();
    let stored: Vec<u32> = ds
        .rows(Some(Split::Train))
        .unwrap()
        .iter()
        .map(|r| r.globals[0] as u32)
        .collect();
    assert_eq!(flat.len(), stored.len() / 16 * 16);
    assert_eq!(flat[..], stored[..flat.len()]);
    assert_eq!(epoch_uids(&plain, 0), epoch_uids(&plain, 3));

    // Whole dataset, and a split without rows.
    let all = Loader::new(&ds, None, 1000, 0, true, false).unwrap();
    assert_eq!(all.len(), rows.len());
    let none = spec(13, 0.0, 0.0, 2);
    let dir2 = tempfile::tempdir().unwrap();
    write(dir2.path(), none, 3);
    let ds2 = Dataset::open(dir2.path()).unwrap();
    let empty = Loader::new(&ds2, Some(Split::Test), 8, 0, true, false).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.epoch(0).count(), 0);
    assert!(Loader::new(&ds2, None, 0, 0, true, false).is_err());
}
