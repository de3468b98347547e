//! `plies grid` on a small Arimaa self-play dataset: a sampled grid of tiny
//! cnn3 configurations x 2 folds x 1 epoch; the ranked table in CSV,
//! Markdown and JSON agrees, a rerun skips finished runs, bad axis values
//! are refused naming them. (That validation folds never reach training is
//! the stream loader's fold-filter unit test.)

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn plies() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.env("RAYON_NUM_THREADS", "2");
    c
}

fn dataset(dir: &Path) -> PathBuf {
    let out = dir.join("selfplay");
    let o = plies()
        .args(["selfplay", "--game", "arimaa", "--white", "random-steps"])
        .args([
            "--black",
            "alphabeta:depth=1,eval=material",
            "--games",
            "150",
        ])
        .args([
            "--seed",
            "3",
            "--dataset",
            "arimaa-6x8x8",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    out.join("dataset")
}

fn grid_args(data: &Path, out: &Path) -> Vec<String> {
    [
        "grid",
        "--data",
        &data.display().to_string(),
        "--out",
        &out.display().to_string(),
        "--folds",
        "2",
        "--epochs",
        "1",
        "--batch",
        "64",
        "--filters",
        "4",
        "--hidden",
        "8",
        "--dropout",
        "0,0.25",
        "--regularizer",
        "l1,none",
        "--optimizer",
        "nesterov,sgd",
        "--kernel",
        "4x4,1x8",
        "--sample",
        "3",
        "--seed",
        "7",
        "--jobs",
        "2",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn grid_ranks_sampled_configurations_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let out = tmp.path().join("grid");
    let args = grid_args(&data, &out);
    let o = plies().args(&args).output().unwrap();
    let t = common::text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("6 runs trained, 0 finished before"), "{t}");

    // JSON: one row per configuration, ranked by MSE.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("grid.json")).unwrap()).unwrap();
    let rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    let mse: Vec<f64> = rows.iter().map(|r| r["mse"].as_f64().unwrap()).collect();
    assert!(mse.windows(2).all(|w| w[0] <= w[1]), "{mse:?}");
    let ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["rank"].as_u64(), Some(i as u64 + 1));
        assert_eq!(r["folds"].as_u64(), Some(2));
        let acc = r["accuracy"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&acc));
        assert!(r["mse_std"].as_f64().unwrap() >= 0.0);
    }
    let mut distinct = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3);

    // CSV agrees with the JSON.
    let csv = std::fs::read_to_string(out.join("grid.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("rank,config,dropout,regularizer,optimizer,kernel,mse"));
    assert_eq!(lines.len(), 4);
    for (line, r) in lines[1..].iter().zip(rows) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f[1], r["id"].as_str().unwrap());
        let m: f64 = f[6].parse().unwrap();
        assert!((m - r["mse"].as_f64().unwrap()).abs() < 1e-12);
    }
    // Markdown agrees, in the same order.
    let md = std::fs::read_to_string(out.join("grid.md")).unwrap();
    let md_rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| rank") && !l.starts_with("| ---"))
        .collect();
    assert_eq!(md_rows.len(), 3);
    for (l, r) in md_rows.iter().zip(rows) {
        assert!(l.contains(r["id"].as_str().unwrap()), "{l}");
        assert!(
            l.contains(&format!("{:.4}", r["mse"].as_f64().unwrap())),
            "{l}"
        );
    }
    // The printed table has the same order.
    let printed: Vec<usize> = ids.iter().map(|id| t.find(id).unwrap()).collect();
    assert!(printed.windows(2).all(|w| w[0] < w[1]), "{t}");

    // Per-run results: disjoint train and validation folds covering all.
    for id in &ids {
        let mut seen = Vec::new();
        for f in 0..2 {
            let dir = out.join("runs").join(id).join(format!("fold-{f}"));
            assert!(dir.join("metrics.csv").exists());
            let r: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                    .unwrap();
            let train: Vec<u64> = r["train_folds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            let valid: Vec<u64> = r["valid_folds"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            assert!(!valid.is_empty() && !train.is_empty());
            assert!(valid.iter().all(|v| !train.contains(v)));
            seen.extend(valid);
        }
        seen.sort();
        assert_eq!(
            seen,
            vec![0, 1, 2, 3, 4],
            "every dataset fold validated once"
        );
    }

    // A rerun trains nothing and writes the same table.
    let before = csv.clone();
    let o = plies().args(&args).output().unwrap();
    let t2 = common::text(&o);
    assert!(o.status.success(), "{t2}");
    assert!(t2.contains("0 runs trained, 6 finished before"), "{t2}");
    assert_eq!(
        std::fs::read_to_string(out.join("grid.csv")).unwrap(),
        before
    );

    // An interrupted grid (a result missing) trains only that run.
    let first = out.join("runs").join(ids[0]).join("fold-1");
    std::fs::remove_file(first.join("result.json")).unwrap();
    std::fs::remove_dir_all(first.join("run-state")).unwrap();
    std::fs::remove_file(first.join("metrics.csv")).unwrap();
    std::fs::remove_file(first.join("metrics.jsonl")).unwrap();
    let o = plies().args(&args).output().unwrap();
    let t3 = common::text(&o);
    assert!(t3.contains("1 runs trained, 5 finished before"), "{t3}");
    assert_eq!(
        std::fs::read_to_string(out.join("grid.csv")).unwrap(),
        before
    );

    // Other arguments in the same directory are refused, naming the field.
    let mut other = args.clone();
    let i = other.iter().position(|a| a == "7").unwrap();
    other[i] = "8".into();
    let o = plies().args(&other).output().unwrap();
    assert!(!o.status.success());
    let t4 = common::text(&o);
    assert!(t4.contains("seed"), "{t4}");

    // Bad axis values are refused, naming the flag and the value.
    let bad = |flag: &str, value: &str, expect: &[&str]| {
        let mut a = grid_args(&data, &tmp.path().join("bad"));
        let i = a.iter().position(|x| x == flag).unwrap();
        a[i + 1] = value.into();
        let o = plies().args(&a).output().unwrap();
        assert!(!o.status.success());
        let t = common::text(&o);
        for e in expect {
            assert!(t.contains(e), "{flag} {value}: {t}");
        }
    };
    bad("--kernel", "4x4,9x9", &["--kernel", "9x9", "8x8 board"]);
    bad("--dropout", "0,1.5", &["--dropout", "1.5"]);
    bad("--optimizer", "adam", &["--optimizer", "adam"]);
    bad("--regularizer", "l3", &["--regularizer", "l3"]);
    bad("--folds", "9", &["--folds", "9", "5 folds"]);
}

/// Every run's weights and the ranked table under `out`, for comparing a
/// grid killed and rerun with an uninterrupted one.
fn grid_outputs(out: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, found: &mut Vec<(PathBuf, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, found);
            } else if path.ends_with("model.safetensors") || path.ends_with("grid.csv") {
                let rel = path.strip_prefix(root).unwrap().to_path_buf();
                found.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut found = Vec::new();
    walk(out, out, &mut found);
    found.sort();
    found
}

/// A grid SIGKILLed at seeded instants over its whole duration and rerun
/// ends with the weights and table of an uninterrupted grid, and leaves
/// nothing half-written.
#[cfg(unix)]
#[test]
fn grid_killed_and_rerun_equals_an_uninterrupted_grid() {
    let tmp = tempfile::tempdir().unwrap();
    let data = dataset(tmp.path());
    let reference = tmp.path().join("grid-ref");
    let started = std::time::Instant::now();
    let o = plies().args(grid_args(&data, &reference)).output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    let took = (started.elapsed().as_millis() as u64).max(5);
    let want = grid_outputs(&reference);
    assert_eq!(
        want.iter()
            .filter(|(p, _)| p.ends_with("model.safetensors"))
            .count(),
        6 * 2
    );

    let out = tmp.path().join("grid");
    // While another writer holds the folder, the grid is refused before
    // it writes.
    let held = plies::util::run_dir::RunDir::claim(&out).unwrap();
    let o = plies().args(grid_args(&data, &out)).output().unwrap();
    let said = common::text(&o);
    assert!(
        !o.status.success() && said.contains("another writer holds it"),
        "{said}"
    );
    assert!(!out.exists(), "{said}");
    drop(held);
    for ms in common::delays(11, 4, took) {
        let mut c = plies();
        c.args(grid_args(&data, &out));
        common::kill_after(c, ms);
    }
    let o = plies().args(grid_args(&data, &out)).output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    assert_eq!(grid_outputs(&out), want, "grid after kills");
    let mut left = Vec::new();
    let mut stack = vec![tmp.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.contains(".plies-tmp-") || name.contains(".plies-staging") {
                left.push(p.clone());
            }
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    assert!(left.is_empty(), "left half-written: {left:?}");
}
