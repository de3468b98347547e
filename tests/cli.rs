//! The command line end to end: generate a dataset, verify it, train,
//! export, play a match; and clear failures on bad input.

use std::path::Path;

mod common;
use common::{plies, text};

#[test]
fn generate_verify_train_and_match() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let ck = tmp.path().join("ck");
    let d = db.to_str().unwrap();
    let o = plies(&[
        "data",
        "generate",
        "--game",
        "tictactoe",
        "--a",
        "td:40",
        "--b",
        "expert",
        "--games",
        "600",
        "--out",
        d,
        "--seed",
        "3",
        "--shard-rows",
        "1000",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = plies(&["data", "verify", d]);
    assert!(o.status.success(), "{}", text(&o));
    let o = plies(&["data", "stats", d, "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(stats["games"], 600);

    let o = plies(&[
        "train",
        "td",
        "--data",
        d,
        "--out",
        ck.to_str().unwrap(),
        "--hidden",
        "40",
        "--examples",
        "2000",
        "--eval-every",
        "1000",
        "--eval-games",
        "100",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("equity vs expert"));
    let spec = format!("greedy:{}", ck.display());
    let o = plies(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        &spec,
        "--b",
        "random",
        "--games",
        "200",
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        r["total"]["wins"].as_u64().unwrap()
            + r["total"]["draws"].as_u64().unwrap()
            + r["total"]["losses"].as_u64().unwrap(),
        200
    );

    // A corrupt shard is named.
    let shard = db.join("part-00000.arrow");
    let bytes = std::fs::read(&shard).unwrap();
    std::fs::write(&shard, &bytes[..bytes.len() / 2]).unwrap();
    let o = plies(&["data", "verify", d]);
    assert!(!o.status.success());
    assert!(text(&o).contains("part-00000.arrow"), "{}", text(&o));
    let o = plies(&[
        "train",
        "td",
        "--data",
        d,
        "--out",
        ck.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("part-00000.arrow"), "{}", text(&o));
    assert!(!text(&o).contains("panicked"), "{}", text(&o));
}

#[test]
fn replay_reports_the_first_difference_and_exits_non_zero() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tictactoe_oracle.jsonl");
    let o = plies(&[
        "rules",
        "replay",
        "--game",
        "tictactoe",
        fixture.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("2000 games"));
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.jsonl");
    let first = std::fs::read_to_string(&fixture)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut v: serde_json::Value = serde_json::from_str(&first).unwrap();
    v["moves"][0] = "b7".into();
    std::fs::write(&bad, v.to_string()).unwrap();
    let o = plies(&[
        "rules",
        "replay",
        "--game",
        "tictactoe",
        bad.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("'b7'") && text(&o).contains("rank"),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_player_specs_and_checkpoints_are_named() {
    let o = plies(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        "minimax",
        "--b",
        "random",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("minimax"), "{}", text(&o));
    let o = plies(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        "greedy:/nonexistent/ck",
        "--b",
        "random",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("/nonexistent/ck/config.json"),
        "{}",
        text(&o)
    );
    assert!(!text(&o).contains("panicked"));

    // A checkpoint of an older version of its encoder is refused for that
    // reason, with both versions named.
    let tmp = tempfile::tempdir().unwrap();
    let shipped =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints/tictactoe-mlp80-td");
    for f in ["config.json", "model.safetensors"] {
        std::fs::copy(shipped.join(f), tmp.path().join(f)).unwrap();
    }
    let config = tmp.path().join("config.json");
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    json["encoder"]["version"] = serde_json::json!(0);
    std::fs::write(&config, json.to_string()).unwrap();
    let spec = format!("greedy:{}", tmp.path().display());
    let o = plies(&[
        "match",
        "--game",
        "tictactoe",
        "--a",
        &spec,
        "--b",
        "random",
    ]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("tictactoe-9 version 0") && t.contains("is version 1"),
        "{t}"
    );
    assert!(!t.contains("panicked"), "{t}");
}

/// Runs `plies` under a memory limit of 8 GiB, expecting a refusal that
/// names `field` and the limit, without a panic or an abort.
fn refused_over_limit(args: &[&str], field: &str) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("PLIES_MEMORY_LIMIT", "8G")
        .args(args)
        .output()
        .unwrap();
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {t}");
    assert!(t.contains(field), "{args:?}: no `{field}` in {t}");
    assert!(
        t.contains("limit") && t.contains("8589934592"),
        "{args:?}: {t}"
    );
    assert!(!t.contains("panicked"), "{args:?}: {t}");
}

#[test]
fn absurd_sizes_are_refused_against_the_memory_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    let d = db.to_str().unwrap();
    let o = plies(&[
        "data",
        "generate",
        "--game",
        "tictactoe",
        "--a",
        "random",
        "--b",
        "random",
        "--games",
        "40",
        "--out",
        d,
        "--seed",
        "3",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = tmp.path().join("out");
    let out = out.to_str().unwrap();
    let huge = "1000000000000";
    let train = [
        "train", "--data", d, "--out", out, "--quiet", "--epochs", "1",
    ];
    refused_over_limit(
        &[&train[..], &["--model", "linear", "--batch", huge]].concat(),
        "batch",
    );
    let model = tmp.path().join("huge.json");
    std::fs::write(
        &model,
        r#"{"kind": "mlp", "hidden": [1000000000000], "activation": {"kind": "tanh"}, "init": {"kind": "fan_in"}}"#,
    )
    .unwrap();
    let model = model.to_str().unwrap();
    refused_over_limit(&[&train[..], &["--model", model]].concat(), "hidden");
    for sub in ["td", "supervised"] {
        refused_over_limit(
            &[
                "train", sub, "--data", d, "--out", out, "--hidden", huge, "--quiet",
            ],
            "hidden",
        );
    }
    let ck = Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints/tictactoe-mlp80-td");
    refused_over_limit(
        &[
            "evaluate",
            "--checkpoint",
            ck.to_str().unwrap(),
            "--data",
            d,
            "--split",
            "all",
            "--batch",
            huge,
        ],
        "batch",
    );
    assert!(!Path::new(out).exists());
}
