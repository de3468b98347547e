//! Weights files: the weight vector of a weighted hand evaluator
//! ([`super::FeatureSet`]) as JSON, written by `plies tune` and read by
//! `eval=NAME:PATH` (`eval=pentago-features:runs/tune/weights.json`).
//!
//! ```json
//! {"format": "plies-hand-weights", "version": 1, "game": "pentago",
//!  "evaluator": "pentago-features", "features": ["own_open_1", ...],
//!  "weights": [0.05, ...], "training": {...}}
//! ```
//!
//! A file is checked in full on reading: its format, game, evaluator,
//! feature names (in order) and that every weight is a finite number; an
//! error names the file and the field at fault.

use super::{FeatureSet, LinearEval};
use crate::game::Game;
use crate::util::{write_atomic, AtomicWriteError};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The `format` field of every weights file.
pub const WEIGHTS_FORMAT: &str = "plies-hand-weights";
/// The version this program writes and reads.
pub const WEIGHTS_VERSION: u32 = 1;

/// A weights file as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WeightsFile {
    pub format: String,
    pub version: u32,
    pub game: String,
    pub evaluator: String,
    pub features: Vec<String>,
    pub weights: Vec<f32>,
    /// How the weights were made (method, seed, iterations), for people.
    #[serde(default)]
    pub training: serde_json::Value,
}

#[derive(Debug, Error)]
pub enum WeightsError {
    #[error("weights file {path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("weights file {path}: line {line}, column {column}: {why}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        why: String,
    },
    #[error("weights file {path}: field '{field}' is {found}, expected {expected}")]
    Field {
        path: PathBuf,
        field: &'static str,
        found: String,
        expected: String,
    },
    #[error("weights file {path}: feature {index} is '{found}', {evaluator} expects '{expected}'")]
    FeatureName {
        path: PathBuf,
        index: usize,
        evaluator: String,
        found: String,
        expected: String,
    },
    #[error(
        "weights file {path}: weight {index} ({feature}) is {value}, expected a finite number"
    )]
    NotFinite {
        path: PathBuf,
        index: usize,
        feature: String,
        value: f32,
    },
    #[error("weights file: {0}")]
    Write(#[from] AtomicWriteError),
    #[error("weights file {path}: {source}")]
    Encode {
        path: PathBuf,
        source: serde_json::Error,
    },
}

impl WeightsFile {
    /// The weights of `set` for game `game`, with how they were made.
    pub fn new<G: Game>(
        game: &str,
        set: &FeatureSet<G>,
        weights: &[f32],
        training: serde_json::Value,
    ) -> Self {
        WeightsFile {
            format: WEIGHTS_FORMAT.into(),
            version: WEIGHTS_VERSION,
            game: game.into(),
            evaluator: set.name.into(),
            features: (set.feature_names)(),
            weights: weights.to_vec(),
            training,
        }
    }

    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<(), WeightsError> {
        let mut text =
            serde_json::to_string_pretty(self).map_err(|source| WeightsError::Encode {
                path: path.to_path_buf(),
                source,
            })?;
        text.push('\n');
        Ok(write_atomic(path, text.as_bytes())?)
    }

    /// Reads `path` without checking it against an evaluator.
    pub fn read(path: &Path) -> Result<Self, WeightsError> {
        let text = crate::util::text::read_text(path).map_err(|source| WeightsError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses the text of a weights file; `path` names it in errors.
    fn parse(text: &str, path: &Path) -> Result<Self, WeightsError> {
        serde_json::from_str(text).map_err(|e| WeightsError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            why: e.to_string(),
        })
    }

    /// Reads `path` and checks it is a file of `set`'s weights for `game`.
    pub fn load<G: Game>(
        path: &Path,
        game: &str,
        set: &FeatureSet<G>,
    ) -> Result<LinearEval<G>, WeightsError> {
        Self::read(path)?.into_eval(path, game, set)
    }

    /// The evaluator of a weights file's `text` (one embedded in the
    /// program), checked as [`WeightsFile::load`] checks a file; `origin`
    /// names it in errors.
    pub fn load_text<G: Game>(
        text: &str,
        origin: &Path,
        game: &str,
        set: &FeatureSet<G>,
    ) -> Result<LinearEval<G>, WeightsError> {
        Self::parse(text, origin)?.into_eval(origin, game, set)
    }

    fn into_eval<G: Game>(
        self,
        path: &Path,
        game: &str,
        set: &FeatureSet<G>,
    ) -> Result<LinearEval<G>, WeightsError> {
        self.check(path, game, set)?;
        Ok(LinearEval::new(*set, self.weights))
    }

    /// Checks every field against `set` and `game`; `path` names the file.
    pub fn check<G: Game>(
        &self,
        path: &Path,
        game: &str,
        set: &FeatureSet<G>,
    ) -> Result<(), WeightsError> {
        let field = |field, found: String, expected: String| WeightsError::Field {
            path: path.to_path_buf(),
            field,
            found,
            expected,
        };
        if self.format != WEIGHTS_FORMAT {
            return Err(field(
                "format",
                format!("'{}'", self.format),
                format!("'{WEIGHTS_FORMAT}'"),
            ));
        }
        if self.version != WEIGHTS_VERSION {
            return Err(field(
                "version",
                self.version.to_string(),
                WEIGHTS_VERSION.to_string(),
            ));
        }
        if self.game != game {
            return Err(field(
                "game",
                format!("'{}'", self.game),
                format!("'{game}'"),
            ));
        }
        if self.evaluator != set.name {
            return Err(field(
                "evaluator",
                format!("'{}'", self.evaluator),
                format!("'{}'", set.name),
            ));
        }
        let names = (set.feature_names)();
        for (what, len) in [
            ("features", self.features.len()),
            ("weights", self.weights.len()),
        ] {
            if len != names.len() {
                return Err(field(
                    what,
                    format!("{len} long"),
                    format!("{} entries", names.len()),
                ));
            }
        }
        for (index, (found, expected)) in self.features.iter().zip(&names).enumerate() {
            if found != expected {
                return Err(WeightsError::FeatureName {
                    path: path.to_path_buf(),
                    index,
                    evaluator: set.name.into(),
                    found: found.clone(),
                    expected: expected.clone(),
                });
            }
        }
        if let Some((index, &value)) = self
            .weights
            .iter()
            .enumerate()
            .find(|(_, w)| !w.is_finite())
        {
            return Err(WeightsError::NotFinite {
                path: path.to_path_buf(),
                index,
                feature: names[index].clone(),
                value,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, Pentago};
    use crate::infer::hand::{pentago_features, HandEvaluator, PENTAGO_FEATURE_SET};
    use crate::util::scratch;

    fn saved(edit: impl FnOnce(&mut serde_json::Value)) -> (tempfile::TempDir, PathBuf) {
        let (dir, path) = scratch("w.json");
        let mut weights = (PENTAGO_FEATURE_SET.default_weights)();
        weights[3] = 7.5;
        let file = WeightsFile::new(
            "pentago",
            &PENTAGO_FEATURE_SET,
            &weights,
            serde_json::json!({"method": "test"}),
        );
        let mut v = serde_json::to_value(&file).unwrap();
        edit(&mut v);
        std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
        (dir, path)
    }

    fn load_error(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let (_dir, path) = saved(edit);
        WeightsFile::load(&path, "pentago", &PENTAGO_FEATURE_SET)
            .err()
            .unwrap()
            .to_string()
    }

    #[test]
    fn a_saved_file_loads_back_with_its_weights() {
        let (_dir, path) = scratch("w.json");
        let mut weights = (PENTAGO_FEATURE_SET.default_weights)();
        weights[0] = -1.25;
        WeightsFile::new(
            "pentago",
            &PENTAGO_FEATURE_SET,
            &weights,
            serde_json::Value::Null,
        )
        .save(&path)
        .unwrap();
        let eval = WeightsFile::load(&path, "pentago", &PENTAGO_FEATURE_SET).unwrap();
        assert_eq!(eval.weights(), weights.as_slice());
        assert_eq!(eval.name(), "pentago-features");
        let mut g = Pentago::new();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        g.play(moves[0]);
        let dot: f32 = pentago_features(&g)
            .iter()
            .zip(&weights)
            .map(|(f, w)| f * w)
            .sum();
        assert!((eval.value(&g) - dot).abs() < 1e-5);
    }

    #[test]
    fn bad_files_are_refused_naming_the_field() {
        let e = load_error(|v| v["game"] = "gomoku".into());
        assert!(
            e.contains("'game'") && e.contains("'gomoku'") && e.contains("'pentago'"),
            "{e}"
        );
        let e = load_error(|v| v["evaluator"] = "other".into());
        assert!(e.contains("'evaluator'"), "{e}");
        let e = load_error(|v| {
            v["weights"]
                .as_array_mut()
                .unwrap()
                .pop()
                .map(|_| ())
                .unwrap()
        });
        assert!(
            e.contains("'weights'") && e.contains("34 long") && e.contains("35 entries"),
            "{e}"
        );
        let e = load_error(|v| v["features"][2] = "open_three".into());
        assert!(e.contains("feature 2") && e.contains("'own_open_3'"), "{e}");
        let e = load_error(|v| v["format"] = "x".into());
        assert!(e.contains("'format'"), "{e}");
        let e = load_error(|v| v["weights"][1] = "heavy".into());
        assert!(e.contains("line") && e.contains("column"), "{e}");
        let (_dir, path) = scratch("missing.json");
        let e = WeightsFile::load(&path, "pentago", &PENTAGO_FEATURE_SET)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("missing.json") && e.contains("cannot read"),
            "{e}"
        );
    }

    #[test]
    fn an_infinite_weight_is_named() {
        let (_dir, path) = scratch("w.json");
        let mut file = WeightsFile::new(
            "pentago",
            &PENTAGO_FEATURE_SET,
            &(PENTAGO_FEATURE_SET.default_weights)(),
            serde_json::Value::Null,
        );
        file.weights[5] = f32::INFINITY;
        let e = file
            .check(&path, "pentago", &PENTAGO_FEATURE_SET)
            .unwrap_err()
            .to_string();
        assert!(e.contains("weight 5 (own_blocked_3)"), "{e}");
    }
}
