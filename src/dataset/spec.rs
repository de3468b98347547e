//! What a dataset holds: the game, the encoder, the split rule, the shard size.

use serde::{Deserialize, Serialize};

use super::error::{DatasetError, Result};
use super::split::SplitRule;

/// Default maximum number of rows per shard.
pub const DEFAULT_SHARD_ROWS: usize = 100_000;

/// The encoder that produced the planes and globals (name, version, shape).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncoderInfo {
    /// Registry name, e.g. `arimaa-6x8x8`.
    pub name: String,
    pub version: u32,
    /// Plane shape `[C, H, W]`.
    pub shape: [usize; 3],
    /// Number of global features.
    pub globals: usize,
}

impl EncoderInfo {
    /// `C*H*W`, the length of every row's `planes`.
    ///
    /// Saturates on overflow; [`EncoderInfo::validate`] rejects such shapes.
    pub fn planes_len(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// Name non-empty; `C*H*W` and `G` fit an Arrow fixed-size list (i32).
    pub fn validate(&self) -> Result<()> {
        let bad = |field, expected: &str, found: String| DatasetError::InvalidArgument {
            what: "encoder info",
            field,
            expected: expected.to_string(),
            found,
        };
        if self.name.is_empty() {
            return Err(bad("encoder.name", "a non-empty name", "empty".into()));
        }
        if self.planes_len() > i32::MAX as usize {
            return Err(bad(
                "encoder.shape",
                "C*H*W at most 2^31-1",
                format!("{:?}", self.shape),
            ));
        }
        if self.globals > i32::MAX as usize {
            return Err(bad(
                "encoder.globals",
                "at most 2^31-1",
                self.globals.to_string(),
            ));
        }
        Ok(())
    }
}

/// Everything [`DatasetWriter`](super::DatasetWriter) needs to know up front.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatasetSpec {
    /// Game name, e.g. `arimaa` or `tic_tac_toe`.
    pub game: String,
    pub encoder: EncoderInfo,
    pub split: SplitRule,
    /// Maximum rows per shard (default [`DEFAULT_SHARD_ROWS`]).
    pub shard_rows: usize,
    /// Number of cross-validation folds (1 to 255; default
    /// [`DEFAULT_FOLDS`](super::fold::DEFAULT_FOLDS)): the `fold` column
    /// holds [`fold_of`](super::fold::fold_of) of the game id.
    #[serde(default = "default_folds")]
    pub folds: u8,
}

fn default_folds() -> u8 {
    super::fold::DEFAULT_FOLDS
}

impl DatasetSpec {
    /// A small spec for unit tests: game `test`, encoder `e` v1 with one
    /// 2x2 plane and `globals` globals, `shard_rows` rows a shard.
    #[cfg(test)]
    pub(crate) fn for_tests(shard_rows: usize, globals: usize) -> Self {
        DatasetSpec {
            shard_rows,
            ..DatasetSpec::new(
                "test",
                EncoderInfo {
                    name: "e".into(),
                    version: 1,
                    shape: [1, 2, 2],
                    globals,
                },
            )
        }
    }

    /// A spec with the default split rule (80/10/10), shard size and folds.
    pub fn new(game: impl Into<String>, encoder: EncoderInfo) -> Self {
        DatasetSpec {
            game: game.into(),
            encoder,
            split: SplitRule::default(),
            shard_rows: DEFAULT_SHARD_ROWS,
            folds: super::fold::DEFAULT_FOLDS,
        }
    }

    /// Checks every field.
    pub fn validate(&self) -> Result<()> {
        if self.game.is_empty() {
            return Err(DatasetError::InvalidArgument {
                what: "dataset spec",
                field: "game",
                expected: "a non-empty game name".into(),
                found: "empty".into(),
            });
        }
        DatasetError::refuse_zero("dataset spec", "shard_rows", self.shard_rows, "at least 1")?;
        self.encoder.validate()?;
        super::fold::validate_folds(self.folds)?;
        self.split.validate()
    }
}
