//! Self-play spread over processes as docs/scale-out.md spreads it over
//! machines: `scripts/scale_out_shard.sh I N OUT` for each shard (the
//! command the Slurm array and the Kubernetes Indexed Job run), then
//! `scripts/scale_out_merge.sh N OUT`. The shards' records are byte for
//! byte those of one unsharded run; the merged dataset holds the same rows
//! as that run's dataset, verifies, and trains.

mod common;

use common::text;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SHARDS: usize = 3;
/// Small and fast: 6 chunks of 8 games, two per shard.
const GAMES: &str = "48";
const CHUNK_GAMES: &str = "8";
const SEED: &str = "21";
const PLAYER: &str = "random-steps";

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

/// Runs a scale-out script with the test's small budget.
fn run_script(name: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new("bash");
    cmd.arg(script(name))
        .args(args)
        .env("PLIES", env!("CARGO_BIN_EXE_plies"))
        .env("GAMES", GAMES)
        .env("CHUNK_GAMES", CHUNK_GAMES)
        .env("SEED", SEED)
        .env("WHITE", PLAYER)
        .env("BLACK", PLAYER)
        .env("THREADS", "1");
    cmd
}

/// The files under `dir/games`, by name.
fn chunk_files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join("games"))
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The rows of a dataset as `plies data dump` prints them, sorted.
fn rows(dir: &Path) -> Vec<String> {
    let o = common::plies(&["data", "dump", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let mut lines: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

#[test]
fn shards_in_separate_processes_make_one_runs_records_and_a_dataset_that_trains() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");

    // The shards at once, each its own process.
    let children: Vec<_> = (0..SHARDS)
        .map(|i| {
            run_script(
                "scale_out_shard.sh",
                &[&i.to_string(), &SHARDS.to_string(), out.to_str().unwrap()],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "shard {i}: {}", text(&o));
    }

    // One process, all the games: the same chunk files, byte for byte.
    let single = tmp.path().join("single");
    let o = common::plies(&[
        "selfplay",
        "--game",
        "arimaa",
        "--white",
        PLAYER,
        "--black",
        PLAYER,
        "--epsilon",
        "0.1",
        "--games",
        GAMES,
        "--seed",
        SEED,
        "--chunk-games",
        CHUNK_GAMES,
        "--dataset",
        "arimaa-6x8x8",
        "--last-plies",
        "160",
        "--out",
        single.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let mut sharded: Vec<(String, Vec<u8>)> = (0..SHARDS)
        .flat_map(|i| chunk_files(&out.join(format!("shard-{i}"))))
        .collect();
    sharded.sort();
    let whole = chunk_files(&single);
    assert_eq!(whole.len(), 6);
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&sharded), names(&whole));
    for ((name, a), (_, b)) in sharded.iter().zip(&whole) {
        assert!(
            a == b,
            "{name} differs between the shards and the single run"
        );
    }
    // Each shard holds its own chunks: c mod 3.
    let first = names(&chunk_files(&out.join("shard-1")));
    assert_eq!(first, vec!["part-00001.jsonl", "part-00004.jsonl"]);

    // Merged (and verified by the script): the rows of the single run's
    // dataset, the shard files hard links of the shards' own.
    let o = run_script(
        "scale_out_merge.sh",
        &[&SHARDS.to_string(), out.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let merged = out.join("dataset");
    assert_eq!(rows(&merged), rows(&single.join("dataset")));
    let ino = |p: PathBuf| std::fs::metadata(p).unwrap().ino();
    assert_eq!(
        ino(merged.join("part-00000.arrow")),
        ino(out.join("shard-0/dataset/part-00000.arrow"))
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(merged.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["provenance"]["merged_from"]
            .as_array()
            .unwrap()
            .len(),
        SHARDS
    );

    // And it trains: the main job's linear evaluator, one epoch.
    let ck = tmp.path().join("linear");
    let model =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/arimaa/models/linear-material.json");
    let o = common::plies(&[
        "train",
        "--data",
        merged.to_str().unwrap(),
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
        ck.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let trained = plies::checkpoint::load(&ck.join("best"), Some("arimaa"), None).unwrap();
    let sha = Command::new("sha256sum")
        .arg(merged.join("manifest.json"))
        .output()
        .unwrap();
    let sha = String::from_utf8_lossy(&sha.stdout);
    assert_eq!(
        trained.config.training.dataset_manifest_sha256.as_deref(),
        sha.split_whitespace().next()
    );
}

#[test]
fn a_shard_without_games_and_mismatched_datasets_are_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let o = common::plies(&[
        "selfplay",
        "--game",
        "tictactoe",
        "--white",
        "random",
        "--black",
        "random",
        "--games",
        "10",
        "--chunk-games",
        "5",
        "--shard",
        "2/3",
        "--out",
        tmp.path().join("sp").to_str().unwrap(),
    ]);
    let e = text(&o);
    assert!(
        !o.status.success() && e.contains("--shard 2/3 has no games"),
        "{e}"
    );
    let o = common::plies(&[
        "selfplay",
        "--game",
        "tictactoe",
        "--white",
        "random",
        "--black",
        "random",
        "--games",
        "10",
        "--shard",
        "3/3",
        "--out",
        "x",
    ]);
    assert!(
        !o.status.success() && text(&o).contains("'3/3'"),
        "{}",
        text(&o)
    );

    let gen = |name: &str, encoder: &str| {
        let dir = tmp.path().join(name);
        let o = common::plies(&[
            "data",
            "generate",
            "--game",
            "tictactoe",
            "--a",
            "random",
            "--b",
            "random",
            "--games",
            "20",
            "--encoder",
            encoder,
            "--out",
            dir.to_str().unwrap(),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", text(&o));
        dir
    };
    let (a, b) = (gen("a", "tictactoe-9"), gen("b", "tictactoe-2x3x3"));
    let out = tmp.path().join("merged");
    let o = common::plies(&[
        "dataset",
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let e = text(&o);
    assert!(
        !o.status.success() && e.contains("field `encoder`") && e.contains("tictactoe-2x3x3"),
        "{e}"
    );
    assert!(!out.exists(), "a refused merge left {}", out.display());
}
