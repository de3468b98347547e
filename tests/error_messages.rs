//! The file-system mistakes a user makes get one line that names the path,
//! what was expected and what to do, each cause said once: an output path
//! that is a file, a full disk (a small tmpfs, where the machine lets the
//! test mount one).

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn plies(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .env("RAYON_NUM_THREADS", "2")
        .args(args)
        .output()
        .unwrap()
}

fn error_lines(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(str::to_string)
        .collect()
}

/// A small Tic-tac-toe dataset in `dir/ds`.
fn dataset(dir: &Path) -> String {
    let games = dir.join("games");
    let g = games.display().to_string();
    let out = plies(&[
        "selfplay",
        "--game",
        "tictactoe",
        "--white",
        "random",
        "--black",
        "random",
        "--games",
        "40",
        "--seed",
        "1",
        "--out",
        &g,
    ]);
    assert!(out.status.success(), "{}", common::text(&out));
    let ds = dir.join("ds").display().to_string();
    let out = plies(&[
        "dataset",
        "build",
        "--records",
        &format!("{g}/games/part-00000.jsonl"),
        "--out",
        &ds,
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", common::text(&out));
    ds
}

#[test]
fn an_output_path_that_is_a_file_is_named_with_what_was_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path());
    let file = tmp.path().join("notes.txt");
    std::fs::write(&file, "keep me").unwrap();
    let f = file.display().to_string();
    let out = plies(&[
        "train", "--data", &ds, "--model", "linear", "--epochs", "1", "--out", &f, "--quiet",
    ]);
    assert!(!out.status.success());
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{}", common::text(&out));
    let line = &lines[0];
    assert!(
        line.contains(&f)
            && line.contains("is not a folder")
            && line.contains("name another path")
            && !line.contains("os error"),
        "{line}"
    );
    assert_eq!(line.matches(&f).count(), 1, "{line}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn a_full_disk_says_so_once_and_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path());
    let records = Path::new(&ds)
        .parent()
        .unwrap()
        .join("games/games/part-00000.jsonl");
    let small = tmp.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(&small)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("note: cannot mount a tmpfs here (not root?); the full-disk case is not run");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&small);
    // Fill the disk but for a few bytes, so the writer's first shard fails.
    let filler = small.join("filler");
    let _ = std::fs::write(&filler, vec![7u8; 16 << 10]);
    let out_dir = small.join("ds").display().to_string();
    let out = plies(&[
        "dataset",
        "build",
        "--records",
        &records.display().to_string(),
        "--out",
        &out_dir,
        "--quiet",
    ]);
    assert!(!out.status.success(), "{}", common::text(&out));
    let lines = error_lines(&out);
    assert_eq!(lines.len(), 1, "{}", common::text(&out));
    let line = &lines[0];
    assert_eq!(line.matches("disk is full").count(), 1, "{line}");
    assert!(
        line.contains("free some space") && !line.contains("os error 28"),
        "{line}"
    );
    assert!(
        !Path::new(&out_dir).join("manifest.json").exists(),
        "a half-written dataset has a manifest"
    );
}
