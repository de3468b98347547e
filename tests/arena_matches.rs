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

#[test]
fn matches_start_at_any_size_and_arimaa_setups_repeat_across_threads() {
    use plies::arena::{build_players, play_match_from, StartConfig};
    use plies::game::{Amazons, Arimaa};
    use plies::search::game_player::PlayerContext;

    let start = StartConfig::for_game::<Amazons>(Some(6), None).unwrap();
    let specs = ["random".to_string(), "alphabeta:depth=1".to_string()];
    let p = build_players::<Amazons>(&specs, &PlayerContext::default_for::<Amazons>(), |i| {
        format!("player {i}")
    })
    .unwrap();
    let r = play_match_from::<Amazons>(
        p[0].as_ref(),
        p[1].as_ref(),
        &start.starter::<Amazons>(),
        20,
        4,
        None,
        None,
    )
    .unwrap();
    assert_eq!(r.total.games(), 20);
    assert!(r.equity < 0.0, "{r}");
    // A 6x6 game is far shorter than a 10x10 one (92 moves at most).
    assert!(r.mean_plies < 40.0, "{r}");

    let start = StartConfig::for_game::<Arimaa>(None, None).unwrap();
    let specs = [
        "random-steps".to_string(),
        "random-steps:end=0.5".to_string(),
    ];
    let p = build_players::<Arimaa>(&specs, &PlayerContext::default_for::<Arimaa>(), |i| {
        format!("player {i}")
    })
    .unwrap();
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                play_match_from::<Arimaa>(
                    p[0].as_ref(),
                    p[1].as_ref(),
                    &start.starter::<Arimaa>(),
                    40,
                    11,
                    Some(2000),
                    None,
                )
                .unwrap()
            })
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one, two);
    assert_eq!(one.total.games(), 40);
}
