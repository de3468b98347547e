//! `Game::random_move` overrides: uniform over `legal_moves` (every legal
//! move drawn, nothing illegal, chi-square within a loose bound), `None`
//! exactly when the game is over, and random playouts as long on average as
//! with the default path (legal list + uniform pick). Fixed seeds throughout.

use plies::game::{Amazons, AtariGo, Game, Gomoku, Pentago, TicTacToe};
use plies::util::{seeded_rng, SeededRng};
use rand::RngExt;
use std::collections::HashMap;

/// The default sampler, written out: the full legal list and a uniform pick.
fn default_move<G: Game>(
    g: &G,
    rng: &mut SeededRng,
    scratch: &mut Vec<G::Move>,
) -> Option<G::Move> {
    g.legal_moves(scratch);
    (!scratch.is_empty()).then(|| scratch[rng.random_range(0..scratch.len())])
}

/// Draws `random_move` many times on `g` and checks it against `legal_moves`.
fn check_uniform<G: Game>(g: &G, seed: u64) {
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    let mut rng = seeded_rng(seed, 7);
    let mut scratch = Vec::new();
    if legal.is_empty() {
        assert_eq!(
            g.random_move(&mut rng, &mut scratch),
            None,
            "{}",
            g.to_text()
        );
        return;
    }
    let k = legal.len();
    let draws = (200 * k).max(20_000);
    let mut counts: HashMap<G::Move, usize> = legal.iter().map(|&m| (m, 0)).collect();
    for _ in 0..draws {
        let mv = g
            .random_move(&mut rng, &mut scratch)
            .unwrap_or_else(|| panic!("no move drawn in {}", g.to_text()));
        *counts
            .get_mut(&mv)
            .unwrap_or_else(|| panic!("illegal {mv:?} drawn in {}", g.to_text())) += 1;
    }
    let expected = draws as f64 / k as f64;
    let mut chi2 = 0.0;
    for (mv, &c) in &counts {
        assert!(
            c > 0,
            "{mv:?} never drawn in {} ({draws} draws)",
            g.to_text()
        );
        chi2 += (c as f64 - expected).powi(2) / expected;
    }
    // Loose: mean k - 1, sd sqrt(2 (k - 1)); 6 sd plus slack.
    let dof = (k - 1) as f64;
    let bound = dof + 6.0 * (2.0 * dof).sqrt() + 10.0;
    assert!(
        chi2 < bound,
        "chi-square {chi2:.1} >= {bound:.1} over {k} moves in {}",
        g.to_text()
    );
}

/// Positions along a few random games from `start` (every `step` plies),
/// the final ones included.
fn positions<G: Game>(start: &G, games: usize, step: u32, seed: u64) -> Vec<G> {
    let mut rng = seeded_rng(seed, 1);
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    for _ in 0..games {
        let mut g = start.clone();
        loop {
            if g.ply().is_multiple_of(step) || g.outcome().is_some() {
                out.push(g.clone());
            }
            match default_move(&g, &mut rng, &mut scratch) {
                Some(mv) => g.play(mv),
                None => break,
            }
        }
    }
    out
}

/// Mean playout length with `random_move` against the default path: equal
/// within 5 standard errors.
fn check_mean_length<G: Game>(start: &G, games: usize, seed: u64) {
    let run = |fast: bool| {
        let mut rng = seeded_rng(seed, if fast { 2 } else { 3 });
        let mut scratch = Vec::new();
        let lens: Vec<f64> = (0..games)
            .map(|_| {
                let mut g = start.clone();
                let mut n = 0u32;
                loop {
                    let mv = if fast {
                        g.random_move(&mut rng, &mut scratch)
                    } else {
                        default_move(&g, &mut rng, &mut scratch)
                    };
                    let Some(mv) = mv else { break };
                    g.play(mv);
                    n += 1;
                }
                assert!(
                    g.outcome().is_some(),
                    "None before the end: {}",
                    g.to_text()
                );
                n as f64
            })
            .collect();
        let mean = lens.iter().sum::<f64>() / games as f64;
        let var = lens.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (games - 1) as f64;
        (mean, var)
    };
    let (m_fast, v_fast) = run(true);
    let (m_slow, v_slow) = run(false);
    let se = ((v_fast + v_slow) / games as f64).sqrt();
    assert!(
        (m_fast - m_slow).abs() < 5.0 * se + 1e-9,
        "{}: mean length {m_fast:.3} (random_move) vs {m_slow:.3} (default), se {se:.3}",
        G::NAME
    );
}

#[test]
fn tictactoe_random_move_is_uniform() {
    let start = TicTacToe::new();
    check_uniform(&start, 1);
    for (i, g) in positions(&start, 20, 1, 11).iter().enumerate() {
        check_uniform(g, 100 + i as u64);
    }
    check_mean_length(&start, 20_000, 5);
}

#[test]
fn pentago_random_move_is_uniform() {
    let start = Pentago::new();
    // The engine's list is every empty cell x all 8 rotations.
    let mut v = Vec::new();
    start.legal_moves(&mut v);
    assert_eq!(v.len(), 36 * 8);
    check_uniform(&start, 1);
    for (i, g) in positions(&start, 6, 4, 12).iter().enumerate() {
        let mut legal = Vec::new();
        g.legal_moves(&mut legal);
        if g.outcome().is_none() {
            let empties = 36 - g.ply() as usize;
            assert_eq!(legal.len(), 8 * empties, "{}", g.to_text());
        }
        check_uniform(g, 200 + i as u64);
    }
    // Few moves left: 3 empty cells, 24 moves.
    let g = Pentago::from_text("O@O@O@/@O@O@O/@O@O@O/O@O@O@/O@O@O@/O@O...").unwrap();
    assert!(g.outcome().is_none(), "{}", g.to_text());
    check_uniform(&g, 3);
    check_mean_length(&start, 4_000, 6);
}

/// A dense 9x9 Gomoku position with no five and only a few empty cells:
/// the random-cell tries give way to the k-th-empty pick.
fn dense_gomoku() -> Gomoku {
    let rows: Vec<String> = (0..9)
        .map(|r| {
            (0..9)
                .map(|c| {
                    if (c + 2 * (r % 2) + r / 2) % 4 < 2 {
                        'b'
                    } else {
                        'w'
                    }
                })
                .collect()
        })
        .collect();
    let mut cells: Vec<char> = rows.join("/").chars().collect();
    // Blank cells from the end until the counts are legal and >= 12 are empty.
    let mut blanked = 0;
    let mut i = cells.len();
    loop {
        i -= 1;
        if cells[i] == '/' {
            continue;
        }
        cells[i] = '.';
        blanked += 1;
        let text: String = cells.iter().collect();
        if blanked >= 12 {
            if let Ok(g) = Gomoku::from_text(&text) {
                if g.outcome().is_none() {
                    return g;
                }
            }
        }
        assert!(blanked < 40, "no dense position found");
    }
}

#[test]
fn gomoku_random_move_is_uniform() {
    for n in [9, 15] {
        let start = Gomoku::with_size(n).unwrap();
        check_uniform(&start, 1);
        for (i, g) in positions(&start, 3, 10, 13).iter().enumerate() {
            check_uniform(g, 300 + i as u64);
        }
    }
    let dense = dense_gomoku();
    check_uniform(&dense, 4);
    check_mean_length(&Gomoku::with_size(9).unwrap(), 4_000, 7);
    check_mean_length(&Gomoku::with_size(15).unwrap(), 2_000, 8);
}

#[test]
fn atari_go_random_move_is_uniform() {
    // a5 is suicide for Black: 21 empty points, 20 legal.
    let g = AtariGo::from_text(".O.../O..../...../....X/....X").unwrap();
    let mut v = Vec::new();
    g.legal_moves(&mut v);
    assert_eq!(v.len(), 20);
    check_uniform(&g, 1);
    // No legal move: a draw, and no move drawn.
    let g = AtariGo::from_text("XX.XO/XXOOO/OOOOX/XOO.X/.XOXX").unwrap();
    check_uniform(&g, 2);
    for n in [5, 9] {
        let start = AtariGo::with_size(n).unwrap();
        check_uniform(&start, 3);
        for (i, g) in positions(&start, 4, 6, 14).iter().enumerate() {
            check_uniform(g, 400 + i as u64);
        }
    }
    check_mean_length(&AtariGo::with_size(5).unwrap(), 4_000, 9);
    check_mean_length(&AtariGo::with_size(9).unwrap(), 3_000, 10);
}

#[test]
fn amazons_random_move_is_uniform() {
    // White walled in at a6 with 6 arrows down (White to move): no move.
    let g = Amazons::from_text("X#..../##..../....../....../....##/....#O").unwrap();
    assert!(g.outcome().is_some(), "{}", g.to_text());
    check_uniform(&g, 1);
    // White's only amazon has one empty neighbour; the vacated square is
    // the only arrow back along the line.
    let g = Amazons::from_text("X.#.../###.../....../....../.....#/....#O").unwrap();
    let mut v = Vec::new();
    g.legal_moves(&mut v);
    assert_eq!(v.len(), 1, "{}", g.to_text());
    check_uniform(&g, 2);
    for n in [6, 8] {
        let start = Amazons::with_size(n).unwrap();
        check_uniform(&start, 3);
        for (i, g) in positions(&start, 3, 7, 15 + n as u64).iter().enumerate() {
            check_uniform(g, 500 + 100 * n as u64 + i as u64);
        }
    }
    check_mean_length(&Amazons::with_size(6).unwrap(), 4_000, 11);
    check_mean_length(&Amazons::with_size(8).unwrap(), 1_500, 12);
}
