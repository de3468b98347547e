//! Arimaa rules against pyrimaa (PyPI `aei==1.4.1`): distinct full moves,
//! single steps, whole random games, the move counts and goal positions of
//! `../shared/data/arimaa`. Fixtures: `scripts/gen_arimaa_fixtures.sh`.

use plies::game::arimaa::goal::goal_distance;
use plies::game::arimaa::listing::{moves_digest_line, steps_listing};
use plies::game::arimaa::notation::{parse_board64, parse_long_diagram, parse_position_line};
use plies::game::arimaa::{parse_side, Arimaa, MoveGen, Termination};
use plies::game::Game;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_standard_opening_has_3353_moves() {
    let g = Arimaa::new();
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    assert_eq!(moves.len(), 3353);
    // Every move is distinct in its result and changes the board.
    let mut boards: Vec<String> = moves
        .iter()
        .map(|&m| {
            let mut h = g.clone();
            h.play(m);
            h.to_text()
        })
        .collect();
    boards.sort();
    boards.dedup();
    assert_eq!(boards.len(), 3353);
    assert!(!boards.contains(&g.to_text().replacen('g', "s", 1)));
}

#[test]
fn move_counts_of_the_29_reference_positions() {
    let text = fixture("arimaa_movecounts.tsv");
    let mut gen = MoveGen::new();
    let mut checked = 0;
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let side = parse_side(cols[0]).unwrap();
        let pos = parse_board64(cols[1], side).unwrap();
        let expected: usize = cols[2].trim().parse().unwrap();
        assert_eq!(gen.count(&pos), expected, "line {}: {line}", i + 1);
        checked += 1;
    }
    assert_eq!(checked, 29);
}

#[test]
fn distinct_move_digests_match_the_oracle_on_2005_positions() {
    let positions = fixture("arimaa_positions.txt");
    let digests = fixture("arimaa_moves_digest.txt");
    let mut gen = MoveGen::new();
    let mut n = 0;
    let mut total_moves = 0usize;
    for (line, expected) in positions.lines().zip(digests.lines()) {
        let (pos, _) = parse_position_line(line).unwrap();
        let got = moves_digest_line(&mut gen, &pos);
        assert_eq!(got, expected, "position {}: {line}", n + 1);
        total_moves += expected
            .split(' ')
            .nth(2)
            .unwrap()
            .parse::<usize>()
            .unwrap();
        n += 1;
    }
    assert_eq!(n, 2005);
    assert_eq!(n, digests.lines().count());
    assert!(total_moves > 1_000_000, "{total_moves} moves compared");
}

#[test]
fn single_steps_match_the_oracle_on_2005_partial_turns() {
    let partial = fixture("arimaa_partial.txt");
    let expected = fixture("arimaa_steps.txt");
    let mut got = String::new();
    for (k, line) in partial.lines().enumerate() {
        let (pos, steps) = parse_position_line(line).unwrap();
        got.push_str(&steps_listing(&pos, steps.unwrap_or(""), k + 1).unwrap());
    }
    let (mut got_lines, mut want_lines) = (got.lines(), expected.lines());
    let mut line_no = 0;
    loop {
        line_no += 1;
        match (got_lines.next(), want_lines.next()) {
            (None, None) => break,
            (g, w) => assert_eq!(g, w, "arimaa_steps.txt line {line_no}"),
        }
    }
    assert!(line_no > 40_000);
}

#[test]
fn random_oracle_games_replay_with_the_same_results() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arimaa_games.jsonl");
    let summary = plies::record::arimaa_oracle::replay_oracle_games(&path).unwrap();
    assert_eq!(summary.games, 120);
    assert!(summary.plies > 10_000, "{summary:?}");
}

#[test]
fn goal_detection_agrees_on_485_positions() {
    let text = fixture("arimaa_goal_positions.txt");
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut checked = 0;
    while i < lines.len() {
        if lines[i].trim().is_empty() || lines[i].trim() == "end" {
            i += 1;
            continue;
        }
        let (pos, used) =
            parse_long_diagram(&lines[i..]).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        i += used;
        while !lines[i].starts_with(":::") {
            i += 1;
        }
        let expected = lines[i].trim_start_matches("::: cangoal ").trim();
        let got = goal_distance(&pos);
        let ok = match expected {
            "false" => got.is_none(),
            // "true": a goal this turn, number of steps not stated.
            "true" => got.is_some(),
            n => got == Some(n.parse().unwrap()),
        };
        assert!(ok, "line {}: expected {expected}, got {got:?}", i + 1);
        checked += 1;
        i += 1;
    }
    assert_eq!(checked, 485);
}

/// A board with the given pieces (`"Ed4 Ra1 eh5 rh8"`), `side` to move.
fn board(pieces: &str, side: plies::game::Side) -> Arimaa {
    use plies::game::arimaa::{bitboard::parse_square, Piece, Position};
    let mut pos = Position::empty(side);
    for t in pieces.split_whitespace() {
        let piece = Piece::from_char(t.chars().next().unwrap()).unwrap();
        pos.place(parse_square(&t[1..]).unwrap(), piece);
    }
    Arimaa::from_position(pos, 2)
}

#[test]
fn a_third_repetition_is_illegal_and_only_that_move_is_removed() {
    use plies::game::Side;
    let mut g = board("Ed4 Ra1 eh5 rh8", Side::First);
    for mv in ["Ed4n", "eh5s", "Ed5s", "eh4n", "Ed4n", "eh5s", "Ed5s"] {
        let m = g.parse_move(mv).unwrap();
        g.play(m);
    }
    // Silver to move: eh4n would make the starting position a third time.
    let err = g.parse_move("eh4n").unwrap_err().to_string();
    assert!(err.contains("third time"), "{err}");
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    let all = MoveGen::new().count(g.position());
    assert_eq!(legal.len(), all - 1);
    // Reaching the same board by another route is just as illegal.
    let err = g.parse_move("eh4w eg4n eg5e").unwrap_err().to_string();
    assert!(err.contains("third time"), "{err}");
    assert!(g.outcome().is_none());
}

#[test]
fn end_of_game_checks_follow_the_official_order() {
    use plies::game::{Outcome, Side};
    // Immobilization: after Cc8w silver's only piece is frozen.
    let mut g = board("Cc8 Ra1 ra8", Side::First);
    let m = g.parse_move("Cc8w").unwrap();
    g.play(m);
    assert_eq!(
        g.result(),
        Some((Outcome::Win(Side::First), Termination::Immobilization))
    );
    let mut moves = Vec::new();
    g.legal_moves(&mut moves);
    assert!(moves.is_empty());

    // Both rabbits reach goal in one move (gold pushes a silver rabbit to rank 1
    // while its own rabbit arrives): the mover's goal counts first.
    let mut g = board("Rb7 Eg2 rh2 rb8 ed8", Side::First);
    let m = g.parse_move("rh2s Eg2e Rb7e Rc7n").unwrap();
    g.play(m);
    assert_eq!(
        g.result(),
        Some((Outcome::Win(Side::First), Termination::Goal))
    );

    // Only the opponent's rabbit reaches goal: the opponent wins.
    let mut g = board("Ra1 Eg2 rh2 rb8 ed8", Side::First);
    let m = g.parse_move("rh2s Eg2e").unwrap();
    g.play(m);
    assert_eq!(
        g.result(),
        Some((Outcome::Win(Side::Second), Termination::Goal))
    );

    // Elimination: capturing silver's last rabbit wins, even when gold's
    // last rabbit dies in the same move (the opponent's loss counts first).
    let mut g = board("Rc3 Dc2 Ed5 rd6 ed8", Side::First);
    let m = g.parse_move("rd6w rc6x Ed5n Dc2w Rc3x").unwrap();
    g.play(m);
    assert_eq!(
        g.result(),
        Some((Outcome::Win(Side::First), Termination::Elimination))
    );
}
