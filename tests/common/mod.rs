//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the `plies` binary cargo built.
pub fn plies(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_plies"))
        .args(args)
        .output()
        .expect("run plies")
}

/// stdout and stderr together.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `tests/fixtures/STEM.jsonl`, unpacked into `dir` first when only
/// `STEM.jsonl.gz` is stored (fixtures over ~3 MB are kept gzipped).
pub fn oracle_fixture(stem: &str, dir: &Path) -> PathBuf {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let plain = base.join(format!("{stem}.jsonl"));
    if plain.exists() {
        return plain;
    }
    let gz = base.join(format!("{stem}.jsonl.gz"));
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(&gz)
        .output()
        .unwrap_or_else(|e| panic!("gzip -dc {}: {e}", gz.display()));
    assert!(out.status.success(), "gzip -dc {} failed", gz.display());
    let path = dir.join(format!("{stem}.jsonl"));
    std::fs::write(&path, out.stdout).unwrap();
    path
}
