//! Matches: colours alternate, results are reproducible from the seed
//! whatever the thread count, and random play matches the known
//! Tic-tac-toe statistics.

use plies::arena::play_match;
use plies::game::TicTacToe;
use plies::search::{ExpertPlayer, RandomPlayer};

#[test]
fn random_play_has_the_known_first_player_advantage() {
    // Uniformly random Tic-tac-toe: x wins 58.5%, o 28.8%, draws 12.7%.
    let r = play_match::<TicTacToe>(&RandomPlayer, &RandomPlayer, 20_000, 5, None).unwrap();
    let first = r.a_first;
    let n = first.games() as f64;
    assert_eq!(first.games(), 10_000);
    assert!((first.wins as f64 / n - 0.585).abs() < 0.02, "{r}");
    assert!((first.draws as f64 / n - 0.127).abs() < 0.015, "{r}");
    let second = r.a_second;
    assert!((second.losses as f64 / n - 0.585).abs() < 0.02, "{r}");
}

#[test]
fn expert_beats_random_and_results_do_not_depend_on_threads() {
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let a = one
        .install(|| play_match::<TicTacToe>(&ExpertPlayer, &RandomPlayer, 2000, 9, None).unwrap());
    let b = two
        .install(|| play_match::<TicTacToe>(&ExpertPlayer, &RandomPlayer, 2000, 9, None).unwrap());
    assert_eq!(a, b);
    let c = play_match::<TicTacToe>(&ExpertPlayer, &RandomPlayer, 2000, 10, None).unwrap();
    assert_ne!(a.total, c.total);
    assert!(a.equity > 0.5, "{a}");
    let elo = a.elo.unwrap();
    assert!(
        elo.lo > 100.0 && elo.lo < elo.elo && elo.elo < elo.hi,
        "{elo:?}"
    );
}
