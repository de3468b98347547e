//! Bad records reported with their file and line (`--strict` stops), and
//! duplicate ids across files naming both.

use crate::common::{plies, text};
use crate::records::{random_ttt, ttt, write_jsonl};
use crate::report::dropped;
use plies::dataset::{staging_dir, Dataset};
use plies::game::Side;
use std::path::Path;

#[test]
fn bad_records_are_reported_with_file_and_line_and_strict_stops() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    let good = ttt("good", &["a1", "b1"], None, "draw", (None, None));
    let illegal = ttt(
        "twice",
        &["a1", "a1"],
        Some(Side::First),
        "line",
        (None, None),
    );
    let text_in = format!(
        "{}\n{{not json\n\n{}\n",
        good.to_json_line(),
        illegal.to_json_line()
    );
    std::fs::write(&recs, text_in).unwrap();
    let out = dir.path().join("ds");
    let args = [
        "dataset",
        "build",
        "--quiet",
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let o = plies(&args);
    let all = text(&o);
    assert!(o.status.success(), "{all}");
    assert!(all.contains("games.jsonl:2:"), "{all}");
    assert!(
        all.contains("games.jsonl:4: game twice: ply 1: move 'a1' refused"),
        "{all}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("build-report.json")).unwrap()).unwrap();
    assert_eq!(dropped(&report, "bad_record"), (2, 3));
    assert_eq!(report["games_kept"], 1);
    assert_eq!(report["bad_records"].as_array().unwrap().len(), 2);

    let mut strict = args.to_vec();
    strict.extend(["--strict", "--force"]);
    let o = plies(&strict);
    assert!(!o.status.success());
    assert!(text(&o).contains("games.jsonl:2:"), "{}", text(&o));
    // A first line that is not a record: the game is taken from the next one.
    let first_bad = dir.path().join("first-bad.jsonl");
    std::fs::write(&first_bad, format!("oops\n{}\n", good.to_json_line())).unwrap();
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--records",
        first_bad.to_str().unwrap(),
        "--out",
        dir.path().join("ds-first-bad").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("first-bad.jsonl:1:"), "{}", text(&o));

    // The failed overwrite left the old dataset as it was, and no staging folder.
    assert_eq!(Dataset::open(&out).unwrap().num_rows(None), 3);
    assert!(!staging_dir(&out).exists());
}

#[test]
fn duplicate_ids_across_files_name_both() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    let g = ttt("same", &["a1"], None, "draw", (None, None));
    write_jsonl(
        &a,
        &[ttt("other", &["b2"], None, "draw", (None, None)), g.clone()],
    );
    write_jsonl(&b, &[g]);
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--records",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--out",
        dir.path().join("ds").to_str().unwrap(),
    ]);
    let all = text(&o);
    assert!(!o.status.success(), "{all}");
    assert!(
        all.contains("`same`") && all.contains("a.jsonl:2") && all.contains("b.jsonl:1"),
        "{all}"
    );

    // Found after shards were written: they are removed, so the directory
    // takes a new build without --force.
    let many = dir.path().join("many.jsonl");
    let games = random_ttt(1500, 6);
    write_jsonl(&many, &games);
    write_jsonl(&b, &games[..1]);
    let out = dir.path().join("ds2");
    let args = |files: &[&Path]| {
        let mut v = vec![
            "dataset",
            "build",
            "--quiet",
            "--shard-rows",
            "100",
            "--records",
        ];
        v.extend(files.iter().map(|f| f.to_str().unwrap()));
        v.extend(["--out", out.to_str().unwrap()]);
        v.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let a1: Vec<String> = args(&[&many, &b]);
    let o = plies(&a1.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("many.jsonl:1"), "{}", text(&o));
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
    let a2: Vec<String> = args(&[&many]);
    let o = plies(&a2.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", text(&o));
}
