//! The crate's files the tests use, and copying, comparing and listing
//! folders.

use std::path::{Path, PathBuf};

pub const TTT: &str = "checkpoints/tictactoe-mlp80-td";

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}

pub fn files_equal(a: &Path, b: &Path, names: &[&str]) {
    for n in names {
        let (x, y) = (
            std::fs::read(a.join(n)).unwrap(),
            std::fs::read(b.join(n)).unwrap(),
        );
        assert!(
            x == y,
            "{n} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

pub const CKPT_FILES: [&str; 3] = ["config.json", "model.safetensors", "README.md"];
pub const CKPT_FILES_SORTED: [&str; 3] = ["README.md", "config.json", "model.safetensors"];

/// The snapshot directory `plies hub download --json` reports.
pub fn snapshot(json: &str) -> PathBuf {
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    PathBuf::from(v["path"].as_str().unwrap())
}

/// Every path under `root` (links not followed), for "nothing was
/// written" checks.
pub fn tree(root: &Path) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            out.insert(p.strip_prefix(root).unwrap().display().to_string());
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out
}
