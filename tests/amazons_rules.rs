//! Amazons: replays of OpenSpiel's random games on 6x6, 8x8 and 10x10
//! (board, side to move, terminal flag, returns and the legal-move list or
//! its count + digest at every ply), notation, records and the hand
//! evaluators. Fixtures: `scripts/gen_amazons_fixtures.sh`.

use plies::game::amazons::{Cell, Reach};
use plies::game::{Amazons, Game, Outcome, Side};
use plies::infer::hand::{AmazonsLieberum, AmazonsMinDist, HandEval, HandEvaluator};
use plies::record::amazons_text::{read_amazons_records, write_amazons_records, AmazonsRecord};
use plies::record::{replay_file, RecordError};
use plies::search::{GreedyPlayer, Player, RandomPlayer};
use plies::util::seeded_rng;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod common;

/// The fixture for `n`.
fn fixture(n: usize, dir: &Path) -> PathBuf {
    common::oracle_fixture(&format!("amazons_oracle_{n}"), dir)
}

fn replay(n: usize, games: usize, plies: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = fixture(n, dir.path());
    let t = Instant::now();
    let s = replay_file::<Amazons>(&path).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "{n}x{n}: {} games, {} plies, {} legal moves compared in {:.2?}",
        s.games,
        s.plies,
        s.legal_moves_compared,
        t.elapsed()
    );
    assert_eq!((s.games, s.plies), (games, plies), "{n}x{n}");
    assert!(s.legal_moves_compared > 100 * plies);
}

#[test]
fn replays_openspiel_6x6() {
    replay(6, 500, 13137);
}

#[test]
fn replays_openspiel_8x8() {
    replay(8, 500, 23938);
}

#[test]
fn replays_openspiel_10x10() {
    replay(10, 500, 36204);
}

#[test]
fn opening_has_2176_moves_on_10x10() {
    let g = Amazons::new();
    assert_eq!(g.size(), 10);
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    assert_eq!(moves.len(), 2176);
    let mut names: Vec<String> = moves.iter().map(|&m| g.move_to_string(m)).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 2176);
    assert!(names.contains(&"d1-d7/g7".to_string()));
    // Speed of full generation at the opening, for the report.
    let reps = 2000;
    let t = Instant::now();
    let mut total = 0;
    for _ in 0..reps {
        g.legal_moves(&mut moves);
        total += moves.len();
    }
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "10x10 opening: {reps} generations in {secs:.3} s = {:.0} generations/s, {:.1} M moves/s",
        reps as f64 / secs,
        total as f64 / secs / 1e6
    );
}

#[test]
fn notation_round_trips_on_every_size() {
    let mut moves = Vec::new();
    for n in [6, 8, 10] {
        let mut g = Amazons::with_size(n).unwrap();
        let mut rng = seeded_rng(7, n as u64);
        while g.outcome().is_none() {
            g.legal_moves(&mut moves);
            for &m in &moves {
                let s = g.move_to_string(m);
                assert_eq!(g.parse_move(&s).unwrap(), m, "{s}");
            }
            let mv = RandomPlayer.choose(&g, &mut rng).unwrap();
            g.play(mv);
            // The text form round-trips and implies the side to move.
            let back = Amazons::from_text(&g.to_text()).unwrap();
            assert_eq!(back, g);
            assert_eq!(back.side_to_move(), g.side_to_move());
        }
        let loser = g.side_to_move();
        assert_eq!(g.outcome(), Some(Outcome::Win(loser.other())));
        assert!(g.render().contains("has won"));
    }
}

#[test]
fn bad_moves_name_the_token_and_why() {
    let g = Amazons::new();
    for (tok, why) in [
        ("d1d7g7", "FROM-TO/ARROW"),
        ("d1-d7", "no '/'"),
        ("k1-d7/g7", "file"),
        ("d1-d11/g7", "rank"),
        ("d1-d0/g7", "rank"),
        ("e1-e5/e6", "no amazon"),
        ("d10-d5/d4", "no amazon"),
        ("d1-e3/e4", "not reachable"),
        ("d1-d7/d10", "arrow cannot reach"),
        ("a4-a6/a8", "arrow cannot reach"),
    ] {
        let e = g.parse_move(tok).unwrap_err().to_string();
        assert!(e.contains(tok) && e.contains(why), "{tok}: {e}");
    }
    // Shooting back through the vacated square is legal.
    assert!(g.parse_move("d1-d2/d1").is_ok());
    assert!(g.parse_move("a4-b4/a4").is_ok());
    assert!(Amazons::with_size(7).is_err());
    assert!(Amazons::from_text("X./..").is_err());
    assert!(Amazons::from_text("X...../....../....../....../....../......").is_err());
}

#[test]
fn records_round_trip_and_refuse_illegal_moves() {
    let dir = std::env::temp_dir().join(format!("plies_amazons_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut recs = Vec::new();
    for (i, n) in [6usize, 8, 10].into_iter().enumerate() {
        let mut g = Amazons::with_size(n).unwrap();
        let mut rng = seeded_rng(11, i as u64);
        let mut moves = Vec::new();
        while g.outcome().is_none() && moves.len() < 40 {
            let mv = RandomPlayer.choose(&g, &mut rng).unwrap();
            g.play(mv);
            moves.push(mv);
        }
        let winner = g.outcome().map(|o| match o {
            Outcome::Win(s) => s,
            Outcome::Draw => unreachable!("no draws in Amazons"),
        });
        recs.push(AmazonsRecord::from_moves(n, &moves, winner).unwrap());
    }
    let path = dir.join("games.txt");
    write_amazons_records(&path, &recs).unwrap();
    assert_eq!(read_amazons_records(&path).unwrap(), recs);

    let bad = dir.join("bad.txt");
    std::fs::write(
        &bad,
        "# two games\n6 b1-b4/e4 a5-a3/c3 *\n6 b1-b4/e4 a5-b4/a3\n",
    )
    .unwrap();
    match read_amazons_records(&bad).unwrap_err() {
        RecordError::BadMove {
            line, ply, token, ..
        } => {
            assert_eq!((line, ply, token.as_str()), (3, 1, "a5-b4/a3"));
        }
        e => panic!("{e}"),
    }
    std::fs::write(&bad, "12 a1-a2/a3\n").unwrap();
    let e = read_amazons_records(&bad).unwrap_err().to_string();
    assert!(e.contains(":1:") && e.contains("'12'"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The colour-swapped mirror: rows reversed, X and O exchanged.
fn mirror(g: &Amazons) -> Amazons {
    let text: Vec<String> = g
        .to_text()
        .split('/')
        .rev()
        .map(|r| {
            r.chars()
                .map(|c| match c {
                    'X' => 'O',
                    'O' => 'X',
                    c => c,
                })
                .collect()
        })
        .collect();
    Amazons::from_text(&text.join("/")).unwrap()
}

#[test]
fn evaluators_are_antisymmetric_on_mirrored_positions() {
    let evals: [&dyn HandEvaluator<Amazons>; 2] = [&AmazonsMinDist, &AmazonsLieberum];
    let mut checked = 0;
    for n in [6, 8, 10] {
        for game in 0..5u64 {
            let mut g = Amazons::with_size(n).unwrap();
            let mut rng = seeded_rng(3, game * 100 + n as u64);
            while g.outcome().is_none() {
                let m = mirror(&g);
                assert_eq!(m.side_to_move(), g.side_to_move());
                for e in evals {
                    let (v, vm) = (e.value(&g), e.value(&m));
                    assert!(
                        (v + vm).abs() <= 1e-3 * (1.0 + v.abs()),
                        "{}: {v} vs {vm} on {}",
                        e.name(),
                        g.to_text()
                    );
                }
                checked += 1;
                g.play(RandomPlayer.choose(&g, &mut rng).unwrap());
            }
        }
    }
    assert!(checked > 100);
    // The start position is symmetric: both values are zero.
    for n in [6, 8, 10] {
        let g = Amazons::with_size(n).unwrap();
        assert_eq!(AmazonsMinDist.value(&g), 0.0);
        assert!(AmazonsLieberum.value(&g).abs() < 1e-4);
    }
}

#[test]
fn distances_hand_computed() {
    // X on a6 alone in a walled 2x3 corner; O outside.
    let g = Amazons::from_text("X.#.../..#.../..#.../###.../....../.....O").unwrap();
    let q = g.distances(Side::First, Reach::Queen);
    let k = g.distances(Side::First, Reach::King);
    let at = |name: &str| {
        let b = name.as_bytes();
        (6 - (b[1] - b'0') as usize) * 6 + (b[0] - b'a') as usize
    };
    assert_eq!(
        (q[at("a6")], q[at("a4")], q[at("b5")], q[at("b4")]),
        (0, 1, 1, 2)
    );
    assert_eq!((k[at("a4")], k[at("b4")]), (2, 2));
    assert_eq!(q[at("f1")], u8::MAX);
    assert_eq!(g.cell(at("c6")), Cell::Arrow);
    assert_eq!(g.mobility(at("a6") as u8), 4); // a5 a4 b6 b5
}

fn greedy_vs_random(eval: Arc<dyn plies::infer::Evaluator<Amazons>>, games: u64) -> (u32, u32) {
    let greedy = GreedyPlayer::new(eval, true);
    let mut wins = 0;
    for i in 0..games {
        let mut g = Amazons::with_size(6).unwrap();
        let mut rng = seeded_rng(2024, i);
        let greedy_side = if i % 2 == 0 {
            Side::First
        } else {
            Side::Second
        };
        while g.outcome().is_none() {
            let mv = if g.side_to_move() == greedy_side {
                greedy.choose(&g, &mut rng).unwrap()
            } else {
                RandomPlayer.choose(&g, &mut rng).unwrap()
            };
            g.play(mv);
        }
        if g.outcome() == Some(Outcome::Win(greedy_side)) {
            wins += 1;
        }
    }
    (wins, games as u32)
}

#[test]
fn greedy_mindist_beats_random_on_6x6() {
    let t = Instant::now();
    let (w, n) = greedy_vs_random(
        Arc::new(HandEval::from_formula("mindist", 10_000.0, AmazonsMinDist)),
        100,
    );
    eprintln!(
        "greedy mindist vs random, 6x6: {w}/{n} in {:.2?}",
        t.elapsed()
    );
    assert!(w >= 85, "{w}/{n}");
    let (w, n) = greedy_vs_random(
        Arc::new(HandEval::from_formula(
            "lieberum",
            10_000.0,
            AmazonsLieberum,
        )),
        100,
    );
    eprintln!("greedy lieberum vs random, 6x6: {w}/{n}");
    assert!(w >= 85, "{w}/{n}");
}

#[test]
fn evaluator_speed_report() {
    let g = Amazons::new();
    for e in [
        &AmazonsMinDist as &dyn HandEvaluator<Amazons>,
        &AmazonsLieberum,
    ] {
        let reps = 2000;
        let t = Instant::now();
        let mut acc = 0.0;
        for _ in 0..reps {
            acc += e.value(std::hint::black_box(&g));
        }
        let secs = t.elapsed().as_secs_f64();
        eprintln!(
            "{} on the 10x10 opening: {:.0} evaluations/s (sum {acc})",
            e.name(),
            reps as f64 / secs
        );
    }
}
