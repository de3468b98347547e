//! `plies import` reads every record format the games have (the arimaa.com
//! archive, PlayOK Gomoku, the Amazons text format), and `plies dataset
//! build --records` takes the directories `import` and `selfplay` write.

mod common;

use common::{plies, text};
use std::path::Path;

fn run_ok(args: &[&str]) -> String {
    let out = plies(args);
    let t = text(&out);
    assert!(out.status.success(), "plies {}:\n{t}", args.join(" "));
    t
}

/// Runs `plies` expecting a refusal; its output, which must hold every
/// one of `needles`.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let out = plies(args);
    let t = text(&out);
    assert!(
        !out.status.success(),
        "plies {} was accepted",
        args.join(" ")
    );
    for n in needles {
        assert!(t.contains(n), "plies {}: no '{n}' in:\n{t}", args.join(" "));
    }
    t
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("import-summary.json")).unwrap()).unwrap()
}

#[test]
fn playok_gomoku_imports_and_builds_a_dataset_from_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gomoku");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/gomoku");
    let files: Vec<String> = ["evacoregen6.pgn", "runglathap.pgn"]
        .iter()
        .map(|f| data.join(f).display().to_string())
        .collect();
    let mut args = vec!["import", "--game", "gomoku", "--out", out.to_str().unwrap()];
    args.extend(files.iter().map(String::as_str));
    run_ok(&args);
    let s = summary(&out);
    assert_eq!(s["format"], "playok-pgn");
    assert_eq!(s["total"]["games_read"], 284);
    assert_eq!(s["total"]["kept"], 280);
    assert_eq!(s["not_importable"].as_array().unwrap().len(), 4);
    let records = plies::record::read_records(out.join("games.jsonl")).unwrap();
    assert_eq!(records.len(), 280);
    assert!(records.iter().all(|r| r.game == "gomoku"));
    // A second import into the same directory is refused without --force.
    refused(&args, &["--force"]);

    let ds = dir.path().join("ds");
    run_ok(&[
        "dataset",
        "build",
        "--records",
        out.to_str().unwrap(),
        "--out",
        ds.to_str().unwrap(),
        "--quiet",
    ]);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ds.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["game"], "gomoku");
}

#[test]
fn amazons_text_imports_and_bad_lines_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.txt");
    std::fs::write(
        &file,
        "# two games\n6 b1-b4/e4 a5-a3/c3 *\n8 c1-c5/f5 1-0\n",
    )
    .unwrap();
    let out = dir.path().join("amazons");
    run_ok(&[
        "import",
        "--game",
        "amazons",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let records = plies::record::read_records(out.join("games.jsonl")).unwrap();
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].board_size, Some(6));
    assert_eq!(records[1].board_size, Some(8));
    assert_eq!(records[1].result, Some(plies::game::Side::First));
    std::fs::write(&file, "6 b1-b4/e4 zz *\n").unwrap();
    let bad = dir.path().join("bad");
    let (file, bad) = (file.to_str().unwrap(), bad.to_str().unwrap());
    refused(
        &["import", "--game", "amazons", file, "--out", bad],
        &["games.txt:1", "'zz'"],
    );
}

#[test]
fn games_without_a_format_and_unknown_formats_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let out = out.to_str().unwrap();
    refused(
        &["import", "--game", "pentago", "f.txt", "--out", out],
        &["no record format of pentago"],
    );
    refused(
        &[
            "import", "--game", "gomoku", "--format", "sgf", "f.txt", "--out", out,
        ],
        &["'sgf'", "playok-pgn"],
    );
}

#[test]
fn a_selfplay_directory_is_a_record_source() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    run_ok(&[
        "selfplay",
        "--game",
        "tictactoe",
        "--white",
        "random",
        "--black",
        "naive",
        "--games",
        "30",
        "--out",
        run.to_str().unwrap(),
        "--quiet",
    ]);
    let ds = dir.path().join("ds");
    let t = run_ok(&[
        "dataset",
        "build",
        "--records",
        run.to_str().unwrap(),
        "--out",
        ds.to_str().unwrap(),
        "--quiet",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_str(&t).unwrap();
    assert_eq!(report["games_read"], 30, "{t}");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let ds2 = dir.path().join("ds2");
    let (empty, ds2) = (empty.to_str().unwrap(), ds2.to_str().unwrap());
    refused(
        &["dataset", "build", "--records", empty, "--out", ds2],
        &["no record files"],
    );
}

/// The PID of a process that has ended.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn import_removes_the_temporary_files_of_dead_writers_only() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("games.txt");
    std::fs::write(&file, "6 b1-b4/e4 a5-a3/c3 *\n8 c1-c5/f5 1-0\n").unwrap();
    let out = dir.path().join("amazons");
    std::fs::create_dir(&out).unwrap();
    // What a killed import leaves: a hidden temporary file of its target.
    let stale = out.join(format!(".games.jsonl.plies-tmp-{}-0.jsonl", dead_pid()));
    std::fs::write(&stale, "half a game\n".repeat(1000)).unwrap();
    // A writer that is still running (this test) keeps its file.
    let live = out.join(format!(
        ".games.jsonl.plies-tmp-{}-0.jsonl",
        std::process::id()
    ));
    std::fs::write(&live, "in progress\n").unwrap();
    // Another target's temporary file is not this writer's business.
    let other = out.join(format!(".other.jsonl.plies-tmp-{}-0.jsonl", dead_pid()));
    std::fs::write(&other, "x").unwrap();
    run_ok(&[
        "import",
        "--game",
        "amazons",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!stale.exists(), "{} was left", stale.display());
    assert!(live.exists() && other.exists());
    let records = plies::record::read_records(out.join("games.jsonl")).unwrap();
    assert_eq!(records.len(), 2);
}

/// `text` with a UTF-8 byte-order mark in front, written to `DIR/bom/NAME`
/// (the same file name as the plain copy, which goes to `DIR/plain/NAME`).
fn plain_and_bom(dir: &Path, name: &str, text: &[u8]) -> (std::path::PathBuf, std::path::PathBuf) {
    let (plain, bom) = (dir.join("plain"), dir.join("bom"));
    std::fs::create_dir_all(&plain).unwrap();
    std::fs::create_dir_all(&bom).unwrap();
    std::fs::write(plain.join(name), text).unwrap();
    std::fs::write(bom.join(name), [b"\xEF\xBB\xBF".as_slice(), text].concat()).unwrap();
    (plain.join(name), bom.join(name))
}

#[test]
fn a_byte_order_mark_changes_no_playok_or_amazons_record() {
    use plies::record::amazons_text::read_amazons_records;
    use plies::record::gomoku_pgn::import_playok_gomoku;
    let dir = tempfile::tempdir().unwrap();
    let pgn = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/gomoku/evacoregen6.pgn");
    let (plain, bom) = plain_and_bom(dir.path(), "g.pgn", &std::fs::read(pgn).unwrap());
    let (a, b) = (
        import_playok_gomoku(&plain).unwrap(),
        import_playok_gomoku(&bom).unwrap(),
    );
    assert!(!a.records.is_empty());
    assert_eq!(a.records.len(), b.records.len());
    assert_eq!(a.skipped.len(), b.skipped.len());
    for (x, y) in a.records.iter().zip(&b.records) {
        assert_eq!(
            (&x.moves, &x.result, &x.players),
            (&y.moves, &y.result, &y.players)
        );
    }
    let text = b"6 b1-b4/e4 a5-a3/c3 *\n8 c1-c5/f5 1-0\n";
    let (plain, bom) = plain_and_bom(dir.path(), "a.txt", text);
    let a = read_amazons_records(&plain).unwrap();
    assert_eq!(a.len(), 2);
    assert_eq!(read_amazons_records(&bom).unwrap(), a);
    // The command line too.
    let out = dir.path().join("out");
    run_ok(&[
        "import",
        "--game",
        "amazons",
        bom.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(summary(&out)["total"]["kept"], 2);
}
