//! Every parser of outside input fed random bytes, random text and mutated
//! seeds from `fuzz/corpus/`: no panic, every call returns, and every error
//! has a message. The per-parser functions are the cargo-fuzz targets'
//! own (`fuzz/src/lib.rs`); `cargo +nightly fuzz run TARGET` runs them
//! under libFuzzer for longer (docs/reliability.md).
//!
//! Also each input that once made a parser panic, as a regression case.

#[path = "../fuzz/src/lib.rs"]
mod entry;

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::Config;
use std::path::{Path, PathBuf};

/// The seeds of `target`: the files of `fuzz/corpus/<target>/`, sorted.
fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = corpus_dir(target);
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    paths.sort();
    let seeds: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display())))
        .collect();
    assert!(!seeds.is_empty(), "{} holds no seeds", dir.display());
    seeds
}

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target)
}

/// Byte strings that parsers treat specially, for the mutations to insert.
const TOKENS: &[&str] = &[
    "\n",
    "\r\n",
    "\t",
    " ",
    "|",
    "/",
    "-",
    ",",
    ":",
    "\"",
    "[",
    "]",
    "{",
    "}",
    "0",
    "1",
    "-1",
    "4294967296",
    "18446744073709551616",
    "1e309",
    "NaN",
    "x",
    "#",
    "*",
    "\u{fffd}",
    "é",
    "null",
];

/// One edit of a seed; positions are taken modulo the length.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Token(usize, usize),
    Delete(usize, usize),
    Duplicate(usize, usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(p, t)| Edit::Token(p, t)),
        (any::<usize>(), 1..64usize).prop_map(|(p, n)| Edit::Delete(p, n)),
        (any::<usize>(), 1..64usize, any::<usize>()).prop_map(|(p, n, q)| Edit::Duplicate(p, n, q)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut data: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let len = data.len();
        let at = |p: usize| if len == 0 { 0 } else { p % (len + 1) };
        match *e {
            Edit::Flip(p, b) if len > 0 => data[p % len] ^= b.max(1),
            Edit::Flip(..) => {}
            Edit::Insert(p, b) => data.insert(at(p), b),
            Edit::Token(p, t) => {
                let p = at(p);
                data.splice(p..p, TOKENS[t].bytes());
            }
            Edit::Delete(p, n) => {
                let p = at(p);
                data.drain(p..(p + n).min(len));
            }
            Edit::Duplicate(p, n, q) => {
                let p = at(p);
                let piece = data[p..(p + n).min(len)].to_vec();
                let q = at(q);
                data.splice(q..q, piece);
            }
            Edit::Truncate(p) => data.truncate(at(p)),
        }
    }
    data
}

/// Random bytes, random text over the characters records use, and seeds
/// with a few edits.
fn inputs(seeds: Vec<Vec<u8>>) -> impl Strategy<Value = Vec<u8>> {
    let text = vec(
        prop::sample::select(
            b"abcdefghijklmnopqrstuvwxyzEMHDCRemhdcr0123456789 \n\t-/,.|[]\"x".to_vec(),
        ),
        0..300,
    );
    let mutated = (prop::sample::select(seeds), vec(edit(), 0..6))
        .prop_map(|(seed, edits)| apply(seed, &edits));
    prop_oneof![
        1 => vec(any::<u8>(), 0..300),
        1 => text,
        4 => mutated,
    ]
}

/// `cases`, unless `PROPTEST_CASES` asks for another number (longer runs).
fn config(cases: u32) -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Runs `target`'s function on `cases` generated inputs.
fn fuzz(target: &str, cases: u32) {
    let (_, run) = entry::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .unwrap_or_else(|| panic!("no target {target}"));
    let mut runner = proptest::test_runner::TestRunner::new(config(cases));
    let result = runner.run(&inputs(seeds(target)), |data| {
        run(&data);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{target}: {e}");
    }
}

#[test]
fn every_seed_passes() {
    for (name, run) in entry::TARGETS {
        for seed in seeds(name) {
            run(&seed);
        }
    }
}

#[test]
fn arimaa_archive() {
    fuzz("arimaa_archive", 300);
}

#[test]
fn gomoku_pgn() {
    fuzz("gomoku_pgn", 300);
}

#[test]
fn amazons_text() {
    fuzz("amazons_text", 300);
}

#[test]
fn game_record() {
    fuzz("game_record", 300);
}

#[test]
fn arimaa_notation() {
    fuzz("arimaa_notation", 300);
}

#[test]
fn aei() {
    fuzz("aei", 200);
}

#[test]
fn gomocup() {
    fuzz("gomocup", 300);
}

#[test]
fn checkpoint() {
    fuzz("checkpoint", 300);
}

#[test]
fn dataset() {
    fuzz("dataset", 300);
}

#[test]
fn game_text() {
    fuzz("game_text", 300);
}

#[test]
fn settings_file() {
    fuzz("settings_file", 300);
}

/// The settings seeds are files plies accepts, so the mutations start from
/// inputs that reach the players, not only the JSON errors.
#[test]
fn settings_seeds_load_and_play() {
    use plies::game::{Game, Pentago};
    use plies::improve::LoopConfig;
    use plies::search::game_player::{build_player, GamePlayerSpec};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.json");
    let mut modes = Vec::new();
    for seed in seeds("settings_file") {
        let (mode, rest) = seed.split_first().expect("a seed has a mode byte");
        std::fs::write(&path, rest).unwrap();
        modes.push(mode % 3);
        let spec = match mode % 3 {
            0 => {
                LoopConfig::read(&path).expect("the loop seed loads");
                continue;
            }
            1 => format!("alphabeta:depth=1,eval=pentago-features:{}", path.display()),
            _ => format!("mdp:{}", path.display()),
        };
        let spec: GamePlayerSpec = spec.parse().unwrap();
        let player = build_player::<Pentago>(&spec).expect("the seed's player builds");
        let mut rng = plies::util::seeded_rng(1, 0);
        player.choose(&Pentago::new(), &mut rng).expect("a move");
    }
    modes.sort();
    modes.dedup();
    assert_eq!(modes, [0, 1, 2], "a seed of every kind of settings file");
}

/// Writes the dataset seeds (the tiny dataset's manifest and shard, in the
/// target's input format) and positions of each game for `game_text`:
/// `cargo test --release --test fuzz_parsers -- --ignored`.
#[test]
#[ignore = "rewrites seeds under fuzz/corpus"]
fn write_generated_seeds() {
    use plies::game::{Amazons, AtariGo, ConnectFour, Game, Gomoku, Pentago, TicTacToe};
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).expect("create the corpus directory");
        std::fs::write(dir.join(name), bytes).expect("write a seed");
    };
    let (manifest, shard) = entry::tiny_dataset();
    write("dataset", "manifest", &[&[0u8][..], manifest].concat());
    write("dataset", "shard", &[&[1u8][..], shard].concat());
    // A position after a few moves, as the game writes it; the first byte
    // picks the game as `entry::game_text` reads it.
    fn position<G: Game>(pick: u8) -> Vec<u8> {
        let mut g = G::new();
        let mut moves = Vec::new();
        for k in 0..5 {
            g.legal_moves(&mut moves);
            if moves.is_empty() {
                break;
            }
            g.play(moves[(k * 7) % moves.len()]);
        }
        let mut out = vec![pick];
        out.extend_from_slice(g.to_text().as_bytes());
        out.push(b'\n');
        g.legal_moves(&mut moves);
        for mv in moves.iter().take(3) {
            out.extend_from_slice(g.move_to_string(*mv).as_bytes());
            out.push(b'\n');
        }
        out
    }
    write("game_text", "position-gomoku", &position::<Gomoku>(0));
    write("game_text", "position-atari-go", &position::<AtariGo>(1));
    write("game_text", "position-pentago", &position::<Pentago>(2));
    write("game_text", "position-tictactoe", &position::<TicTacToe>(3));
    write(
        "game_text",
        "position-connect-four",
        &position::<ConnectFour>(4),
    );
    write("game_text", "position-amazons", &position::<Amazons>(5));
}

/// A time option beyond what `Duration` holds (`tcmove` 1e300 seconds) made
/// the next `go` panic while computing the think time; it is refused by
/// name and the search answers.
#[test]
fn aei_refuses_a_time_too_long_for_the_clock() {
    let position = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/arimaa_positions.txt"),
    )
    .expect("read the positions");
    let position = position.lines().next().expect("a position");
    let input = format!("aei\nsetoption name tcmove value 1e300\nsetposition {position}\ngo\n");
    entry::aei(input.as_bytes());
    let config = plies::protocol::AeiConfig::new("random".parse().expect("a spec"), 1);
    let mut out = Vec::new();
    plies::protocol::run_aei(input.as_bytes(), &mut out, &config).expect("the engine runs");
    let out = String::from_utf8(out).expect("utf-8 output");
    assert!(out.contains("log Error: setoption tcmove"), "{out}");
    assert!(out.contains("bestmove "), "{out}");
}

/// A manifest whose per-split counts add up past `u64::MAX` panicked in
/// debug builds and, wrapping in release builds, could add up to the
/// stated rows and be accepted; the sum is now checked and the field named.
#[test]
fn dataset_manifest_counts_that_overflow_are_refused() {
    let (manifest, _) = entry::tiny_dataset();
    let mut value: serde_json::Value = serde_json::from_slice(manifest).expect("the manifest");
    // u64::MAX + 3 + 3 wraps to 5.
    let splits = serde_json::json!({ "train": u64::MAX, "valid": 3, "test": 3 });
    value["shards"][0]["rows"] = 5.into();
    value["shards"][0]["rows_per_split"] = splits.clone();
    value["totals"]["rows"] = 5.into();
    value["totals"]["rows_per_split"] = splits;
    value["totals"]["games"] = 1.into();
    value["totals"]["games_per_split"] = serde_json::json!({ "train": 1, "valid": 0, "test": 0 });
    let bytes = value.to_string().into_bytes();
    entry::dataset(&[&[0u8][..], &bytes].concat());
    let err = plies::dataset::Manifest::from_slice(&bytes, Path::new("manifest.json"))
        .expect_err("counts past u64::MAX");
    assert!(
        err.to_string().contains("shards[0].rows_per_split"),
        "{err}"
    );
}

/// An encoder shape whose `C*H*W` overflows `usize` panicked in debug
/// builds and, wrapping to 0 in release builds, let a checkpoint load
/// with 9 globals standing for the whole input; it is refused by name.
#[test]
fn checkpoint_encoder_shapes_that_overflow_are_refused() {
    let (config, weights) = {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints/tictactoe-mlp80-td");
        let read = |name: &str| std::fs::read(dir.join(name)).expect("the shipped checkpoint");
        (read("config.json"), read("model.safetensors"))
    };
    let mut value: serde_json::Value = serde_json::from_slice(&config).expect("the config");
    value["encoder"]["shape"] = serde_json::json!([1u64 << 32, 1u64 << 32, 1]);
    value["encoder"]["globals"] = 9.into();
    let config = value.to_string().into_bytes();
    entry::checkpoint(&[&[0u8][..], &config].concat());
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("config.json"), &config).expect("write the config");
    std::fs::write(dir.path().join("model.safetensors"), &weights).expect("write the weights");
    let err = match plies::checkpoint::load(dir.path(), None, None) {
        Ok(_) => panic!("a checkpoint with an overflowing encoder shape loaded"),
        Err(e) => e,
    };
    assert!(err.to_string().contains("4294967296"), "{err}");
}

/// A PGN `Date` with a huge day overflowed computing the start time
/// (a panic in debug builds, a wrapped-around time in release builds);
/// a date or time out of range now leaves the start time unknown.
#[test]
fn gomoku_pgn_dates_out_of_range_are_unknown() {
    let game = |date: &str, time: &str| {
        format!(
            "[Date \"{date}\"]\n[Time \"{time}\"]\n[Black \"a\"]\n[White \"b\"]\n\
             [Result \"1-0\"]\n[GameType \"61,15\"]\n\n1. h8 h9 2. i8 i9 1-0\n"
        )
    };
    let start = |text: &str| {
        entry::gomoku_pgn(text.as_bytes());
        let import = plies::record::gomoku_pgn::parse_playok_gomoku(text, Path::new("d.pgn"))
            .expect("parses");
        import.records[0].start_time
    };
    assert_eq!(start(&game("2021.07.31", "12:27:40")), Some(1_627_734_460));
    assert_eq!(
        start(&game("2020.11.000000005633534067010495355", "07:45:02")),
        None
    );
    assert_eq!(start(&game("2021.13.01", "07:45:02")), None);
    assert_eq!(start(&game("2021.07.31", "99:00:00")), None);
}
