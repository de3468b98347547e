//! Pentago's 288 moves through the loop: the self-play targets give the
//! rotations of one placement logits of their own (eight policy planes),
//! the network's policy head has 288 outputs and its MCTS plays with them;
//! a model whose policy head cannot score every move is refused by name.

mod common;

use std::path::Path;
use std::process::Command;

use common::text;
use plies::dataset::Dataset;

fn run_loop(config: &str, out: &Path) -> std::process::Output {
    let path = out.with_extension("json");
    std::fs::write(&path, config).unwrap();
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1")
        .args(["loop", "--game", "pentago", "--quiet", "--config"])
        .arg(&path)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

const CONFIG: &str = r#"{
  "game": "pentago",
  "encoder": "ENCODER",
  "generations": 1,
  "window": 1,
  "seed": 3,
  "threads": 2,
  "selfplay": { "games": 6, "sims": 16, "bootstrap_sims": 64, "temperature_plies": 4 },
  "train": { "model": "MODEL", "epochs": 1, "batch": 32 },
  "gate": { "games": 2, "sims": 16 },
  "anchors": { "players": ["random"], "games": 2 }
}"#;

/// The loop's configuration with `model` on Pentago's `stones-2` planes.
fn config_with(model: &str) -> String {
    CONFIG
        .replace("ENCODER", "stones-2")
        .replace("MODEL", model)
}

#[test]
fn pentago_rotations_have_their_own_policy_logits() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("loop");
    let config = config_with("resnet-tiny");
    let o = run_loop(&config, &out);
    assert!(o.status.success(), "{}", text(&o));

    let data = Dataset::open(out.join("gen-000/data")).unwrap();
    data.verify().unwrap();
    let rows = data.rows(None).unwrap();
    let targets: Vec<_> = rows.iter().filter_map(|r| r.policy.as_ref()).collect();
    assert!(!targets.is_empty());
    let mut planes_used = [false; 8];
    for t in &targets {
        assert!(t.index.iter().all(|&i| i < 288), "{:?}", t.index);
        assert!((t.prob.iter().sum::<f32>() - 1.0).abs() < 1e-4);
        for &i in &t.index {
            planes_used[i as usize / 36] = true;
        }
    }
    // The searches visited moves with every rotation, each on its plane.
    assert!(planes_used.iter().all(|&u| u), "{planes_used:?}");

    // The network scores 288 moves.
    let config: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("gen-000/net/config.json")).unwrap(),
    )
    .unwrap();
    let text_config = config.to_string();
    assert!(text_config.contains("\"policy_planes\":8"), "{text_config}");

    // The MDRNN's policy head has one logit per point: refused, naming the
    // option and the count Pentago needs.
    let out = tmp.path().join("mdrnn");
    let config = config_with("mdrnn");
    let o = run_loop(&config, &out);
    assert!(!o.status.success());
    let err = text(&o);
    assert!(
        err.contains("policy_weight") && err.contains("288"),
        "{err}"
    );
}

#[test]
fn a_bad_anchor_is_refused_before_any_self_play() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("loop");
    let config =
        config_with("resnet-tiny").replace(r#"["random"]"#, r#"["random", "alphabeta:depth=x"]"#);
    let o = run_loop(&config, &out);
    assert!(!o.status.success());
    let err = text(&o);
    assert!(err.contains("alphabeta:depth=x"), "{err}");
    assert!(!out.exists(), "the run directory was claimed first");
}
