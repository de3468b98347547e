//! The Pentago learners end to end: the bucketed MDP learner on every game
//! it plays, `plies tune` and `plies train mdp` feeding the one player
//! grammar, `--random-opening` in matches, and `plies experiment pentago`
//! on a small budget.

use plies::arena::play_match;
use plies::game::{ConnectFour, TicTacToe};
use plies::search::mdp::{MdpPlayer, MdpSettings};
use plies::search::RandomPlayer;
use plies::train::mdp::{train_mdp, MdpTrainConfig};

mod common;
use common::{plies, text};

#[test]
fn the_mdp_learner_beats_random_at_tictactoe_and_connect_four() {
    let tmp = tempfile::tempdir().unwrap();
    let cfg = MdpTrainConfig {
        settings: MdpSettings {
            buckets: 400,
            ..MdpSettings::default()
        },
        games: 600,
        ..MdpTrainConfig::default()
    };
    let ttt = tmp.path().join("ttt.json");
    train_mdp::<TicTacToe>(&cfg, &ttt, &|_| {}).unwrap();
    let p = MdpPlayer::load::<TicTacToe>(&ttt).unwrap();
    let r = play_match::<TicTacToe>(&p, &RandomPlayer, 200, 3, None).unwrap();
    assert!(r.total.wins > 2 * r.total.losses, "{:?}", r.total);
    let c4 = tmp.path().join("c4.json");
    train_mdp::<ConnectFour>(&MdpTrainConfig { games: 200, ..cfg }, &c4, &|_| {}).unwrap();
    let p = MdpPlayer::load::<ConnectFour>(&c4).unwrap();
    let r = play_match::<ConnectFour>(&p, &RandomPlayer, 100, 3, None).unwrap();
    assert!(r.total.wins > r.total.losses, "{:?}", r.total);
}

#[test]
fn tuned_weights_and_mdp_models_play_through_the_player_specs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tune_dir = dir.join("tune");
    let o = plies(&[
        "tune",
        "--game",
        "pentago",
        "--method",
        "perturb",
        "--iterations",
        "4",
        "--eval-every",
        "2",
        "--eval-games",
        "4",
        "--out",
        tune_dir.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    for f in [
        "weights.json",
        "progress.csv",
        "progress.png",
        "progress.svg",
        "tune-state.json",
    ] {
        assert!(tune_dir.join(f).exists(), "{f}");
    }
    let model = dir.join("mdp.json");
    let o = plies(&[
        "train",
        "mdp",
        "--game",
        "pentago",
        "--games",
        "20",
        "--buckets",
        "100",
        "--out",
        model.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let weights = format!(
        "greedy:eval=pentago-features:{}",
        tune_dir.join("weights.json").display()
    );
    let mdp = format!("mdp:{}", model.display());
    let o = plies(&[
        "match",
        "--game",
        "pentago",
        "--a",
        &mdp,
        "--b",
        &weights,
        "--games",
        "4",
        "--random-opening",
        "6",
        "--json",
        "--seed",
        "5",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["openings"], "standard + 6 random plies");
    assert_eq!(
        v["total"]["wins"].as_u64().unwrap()
            + v["total"]["losses"].as_u64().unwrap()
            + v["total"]["draws"].as_u64().unwrap(),
        4
    );
    // A weights file of another length is refused, naming the field.
    std::fs::write(dir.join("bad.json"), r#"{"format":"plies-hand-weights","version":1,"game":"pentago","evaluator":"pentago-features","features":[],"weights":[]}"#).unwrap();
    let bad = format!(
        "greedy:eval=pentago-features:{}",
        dir.join("bad.json").display()
    );
    let o = plies(&[
        "match", "--game", "pentago", "--a", &bad, "--b", "random", "--games", "2",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("'features' is 0 long"), "{}", text(&o));
}

#[test]
fn the_experiment_runs_on_a_small_budget_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("exp");
    let args = [
        "experiment",
        "pentago",
        "--out",
        out.to_str().unwrap(),
        "--games",
        "4",
        "--mdp-games",
        "20",
        "--buckets",
        "100",
        "--curve-every",
        "10",
        "--curve-games",
        "4",
        "--perturb-iterations",
        "2",
        "--spsa-iterations",
        "2",
        "--mcts-sims",
        "20",
        "--json",
    ];
    let o = plies(&args);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14);
    assert_eq!(rows[0]["paper"], 0.96);
    assert_eq!(v["curve"].as_array().unwrap().len(), 2);
    for f in [
        "results.csv",
        "results.txt",
        "results.json",
        "mdp_curve.csv",
        "mdp_curve.png",
        "mdp.json",
    ] {
        assert!(out.join(f).exists(), "{f}");
    }
    // A second run finds every stage done and reports the same table.
    let again = plies(&args);
    assert!(again.status.success(), "{}", text(&again));
    let w: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(w["rows"], v["rows"]);
}

#[cfg(unix)]
#[test]
fn tune_and_train_mdp_killed_and_rerun_end_as_uninterrupted_runs() {
    use common::delays;
    use std::process::Command;
    use std::time::Instant;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let cmd = |args: &[String]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
        c.args(args).env("RAYON_NUM_THREADS", "2");
        c
    };
    let timed = |args: &[String]| {
        let t = Instant::now();
        let o = cmd(args).output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
        (t.elapsed().as_millis() as u64).max(5)
    };
    let kill_after = |args: &[String], ms: u64| common::kill_after(cmd(args), ms);
    let read = |p: std::path::PathBuf| {
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    };
    let tune = |out: &std::path::Path| -> Vec<String> {
        [
            "tune",
            "--game",
            "pentago",
            "--iterations",
            "60",
            "--games",
            "8",
            "--eval-every",
            "10",
            "--eval-games",
            "20",
            "--seed",
            "4",
            "--quiet",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string()])
        .collect()
    };
    let reference = root.join("tune-ref");
    let took = timed(&tune(&reference));
    let out = root.join("tune");
    for ms in delays(5, 3, took) {
        kill_after(&tune(&out), ms);
    }
    timed(&tune(&out));
    for f in ["weights.json", "progress.csv", "tune-state.json"] {
        assert_eq!(
            read(out.join(f)),
            read(reference.join(f)),
            "{f} after kills"
        );
    }

    let mdp = |out: &std::path::Path| -> Vec<String> {
        [
            "train",
            "mdp",
            "--game",
            "pentago",
            "--games",
            "1500",
            "--save-every",
            "50",
            "--quiet",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string()])
        .collect()
    };
    let reference = root.join("mdp-ref.json");
    let took = timed(&mdp(&reference));
    let out = root.join("mdp.json");
    for ms in delays(6, 3, took) {
        kill_after(&mdp(&out), ms);
    }
    timed(&mdp(&out));
    assert_eq!(read(out.clone()), read(reference), "the model after kills");
    // No temporary file is left beside the model or the tuning outputs.
    let temporaries: Vec<_> = [root.to_path_buf(), root.join("tune")]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).unwrap().flatten())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".plies-tmp-"))
        .collect();
    assert!(temporaries.is_empty(), "{temporaries:?}");
}
