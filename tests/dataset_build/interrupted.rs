//! Crash safety: an overwrite killed mid-write keeps the old dataset and
//! is reported, a half-written dataset is named, a corrupt shard fails
//! verification.

use crate::common::{plies, text};
use crate::records::{random_ttt, write_jsonl};
use crate::report::{build, shard_hashes};
use plies::dataset::{staging_dir, Dataset, STAGING_DIR};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn staged_shards(dir: &Path) -> usize {
    std::fs::read_dir(staging_dir(dir))
        .map(|e| e.flatten().count())
        .unwrap_or(0)
}

#[test]
fn an_interrupted_overwrite_keeps_the_old_dataset_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.jsonl");
    write_jsonl(&small, &random_ttt(50, 4));
    let big = dir.path().join("big.jsonl");
    write_jsonl(&big, &random_ttt(60_000, 5));
    let out = dir.path().join("ds");
    let r = build(&[
        "--records",
        small.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let old_rows = r["positions"].as_u64().unwrap();
    let old_hashes = shard_hashes(&out);

    // (b) A bigger build into the same directory, killed mid-write.
    let mut child = Command::new(env!("CARGO_BIN_EXE_plies"))
        .args([
            "dataset",
            "build",
            "--quiet",
            "--force",
            "--threads",
            "1",
            "--shard-rows",
            "500",
            "--records",
            big.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while staged_shards(&out) < 2 {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the build ended before it could be interrupted"
        );
        assert!(start.elapsed() < Duration::from_secs(60), "no shard staged");
        std::thread::sleep(Duration::from_millis(2));
    }
    // One writer per directory: a second build is refused, naming the first.
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--force",
        "--records",
        small.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains(&format!("pid {}", child.id())) && all.contains("dataset build"),
        "{all}"
    );
    child.kill().unwrap();
    child.wait().unwrap();

    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.num_rows(None), old_rows);
    assert_eq!(shard_hashes(&out), old_hashes);
    let report = ds.verify().unwrap();
    assert!(!report.interrupted_write.is_empty());
    let o = plies(&["dataset", "verify", out.to_str().unwrap()]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("interrupted write") && all.contains(STAGING_DIR),
        "{all}"
    );
    let o = plies(&["dataset", "stats", out.to_str().unwrap()]);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(
        all.contains("interrupted write") && all.contains(STAGING_DIR),
        "{all}"
    );

    // Shards without a manifest: a half-written dataset, named as such.
    let half = dir.path().join("half");
    std::fs::create_dir(&half).unwrap();
    for shard in &ds.manifest().shards {
        std::fs::copy(out.join(&shard.file), half.join(&shard.file)).unwrap();
    }
    for cmd in ["verify", "stats"] {
        let o = plies(&["dataset", cmd, half.to_str().unwrap()]);
        let all = text(&o);
        assert!(!o.status.success(), "{all}");
        assert!(all.contains("interrupted/half-written dataset"), "{all}");
        assert!(all.contains("part-00000.arrow"), "{all}");
    }

    // A new --force build cleans up and replaces the dataset.
    let r = build(&[
        "--records",
        small.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(r["positions"].as_u64().unwrap(), old_rows);
    assert!(!staging_dir(&out).exists());
    assert!(Dataset::open(&out)
        .unwrap()
        .verify()
        .unwrap()
        .interrupted_write
        .is_empty());

    // (c) A corrupt shard: verify fails naming it.
    let shard: PathBuf = out.join("part-00000.arrow");
    let mut bytes = std::fs::read(&shard).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x5a;
    std::fs::write(&shard, bytes).unwrap();
    let o = plies(&["dataset", "verify", out.to_str().unwrap()]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains("part-00000.arrow") && all.contains("corrupt"),
        "{all}"
    );
}
