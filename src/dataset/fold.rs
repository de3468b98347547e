//! The k-fold cross-validation fold of a game, by a stable hash of its id.
//!
//! Like the split ([`split`](super::split)), a game's fold depends only on its
//! id, so all positions of a game share one fold and any tool can recompute
//! it. The hash is salted so that it is independent of the split hash: the
//! folds of the training games are balanced whatever the split fractions.
//!
//! ```text
//! h = fnv1a64(utf8(game_id))          # as for the split
//! fold = fmix64(h ^ 0x9e3779b97f4a7c15) mod k
//! ```
//!
//! In Python:
//!
//! ```python
//! def fold_of(game_id: str, k: int) -> int:
//!     M = (1 << 64) - 1
//!     h = 0xcbf29ce484222325
//!     for b in game_id.encode("utf-8"):
//!         h = ((h ^ b) * 0x100000001b3) & M
//!     h ^= 0x9e3779b97f4a7c15
//!     h ^= h >> 33; h = (h * 0xff51afd7ed558ccd) & M
//!     h ^= h >> 33; h = (h * 0xc4ceb9fe1a85ec53) & M
//!     h ^= h >> 33
//!     return h % k
//! ```

use serde::{Deserialize, Serialize};

use super::error::{DatasetError, Result};
use super::split::{fmix64, fnv1a64};

/// How the fold is computed, as written in the manifest (`folds.assign`).
pub const FOLD_ASSIGN: &str =
    "fold = fmix64(fnv1a64(utf8(game_id)) ^ 0x9e3779b97f4a7c15) mod k, fmix64 = MurmurHash3 64-bit finaliser";

/// Default number of folds.
pub const DEFAULT_FOLDS: u8 = 5;

/// The salt that makes the fold hash independent of the split hash.
const FOLD_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// The fold in `0..k` of every position of game `game_id` (`k` >= 1; 0 is
/// treated as 1).
pub fn fold_of(game_id: &str, k: u8) -> u8 {
    let k = u64::from(k.max(1));
    // The remainder is below k <= 255.
    (fmix64(fnv1a64(game_id.as_bytes()) ^ FOLD_SALT) % k) as u8
}

/// The fold rule as recorded in the manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldInfo {
    /// Number of folds, 1 to 255.
    pub k: u8,
    /// Always [`FOLD_ASSIGN`].
    pub assign: String,
}

impl FoldInfo {
    /// The rule for `k` folds.
    pub fn new(k: u8) -> Self {
        FoldInfo {
            k,
            assign: FOLD_ASSIGN.to_string(),
        }
    }
}

/// Checks a number of folds: 1 to 255.
pub fn validate_folds(k: u8) -> Result<()> {
    DatasetError::refuse_zero("dataset spec", "folds", k.into(), "1 to 255")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::split_unit;

    #[test]
    fn fold_matches_the_documented_python() {
        let five: Vec<u8> = (0..10)
            .map(|i| fold_of(&format!("game-{i:05}"), 5))
            .collect();
        assert_eq!(five, [3, 2, 1, 0, 3, 4, 0, 3, 0, 1]);
        assert_eq!(fold_of("selfplay-1", 7), 3);
        assert_eq!(fold_of("\u{e9}", 7), 4);
        assert_eq!(fold_of("abc", 255), 153);
        assert_eq!(fold_of("anything", 1), 0);
    }

    #[test]
    fn folds_are_balanced_and_independent_of_the_split() {
        let k = 5u8;
        let n = 20_000;
        // Counts of folds among the games with split unit below 0.2.
        let mut all = [0u32; 5];
        let mut low = [0u32; 5];
        for i in 0..n {
            let id = format!("game-{i:07}");
            let f = fold_of(&id, k) as usize;
            all[f] += 1;
            if split_unit(&id) < 0.2 {
                low[f] += 1;
            }
        }
        let low_n: u32 = low.iter().sum();
        for f in 0..5 {
            let share = all[f] as f64 / n as f64;
            assert!((share - 0.2).abs() < 0.02, "{all:?}");
            let share = low[f] as f64 / low_n as f64;
            assert!((share - 0.2).abs() < 0.03, "{low:?}");
        }
    }

    #[test]
    fn zero_folds_are_refused() {
        assert!(validate_folds(0).is_err());
        assert!(validate_folds(1).is_ok() && validate_folds(255).is_ok());
    }
}
