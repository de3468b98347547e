//! Round-robin tournaments and matches from the command line: scores add
//! up, ratings come out in the expected order, the files do not depend on
//! the thread count, the chart is written, every game plays, and bad
//! specs, games and sizes are named.

mod common;

use common::text;
use plies::game::{Amazons, Arimaa, AtariGo, Game, Gomoku, Pentago, TicTacToe};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn plies_with_threads(threads: Option<usize>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.args(args);
    if let Some(n) = threads {
        c.env("RAYON_NUM_THREADS", n.to_string());
    }
    c.output().expect("run plies")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const AMAZONS: [&str; 3] = ["random", "naive", "alphabeta:depth=1"];

fn amazons_arena(out: &Path, threads: usize) -> Output {
    let out = out.to_str().unwrap();
    let mut args = vec!["arena", "--game", "amazons", "--size", "6", "--players"];
    args.extend(AMAZONS);
    args.extend([
        "--games-per-pair",
        "16",
        "--seed",
        "7",
        "--out",
        out,
        "--save-games",
        "--quiet",
    ]);
    let o = plies_with_threads(Some(threads), &args);
    assert!(o.status.success(), "{}", text(&o));
    o
}

#[test]
fn amazons_round_robin_adds_up_and_repeats_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    let o = amazons_arena(&one, 1);
    amazons_arena(&two, 2);
    for f in ["results.csv", "ratings.csv", "games.txt"] {
        assert_eq!(read(&one.join(f)), read(&two.join(f)), "{f} differs");
    }

    // The tables on stdout.
    let stdout = String::from_utf8_lossy(&o.stdout);
    for needle in [
        "points of the row player against the column player",
        "ratings (Bradley-Terry",
        "alphabeta:depth=1,eval=mindist",
        "games/s",
    ] {
        assert!(stdout.contains(needle), "no {needle:?} in\n{stdout}");
    }

    let json: Value = serde_json::from_str(&read(&one.join("arena.json"))).unwrap();
    assert_eq!(json["game"], "amazons");
    assert_eq!(json["board_size"], 6);
    assert_eq!(json["games"], 48);
    let pairs = json["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    let mut points = [0.0f64; 3];
    for p in pairs {
        let t = &p["total"];
        let (w, d, l) = (
            t["wins"].as_f64().unwrap(),
            t["draws"].as_f64().unwrap(),
            t["losses"].as_f64().unwrap(),
        );
        assert_eq!(w + d + l, 16.0, "{p}");
        let first = &p["a_first"];
        let first_games: u64 = ["wins", "draws", "losses"]
            .iter()
            .map(|k| first[k].as_u64().unwrap())
            .sum();
        assert_eq!(first_games, 8, "colours alternate: {p}");
        points[p["a_index"].as_u64().unwrap() as usize] += w + d / 2.0;
        points[p["b_index"].as_u64().unwrap() as usize] += l + d / 2.0;
    }
    assert_eq!(points.iter().sum::<f64>(), 48.0);

    // Ratings: alpha-beta on top, clearly above random (the anchor).
    let ratings = json["ratings"].as_array().unwrap();
    assert_eq!(ratings.len(), 3);
    assert_eq!(ratings[0]["player"], "alphabeta:depth=1,eval=mindist");
    assert!(ratings[0]["lo"].as_f64().unwrap() > 0.0, "{ratings:?}");
    for r in ratings {
        let i = r["index"].as_u64().unwrap() as usize;
        let score = r["score"].as_f64().unwrap() * r["games"].as_f64().unwrap();
        assert!((score - points[i]).abs() < 1e-9, "{r}");
    }
    let random = ratings.iter().find(|r| r["player"] == "random").unwrap();
    assert_eq!(random["elo"].as_f64().unwrap(), 0.0);

    // The CSVs: a header and one row per pair / player.
    let results = read(&one.join("results.csv"));
    assert_eq!(results.lines().count(), 4);
    assert!(results.starts_with("a,b,games,wins,draws,losses"));
    let rating_rows = read(&one.join("ratings.csv"));
    assert_eq!(rating_rows.lines().count(), 4);
    assert!(rating_rows.lines().nth(1).unwrap().contains("alphabeta"));

    // The chart.
    let png = std::fs::read(one.join("ratings.png")).unwrap();
    assert!(png.len() > 2000 && png.starts_with(b"\x89PNG\r\n\x1a\n"));

    // games.txt: every game replays legally to its result.
    let games = read(&one.join("games.txt"));
    let lines: Vec<&str> = games.lines().skip(1).collect();
    assert_eq!(lines.len(), 48);
    for line in lines {
        let cols: Vec<&str> = line.split('\t').collect();
        let mut g = Amazons::from_text(cols[5]).unwrap();
        assert_eq!(g.size(), 6);
        for m in cols[6].split(';') {
            g.play_str(m).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
        let result = plies::arena::result_text(g.outcome());
        assert_eq!(result, cols[3], "{line}");
        assert_eq!(cols[4].parse::<usize>().unwrap(), g.ply() as usize);
    }
}

#[test]
fn tictactoe_ratings_come_out_in_order_and_the_seed_decides() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, out: &str, anchor: &str| {
        let out = dir.path().join(out);
        let o = plies_with_threads(
            None,
            &[
                "arena",
                "--game",
                "tictactoe",
                "--players",
                "random",
                "naive",
                "expert",
                "--games-per-pair",
                "300",
                "--seed",
                seed,
                "--anchor",
                anchor,
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ],
        );
        assert!(o.status.success(), "{}", text(&o));
        out
    };
    let a = run("5", "a", "first");
    let b = run("5", "b", "first");
    let c = run("6", "c", "first");
    let m = run("5", "m", "mean");
    assert_eq!(read(&a.join("results.csv")), read(&b.join("results.csv")));
    assert_ne!(read(&a.join("results.csv")), read(&c.join("results.csv")));
    let json: Value = serde_json::from_str(&read(&a.join("arena.json"))).unwrap();
    let ratings = json["ratings"].as_array().unwrap();
    // Random is last and both others are clearly above it.
    assert_eq!(ratings[2]["player"], "random");
    for r in &ratings[..2] {
        assert!(r["lo"].as_f64().unwrap() > 100.0, "{r}");
    }
    // Anchored at the mean, the ratings sum to 0 and keep their differences.
    let mean: Value = serde_json::from_str(&read(&m.join("arena.json"))).unwrap();
    let by_index = |v: &Value| {
        let mut e = [0.0; 3];
        for r in v["ratings"].as_array().unwrap() {
            e[r["index"].as_u64().unwrap() as usize] = r["elo"].as_f64().unwrap();
        }
        e
    };
    let (f, g) = (by_index(&json), by_index(&mean));
    assert!(g.iter().sum::<f64>().abs() < 1e-6, "{g:?}");
    for i in 0..3 {
        assert!(((f[i] - f[0]) - (g[i] - g[0])).abs() < 1e-6);
    }
}

/// A small match of every game from the command line, as JSON.
fn small_match(game: &str, size: Option<&str>, a: &str, b: &str, games: &str) -> Value {
    let mut args = vec![
        "match", "--game", game, "--a", a, "--b", b, "--games", games, "--seed", "3", "--json",
    ];
    if let Some(s) = size {
        args.extend(["--size", s]);
    }
    let o = plies_with_threads(None, &args);
    assert!(o.status.success(), "{game}: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{game}: {e}: {}", text(&o)))
}

#[test]
fn match_plays_every_game() {
    // Arimaa's naive player tries every distinct turn: too slow here.
    /// Game, --size, its name in files, board size, players.
    type Case<'a> = (&'a str, Option<&'a str>, &'a str, usize, &'a str, &'a str);
    let cases: [Case; 6] = [
        ("tictactoe", None, TicTacToe::NAME, 3, "random", "naive"),
        ("amazons", Some("6"), Amazons::NAME, 6, "random", "naive"),
        ("pentago", None, Pentago::NAME, 6, "random", "naive"),
        ("gomoku", Some("7"), Gomoku::NAME, 7, "random", "naive"),
        ("atari-go", Some("5"), AtariGo::NAME, 5, "random", "naive"),
        (
            "arimaa",
            None,
            Arimaa::NAME,
            8,
            "random-steps",
            "random-steps:end=0.3",
        ),
    ];
    for (game, size, name, n, a, b) in cases {
        let r = small_match(game, size, a, b, "10");
        assert_eq!(r["game"], name, "{r}");
        assert_eq!(r["board_size"], n, "{r}");
        let t = &r["total"];
        let games = t["wins"].as_u64().unwrap()
            + t["draws"].as_u64().unwrap()
            + t["losses"].as_u64().unwrap();
        assert_eq!(games, 10, "{game}: {r}");
        assert!(r["mean_plies"].as_f64().unwrap() > 0.0);
    }
    // Arimaa starts from setups sampled from the shipped archives; uniform
    // random players are slow there, so a ply limit stops the games.
    let o = plies_with_threads(
        None,
        &[
            "match",
            "--game",
            "arimaa",
            "--a",
            "random",
            "--b",
            "random-steps",
            "--games",
            "2",
            "--max-plies",
            "12",
            "--json",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["openings"].as_str().unwrap().starts_with("archive:"));
    assert_eq!(r["unfinished"], 2, "{r}");
}

#[test]
fn arimaa_arena_with_random_steps_players() {
    let dir = tempfile::tempdir().unwrap();
    let o = plies_with_threads(
        Some(2),
        &[
            "arena",
            "--game",
            "arimaa",
            "--players",
            "random-steps",
            "random-steps:end=0.5",
            "alphabeta:depth=1",
            "--games-per-pair",
            "4",
            "--out",
            dir.path().to_str().unwrap(),
            "--quiet",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let json: Value = serde_json::from_str(&read(&dir.path().join("arena.json"))).unwrap();
    assert_eq!(json["games"], 12);
    assert!(json["openings"].as_str().unwrap().starts_with("archive:"));
}

#[test]
fn bad_specs_games_and_sizes_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let arena = |extra: &[&str]| {
        let mut args = vec!["arena", "--out", out, "--games-per-pair", "2", "--quiet"];
        args.extend(extra);
        plies_with_threads(None, &args)
    };
    let o = arena(&[
        "--game",
        "amazons",
        "--size",
        "6",
        "--players",
        "random",
        "alphabeta:depth=2,width=3",
    ]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("player 2 of --players") && t.contains("'width'"),
        "{t}"
    );
    assert!(!t.contains("panicked"), "{t}");
    let o = arena(&[
        "--game",
        "atari-go",
        "--players",
        "random",
        "alphabeta:depth=1",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("atari_go has no hand evaluator"),
        "{}",
        text(&o)
    );
    let o = arena(&["--game", "chess", "--players", "random", "naive"]);
    assert!(!o.status.success());
    assert!(text(&o).contains("chess"), "{}", text(&o));
    let o = arena(&[
        "--game",
        "tictactoe",
        "--size",
        "4",
        "--players",
        "random",
        "naive",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--size 4"), "{}", text(&o));
    let o = arena(&["--game", "tictactoe", "--players", "random"]);
    assert!(!o.status.success());
    let o = plies_with_threads(
        None,
        &[
            "match",
            "--game",
            "pentago",
            "--a",
            "naive",
            "--b",
            "greedy:eval=nope",
        ],
    );
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("--b") && t.contains("'nope'"), "{t}");
    assert_eq!(t.matches("'nope'").count(), 1, "said twice: {t}");
}
