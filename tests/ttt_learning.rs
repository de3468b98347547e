//! The Tic-tac-toe study in miniature: a network trained by TD(lambda) from
//! a database of its predecessor's games against EXPERT goes from losing
//! almost every game to a positive equity, and every output file is made.

use plies::experiment::ttt::{run, TttExperimentConfig};

#[test]
fn experiment_two_learns_from_a_database() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = TttExperimentConfig::published(2, tmp.path().to_path_buf());
    cfg.hidden = vec![80];
    cfg.sims = 2;
    cfg.db_games = 20_000;
    cfg.examples = 20_000;
    cfg.eval_every = 10_000;
    cfg.eval_games = 600;
    let r = run(&cfg, false).unwrap();
    let start: Vec<f64> = r
        .curve
        .iter()
        .filter(|p| p.examples == 0)
        .map(|p| p.mean_equity)
        .collect();
    assert_eq!(start.len(), 1);
    assert!(
        start[0] < -0.3,
        "an untrained network should lose: {start:?}"
    );
    let s = &r.summary[0];
    assert!(s.best_mean_equity > 0.1, "{:?}", r.summary);
    assert_eq!(r.runs.len(), 2 * 3);
    for f in [
        "equity_curve.csv",
        "equity_runs.csv",
        "summary.json",
        "equity.png",
        "equity.svg",
    ] {
        assert!(tmp.path().join(f).is_file(), "{f}");
    }
    // The databases are real datasets on disk and the network is exported.
    let ds = plies::dataset::Dataset::open(tmp.path().join("sim-00/db")).unwrap();
    ds.verify().unwrap();
    assert_eq!(ds.manifest().totals.games, 20_000);
    plies::checkpoint::load(
        &tmp.path().join("checkpoints/mlp80-sim00"),
        Some("tictactoe"),
        None,
    )
    .unwrap();
}

#[test]
fn the_same_seed_gives_the_same_curve() {
    let go = || {
        let tmp = tempfile::tempdir().unwrap();
        let mut cfg = TttExperimentConfig::published(1, tmp.path().to_path_buf());
        cfg.hidden = vec![20];
        cfg.sims = 2;
        cfg.examples = 1000;
        cfg.eval_every = 500;
        cfg.eval_games = 200;
        run(&cfg, false)
            .unwrap()
            .runs
            .iter()
            .map(|p| p.equity)
            .collect::<Vec<_>>()
    };
    assert_eq!(go(), go());
}
