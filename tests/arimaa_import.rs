//! `plies import` of arimaa.com archive files: every game of the shipped
//! files replays through the rules engine (exact counts, every skipped game
//! named), the engine's result agrees with every game decided on the board,
//! malformed input is reported with the line, game and token, the command
//! line writes its files atomically and refuses to overwrite them, and
//! records read back equal those written.

use plies::game::arimaa::{Arimaa, Setup, Termination};
use plies::game::{Game, Outcome, Side};
use plies::record::arimaa_archive::{
    import_file, import_str, reason, replay_record, termination_from_name, FileSummary,
    ImportOptions,
};
use plies::record::{read_records, write_records, GameRecord};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod common;
use common::{plies, text};

const ALL2002: &str = "data/arimaa/allgames2002.txt";
const FAKE: &str = "data/arimaa/fake_archive.txt";
const EVAL: &str = "data/arimaa/eval/eval-2026-02.txt";

fn path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn import(rel: &str) -> (Vec<GameRecord>, FileSummary) {
    import_file(path(rel), &ImportOptions::default()).unwrap()
}

fn counts(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

/// Replays a record with the engine from its setups, independently of
/// `replay_record`, and returns the game after the last move.
fn replay_by_hand(rec: &GameRecord) -> Arimaa {
    let gold = Setup::parse(Side::First, &rec.setups[0]).unwrap();
    let silver = Setup::parse(Side::Second, &rec.setups[1]).unwrap();
    let mut g = Arimaa::from_setups(&gold, &silver).unwrap();
    for (k, m) in rec.moves.iter().enumerate() {
        assert!(
            g.result().is_none(),
            "game {}: over before move {k}",
            rec.id
        );
        let mv = g
            .parse_move(m)
            .unwrap_or_else(|e| panic!("game {} move {k} '{m}': {e}", rec.id));
        g.play(mv);
    }
    g
}

/// Every record replays; games decided on the board end exactly as recorded,
/// the others are not over on the board.
fn check_records(recs: &[GameRecord]) {
    for rec in recs {
        assert_eq!(rec.game, "arimaa");
        assert_eq!(rec.plies as usize, rec.moves.len(), "game {}", rec.id);
        assert_eq!(rec.setups.len(), 2, "game {}", rec.id);
        let g = replay_by_hand(rec);
        let term = termination_from_name(&rec.termination).unwrap();
        assert!(
            rec.result.is_some(),
            "game {}: every archive game has a winner",
            rec.id
        );
        if matches!(
            term,
            Termination::Goal | Termination::Elimination | Termination::Immobilization
        ) {
            let winner = rec.result.unwrap();
            assert_eq!(
                g.result(),
                Some((Outcome::Win(winner), term)),
                "game {}: the engine disagrees with the record",
                rec.id
            );
        } else {
            assert_eq!(g.result(), None, "game {} ({})", rec.id, rec.termination);
        }
        let again = replay_record(rec).unwrap();
        assert_eq!(again.result().map(|(o, _)| o), rec.result.map(Outcome::Win));
    }
}

#[test]
fn allgames2002_replays_except_three_corrupt_records() {
    let (recs, sum) = import(ALL2002);
    assert_eq!(sum.file, "allgames2002.txt");
    assert_eq!((sum.games_read, sum.kept, recs.len()), (64, 61, 61));
    assert_eq!(
        sum.skipped,
        counts(&[(reason::ILLEGAL_MOVE, 2), (reason::CONTRADICTS_RULES, 1)])
    );
    assert_eq!(
        sum.kept_by_termination,
        counts(&[("goal", 33), ("resignation", 10), ("timeout", 18)])
    );
    // The three games the archive itself marks corrupt (corrupt = 1); pyrimaa
    // refuses the same moves.
    let reports: Vec<_> = sum
        .reports
        .iter()
        .map(|r| {
            (
                r.source.as_str(),
                r.game_id.as_str(),
                r.turn.as_deref(),
                r.token.as_deref(),
                r.reason.as_str(),
            )
        })
        .collect();
    assert_eq!(
        reports,
        [
            // The cat on g3 is frozen by the dog on h3: it cannot finish the push of rg4n.
            (
                "allgames2002.txt:18",
                "55",
                Some("22w"),
                Some("Cg3n"),
                reason::ILLEGAL_MOVE
            ),
            // After De4w the dog on d4 is frozen by the horse on c4: it cannot finish rd5n.
            (
                "allgames2002.txt:34",
                "32",
                Some("15w"),
                Some("Dd4n"),
                reason::ILLEGAL_MOVE
            ),
            // Silver's rabbit reached c1 at 21b (rd3w rc3s rc2s); the record goes on.
            (
                "allgames2002.txt:48",
                "46",
                Some("22w"),
                Some("Hb3s Hb2s rc1n Hb1e"),
                reason::CONTRADICTS_RULES
            ),
        ]
    );
    for r in &sum.reports {
        assert!(
            r.detail.contains("the archive marks this game corrupt"),
            "{r}"
        );
    }
    assert!(sum.reports[2].detail.contains("silver wins by goal"));
    check_records(&recs);
}

#[test]
fn takebacks_and_resignations_of_2002() {
    let (recs, _) = import(ALL2002);
    let by_id: BTreeMap<&str, &GameRecord> = recs.iter().map(|r| (r.id.as_str(), r)).collect();
    // Game 2: "2w Dc2n Dc3x Md2n Dg2n Hh2n \n 2b takeback \n 2w Md2n Ce2n Ha2n Hh2n".
    assert_eq!(by_id["2"].moves[0], "Md2n Ce2n Ha2n Hh2n");
    // Game 33: gold's first setup was taken back; the second one counts.
    assert_eq!(
        Setup::parse(Side::First, &by_id["33"].setups[0]).unwrap(),
        Setup::parse(
            Side::First,
            "Ee2 Md2 Ha2 Hh2 Db2 Dg2 Cf2 Cg1 Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rh1 Rc2"
        )
        .unwrap()
    );
    // Game 7: "30w resign": silver wins, the last move is 29b.
    let g7 = by_id["7"];
    assert_eq!(
        (g7.result, g7.termination.as_str()),
        (Some(Side::Second), "resignation")
    );
    assert_eq!(g7.plies, 56);
    assert_eq!(g7.moves.last().unwrap(), "hb6n Ra6e Rb6e Rc6x hb7s");
}

#[test]
fn fake_archive_replays_completely() {
    let (recs, sum) = import(FAKE);
    assert_eq!((sum.games_read, sum.kept), (12, 12));
    assert!(
        sum.skipped.is_empty() && sum.reports.is_empty(),
        "{:?}",
        sum.reports
    );
    assert_eq!(
        sum.kept_by_termination,
        counts(&[
            ("elimination", 4),
            ("goal", 4),
            ("resignation", 1),
            ("timeout", 3)
        ])
    );
    check_records(&recs);
}

#[test]
fn eval_file_replays_completely() {
    let (recs, sum) = import(EVAL);
    assert_eq!((sum.games_read, sum.kept), (147, 147));
    assert!(
        sum.skipped.is_empty() && sum.reports.is_empty(),
        "{:?}",
        sum.reports
    );
    assert_eq!(
        sum.kept_by_termination,
        counts(&[
            ("elimination", 5),
            ("goal", 88),
            ("illegal_move", 1),
            ("immobilization", 7),
            ("resignation", 16),
            ("timeout", 30)
        ])
    );
    let first = &recs[0];
    assert_eq!(first.id, "669122");
    assert_eq!(first.source, "eval-2026-02.txt:2");
    assert_eq!(first.players.first, "bot_dolores_v1");
    assert_eq!(first.ratings.first, Some(2616));
    assert_eq!(first.player_types.as_ref().unwrap().first, "b");
    assert_eq!(first.rated, Some(true));
    assert_eq!(first.start_time, Some(1_769_941_051));
    check_records(&recs);
}

#[test]
fn moves_are_the_archive_text_without_labels() {
    // Turn by turn, the stored move is the archive's text (capture tokens
    // included), for a game with no takeback.
    let text = std::fs::read_to_string(path(FAKE)).unwrap();
    let line = text.lines().nth(1).unwrap();
    let movelist = line.split('\t').nth(27).unwrap();
    let turns: Vec<&str> = movelist
        .split("\\n")
        .skip(2)
        .filter_map(|t| t.split_once(' ').map(|(_, m)| m.trim()))
        .collect();
    let (recs, _) = import(FAKE);
    assert_eq!(recs[0].moves, turns);
    assert!(recs[0]
        .moves
        .iter()
        .any(|m| m.ends_with('x') || m.contains("x ")));
}

#[test]
fn records_round_trip_through_jsonl() {
    let (mut recs, _) = import(ALL2002);
    recs.extend(import(FAKE).0);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.jsonl");
    assert_eq!(write_records(&file, &recs, false).unwrap(), recs.len());
    let back = read_records(&file).unwrap();
    assert_eq!(back, recs);
    check_records(&back);
}

const HEADER: &str = "id\twusername\tbusername\twrating\tbrating\tresult\ttermination\tmovelist";
const GOLD: &str = "Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rg1 Rh1 Da2 Hb2 Cc2 Md2 Ee2 Cf2 Hg2 Dh2";
const SILVER: &str = "ra8 rb8 rc8 rd8 re8 rf8 rg8 rh8 da7 hb7 cc7 ed7 me7 cf7 hg7 dh7";

fn archive(rows: &[(&str, &str)]) -> String {
    let mut s = format!("{HEADER}\n");
    for (id, moves) in rows {
        s.push_str(&format!(
            "{id}\tg\ts\t1500\t1500\tw\tr\t1w {GOLD}\\n1b {SILVER}{moves}\n"
        ));
    }
    s
}

#[test]
fn malformed_games_are_reported_and_skipped_and_the_file_goes_on() {
    let text = archive(&[
        ("1", "\\n2w Ee2n"),
        ("2", "\\n2b Ee2n"),                          // bad turn label
        ("3", "\\n2w Ee2n\\n2b ed7s\\n3w E?3n"),      // garbled step token
        ("4", "\\n2w Ee2n Ee3n Ee4n Ee5n\\n2b ed7e"), // illegal: e7 is occupied
        ("5", "\\n2w Ee2n\\n2b ed7s\\n3w Ee3n Ee4n"),
    ]);
    let bad_setup = text.replacen(
        &format!("5\tg\ts\t1500\t1500\tw\tr\t1w {GOLD}"),
        &format!(
            "5\tg\ts\t1500\t1500\tw\tr\t1w {}",
            GOLD.replace("Ra1", "Ra4")
        ),
        1,
    );
    let (recs, sum) = import_str(&bad_setup, "bad.txt", &ImportOptions::default()).unwrap();
    assert_eq!((sum.games_read, sum.kept), (5, 1));
    assert_eq!(recs[0].id, "1");
    let lines: Vec<String> = sum.reports.iter().map(|r| r.to_string()).collect();
    assert_eq!(lines.len(), 4);
    assert!(
        lines[0].starts_with("bad.txt:3: game 2, turn 2b, '2b': bad turn label: expected turn 2g"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("bad.txt:4: game 3, turn 3w, 'E?3n': unparseable token"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].starts_with("bad.txt:5: game 4, turn 2b, 'ed7e': illegal move: "),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].starts_with("bad.txt:6: game 5, turn 1w, 'Ra4': bad setup: a4 is outside"),
        "{}",
        lines[3]
    );
    assert_eq!(
        sum.skipped,
        counts(&[
            (reason::BAD_SETUP, 1),
            (reason::BAD_TURN_LABEL, 1),
            (reason::ILLEGAL_MOVE, 1),
            (reason::UNPARSEABLE_TOKEN, 1)
        ])
    );
}

#[test]
fn a_missing_column_is_an_error_naming_file_and_column() {
    let text = archive(&[("1", "\\n2w Ee2n")]).replacen("movelist", "moves", 1);
    let err = import_str(&text, "nomoves.txt", &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("nomoves.txt:1") && err.contains("'movelist'"),
        "{err}"
    );
}

#[test]
fn cli_writes_records_and_summary_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imp");
    let out_s = out.to_str().unwrap();
    let a = path(ALL2002);
    let f = path(FAKE);
    let args = [
        "import",
        "--game",
        "arimaa",
        "--format",
        "arimaa-archive",
        a.to_str().unwrap(),
        f.to_str().unwrap(),
        "--out",
        out_s,
        "--quiet",
    ];
    let o = plies(&args);
    assert!(o.status.success(), "{}", text(&o));
    let shown = text(&o);
    assert!(
        shown.contains("allgames2002.txt") && shown.contains("illegal move"),
        "{shown}"
    );
    assert!(shown.contains("game 55, turn 22w, 'Cg3n'"), "{shown}");
    let games = out.join("games.jsonl");
    let recs = read_records(&games).unwrap();
    assert_eq!(recs.len(), 61 + 12);
    let mut expected = import(ALL2002).0;
    expected.extend(import(FAKE).0);
    assert_eq!(recs, expected);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("import-summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["total"]["games_read"], 76);
    assert_eq!(summary["total"]["kept"], 73);
    assert_eq!(summary["files"][0]["skipped"]["illegal move"], 2);
    assert_eq!(summary["files"][0]["reports"][0]["game_id"], "55");
    // Only the two files: no temporary file left behind.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["games.jsonl", "import-summary.json"]);

    // A second run refuses, and leaves the file as it was.
    let before = std::fs::read(&games).unwrap();
    let o = plies(&args);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("already exists") && text(&o).contains("--force"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read(&games).unwrap(), before);

    // --force replaces it; --json prints the summary.
    let mut forced = args.to_vec();
    forced.retain(|a| *a != f.to_str().unwrap());
    forced.extend(["--force", "--json"]);
    let o = plies(&forced);
    assert!(o.status.success(), "{}", text(&o));
    let js: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(js["total"]["kept"], 61);
    assert_eq!(read_records(&games).unwrap().len(), 61);
}

#[test]
fn cli_fails_on_a_missing_column_or_file_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        archive(&[("1", "\\n2w Ee2n")]).replacen("termination", "term", 1),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = plies(&[
        "import",
        "--game",
        "arimaa",
        bad.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("bad.txt") && t.contains("'termination'"), "{t}");
    assert!(!out.join("games.jsonl").exists());
    assert_eq!(
        std::fs::read_dir(&out).map(|d| d.count()).unwrap_or(0),
        0,
        "no temporary file is left"
    );
    let o = plies(&[
        "import",
        "--game",
        "arimaa",
        dir.path().join("nope.txt").to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("nope.txt"), "{}", text(&o));
}

/// `rel` (or an absolute path) copied to `DIR/plain/NAME` and, behind a UTF-8 byte-order mark, to
/// `DIR/bom/NAME` (one file name, so sources that name the file agree).
fn plain_and_bom(dir: &Path, rel: &str) -> (PathBuf, PathBuf) {
    let text = std::fs::read(path(rel)).unwrap();
    let name = Path::new(rel).file_name().unwrap();
    let (plain, bom) = (dir.join("plain").join(name), dir.join("bom").join(name));
    for p in [&plain, &bom] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    std::fs::write(&plain, &text).unwrap();
    std::fs::write(&bom, [b"\xEF\xBB\xBF".as_slice(), &text].concat()).unwrap();
    (plain, bom)
}

#[test]
fn a_byte_order_mark_changes_no_archive_game_record_or_setup() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, bom) = plain_and_bom(dir.path(), FAKE);
    let opts = ImportOptions::default();
    let (a, b) = (
        import_file(&plain, &opts).unwrap(),
        import_file(&bom, &opts).unwrap(),
    );
    assert!(a.1.games_read > 0);
    assert_eq!(a, b);
    let text = std::fs::read_to_string(path(FAKE)).unwrap();
    let with_bom = import_str(&format!("\u{feff}{text}"), "fake", &opts).unwrap();
    assert_eq!(with_bom, import_str(&text, "fake", &opts).unwrap());

    // The records of the 2002 archive as `plies import` writes them.
    let jsonl = dir.path().join("games.jsonl");
    write_records(&jsonl, &import(ALL2002).0, false).unwrap();
    let (plain, bom) = plain_and_bom(dir.path(), jsonl.to_str().unwrap());
    let records = read_records(&plain).unwrap();
    assert!(!records.is_empty());
    assert_eq!(read_records(&bom).unwrap(), records);
    // `--setups FILE` reads the same records.
    let (a, b) = (
        plies::games::setups_from_file(&plain).unwrap(),
        plies::games::setups_from_file(&bom).unwrap(),
    );
    assert_eq!(a.len(), b.len());
}
