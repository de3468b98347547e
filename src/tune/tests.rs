use super::*;
use crate::game::Pentago;
use crate::infer::hand::PENTAGO_FEATURE_SET;
use crate::util::scratch;

fn small(method: TuneMethod, iterations: usize) -> TuneConfig {
    TuneConfig {
        iterations,
        games: 2,
        eval_every: 2,
        eval_games: 4,
        ..TuneConfig::new("pentago-features", method)
    }
}

#[test]
fn a_resumed_run_ends_where_an_uninterrupted_one_does() {
    for method in [TuneMethod::Perturb, TuneMethod::Spsa] {
        let (_a, whole) = scratch("whole");
        let (_b, split) = scratch("split");
        let full = tune::<Pentago>(&small(method, 6), &whole, &|_| {}).unwrap();
        let half = tune::<Pentago>(&small(method, 3), &split, &|_| {}).unwrap();
        assert_eq!(half.iterations_done, 3);
        let rest = tune::<Pentago>(&small(method, 6), &split, &|_| {}).unwrap();
        assert_eq!(rest.iterations_run, 3);
        assert_eq!(rest.weights, full.weights, "{method}");
        assert_eq!(rest.progress, full.progress, "{method}");
        let read = |dir: &Path, f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        assert_eq!(read(&split, "weights.json"), read(&whole, "weights.json"));
        assert_eq!(read(&split, "progress.csv"), read(&whole, "progress.csv"));
        assert_ne!(
            full.weights,
            (PENTAGO_FEATURE_SET.default_weights)(),
            "{method} never moved"
        );
        let loaded =
            WeightsFile::load(&whole.join("weights.json"), "pentago", &PENTAGO_FEATURE_SET)
                .unwrap();
        assert_eq!(loaded.weights(), full.weights.as_slice());
        // Iterations 0, 2, 4 and 6 are measured.
        let at: Vec<usize> = full.progress.iter().map(|r| r.iteration).collect();
        assert_eq!(at, [0, 2, 4, 6]);
    }
}

#[test]
fn resuming_with_other_settings_is_refused_naming_the_setting() {
    let (_d, out) = scratch("run");
    tune::<Pentago>(&small(TuneMethod::Perturb, 1), &out, &|_| {}).unwrap();
    let other = TuneConfig {
        sigma: 0.5,
        ..small(TuneMethod::Perturb, 2)
    };
    let e = tune::<Pentago>(&other, &out, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("sigma") && e.contains("0.5") && e.contains("--out"),
        "{e}"
    );
    let e = tune::<Pentago>(
        &TuneConfig {
            games: 3,
            ..small(TuneMethod::Spsa, 2)
        },
        &out,
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("--games 3"), "{e}");
    let e = tune::<crate::game::TicTacToe>(&small(TuneMethod::Spsa, 2), &out, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tictactoe") && e.contains("pentago-features"),
        "{e}"
    );
}

#[test]
fn a_directory_another_writer_holds_is_refused() {
    let (_d, out) = scratch("run");
    let held = RunDir::claim(&out).unwrap();
    let e = tune::<Pentago>(&small(TuneMethod::Spsa, 1), &out, &|_| {}).unwrap_err();
    assert!(
        matches!(e, TuneError::RunDir(RunDirError::Locked(_))),
        "{e}"
    );
    assert!(e.to_string().contains("another writer holds it"), "{e}");
    assert!(!out.join("tune-state.json").exists());
    drop(held);
    let r = tune::<Pentago>(&small(TuneMethod::Spsa, 1), &out, &|_| {}).unwrap();
    assert_eq!(r.iterations_done, 1);
}

#[test]
fn gomoku_weights_tune_in_the_threat_player_which_pentago_refuses() {
    let (_d, out) = scratch("gomoku");
    let cfg = TuneConfig {
        player: TunePlayer::Threats,
        iterations: 2,
        games: 2,
        eval_every: 2,
        eval_games: 2,
        ..TuneConfig::new("gomoku-features", TuneMethod::Spsa)
    };
    let r = tune::<crate::game::Gomoku>(&cfg, &out, &|_| {}).unwrap();
    assert_eq!(r.iterations_done, 2);
    assert_eq!(r.progress.len(), 2);
    let start = (crate::infer::hand::GOMOKU_FEATURE_SET.default_weights)();
    assert_eq!(r.weights.len(), start.len());
    assert!(r.weights.iter().all(|w| w.is_finite()), "{:?}", r.weights);
    // The saved run reads back with its player: another is refused.
    let greedy = TuneConfig {
        player: TunePlayer::Greedy,
        ..cfg.clone()
    };
    let e = tune::<crate::game::Gomoku>(&greedy, &out, &|_| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("player") && e.contains("threats"), "{e}");
    let (_p, pentago_out) = scratch("pentago");
    let e = tune::<Pentago>(
        &TuneConfig {
            player: TunePlayer::Threats,
            ..small(TuneMethod::Spsa, 1)
        },
        &pentago_out,
        &|_| {},
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("--player threats") && e.contains("pentago") && e.contains("greedy"),
        "{e}"
    );
}
