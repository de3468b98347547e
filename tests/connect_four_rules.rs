//! Connect Four against OpenSpiel 2.0.2: every ply of 3000 random oracle
//! games (board string, side to move, terminal flag, returns and the sorted
//! legal-move list) must agree. Regenerate the fixture with
//! `bash scripts/gen_spiel_fixtures.sh connect_four`; it is stored gzipped
//! and unpacked here with `gzip -dc`. Then seeded random games check the
//! engine's own invariants.

use plies::game::{ConnectFour, ConnectFourMove, Game, Outcome};
use plies::record::replay_file;
use plies::util::seeded_rng;
use std::collections::HashMap;

mod common;

#[test]
fn connect_four_matches_openspiel() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::oracle_fixture("connect_four_oracle", dir.path());
    let summary = replay_file::<ConnectFour>(&path).unwrap_or_else(|e| panic!("{e}"));
    // 1682 wins for x, 1308 for o, 10 draws on a full board.
    assert_eq!(summary.games, 3000);
    assert_eq!(summary.plies, 66646);
    assert!(summary.legal_moves_compared > summary.plies, "{summary:?}");
}

#[test]
fn random_games_keep_the_invariants() {
    let mut rng = seeded_rng(2024, 0);
    let mut scratch = Vec::new();
    let mut legal = Vec::new();
    // Key -> text: equal positions share a key, different ones do not.
    let mut keys: HashMap<u64, String> = HashMap::new();
    let mut results = [0usize; 3];
    for game in 0..5000 {
        let mut g = ConnectFour::new();
        loop {
            let text = g.to_text();
            let back = ConnectFour::from_text(&text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(back, g, "{text}");
            assert_eq!(back.hash_key(), g.hash_key(), "{text}");
            assert_eq!(back.ply(), g.ply(), "{text}");
            assert_eq!(back.side_to_move(), g.side_to_move(), "{text}");
            let seen = keys.entry(g.hash_key()).or_insert_with(|| text.clone());
            assert_eq!(*seen, text, "two positions share a key");
            g.legal_moves(&mut legal);
            match g.random_move(&mut rng, &mut scratch) {
                Some(mv) => {
                    assert!(legal.contains(&mv), "{mv:?} not legal in {text}");
                    assert!(g.outcome().is_none(), "{text}");
                    let point = g.policy_index(mv).unwrap();
                    g.play(mv);
                    assert_eq!(g.cell(point), Some(g.side_to_move().other()), "{text}");
                }
                None => {
                    assert!(legal.is_empty(), "{text}");
                    match g.outcome() {
                        Some(Outcome::Win(s)) => results[s.index()] += 1,
                        Some(Outcome::Draw) => {
                            assert_eq!(g.ply(), 42, "{text}");
                            results[2] += 1;
                        }
                        None => panic!("no move but not over in game {game}: {text}"),
                    }
                    break;
                }
            }
            assert!(g.ply() <= 42, "{text}");
        }
    }
    assert_eq!(results.iter().sum::<usize>(), 5000);
    assert!(results.iter().all(|&n| n > 0), "{results:?}");
    assert!(keys.len() > 50_000, "{}", keys.len());
}

#[test]
fn a_full_column_is_not_playable() {
    let mut g = ConnectFour::new();
    for _ in 0..6 {
        g.play_str("a").unwrap();
    }
    let mut legal = Vec::new();
    g.legal_moves(&mut legal);
    assert!(!legal.contains(&ConnectFourMove(0)));
    assert_eq!(legal.len(), 6);
    assert_eq!(g.policy_index(ConnectFourMove(0)), None);
    assert!(g.parse_move("a").unwrap_err().to_string().contains("full"));
}

/// Runs `plies` and fails with its output when it does not succeed.
fn plies_ok(args: &[&str]) -> String {
    let out = common::plies(args);
    let text = common::text(&out);
    assert!(out.status.success(), "plies {}:\n{text}", args.join(" "));
    text
}

/// Connect Four through every stage: seeded self-play of hand and search
/// players, a dataset of its records, a trained checkpoint, and that
/// checkpoint in greedy, alpha-beta and MCTS players against the others.
#[test]
fn connect_four_goes_through_selfplay_dataset_training_and_matches() {
    let dir = tempfile::tempdir().unwrap();
    let path = |p: &str| dir.path().join(p).display().to_string();
    let selfplay = |out: &str| {
        plies_ok(&[
            "selfplay",
            "--game",
            "connect-four",
            "--white",
            "alphabeta:depth=2,eval=threats",
            "--black",
            "mcts:sims=50",
            "--games",
            "60",
            "--epsilon",
            "0.1",
            "--seed",
            "4",
            "--out",
            out,
            "--quiet",
        ])
    };
    selfplay(&path("sp"));
    selfplay(&path("sp2"));
    let part = |d: &str| std::fs::read(dir.path().join(d).join("games/part-00000.jsonl")).unwrap();
    assert_eq!(
        part("sp"),
        part("sp2"),
        "the same seed plays the same games"
    );
    let records =
        plies::record::read_records(dir.path().join("sp/games/part-00000.jsonl")).unwrap();
    assert_eq!(records.len(), 60);
    for rec in &records {
        let mut g = <ConnectFour as plies::games::GameSupport>::record_start(rec).unwrap();
        for m in &rec.moves {
            g.play_str(m).unwrap();
        }
        assert_eq!(g.outcome().is_some(), rec.termination != "unfinished");
    }

    let shard = path("sp/games/part-00000.jsonl");
    plies_ok(&[
        "dataset",
        "build",
        "--records",
        &shard,
        "--out",
        &path("ds"),
        "--quiet",
    ]);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("ds/manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["encoder"]["name"], "stones-2");
    assert_eq!(manifest["encoder"]["shape"], serde_json::json!([2, 6, 7]));
    plies_ok(&[
        "train",
        "--data",
        &path("ds"),
        "--model",
        "cnn3",
        "--epochs",
        "1",
        "--batch",
        "64",
        "--seed",
        "1",
        "--out",
        &path("ck"),
        "--quiet",
    ]);
    let ckpt = format!("ckpt:{}", path("ck/best"));
    for (a, b) in [
        (format!("greedy:eval={ckpt}"), "random".to_string()),
        (
            format!("alphabeta:depth=2,eval={ckpt}"),
            "naive".to_string(),
        ),
        (format!("mcts:sims=30,eval={ckpt}"), "expert".to_string()),
        (
            format!("greedy:{}", path("ck/best")),
            "alphabeta:depth=1".to_string(),
        ),
    ] {
        let out = plies_ok(&[
            "match",
            "--game",
            "connect-four",
            "--a",
            &a,
            "--b",
            &b,
            "--games",
            "4",
            "--seed",
            "2",
            "--json",
            "--quiet",
        ]);
        let r: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        let total = &r["total"];
        let games = ["wins", "draws", "losses"]
            .iter()
            .map(|k| total[k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(games, 4, "{a} vs {b}: {out}");
    }
}
