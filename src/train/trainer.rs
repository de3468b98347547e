//! The training engine behind `plies train --data ...`: any model on any
//! dataset, streamed through [`StreamLoader`], with validation, metrics
//! files, the best checkpoint, early stopping and exact resume.
//!
//! Layout of the output directory `CKPT`:
//!
//! ```text
//! CKPT/model.safetensors, config.json, README.md   the latest epoch's model
//! CKPT/best/                                      the best epoch by validation loss
//! CKPT/metrics.csv, metrics.jsonl                 one line per epoch
//! CKPT/run-state/                                 what --resume continues from
//! ```
//!
//! `--overwrite` of a used `CKPT` trains in `.CKPT.plies-staging` beside it
//! and swaps the finished run in, so `CKPT` holds the old run, whole, until
//! then; `--resume` continues an interrupted overwrite with the same
//! arguments.
//!
//! Determinism: the batches depend only on (seed, epoch, batch size, shuffle
//! buffer); the weights start from a seeded draw; the learning rate is a
//! function of the step. With the same thread count (`RAYON_NUM_THREADS`)
//! a CPU run killed at any moment and resumed ends with exactly the weights
//! of an uninterrupted run. Dropout masks are a function of (seed, step,
//! layer) ([`crate::model::dropout`]), so runs with dropout repeat and
//! resume exactly too.
//!
//! Cross-validation ([`fit_cv`]): the train and valid splits together, cut
//! by the dataset's `fold` column into the folds trained on and the folds
//! validated on; the test split is never read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{VarBuilder, VarMap};
use serde::{Deserialize, Serialize};

use super::comparison::{add_grads, keep_vars, Comparer, ComparisonConfig};
use super::loss::{to_probability, value_loss, LossKind};
use super::metrics::{self, EpochMetrics, ValidStats};
use super::policy_loss::policy_cross_entropy;
use super::regularize::{penalized_vars, penalty};
use super::run_state::{self, RunState, RunStateError, RUN_STATE_VERSION};
use crate::checkpoint::{self, CheckpointConfig, CheckpointError, CheckpointSource, TrainingInfo};
use crate::dataset::{
    Dataset, DatasetError, EncoderInfo, Split, StreamConfig, StreamError, StreamLoader,
};
use crate::encode::{EncoderSpec, Perspective, Symmetries};
use crate::model::{
    build, seeded_init, trainable_vars, Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig,
    MdrnnConfig, MlpNetConfig, ModelConfig, ModelError, OutputActivation, ResNetConfig, WeightInit,
    F32_BYTES,
};
use crate::optim::{clip_grad_norm, AnyOptimizer, LrSchedule, OptimizerConfig};
use crate::positions::children::{expander, ChildrenError, MoveRow};
use crate::util::memory::human_bytes;
use crate::util::{derive_seed, replace, seeded_rng, AtomicWriteError, DirLock, LockError};

/// Errors of the training engine; each names the file or field at fault.
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A model config that does not fit the dataset, or is malformed.
    #[error("model {source_name}: {why}")]
    Model { source_name: String, why: String },
    /// `--resume` with arguments that differ from the saved run's.
    #[error(
        "--resume: `{field}` differs from the interrupted run's (it had {saved}, now {given}); \
         rerun with the same arguments, or start over with --overwrite"
    )]
    ResumeMismatch {
        field: String,
        saved: String,
        given: String,
    },
    /// An argument out of range.
    #[error("invalid `{field}`: {why}")]
    Invalid { field: &'static str, why: String },
    #[error(
        "{dir} already holds a training run (run-state/ or metrics); pass --resume to continue \
         it or --overwrite to start over"
    )]
    Exists { dir: PathBuf },
    #[error("the loss is not finite at step {step} (epoch {epoch}); lower the learning rate or clip gradients (--clip)")]
    NotFinite { step: u64, epoch: u64 },
    #[error(transparent)]
    Dataset(Box<DatasetError>),
    #[error(transparent)]
    Stream(Box<StreamError>),
    #[error(transparent)]
    Checkpoint(Box<CheckpointError>),
    #[error(transparent)]
    RunState(Box<RunStateError>),
    #[error(transparent)]
    ModelBuild(Box<ModelError>),
    #[error(transparent)]
    Candle(Box<candle_core::Error>),
    /// Comparison training: a row whose move cannot be ranked (not legal in
    /// its position, an unreadable position), or a game without the rules.
    #[error("comparison training: {0}")]
    Children(Box<ChildrenError>),
    /// Comparison training on a dataset that has no `move_played` column.
    #[error("{data}: the dataset has no `move_played` column, which comparison training ranks; rebuild it with `plies dataset build` (it records the move played from every position)")]
    NoMoveColumn { data: PathBuf },
    /// Comparison training on a split none of whose rows has a move played.
    #[error("{data}: no row of the {split} split has a move played (column `move_played` is empty), so there is nothing to compare; build the dataset from game records")]
    NoMoves { data: PathBuf, split: &'static str },
    /// Comparison training whose batches would not fit the memory limit.
    #[error(
        "comparison training would need about {} at its peak ({} of expanded children, {} for \
         one pass), more than the memory limit of {limit}; {advice}",
        human_bytes(*needs), human_bytes(*children), human_bytes(*pass)
    )]
    ComparisonMemory {
        needs: u64,
        children: u64,
        pass: u64,
        limit: crate::util::memory::MemoryLimit,
        advice: String,
    },
    /// Another writer holds the run directory.
    #[error(transparent)]
    Locked(#[from] LockError),
}

impl From<AtomicWriteError> for FitError {
    fn from(e: AtomicWriteError) -> Self {
        FitError::Io {
            path: e.path,
            source: e.source,
        }
    }
}

macro_rules! boxed_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for FitError {
            fn from(e: $t) -> Self {
                FitError::$v(Box::new(e))
            }
        }
    )*};
}
boxed_from!(DatasetError => Dataset, StreamError => Stream, CheckpointError => Checkpoint,
    RunStateError => RunState, ModelError => ModelBuild, candle_core::Error => Candle);

/// The learning-rate schedule, in epochs where it has a length.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScheduleSpec {
    #[default]
    Constant,
    /// Multiply by `gamma` every `every_epochs` epochs (`StepLR`).
    Step { every_epochs: usize, gamma: f64 },
    /// Half a cosine from the base rate to `eta_min` over the whole run.
    Cosine { eta_min: f64 },
}

impl ScheduleSpec {
    /// Parses `constant`, `step:EPOCHS[:GAMMA]` (gamma 0.1 by default) or
    /// `cosine[:ETA_MIN]`.
    pub fn parse(s: &str) -> Result<Self, FitError> {
        let parts: Vec<&str> = s.split(':').collect();
        let bad = |why: &str| FitError::Invalid {
            field: "schedule",
            why: format!(
                "{s:?}: {why} (expected constant, step:EPOCHS[:GAMMA] or cosine[:ETA_MIN])"
            ),
        };
        let num = |t: &str| t.parse::<f64>().map_err(|_| bad("not a number"));
        match parts.as_slice() {
            ["constant"] => Ok(Self::Constant),
            ["step", e] | ["step", e, _] => {
                let every_epochs = e
                    .parse::<usize>()
                    .map_err(|_| bad("EPOCHS is not a count"))?;
                if every_epochs == 0 {
                    return Err(bad("EPOCHS must be at least 1"));
                }
                let gamma = match parts.get(2) {
                    Some(g) => num(g)?,
                    None => 0.1,
                };
                Ok(Self::Step {
                    every_epochs,
                    gamma,
                })
            }
            ["cosine"] => Ok(Self::Cosine { eta_min: 0.0 }),
            ["cosine", m] => Ok(Self::Cosine { eta_min: num(m)? }),
            _ => Err(bad("unknown schedule")),
        }
    }

    /// The schedule in optimizer steps.
    pub fn to_steps(
        &self,
        batches_per_epoch: u64,
        epochs: usize,
        warmup_steps: usize,
    ) -> LrSchedule {
        let per = batches_per_epoch.max(1) as usize;
        let main = match *self {
            Self::Constant => LrSchedule::Constant,
            Self::Step {
                every_epochs,
                gamma,
            } => LrSchedule::Step {
                step_size: every_epochs * per,
                gamma,
            },
            Self::Cosine { eta_min } => LrSchedule::Cosine {
                t_max: (epochs * per).saturating_sub(warmup_steps).max(1),
                eta_min,
            },
        };
        if warmup_steps > 0 {
            LrSchedule::Warmup {
                warmup_steps,
                start_factor: 1.0 / 3.0,
                then: Box::new(main),
            }
        } else {
            main
        }
    }
}

/// Everything a run depends on.
#[derive(Clone, Debug)]
pub struct FitConfig {
    pub data: PathBuf,
    pub out: PathBuf,
    /// The model (input geometry already checked against the dataset).
    pub model: ModelConfig,
    /// Where the model came from, for messages and the model card.
    pub model_source: String,
    /// Starting weights (from a checkpoint); `None` draws them from `seed`.
    pub init_weights: Option<HashMap<String, Tensor>>,
    pub optimizer: OptimizerConfig,
    pub loss: LossKind,
    pub l1: f64,
    pub l2: f64,
    /// Global gradient-norm clipping.
    pub clip: Option<f64>,
    pub schedule: ScheduleSpec,
    pub warmup_steps: usize,
    pub epochs: usize,
    pub batch_size: usize,
    pub buffer_rows: usize,
    pub seed: u64,
    /// Stop after this many epochs without a better validation loss.
    pub patience: Option<usize>,
    /// Save the run state every this many steps (0: only at epoch ends).
    pub save_every: u64,
    /// `cpu`, `cuda:0`, ...: recorded, part of the fingerprint.
    pub device_name: String,
    pub resume: bool,
    pub overwrite: bool,
    pub quiet: bool,
    /// Comparison training (rank the move played first) instead of value
    /// regression on the labels; `None`: value regression.
    pub comparison: Option<ComparisonConfig>,
    /// Weight of the policy head's cross-entropy against the dataset's
    /// policy targets, added to the value loss (0: value only). Needs a
    /// model with a policy head.
    pub policy_weight: f64,
    /// Serve each training example mapped by a random board symmetry of
    /// its encoder ([`crate::encode::Symmetries`]); refused for encoders
    /// that declare none, and with comparison or policy training.
    pub augment: bool,
}

impl FitConfig {
    /// The arguments a resumed run must share with the interrupted one.
    pub fn fingerprint(&self, manifest_sha256: &str) -> serde_json::Value {
        let mut v = serde_json::json!({
            "dataset_manifest_sha256": manifest_sha256,
            "model": self.model,
            "model_source": self.model_source,
            "optimizer": self.optimizer,
            "loss": self.loss,
            "l1": self.l1,
            "l2": self.l2,
            "clip": self.clip,
            "schedule": self.schedule,
            "warmup_steps": self.warmup_steps,
            "epochs": self.epochs,
            "batch": self.batch_size,
            "buffer_rows": self.buffer_rows,
            "seed": self.seed,
            "patience": self.patience,
            "device": self.device_name,
        });
        // Only comparison runs carry the key, so value runs saved before it
        // existed still resume.
        if let (Some(c), Some(obj)) = (&self.comparison, v.as_object_mut()) {
            obj.insert("comparison".into(), serde_json::json!(c));
        }
        // Likewise only augmented runs carry the flag.
        if let (true, Some(obj)) = (self.augment, v.as_object_mut()) {
            obj.insert("augment".into(), serde_json::json!(true));
        }
        // Likewise only value+policy runs carry their weight.
        if let (true, Some(obj)) = (self.policy_weight > 0.0, v.as_object_mut()) {
            obj.insert(
                "policy_weight".into(),
                serde_json::json!(self.policy_weight),
            );
        }
        v
    }

    fn validate(&self) -> Result<(), FitError> {
        let nonneg = |field: &'static str, v: f64| {
            if v.is_finite() && v >= 0.0 {
                Ok(())
            } else {
                Err(FitError::Invalid {
                    field,
                    why: format!("{v}, expected a finite number >= 0"),
                })
            }
        };
        nonneg("l1", self.l1)?;
        nonneg("l2", self.l2)?;
        nonneg("policy_weight", self.policy_weight)?;
        if self.policy_weight > 0.0 && !self.model.has_policy() {
            return Err(FitError::Invalid {
                field: "policy_weight",
                why: format!(
                    "{}, but {} has no policy head",
                    self.policy_weight, self.model_source
                ),
            });
        }
        if self.augment && (self.policy_weight > 0.0 || self.comparison.is_some()) {
            return Err(FitError::Invalid {
                field: "augment",
                why: "only value training is augmented (policy targets and compared moves are not mapped)".into(),
            });
        }
        if self.policy_weight > 0.0 && self.comparison.is_some() {
            return Err(FitError::Invalid {
                field: "policy_weight",
                why: "applies to value training, not the comparison objective".into(),
            });
        }
        if let Some(c) = self.clip {
            nonneg("clip", c)?;
        }
        if self.epochs == 0 {
            return Err(FitError::Invalid {
                field: "epochs",
                why: "0, expected at least 1".into(),
            });
        }
        if let Some(c) = &self.comparison {
            c.validate()?;
        }
        if self.batch_size == 0 {
            return Err(FitError::Invalid {
                field: "batch",
                why: "0, expected at least 1".into(),
            });
        }
        self.optimizer.validate().map_err(|e| FitError::Invalid {
            field: "optimizer",
            why: e.to_string(),
        })?;
        self.loss
            .check_output(self.model.output())
            .map_err(|e| FitError::Invalid {
                field: "loss",
                why: e.to_string(),
            })?;
        // Weights, gradients and the optimizer's state, before any is made.
        let values = 2 + self.optimizer.state_per_param();
        self.model
            .check_memory(F32_BYTES * values)
            .map_err(|e| FitError::Model {
                source_name: self.model_source.clone(),
                why: e.to_string(),
            })?;
        Ok(())
    }
}

/// What a run did.
#[derive(Clone, Debug)]
pub struct FitReport {
    pub history: Vec<EpochMetrics>,
    pub best_epoch: Option<usize>,
    pub best_valid_loss: Option<f64>,
    pub stopped_early: bool,
    pub steps: u64,
    /// The run had already finished: nothing was trained.
    pub already_finished: bool,
}

impl FitReport {
    pub fn table(&self) -> crate::report::Table {
        metrics::table(&self.history, self.best_epoch)
    }
}

/// The model presets `--model` accepts by name.
pub const PRESETS: [&str; 6] = [
    "linear",
    "mlp",
    "cnn3",
    "resnet-tiny",
    "resnet-small",
    "mdrnn",
];

/// The model preset `name` for inputs of `input` (see [`PRESETS`]).
pub fn preset(name: &str, input: InputShape) -> Option<ModelConfig> {
    Some(match name {
        "linear" => ModelConfig::Linear(LinearConfig::new(input)),
        "mlp" => ModelConfig::Mlp(MlpNetConfig {
            inputs: input.features(),
            hidden: vec![256, 64],
            activation: crate::model::Activation::Tanh,
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: OutputActivation::Sigmoid,
        }),
        "cnn3" => ModelConfig::Cnn3(Cnn3NetConfig::new(input, Cnn3Config::default())),
        "resnet-tiny" => ModelConfig::Resnet(ResNetConfig::tiny(input)),
        "resnet-small" => ModelConfig::Resnet(ResNetConfig::small(input)),
        "mdrnn" => ModelConfig::Mdrnn(MdrnnConfig {
            input,
            ..MdrnnConfig::stones(input.planes[1], 10)
        }),
        _ => return None,
    })
}

/// Resolves `--model`: a preset name ([`PRESETS`], its input taken from the
/// dataset's encoder), a JSON file of a [`ModelConfig`] (a missing `input`,
/// or an mlp's `inputs`, is filled from the encoder), or a checkpoint
/// directory or `ckpt:hf:ORG/NAME[@REV]` (its config and weights, to
/// continue training from or fine-tune). The
/// result fits the dataset, or the error names the field that does not.
pub fn resolve_model(
    spec: &str,
    dataset: &Dataset,
) -> Result<(ModelConfig, Option<HashMap<String, Tensor>>), FitError> {
    let ds = dataset.spec();
    let enc = &ds.encoder;
    let input = InputShape::new(enc.shape, enc.globals);
    let bad = |why: String| FitError::Model {
        source_name: spec.to_string(),
        why,
    };
    let (cfg, weights) = if CheckpointSource::names_checkpoint(spec) {
        let dir = CheckpointSource::parse(spec)?.directory()?;
        let ck = checkpoint::load(&dir, None, None)?;
        let cp = dir.join(checkpoint::CONFIG_FILE).display().to_string();
        if ck.config.game != ds.game {
            return Err(FitError::Model {
                source_name: cp,
                why: format!(
                    "field `game` is {:?} but the dataset {} is {:?}",
                    ck.config.game,
                    dataset.dir().display(),
                    ds.game
                ),
            });
        }
        if ck.config.encoder.name != enc.name || ck.config.encoder.version != enc.version {
            return Err(FitError::Model {
                source_name: cp,
                why: format!(
                    "field `encoder.name` is {:?} v{} but the dataset {} is encoded with {:?} v{}",
                    ck.config.encoder.name,
                    ck.config.encoder.version,
                    dataset.dir().display(),
                    enc.name,
                    enc.version
                ),
            });
        }
        (ck.config.model.clone(), Some(ck.tensors))
    } else if let Some(cfg) = preset(spec, input) {
        (cfg, None)
    } else if Path::new(spec).is_file() {
        let path = Path::new(spec);
        let text = crate::util::text::read_text(path).map_err(|source| FitError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut v: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
        if let Some(obj) = v.as_object_mut() {
            let is_mlp = obj.get("kind").and_then(|k| k.as_str()) == Some("mlp");
            if is_mlp && !obj.contains_key("inputs") {
                obj.insert("inputs".into(), input.features().into());
            } else if !is_mlp && !obj.contains_key("input") {
                obj.insert(
                    "input".into(),
                    serde_json::json!({"planes": enc.shape, "globals": enc.globals}),
                );
            }
        }
        let cfg: ModelConfig = serde_json::from_value(v).map_err(|e| {
            bad(format!(
                "not a model config ({e}); expected {{\"kind\": \"linear|mlp|cnn3|resnet|mdrnn\", ...}}"
            ))
        })?;
        (cfg, None)
    } else {
        return Err(bad(format!(
            "neither a preset ({}), a JSON file nor a checkpoint directory",
            PRESETS.join(", ")
        )));
    };
    cfg.validate().map_err(|e| bad(e.to_string()))?;
    cfg.check_input(enc.shape, enc.globals).map_err(|e| {
        bad(format!(
            "{e} (dataset {} uses encoder {} with planes {:?} and {} globals)",
            dataset.dir().display(),
            enc.name,
            enc.shape,
            enc.globals
        ))
    })?;
    Ok((cfg, weights))
}

/// The board symmetries of a dataset's encoder (from the registry; `None`
/// when the game or encoder is unknown there).
pub fn encoder_symmetries(game: &str, enc: &EncoderInfo) -> Symmetries {
    use crate::games::{GameKind, GameSupport};
    game.parse::<GameKind>()
        .ok()
        .and_then(|kind| {
            with_game!(kind, G => G::encoder(&enc.name, enc.shape[2]).ok().map(|e| e.symmetries()))
        })
        .unwrap_or_default()
}

/// The policy targets' length for a dataset of `game` with planes of
/// `shape`: every board point on each of the game's policy planes
/// ([`crate::game::Game::POLICY_PLANES`]). The model's policy head must
/// give as many logits.
fn policy_len_for(cfg: &FitConfig, game: &str, shape: [usize; 3]) -> Result<usize, FitError> {
    use crate::games::GameKind;
    let planes = game.parse::<GameKind>().map_or(1, |k| k.policy_planes());
    let len = planes * shape[1] * shape[2];
    match cfg.model.policy_len() {
        Some(n) if n == len => Ok(len),
        found => Err(FitError::Invalid {
            field: "policy_weight",
            why: format!(
                "{}, but {} gives {} policy logits where {game} needs {len} \
                 ({planes} plane(s) of {}x{} points)",
                cfg.policy_weight,
                cfg.model_source,
                found.map_or("no".into(), |n| n.to_string()),
                shape[1],
                shape[2]
            ),
        }),
    }
}

/// The encoder's full spec (its perspective from the registry; datasets
/// record only name, version and shape).
pub fn encoder_spec(game: &str, enc: &EncoderInfo) -> EncoderSpec {
    use crate::games::{GameKind, GameSupport};
    // The board's width is its size (the number of columns where the board
    // is not square).
    let perspective = game
        .parse::<GameKind>()
        .ok()
        .and_then(|kind| {
            with_game!(kind, G => G::encoder(&enc.name, enc.shape[2]).ok().map(|e| e.perspective()))
        })
        .unwrap_or(Perspective::SideToMove);
    EncoderSpec {
        name: enc.name.clone(),
        version: enc.version,
        shape: enc.shape,
        globals: enc.globals,
        perspective,
    }
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> FitError + '_ {
    move |source| FitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// All variables (running statistics included), copied to the CPU.
fn snapshot(varmap: &VarMap) -> Result<HashMap<String, Tensor>, FitError> {
    let data = match varmap.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    let mut out = HashMap::new();
    for (k, v) in data.iter() {
        out.insert(k.clone(), v.as_tensor().to_device(&Device::Cpu)?.copy()?);
    }
    Ok(out)
}

fn restore(varmap: &VarMap, tensors: &HashMap<String, Tensor>, what: &str) -> Result<(), FitError> {
    let data = match varmap.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    for (k, v) in data.iter() {
        let t = tensors.get(k).ok_or_else(|| FitError::Invalid {
            field: "weights",
            why: format!("{what} lacks tensor `{k}`"),
        })?;
        if t.dims() != v.dims() {
            return Err(FitError::Invalid {
                field: "weights",
                why: format!(
                    "{what}: tensor `{k}` has shape {:?}, expected {:?}",
                    t.dims(),
                    v.dims()
                ),
            });
        }
        v.set(&t.to_device(v.device())?.to_dtype(v.dtype())?)?;
    }
    Ok(())
}

fn describe(v: Option<&serde_json::Value>) -> String {
    match v {
        None => "nothing".into(),
        Some(v) => v.to_string(),
    }
}

/// The first field where two fingerprints differ (nested objects by path).
fn first_difference(
    saved: &serde_json::Value,
    given: &serde_json::Value,
    prefix: &str,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    match (saved, given) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, &path) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some((path, describe(x), describe(y))),
                }
            }
            None
        }
        (a, b) if a != b => Some((prefix.to_string(), a.to_string(), b.to_string())),
        _ => None,
    }
}

/// Writes the model files into `out` itself: an atomic checkpoint in a
/// hidden sibling, then each file renamed into place.
fn save_final(
    out: &Path,
    cfg: &CheckpointConfig,
    tensors: &HashMap<String, Tensor>,
) -> Result<(), FitError> {
    let staging = out.join(".final");
    checkpoint::save(&staging, cfg, tensors)?;
    for f in [
        checkpoint::WEIGHTS_FILE,
        checkpoint::CONFIG_FILE,
        checkpoint::CARD_FILE,
    ] {
        let (from, to) = (staging.join(f), out.join(f));
        std::fs::rename(&from, &to).map_err(io_err(&to))?;
    }
    std::fs::remove_dir_all(&staging).map_err(io_err(&staging))?;
    Ok(())
}

/// Undoes what a kill in the middle of a non-exchanging [`replace::swap_in`]
/// of `out` left in `.OUT.plies-old`: the complete run wins. That is `out`
/// once it holds a finished run (the swap got that far); otherwise the old
/// run goes back into place.
fn restore_interrupted_swap(out: &Path) -> Result<(), FitError> {
    let old = replace::old_path(out).map_err(io_err(out))?;
    if !old.is_dir() {
        return Ok(());
    }
    if run_state::finished(out) {
        return replace::remove_if_there(&old).map_err(io_err(&old));
    }
    replace::remove_if_there(out).map_err(io_err(out))?;
    std::fs::rename(&old, out).map_err(io_err(out))
}

/// Puts the finished run in `work` at `out`: a no-op when the run was
/// written in place; after an `--overwrite`, the staged run swaps with the
/// old one in one step ([`replace::swap_in`]), so `out` holds a complete run
/// at every instant.
fn publish(work: &Path, out: &Path) -> Result<(), FitError> {
    if work != out {
        replace::swap_in(work, out)?;
    }
    Ok(())
}

/// Seed streams of the comparison objective's move sampling.
const SAMPLE_STREAM: u64 = 0x636f_6d70;
const VALID_SAMPLE_STREAM: u64 = 0x7661_6c69;

/// The batch's rows that have a move played, for comparison training.
fn move_rows(b: &crate::dataset::TensorBatch) -> Vec<MoveRow> {
    b.text
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            Some(MoveRow {
                game_id: t.game_id.clone(),
                ply: b.ply[i],
                plies_to_end: b.plies_to_end[i],
                position: t.position.clone(),
                played: t.move_played.clone()?,
            })
        })
        .collect()
}

fn labels_for(
    b: &crate::dataset::TensorBatch,
    perspective: Perspective,
) -> Result<Tensor, candle_core::Error> {
    let flat = b.labels.flatten_all()?;
    match perspective {
        Perspective::SideToMove => Ok(flat),
        Perspective::FirstPlayer => {
            let v: Vec<f32> = flat
                .to_vec1::<f32>()?
                .into_iter()
                .zip(&b.side_to_move)
                .map(|(l, &s)| if s == 0 { l } else { 1.0 - l })
                .collect();
            Tensor::from_vec(v, b.len, b.labels.device())
        }
    }
}

/// Which rows a cross-validation run trains and validates on: the rows of
/// the train and valid splits whose fold is in `train_folds`, resp.
/// `valid_folds` (dataset folds, `0..k`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CvFolds {
    pub train_folds: Vec<u8>,
    pub valid_folds: Vec<u8>,
}

/// Trains `cfg.model` on `cfg.data` (see the module docs).
pub fn fit(cfg: &FitConfig, device: &Device) -> Result<FitReport, FitError> {
    fit_cv(cfg, None, device)
}

/// [`fit`] on the folds `cv` of the train and valid splits (`None`: the
/// train split, validated on the valid split).
pub fn fit_cv(
    cfg: &FitConfig,
    cv: Option<&CvFolds>,
    device: &Device,
) -> Result<FitReport, FitError> {
    if device.is_cpu() && rayon::current_num_threads() > 1 {
        // The steps' serial parts on a pool thread: see on_compute_pool.
        return crate::model::kernels::on_compute_pool(|| fit_cv_here(cfg, cv, device));
    }
    fit_cv_here(cfg, cv, device)
}

fn fit_cv_here(
    cfg: &FitConfig,
    cv: Option<&CvFolds>,
    device: &Device,
) -> Result<FitReport, FitError> {
    cfg.validate()?;
    let dataset = Dataset::open(&cfg.data)?;
    let spec = dataset.spec();
    // The loaders' sizes, before the output directory is touched.
    let sizes = StreamConfig {
        batch_size: cfg.batch_size,
        buffer_rows: cfg.buffer_rows.max(cfg.batch_size),
        ..StreamConfig::default()
    };
    crate::dataset::stream::check_memory(&sizes, &spec.encoder)?;
    cfg.model
        .check_input(spec.encoder.shape, spec.encoder.globals)
        .map_err(|e| FitError::Model {
            source_name: cfg.model_source.clone(),
            why: e.to_string(),
        })?;
    let symmetries = if cfg.augment {
        let s = encoder_symmetries(&spec.game, &spec.encoder);
        if s == Symmetries::None {
            return Err(FitError::Invalid {
                field: "augment",
                why: format!(
                    "the encoder {} of {} declares no board symmetries",
                    spec.encoder.name, spec.game
                ),
            });
        }
        s
    } else {
        Symmetries::None
    };
    let encoder = encoder_spec(&spec.game, &spec.encoder);
    let children = match &cfg.comparison {
        None => None,
        Some(cmp) => {
            if dataset.schema().field_with_name("move_played").is_err() {
                return Err(FitError::NoMoveColumn {
                    data: cfg.data.clone(),
                });
            }
            let x =
                expander(&spec.game, &spec.encoder).map_err(|e| FitError::Children(Box::new(e)))?;
            let limit = crate::util::memory::MemoryLimit::current().map_err(|error| {
                FitError::ModelBuild(Box::new(crate::model::ModelError::Memory {
                    model: cfg.model.kind().into(),
                    error,
                }))
            })?;
            cmp.peak(
                &cfg.model,
                spec.encoder.shape,
                spec.encoder.globals,
                x.widest(),
                rayon::current_num_threads(),
            )
            .check(cmp, &limit)?;
            Some(x)
        }
    };
    let mut fingerprint = cfg.fingerprint(dataset.manifest_sha256());
    if let (Some(cv), Some(obj)) = (cv, fingerprint.as_object_mut()) {
        obj.insert("cv".into(), serde_json::json!(cv));
    }
    let out = &cfg.out;
    let _lock = DirLock::acquire(out)?;
    restore_interrupted_swap(out)?;
    // An `--overwrite` of a used directory trains beside it, in `staged`,
    // and swaps in only when finished: until then `out` keeps the old run,
    // whole and readable.
    let staged = replace::staging_path(out).map_err(io_err(out))?;

    // Where to start, and where this run writes (`work`).
    let mut work = out.clone();
    let mut saved = None;
    if cfg.resume {
        // An interrupted overwrite with these arguments continues first.
        if let Some(dir) = run_state::find(&staged) {
            let s = run_state::load(&dir)?;
            if first_difference(&s.state.args, &fingerprint, "").is_none() {
                work = staged.clone();
                saved = Some(s);
            }
        }
        if saved.is_none() {
            if let Some(dir) = run_state::find(out) {
                let s = run_state::load(&dir)?;
                // With --overwrite too, a run of other arguments is replaced.
                let other = first_difference(&s.state.args, &fingerprint, "").is_some();
                if !(cfg.overwrite && other) {
                    saved = Some(s);
                }
            }
        }
    }
    if work == *out {
        // An abandoned overwrite, or the old run a swap left behind.
        replace::remove_if_there(&staged).map_err(io_err(&staged))?;
    }
    if saved.is_none() {
        let used = run_state::find(out).is_some()
            || out.join(metrics::METRICS_JSONL).exists()
            || out.join(metrics::METRICS_CSV).exists();
        if used && !cfg.overwrite && !cfg.resume {
            return Err(FitError::Exists { dir: out.clone() });
        }
        if used && cfg.overwrite {
            // The old run is replaced only by a finished new one, and the
            // new one starts only once its inputs are known good.
            dataset.check_shards()?;
            work = staged.clone();
        }
        run_state::remove(&work)?;
        for f in [metrics::METRICS_CSV, metrics::METRICS_JSONL] {
            let p = work.join(f);
            if p.exists() {
                std::fs::remove_file(&p).map_err(io_err(&p))?;
            }
        }
    }
    if let Some(s) = &saved {
        if let Some((field, was, now)) = first_difference(&s.state.args, &fingerprint, "") {
            return Err(FitError::ResumeMismatch {
                field,
                saved: was,
                given: now,
            });
        }
    }
    let out = &work;
    std::fs::create_dir_all(out).map_err(io_err(out))?;

    // Model and optimizer.
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
    let net = build(&cfg.model, vb)?;
    seeded_init(
        &varmap,
        &cfg.model,
        &mut seeded_rng(cfg.seed, 0x6d6f_6465),
        device,
    )?;
    if let Some(w) = &cfg.init_weights {
        restore(&varmap, w, &cfg.model_source)?;
    }
    let tvars: Vec<Var> = trainable_vars(&varmap);
    let pvars = penalized_vars(&varmap);
    let mut opt = AnyOptimizer::new(tvars.clone(), &cfg.optimizer)?;
    let output = cfg.model.output();

    let mut st = RunState {
        version: RUN_STATE_VERSION,
        args: fingerprint,
        epoch: 0,
        batch: 0,
        step: 0,
        train_loss_sum: 0.0,
        train_batches: 0,
        train_positions: 0,
        epoch_seconds: 0.0,
        best_valid_loss: None,
        best_epoch: None,
        bad_epochs: 0,
        history: Vec::new(),
        finished: false,
        stopped_early: false,
    };
    if let Some(s) = saved {
        restore(&varmap, &s.weights, "the run state's weights")?;
        opt.load_state(&s.optimizer)?;
        st = s.state;
        metrics::rewrite(out, &st.history).map_err(io_err(out))?;
        if st.finished {
            publish(out, &cfg.out)?;
            return Ok(FitReport {
                history: st.history.clone(),
                best_epoch: st.best_epoch,
                best_valid_loss: st.best_valid_loss,
                stopped_early: st.stopped_early,
                steps: st.step,
                already_finished: true,
            });
        }
    }

    // Loaders.
    let policy_len = if cfg.policy_weight > 0.0 {
        policy_len_for(cfg, &spec.game, spec.encoder.shape)?
    } else {
        0
    };
    let stream = |split: Split| StreamConfig {
        policy_len,
        split: Some(split),
        splits: cv.map(|_| vec![Split::Train, Split::Valid]),
        folds: cv.map(|c| match split {
            Split::Train => c.train_folds.clone(),
            _ => c.valid_folds.clone(),
        }),
        batch_size: cfg.batch_size,
        buffer_rows: cfg.buffer_rows.max(cfg.batch_size),
        seed: cfg.seed,
        drop_last: false,
        with_text: cfg.comparison.is_some(),
        ..StreamConfig::default()
    };
    // Only the training examples are mapped; validation reads the data as is.
    let train = StreamLoader::new(
        &dataset,
        StreamConfig {
            symmetries,
            ..stream(Split::Train)
        },
    )?;
    if train.is_empty() {
        return Err(FitError::Invalid {
            field: "data",
            why: format!(
                "{}: the train split has no rows{}",
                cfg.data.display(),
                if cv.is_some() {
                    " in the training folds"
                } else {
                    ""
                }
            ),
        });
    }
    let valid = StreamLoader::new(&dataset, stream(Split::Valid))?;
    let per_epoch = train.num_batches();
    let schedule = cfg
        .schedule
        .to_steps(per_epoch, cfg.epochs, cfg.warmup_steps);
    schedule.validate().map_err(|e| FitError::Invalid {
        field: "schedule",
        why: e.to_string(),
    })?;
    let base_lr = cfg.optimizer.lr();

    let save_state = |st: &RunState, opt: &AnyOptimizer| -> Result<(), FitError> {
        let o: HashMap<String, Tensor> = opt
            .state()?
            .into_iter()
            .map(|(k, t)| Ok((k, t.to_device(&Device::Cpu)?)))
            .collect::<Result<_, candle_core::Error>>()?;
        run_state::save(out, st, &snapshot(&varmap)?, &o)?;
        Ok(())
    };
    let ck_config = |st: &RunState, best: bool| -> CheckpointConfig {
        let last = st.history.last();
        CheckpointConfig::new(
            &spec.game,
            encoder.clone(),
            cfg.model.clone(),
            TrainingInfo {
                method: if cfg.comparison.is_some() {
                    "comparison".into()
                } else {
                    "supervised".into()
                },
                seed: Some(cfg.seed),
                dataset_manifest_sha256: Some(dataset.manifest_sha256().to_string()),
                dataset: Some(cfg.data.display().to_string()),
                examples: st.history.len() as u64 * train.len(),
                hyperparameters: st.args.clone(),
                metrics: serde_json::json!({
                    "epoch": last.map(|m| m.epoch),
                    "kind": if best { "best by validation loss" } else { "last epoch" },
                    "last": last,
                    "best_epoch": st.best_epoch,
                    "best_valid_loss": st.best_valid_loss,
                }),
            },
        )
    };

    while (st.epoch as usize) < cfg.epochs {
        let epoch = st.epoch;
        let started = Instant::now();
        let pb = progress_bar(cfg.quiet, train.len(), epoch as usize + 1, cfg.epochs);
        pb.set_position((st.batch * cfg.batch_size as u64).min(train.len()));
        pb.reset_eta();
        let mut lr = schedule.lr(base_lr, st.step as usize);
        let epoch_from_start = st.batch == 0;
        let mut moved_rows = 0u64;
        for batch in train.epoch_tensors_from(epoch, st.batch, device) {
            let b = batch?;
            lr = schedule.lr(base_lr, st.step as usize);
            opt.set_learning_rate(lr);
            let labels = labels_for(&b, encoder.perspective)?;
            let value_part = |weight: f64| -> Result<Tensor, FitError> {
                let out_v = crate::model::dropout::with_step(cfg.seed, st.step, || {
                    net.forward(&b.planes, b.globals.as_ref(), true)
                })?;
                let data_loss = value_loss(cfg.loss, output, &out_v.value, &labels)?;
                let data_loss = match (&b.policy, &out_v.policy) {
                    (Some(target), Some(logits)) => {
                        let ce = policy_cross_entropy(logits, target)?;
                        (data_loss + ce.affine(cfg.policy_weight, 0.0)?)?
                    }
                    _ => data_loss,
                };
                let data_loss = if weight == 1.0 {
                    data_loss
                } else {
                    data_loss.affine(weight, 0.0)?
                };
                Ok(match penalty(&pvars, cfg.l1, cfg.l2)? {
                    Some(p) => (&data_loss + p)?,
                    None => data_loss,
                })
            };
            let (lv, mut grads) = match (&cfg.comparison, &children) {
                (Some(cmp), Some(x)) => {
                    let rows = move_rows(&b);
                    moved_rows += rows.len() as u64;
                    let comparer = Comparer {
                        net: net.as_ref(),
                        expander: x.as_ref(),
                        cfg: cmp,
                        shape: spec.encoder.shape,
                        device,
                        vars: &tvars,
                    };
                    let scale = 1.0 / rows.len().max(1) as f64;
                    let seed = derive_seed(derive_seed(cfg.seed, SAMPLE_STREAM), st.step);
                    let c = comparer.run(&rows, scale, seed, true)?;
                    let rest = value_part(cmp.value_weight)?;
                    let lv = c.loss_sum * scale + rest.to_dtype(DType::F64)?.to_scalar::<f64>()?;
                    let mut g = c.grads;
                    add_grads(&mut g, keep_vars(rest.backward()?, &tvars))?;
                    (lv, g.ok_or(candle_core::Error::Msg("no gradient".into()))?)
                }
                _ => {
                    let loss = value_part(1.0)?;
                    let lv = loss.to_dtype(DType::F64)?.to_scalar::<f64>()?;
                    (lv, loss.backward()?)
                }
            };
            if !lv.is_finite() {
                return Err(FitError::NotFinite {
                    step: st.step,
                    epoch: epoch + 1,
                });
            }
            if let Some(c) = cfg.clip {
                let norm = clip_grad_norm(&mut grads, &tvars, c)?;
                if !norm.is_finite() {
                    return Err(FitError::NotFinite {
                        step: st.step,
                        epoch: epoch + 1,
                    });
                }
            }
            opt.step(&grads)?;
            st.step += 1;
            st.batch += 1;
            st.train_loss_sum += lv;
            st.train_batches += 1;
            st.train_positions += b.len as u64;
            pb.inc(b.len as u64);
            if cfg.save_every > 0 && st.step.is_multiple_of(cfg.save_every) {
                let mut snap = st.clone();
                snap.epoch_seconds += started.elapsed().as_secs_f64();
                save_state(&snap, &opt)?;
            }
        }
        pb.finish_and_clear();
        if children.is_some() && epoch_from_start && moved_rows == 0 {
            return Err(FitError::NoMoves {
                data: cfg.data.clone(),
                split: "train",
            });
        }
        let train_seconds = st.epoch_seconds + started.elapsed().as_secs_f64();

        // Validation.
        let mut vs = ValidStats::default();
        let (mut cmp_loss, mut cmp_top1, mut cmp_n) = (0.0, 0.0, 0usize);
        for (i, batch) in valid.epoch_tensors(0, device).enumerate() {
            let b = batch?;
            let labels = labels_for(&b, encoder.perspective)?;
            let forward = net.forward(&b.planes, b.globals.as_ref(), false)?;
            let value = forward.value;
            let mut l = value_loss(cfg.loss, output, &value, &labels)?
                .to_dtype(DType::F64)?
                .to_scalar::<f64>()?;
            // The validation loss (which picks `best/`) is the trained one.
            if let (Some(target), Some(logits)) = (&b.policy, &forward.policy) {
                let ce = policy_cross_entropy(logits, target)?;
                l += cfg.policy_weight * ce.to_dtype(DType::F64)?.to_scalar::<f64>()?;
            }
            let probs = to_probability(output, &value)?.to_vec1::<f32>()?;
            vs.add(l, &probs, &labels.to_vec1::<f32>()?);
            if let (Some(cmp), Some(x)) = (&cfg.comparison, &children) {
                let comparer = Comparer {
                    net: net.as_ref(),
                    expander: x.as_ref(),
                    cfg: cmp,
                    shape: spec.encoder.shape,
                    device,
                    vars: &tvars,
                };
                // The same draws every epoch, so epochs compare.
                let seed = derive_seed(derive_seed(cfg.seed, VALID_SAMPLE_STREAM), i as u64);
                let c = comparer.run(&move_rows(&b), 1.0, seed, false)?;
                cmp_loss += c.loss_sum;
                cmp_top1 += c.top1_sum;
                cmp_n += c.positions;
            }
        }
        let (value_valid_loss, valid_mse, valid_mae, valid_acc) = vs.summary();
        let (valid_loss, valid_top1) = match &cfg.comparison {
            Some(cmp) if cmp_n > 0 => (
                Some(cmp_loss / cmp_n as f64 + cmp.value_weight * value_valid_loss.unwrap_or(0.0)),
                Some(cmp_top1 / cmp_n as f64),
            ),
            Some(_) => (None, None),
            None => (value_valid_loss, None),
        };
        let train_loss = st.train_loss_sum / st.train_batches.max(1) as f64;
        let m = EpochMetrics {
            epoch: epoch as usize + 1,
            step: st.step,
            lr,
            train_loss,
            valid_loss,
            valid_mse,
            valid_mae,
            valid_acc,
            valid_top1,
            seconds: st.epoch_seconds + started.elapsed().as_secs_f64(),
            positions_per_s: st.train_positions as f64 / train_seconds.max(1e-9),
        };
        metrics::append(out, &m).map_err(io_err(out))?;
        st.history.push(m);
        let key = valid_loss.unwrap_or(train_loss);
        let improved = st.best_valid_loss.is_none_or(|b| key < b);
        if improved {
            st.best_valid_loss = Some(key);
            st.best_epoch = Some(epoch as usize + 1);
            st.bad_epochs = 0;
        } else {
            st.bad_epochs += 1;
        }
        st.epoch += 1;
        st.batch = 0;
        st.train_loss_sum = 0.0;
        st.train_batches = 0;
        st.train_positions = 0;
        st.epoch_seconds = 0.0;
        if cfg.patience.is_some_and(|p| st.bad_epochs >= p) && (st.epoch as usize) < cfg.epochs {
            st.stopped_early = true;
        }
        st.finished = st.stopped_early || st.epoch as usize >= cfg.epochs;
        let tensors = snapshot(&varmap)?;
        if improved {
            checkpoint::save(&out.join("best"), &ck_config(&st, true), &tensors)?;
        }
        save_final(out, &ck_config(&st, false), &tensors)?;
        save_state(&st, &opt)?;
        if st.finished {
            publish(out, &cfg.out)?;
        }
        if st.stopped_early {
            break;
        }
    }
    Ok(FitReport {
        history: st.history.clone(),
        best_epoch: st.best_epoch,
        best_valid_loss: st.best_valid_loss,
        stopped_early: st.stopped_early,
        steps: st.step,
        already_finished: false,
    })
}

fn progress_bar(
    quiet: bool,
    positions: u64,
    epoch: usize,
    epochs: usize,
) -> indicatif::ProgressBar {
    if quiet {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(positions);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {human_pos}/{human_len} positions ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb.set_message(format!("epoch {epoch}/{epochs}"));
    pb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_parse_and_convert() {
        assert_eq!(
            ScheduleSpec::parse("constant").unwrap(),
            ScheduleSpec::Constant
        );
        assert_eq!(
            ScheduleSpec::parse("step:2:0.5").unwrap(),
            ScheduleSpec::Step {
                every_epochs: 2,
                gamma: 0.5
            }
        );
        assert_eq!(
            ScheduleSpec::parse("cosine").unwrap(),
            ScheduleSpec::Cosine { eta_min: 0.0 }
        );
        for bad in ["step", "step:0", "cosine:x", "linear"] {
            let e = ScheduleSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("schedule"), "{e}");
        }
        let s = ScheduleSpec::Step {
            every_epochs: 2,
            gamma: 0.5,
        }
        .to_steps(10, 6, 0);
        assert_eq!(s.lr(1.0, 19), 1.0);
        assert_eq!(s.lr(1.0, 20), 0.5);
        let c = ScheduleSpec::Cosine { eta_min: 0.0 }.to_steps(10, 2, 0);
        assert!(c.lr(1.0, 20).abs() < 1e-12);
    }

    #[test]
    fn fingerprint_differences_name_the_field() {
        let a = serde_json::json!({"seed": 1, "optimizer": {"kind": "sgd", "lr": 0.1}});
        let b = serde_json::json!({"seed": 1, "optimizer": {"kind": "sgd", "lr": 0.2}});
        let (field, was, now) = first_difference(&a, &b, "").unwrap();
        assert_eq!(field, "optimizer.lr");
        assert_eq!((was.as_str(), now.as_str()), ("0.1", "0.2"));
        assert!(first_difference(&a, &a, "").is_none());
    }
}
