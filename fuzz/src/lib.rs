//! One function per parser of outside input: each feeds arbitrary bytes to
//! the parser the way plies reads such input and checks that nothing
//! panics, that every call returns, and that every refusal says something.
//!
//! The cargo-fuzz targets (`fuzz/fuzz_targets/`) call these functions, and
//! so does the stable harness `tests/fuzz_parsers.rs` (which includes this
//! file by path), so each target is written once.

use plies::checkpoint::{self, CONFIG_FILE, WEIGHTS_FILE};
use plies::dataset::{
    Dataset, DatasetSpec, DatasetWriter, EncoderInfo, PositionRow, MANIFEST_FILE,
};
use plies::game::arimaa::{notation, Setup};
use plies::game::{Amazons, Arimaa, AtariGo, ConnectFour, Game, Gomoku, Pentago, Side, TicTacToe};
use plies::games::{GameKind, GameSupport};
use plies::protocol::{run_aei, run_gomocup, AeiConfig, GomocupConfig};
use plies::record::amazons_text::AmazonsRecord;
use plies::record::arimaa_archive::{self, ImportOptions};
use plies::record::gomoku_pgn::parse_playok_gomoku;
use plies::record::GameRecord;
use std::fmt::Display;
use std::path::Path;
use std::sync::OnceLock;

/// What a target does with one input.
pub type Target = fn(&[u8]);

/// The fuzz targets, by name: the directory names under `fuzz/corpus/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("arimaa_archive", arimaa_archive),
    ("gomoku_pgn", gomoku_pgn),
    ("amazons_text", amazons_text),
    ("game_record", game_record),
    ("arimaa_notation", arimaa_notation),
    ("aei", aei),
    ("gomocup", gomocup),
    ("checkpoint", checkpoint),
    ("dataset", dataset),
    ("game_text", game_text),
    ("settings_file", settings_file),
];

/// A refusal must say what is wrong: its message may not be blank.
pub fn refused(err: impl Display) {
    let text = err.to_string();
    assert!(!text.trim().is_empty(), "an error with an empty message");
}

/// Moves played per game at most, so one input stays quick.
const MAX_MOVES: usize = 200;

/// The header row of arimaa.com's archive files.
pub const ARCHIVE_HEADER: &str = "id\twplayerid\tbplayerid\twusername\tbusername\twtitle\tbtitle\t\
wcountry\tbcountry\twrating\tbrating\twratingk\tbratingk\twtype\tbtype\tevent\tsite\t\
timecontrol\tpostal\tstartts\tendts\tresult\ttermination\tplycount\tmode\trated\tcorrupt\t\
movelist\tevents";

/// arimaa.com archive text. Input that does not start with a header gets
/// the real one, so the fuzzer spends its time on game rows.
pub fn arimaa_archive(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = if text.starts_with("id") {
        text.into_owned()
    } else {
        format!("{ARCHIVE_HEADER}\n{text}")
    };
    let opts = ImportOptions::default();
    match arimaa_archive::import_str(&text, "fuzz.txt", &opts) {
        Ok((records, summary)) => {
            for report in &summary.reports {
                refused(report);
            }
            for rec in &records {
                // A kept record replays, and survives its own JSON line.
                if let Err(e) = arimaa_archive::replay_record(rec) {
                    panic!("a kept record does not replay: {e}");
                }
                let line = rec.to_json_line();
                if let Err(e) = GameRecord::from_json_line(&line) {
                    panic!("a kept record does not read back: {e}");
                }
            }
        }
        Err(e) => refused(e),
    }
    // The import that stops at the first bad game must name it.
    let strict = ImportOptions {
        stop_on_error: true,
        ..ImportOptions::default()
    };
    if let Err(e) = arimaa_archive::import_archive(
        text.as_bytes(),
        Path::new("fuzz.txt"),
        &strict,
        |_| Ok(()),
        || {},
    ) {
        refused(e);
    }
}

/// A PlayOK Gomoku PGN file.
pub fn gomoku_pgn(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse_playok_gomoku(&text, Path::new("fuzz.pgn")) {
        Ok(import) => {
            for why in &import.skipped {
                refused(why);
            }
            for rec in &import.records {
                replay_record(rec);
            }
        }
        Err(e) => refused(e),
    }
}

/// Amazons text records, one game per line, each replayed.
pub fn amazons_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        match AmazonsRecord::parse_line(line) {
            Ok(Some(rec)) => {
                if rec.moves.len() > MAX_MOVES {
                    continue;
                }
                match rec.replay() {
                    Ok(_) => {
                        let again = AmazonsRecord::parse_line(&rec.to_line());
                        assert!(
                            matches!(&again, Ok(Some(r)) if *r == rec),
                            "a record does not read back from its line"
                        );
                    }
                    Err(e) => refused(e),
                }
            }
            Ok(None) => {}
            Err(e) => refused(e),
        }
    }
}

/// JSONL game records: each line parsed and, when it is a record, replayed
/// from its start with its game's rules.
pub fn game_record(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match GameRecord::from_json_line(line) {
            Ok(rec) => replay_record(&rec),
            Err(e) => refused(e),
        }
    }
}

/// Plays a record through the rules of its game; refusals must say why.
fn replay_record(rec: &GameRecord) {
    let kind: GameKind = match rec.game.parse() {
        Ok(k) => k,
        Err(e) => return refused(e),
    };
    if rec.moves.len() > MAX_MOVES {
        return;
    }
    if kind == GameKind::Arimaa {
        if let Err(e) = arimaa_archive::replay_record(rec) {
            refused(e);
        }
        return;
    }
    plies::with_game!(kind, G => replay_moves::<G>(rec));
}

fn replay_moves<G: GameSupport>(rec: &GameRecord) {
    let mut game = match G::record_start(rec) {
        Ok(g) => g,
        Err(e) => return refused(e),
    };
    for mv in &rec.moves {
        if let Err(e) = game.play_str(mv) {
            return refused(e);
        }
    }
}

/// Arimaa's texts: the first line is read as a position line, a setup of
/// either side, a turn label and step tokens, and every line as a long
/// diagram's start; then the other lines are played as moves from that
/// position (or from the standard setups).
pub fn arimaa_notation(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    for side in [Side::First, Side::Second] {
        match Setup::parse(side, first) {
            Ok(setup) => {
                let again = Setup::parse(side, &setup.to_notation());
                assert!(
                    again.is_ok(),
                    "a setup does not read back from its notation"
                );
            }
            Err(e) => refused(e),
        }
    }
    if let Err(e) = notation::parse_position_line(first) {
        refused(e);
    }
    for token in first.split_whitespace() {
        if let Err(e) = notation::parse_turn_label(token) {
            refused(e);
        }
        if let Err(e) = notation::parse_step_token(token) {
            refused(e);
        }
    }
    let all: Vec<&str> = text.lines().collect();
    if let Err(e) = notation::parse_long_diagram(&all) {
        refused(e);
    }
    let mut game = match Arimaa::from_text(first) {
        Ok(g) => {
            let again = Arimaa::from_text(&g.to_text());
            assert!(again.is_ok(), "a position does not read back from its text");
            g
        }
        Err(e) => {
            refused(e);
            Arimaa::new()
        }
    };
    for line in lines.take(MAX_MOVES) {
        match game.parse_move(line) {
            Ok(mv) => {
                let written = game.move_to_string(mv);
                if let Err(e) = game.parse_move(&written) {
                    panic!("move {written:?} does not read back: {e}");
                }
            }
            Err(e) => refused(e),
        }
        if let Err(e) = game.play_str(line) {
            refused(e);
        }
    }
    let _ = game.render();
}

/// The AEI engine fed arbitrary command lines, with the random player and
/// with a depth-1 alpha-beta. `setoption name depth` lines are dropped for
/// the alpha-beta: a deep search without a clock runs until `stop`, as the
/// protocol intends, which no bounded input can be expected to send.
pub fn aei(data: &[u8]) {
    for (spec, keep_depth) in [("random", true), ("alphabeta:depth=1", false)] {
        let input: Vec<u8> = if keep_depth {
            data.to_vec()
        } else {
            data.split(|&b| b == b'\n')
                .filter(|l| {
                    !String::from_utf8_lossy(l)
                        .to_ascii_lowercase()
                        .contains("depth")
                })
                .flat_map(|l| l.iter().copied().chain([b'\n']))
                .collect()
        };
        let spec = match spec.parse() {
            Ok(s) => s,
            Err(e) => panic!("the engine spec {spec} is refused: {e}"),
        };
        let config = AeiConfig::new(spec, 1);
        let mut out = Vec::new();
        if let Err(e) = run_aei(input.as_slice(), &mut out, &config) {
            panic!("the AEI engine failed on in-memory input: {e}");
        }
    }
}

/// The Gomocup engine fed arbitrary command lines, with the naive player.
pub fn gomocup(data: &[u8]) {
    let config = GomocupConfig::new("naive", 1);
    let mut out = Vec::new();
    if let Err(e) = run_gomocup(data, &mut out, &config) {
        panic!("the Gomocup engine failed on in-memory input: {e}");
    }
}

/// The shipped checkpoint's files.
fn shipped_checkpoint() -> &'static (Vec<u8>, Vec<u8>) {
    static FILES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = if dir.join("checkpoints").is_dir() {
            dir.join("checkpoints/tictactoe-mlp80-td")
        } else {
            dir.join("../checkpoints/tictactoe-mlp80-td")
        };
        let read = |name: &str| match std::fs::read(dir.join(name)) {
            Ok(b) => b,
            Err(e) => panic!("read the shipped checkpoint's {name}: {e}"),
        };
        (read(CONFIG_FILE), read(WEIGHTS_FILE))
    })
}

/// A checkpoint directory. The first byte picks what the rest is: even,
/// `config.json` (with the shipped weights); odd, `model.safetensors`
/// (with the shipped config).
pub fn checkpoint(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (config, weights) = shipped_checkpoint();
    let (config, weights) = if mode % 2 == 0 {
        (rest, weights.as_slice())
    } else {
        (config.as_slice(), rest)
    };
    let dir = temp_dir();
    write(&dir.path().join(CONFIG_FILE), config);
    write(&dir.path().join(WEIGHTS_FILE), weights);
    match checkpoint::load(dir.path(), None, None) {
        Ok(ckpt) => {
            if let Err(e) = ckpt.model(&candle_core::Device::Cpu) {
                refused(e);
            }
            if let Err(e) = ckpt.native_mlp() {
                refused(e);
            }
        }
        Err(e) => refused(e),
    }
}

fn temp_dir() -> tempfile::TempDir {
    match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("create a temporary directory: {e}"),
    }
}

fn write(path: &Path, bytes: &[u8]) {
    if let Err(e) = std::fs::write(path, bytes) {
        panic!("write {}: {e}", path.display());
    }
}

/// A tiny real dataset: `manifest.json` and its one shard.
pub fn tiny_dataset() -> &'static (Vec<u8>, Vec<u8>) {
    static FILES: OnceLock<(Vec<u8>, Vec<u8>)> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = temp_dir();
        let encoder = EncoderInfo {
            name: "tictactoe-9".into(),
            version: 1,
            shape: [1, 3, 3],
            globals: 0,
        };
        let built = (|| {
            let mut writer =
                DatasetWriter::create(dir.path(), DatasetSpec::new("tictactoe", encoder))?;
            for game in 0..3u32 {
                for ply in 0..3u32 {
                    writer.push(PositionRow {
                        game_id: format!("g{game}"),
                        ply,
                        plies_to_end: 2 - ply,
                        side_to_move: (ply % 2) as u8,
                        position: "x........".into(),
                        planes: vec![ply as i8; 9],
                        globals: vec![],
                        label: 0.5,
                        move_played: (ply < 2).then(|| "b2".to_string()),
                        source: "fuzz".into(),
                        termination: (ply == 2).then(|| "draw".to_string()),
                        white_rating: Some(1500),
                        black_rating: None,
                        policy: None,
                    })?;
                }
            }
            writer.finish(serde_json::json!({ "command": "fuzz" }))
        })();
        if let Err(e) = built {
            panic!("build the tiny dataset: {e}");
        }
        let read = |name: &str| match std::fs::read(dir.path().join(name)) {
            Ok(b) => b,
            Err(e) => panic!("read the tiny dataset's {name}: {e}"),
        };
        (
            read(MANIFEST_FILE),
            read(&plies::dataset::shard_file_name(0)),
        )
    })
}

/// A dataset directory. The first byte picks what the rest is: even,
/// `manifest.json` (with the real shard); odd, the shard, under the real
/// manifest with its size and sha256 set to match, so the bytes reach the
/// Arrow decoder instead of stopping at the checksum.
pub fn dataset(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (manifest, shard) = tiny_dataset();
    let (manifest, shard) = if mode % 2 == 0 {
        (rest.to_vec(), shard.as_slice())
    } else {
        (matching_manifest(manifest, rest), rest)
    };
    let dir = temp_dir();
    write(&dir.path().join(MANIFEST_FILE), &manifest);
    write(&dir.path().join(plies::dataset::shard_file_name(0)), shard);
    let ds = match Dataset::open(dir.path()) {
        Ok(ds) => ds,
        Err(e) => return refused(e),
    };
    if let Err(e) = ds.verify() {
        refused(e);
    }
    if let Err(e) = ds.rows(None) {
        refused(e);
    }
    if let Err(e) = ds.games(None) {
        refused(e);
    }
    if let Err(e) = ds.stats() {
        refused(e);
    }
}

/// `manifest` with shard 0's `bytes` and `sha256` those of `shard`.
fn matching_manifest(manifest: &[u8], shard: &[u8]) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    let mut value: serde_json::Value = match serde_json::from_slice(manifest) {
        Ok(v) => v,
        Err(e) => panic!("the tiny dataset's manifest: {e}"),
    };
    let sha: String = Sha256::digest(shard)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    value["shards"][0]["bytes"] = shard.len().into();
    value["shards"][0]["sha256"] = sha.into();
    value.to_string().into_bytes()
}

/// The other games' texts. The first byte picks the game and the board
/// size to try; the first line of the rest is read as a position, and the
/// other lines are played as moves from it (or from the start).
pub fn game_text(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let size = usize::from(pick / 8);
    match pick % 6 {
        0 => text_and_moves::<Gomoku>(&text, size),
        1 => text_and_moves::<AtariGo>(&text, size),
        2 => text_and_moves::<Pentago>(&text, size),
        3 => text_and_moves::<TicTacToe>(&text, size),
        4 => text_and_moves::<ConnectFour>(&text, size),
        _ => text_and_moves::<Amazons>(&text, size),
    }
}

fn text_and_moves<G: Game>(text: &str, size: usize) {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let start = match G::with_size(size) {
        Ok(g) => g,
        Err(e) => {
            refused(e);
            G::new()
        }
    };
    let mut game = match G::from_text(first) {
        Ok(g) => {
            let written = g.to_text();
            match G::from_text(&written) {
                Ok(again) => assert_eq!(
                    again.to_text(),
                    written,
                    "a position changes when read back"
                ),
                Err(e) => panic!("a position does not read back from {written:?}: {e}"),
            }
            g
        }
        Err(e) => {
            refused(e);
            start
        }
    };
    for line in lines.take(MAX_MOVES) {
        match game.parse_move(line) {
            Ok(mv) => {
                let written = game.move_to_string(mv);
                match game.parse_move(&written) {
                    Ok(again) => assert_eq!(again, mv, "move {written:?} reads back as another"),
                    Err(e) => panic!("move {written:?} does not read back: {e}"),
                }
                game.play(mv);
            }
            Err(e) => refused(e),
        }
    }
    let _ = game.render();
}

/// A settings file a user hands to plies. The first byte picks which: a
/// self-play loop configuration (`plies loop --config`), a weights file
/// played as `eval=pentago-features:PATH`, or a bucketed MDP model played as
/// `mdp:PATH`. Files that load are used: the player picks a move.
pub fn settings_file(data: &[u8]) {
    use plies::improve::LoopConfig;
    use plies::search::game_player::{build_player, GamePlayerSpec};
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let dir = temp_dir();
    let path = dir.path().join("settings.json");
    write(&path, rest);
    let spec = match mode % 3 {
        0 => {
            if let Err(e) = LoopConfig::read(&path) {
                refused(e);
            }
            return;
        }
        1 => format!("alphabeta:depth=1,eval=pentago-features:{}", path.display()),
        _ => format!("mdp:{}", path.display()),
    };
    let spec: GamePlayerSpec = match spec.parse() {
        Ok(s) => s,
        Err(e) => return refused(e),
    };
    match build_player::<Pentago>(&spec) {
        Ok(player) => {
            let mut rng = plies::util::seeded_rng(1, 0);
            if let Err(e) = player.choose(&Pentago::new(), &mut rng) {
                refused(e);
            }
        }
        Err(e) => refused(e),
    }
}
