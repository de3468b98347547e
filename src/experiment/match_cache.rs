//! A played match kept as a file (`OUT/matches/NAME.json`) beside the key
//! of what was played, so that a rerun of an experiment plays only the
//! matches whose players, files or settings changed.

use crate::arena::Wdl;
use crate::game::hash_of;
use crate::report::{write_json, ReportError};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// A match as stored: the key says what was played.
#[derive(Serialize, Deserialize)]
struct CachedMatch {
    key: String,
    wins: u64,
    draws: u64,
    losses: u64,
}

/// The bytes of a file as a short key (`absent` when it cannot be read):
/// what keys cached results to the weights they were made with.
pub fn file_key(path: &Path) -> String {
    std::fs::read(path)
        .map(|b| format!("{:016x}", hash_of(&b)))
        .unwrap_or_else(|_| "absent".into())
}

/// The result stored at `path`, if it was played with `key`.
pub fn read_cached_match(path: &Path, key: &str) -> Option<Wdl> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<CachedMatch>(&t).ok())
        .filter(|c| c.key == key)
        .map(|c| Wdl {
            wins: c.wins,
            draws: c.draws,
            losses: c.losses,
        })
}

/// Stores `result` at `path` under `key` (atomically).
pub fn write_cached_match(path: &Path, key: &str, result: &Wdl) -> Result<(), ReportError> {
    write_json(
        path,
        &CachedMatch {
            key: key.to_string(),
            wins: result.wins,
            draws: result.draws,
            losses: result.losses,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_match_is_read_back_only_under_its_key() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("cell.json");
        assert_eq!(read_cached_match(&path, "k"), None);
        std::fs::write(&path, r#"{"key":"k","wins":3,"draws":1,"losses":2}"#).unwrap();
        let wdl = Wdl {
            wins: 3,
            draws: 1,
            losses: 2,
        };
        assert_eq!(read_cached_match(&path, "k"), Some(wdl));
        assert_eq!(read_cached_match(&path, "other settings"), None);
        std::fs::write(&path, "not json").unwrap();
        assert_eq!(read_cached_match(&path, "k"), None);
        // What is written is read back under its key alone.
        write_cached_match(&path, "k2", &wdl).unwrap();
        assert_eq!(read_cached_match(&path, "k2"), Some(wdl));
        assert_eq!(read_cached_match(&path, "k"), None);
    }

    #[test]
    fn file_keys_follow_the_bytes() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("w.safetensors");
        assert_eq!(file_key(&path), "absent");
        std::fs::write(&path, b"one").unwrap();
        let one = file_key(&path);
        std::fs::write(&path, b"one").unwrap();
        assert_eq!(file_key(&path), one);
        std::fs::write(&path, b"two").unwrap();
        assert_ne!(file_key(&path), one);
    }
}
