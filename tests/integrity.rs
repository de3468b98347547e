//! Every reader refuses a shard whose bytes differ from the sha256 its
//! manifest records, and a checkpoint with a non-finite weight; writers of
//! one output directory exclude each other, and replacing a dataset or a
//! training run keeps the old one whole until the new one is.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use common::{plies, text};
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::dataset::{Dataset, Loader, Split, StreamConfig, StreamLoader};
use plies::encode::{EncoderSpec, Perspective};
use plies::model::{build, seeded_init, LinearConfig, ModelConfig};
use rand::SeedableRng;
use sha2::{Digest, Sha256};

/// A small arimaa dataset from self-play (one shard).
fn dataset(root: &Path, name: &str, games: &str) -> PathBuf {
    let out = root.join(name);
    let o = plies(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "random-steps",
        "--black",
        "random-steps",
        "--games",
        games,
        "--seed",
        "5",
        "--dataset",
        "arimaa-6x8x8",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    out.join("dataset")
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Flips one byte in the middle of shard 0; returns (file name, expected
/// digest, actual digest).
fn corrupt_first_shard(ds: &Path) -> (String, String, String) {
    let manifest = Dataset::open(ds).unwrap().manifest().clone();
    let shard = &manifest.shards[0];
    let path = ds.join(&shard.file);
    let mut bytes = std::fs::read(&path).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    (shard.file.clone(), shard.sha256.clone(), hex(&bytes))
}

fn assert_names(msg: &str, file: &str, expected: &str, actual: &str) {
    assert!(
        msg.contains(file) && msg.contains(expected) && msg.contains(actual),
        "{msg}"
    );
}

#[test]
fn a_flipped_byte_in_a_shard_is_refused_by_every_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path(), "sp", "40");
    let (file, expected, actual) = corrupt_first_shard(&ds);
    assert_eq!(Dataset::open(&ds).unwrap().manifest().shards.len(), 1);

    let data = Dataset::open(&ds).unwrap();
    let err = Loader::new(&data, Some(Split::Train), 32, 1, true, false).unwrap_err();
    assert_names(&err.to_string(), &file, &expected, &actual);
    let stream = StreamLoader::new(
        &data,
        StreamConfig {
            batch_size: 32,
            ..StreamConfig::default()
        },
    )
    .unwrap();
    let first = stream.epoch(0).next().unwrap().unwrap_err();
    assert_names(&first.to_string(), &file, &expected, &actual);

    let run = tmp.path().join("run");
    let o = plies(&[
        "train",
        "--data",
        ds.to_str().unwrap(),
        "--model",
        "linear",
        "--out",
        run.to_str().unwrap(),
        "--epochs",
        "1",
        "--batch",
        "32",
        "--quiet",
    ]);
    assert!(!o.status.success(), "trained on a corrupt shard");
    assert_names(&text(&o), &file, &expected, &actual);
    assert!(!run.join("model.safetensors").exists());

    let o = plies(&[
        "evaluate",
        "--baseline",
        "material",
        "--data",
        ds.to_str().unwrap(),
    ]);
    assert!(!o.status.success(), "evaluated a corrupt shard");
    assert_names(&text(&o), &file, &expected, &actual);

    let o = plies(&["dataset", "verify", ds.to_str().unwrap()]);
    assert!(!o.status.success());
    assert_names(&text(&o), &file, &expected, &actual);
}

/// A linear arimaa checkpoint's tensors.
fn linear_tensors() -> (CheckpointConfig, HashMap<String, Tensor>) {
    let cfg = ModelConfig::Linear(LinearConfig::arimaa_material());
    let vm = VarMap::new();
    let dev = Device::Cpu;
    build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    seeded_init(&vm, &cfg, &mut rand::rngs::StdRng::seed_from_u64(3), &dev).unwrap();
    let tensors: HashMap<String, Tensor> = vm
        .data()
        .lock()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_tensor().clone()))
        .collect();
    let spec = EncoderSpec {
        name: "arimaa-6x8x8".into(),
        version: 1,
        shape: [6, 8, 8],
        globals: 0,
        perspective: Perspective::SideToMove,
    };
    let ck = CheckpointConfig::new("arimaa", spec, cfg, TrainingInfo::default());
    (ck, tensors)
}

/// The error `checkpoint::load` gives for `dir`.
fn load_error(dir: &Path) -> String {
    match checkpoint::load(dir, None, None) {
        Ok(_) => panic!("{} loaded", dir.display()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_checkpoint_with_a_nan_weight_is_refused_naming_the_tensor() {
    let tmp = tempfile::tempdir().unwrap();
    let (cfg, mut tensors) = linear_tensors();
    let name = tensors.keys().min().unwrap().clone();
    let t = &tensors[&name];
    let mut values = t.flatten_all().unwrap().to_vec1::<f32>().unwrap();
    let mid = values.len() / 2;
    values[mid] = f32::NAN;
    let bad = Tensor::from_vec(values, t.dims(), &Device::Cpu).unwrap();
    tensors.insert(name.clone(), bad);
    let dir = tmp.path().join("nan");
    checkpoint::save(&dir, &cfg, &tensors).unwrap();
    let err = load_error(&dir);
    assert!(err.contains(&name) && err.contains("NaN"), "{err}");

    let mut values = tensors[&name]
        .flatten_all()
        .unwrap()
        .to_vec1::<f32>()
        .unwrap();
    values.iter_mut().for_each(|v| *v = f32::INFINITY);
    let inf = Tensor::from_vec(values, tensors[&name].dims(), &Device::Cpu).unwrap();
    tensors.insert(name.clone(), inf);
    checkpoint::save(&dir, &cfg, &tensors).unwrap();
    let err = load_error(&dir);
    assert!(err.contains(&name) && err.contains("inf"), "{err}");
}

fn train(data: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        "linear",
        "--out",
        out.to_str().unwrap(),
        "--epochs",
        "1",
        "--batch",
        "32",
        "--seed",
        "2",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    plies(&args)
}

/// The files of a run, by relative path.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn train_overwrite_with_a_bad_dataset_leaves_the_old_run_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let good = dataset(tmp.path(), "good", "40");
    let run = tmp.path().join("run");
    let o = train(&good, &run, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let before = files(&run);
    assert!(before.iter().any(|(p, _)| p.ends_with("metrics.jsonl")));

    let bad = dataset(tmp.path(), "bad", "30");
    let (file, _, _) = corrupt_first_shard(&bad);
    let o = train(&bad, &run, &["--overwrite"]);
    assert!(!o.status.success());
    assert!(text(&o).contains(&file), "{}", text(&o));
    assert_eq!(files(&run), before, "the old run was touched");

    // A good overwrite replaces it and leaves nothing beside it.
    let o = train(&good, &run, &["--overwrite", "--lr", "0.5"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_ne!(files(&run), before);
    let mut names: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["bad", "good", "run"]);
}
