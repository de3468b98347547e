use super::*;

fn run(input: &str, player: &str, seed: u64) -> Vec<String> {
    let mut out = Vec::new();
    run_gomocup(
        input.as_bytes(),
        &mut out,
        &GomocupConfig::new(player, seed),
    )
    .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn xy(line: &str) -> (usize, usize) {
    let v = parse_numbers(line, 2).unwrap_or_else(|e| panic!("{line}: {e}"));
    (v[0], v[1])
}

#[test]
fn a_board_before_start_does_not_swallow_the_commands_after_it() {
    // No DONE: the block ends at the next command, which is served.
    let out = run("BOARD\n7,7,1\nSTART 9\nTURN 4,4\nEND\n", "naive", 1);
    assert!(out[0].starts_with("ERROR no board yet"), "{out:?}");
    assert_eq!(
        out[1], "ERROR BOARD block ended by 'START 9' without DONE",
        "{out:?}"
    );
    assert_eq!(out[2], "OK");
    let (x, y) = xy(&out[3]);
    assert!(x < 9 && y < 9 && (x, y) != (4, 4), "{out:?}");
    assert_eq!(out.len(), 4, "{out:?}");
    // With DONE the block is read and dropped, then play goes on.
    let out = run("BOARD\n7,7,1\nDONE\nSTART 9\nBEGIN\n", "naive", 1);
    assert!(out[0].starts_with("ERROR no board yet"), "{out:?}");
    assert_eq!(out[1], "OK");
    assert_eq!(out.len(), 3, "{out:?}");
}

#[test]
fn a_five_already_on_the_board_ends_the_game() {
    let mine =
        "START 9\nBOARD\n0,0,1\n1,0,1\n2,0,1\n3,0,1\n4,0,1\n0,8,2\n2,8,2\n4,8,2\n6,8,2\nDONE\n";
    let out = run(mine, "naive", 1);
    assert_eq!(
        out,
        [
            "OK",
            "ERROR the game is over: my five in a row is on the board"
        ]
    );
    // The opponent's fifth stone arrives by TURN.
    let mut brain = Brain::new(&GomocupConfig::new("naive", 1));
    brain.start(9).unwrap();
    for line in [
        "0,0,2", "1,0,2", "2,0,2", "3,0,2", "0,8,1", "2,8,1", "4,8,1",
    ] {
        brain.board_line(line).unwrap();
    }
    let err = brain.turn("4,0", Instant::now()).unwrap_err().to_string();
    assert_eq!(err, "the game is over: your five in a row is on the board");
}

#[test]
fn unsupported_rules_are_said() {
    let out = run(
        "INFO rule 0\nINFO rule 2\nINFO rule 1\nINFO rule 4\nINFO rule x\nSTART 9\n",
        "naive",
        1,
    );
    assert_eq!(out.len(), 4, "{out:?}");
    for (line, value) in out.iter().zip(["1", "4", "x"]) {
        assert!(
            line.starts_with(&format!("ERROR INFO rule {value}: plies plays free-style")),
            "{line}"
        );
    }
    assert_eq!(out[3], "OK");
}

#[test]
fn sizes_and_about() {
    let out = run(
        "START 4\nSTART 20\nSTART x\nSTART 5\nSTART 19\nRECTSTART 15,10\nRECTSTART 15,15\nABOUT\n",
        "naive",
        1,
    );
    assert!(out[0].starts_with("ERROR unsupported size 4"), "{out:?}");
    assert!(out[1].starts_with("ERROR unsupported size 20"));
    assert!(out[2].starts_with("ERROR START wants"));
    assert_eq!(&out[3..5], ["OK", "OK"]);
    assert!(out[5].starts_with("ERROR rectangular"));
    assert_eq!(out[6], "OK");
    assert!(out[7].starts_with("name=\"plies\", version=\""));
    assert_eq!(out.len(), 8);
}

#[test]
fn coordinates_are_column_then_row_from_the_top() {
    // Own stones 0..3 on row 2 (Y=2); NAIVE completes five at 4,2.
    let input = "START 9\nBOARD\n0,2,1\n1,2,1\n2,2,1\n3,2,1\n0,8,2\n2,8,2\n4,8,2\n6,8,2\nDONE\n";
    for seed in 0..5 {
        let out = run(input, "naive", seed);
        assert_eq!(out, ["OK", "4,2"]);
    }
    // The same as a Gomoku position: our move makes five on row 2 from
    // the top, which is rank 7 on 9x9.
    let g = Gomoku::from_text(
        "........./........./bbbb...../........./........./........./........./........./w.w.w.w..",
    )
    .unwrap();
    assert_eq!(
        g.winning_cells(g.side_to_move()),
        vec![GomokuMove(2 * 9 + 4)]
    );
    assert_eq!(g.square_name(2 * 9 + 4), "e7");
}

#[test]
fn naive_blocks_as_white_and_after_turns() {
    // We are White (opponent moved first): Black threatens 4,0.
    let input = "START 9\nBOARD\n0,0,2\n1,0,2\n2,0,2\n3,0,2\n0,8,1\n2,8,1\n4,8,1\nDONE\n";
    for seed in 0..5 {
        assert_eq!(run(input, "naive", seed), ["OK", "4,0"]);
    }
    // Unbalanced counts go through the fallback, which still blocks.
    let input = "START 9\nBOARD\n0,0,2\n1,0,2\n2,0,2\n3,0,2\nDONE\n";
    for seed in 0..5 {
        assert_eq!(run(input, "naive", seed), ["OK", "4,0"]);
    }
    // A blocked point (field 3) is neither side's.
    let input = "START 9\nBOARD\n0,0,2\n1,0,2\n2,0,3\n3,0,2\n4,0,2\nDONE\n";
    let out = run(input, "naive", 1);
    let (x, y) = xy(&out[1]);
    assert!(!(y == 0 && x <= 4), "{out:?}");
}

#[test]
fn errors_keep_the_engine_serving() {
    let input = "TURN 1,1\nBEGIN\nSTART 15\nTURN 7,7\nTURN 7,7\nTURN a,b\nTURN 99,99\nTURN 1\nFOO bar\nTAKEBACK 0,14\nINFO\nINFO timeout_turn 5000\nTAKEBACK 7,7\nTURN 7,7\nRESTART\nBEGIN\nEND\nABOUT\n";
    let out = run(input, "random", 3);
    assert!(out[0].starts_with("ERROR no board"), "{out:?}");
    assert!(out[1].starts_with("ERROR no board"));
    assert_eq!(out[2], "OK");
    let first = xy(&out[3]);
    assert_ne!(first, (7, 7));
    assert!(out[4].starts_with("ERROR 7,7 is already taken"));
    assert!(out[5].starts_with("ERROR 'a' is not"));
    assert!(out[6].starts_with("ERROR 99,99 is off the 15x15 board"));
    assert!(out[7].starts_with("ERROR expected 2"));
    assert!(out[8].starts_with("UNKNOWN command 'FOO'"));
    assert!(out[9].starts_with("ERROR 0,14 is empty"));
    assert!(out[10].starts_with("ERROR INFO"));
    // INFO timeout_turn: no answer.
    assert_eq!(out[11], "OK");
    let again = xy(&out[12]);
    assert_ne!(again, (7, 7));
    assert_eq!(out[13], "OK");
    let _ = xy(&out[14]);
    // Nothing after END.
    assert_eq!(out.len(), 15);
}

#[test]
fn random_fills_a_small_board_and_then_errors() {
    // 5x5: 25 points; BEGIN replies, never a taken one.
    for player in ["naive", "random"] {
        let mut brain = Brain::new(&GomocupConfig::new(player, 9));
        brain.start(5).unwrap();
        let mut seen = std::collections::HashSet::new();
        // Our own stones only: five in a row ends it, else a full board.
        let end = loop {
            match brain.reply_move(Instant::now()) {
                Ok(m) => assert!(seen.insert(m.clone()), "{m} twice"),
                Err(e) => break e,
            }
        };
        assert!(seen.len() <= 25);
        assert!(matches!(end, Refusal::Over(OWN) | Refusal::Full), "{end}");
    }
}

#[test]
fn every_player_spec_plays_legal_moves() {
    for spec in [
        "naive",
        "random",
        "expert",
        "alphabeta:depth=2,eval=random",
        "greedy:eval=random",
        "mcts:sims=60,threads=2",
    ] {
        let mut brain = Brain::new(&GomocupConfig::new(spec, 4));
        brain.start(9).unwrap();
        let mut g = Gomoku::with_size(9).unwrap();
        // The brain plays Black against the first empty point.
        for _ in 0..12 {
            let (x, y) = xy(&brain.reply_move(Instant::now()).unwrap());
            g.play_str(&g.move_to_string(GomokuMove((y * 9 + x) as u16)))
                .unwrap_or_else(|e| panic!("{spec}: {e}"));
            if g.outcome().is_some() {
                break;
            }
            let mut legal = Vec::new();
            g.legal_moves(&mut legal);
            let reply = legal[0];
            g.play(reply);
            brain.board_mut().unwrap().cells[reply.0 as usize] = OPP;
            if g.outcome().is_some() {
                break;
            }
        }
    }
}

#[test]
fn a_bad_spec_is_answered_at_start() {
    let out = run("START 15\nBEGIN\nEND\n", "mcts:sims=10,depth=3", 1);
    assert!(
        out[0].starts_with("ERROR") && out[0].contains("'depth'"),
        "{out:?}"
    );
    assert!(out[1].starts_with("ERROR no board"), "{out:?}");
}

#[test]
fn the_clock_becomes_the_budget() {
    let mut brain = Brain::new(&GomocupConfig::default());
    let t0 = Instant::now();
    let due = |ms: u64| Budget::until(t0 + Duration::from_millis(ms));
    assert_eq!(brain.budget(t0), Budget::UNLIMITED);
    brain.info.insert("timeout_turn".into(), "1000".into());
    assert_eq!(brain.budget(t0), due(950));
    brain.info.insert("timeout_match".into(), "10000".into());
    // A twentieth of the match (500 ms), a critical position three times
    // that but no more than the turn (1000 ms); both less the margin.
    let critical = Budget {
        critical_deadline: Some(t0 + Duration::from_millis(950)),
        ..due(450)
    };
    assert_eq!(brain.budget(t0), critical);
    brain.info.insert("time_left".into(), "40000".into());
    // The turn's limit is tighter than a twentieth: nothing to extend.
    assert_eq!(brain.budget(t0), due(950));
    // A reply that took 30 ms beyond its search: 30 ms more margin.
    brain.unanswered = Some((t0, Duration::from_millis(500), None));
    std::thread::sleep(Duration::from_millis(530));
    brain.replied();
    let margin = brain.clock.margin();
    assert!(margin >= Duration::from_millis(110), "{margin:?}");
    assert!(margin < Duration::from_millis(400), "{margin:?}");
    let limit = Duration::from_millis(1000);
    assert_eq!(brain.budget(t0), Budget::until(t0 + limit - margin));
    brain.info.insert("time_left".into(), "20".into());
    assert_eq!(brain.budget(t0), due(1));
}

#[test]
fn a_search_stops_at_the_turn_timeout() {
    // Without the budget this search would run for minutes.
    let input = "INFO timeout_turn 300\nSTART 15\nTURN 7,7\nEND\n";
    let t0 = std::time::Instant::now();
    let out = run(input, "mcts:sims=100000000,threads=2", 2);
    let seconds = t0.elapsed().as_secs_f64();
    assert_eq!(out[0], "OK");
    let _ = xy(&out[1]);
    assert!(seconds < 5.0, "answered after {seconds:.1} s");
}
