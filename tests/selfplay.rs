//! `plies selfplay`: records that replay through `GameSupport::record_start` +
//! `parse_move` + `play` for every game, runs that resume after a kill with
//! the same bytes as an uninterrupted run, and refused mismatched resumes.

mod common;

use common::{plies, text};
use plies::game::{Amazons, Arimaa, AtariGo, Game, Gomoku, Outcome, Pentago, TicTacToe};
use plies::games::GameSupport;
use plies::record::{read_records, GameRecord};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The chunk files of a run directory by name, with their bytes.
fn chunks(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir.join("games")) else {
        return out;
    };
    for e in entries {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("part-") && name.ends_with(".jsonl") {
            out.insert(name, std::fs::read(e.path()).unwrap());
        }
    }
    out
}

fn records(dir: &Path) -> Vec<GameRecord> {
    chunks(dir)
        .keys()
        .flat_map(|n| read_records(dir.join("games").join(n)).unwrap())
        .collect()
}

fn selfplay(dir: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "selfplay",
        "--out",
        dir.to_str().unwrap(),
        "--json",
        "--quiet",
    ];
    all.extend_from_slice(args);
    let o = plies(&all);
    assert!(o.status.success(), "plies {all:?}: {}", text(&o));
    serde_json::from_slice(&o.stdout).expect("one JSON summary")
}

/// Replays each record from `record_start` with `parse_move` and `play`;
/// the final outcome and termination must be the record's.
fn replay<G: GameSupport>(recs: &[GameRecord], termination: impl Fn(&G) -> String) {
    for rec in recs {
        let mut g = G::record_start(rec).unwrap_or_else(|e| panic!("{}: {e}", rec.id));
        for (k, m) in rec.moves.iter().enumerate() {
            let mv = g
                .parse_move(m)
                .unwrap_or_else(|e| panic!("{} move {k} '{m}': {e}", rec.id));
            g.play(mv);
        }
        let result = match g.outcome() {
            Some(Outcome::Win(s)) => Some(s),
            _ => None,
        };
        assert_eq!(result, rec.result, "{}", rec.id);
        let term = if g.outcome().is_none() {
            "unfinished".to_string()
        } else {
            termination(&g)
        };
        assert_eq!(term, rec.termination, "{}", rec.id);
        assert_eq!(rec.plies as usize, rec.moves.len());
    }
}

fn win_or_draw<G: Game>(g: &G) -> String {
    match g.outcome() {
        Some(Outcome::Draw) => "draw".into(),
        _ => "win".into(),
    }
}

#[test]
fn every_game_writes_records_that_replay() {
    let root = tempfile::tempdir().unwrap();
    let run = |name: &str, args: &[&str]| -> (Vec<GameRecord>, serde_json::Value) {
        let dir = root.path().join(name);
        let s = selfplay(&dir, args);
        let recs = records(&dir);
        assert_eq!(recs.len() as u64, s["games"].as_u64().unwrap(), "{name}");
        (recs, s)
    };

    let (r, _) = run(
        "ttt",
        &[
            "--game",
            "tictactoe",
            "--white",
            "random",
            "--black",
            "naive",
            "--games",
            "20",
        ],
    );
    replay::<TicTacToe>(&r, win_or_draw);

    let (r, _) = run(
        "arimaa",
        &[
            "--game",
            "arimaa",
            "--white",
            "random-steps",
            "--black",
            "random-steps",
            "--games",
            "30",
            "--alternate",
            "--epsilon",
            "0.1",
        ],
    );
    assert_eq!(r[0].setups.len(), 2);
    assert_eq!(r[0].board_size, None);
    replay::<Arimaa>(&r, |g| g.termination().unwrap().name().to_string());
    let terms: Vec<&str> = r.iter().map(|x| x.termination.as_str()).collect();
    assert!(
        terms
            .iter()
            .all(|t| ["goal", "elimination", "immobilization", "repetition"].contains(t)),
        "{terms:?}"
    );

    let (r, _) = run(
        "arimaa-ab",
        &[
            "--game",
            "arimaa",
            "--white",
            "alphabeta:depth=1",
            "--black",
            "greedy",
            "--games",
            "2",
            "--setups",
            "random",
            "--max-plies",
            "30",
        ],
    );
    assert_eq!(r[0].players.first, "alphabeta:depth=1,eval=material");
    assert_eq!(r[0].players.second, "greedy:eval=material");
    replay::<Arimaa>(&r, |g| g.termination().unwrap().name().to_string());

    let (r, _) = run(
        "amazons",
        &[
            "--game",
            "amazons",
            "--size",
            "6",
            "--white",
            "random",
            "--black",
            "greedy:eval=lieberum",
            "--games",
            "4",
        ],
    );
    assert_eq!(r[0].board_size, Some(6));
    replay::<Amazons>(&r, win_or_draw);

    let (r, _) = run(
        "pentago",
        &[
            "--game", "pentago", "--white", "random", "--black", "random", "--games", "10",
        ],
    );
    replay::<Pentago>(&r, win_or_draw);

    let (r, _) = run(
        "gomoku",
        &[
            "--game", "gomoku", "--size", "9", "--white", "random", "--black", "naive", "--games",
            "6",
        ],
    );
    replay::<Gomoku>(&r, win_or_draw);

    let (r, s) = run(
        "atari-go",
        &[
            "--game",
            "atari-go",
            "--size",
            "7",
            "--white",
            "random",
            "--black",
            "random",
            "--games",
            "8",
            "--max-plies",
            "6",
        ],
    );
    assert!(r
        .iter()
        .any(|x| x.termination == "unfinished" && x.result.is_none()));
    assert_eq!(
        s["unfinished"].as_u64().unwrap(),
        r.iter().filter(|x| x.termination == "unfinished").count() as u64
    );
    replay::<AtariGo>(&r, win_or_draw);
}

#[test]
fn a_killed_run_resumes_to_the_same_bytes() {
    let root = tempfile::tempdir().unwrap();
    let (killed, whole) = (root.path().join("killed"), root.path().join("whole"));
    let args = [
        "--game",
        "arimaa",
        "--white",
        "alphabeta:depth=1,eval=material",
        "--black",
        "random-steps",
        "--epsilon",
        "0.1",
        "--games",
        "30",
        "--chunk-games",
        "3",
        "--seed",
        "5",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args(["selfplay", "--quiet", "--threads", "1", "--out"])
        .arg(&killed)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while chunks(&killed).len() < 2 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = chunks(&killed);
    assert!(
        (2..10).contains(&before.len()),
        "killed after {} of 10 chunks",
        before.len()
    );

    let mut resume = vec!["--threads", "2"];
    resume.extend_from_slice(&args);
    let s = selfplay(&killed, &resume);
    assert_eq!(s["games"].as_u64(), Some(30));
    assert!(
        s["chunks_resumed"].as_u64().unwrap() >= before.len() as u64,
        "{s}"
    );
    assert_eq!(
        s["played"]["games"].as_u64().unwrap(),
        30 - 3 * s["chunks_resumed"].as_u64().unwrap()
    );
    // No temporary file survives, and finished chunks were not rewritten.
    let names: Vec<String> = std::fs::read_dir(killed.join("games"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.starts_with("part-")), "{names:?}");
    let after = chunks(&killed);
    for (name, bytes) in &before {
        assert_eq!(&after[name], bytes, "{name}");
    }

    let mut full = vec!["--threads", "2"];
    full.extend_from_slice(&args);
    selfplay(&whole, &full);
    assert_eq!(after, chunks(&whole));
    assert_eq!(
        std::fs::read(killed.join("selfplay.json")).unwrap(),
        std::fs::read(whole.join("selfplay.json")).unwrap()
    );
    let recs = records(&whole);
    assert_eq!(recs.len(), 30);
    let ids: Vec<String> = recs.iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids, (0..30).map(|i| format!("sp5-{i}")).collect::<Vec<_>>());
    replay::<Arimaa>(&recs, |g| g.termination().unwrap().name().to_string());
}

#[test]
fn other_arguments_on_a_run_directory_are_refused_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let base = [
        "--game", "gomoku", "--size", "7", "--white", "random", "--black", "random", "--games", "5",
    ];
    selfplay(&out, &base);
    let again = selfplay(&out, &base);
    assert_eq!(again["played"]["games"].as_u64(), Some(0));
    let mut other = base.to_vec();
    other.extend_from_slice(&["--seed", "9"]);
    let mut args = vec!["selfplay", "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(&other);
    let o = plies(&args);
    assert!(!o.status.success());
    let msg = text(&o);
    assert!(
        msg.contains("'seed' was 1, now 9") && msg.contains("--force"),
        "{msg}"
    );
    args.push("--force");
    let o = plies(&args);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(records(&out)[0].id, "sp9-0");
}

#[test]
fn bad_player_specs_name_the_key_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let o = plies(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "alphabeta:depth=two",
        "--black",
        "random",
        "--games",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("depth 'two'"), "{}", text(&o));
    let o = plies(&[
        "selfplay",
        "--game",
        "atari-go",
        "--white",
        "greedy",
        "--black",
        "random",
        "--games",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        text(&o).contains("atari_go has no hand evaluator"),
        "{}",
        text(&o)
    );
    let o = plies(&[
        "selfplay",
        "--game",
        "pentago",
        "--white",
        "random",
        "--black",
        "random",
        "--games",
        "1",
        "--setups",
        "random",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        text(&o).contains("--setups random: setups are for Arimaa only, not pentago"),
        "{}",
        text(&o)
    );
}

#[test]
fn dataset_option_encodes_every_position_of_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let summary = selfplay(
        &dir,
        &[
            "--game",
            "arimaa",
            "--white",
            "random-steps",
            "--black",
            "random-steps",
            "--games",
            "40",
            "--chunk-games",
            "16",
            "--dataset",
            "arimaa-20x8x8",
        ],
    );
    let recs = records(&dir);
    assert_eq!(recs.len(), 40);
    // One row per position: every move's start plus the final position.
    let positions: u64 = recs.iter().map(|r| r.plies as u64 + 1).sum();
    let ds = plies::dataset::Dataset::open(dir.join("dataset")).unwrap();
    assert_eq!(ds.num_rows(None), positions, "{summary}");
    assert_eq!(summary["dataset"]["positions"], positions, "{summary}");
    assert_eq!(summary["selfplay"]["games"], 40, "{summary}");
    assert_eq!(ds.spec().encoder.name, "arimaa-20x8x8");
    assert_eq!(ds.spec().encoder.shape, [20, 8, 8]);
    assert_eq!(ds.verify().unwrap().rows, positions);
    let ids: std::collections::BTreeSet<String> = ds
        .rows(None)
        .unwrap()
        .into_iter()
        .map(|r| r.game_id)
        .collect();
    assert_eq!(ids.len(), 40);
    let png = tmp.path().join("heights.png");
    let o = plies(&[
        "dataset",
        "stats",
        dir.join("dataset").to_str().unwrap(),
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("plies to end"), "{}", text(&o));
    assert_eq!(&std::fs::read(&png).unwrap()[..4], b"\x89PNG");
}
