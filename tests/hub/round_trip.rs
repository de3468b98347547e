//! A trained checkpoint up to the hub and back into a match, an AEI
//! session, evaluation and further training.

use crate::common::{self, text};
use crate::env::Env;
use crate::files::{files_equal, root, CKPT_FILES, TTT};
use crate::server::Hub;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The main job's Arimaa linear evaluator (`scripts/quickstart.sh`: the
/// same `plies train` flags, one epoch on a small self-play dataset).
fn main_job_checkpoint(dir: &Path) -> PathBuf {
    let sp = dir.join("selfplay");
    let o = common::plies(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "random-steps",
        "--black",
        "random-steps",
        "--games",
        "24",
        "--seed",
        "5",
        "--dataset",
        "arimaa-6x8x8",
        "--out",
        sp.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.join("arimaa-linear");
    let model = root().join("data/arimaa/models/linear-material.json");
    let o = common::plies(&[
        "train",
        "--data",
        sp.join("dataset").to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--optimizer",
        "nesterov",
        "--lr",
        "0.001",
        "--momentum",
        "0.9",
        "--epochs",
        "1",
        "--batch",
        "256",
        "--seed",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    out.join("best")
}

/// Plays one AEI session: both setups, then one move by the engine, read
/// before `quit` (which would end the search unanswered).
fn aei_move(env: &Env, player: &str) -> String {
    let mut child = env
        .apply(&mut Command::new(env!("CARGO_BIN_EXE_plies")))
        .args(["engine", "aei", "--player", player, "--seed", "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"aei\nisready\nnewgame\n\
            makemove Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rg1 Rh1 Ha2 Db2 Cc2 Md2 Ee2 Cf2 Dg2 Hh2\n\
            makemove ra8 rb8 rc8 rd8 re8 rf8 rg8 rh8 ha7 db7 cc7 ed7 me7 cf7 dg7 hh7\n\
            go\n",
        )
        .unwrap();
    let mut seen = Vec::new();
    let mut best = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(mv) = line.strip_prefix("bestmove ") {
            best = Some(mv.to_string());
            break;
        }
        seen.push(line);
    }
    let _ = stdin.write_all(b"quit\n");
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    best.unwrap_or_else(|| panic!("no bestmove:\n{}\n{}", seen.join("\n"), text(&out)))
}

#[test]
fn main_job_checkpoint_goes_up_and_comes_back_into_a_match_and_an_aei_session() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ckpt = main_job_checkpoint(tmp.path());
    let up = env.ok(&[
        "hub",
        "upload",
        ckpt.to_str().unwrap(),
        "team/arimaa-linear",
        "--message",
        "main job checkpoint",
        "--json",
    ]);
    assert!(up.contains("\"model.safetensors\""), "{up}");

    // A match through ckpt:hf: downloads into the cache; the files there
    // are the trained ones, byte for byte.
    let spec = "greedy:eval=ckpt:hf:team/arimaa-linear";
    let matched = env.ok(&[
        "match",
        "--game",
        "arimaa",
        "--a",
        spec,
        "--b",
        "random",
        "--games",
        "2",
        "--max-plies",
        "40",
        "--seed",
        "1",
        "--quiet",
    ]);
    assert!(
        matched.contains(&format!("{spec} vs random (2 games")),
        "{matched}"
    );
    let snap = std::fs::read_dir(env.cache().join("models--team--arimaa-linear/snapshots"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    files_equal(&ckpt, &snap, &CKPT_FILES);

    // The AEI engine reads it from the cache alone: the hub sees no request.
    let before = hub.requests();
    let mv = aei_move(&env, &format!("{spec},setup=standard"));
    assert!(!mv.trim().is_empty());
    assert_eq!(
        hub.requests(),
        before,
        "a cached checkpoint asked the network"
    );

    // The same move with the local directory: the network's copy plays alike.
    let local = aei_move(
        &env,
        &format!("greedy:eval=ckpt:{},setup=standard", ckpt.display()),
    );
    assert_eq!(mv, local);

    // And `hub download --out` gives the same files in a plain directory.
    let out = tmp.path().join("copy");
    env.ok(&[
        "hub",
        "download",
        "team/arimaa-linear",
        "--out",
        out.to_str().unwrap(),
    ]);
    files_equal(&ckpt, &out, &CKPT_FILES);
}

#[test]
fn a_checkpoint_continues_training_and_evaluates_from_the_hub() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    let ttt = root().join(TTT);
    env.ok(&["hub", "upload", ttt.to_str().unwrap(), "team/ttt@v1"]);
    let data = tmp.path().join("data");
    env.ok(&[
        "data",
        "generate",
        "--game",
        "tictactoe",
        "--a",
        "random",
        "--b",
        "random",
        "--games",
        "60",
        "--seed",
        "2",
        "--out",
        data.to_str().unwrap(),
        "--quiet",
    ]);
    let report = env.ok(&[
        "evaluate",
        "--checkpoint",
        "ckpt:hf:team/ttt@v1",
        "--data",
        data.to_str().unwrap(),
        "--split",
        "all",
    ]);
    assert!(report.contains("hf:team/ttt@v1"), "{report}");
    let out = tmp.path().join("tuned");
    env.ok(&[
        "train",
        "--data",
        data.to_str().unwrap(),
        "--model",
        "ckpt:hf:team/ttt@v1",
        "--epochs",
        "1",
        "--batch",
        "32",
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    let tuned = plies::checkpoint::load(&out.join("best"), Some("tictactoe"), None).unwrap();
    let base = plies::checkpoint::load(&ttt, None, None).unwrap();
    assert_eq!(tuned.config.model, base.config.model);
}

#[test]
fn a_shipped_checkpoint_goes_up_by_its_name() {
    let Some(hub) = Hub::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let env = Env::new(&hub, tmp.path());
    env.ok(&["hub", "upload", "builtin:tictactoe", "team/ttt-shipped"]);
    let out = tmp.path().join("back");
    env.ok(&[
        "hub",
        "download",
        "team/ttt-shipped",
        "--out",
        out.to_str().unwrap(),
    ]);
    files_equal(&root().join(TTT), &out, &CKPT_FILES);
    let e = env.fails(&["hub", "upload", "builtin:chess", "team/none"]);
    assert!(e.contains("builtin:chess"), "{e}");
}
