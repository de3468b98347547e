//! The arimaa.com archive imported, then built with the defaults and with
//! the study's filters.

use crate::common::{plies, text};
use crate::report::{build, dropped};
use plies::dataset::Dataset;
use plies::record::GameRecord;
use std::path::Path;

#[test]
fn arimaa_archive_games_with_the_study_filters() {
    let dir = tempfile::tempdir().unwrap();
    let archive = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/arimaa/allgames2002.txt");
    let imported = dir.path().join("imported");
    let o = plies(&[
        "import",
        "--game",
        "arimaa",
        archive.to_str().unwrap(),
        "--out",
        imported.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let recs = imported.join("games.jsonl");
    let records = plies::record::read_records(&recs).unwrap();
    let meaningful = |r: &GameRecord| {
        ["goal", "elimination", "immobilization"].contains(&r.termination.as_str())
    };
    let rated = |r: &GameRecord| {
        r.ratings.first.is_some_and(|x| x >= 1500) && r.ratings.second.is_some_and(|x| x >= 1500)
    };
    let out = dir.path().join("ds");
    // The game is inferred from the records; defaults: the meaningful endings.
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let kept: Vec<&GameRecord> = records.iter().filter(|r| meaningful(r)).collect();
    assert!(!kept.is_empty() && kept.len() < records.len());
    assert_eq!(r["games_read"], records.len() as u64);
    assert_eq!(r["games_kept"], kept.len() as u64);
    let positions: u64 = kept.iter().map(|r| r.plies as u64 + 1).sum();
    assert_eq!(r["positions"], positions);
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.manifest().game, "arimaa");
    assert_eq!(ds.manifest().encoder.shape, [6, 8, 8]);
    ds.verify().unwrap();
    for row in ds.rows(None).unwrap() {
        let t = row.termination.as_deref().unwrap();
        assert!(
            ["goal", "elimination", "immobilization"].contains(&t),
            "{t}"
        );
    }

    // The study's settings: last 10 positions, both players rated 1500+.
    let r = build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--force",
        "--game",
        "arimaa",
        "--last-plies",
        "10",
        "--min-rating",
        "1500",
    ]);
    let kept: Vec<&GameRecord> = records
        .iter()
        .filter(|r| meaningful(r) && rated(r))
        .collect();
    assert_eq!(r["games_kept"], kept.len() as u64);
    let positions: u64 = kept.iter().map(|r| (r.plies as u64 + 1).min(10)).sum();
    assert_eq!(r["positions"], positions);
    assert_eq!(
        dropped(&r, "min_rating").0,
        records
            .iter()
            .filter(|r| meaningful(r) && !rated(r))
            .count() as u64
    );

    // --game must agree with the records.
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--game",
        "gomoku",
        "--records",
        recs.to_str().unwrap(),
        "--out",
        dir.path().join("other").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("arimaa game"), "{}", text(&o));
}
