//! `--shard I/N`: one of N machines' part of a self-play run.
//!
//! Chunk `c` (games `c * chunk_games ..`) belongs to shard `c mod N`. Game
//! `i` is a function of `(seed, i)` alone and a chunk file of its games
//! alone, so the N shards write, between them, exactly the chunk files one
//! machine writes, byte for byte; whole chunks (not every N-th game) keep
//! each file the same as in the unsharded run.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0-based: shards are `0/N` to `N-1/N`, as array task ids run.
    pub index: u64,
    pub count: u64,
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("--shard '{spec}': expected I/N with 0 <= I < N (e.g. 0/4 to 3/4): {why}")]
pub struct ShardError {
    pub spec: String,
    pub why: String,
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(spec: &str) -> Result<Shard, ShardError> {
        let bad = |why: &str| ShardError {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        let (i, n) = spec.split_once('/').ok_or_else(|| bad("no '/'"))?;
        let index: u64 = i
            .trim()
            .parse()
            .map_err(|_| bad("I is not a whole number"))?;
        let count: u64 = n
            .trim()
            .parse()
            .map_err(|_| bad("N is not a whole number"))?;
        if count == 0 {
            return Err(bad("N is 0"));
        }
        if index >= count {
            return Err(bad("I is not below N"));
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// Whether chunk `c` is this shard's.
    pub fn owns(&self, chunk: u64) -> bool {
        chunk % self.count == self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_chunks_between_them() {
        let shards: Vec<Shard> = (0..3).map(|i| format!("{i}/3").parse().unwrap()).collect();
        for c in 0..20 {
            assert_eq!(shards.iter().filter(|s| s.owns(c)).count(), 1, "chunk {c}");
        }
        assert_eq!(shards[1].to_string(), "1/3");
    }

    #[test]
    fn bad_shards_are_named() {
        for bad in ["3/3", "1", "a/2", "0/0", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err();
            assert!(e.to_string().contains(&format!("'{bad}'")), "{e}");
        }
    }
}
