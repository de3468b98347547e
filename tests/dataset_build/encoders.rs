//! Every encoder family (Amazons, stones) through the same command.

use crate::records::{random_record, random_ttt, write_jsonl};
use crate::report::build;
use plies::dataset::Dataset;
use plies::game::{Amazons, AtariGo, Game, Gomoku, Pentago};
use plies::record::GameRecord;
use std::path::Path;

fn check_family(dir: &Path, name: &str, records: &[GameRecord], encoder: &str, shape: [usize; 3]) {
    let recs = dir.join(format!("{name}.jsonl"));
    write_jsonl(&recs, records);
    let out = dir.join(format!("{name}-{encoder}"));
    // The game is inferred from the records.
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--encoder",
        encoder,
        "--terminations",
        "all",
    ]);
    assert!(r["positions"].as_u64().unwrap() > 0, "{name}: {r}");
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.manifest().encoder.name, encoder);
    assert_eq!(ds.manifest().encoder.shape, shape, "{name} {encoder}");
    ds.verify().unwrap();
    let rows = ds.rows(None).unwrap();
    assert!(rows
        .iter()
        .all(|r| r.planes.len() == shape.iter().product::<usize>()));
}

#[test]
fn amazons_and_stone_encoders_go_through_the_same_command() {
    let dir = tempfile::tempdir().unwrap();
    let amazons: Vec<_> = (0..6)
        .map(|i| random_record::<Amazons>(&format!("am{i}"), 6, i, 400))
        .collect();
    for enc in ["amazons-units", "amazons-mobility", "amazons-bits"] {
        let planes = if enc == "amazons-bits" { 4 } else { 2 };
        check_family(dir.path(), "amazons", &amazons, enc, [planes, 6, 6]);
    }
    let gomoku: Vec<_> = (0..6)
        .map(|i| random_record::<Gomoku>(&format!("go{i}"), 9, i, 400))
        .collect();
    check_family(dir.path(), "gomoku", &gomoku, "stones-2", [2, 9, 9]);
    let atari: Vec<_> = (0..6)
        .map(|i| random_record::<AtariGo>(&format!("ag{i}"), 7, i, 400))
        .collect();
    check_family(dir.path(), "atari", &atari, "stones-2", [2, 7, 7]);
    let pentago: Vec<_> = (0..6)
        .map(|i| random_record::<Pentago>(&format!("pe{i}"), Pentago::DEFAULT_SIZE, i, 400))
        .collect();
    check_family(
        dir.path(),
        "pentago",
        &pentago,
        "stones-2",
        [2, Pentago::DEFAULT_SIZE, Pentago::DEFAULT_SIZE],
    );
    let ttt = random_ttt(20, 3);
    check_family(dir.path(), "ttt", &ttt, "stones-2", [2, 3, 3]);
}
