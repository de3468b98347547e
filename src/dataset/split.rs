//! Train / validation / test assignment by a stable hash of the game id.
//!
//! A game's split depends only on its id, never on where its positions land,
//! so no game crosses splits and any tool can recompute the assignment:
//!
//! ```text
//! h = fnv1a64(utf8(game_id))          # offset 0xcbf29ce484222325, prime 0x100000001b3
//! m = fmix64(h)                       # MurmurHash3's 64-bit finaliser (below)
//! u = (m >> 11) / 2^53                # uniform in [0, 1)
//! valid if u < valid; test if u < valid + test; train otherwise
//!
//! fmix64(x): x ^= x >> 33; x *= 0xff51afd7ed558ccd; x ^= x >> 33;
//!            x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33    (all mod 2^64)
//! ```
//!
//! The finaliser matters: FNV-1a's high bits barely move when only the last
//! characters of an id change (`game-00001`, `game-00002`, ...), so the raw
//! hash would put whole runs of sequential ids in one split.
//!
//! In Python:
//!
//! ```python
//! def split_unit(game_id: str) -> float:
//!     M = (1 << 64) - 1
//!     h = 0xcbf29ce484222325
//!     for b in game_id.encode("utf-8"):
//!         h = ((h ^ b) * 0x100000001b3) & M
//!     h ^= h >> 33; h = (h * 0xff51afd7ed558ccd) & M
//!     h ^= h >> 33; h = (h * 0xc4ceb9fe1a85ec53) & M
//!     h ^= h >> 33
//!     return (h >> 11) / 2**53
//! ```

use std::fmt;
use std::ops::{Index, IndexMut};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::{DatasetError, Result};

/// The hash named in the manifest (`split.hash`).
pub const SPLIT_HASH: &str = "fnv1a64(game_id)";

/// How the hash becomes a split, as written in the manifest (`split.assign`).
pub const SPLIT_ASSIGN: &str = "u = (fmix64(fnv1a64(utf8(game_id))) >> 11) / 2^53, fmix64 = MurmurHash3 64-bit finaliser; valid if u < valid, test if u < valid + test, else train";

/// FNV-1a, 64-bit, of `bytes`.
pub const fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

/// MurmurHash3's 64-bit finaliser: every input bit moves every output bit.
pub const fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The game id's position in [0, 1) used to pick its split.
pub fn split_unit(game_id: &str) -> f64 {
    (fmix64(fnv1a64(game_id.as_bytes())) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// One of the three parts of a dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Split {
    Train,
    Valid,
    Test,
}

impl Split {
    /// All splits, in the order used by tables and counts.
    pub const ALL: [Split; 3] = [Split::Train, Split::Valid, Split::Test];

    /// The name stored in the `split` column: `train`, `valid` or `test`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Split::Train => "train",
            Split::Valid => "valid",
            Split::Test => "test",
        }
    }
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error of parsing a split name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown split `{0}`, expected train, valid or test")]
pub struct ParseSplitError(pub String);

impl FromStr for Split {
    type Err = ParseSplitError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "train" => Ok(Split::Train),
            "valid" => Ok(Split::Valid),
            "test" => Ok(Split::Test),
            other => Err(ParseSplitError(other.to_string())),
        }
    }
}

/// Fractions of games in the validation and test splits; training gets the rest.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SplitRule {
    pub valid: f64,
    pub test: f64,
}

impl Default for SplitRule {
    /// 80 / 10 / 10.
    fn default() -> Self {
        SplitRule {
            valid: 0.1,
            test: 0.1,
        }
    }
}

impl SplitRule {
    /// A checked rule.
    pub fn new(valid: f64, test: f64) -> Result<Self> {
        let rule = SplitRule { valid, test };
        rule.validate()?;
        Ok(rule)
    }

    /// Both fractions finite, in [0, 1], and together at most 1.
    pub fn validate(&self) -> Result<()> {
        for (field, v) in [("split.valid", self.valid), ("split.test", self.test)] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(DatasetError::InvalidArgument {
                    what: "split rule",
                    field,
                    expected: "a fraction in [0, 1]".into(),
                    found: v.to_string(),
                });
            }
        }
        if self.valid + self.test > 1.0 {
            return Err(DatasetError::InvalidArgument {
                what: "split rule",
                field: "split.valid + split.test",
                expected: "at most 1".into(),
                found: (self.valid + self.test).to_string(),
            });
        }
        Ok(())
    }

    /// The split of every position of game `game_id`.
    pub fn split_of(&self, game_id: &str) -> Split {
        let u = split_unit(game_id);
        if u < self.valid {
            Split::Valid
        } else if u < self.valid + self.test {
            Split::Test
        } else {
            Split::Train
        }
    }

    /// The expected fraction of games in `split`.
    pub fn fraction(&self, split: Split) -> f64 {
        match split {
            Split::Train => (1.0 - self.valid - self.test).max(0.0),
            Split::Valid => self.valid,
            Split::Test => self.test,
        }
    }
}

/// A count per split (rows or games).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitCounts {
    pub train: u64,
    pub valid: u64,
    pub test: u64,
}

impl SplitCounts {
    /// Sum over the three splits.
    pub fn total(&self) -> u64 {
        self.train + self.valid + self.test
    }

    /// [`SplitCounts::total`], `None` past `u64::MAX` (counts read from a file).
    pub fn checked_total(&self) -> Option<u64> {
        self.train.checked_add(self.valid)?.checked_add(self.test)
    }

    /// [`SplitCounts::add`], `None` past `u64::MAX` (counts read from a file).
    pub fn checked_sum(&self, other: &SplitCounts) -> Option<SplitCounts> {
        Some(SplitCounts {
            train: self.train.checked_add(other.train)?,
            valid: self.valid.checked_add(other.valid)?,
            test: self.test.checked_add(other.test)?,
        })
    }

    /// `self += other`, split by split.
    pub fn add(&mut self, other: &SplitCounts) {
        self.train += other.train;
        self.valid += other.valid;
        self.test += other.test;
    }
}

impl Index<Split> for SplitCounts {
    type Output = u64;

    fn index(&self, split: Split) -> &u64 {
        match split {
            Split::Train => &self.train,
            Split::Valid => &self.valid,
            Split::Test => &self.test,
        }
    }
}

impl IndexMut<Split> for SplitCounts {
    fn index_mut(&mut self, split: Split) -> &mut u64 {
        match split {
            Split::Train => &mut self.train,
            Split::Valid => &mut self.valid,
            Split::Test => &mut self.test,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_reference_values() {
        // Test vectors from the FNV reference (draft-eastlake-fnv).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn unit_matches_the_documented_python() {
        // Values printed by the Python snippet in the module docs.
        assert_eq!(split_unit("game-00000"), 0.4860890421886458);
        assert_eq!(split_unit("selfplay-1"), 0.44662374752777545);
        assert_eq!(split_unit("\u{e9}"), 0.6145904496611594);
    }

    #[test]
    fn unit_is_in_range_and_split_is_stable() {
        let rule = SplitRule::default();
        for i in 0..1000 {
            let id = format!("game-{i}");
            let u = split_unit(&id);
            assert!((0.0..1.0).contains(&u));
            assert_eq!(rule.split_of(&id), rule.split_of(&id.clone()));
        }
    }

    #[test]
    fn fractions_are_roughly_right() {
        let rule = SplitRule::new(0.2, 0.1).unwrap();
        let mut counts = SplitCounts::default();
        let n = 20_000;
        for i in 0..n {
            // Sequential ids differing in their last characters only.
            counts[rule.split_of(&format!("game-{i:07}"))] += 1;
        }
        let f = |c: u64| c as f64 / n as f64;
        assert!((f(counts.valid) - 0.2).abs() < 0.02, "{counts:?}");
        assert!((f(counts.test) - 0.1).abs() < 0.02, "{counts:?}");
        assert!((f(counts.train) - 0.7).abs() < 0.02, "{counts:?}");
    }

    #[test]
    fn edge_rules() {
        let all_train = SplitRule::new(0.0, 0.0).unwrap();
        let all_test = SplitRule::new(0.0, 1.0).unwrap();
        for i in 0..100 {
            let id = i.to_string();
            assert_eq!(all_train.split_of(&id), Split::Train);
            assert_eq!(all_test.split_of(&id), Split::Test);
        }
        assert!(SplitRule::new(0.6, 0.6).is_err());
        assert!(SplitRule::new(-0.1, 0.0).is_err());
        assert!(SplitRule::new(f64::NAN, 0.0).is_err());
    }

    #[test]
    fn split_names_round_trip() {
        for s in Split::ALL {
            assert_eq!(s.as_str().parse::<Split>().unwrap(), s);
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{s}\""));
        }
        assert!("training".parse::<Split>().is_err());
    }
}
