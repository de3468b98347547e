//! What a build writes: the same shards whatever the thread count, and
//! folds in range, stable and verified.

use crate::common::{plies, text};
use crate::records::{random_ttt, write_jsonl};
use crate::report::{build, shard_hashes};
use plies::dataset::{fold_of, Dataset};
use std::fs::File;

#[test]
fn output_is_the_same_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &random_ttt(3000, 1));
    let mut hashes = Vec::new();
    for threads in ["1", "2", "3"] {
        let out = dir.path().join(format!("ds{threads}"));
        build(&[
            "--records",
            recs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--threads",
            threads,
            "--shard-rows",
            "2000",
        ]);
        hashes.push(shard_hashes(&out));
    }
    assert!(hashes[0].len() > 3, "{hashes:?}");
    assert_eq!(hashes[0], hashes[1]);
    assert_eq!(hashes[0], hashes[2]);
}

#[test]
fn folds_are_in_range_stable_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &random_ttt(400, 2));
    let out = dir.path().join("ds");
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--folds",
        "3",
    ]);
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.manifest().folds.k, 3);
    let mut per_fold = [0u64; 3];
    for shard in &ds.manifest().shards {
        let file = File::open(out.join(&shard.file)).unwrap();
        for batch in arrow_ipc::reader::FileReader::try_new(file, None).unwrap() {
            let batch = batch.unwrap();
            let ids = batch
                .column_by_name("game_id")
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap();
            let folds = batch
                .column_by_name("fold")
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::UInt8Array>()
                .unwrap();
            for i in 0..batch.num_rows() {
                let f = folds.value(i);
                assert!(f < 3);
                assert_eq!(f, fold_of(ids.value(i), 3));
                per_fold[f as usize] += 1;
            }
        }
    }
    assert!(per_fold.iter().all(|&n| n > 0), "{per_fold:?}");
    assert_eq!(
        per_fold.iter().sum::<u64>(),
        r["positions"].as_u64().unwrap()
    );

    let o = plies(&["dataset", "verify", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows_per_fold"], serde_json::json!(per_fold));
    let o = plies(&["dataset", "stats", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["rows_per_fold"], serde_json::json!(per_fold));
    let heights: u64 = s["heights"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["rows"].as_u64().unwrap())
        .sum();
    assert_eq!(heights, r["positions"].as_u64().unwrap());
    assert_eq!(s["heights"][0]["from"], 0);
    assert_eq!(s["heights"][0]["to"], 9);
    let table = text(&plies(&["dataset", "stats", out.to_str().unwrap()]));
    assert!(
        table.contains("plies to end") && table.contains("0-9"),
        "{table}"
    );
    // The old command shares the code.
    let o = plies(&["data", "verify", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}
