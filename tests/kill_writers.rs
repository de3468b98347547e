//! Writers SIGKILLed at seeded random instants and rerun end with exactly
//! the output of an uninterrupted run, and a replaced output stays whole
//! (the old or the new version) at every kill.
#![cfg(unix)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{delays, text};
use plies::dataset::Dataset;

fn plies() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1");
    c
}

fn run(args: &[String]) {
    let o = plies().args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", text(&o));
}

/// Starts `args`, SIGKILLs it after `ms` milliseconds (if still running).
fn kill_after(args: &[String], ms: u64) {
    let mut c = plies();
    c.args(args);
    common::kill_after(c, ms);
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Every file under `dir` whose name satisfies `keep`, with its bytes.
fn files(dir: &Path, keep: &dyn Fn(&str) -> bool) -> Vec<(PathBuf, Vec<u8>)> {
    common::files_under(dir, &|_| true, keep)
        .into_iter()
        .map(|(rel, p)| (rel, std::fs::read(p).unwrap()))
        .collect()
}

fn selfplay_args(out: &Path) -> Vec<String> {
    let mut a = strings(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        "random-steps",
        "--black",
        "random-steps",
        "--games",
        "120",
        "--chunk-games",
        "10",
        "--seed",
        "9",
        "--threads",
        "2",
        "--dataset",
        "arimaa-6x8x8",
        "--quiet",
        "--out",
    ]);
    a.push(out.display().to_string());
    a
}

fn is_output(name: &str) -> bool {
    name.ends_with(".jsonl") || name.ends_with(".arrow")
}

#[test]
fn selfplay_dataset_build_and_train_survive_kills() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();

    // Self-play: killed, rerun, the same games and shards.
    let reference = root.join("sp-ref");
    run(&selfplay_args(&reference));
    let want = files(&reference, &is_output);
    assert!(want
        .iter()
        .any(|(p, _)| p.to_string_lossy().ends_with(".arrow")));
    let out = root.join("sp");
    for ms in delays(1, 3, 400) {
        kill_after(&selfplay_args(&out), ms);
    }
    run(&selfplay_args(&out));
    assert_eq!(files(&out, &is_output), want, "self-play after kills");

    // Dataset build --force over an existing dataset: whole at every kill,
    // the same shards at the end.
    let games = reference.join("games").display().to_string();
    let build = |out: &Path, shard_rows: &str| {
        let mut a = strings(&[
            "dataset",
            "build",
            "--quiet",
            "--force",
            "--threads",
            "1",
            "--shard-rows",
        ]);
        a.extend([
            shard_rows.to_string(),
            "--records".into(),
            games.clone(),
            "--out".into(),
        ]);
        a.push(out.display().to_string());
        a
    };
    let ds_ref = root.join("ds-ref");
    run(&build(&ds_ref, "300"));
    let shards = |d: &Path| files(d, &|n: &str| n.ends_with(".arrow"));
    let ds = root.join("ds");
    run(&build(&ds, "1000"));
    for ms in delays(2, 4, 300) {
        kill_after(&build(&ds, "300"), ms);
        let opened = Dataset::open(&ds).expect("a whole dataset after a kill");
        opened.verify().expect("a whole dataset after a kill");
    }
    run(&build(&ds, "300"));
    assert_eq!(shards(&ds), shards(&ds_ref), "dataset after kills");
    let beside: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ds."))
        .collect();
    assert!(beside.is_empty(), "left beside the dataset: {beside:?}");

    // Training killed and resumed: the weights of an uninterrupted run.
    let train = |out: &Path| {
        let mut a = strings(&[
            "train",
            "--model",
            "linear",
            "--epochs",
            "2",
            "--batch",
            "16",
            "--save-every",
            "5",
            "--seed",
            "4",
            "--quiet",
            "--resume",
            "--data",
        ]);
        a.push(ds_ref.display().to_string());
        a.push("--out".into());
        a.push(out.display().to_string());
        a
    };
    let run_ref = root.join("run-ref");
    run(&train(&run_ref));
    let run_dir = root.join("run");
    for ms in delays(3, 3, 600) {
        kill_after(&train(&run_dir), ms);
    }
    run(&train(&run_dir));
    assert_eq!(
        std::fs::read(run_dir.join("model.safetensors")).unwrap(),
        std::fs::read(run_ref.join("model.safetensors")).unwrap(),
        "weights after kills"
    );

    // Overwriting the finished run with other arguments: the old run whole
    // at every kill (until the new one swaps in), then --resume --overwrite
    // finishes the new run with the weights of an uninterrupted one.
    let overwrite = |out: &Path| {
        let mut a = train(out);
        a.extend(strings(&["--overwrite", "--lr", "0.3"]));
        a
    };
    let new_ref = root.join("new-ref");
    let took = timed_run(&overwrite(&new_ref));
    let model = |d: &Path| std::fs::read(d.join("model.safetensors")).unwrap();
    let (old_weights, new_weights) = (model(&run_ref), model(&new_ref));
    assert_ne!(old_weights, new_weights);
    for ms in delays(5, 4, took) {
        kill_after(&overwrite(&run_dir), ms);
        plies::checkpoint::load(&run_dir, None, None).expect("a whole run after a kill");
        let now = model(&run_dir);
        assert!(
            now == old_weights || now == new_weights,
            "neither the old run nor the finished new one after a kill at {ms} ms"
        );
    }
    run(&overwrite(&run_dir));
    assert_eq!(
        model(&run_dir),
        new_weights,
        "weights after killed overwrites"
    );
    let beside: Vec<String> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".run."))
        .collect();
    assert!(beside.is_empty(), "left beside the run: {beside:?}");
}

/// Runs `args` to the end and says how long it took, in milliseconds.
fn timed_run(args: &[String]) -> u64 {
    let t = std::time::Instant::now();
    run(args);
    (t.elapsed().as_millis() as u64).max(5)
}

/// The files under `dir` that a writer left half-done: none, whatever
/// instant it was killed at, once a rerun has finished.
fn temporaries(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    files(dir, &|name| {
        name.contains(".plies-tmp-") || name.contains(".plies-staging")
    })
}

#[test]
fn import_and_arena_survive_kills() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/arimaa");

    // Import: games.jsonl is whole or absent at every kill, and a rerun
    // writes exactly the uninterrupted run's records.
    let import = |out: &Path| {
        let mut a = strings(&["import", "--game", "arimaa", "--force", "--quiet"]);
        for f in ["allgames2002.txt", "fake_archive.txt"] {
            a.push(data.join(f).display().to_string());
        }
        a.push("--out".into());
        a.push(out.display().to_string());
        a
    };
    let reference = root.join("import-ref");
    let took = timed_run(&import(&reference));
    let want = std::fs::read(reference.join("games.jsonl")).unwrap();
    let out = root.join("import");
    for ms in delays(2, 4, took) {
        kill_after(&import(&out), ms);
        if let Ok(got) = std::fs::read(out.join("games.jsonl")) {
            assert_eq!(
                got, want,
                "games.jsonl half-written after a kill at {ms} ms"
            );
        }
    }
    run(&import(&out));
    assert_eq!(std::fs::read(out.join("games.jsonl")).unwrap(), want);
    assert!(temporaries(root).is_empty(), "{:?}", temporaries(root));

    // Arena: killed, rerun, the same cross table and ratings.
    let arena = |out: &Path| {
        let mut a = strings(&[
            "arena",
            "--game",
            "gomoku",
            "--size",
            "9",
            "--players",
            "random",
            "naive",
            "mcts:sims=30,threads=1",
            "--games-per-pair",
            "120",
            "--seed",
            "3",
            "--threads",
            "2",
            "--quiet",
            "--out",
        ]);
        a.push(out.display().to_string());
        a
    };
    let tables = |name: &str| name.ends_with(".csv");
    let reference = root.join("arena-ref");
    let took = timed_run(&arena(&reference));
    let want = files(&reference, &tables);
    assert_eq!(want.len(), 2, "{want:?}");
    let out = root.join("arena");
    for ms in delays(3, 3, took) {
        kill_after(&arena(&out), ms);
    }
    run(&arena(&out));
    assert_eq!(files(&out, &tables), want, "arena after kills");
    assert!(temporaries(root).is_empty(), "{:?}", temporaries(root));
}

/// `state.json` without the wall seconds (the one thing a resumed run does
/// not repeat).
fn replayable_state(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("state.json")).unwrap();
    let mut state: serde_json::Value = serde_json::from_str(&text).unwrap();
    for record in state["history"].as_array_mut().unwrap() {
        record["seconds"] = serde_json::Value::from(0.0);
    }
    state
}

#[test]
fn evolve_and_coevolve_survive_kills() {
    let tmp = tempfile::tempdir().unwrap();
    let evolve = |out: &Path| {
        let mut a = strings(&[
            "evolve",
            "--game",
            "atari-go",
            "--size",
            "5",
            "--hidden",
            "3",
            "--strategy",
            "snes",
            "--generations",
            "25",
            "--games",
            "6",
            "--quiet",
            "--out",
        ]);
        a.push(out.display().to_string());
        a
    };
    let coevolve = |out: &Path| {
        let mut a = strings(&[
            "coevolve",
            "--game",
            "gomoku",
            "--size",
            "5",
            "--hidden",
            "3",
            "--population",
            "4",
            "--mu",
            "2",
            "--sample",
            "2",
            "--hall",
            "1",
            "--monitor-games",
            "4",
            "--generations",
            "12",
            "--quiet",
            "--out",
        ]);
        a.push(out.display().to_string());
        a
    };
    for (seed, name) in ["evolve", "coevolve"].into_iter().enumerate() {
        let args = |out: &Path| {
            if name == "evolve" {
                evolve(out)
            } else {
                coevolve(out)
            }
        };
        let whole = tmp.path().join(format!("{name}-whole"));
        let killed = tmp.path().join(format!("{name}-killed"));
        let ms = timed_run(&args(&whole));
        for delay in delays(seed as u64 + 40, 3, ms.max(10)) {
            kill_after(&args(&killed), delay);
        }
        run(&args(&killed));
        assert_eq!(
            replayable_state(&killed),
            replayable_state(&whole),
            "{name}"
        );
        for checkpoint in ["best", "final"] {
            let weights =
                |dir: &Path| std::fs::read(dir.join(checkpoint).join("model.safetensors")).unwrap();
            assert_eq!(weights(&killed), weights(&whole), "{name} {checkpoint}");
        }
    }
}
