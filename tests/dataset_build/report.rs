//! Running `plies dataset build --json` and reading what it reports and
//! what it wrote.

use crate::common::{plies, text};
use plies::dataset::Dataset;
use std::path::Path;

pub fn build(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["dataset", "build", "--quiet", "--json"];
    all.extend_from_slice(args);
    let o = plies(&all);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)))
}

pub fn dropped(report: &serde_json::Value, filter: &str) -> (u64, u64) {
    let d = &report["dropped"][filter];
    (
        d["games"].as_u64().unwrap(),
        d["positions"].as_u64().unwrap(),
    )
}

pub fn shard_hashes(dir: &Path) -> Vec<String> {
    Dataset::open(dir)
        .unwrap()
        .manifest()
        .shards
        .iter()
        .map(|s| s.sha256.clone())
        .collect()
}
