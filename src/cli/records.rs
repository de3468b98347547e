//! `--records`: record files, or the directories `plies import` and
//! `plies selfplay` write, expanded to their record files in order.

use anyhow::{bail, Context};
use plies::selfplay::chunks::GAMES_DIR;
use std::path::{Path, PathBuf};

/// The JSONL files of `dir`, sorted by name (`part-00000.jsonl`, ...).
fn jsonl_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("{}", dir.display()))? {
        let path = entry.with_context(|| format!("{}", dir.display()))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        // Hidden files are the temporaries of writers still at work.
        if path.is_file() && name.ends_with(".jsonl") && !name.starts_with('.') {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Each path as given when it is a file; for a directory, its record
/// files: a self-play run's `games/part-*.jsonl`, else the `*.jsonl`
/// files in it (an import's `games.jsonl`).
pub fn record_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let games = path.join(GAMES_DIR);
        let files = if games.is_dir() {
            jsonl_files(&games)?
        } else {
            jsonl_files(path)?
        };
        if files.is_empty() {
            bail!(
                "--records {}: a directory with no record files (expected *.jsonl, as plies import writes, or {GAMES_DIR}/part-*.jsonl, as plies selfplay writes)",
                path.display()
            );
        }
        out.extend(files);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_expand_to_their_record_files() {
        let root = tempfile::tempdir().unwrap();
        let import = root.path().join("import");
        std::fs::create_dir_all(&import).unwrap();
        std::fs::write(import.join("games.jsonl"), "").unwrap();
        std::fs::write(import.join("import-summary.json"), "{}").unwrap();
        let run = root.path().join("run");
        std::fs::create_dir_all(run.join(GAMES_DIR)).unwrap();
        for name in [
            "part-00001.jsonl",
            "part-00000.jsonl",
            ".part-00002.jsonl.tmp-1-1",
        ] {
            std::fs::write(run.join(GAMES_DIR).join(name), "").unwrap();
        }
        let file = root.path().join("one.jsonl");
        let got = record_files(&[import.clone(), run.clone(), file.clone()]).unwrap();
        assert_eq!(
            got,
            [
                import.join("games.jsonl"),
                run.join(GAMES_DIR).join("part-00000.jsonl"),
                run.join(GAMES_DIR).join("part-00001.jsonl"),
                file,
            ]
        );
        let empty = root.path().join("empty");
        std::fs::create_dir_all(&empty).unwrap();
        let e = record_files(&[empty]).unwrap_err().to_string();
        assert!(e.contains("empty") && e.contains("no record files"), "{e}");
    }
}
