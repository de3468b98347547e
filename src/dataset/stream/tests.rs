//! Tests of the streaming loader on a small sharded dataset: every row once
//! per epoch, fold and split filters, determinism, resuming, memory bounds,
//! tensors, damaged shards, early drops and symmetries.

use candle_core::Device;

use super::*;
use crate::dataset::{Dataset, Split};
use crate::dataset::{DatasetSpec, DatasetWriter, PositionRow};
use crate::encode::Symmetries;
use std::path::Path;
use std::time::Duration;

const PLANES: usize = 4;

/// 40 games of 10 plies in shards of 64 rows; row `r` has globals `[r]`.
fn write(dir: &Path) -> Dataset {
    let mut w = DatasetWriter::create(dir, DatasetSpec::for_tests(64, 1)).unwrap();
    let mut r = 0u32;
    for g in 0..40 {
        for p in 0..10u32 {
            w.push(PositionRow {
                position: format!("pos {r}"),
                planes: vec![(r % 100) as i8, -((r / 100) as i8), 1, 0],
                globals: vec![r as f32],
                label: (r % 3) as f32 / 2.0,
                ..PositionRow::for_tests(format!("game-{g}"), p, 10)
            })
            .unwrap();
            r += 1;
        }
    }
    w.finish(serde_json::json!({})).unwrap();
    Dataset::open(dir).unwrap()
}

fn cfg(split: Option<Split>, batch: usize, buffer: usize) -> StreamConfig {
    StreamConfig {
        split,
        batch_size: batch,
        buffer_rows: buffer,
        seed: 5,
        decode_threads: 3,
        prefetch_chunks: 2,
        chunk_rows: 16,
        ..Default::default()
    }
}

fn collect(loader: &StreamLoader, epoch: u64) -> Vec<StreamBatch> {
    loader.epoch(epoch).map(|b| b.unwrap()).collect()
}

/// (id, planes, label, side, ply) of every row, sorted by id.
fn row_keys(batches: &[StreamBatch]) -> Vec<(u32, Vec<i32>, u32, u8, u32, u32)> {
    let mut keys = Vec::new();
    for b in batches {
        for i in 0..b.len {
            let planes = b.planes[i * PLANES..(i + 1) * PLANES]
                .iter()
                .map(|&v| v as i32)
                .collect();
            keys.push((
                b.globals[i] as u32,
                planes,
                (b.labels[i] * 2.0) as u32,
                b.side_to_move[i],
                b.ply[i],
                b.plies_to_end[i],
            ));
        }
    }
    keys.sort();
    keys
}

#[test]
fn every_row_of_the_split_once_per_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    assert!(ds.manifest().shards.len() >= 6);
    for split in [Some(Split::Train), Some(Split::Valid), None] {
        let expected: Vec<_> = ds
            .rows(split)
            .unwrap()
            .into_iter()
            .map(|r| {
                let planes = r.planes.iter().map(|&v| i32::from(v)).collect();
                let label = (r.label * 2.0) as u32;
                (
                    r.globals[0] as u32,
                    planes,
                    label,
                    r.side_to_move,
                    r.ply,
                    r.plies_to_end,
                )
            })
            .collect();
        let mut expected = expected;
        expected.sort();
        let loader = StreamLoader::new(&ds, cfg(split, 7, 50)).unwrap();
        assert_eq!(loader.len() as usize, expected.len());
        for epoch in 0..3 {
            let batches = collect(&loader, epoch);
            assert_eq!(batches.len() as u64, loader.num_batches());
            assert!(batches[..batches.len() - 1].iter().all(|b| b.len == 7));
            assert_eq!(
                row_keys(&batches),
                expected,
                "split {split:?} epoch {epoch}"
            );
        }
    }
}

#[test]
fn fold_filter_serves_the_listed_folds_only_each_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let k = ds.manifest().folds.k;
    assert!(k >= 3);
    let key = |r: &PositionRow| r.globals[0] as u32;
    let train_valid = [Split::Train, Split::Valid];
    for (split, splits) in [
        (Some(Split::Train), None),
        (Some(Split::Valid), None),
        (None, None),
        (Some(Split::Test), Some(train_valid.to_vec())),
    ] {
        let all: Vec<PositionRow> = match &splits {
            None => ds.rows(split).unwrap(),
            Some(v) => v.iter().flat_map(|&s| ds.rows(Some(s)).unwrap()).collect(),
        };
        for folds in [vec![0u8], vec![1, 2], (0..k).collect::<Vec<u8>>()] {
            let mut expected: Vec<u32> = all
                .iter()
                .filter(|r| folds.contains(&crate::dataset::fold_of(&r.game_id, k)))
                .map(key)
                .collect();
            expected.sort();
            let mut others: Vec<u32> = all
                .iter()
                .filter(|r| !folds.contains(&crate::dataset::fold_of(&r.game_id, k)))
                .map(key)
                .collect();
            others.sort();
            let c = StreamConfig {
                folds: Some(folds.clone()),
                splits: splits.clone(),
                ..cfg(split, 7, 50)
            };
            let loader = StreamLoader::new(&ds, c).unwrap();
            assert_eq!(loader.len() as usize, expected.len(), "{split:?} {folds:?}");
            for epoch in 0..2 {
                let batches = collect(&loader, epoch);
                assert_eq!(batches.len() as u64, loader.num_batches());
                let got: Vec<u32> = row_keys(&batches).into_iter().map(|k| k.0).collect();
                assert_eq!(got, expected, "split {split:?} folds {folds:?}");
                assert!(got.iter().all(|g| others.binary_search(g).is_err()));
            }
        }
    }
    // The held-out fold and the other folds partition the split.
    let train = |folds: Vec<u8>| {
        let c = StreamConfig {
            folds: Some(folds),
            ..cfg(Some(Split::Train), 7, 50)
        };
        let l = StreamLoader::new(&ds, c).unwrap();
        let mut v: Vec<u32> = row_keys(&collect(&l, 0)).into_iter().map(|k| k.0).collect();
        v.sort();
        v
    };
    let held = train(vec![0]);
    let rest = train((1..k).collect());
    assert!(!held.is_empty() && !rest.is_empty());
    assert!(held.iter().all(|h| rest.binary_search(h).is_err()));
    assert_eq!(
        held.len() + rest.len() as usize,
        ds.num_rows(Some(Split::Train)) as usize
    );
    let e = StreamLoader::new(
        &ds,
        StreamConfig {
            folds: Some(vec![k]),
            ..cfg(None, 7, 50)
        },
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("folds") && e.contains(&k.to_string()), "{e}");
}

#[test]
fn rows_carry_their_source_s_weight_through_the_shuffle() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = DatasetWriter::create(dir.path(), DatasetSpec::for_tests(64, 1)).unwrap();
    // Game g's rows come from `expert.txt:g` for even g, `selfplay:x` else.
    let source = |g: u32| {
        if g.is_multiple_of(2) {
            format!("expert.txt:{g}")
        } else {
            "selfplay:x".to_string()
        }
    };
    let mut r = 0u32;
    for g in 0..30 {
        for p in 0..6u32 {
            w.push(PositionRow {
                planes: vec![0; PLANES],
                globals: vec![r as f32],
                source: source(g),
                ..PositionRow::for_tests(format!("game-{g}"), p, 6)
            })
            .unwrap();
            r += 1;
        }
    }
    w.finish(serde_json::json!({})).unwrap();
    let ds = Dataset::open(dir.path()).unwrap();
    let rules = crate::dataset::SourceWeights::new(vec!["expert.txt=4".parse().unwrap()]).unwrap();
    let weighted = StreamConfig {
        source_weights: rules.clone(),
        ..cfg(None, 7, 50)
    };
    let loader = StreamLoader::new(&ds, weighted.clone()).unwrap();
    let mut seen = 0;
    for b in collect(&loader, 1) {
        assert_eq!(b.weights.len(), b.len);
        for (i, &weight) in b.weights.iter().enumerate() {
            let game = b.globals[i] as u32 / 6;
            assert_eq!(
                weight,
                if game.is_multiple_of(2) { 4.0 } else { 1.0 },
                "row {}",
                b.globals[i]
            );
            seen += 1;
        }
    }
    assert_eq!(seen, 180);
    // The same draws as an unweighted loader: weights change no order.
    let plain = StreamLoader::new(&ds, cfg(None, 7, 50)).unwrap();
    let order = |l: &StreamLoader| -> Vec<f32> {
        collect(l, 1).into_iter().flat_map(|b| b.globals).collect()
    };
    assert_eq!(order(&loader), order(&plain));
    assert!(collect(&plain, 1).iter().all(|b| b.weights.is_empty()));
    // As tensors: a [B] weight column beside the labels.
    let t = loader
        .epoch_tensors(0, &Device::Cpu)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(t.weights.unwrap().dims(), &[t.len]);
    // What each rule decides, counted over the shards.
    let counts = rules
        .count_rows(&ds, &[Split::Train, Split::Valid, Split::Test])
        .unwrap();
    assert_eq!((counts.per_rule.clone(), counts.unmatched), (vec![90], 90));
    assert_eq!(counts.unmatched_sources, vec!["selfplay:x".to_string()]);
}

#[test]
fn drop_last_drops_only_the_short_batch() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let c = StreamConfig {
        drop_last: true,
        ..cfg(None, 64, 64)
    };
    let loader = StreamLoader::new(&ds, c).unwrap();
    let batches = collect(&loader, 0);
    assert_eq!(batches.len(), 400 / 64);
    assert_eq!(loader.num_batches(), 400 / 64);
    assert!(batches.iter().all(|b| b.len == 64));
}

#[test]
fn same_settings_same_batches_and_epochs_differ() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let a = StreamLoader::new(&ds, cfg(None, 10, 40)).unwrap();
    // Other thread counts and prefetch depths must not change anything.
    let b = StreamLoader::new(
        &ds,
        StreamConfig {
            decode_threads: 1,
            prefetch_chunks: 1,
            prefetch_batches: 1,
            ..cfg(None, 10, 40)
        },
    )
    .unwrap();
    let e0 = collect(&a, 0);
    assert_eq!(e0, collect(&b, 0));
    assert_eq!(e0, collect(&a, 0));
    let e1 = collect(&a, 1);
    assert_ne!(e0, e1);
    assert_ne!(a.shard_order(0), a.shard_order(1));
    // Resuming at batch 3 of epoch 1 gives the rest of epoch 1.
    let resumed: Vec<_> = a.epoch_from(1, 3).map(|b| b.unwrap()).collect();
    assert_eq!(resumed, e1[3..]);
    // Another seed, other batches.
    let c = StreamLoader::new(
        &ds,
        StreamConfig {
            seed: 6,
            ..cfg(None, 10, 40)
        },
    )
    .unwrap();
    assert_ne!(collect(&c, 0), e0);
}

#[test]
fn buffer_stays_within_capacity_plus_one_chunk() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let c = cfg(None, 8, 30);
    let loader = StreamLoader::new(&ds, c.clone()).unwrap();
    let mut epoch = loader.epoch(0);
    let mut rows = 0;
    for b in epoch.by_ref() {
        rows += b.unwrap().len;
    }
    assert_eq!(rows, 400);
    let peak = epoch.peak_buffer_rows();
    assert!(peak >= c.buffer_rows, "peak {peak}");
    assert!(peak < c.buffer_rows + c.chunk_rows, "peak {peak}");
}

#[test]
fn tensors_have_the_documented_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let loader = StreamLoader::new(&ds, cfg(None, 16, 64)).unwrap();
    let first = loader
        .epoch_tensors(0, &Device::Cpu)
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(first.planes.dims(), &[16, 1, 2, 2]);
    assert_eq!(first.globals.as_ref().unwrap().dims(), &[16, 1]);
    assert_eq!(first.labels.dims(), &[16, 1]);
    assert_eq!(first.side_to_move.len(), 16);
    let raw = collect(&loader, 0).remove(0);
    let planes: Vec<f32> = first.planes.flatten_all().unwrap().to_vec1().unwrap();
    assert_eq!(planes, raw.planes);
    assert!(raw.planes_int8.is_empty());
}

/// The route a GPU takes (int8 planes widened on the device) gives the
/// f32 route's tensors exactly, batch for batch, negative values too.
#[test]
fn int8_planes_widen_to_the_same_tensors() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let loader = StreamLoader::new(&ds, cfg(None, 16, 64)).unwrap();
    let plain: Vec<TensorBatch> = loader
        .epoch_tensors(1, &Device::Cpu)
        .collect::<Result<_, _>>()
        .unwrap();
    let via_int8: Vec<TensorBatch> = loader
        .epoch_tensors_via_int8(1, 0, &Device::Cpu)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(plain.len(), via_int8.len());
    let mut negative = false;
    for (a, b) in plain.iter().zip(&via_int8) {
        assert_eq!(b.planes.dtype(), candle_core::DType::F32);
        assert_eq!(a.planes.dims(), b.planes.dims());
        let (x, y): (Vec<f32>, Vec<f32>) = (
            a.planes.flatten_all().unwrap().to_vec1().unwrap(),
            b.planes.flatten_all().unwrap().to_vec1().unwrap(),
        );
        assert_eq!(x, y);
        negative |= x.iter().any(|&v| v < 0.0);
        assert_eq!(a.side_to_move, b.side_to_move);
    }
    assert!(negative, "the fixture has negative planes");
}

fn first_error(loader: &StreamLoader) -> String {
    let mut items = loader.epoch(0);
    let err = items.by_ref().find_map(|b| b.err()).expect("an error item");
    assert!(items.next().is_none(), "the epoch ends after an error");
    err.to_string()
}

#[test]
fn corrupt_or_missing_shard_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let path = ds.shard_path(2);
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&path, &bytes).unwrap();
    let c = StreamConfig {
        verify_sha256: true,
        ..cfg(None, 8, 30)
    };
    let msg = first_error(&StreamLoader::new(&ds, c).unwrap());
    assert!(msg.contains(&name) && msg.contains("sha256"), "{msg}");

    bytes.truncate(bytes.len() - 10);
    std::fs::write(&path, &bytes).unwrap();
    let msg = first_error(&StreamLoader::new(&ds, cfg(None, 8, 30)).unwrap());
    assert!(msg.contains(&name) && msg.contains("bytes"), "{msg}");

    std::fs::remove_file(&path).unwrap();
    let msg = first_error(&StreamLoader::new(&ds, cfg(None, 8, 30)).unwrap());
    assert!(msg.contains(&name) && msg.contains("missing"), "{msg}");
}

#[test]
fn dropping_mid_epoch_stops_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let loader = StreamLoader::new(
            &ds,
            StreamConfig {
                decode_threads: 2,
                prefetch_chunks: 1,
                prefetch_batches: 1,
                ..cfg(None, 4, 8)
            },
        )
        .unwrap();
        for epoch in 0..20 {
            let mut e = loader.epoch(epoch);
            let first = e.next().unwrap().unwrap();
            assert_eq!(first.len, 4);
            drop(e);
        }
        // Never started at all.
        drop(loader.epoch(99));
        tx.send(()).unwrap();
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("dropping epochs mid-way hung");
}

#[test]
fn bad_settings_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let e = StreamLoader::new(&ds, cfg(None, 64, 32)).unwrap_err();
    assert!(e.to_string().contains("buffer_rows"), "{e}");
    let e = StreamLoader::new(&ds, cfg(None, 0, 32)).unwrap_err();
    assert!(e.to_string().contains("batch_size"), "{e}");
}

#[test]
fn augmented_rows_are_images_of_the_stored_ones_under_the_drawn_map() {
    let dir = tempfile::tempdir().unwrap();
    let ds = write(dir.path());
    let augmented = |seed| {
        let loader = StreamLoader::new(
            &ds,
            StreamConfig {
                symmetries: Symmetries::Dihedral,
                seed,
                ..cfg(None, 32, 128)
            },
        )
        .unwrap();
        row_keys(&collect(&loader, 0))
    };
    let plain = row_keys(&collect(
        &StreamLoader::new(&ds, cfg(None, 32, 128)).unwrap(),
        0,
    ));
    let rows = augmented(5);
    assert_eq!(rows.len(), plain.len());
    let mut used = std::collections::BTreeSet::new();
    for (aug, orig) in rows.iter().zip(&plain) {
        // Same row (globals, label, side, ply), planes mapped by one of
        // the 8 maps of the 2x2 board.
        assert_eq!(
            (aug.0, aug.2, aug.3, aug.4, aug.5),
            (orig.0, orig.2, orig.3, orig.4, orig.5)
        );
        let stored: Vec<i8> = orig.1.iter().map(|&v| v as i8).collect();
        let k = (0..8)
            .find(|&k| {
                let mut img = Vec::new();
                Symmetries::Dihedral.map_into(k, &stored, [1, 2, 2], &mut img, i32::from);
                img == aug.1
            })
            .unwrap_or_else(|| panic!("row {} is no image of {:?}: {:?}", aug.0, orig.1, aug.1));
        used.insert(k);
    }
    // Every map is drawn somewhere among 400 rows (a row with two equal
    // values, like row 0, matches several maps; the first is counted).
    assert_eq!(used.len(), 8, "{used:?}");
    // Seeded: the same seed serves the same images.
    assert_eq!(augmented(5), rows);
    assert_ne!(augmented(6), rows);
    // A non-square board or policy targets are refused, naming the field.
    let e = StreamLoader::new(
        &ds,
        StreamConfig {
            symmetries: Symmetries::Dihedral,
            policy_len: 4,
            ..cfg(None, 32, 128)
        },
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("symmetries"), "{e}");
}
