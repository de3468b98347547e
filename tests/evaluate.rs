//! `plies evaluate`: the material baseline on self-play games a material
//! player won, the report files and their agreement, a checkpoint's figures
//! against predictions computed directly, and the encoder-mismatch refusal.

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
use plies::dataset::Dataset;
use plies::encode::{EncoderSpec, Perspective};
use plies::model::{build, seeded_init, LinearConfig, ModelConfig};
use rand::SeedableRng;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn plies(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .args(args)
        .output()
        .expect("run plies")
}

fn ok(args: &[&str]) -> String {
    let o = plies(args);
    assert!(
        o.status.success(),
        "plies {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// 100 games of random steps against a depth-1 material alpha-beta player.
fn selfplay_dataset(root: &Path) -> PathBuf {
    let out = root.join("sp");
    ok(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "random-steps",
        "--black",
        "alphabeta:depth=1,eval=material",
        "--games",
        "100",
        "--seed",
        "7",
        "--dataset",
        "arimaa-6x8x8",
        "--out",
        out.to_str().unwrap(),
    ]);
    out.join("dataset")
}

fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split(',').map(str::to_string))
                .collect()
        })
        .collect()
}

fn evaluator<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["evaluators"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no evaluator {name} in {json}"))
}

#[test]
fn material_baseline_on_games_a_material_player_won() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = selfplay_dataset(tmp.path());
    let rows = Dataset::open(&ds).unwrap().num_rows(None);
    let report = tmp.path().join("report");
    let stdout = ok(&[
        "evaluate",
        "--baseline",
        "material",
        "--data",
        ds.to_str().unwrap(),
        "--split",
        "all",
        "--out",
        report.to_str().unwrap(),
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let on_disk: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("metrics.json")).unwrap())
            .unwrap();
    assert_eq!(json, on_disk, "--json prints metrics.json");
    for name in ["material", "material-sign"] {
        let overall = &evaluator(&json, name)["overall"];
        assert_eq!(overall["count"].as_u64().unwrap(), rows);
        // Measured 0.911 (seed 7): the material player wins by taking pieces.
        let acc = overall["accuracy"].as_f64().unwrap();
        assert!(acc > 0.85, "{name} accuracy {acc}");
        let mse = overall["mse"].as_f64().unwrap();
        assert!(mse < 0.12, "{name} MSE {mse}"); // measured 0.089 and 0.072
    }
    assert_eq!(json["reference"]["accuracy"].as_f64(), Some(0.735));
    let description = evaluator(&json, "material")["description"]
        .as_str()
        .unwrap();
    assert!(
        description.contains("fitted on the train split"),
        "{description}"
    );

    // Every CSV's counts sum to the total, per evaluator, and agree with the JSON.
    for file in ["by_height.csv", "by_height_buckets.csv", "by_ply.csv"] {
        let csv = read_csv(&report.join(file));
        for name in ["material", "material-sign"] {
            let total: u64 = csv
                .iter()
                .filter(|r| r["evaluator"] == name)
                .map(|r| r["count"].parse::<u64>().unwrap())
                .sum();
            assert_eq!(total, rows, "{file} {name}");
        }
    }
    let buckets = read_csv(&report.join("by_height_buckets.csv"));
    let json_buckets = evaluator(&json, "material")["by_height_bucket"]
        .as_array()
        .unwrap();
    let csv_material: Vec<_> = buckets
        .iter()
        .filter(|r| r["evaluator"] == "material")
        .collect();
    assert_eq!(csv_material.len(), json_buckets.len());
    for (c, j) in csv_material.iter().zip(json_buckets) {
        assert_eq!(c["plies_to_end_from"], j["key"].to_string());
        let mse: f64 = c["mse"].parse().unwrap();
        assert!((mse - j["mse"].as_f64().unwrap()).abs() < 1e-6);
    }
    let png = std::fs::read(report.join("height.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = std::fs::read_to_string(report.join("height.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("material-sign MSE"));

    // The human table names the paper's figures.
    let table = ok(&[
        "evaluate",
        "--baseline",
        "material",
        "--data",
        ds.to_str().unwrap(),
        "--split",
        "all",
    ]);
    assert!(
        table.contains("73.5%") && table.contains("0.1710"),
        "{table}"
    );
}

/// A linear piece-square model starting from material values, saved as a
/// checkpoint for `encoder`; returns its directory and tensors.
fn linear_checkpoint(dir: &Path, encoder: &str) -> HashMap<String, Tensor> {
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
        name: encoder.into(),
        version: 1,
        shape: [6, 8, 8],
        globals: 0,
        perspective: Perspective::SideToMove,
    };
    let ck = CheckpointConfig::new("arimaa", spec, cfg, TrainingInfo::default());
    checkpoint::save(dir, &ck, &tensors).unwrap();
    tensors
}

#[test]
fn checkpoint_figures_match_direct_predictions() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = selfplay_dataset(tmp.path());
    let ck = tmp.path().join("linear-material");
    linear_checkpoint(&ck, "arimaa-6x8x8");

    // Direct: every test row through the model, figures by hand.
    let dataset = Dataset::open(&ds).unwrap();
    let rows = dataset.rows(Some(plies::dataset::Split::Test)).unwrap();
    assert!(!rows.is_empty());
    let loaded = checkpoint::load(&ck, None, None).unwrap();
    let net = loaded.model(&Device::Cpu).unwrap();
    let planes: Vec<f32> = rows
        .iter()
        .flat_map(|r| r.planes.iter().map(|&v| v as f32))
        .collect();
    let planes = Tensor::from_vec(planes, (rows.len(), 6, 8, 8), &Device::Cpu).unwrap();
    let values = net.value(&planes, None).unwrap().to_vec1::<f32>().unwrap();
    let n = rows.len() as f64;
    let mse = rows
        .iter()
        .zip(&values)
        .map(|(r, &p)| (p as f64 - r.label as f64).powi(2))
        .sum::<f64>()
        / n;
    let decisive: Vec<_> = rows
        .iter()
        .zip(&values)
        .filter(|(r, _)| r.label != 0.5)
        .collect();
    let right = decisive
        .iter()
        .map(|(r, &p)| {
            if p == 0.5 {
                0.5
            } else if (p > 0.5) == (r.label > 0.5) {
                1.0
            } else {
                0.0
            }
        })
        .sum::<f64>();
    let acc = right / decisive.len() as f64;

    let stdout = ok(&[
        "evaluate",
        "--checkpoint",
        ck.to_str().unwrap(),
        "--baseline",
        "material",
        "--data",
        ds.to_str().unwrap(),
        "--batch",
        "37",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let overall = &evaluator(&json, "linear-material")["overall"];
    assert_eq!(overall["count"].as_u64().unwrap(), rows.len() as u64);
    let got_mse = overall["mse"].as_f64().unwrap();
    assert!((got_mse - mse).abs() < 1e-6, "{got_mse} vs {mse}");
    let got_acc = overall["accuracy"].as_f64().unwrap();
    assert!((got_acc - acc).abs() < 1e-9, "{got_acc} vs {acc}");
    // The baseline sits beside the network in the same report.
    assert_eq!(
        evaluator(&json, "material")["overall"]["count"].as_u64(),
        Some(rows.len() as u64)
    );
}

#[test]
fn a_checkpoint_of_another_encoder_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = selfplay_dataset(tmp.path());
    let ck = tmp.path().join("other");
    linear_checkpoint(&ck, "arimaa-other-6x8x8");
    let o = plies(&[
        "evaluate",
        "--checkpoint",
        ck.to_str().unwrap(),
        "--data",
        ds.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("arimaa-other-6x8x8") && err.contains("'arimaa-6x8x8'"),
        "{err}"
    );
    // Nothing to evaluate, and an unknown split, are errors too.
    let o = plies(&["evaluate", "--data", ds.to_str().unwrap()]);
    assert!(!o.status.success());
    let o = plies(&[
        "evaluate",
        "--baseline",
        "material",
        "--data",
        ds.to_str().unwrap(),
        "--split",
        "holdout",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("--split holdout"));
}

/// Hand evaluators as baselines of any game: on Amazons games a Lieberum
/// player won against random, Lieberum calls the winner far better than
/// `random`; several splits side by side, the error by ply as CSV and plot;
/// an unknown name is refused naming the known ones.
#[test]
fn hand_evaluators_are_baselines_of_any_game() {
    let tmp = tempfile::tempdir().unwrap();
    let sp = tmp.path().join("sp");
    ok(&[
        "selfplay",
        "--game",
        "amazons",
        "--size",
        "6",
        "--white",
        "greedy:eval=lieberum",
        "--black",
        "random",
        "--alternate",
        "--games",
        "80",
        "--seed",
        "3",
        "--dataset",
        "amazons-units",
        "--out",
        sp.to_str().unwrap(),
        "--quiet",
    ]);
    let data = sp.join("dataset");
    let out = tmp.path().join("eval");
    let text = ok(&[
        "evaluate",
        "--data",
        data.to_str().unwrap(),
        "--baseline",
        "lieberum,mindist,random",
        "--split",
        "train,test",
        "--out",
        out.to_str().unwrap(),
    ]);
    for name in ["lieberum (train)", "mindist (test)", "random (test)"] {
        assert!(text.contains(name), "{name} missing:\n{text}");
    }
    assert!(out.join("ply.png").exists() && out.join("ply.svg").exists());
    let by_ply = read_csv(&out.join("by_ply.csv"));
    let error = |who: &str| -> f64 {
        // Over every ply of the train split, weighted by positions.
        let rows: Vec<_> = by_ply.iter().filter(|r| r["evaluator"] == who).collect();
        assert!(!rows.is_empty(), "no rows for {who}");
        let n: f64 = rows
            .iter()
            .map(|r| r["decisive"].parse::<f64>().unwrap())
            .sum();
        let wrong: f64 = rows
            .iter()
            .map(|r| {
                r["decisive"].parse::<f64>().unwrap() * r["error01"].parse::<f64>().unwrap_or(0.0)
            })
            .sum();
        wrong / n
    };
    let (lieberum, random) = (error("lieberum (train)"), error("random (train)"));
    assert!(
        lieberum + 0.1 < random,
        "lieberum {lieberum}, random {random}"
    );
    let o = plies(&[
        "evaluate",
        "--data",
        data.to_str().unwrap(),
        "--baseline",
        "material-balance",
    ]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    for known in ["lieberum", "mindist", "random"] {
        assert!(err.contains(known), "{known} not named: {err}");
    }
}
