//! `plies train` on a small Arimaa self-play dataset: metrics files, a
//! checkpoint that reloads and gives the logged validation figures, early
//! stopping, and configs or checkpoints that do not fit the dataset refused
//! before training.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use candle_core::Device;
use plies::dataset::{Dataset, Split, StreamConfig, StreamLoader};

fn plies(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("RAYON_NUM_THREADS", "2")
        .args(args)
        .output()
        .unwrap()
}

fn dataset(dir: &Path) -> PathBuf {
    common::arimaa_selfplay_dataset(dir, ["random-steps", "random-steps"], 200, 3, &[])
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn cnn3_trains_logs_and_reloads_with_the_logged_validation_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let model = tmp.path().join("cnn3.json");
    std::fs::write(
        &model,
        r#"{"kind": "cnn3", "filters": 8, "kernel": [4, 4], "hidden": 16, "output": "sigmoid"}"#,
    )
    .unwrap();
    let out = tmp.path().join("ck");
    let o = plies(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--epochs",
        "2",
        "--batch",
        "64",
        "--lr",
        "0.003",
        "--loss",
        "bce",
        "--quiet",
    ]);
    let text = common::text(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("valid acc") && text.contains("best epoch"),
        "{text}"
    );

    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(
        lines[0].starts_with("epoch,step,lr,train_loss,valid_loss,valid_mse,valid_mae,valid_acc")
    );
    let rows = jsonl(&out.join("metrics.jsonl"));
    assert_eq!(rows.len(), 2);
    let ds = Dataset::open(&data).unwrap();
    let per_epoch = ds.num_rows(Some(Split::Train)).div_ceil(64);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["epoch"].as_u64(), Some(i as u64 + 1));
        assert_eq!(r["step"].as_u64(), Some(per_epoch * (i as u64 + 1)));
        for k in [
            "train_loss",
            "valid_loss",
            "valid_mse",
            "valid_mae",
            "valid_acc",
        ] {
            let v = r[k].as_f64().unwrap_or_else(|| panic!("{k} in {r}"));
            assert!(v.is_finite() && v >= 0.0, "{k} {v}");
        }
        assert!(r["valid_acc"].as_f64().unwrap() <= 1.0);
    }

    // The last epoch's checkpoint reloads and gives the logged figures.
    let ck = plies::checkpoint::load(&out, Some("arimaa"), Some("arimaa-6x8x8")).unwrap();
    let net = ck.model(&Device::Cpu).unwrap();
    let loader = StreamLoader::new(
        &ds,
        StreamConfig {
            split: Some(Split::Valid),
            batch_size: 500,
            ..Default::default()
        },
    )
    .unwrap();
    let (mut se, mut n, mut right, mut decisive) = (0.0f64, 0usize, 0usize, 0usize);
    for b in loader.epoch(0) {
        let b = b.unwrap();
        let planes =
            candle_core::Tensor::from_vec(b.planes, (b.len, 6, 8, 8), &Device::Cpu).unwrap();
        let v = net.value(&planes, None).unwrap().to_vec1::<f32>().unwrap();
        for (p, y) in v.iter().zip(&b.labels) {
            se += ((p - y) as f64).powi(2);
            n += 1;
            if *y != 0.5 {
                decisive += 1;
                right += usize::from((*p > 0.5) == (*y > 0.5));
            }
        }
    }
    let last = &rows[1];
    let mse = se / n as f64;
    assert!(
        (mse - last["valid_mse"].as_f64().unwrap()).abs() < 1e-5,
        "{mse} vs {last}"
    );
    let acc = right as f64 / decisive as f64;
    assert!(
        (acc - last["valid_acc"].as_f64().unwrap()).abs() < 1e-9,
        "{acc} vs {last}"
    );

    // best/ is a checkpoint too, of the best epoch.
    let best = plies::checkpoint::load(&out.join("best"), None, None).unwrap();
    let best_epoch = best.config.training.metrics["epoch"].as_u64().unwrap();
    let best_loss = rows
        .iter()
        .map(|r| r["valid_loss"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(
        rows[best_epoch as usize - 1]["valid_loss"]
            .as_f64()
            .unwrap(),
        best_loss
    );

    // A checkpoint of another encoder is refused before training, naming the field.
    let other = tmp.path().join("other-encoder");
    std::fs::create_dir_all(&other).unwrap();
    for f in ["model.safetensors", "README.md"] {
        std::fs::copy(out.join(f), other.join(f)).unwrap();
    }
    let cfg = std::fs::read_to_string(out.join("config.json"))
        .unwrap()
        .replace("\"arimaa-6x8x8\"", "\"arimaa-other\"");
    std::fs::write(other.join("config.json"), cfg).unwrap();
    let out2 = tmp.path().join("ck2");
    let o = plies(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        other.to_str().unwrap(),
        "--out",
        out2.to_str().unwrap(),
    ]);
    let t = common::text(&o);
    assert!(!o.status.success());
    assert!(
        t.contains("encoder.name") && t.contains("arimaa-other"),
        "{t}"
    );
    assert!(!out2.exists(), "nothing written");

    // The trained checkpoint continues training (fine-tuning) with plain SGD.
    let o = plies(&[
        "train",
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--model",
        out.to_str().unwrap(),
        "--out",
        out2.to_str().unwrap(),
        "--optimizer",
        "sgd",
        "--epochs",
        "1",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
}

#[test]
fn mismatched_configs_are_refused_naming_the_field() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let cases = [
        (
            r#"{"kind": "cnn3", "input": {"planes": [6, 9, 9], "globals": 0}, "filters": 8, "kernel": [4, 4], "hidden": 16, "output": "sigmoid"}"#,
            "input.planes",
        ),
        (
            r#"{"kind": "resnet", "input": {"planes": [6, 8, 8], "globals": 3}, "blocks": 1, "channels": 8, "value_hidden": 8}"#,
            "input.globals",
        ),
        (
            r#"{"kind": "mlp", "inputs": 100, "hidden": [8], "activation": {"kind": "tanh"}, "init": {"kind": "fan_in"}}"#,
            "inputs",
        ),
    ];
    for (i, (json, field)) in cases.iter().enumerate() {
        let model = tmp.path().join(format!("m{i}.json"));
        std::fs::write(&model, json).unwrap();
        let out = tmp.path().join(format!("out{i}"));
        let o = plies(&[
            "train",
            "--data",
            data.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let t = common::text(&o);
        assert!(!o.status.success(), "{json}");
        assert!(t.contains(field), "{field}: {t}");
        assert!(!out.exists());
    }
    // bce needs a probability output; cuda needs a cuda build.
    let out = tmp.path().join("x");
    for (extra, want) in [
        (&["--model", "linear", "--device", "cuda"][..], "CUDA"),
        (&["--model", "nonsense"][..], "preset"),
    ] {
        let mut args = vec![
            "train",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = plies(&args);
        let t = common::text(&o);
        assert!(!o.status.success() && t.contains(want), "{extra:?}: {t}");
    }
}

#[test]
fn early_stopping_ends_the_run_after_patience_epochs() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let out = tmp.path().join("ck");
    // A learning rate far too high: the validation loss stops improving.
    let o = plies(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        "linear",
        "--out",
        out.to_str().unwrap(),
        "--optimizer",
        "sgd",
        "--lr",
        "5",
        "--epochs",
        "30",
        "--batch",
        "128",
        "--patience",
        "2",
        "--quiet",
    ]);
    let t = common::text(&o);
    assert!(o.status.success(), "{t}");
    let rows = jsonl(&out.join("metrics.jsonl"));
    assert!(rows.len() < 30, "{t}");
    assert!(t.contains("stopped early"), "{t}");
    let losses: Vec<f64> = rows
        .iter()
        .map(|r| r["valid_loss"].as_f64().unwrap())
        .collect();
    let best = losses
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    assert_eq!(rows.len(), best + 1 + 2, "{losses:?}");
}

/// Trains `model` for one epoch on `data`, then evaluates the reloaded best
/// checkpoint on the valid split: it must give the logged validation MSE.
fn train_and_reevaluate(dir: &Path, data: &Path, name: &str, model: &str) {
    let out = dir.join(name);
    let o = plies(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        model,
        "--out",
        out.to_str().unwrap(),
        "--epochs",
        "1",
        "--batch",
        "128",
        "--optimizer",
        "adamw",
        "--lr",
        "0.003",
        "--quiet",
    ]);
    assert!(o.status.success(), "{name}: {}", common::text(&o));
    let logged = jsonl(&out.join("metrics.jsonl"))[0]["valid_mse"]
        .as_f64()
        .unwrap();
    let o = plies(&[
        "evaluate",
        "--checkpoint",
        out.join("best").to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--split",
        "valid",
        "--json",
    ]);
    assert!(o.status.success(), "{name}: {}", common::text(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let evaluated = report["evaluators"][0]["overall"]["mse"].as_f64().unwrap();
    assert!(
        (logged - evaluated).abs() < 1e-5 && logged > 0.0,
        "{name}: logged {logged}, evaluated {evaluated}"
    );
}

#[test]
fn every_model_kind_trains_and_its_checkpoint_reloads_with_the_logged_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let write = |name: &str, json: &str| {
        let p = tmp.path().join(name);
        std::fs::write(&p, json).unwrap();
        p.to_str().unwrap().to_string()
    };
    train_and_reevaluate(tmp.path(), &data, "linear", "linear");
    train_and_reevaluate(tmp.path(), &data, "mlp", "mlp");
    let resnet = write(
        "resnet.json",
        r#"{"kind": "resnet", "blocks": 1, "channels": 8, "value_hidden": 8, "policy": true}"#,
    );
    train_and_reevaluate(tmp.path(), &data, "resnet", &resnet);

    // The MDRNN reads stone planes: a small Gomoku dataset.
    let gomoku = tmp.path().join("gomoku");
    let o = plies(&[
        "selfplay",
        "--game",
        "gomoku",
        "--size",
        "7",
        "--white",
        "random",
        "--black",
        "random",
        "--games",
        "300",
        "--dataset",
        "stones-2",
        "--out",
        gomoku.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::text(&o));
    let mdrnn = write("mdrnn.json", r#"{"kind": "mdrnn", "hidden": 4}"#);
    train_and_reevaluate(tmp.path(), &gomoku.join("dataset"), "mdrnn", &mdrnn);
}
