//! `plies engine gomocup`: the binary driven through the Gomocup (Piskvork)
//! protocol: whole games refereed by the Gomoku rules engine, BOARD/DONE,
//! TAKEBACK, RESTART, ABOUT, unsupported sizes and garbled input.

mod common;

use plies::game::{Game, Gomoku, GomokuMove, Outcome, Side};
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// One engine process with a line reader that cannot hang the test.
struct Engine {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<(std::time::Instant, String)>,
}

impl Engine {
    fn spawn(player: &str, seed: u64) -> Engine {
        Engine::spawn_with(&["--player", player, "--seed", &seed.to_string()])
    }

    /// `plies engine gomocup` with `options` after it.
    fn spawn_with(options: &[&str]) -> Engine {
        let mut args = vec!["engine", "gomocup"];
        args.extend_from_slice(options);
        let common::Piped {
            child,
            stdin,
            lines,
        } = common::spawn_piped(&args, |c| {
            c.stderr(Stdio::null());
        });
        Engine {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, line: &str) {
        // The manager ends lines with CR LF.
        write!(self.stdin, "{line}\r\n").unwrap();
        self.stdin.flush().unwrap();
    }

    fn recv(&mut self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the engine answers within 20 s")
            .1
    }

    fn ask(&mut self, line: &str) -> String {
        self.send(line);
        self.recv()
    }

    /// Sends END and checks that the process exits cleanly, with nothing
    /// more said.
    fn end(mut self) {
        self.send("END");
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status}");
        assert!(self.lines.recv_timeout(Duration::from_secs(5)).is_err());
    }
}

/// Parses an `X,Y` answer into a cell of the `n` x `n` board.
fn cell_of(reply: &str, n: usize) -> usize {
    let (x, y) = reply
        .split_once(',')
        .unwrap_or_else(|| panic!("'{reply}' is not X,Y"));
    let x: usize = x.parse().unwrap_or_else(|_| panic!("'{reply}': bad X"));
    let y: usize = y.parse().unwrap_or_else(|_| panic!("'{reply}': bad Y"));
    assert!(x < n && y < n, "'{reply}' is off the {n}x{n} board");
    y * n + x
}

fn xy(cell: usize, n: usize) -> String {
    format!("{},{}", cell % n, cell / n)
}

/// Plays `cell` on the referee's board, checking it is an empty point.
fn referee_play(g: &mut Gomoku, cell: usize, who: &str) {
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    let mv = GomokuMove(cell as u16);
    assert!(
        legal.contains(&mv),
        "{who} played {} ({}), not a legal empty point:\n{}",
        xy(cell, g.size()),
        g.move_to_string(mv),
        g.render()
    );
    g.play(mv);
}

/// A small deterministic generator for the test's own random opponent.
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }
}

/// A whole 15x15 game: the engine plays second against random legal moves
/// chosen here (sent as TURN), refereed move by move.
#[test]
fn whole_game_against_scripted_random_opponent() {
    let n = 15;
    let mut summary = Vec::new();
    for seed in [1u64, 2, 3] {
        let mut e = Engine::spawn("naive", seed);
        assert_eq!(e.ask("START 15"), "OK");
        e.send("INFO timeout_turn 5000");
        e.send("INFO rule 0");
        let mut g = Gomoku::with_size(n).unwrap();
        let mut rng = Lcg(seed);
        while g.outcome().is_none() {
            let mut legal = Vec::new();
            g.legal_moves(&mut legal);
            let GomokuMove(ours) = legal[rng.below(legal.len())];
            referee_play(&mut g, ours as usize, "the scripted opponent");
            if g.outcome().is_some() {
                break;
            }
            let reply = e.ask(&format!("TURN {}", xy(ours as usize, n)));
            referee_play(&mut g, cell_of(&reply, n), "the engine");
        }
        let o = g.outcome().unwrap();
        summary.push(format!("seed {seed}: {o:?} after {} stones", g.ply()));
        // NAIVE (White here) against random moves: it takes any five it
        // can and blocks every single threat, so it does not lose.
        assert_ne!(o, Outcome::Win(Side::First), "{}", g.render());
        e.end();
    }
    eprintln!("engine (naive, White) vs scripted random: {summary:?}");
}

/// Two engine processes play each other (BEGIN to the first, then each
/// move as TURN to the other) until five in a row or a full board.
#[test]
fn whole_game_engine_against_engine() {
    let n = 15;
    let mut summary = Vec::new();
    for (a_player, b_player, seed) in [
        ("naive", "random", 7u64),
        ("random", "naive", 8),
        ("naive", "naive", 9),
    ] {
        let mut a = Engine::spawn(a_player, seed);
        let mut b = Engine::spawn(b_player, seed + 100);
        assert_eq!(a.ask("START 15"), "OK");
        assert_eq!(b.ask("START 15"), "OK");
        let mut g = Gomoku::with_size(n).unwrap();
        let mut last = a.ask("BEGIN");
        referee_play(&mut g, cell_of(&last, n), "engine A");
        let mut to_move_is_b = true;
        let mut naive_moves = 0;
        while g.outcome().is_none() {
            let (who, e, spec) = if to_move_is_b {
                ("engine B", &mut b, b_player)
            } else {
                ("engine A", &mut a, a_player)
            };
            let me = g.side_to_move();
            let (wins, threats) = (g.winning_cells(me), g.winning_cells(me.other()));
            last = e.ask(&format!("TURN {last}"));
            let mv = GomokuMove(cell_of(&last, n) as u16);
            // NAIVE's contract: a win when there is one, else the block of
            // a single threat.
            if spec == "naive" {
                naive_moves += 1;
                if !wins.is_empty() {
                    assert!(wins.contains(&mv), "{who} missed a win:\n{}", g.render());
                } else if threats.len() == 1 {
                    assert_eq!(mv, threats[0], "{who} did not block:\n{}", g.render());
                }
            }
            referee_play(&mut g, mv.0 as usize, who);
            to_move_is_b = !to_move_is_b;
        }
        assert!(naive_moves > 0);
        let o = g.outcome().unwrap();
        summary.push(format!(
            "{a_player} (Black) vs {b_player} (White): {o:?} after {} stones",
            g.ply()
        ));
        a.end();
        b.end();
    }
    eprintln!("engine vs engine: {summary:?}");
}

/// Fills a whole 5x5 board through TURN/BEGIN answers: every answer is a
/// legal empty point until the board is full (no five is checked here;
/// Gomocup stops a game at five, a brain must still answer legally).
#[test]
fn random_engine_fills_a_small_board() {
    let n = 5;
    let mut e = Engine::spawn("random", 5);
    assert_eq!(e.ask("START 5"), "OK");
    // 0 empty, 1 the engine's, 2 ours.
    let mut owner = vec![0u8; n * n];
    let five = |owner: &[u8], cell: usize| {
        plies::game::longest_line_through(n, cell, |i| owner[i] == owner[cell]) >= 5
    };
    let mut rng = Lcg(11);
    let first = cell_of(&e.ask("BEGIN"), n);
    owner[first] = 1;
    loop {
        let empties: Vec<usize> = (0..n * n).filter(|&i| owner[i] == 0).collect();
        let ours = empties[rng.below(empties.len())];
        owner[ours] = 2;
        let reply = e.ask(&format!("TURN {}", xy(ours, n)));
        if five(&owner, ours) {
            assert!(reply.starts_with("ERROR the game is over"), "{reply}");
            break;
        }
        if empties.len() == 1 {
            assert!(reply.starts_with("ERROR"), "full board: {reply}");
            break;
        }
        if reply.starts_with("ERROR the game is over") {
            // Its own last stone made five.
            assert!(
                (0..n * n).any(|i| owner[i] == 1 && five(&owner, i)),
                "{reply}"
            );
            break;
        }
        let c = cell_of(&reply, n);
        assert_eq!(owner[c], 0, "{reply} was taken");
        owner[c] = 1;
    }
    // The engine still serves after the full-board error.
    assert_eq!(e.ask("RESTART"), "OK");
    let _ = cell_of(&e.ask("BEGIN"), n);
    e.end();
}

#[test]
fn board_done_takes_the_win_and_blocks() {
    let mut e = Engine::spawn("naive", 1);
    assert_eq!(e.ask("START 15"), "OK");
    // Own stones 3..6 on row 10: the brain completes five at 2,10 or 7,10.
    for l in [
        "BOARD", "3,10,1", "4,10,1", "5,10,1", "6,10,1", "0,0,2", "14,0,2", "0,14,2", "14,14,2",
    ] {
        e.send(l);
    }
    let r = e.ask("DONE");
    assert!(r == "2,10" || r == "7,10", "{r}");
    // Opponent (who moved first) has four on column 9 with one end closed
    // by our stone: the only block is 9,5.
    assert_eq!(e.ask("RESTART"), "OK");
    for l in [
        "BOARD", "9,0,1", "9,1,2", "9,2,2", "9,3,2", "9,4,2", "0,0,1", "14,14,1", "14,0,1",
        "0,14,2",
    ] {
        e.send(l);
    }
    assert_eq!(e.ask("DONE"), "9,5");
    // A bad BOARD line is reported, the rest of the block still counts.
    for l in ["BOARD", "1,1,1", "x,y,z", "1,1,2", "2,2,7", "3,3,2"] {
        e.send(l);
    }
    let mut errors = Vec::new();
    let reply = loop {
        let l = if errors.is_empty() {
            e.ask("DONE")
        } else {
            e.recv()
        };
        if l.starts_with("ERROR") {
            errors.push(l);
        } else {
            break l;
        }
    };
    assert_eq!(errors.len(), 3, "{errors:?}");
    let c = cell_of(&reply, 15);
    assert!(![16, 48].contains(&c), "{reply} is taken");
    e.end();
}

#[test]
fn takeback_restart_about_sizes_and_garbage() {
    let mut e = Engine::spawn("naive", 4);
    // Before START.
    assert!(e.ask("TURN 7,7").starts_with("ERROR"));
    assert!(e.ask("BEGIN").starts_with("ERROR"));
    // Unsupported sizes, then a good one.
    assert!(e.ask("START 4").starts_with("ERROR"));
    assert!(e.ask("START 25").starts_with("ERROR"));
    assert!(e.ask("START 20").starts_with("ERROR"));
    assert!(e.ask("RECTSTART 15,10").starts_with("ERROR"));
    assert_eq!(e.ask("RECTSTART 15,15"), "OK");
    assert_eq!(e.ask("START 15"), "OK");
    let about = e.ask("ABOUT");
    assert!(about.starts_with("name=\"plies\", version=\""), "{about}");
    assert!(about.contains("author=\"") && about.contains("country=\""));

    let ours = e.ask("TURN 7,7");
    let c = cell_of(&ours, 15);
    assert_ne!(c, 7 * 15 + 7);
    // Garbled and illegal lines: ERROR (UNKNOWN for an unknown command),
    // and the engine keeps answering.
    for bad in [
        "TURN a,b",
        "TURN 99,99",
        "TURN 15,0",
        "TURN 7",
        "TURN",
        "TURN 7,7",
        "START",
        "TAKEBACK 0,0",
        "TAKEBACK x",
    ] {
        let r = e.ask(bad);
        assert!(r.starts_with("ERROR "), "{bad}: {r}");
    }
    let r = e.ask(&format!("TURN {ours}"));
    assert!(r.starts_with("ERROR "), "our own stone: {r}");
    let r = e.ask("FOO");
    assert!(r.starts_with("UNKNOWN "), "FOO: {r}");
    // Blank lines and INFO get no answer.
    e.send("");
    e.send("INFO max_memory 83886080");
    e.send("INFO folder C:\\some dir");
    // TAKEBACK both stones, then the same TURN again is legal.
    assert_eq!(e.ask(&format!("TAKEBACK {ours}")), "OK");
    assert_eq!(e.ask("TAKEBACK 7,7"), "OK");
    let again = e.ask("TURN 7,7");
    assert_ne!(cell_of(&again, 15), 7 * 15 + 7);
    // RESTART clears the board: 7,7 is free again.
    assert_eq!(e.ask("RESTART"), "OK");
    let r = e.ask("turn 7,7");
    assert_ne!(cell_of(&r, 15), 7 * 15 + 7);
    e.end();
}

#[test]
fn end_of_input_ends_the_engine() {
    let mut e = Engine::spawn("random", 1);
    assert_eq!(e.ask("START 9"), "OK");
    let Engine {
        mut child, stdin, ..
    } = e;
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// A seeded (untrained) cnn3 checkpoint for Gomoku boards of side `n`.
fn gomoku_checkpoint(dir: &std::path::Path, n: usize) -> String {
    use plies::checkpoint::{self, CheckpointConfig, TrainingInfo};
    use plies::games::GameSupport;
    use plies::model::{seeded_tensors, Cnn3Config, Cnn3NetConfig, InputShape, ModelConfig};
    let encoder = Gomoku::encoder("stones-2", n).unwrap().spec();
    let model = ModelConfig::Cnn3(Cnn3NetConfig::new(
        InputShape::new(encoder.shape, encoder.globals),
        Cnn3Config::default(),
    ));
    let rng = &mut plies::util::seeded_rng(3, 0);
    let tensors = seeded_tensors(&model, rng, &candle_core::Device::Cpu).unwrap();
    let ck = CheckpointConfig::new("gomoku", encoder, model, TrainingInfo::default());
    checkpoint::save(dir, &ck, &tensors).unwrap();
    dir.display().to_string()
}

/// Search players with a checkpoint evaluator, engine against engine on
/// 9x9 with the manager's clock (INFO timeout_turn) until five or a full
/// board; every answer is refereed. A checkpoint of another size is
/// answered ERROR at START.
#[test]
fn checkpoint_players_play_whole_games_through_the_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let ckpt = gomoku_checkpoint(&dir.path().join("ck9"), 9);
    let n = 9;
    let specs = [
        format!("mcts:sims=40,threads=2,eval=ckpt:{ckpt}"),
        format!("alphabeta:depth=1,eval=ckpt:{ckpt}"),
        format!("greedy:eval=ckpt:{ckpt}"),
        "expert".to_string(),
    ];
    for (i, a_spec) in specs.iter().enumerate() {
        let b_spec = &specs[(i + 1) % specs.len()];
        let mut a = Engine::spawn(a_spec, 1);
        let mut b = Engine::spawn(b_spec, 2);
        for e in [&mut a, &mut b] {
            e.send("INFO timeout_turn 2000");
            assert_eq!(e.ask("START 9"), "OK", "{a_spec} / {b_spec}");
        }
        let mut g = Gomoku::with_size(n).unwrap();
        let mut last = a.ask("BEGIN");
        referee_play(&mut g, cell_of(&last, n), a_spec);
        let mut to_move_is_b = true;
        while g.outcome().is_none() {
            let (who, e) = if to_move_is_b {
                (b_spec, &mut b)
            } else {
                (a_spec, &mut a)
            };
            last = e.ask(&format!("TURN {last}"));
            referee_play(&mut g, cell_of(&last, n), who);
            to_move_is_b = !to_move_is_b;
        }
        a.end();
        b.end();
    }
    let mut e = Engine::spawn(&specs[0], 1);
    let answer = e.ask("START 15");
    assert!(
        answer.starts_with("ERROR") && answer.contains("9x9") && answer.contains("15x15"),
        "{answer}"
    );
    e.end();
}

/// An MDRNN evolved on 7x7 Gomoku (a tiny `plies evolve` run) plays a
/// whole 15x15 game through the protocol as `policy:ckpt=DIR`, against an
/// engine playing naive, refereed move by move.
#[test]
fn an_evolved_mdrnn_plays_a_whole_15x15_game() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("evolved");
    let status = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args([
            "evolve",
            "--game",
            "gomoku",
            "--size",
            "7",
            "--generations",
            "2",
            "--games",
            "4",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let spec = format!("policy:ckpt={}", out.join("best").display());
    let n = 15;
    let mut net = Engine::spawn(&spec, 4);
    let mut naive = Engine::spawn("naive", 5);
    assert_eq!(net.ask("START 15"), "OK");
    assert_eq!(naive.ask("START 15"), "OK");
    let mut g = Gomoku::with_size(n).unwrap();
    let mut last = net.ask("BEGIN");
    referee_play(&mut g, cell_of(&last, n), "the MDRNN");
    let mut net_to_move = false;
    while g.outcome().is_none() {
        let (who, e) = if net_to_move {
            ("the MDRNN", &mut net)
        } else {
            ("naive", &mut naive)
        };
        last = e.ask(&format!("TURN {last}"));
        referee_play(&mut g, cell_of(&last, n), who);
        net_to_move = !net_to_move;
    }
    eprintln!(
        "evolved MDRNN (Black) vs naive on 15x15: {:?} after {} stones",
        g.outcome().unwrap(),
        g.ply()
    );
    net.end();
    naive.end();
}

/// With no `--player` the engine plays its strongest player (the threat
/// player on `gomoku-tuned`):
/// it wins every game against a naive engine, with either colour, every
/// move refereed.
#[test]
fn the_default_player_beats_naive_with_either_colour() {
    let n = 15;
    for game in 0..4u64 {
        let default_first = game % 2 == 0;
        let seed = (20 + game).to_string();
        let mut engines = [
            Engine::spawn_with(&["--seed", &seed]),
            Engine::spawn("naive", 30 + game),
        ];
        for e in engines.iter_mut() {
            assert_eq!(e.ask("START 15"), "OK");
        }
        let order = if default_first { [0, 1] } else { [1, 0] };
        let names = ["the default player", "naive"];
        let mut g = Gomoku::with_size(n).unwrap();
        let mut last = engines[order[0]].ask("BEGIN");
        referee_play(&mut g, cell_of(&last, n), names[order[0]]);
        let mut k = 1;
        while g.outcome().is_none() {
            let who = order[k % 2];
            last = engines[who].ask(&format!("TURN {last}"));
            referee_play(&mut g, cell_of(&last, n), names[who]);
            k += 1;
        }
        let winner = if default_first {
            Side::First
        } else {
            Side::Second
        };
        assert_eq!(
            g.outcome(),
            Some(Outcome::Win(winner)),
            "game {game}: {} stones",
            g.ply()
        );
        for e in engines {
            e.end();
        }
    }
}
