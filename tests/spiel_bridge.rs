//! OpenSpiel's MCTS bot as an opponent (src/search/spiel_bot.rs,
//! scripts/spiel_mcts_bot.py): whole games against plies' random player in
//! every bridged game, every bridge move legal in plies' engine; the same
//! seed plays the same moves; bad options and a broken Python give clear
//! errors. Skipped (with a note) without a Python that has open-spiel,
//! unless PLIES_REQUIRE_PYTHON=1.

mod common;

use common::PythonEnv;
use plies::game::{Amazons, AtariGo, ConnectFour, Game, Gomoku, Pentago, TicTacToe};
use plies::games::GameSupport;
use plies::search::spiel_bot::{spiel_mcts_player, SpielMctsOptions, SpielMctsPlayer};
use plies::search::{Player, RandomPlayer, SearchError};
use plies::util::seeded_rng;
use std::path::{Path, PathBuf};

const SPIEL: PythonEnv = PythonEnv {
    env_var: "PLIES_SPIEL_PYTHON",
    venv: ".venv-spiel",
    import: "pyspiel",
    packages: &["open-spiel==2.0.2"],
};

fn options(python: &Path, sims: &str, seed: &str) -> SpielMctsOptions {
    let mut o =
        SpielMctsOptions::from_pairs(&[("sims", sims), ("seed", seed), ("rollouts", "1")]).unwrap();
    o.python = Some(python.to_path_buf());
    o
}

/// Plays one game from `start` between the bridge and the random player
/// the way the arena does (one session each, both told every move); checks
/// every bridge move is legal. Returns the moves and the number of bridge
/// moves.
fn play<G: GameSupport>(
    bridge: &dyn Player<G>,
    bridge_first: bool,
    start: G,
    seed: u64,
) -> (Vec<String>, usize) {
    let random = RandomPlayer;
    let players: [&dyn Player<G>; 2] = if bridge_first {
        [bridge, &random]
    } else {
        [&random, bridge]
    };
    let bridge_side = if bridge_first { 0 } else { 1 };
    let mut sessions = [players[0].session(), players[1].session()];
    let mut rng = seeded_rng(seed, 0);
    let mut state = start;
    let mut moves = Vec::new();
    let mut bridge_moves = 0;
    let mut legal = Vec::new();
    while state.outcome().is_none() {
        let mover = state.ply() as usize % 2;
        let mv = sessions[mover]
            .choose(&state, &mut rng)
            .unwrap_or_else(|e| panic!("{} at ply {}: {e}", G::NAME, state.ply()));
        state.legal_moves(&mut legal);
        assert!(
            legal.contains(&mv),
            "{}: {:?} from {} is not legal in {}",
            G::NAME,
            mv,
            players[mover].name(),
            state.to_text()
        );
        if mover == bridge_side {
            bridge_moves += 1;
        }
        moves.push(state.move_to_string(mv));
        for s in &mut sessions {
            s.observe(&state, mv);
        }
        state.play(mv);
    }
    (moves, bridge_moves)
}

fn whole_games<G: GameSupport>(python: &Path, start: G, sims: &str) {
    let bridge = SpielMctsPlayer::<G>::new(options(python, sims, "5"));
    for (i, first) in [true, false].into_iter().enumerate() {
        let (moves, bridge_moves) = play(&bridge, first, start.clone(), i as u64);
        assert!(bridge_moves > 0, "{}: the bridge never moved", G::NAME);
        eprintln!(
            "{} {}x{}: {} moves, bridge {} ({} of them)",
            G::NAME,
            start.size(),
            start.size(),
            moves.len(),
            if first { "first" } else { "second" },
            bridge_moves
        );
    }
    // Both games ran one after the other: one process, reused.
    assert_eq!(bridge.idle_processes(), 1);
}

#[test]
fn whole_games_against_random() {
    let Some(python) = SPIEL.find() else { return };
    whole_games(&python, TicTacToe::new(), "50");
    whole_games(&python, Gomoku::with_size(9).unwrap(), "50");
    whole_games(&python, Pentago::new(), "50");
    whole_games(&python, Amazons::with_size(6).unwrap(), "30");
    whole_games(&python, ConnectFour::new(), "50");
    // Defined in Python on OpenSpiel's go, searched by its Python bot.
    whole_games(&python, AtariGo::with_size(5).unwrap(), "30");
    whole_games(&python, AtariGo::with_size(9).unwrap(), "30");
}

#[test]
fn atari_go_games_end_where_plies_ends_them() {
    let Some(python) = SPIEL.find() else { return };
    // Every game ends at the first capture in both engines (or a full
    // board): the bridge is asked for a move at every unfinished position
    // plies reaches, so a game OpenSpiel's side thought over would fail.
    let bridge = SpielMctsPlayer::<AtariGo>::new(options(&python, "20", "8"));
    let start = AtariGo::with_size(5).unwrap();
    let mut captures = 0;
    for seed in 0..12 {
        let (moves, _) = play(&bridge, seed % 2 == 0, start, seed);
        let mut g = start;
        for m in &moves {
            g.play_str(m).unwrap();
        }
        captures += usize::from(g.outcome() != Some(plies::game::Outcome::Draw));
    }
    assert!(captures > 0, "no game ended by a capture");
    // OpenSpiel's C++ bot cannot search a game defined in Python: asked
    // for it, the error says so.
    let mut o = options(&python, "20", "8");
    o.implementation = Some(plies::search::spiel_bot::SpielMctsImpl::Cpp);
    let cpp = SpielMctsPlayer::<AtariGo>::new(o);
    let e = cpp
        .session()
        .choose(&start, &mut seeded_rng(1, 0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("impl") && e.contains("python"), "{e}");
}

#[test]
fn bridge_beats_random_at_tictactoe() {
    let Some(python) = SPIEL.find() else { return };
    // 400 simulations of UCT never lose to random moves at tic-tac-toe.
    let bridge = SpielMctsPlayer::<TicTacToe>::new(options(&python, "400", "1"));
    for seed in 0..4 {
        let first = seed % 2 == 0;
        let mut state = TicTacToe::new();
        let (moves, _) = play(&bridge, first, TicTacToe::new(), seed);
        for m in &moves {
            state.play_str(m).unwrap();
        }
        let o = state.outcome().unwrap();
        let bridge_side = if first {
            plies::game::Side::First
        } else {
            plies::game::Side::Second
        };
        assert_ne!(
            o,
            plies::game::Outcome::Win(bridge_side.other()),
            "lost to random: {moves:?}"
        );
    }
}

#[test]
fn same_seed_same_moves() {
    let Some(python) = SPIEL.find() else { return };
    let a = SpielMctsPlayer::<Amazons>::new(options(&python, "20", "3"));
    let b = SpielMctsPlayer::<Amazons>::new(options(&python, "20", "3"));
    let start = Amazons::with_size(6).unwrap();
    let (ma, _) = play(&a, true, start, 11);
    let (mb, _) = play(&b, true, start, 11);
    assert_eq!(ma, mb);
    // Another seed of the player changes the bot's choices.
    let c = SpielMctsPlayer::<Amazons>::new(options(&python, "20", "4"));
    let (mc, _) = play(&c, true, start, 11);
    assert_ne!(ma, mc);
}

#[test]
fn parallel_games_use_their_own_processes() {
    let Some(python) = SPIEL.find() else { return };
    let bridge = SpielMctsPlayer::<Gomoku>::new(options(&python, "20", "2"));
    let start = Gomoku::with_size(7).unwrap();
    // Two games open at once: two processes, both kept when they end.
    {
        let mut rng = seeded_rng(3, 0);
        let mut one = bridge.session();
        let mut two = bridge.session();
        one.choose(&start, &mut rng).unwrap();
        two.choose(&start, &mut rng).unwrap();
    }
    assert_eq!(bridge.idle_processes(), 2);
    // Two games on two threads share them, each its own.
    std::thread::scope(|s| {
        for i in 0..2 {
            let bridge = &bridge;
            s.spawn(move || play(bridge, i == 0, start, i));
        }
    });
    assert_eq!(bridge.idle_processes(), 2);
    // Later games reuse them.
    play(&bridge, true, start, 7);
    assert_eq!(bridge.idle_processes(), 2);
}

#[test]
fn choose_without_a_session() {
    let Some(python) = SPIEL.find() else { return };
    let bridge = SpielMctsPlayer::<TicTacToe>::new(options(&python, "20", "0"));
    let mut rng = seeded_rng(1, 0);
    let mut g = TicTacToe::new();
    let mv = bridge.choose(&g, &mut rng).unwrap();
    g.play(mv);
    let e = bridge.choose(&g, &mut rng).unwrap_err().to_string();
    eprintln!("{e}");
    assert!(e.contains("session"), "{e}");
}

#[test]
fn bad_options_are_named() {
    let e = SpielMctsOptions::from_pairs(&[("sims", "10"), ("depth", "3")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("'depth'"), "{e}");
    let e = SpielMctsOptions::from_pairs(&[("sims", "many")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("sims=many"), "{e}");
    let e = SpielMctsOptions::from_pairs(&[("c", "wide")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("c=wide"), "{e}");
    let e = SpielMctsOptions::from_pairs(&[("seed", "-2")])
        .unwrap_err()
        .to_string();
    assert!(e.contains("seed=-2"), "{e}");
    let o = SpielMctsOptions::from_pairs(&[("sims", "200"), ("rollouts", "2")]).unwrap();
    assert_eq!(
        SpielMctsPlayer::<Pentago>::new(o).name(),
        "spiel-mcts:sims=200,rollouts=2"
    );
}

#[test]
fn broken_python_is_a_clear_error() {
    let missing = PathBuf::from("/nonexistent/bin/python-for-spiel");
    let mut o = SpielMctsOptions::from_pairs(&[("sims", "10")]).unwrap();
    o.python = Some(missing.clone());
    let e = match spiel_mcts_player::<TicTacToe>(o.clone()) {
        Err(e) => e,
        Ok(_) => panic!("a missing interpreter started"),
    };
    assert!(matches!(e, SearchError::Bridge { .. }), "{e:?}");
    let e = e.to_string();
    eprintln!("{e}");
    assert!(e.contains("python-for-spiel"), "{e}");
    assert!(e.contains("spiel_mcts_bot.py"), "{e}");

    // The same from a session, at the first move.
    let bridge = SpielMctsPlayer::<TicTacToe>::new(o);
    let mut s = bridge.session();
    let e = s
        .choose(&TicTacToe::new(), &mut seeded_rng(0, 0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("python-for-spiel"), "{e}");

    // A Python that runs but dies at once (here: `false` as the
    // interpreter) is an error too, not a hang.
    let mut o = SpielMctsOptions::from_pairs(&[("sims", "10")]).unwrap();
    o.python = Some(PathBuf::from("false"));
    let e = match spiel_mcts_player::<TicTacToe>(o) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("`false` started as a Python"),
    };
    eprintln!("{e}");
    assert!(e.contains("exited"), "{e}");
    assert!(e.contains("spiel_mcts_bot.py"), "{e}");
}

#[test]
fn python_without_open_spiel_is_named() {
    // The system Python, without open-spiel, gets the script's own error.
    let python = PathBuf::from("python3");
    let has_spiel = std::process::Command::new(&python)
        .args(["-c", "import pyspiel"])
        .output()
        .is_ok_and(|o| o.status.success());
    let runs = std::process::Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_spiel || !runs {
        eprintln!("skipped: python3 missing or has open-spiel");
        return;
    }
    let mut o = SpielMctsOptions::from_pairs(&[("sims", "10")]).unwrap();
    o.python = Some(python);
    let e = match spiel_mcts_player::<Amazons>(o) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("started without open-spiel"),
    };
    eprintln!("{e}");
    assert!(e.contains("pyspiel"), "{e}");
    assert!(e.contains("open-spiel==2.0.2"), "{e}");
}

/// A stand-in for the interpreter: a shell script that says it is ready
/// and then does `then` (it gets `-u SCRIPT` as arguments and ignores them).
fn fake_python(dir: &Path, name: &str, then: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("#!/bin/sh\necho '{{\"ready\": true}}'\n{then}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn first_move_error(python: PathBuf, extra: &[(&str, &str)]) -> String {
    let mut pairs = vec![("sims", "10")];
    pairs.extend_from_slice(extra);
    let mut o = SpielMctsOptions::from_pairs(&pairs).unwrap();
    o.python = Some(python);
    let bridge = SpielMctsPlayer::<TicTacToe>::new(o);
    let mut s = bridge.session();
    let e = s
        .choose(&TicTacToe::new(), &mut seeded_rng(0, 0))
        .unwrap_err()
        .to_string();
    eprintln!("{e}");
    e
}

#[test]
fn dead_silent_or_wrong_processes_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    // Dies after the handshake, at the first request.
    let e = first_move_error(
        fake_python(dir.path(), "dies", "read line; echo oops >&2; exit 3"),
        &[],
    );
    assert!(e.contains("exited before sending"), "{e}");
    assert!(e.contains("exit status: 3"), "{e}");
    assert!(e.contains("oops"), "{e}");
    assert!(e.contains("spiel_mcts_bot.py"), "{e}");
    // Never answers: the move's time limit ends the wait.
    let start = std::time::Instant::now();
    let e = first_move_error(
        fake_python(dir.path(), "hangs", "read line; sleep 30"),
        &[("timeout", "0.5")],
    );
    assert!(e.contains("did not come within 0.5 s"), "{e}");
    assert!(
        start.elapsed().as_secs() < 10,
        "waited {:?}",
        start.elapsed()
    );
    // Answers a cell that is not on the board.
    let e = first_move_error(
        fake_python(
            dir.path(),
            "off-board",
            "read line; echo '{\"id\": 1, \"actions\": [9]}'; sleep 30",
        ),
        &[],
    );
    assert!(e.contains("[9]") && e.contains("no tictactoe move"), "{e}");
    // Answers an error line.
    let e = first_move_error(
        fake_python(
            dir.path(),
            "refuses",
            "read line; echo '{\"id\": 1, \"error\": \"SpielError: no such game\"}'; sleep 30",
        ),
        &[],
    );
    assert!(e.contains("SpielError: no such game"), "{e}");
}

#[test]
fn illegal_answers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    // The centre is taken by the first move, and the stand-in answers it.
    let python = fake_python(
        dir.path(),
        "replays",
        "read line; echo '{\"id\": 1, \"actions\": [4]}'; read line; \
         echo '{\"id\": 2, \"actions\": [4]}'; sleep 30",
    );
    let mut o = SpielMctsOptions::from_pairs(&[("sims", "10")]).unwrap();
    o.python = Some(python);
    let bridge = SpielMctsPlayer::<TicTacToe>::new(o);
    let mut s = bridge.session();
    let mut rng = seeded_rng(0, 0);
    let mut g = TicTacToe::new();
    let mv = s.choose(&g, &mut rng).unwrap();
    s.observe(&g, mv);
    g.play(mv);
    let reply = g.parse_move("a1").unwrap();
    s.observe(&g, reply);
    g.play(reply);
    let e = s.choose(&g, &mut rng).unwrap_err().to_string();
    eprintln!("{e}");
    assert!(e.contains("b2") && e.contains("not legal"), "{e}");
}

#[test]
fn matches_after_a_random_opening() {
    let Some(python) = SPIEL.find() else { return };
    use plies::arena::{play_match_from, StartConfig};
    // Every game starts after four random plies: the bridge is told them
    // and plays from there, in either colour.
    let bridge = SpielMctsPlayer::<ConnectFour>::new(options(&python, "50", "6"));
    let start = StartConfig::standard::<ConnectFour>().with_random_opening(4);
    let starter = start.starter::<ConnectFour>();
    let r = play_match_from(&bridge, &RandomPlayer, &starter, 4, 9, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.total.games(), 4);
    // 50 simulations beat random moves from a random opening.
    assert!(r.total.wins >= 3, "{:?}", r.total);
}
