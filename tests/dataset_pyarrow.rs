//! Datasets written by plies, read by pyarrow alone
//! (`scripts/check_dataset_pyarrow.py`): schema metadata, sha256 and row
//! counts against the manifest, and every row and column equal to what
//! `plies data dump` (the Rust reader) returns. Also runs
//! `plies bench loader` end to end with its pyarrow side.
//!
//! Python: `$PLIES_DATA_PYTHON`, else `.venv-data/bin/python` in the crate
//! root (`python3 -m venv .venv-data && .venv-data/bin/pip install pyarrow
//! numpy`; the tests do this themselves when neither exists). If that fails
//! too the tests print a note and pass, unless `PLIES_REQUIRE_PYTHON=1` (as
//! in CI), when they fail.

mod common;

use common::{plies, text};
use std::path::{Path, PathBuf};
use std::process::Command;

fn python() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            common::PythonEnv {
                env_var: "PLIES_DATA_PYTHON",
                venv: ".venv-data",
                import: "pyarrow, numpy",
                packages: &["pyarrow", "numpy"],
            }
            .find()
        })
        .clone()
}

/// A tic-tac-toe dataset of several shards.
fn generate(dir: &Path) -> PathBuf {
    let out = dir.join("ttt");
    let o = plies(&[
        "data",
        "generate",
        "--game",
        "tictactoe",
        "--a",
        "random",
        "--b",
        "expert",
        "--games",
        "150",
        "--seed",
        "3",
        "--shard-rows",
        "300",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    out
}

fn check(python: &Path, data: &Path, split: Option<&str>) -> serde_json::Value {
    let mut args = vec!["data", "dump", data.to_str().unwrap()];
    if let Some(s) = split {
        args.extend(["--split", s]);
    }
    let dump = plies(&args);
    assert!(dump.status.success(), "{}", text(&dump));
    let rows = data.with_extension(format!("{}.jsonl", split.unwrap_or("all")));
    std::fs::write(&rows, &dump.stdout).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_dataset_pyarrow.py");
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(data).arg(&rows);
    if let Some(s) = split {
        cmd.args(["--split", s]);
    }
    let out = cmd.output().expect("run check_dataset_pyarrow.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).expect("JSON from the check script")
}

#[test]
fn pyarrow_reads_every_row_as_plies_does() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = generate(tmp.path());
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(data.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["shards"].as_array().unwrap().len() >= 3);

    let all = check(&py, &data, None);
    assert_eq!(all["ok"], true);
    assert_eq!(all["rows_compared"], manifest["totals"]["rows"]);
    let valid = check(&py, &data, Some("valid"));
    assert_eq!(
        valid["rows_compared"],
        manifest["totals"]["rows_per_split"]["valid"]
    );

    // A dump that differs in one float is caught, naming the column.
    let rows = data.with_extension("all.jsonl");
    let text_rows = std::fs::read_to_string(&rows).unwrap();
    let bad = text_rows.replacen("\"label\":1.0", "\"label\":0.99999994", 1);
    assert_ne!(bad, text_rows);
    std::fs::write(&rows, bad).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/check_dataset_pyarrow.py");
    let out = Command::new(&py)
        .arg(script)
        .arg(&data)
        .arg(&rows)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("column `label`"));
}

#[test]
fn bench_loader_runs_both_sides() {
    let Some(py) = python() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let data = generate(tmp.path());
    let o = plies(&[
        "bench",
        "loader",
        "--data",
        data.to_str().unwrap(),
        "--batch",
        "32",
        "--buffer-rows",
        "128",
        "--train-steps",
        "2",
        "--python",
        py.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let rows = v["rows"].as_u64().unwrap();
    assert_eq!(v["loader"]["positions"].as_u64().unwrap(), rows);
    assert_eq!(v["pyarrow"]["positions"].as_u64().unwrap(), rows);
    assert!(v["loader"]["positions_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["cnn3_train"]["positions_per_s"].as_f64().unwrap() > 0.0);
    assert!(v["loader_over_pyarrow"].as_f64().unwrap() > 0.0);
    let peak = v["loader"]["peak_buffer_rows"].as_u64().unwrap();
    assert!((128..128 + 4096).contains(&peak), "{peak}");
}
