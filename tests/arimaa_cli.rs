//! `plies rules moves|steps|replay --game arimaa` end to end: output that
//! diffs clean against the oracle's, and clear errors on bad input.

mod common;
use common::plies;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

const OPENING: &str = "g rrrrrrrrdhcemchd................................DHCMECHDRRRRRRRR";

#[test]
fn moves_digest_prints_the_oracle_line() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(&tmp, "p.txt", &format!("# the opening\n\n{OPENING}\n"));
    let o = plies(&["rules", "moves", "--game", "arimaa", "--digest", &f]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    let fields: Vec<&str> = out.trim().split(' ').collect();
    assert_eq!(fields.len(), 4, "{out}");
    assert_eq!(fields[2], "3353");
    assert_eq!(fields[3].len(), 16);
}

#[test]
fn full_moves_listing_has_one_line_per_result_board() {
    let tmp = tempfile::tempdir().unwrap();
    let f = write(&tmp, "p.txt", &format!("{OPENING}\n"));
    let o = plies(&["rules", "moves", &f]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("position 1 g "));
    assert_eq!(lines[1], "count 3353");
    assert_eq!(lines.len(), 3353 + 3);
    assert_eq!(*lines.last().unwrap(), "end");
    let mut boards: Vec<&str> = lines[2..lines.len() - 1]
        .iter()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert!(
        boards.windows(2).all(|w| w[0] < w[1]),
        "sorted and distinct"
    );
    boards.dedup();
    assert_eq!(boards.len(), 3353);
}

#[test]
fn steps_listing_matches_the_oracle_fixture_for_the_first_positions() {
    let partial = std::fs::read_to_string(fixture("arimaa_partial.txt")).unwrap();
    let expected = std::fs::read_to_string(fixture("arimaa_steps.txt")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let head: String = partial.lines().take(50).map(|l| format!("{l}\n")).collect();
    let f = write(&tmp, "p.txt", &head);
    let o = plies(&["rules", "steps", "--game", "arimaa", &f]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(expected.starts_with(&out), "first 50 blocks differ");
    assert_eq!(
        out.matches("\nend\n").count() + out.starts_with("end\n") as usize,
        50
    );
}

#[test]
fn replay_accepts_oracle_games() {
    let o = plies(&[
        "rules",
        "replay",
        "--game",
        "arimaa",
        &fixture("arimaa_games.jsonl"),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("120 games"));
}

#[test]
fn bad_positions_and_steps_name_the_line_and_token() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            format!("{OPENING}\n{}\n", OPENING.replace("DHCM", "DHQM")),
            "line 2",
            "'Q'",
        ),
        (format!("{OPENING}\ng rrr\n"), "line 2", "64 squares"),
        (format!("x{}\n", &OPENING[1..]), "line 1", "side 'x'"),
    ];
    for (text, line, why) in cases {
        let f = write(&tmp, "bad.txt", &text);
        let o = plies(&["rules", "moves", "--digest", &f]);
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(line) && err.contains(why), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    for (partial, why) in [
        ("Ed2n", "d2 holds 'M', not 'E'"),
        ("Ee2q", "direction 'q'"),
        ("Ee2n Ee3n Ee4n Ee5n", "all 4 steps"),
        ("Ra1n", "occupied"),
        ("Ee2n Ee3n me7s", "stronger unfrozen"),
    ] {
        let f = write(&tmp, "bad.txt", &format!("{OPENING} | {partial}\n"));
        let o = plies(&["rules", "steps", &f]);
        assert!(!o.status.success(), "{partial}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("line 1") && err.contains(why),
            "{partial}: {err}"
        );
    }
    let f = write(&tmp, "bad.txt", &format!("{OPENING} | Ee2n\n"));
    let o = plies(&["rules", "moves", &f]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("turn-start positions"));
}
