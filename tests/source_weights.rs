//! `plies train --source-weight`: rows weighed by where their games came
//! from. Two Tic-tac-toe sources with different results (random players,
//! and `naive` against random, which the first player nearly always wins):
//! weighing one source pulls the model towards it, a weight of 1 changes
//! nothing, and a prefix that matches no row, or a resume with other
//! weights, is refused by name.

mod common;

use std::path::{Path, PathBuf};

use common::plies;

fn ok(args: &[&str]) -> String {
    let o = plies(args);
    assert!(o.status.success(), "plies {args:?}: {}", common::text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Self-play records of `white` against random under `dir/name`; the
/// games' source.
fn records(dir: &Path, name: &str, white: &str, seed: &str) -> (PathBuf, String) {
    let out = dir.join(name);
    ok(&[
        "selfplay",
        "--game",
        "tictactoe",
        "--white",
        white,
        "--black",
        "random",
        "--games",
        "400",
        "--seed",
        seed,
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let games = out.join("games");
    let first = std::fs::read_dir(&games)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let line = std::fs::read_to_string(&first).unwrap();
    let record: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    (out, record["source"].as_str().unwrap().to_string())
}

fn build(records: &[&Path], out: &Path, held_out: bool) {
    let mut args = vec!["dataset", "build", "--records"];
    args.extend(records.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--out", out.to_str().unwrap()]);
    if held_out {
        args.extend(["--valid", "0", "--test", "1"]);
    }
    ok(&args);
}

fn train_args<'a>(data: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "train",
        "--data",
        data,
        "--model",
        "linear",
        "--optimizer",
        "sgd",
        "--lr",
        "0.05",
        "--epochs",
        "4",
        "--batch",
        "32",
        "--seed",
        "3",
        "--out",
        out,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    args
}

/// The MSE of checkpoint `ck` on every position of the dataset `ds`.
fn mse_on(ck: &Path, ds: &Path) -> f64 {
    let out = ok(&[
        "evaluate",
        "--checkpoint",
        ck.to_str().unwrap(),
        "--data",
        ds.to_str().unwrap(),
        "--split",
        "test",
        "--json",
    ]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    json["evaluators"][0]["overall"]["mse"].as_f64().unwrap()
}

fn valid_losses(out: &Path) -> Vec<f64> {
    std::fs::read_to_string(out.join("metrics.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["valid_loss"].as_f64().unwrap()
        })
        .collect()
}

#[test]
fn weighing_a_source_pulls_the_model_towards_it_and_mistakes_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let (random, random_source) = records(root, "random", "random", "1");
    let (naive, naive_source) = records(root, "naive", "naive", "2");
    assert_ne!(random_source, naive_source);
    let (mixed, only_random, only_naive) = (
        root.join("mixed"),
        root.join("only-random"),
        root.join("only-naive"),
    );
    build(&[&random, &naive], &mixed, false);
    build(&[&random], &only_random, true);
    build(&[&naive], &only_naive, true);
    let data = mixed.to_str().unwrap();

    let plain = root.join("plain");
    ok(&train_args(data, plain.to_str().unwrap(), &[]));
    let heavy_rule = format!("{random_source}=30");
    let heavy = root.join("heavy");
    ok(&train_args(
        data,
        heavy.to_str().unwrap(),
        &["--source-weight", &heavy_rule],
    ));
    let naive_rule = format!("{naive_source}=30");
    let heavy_naive = root.join("heavy-naive");
    ok(&train_args(
        data,
        heavy_naive.to_str().unwrap(),
        &["--source-weight", &naive_rule],
    ));
    // Each source fits better when it weighs more than the other does.
    let mse = |run: &Path, ds: &Path| mse_on(&run.join("best"), ds);
    let on_naive = [&heavy, &plain, &heavy_naive].map(|r| mse(r, &only_naive));
    let on_random = [&heavy, &heavy_naive].map(|r| mse(r, &only_random));
    assert!(
        on_naive[0] > on_naive[1] && on_naive[1] > on_naive[2],
        "naive games, random weighed / plain / naive weighed: {on_naive:?}"
    );
    assert!(
        on_random[0] < on_random[1],
        "random games, random weighed / naive weighed: {on_random:?}"
    );

    // A weight of 1 is no weight: the same validation losses.
    let one = root.join("one");
    let one_rule = format!("{naive_source}=1");
    ok(&train_args(
        data,
        one.to_str().unwrap(),
        &["--source-weight", &one_rule],
    ));
    for (a, b) in valid_losses(&plain).iter().zip(valid_losses(&one)) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }

    // A prefix that matches nothing names itself and the sources there.
    let o = plies(&train_args(
        data,
        root.join("typo").to_str().unwrap(),
        &["--source-weight", "selfplay:randm=4"],
    ));
    let text = common::text(&o);
    assert!(!o.status.success());
    assert!(
        text.contains("source_weight") && text.contains("selfplay:randm"),
        "{text}"
    );
    assert!(text.contains(&random_source), "{text}");
    assert!(!root.join("typo").exists());

    // A resumed run must weigh as the interrupted one did.
    let other_rule = format!("{random_source}=5");
    let o = plies(&train_args(
        data,
        heavy.to_str().unwrap(),
        &["--source-weight", &other_rule, "--resume"],
    ));
    let text = common::text(&o);
    assert!(!o.status.success());
    assert!(text.contains("source_weights"), "{text}");

    // Malformed rules are refused before anything runs.
    for bad in ["selfplay", "x=0", "=2"] {
        let o = plies(&train_args(
            data,
            root.join("bad").to_str().unwrap(),
            &["--source-weight", bad],
        ));
        assert!(!o.status.success(), "{bad}");
        assert!(common::text(&o).contains("source-weight"), "{bad}");
    }
}
