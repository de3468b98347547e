//! The filters with exact counts, the labels and heights they leave, and a
//! records file behind a byte-order mark.

use crate::common::{plies, text};
use crate::records::{filter_games, write_jsonl};
use crate::report::{build, dropped};
use plies::dataset::Dataset;
use plies::game::{Game, Outcome, Side, TicTacToe};
use std::collections::HashMap;
use std::path::Path;

#[test]
fn filters_drop_exactly_what_they_should() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &filter_games());
    let out = dir.path().join("ds");
    let out_s = out.to_str().unwrap();
    let recs_s = recs.to_str().unwrap();

    // Defaults: resignation and unfinished are dropped, ratings ignored.
    let r = build(&["--records", recs_s, "--out", out_s]);
    assert_eq!(r["games_read"], 7);
    assert_eq!(r["positions_read"], 6 + 7 + 3 + 6 + 2 + 6 + 7);
    assert_eq!(dropped(&r, "termination"), (2, 6 + 2));
    assert_eq!(dropped(&r, "min_rating"), (0, 0));
    assert_eq!(r["games_kept"], 5);
    assert_eq!(r["positions"], 6 + 7 + 3 + 6 + 7);
    assert!(out.join("build-report.json").exists());

    // --min-rating 1500 --last-plies 4.
    let r = build(&[
        "--records",
        recs_s,
        "--out",
        out_s,
        "--force",
        "--min-rating",
        "1500",
        "--last-plies",
        "4",
    ]);
    assert_eq!(dropped(&r, "termination"), (2, 8));
    assert_eq!(dropped(&r, "min_rating"), (2, 6 + 7));
    assert_eq!(r["games_kept"], 3);
    // win1 keeps 4 of 6, win2 4 of 7, draw all 3.
    assert_eq!(r["positions"], 4 + 4 + 3);
    assert_eq!(dropped(&r, "last_plies"), (2, 2 + 3));
    let ds = Dataset::open(&out).unwrap();
    assert_eq!(ds.num_rows(None), 11);
    assert!(ds
        .rows(None)
        .unwrap()
        .iter()
        .all(|row| row.plies_to_end < 4));

    // --terminations all: the unfinished game is dropped for having no result.
    let r = build(&[
        "--records",
        recs_s,
        "--out",
        out_s,
        "--force",
        "--terminations",
        "all",
    ]);
    assert_eq!(dropped(&r, "termination"), (0, 0));
    assert_eq!(dropped(&r, "no_result"), (1, 2));
    assert_eq!(r["games_kept"], 6);

    // An explicit list.
    let r = build(&[
        "--records",
        recs_s,
        "--out",
        out_s,
        "--force",
        "--terminations",
        "resignation",
    ]);
    assert_eq!(r["games_kept"], 1);
    assert_eq!(r["positions"], 6);

    // Without --force an existing dataset is kept.
    let o = plies(&[
        "dataset",
        "build",
        "--quiet",
        "--records",
        recs_s,
        "--out",
        out_s,
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("--force"), "{}", text(&o));
}

#[test]
fn labels_and_heights_follow_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let recs = dir.path().join("games.jsonl");
    write_jsonl(&recs, &filter_games());
    let out = dir.path().join("ds");
    build(&[
        "--records",
        recs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let games = Dataset::open(&out).unwrap().games(None).unwrap();
    let by_id: HashMap<&str, &Vec<_>> = games.iter().map(|g| (g[0].game_id.as_str(), g)).collect();
    let winner = |id: &str, side: u8| {
        let rows = by_id[id];
        let n = rows.len() as u32 - 1;
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.ply, i as u32);
            assert_eq!(r.plies_to_end, n - i as u32, "{id}");
            assert_eq!(r.side_to_move, (i % 2) as u8);
            let want = if r.side_to_move == side { 1.0 } else { 0.0 };
            assert_eq!(r.label, want, "{id} ply {i}");
            assert_eq!(r.move_played.is_none(), i as u32 == n);
            assert_eq!(r.termination.as_deref(), Some("line"));
            assert_eq!((r.white_rating, r.black_rating), (Some(1600), Some(1700)));
        }
    };
    winner("win1", 0);
    winner("win2", 1);
    assert!(by_id["draw"].iter().all(|r| r.label == 0.5));
    assert_eq!(
        TicTacToe::from_text(&by_id["win1"][5].position)
            .unwrap()
            .outcome(),
        Some(Outcome::Win(Side::First))
    );
}

/// A records file behind a UTF-8 byte-order mark builds the same dataset.
#[test]
fn a_byte_order_mark_loses_no_record() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, bom) = (dir.path().join("plain.jsonl"), dir.path().join("bom.jsonl"));
    write_jsonl(&plain, &filter_games());
    let text = std::fs::read(&plain).unwrap();
    std::fs::write(&bom, [b"\xEF\xBB\xBF".as_slice(), &text].concat()).unwrap();
    let report = |records: &Path, out: &str| {
        let out = dir.path().join(out);
        build(&[
            "--records",
            records.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    let (a, b) = (report(&plain, "a"), report(&bom, "b"));
    assert_eq!(a["games_read"], 7);
    for k in ["games_read", "games_kept", "positions_read", "positions"] {
        assert_eq!(a[k], b[k], "{k}");
    }
}
