//! Importing small hand-made archives: both label styles, takebacks,
//! skip reports, filters and errors.

use super::*;
use crate::game::arimaa::{Setup, Termination};
use crate::game::{Outcome, Side};
use crate::record::game_record::{GameRecord, PerSide};
use std::collections::BTreeMap;

const HEADER: &str = "id\twusername\tbusername\twrating\tbrating\tresult\ttermination\tmovelist";
const GOLD: &str = "Ra1 Rb1 Rc1 Rd1 Re1 Rf1 Rg1 Rh1 Da2 Hb2 Cc2 Md2 Ee2 Cf2 Hg2 Dh2";
const SILVER: &str = "ra8 rb8 rc8 rd8 re8 rf8 rg8 rh8 da7 hb7 cc7 ed7 me7 cf7 hg7 dh7";

fn row(id: &str, result: &str, term: &str, movelist: &str) -> String {
    format!("{id}\tgold\tsilver\t1600\t1500\t{result}\t{term}\t{movelist}")
}

fn opening(labels: (&str, &str)) -> String {
    format!("1{} {GOLD}\\n1{} {SILVER}", labels.0, labels.1)
}

fn import(rows: &[String]) -> (Vec<GameRecord>, FileSummary) {
    let text = format!("{HEADER}\n{}\n", rows.join("\n"));
    import_str(&text, "t.txt", &ImportOptions::default()).unwrap()
}

#[test]
fn setups_in_both_label_styles_and_a_resigned_game() {
    let gs = "\\n2g Ee2n Ee3n\\n2s ed7s ed6s\\n3g";
    let wb = "\\n2w Ee2n Ee3n\\n2b ed7s ed6s\\n3w";
    let (recs, sum) = import(&[
        row("1", "w", "r", &format!("{}{gs}", opening(("g", "s")))),
        row("2", "b", "t", &format!("{}{wb}", opening(("w", "b")))),
    ]);
    assert_eq!((sum.games_read, sum.kept), (2, 2), "{:?}", sum.reports);
    assert_eq!(recs[0].moves, ["Ee2n Ee3n", "ed7s ed6s"]);
    assert_eq!(recs[0].plies, 2);
    assert_eq!(recs[0].result, Some(Side::First));
    assert_eq!(recs[0].termination, "resignation");
    assert_eq!(recs[1].result, Some(Side::Second));
    assert_eq!(recs[1].termination, "timeout");
    assert_eq!(
        recs[0].setups[0],
        Setup::parse(Side::First, GOLD).unwrap().to_notation()
    );
    assert_eq!(recs[0].source, "t.txt:2");
    assert_eq!(recs[1].ratings, PerSide::new(Some(1600), Some(1500)));
    let g = replay_record(&recs[0]).unwrap();
    assert_eq!(
        g.result(),
        Some((Outcome::Win(Side::First), Termination::Resignation))
    );
}

#[test]
fn takeback_undoes_the_turn_before_and_resign_ends_the_list() {
    let list = format!(
        "{}\\n2w Ee2n\\n2b takeback\\n2w Ee2n Ee3n\\n2b ed7s\\n3w resign\\n3b",
        opening(("w", "b"))
    );
    let (recs, sum) = import(&[row("5", "b", "r", &list)]);
    assert_eq!(sum.kept, 1, "{:?}", sum.reports);
    assert_eq!(recs[0].moves, ["Ee2n Ee3n", "ed7s"]);
    // A setup can be taken back too.
    let list = format!(
        "1w {GOLD}\\n1b takeback\\n{}\\n2w Ee2n",
        opening(("w", "b"))
    );
    let (_, sum) = import(&[row("6", "w", "t", &list)]);
    assert_eq!(sum.kept, 1, "{:?}", sum.reports);
    // Moves after a resignation are refused.
    let list = format!("{}\\n2w resign\\n2b ed7s", opening(("w", "b")));
    let (_, sum) = import(&[row("7", "b", "r", &list)]);
    assert_eq!(sum.reports[0].reason, reason::ILLEGAL_MOVE);
}

#[test]
fn skip_reports_name_the_game_turn_and_token() {
    let o = opening(("g", "s"));
    let (recs, sum) = import(&[
        row("10", "w", "r", &format!("{o}\\n2g Ee2n\\n3g ed7s")),
        row("11", "w", "r", &format!("{o}\\n2g Ee2q")),
        row(
            "12",
            "w",
            "r",
            &format!("{o}\\n2g Ee2n\\n2s ed7s ed6s ed5s ed4s ed3s"),
        ),
        row(
            "13",
            "w",
            "r",
            &format!("{o}\\n2g Ee2n Ee3n Ee4n Ee5n Ee6n"),
        ),
        row(
            "14",
            "w",
            "r",
            &format!("1g {GOLD}\\n1s {}", SILVER.replace("ra8", "Ra8")),
        ),
        row("15", "w", "g", &format!("{o}\\n2g Ee2n")),
        row("16", "w", "r", &format!("{o}\\n2g Ed2n")),
        row("17", "w", "r", "1g Ra1"),
        "18\tonly\tthree".to_string(),
        row("19", "w", "r", &format!("{o}\\nxyz Ee2n")),
    ]);
    assert_eq!(sum.games_read, 10);
    assert_eq!(sum.kept, 0, "{recs:?}");
    let by_id: BTreeMap<&str, &SkipReport> = sum
        .reports
        .iter()
        .map(|r| (r.game_id.as_str(), r))
        .collect();
    let r = by_id["10"];
    assert_eq!(
        (r.reason.as_str(), r.turn.as_deref()),
        (reason::BAD_TURN_LABEL, Some("3g"))
    );
    assert!(r.detail.contains("expected turn 2s"), "{r}");
    let r = by_id["11"];
    assert_eq!(r.reason, reason::UNPARSEABLE_TOKEN);
    assert_eq!(r.token.as_deref(), Some("Ee2q"));
    let r = by_id["12"];
    assert_eq!(r.reason, reason::ILLEGAL_MOVE);
    assert!(r.detail.contains("at most 4 steps"), "{r}");
    assert_eq!(
        (r.turn.as_deref(), r.token.as_deref()),
        (Some("2s"), Some("ed3s"))
    );
    let r = by_id["13"];
    assert_eq!(r.token.as_deref(), Some("Ee6n"));
    let r = by_id["14"];
    assert_eq!(
        (r.reason.as_str(), r.turn.as_deref()),
        (reason::BAD_SETUP, Some("1s"))
    );
    assert!(r.to_string().contains("Ra8"), "{r}");
    let r = by_id["15"];
    assert_eq!(r.reason, reason::CONTRADICTS_RULES);
    assert!(
        r.to_string().contains("result contradicts the rules: "),
        "{r}"
    );
    assert!(r.detail.contains("still in progress"), "{r}");
    let r = by_id["16"];
    assert_eq!(r.reason, reason::ILLEGAL_MOVE);
    assert!(r.detail.contains("holds 'M', not 'E'"), "{r}");
    let r = by_id["17"];
    assert_eq!(r.reason, reason::BAD_SETUP);
    let r = by_id["18"];
    assert_eq!(r.reason, reason::MALFORMED_ROW);
    assert_eq!(r.source, "t.txt:10");
    let r = by_id["19"];
    assert_eq!(
        (r.reason.as_str(), r.token.as_deref()),
        (reason::BAD_TURN_LABEL, Some("xyz"))
    );
    assert_eq!(sum.skipped_total(), 10);
    assert_eq!(sum.skipped[reason::ILLEGAL_MOVE], 3);
}

#[test]
fn missing_columns_and_empty_files_are_errors_naming_the_file() {
    let text = "id\twusername\tbusername\twrating\tresult\ttermination\n1\ta\tb\t1\tw\tr\n";
    let err = import_str(text, "x.txt", &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("x.txt:1") && err.contains("'brating', 'movelist'"),
        "{err}"
    );
    let err = import_str("", "e.txt", &ImportOptions::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("e.txt") && err.contains("header"), "{err}");
}

#[test]
fn filters_and_stop_on_error() {
    let o = opening(("g", "s"));
    let rows = [
        row("1", "w", "r", &format!("{o}\\n2g Ee2n")),
        row("2", "w", "t", &format!("{o}\\n2g Ee2q")),
    ];
    let text = format!("{HEADER}\n{}\n", rows.join("\n"));
    let opts = ImportOptions {
        min_rating: Some(1550),
        ..ImportOptions::default()
    };
    let (_, sum) = import_str(&text, "f.txt", &opts).unwrap();
    assert_eq!(sum.skipped[reason::BELOW_MIN_RATING], 2);
    assert!(sum.reports.is_empty());
    let opts = ImportOptions {
        terminations: Some(vec![Termination::Timeout]),
        ..ImportOptions::default()
    };
    let (_, sum) = import_str(&text, "f.txt", &opts).unwrap();
    assert_eq!(sum.skipped[reason::TERMINATION_NOT_KEPT], 1);
    assert_eq!(sum.skipped[reason::UNPARSEABLE_TOKEN], 1);
    let opts = ImportOptions {
        stop_on_error: true,
        ..ImportOptions::default()
    };
    let err = import_str(&text, "f.txt", &opts).unwrap_err().to_string();
    assert!(
        err.contains("f.txt:3") && err.contains("game 2") && err.contains("Ee2q"),
        "{err}"
    );
}

#[test]
fn termination_names_round_trip() {
    for c in "gempritfo".chars() {
        let t = Termination::from_code(&c.to_string());
        assert_eq!(termination_from_name(t.name()), Some(t));
    }
    assert_eq!(termination_from_name("nonsense"), None);
}
