//! The Amazons study beyond the thesis (its section 6.3 proposes
//! convolutional networks): value networks fitted by supervised regression
//! on the same database, encoded with `amazons-territory` so that they see
//! the territory the thesis' networks had to do without, each example
//! mapped by a random one of the board's 8 symmetries. A model is a
//! `plies train` preset (`resnet-tiny`, `resnet-small`, `mlp`, ...; not
//! `cnn3`, which reads planes only) or `elliott-H`: the thesis' network
//! (Elliott b = 3, H hidden units, linear output) fitted by regression
//! instead of TD(lambda), which alpha-beta runs on the plain-Rust MLP.
//!
//! A model named `MODEL+search` is fitted on search-value targets instead
//! of game results: the database's positions labelled by the values of
//! the [`ValueNetConfig::search_labels`] search (by default the good
//! player's, Lieberum's evaluation with alpha-beta to depth 2), so that
//! the network approximates that search and a search over it sees further
//! than the good player for the same depth. `MODEL+searchN` bootstraps:
//! its labels are the same search's values with `MODEL+search(N-1)` as the
//! evaluator, so each round approximates a search one depth deeper than
//! the last (the idea of TD-leaf and of search bootstrapping), at the
//! price of one relabelling of the database per round.
//!
//! Each network is an ordinary `plies train` run in `OUT/value-nets/NAME/`
//! (resumed from its run state, kept once finished), so it can be
//! inspected, fine-tuned and shared like any other checkpoint.

use super::amazons::{AmazonsExperimentConfig, AmazonsExperimentError};
use super::match_cache::file_key;
use crate::checkpoint;
use crate::dataset::Dataset;
use crate::game::Amazons;
use crate::game::{hash_of, Game};
use crate::model::{InputShape, ModelConfig};
use crate::optim::{AdamWConfig, OptimizerConfig};
use crate::positions::{label_by_search, SearchLabels};
use crate::train::loss::LossKind;
use crate::train::{fit, preset, ComparisonConfig, FitConfig, FitError, ScheduleSpec, TdNetConfig};
use crate::util::derive_seed;
use std::path::{Path, PathBuf};

/// Makes a progress bar of a length and a message (hidden when quiet).
type Progress<'a> = &'a dyn Fn(u64, &str) -> indicatif::ProgressBar;

/// The encoder of the value networks' dataset.
pub const VALUE_NET_ENCODER: &str = "amazons-territory";

/// The suffix of a model fitted on search-value targets.
pub const SEARCH_SUFFIX: &str = "+search";

/// The suffix of a model fitted by comparison training (the Bonanza
/// method): the database's played move ranked above the other legal moves.
pub const COMPARE_SUFFIX: &str = "+compare";

/// A value network's name read: its `plies train` model, the round of
/// search-value labels it learns from (0: the game results, 1: `+search`,
/// N: `+searchN`) and whether it is fitted by comparison (`+compare`, last;
/// its value term then learns those labels).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelName<'a> {
    pub base: &'a str,
    pub round: u32,
    pub compare: bool,
}

/// `name` read as a [`ModelName`], or why it cannot be.
pub fn split_model(name: &str) -> Result<ModelName<'_>, String> {
    let (rest, compare) = match name.strip_suffix(COMPARE_SUFFIX) {
        Some(rest) => (rest, true),
        None => (name, false),
    };
    let Some(at) = rest.rfind(SEARCH_SUFFIX) else {
        return Ok(ModelName {
            base: rest,
            round: 0,
            compare,
        });
    };
    let (base, round) = (&rest[..at], &rest[at + SEARCH_SUFFIX.len()..]);
    let round = match round.parse::<u32>() {
        _ if round.is_empty() => 1,
        Ok(n) if n >= 2 => n,
        _ => {
            return Err(format!(
                "{name:?}: expected MODEL{SEARCH_SUFFIX} or MODEL{SEARCH_SUFFIX}N with a round N of 2 or more"
            ))
        }
    };
    Ok(ModelName {
        base,
        round,
        compare,
    })
}

/// The name of `base`'s network of search-label round `round`.
fn round_name(base: &str, round: u32) -> String {
    match round {
        0 => base.to_string(),
        1 => format!("{base}{SEARCH_SUFFIX}"),
        n => format!("{base}{SEARCH_SUFFIX}{n}"),
    }
}

/// The stream of the value networks' seeds.
const VALUE_NET_STREAM: u64 = 0x7661_6c75_655f_6e65;

/// How the value networks are fitted.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ValueNetConfig {
    /// `plies train` model presets; empty for none.
    pub models: Vec<String>,
    pub epochs: usize,
    pub batch: usize,
    pub lr: f64,
    pub weight_decay: f64,
    /// The search whose values label the positions for `MODEL+search`.
    pub search_labels: SearchLabels,
    /// How `MODEL+compare` ranks the played move.
    pub comparison: ComparisonConfig,
}

impl Default for ValueNetConfig {
    fn default() -> Self {
        ValueNetConfig {
            // A residual network, and the thesis' network fitted by regression
            // (cnn3 reads planes only, and the encoder has globals), each on
            // the game results and on the good player's search values.
            models: vec![
                "resnet-tiny".into(),
                "elliott-80".into(),
                "resnet-tiny+search".into(),
                "elliott-80+search".into(),
            ],
            // Augmented by the 8 board symmetries: 8 epochs reach the
            // Lieberum evaluator's test error on the default database.
            epochs: 8,
            batch: 256,
            lr: 1e-3,
            weight_decay: 0.01,
            // The good player's own search: a network that approximates it
            // searched to depth 2 looks about 4 moves ahead.
            search_labels: SearchLabels {
                eval: "lieberum".into(),
                depth: 2,
                mix: 1.0,
            },
            // Every move of an Amazons opening position (about 2,000) costs
            // a territory encoding, so 64 sampled rivals a position; the
            // margin in units of the value (a result is 0 or 1, a move
            // worth 0.05 of it is a clear choice); the value term keeps
            // the scale that alpha-beta and MCTS read as a win chance.
            comparison: ComparisonConfig {
                sample: Some(64),
                temperature: 0.05,
                value_weight: 1.0,
                ..ComparisonConfig::default()
            },
        }
    }
}

/// A fitted value network: its name in the tables and its checkpoint.
#[derive(Clone, Debug)]
pub struct ValueNet {
    pub name: String,
    pub dir: PathBuf,
    /// It runs on the plain-Rust MLP, so alpha-beta prunes its leaves and
    /// it plays every column.
    pub native: bool,
}

/// The model `name` stands for on `input`, or why there is none.
pub fn value_net_model(
    name: &str,
    td: &TdNetConfig,
    input: InputShape,
) -> Result<ModelConfig, String> {
    let name = split_model(name)?.base;
    let model = match name.strip_prefix("elliott-").map(str::parse::<usize>) {
        Some(Ok(hidden)) if hidden > 0 => ModelConfig::Mlp(
            TdNetConfig {
                hidden,
                ..td.clone()
            }
            .mlp(input.features())
            .into(),
        ),
        _ => preset(name, input).ok_or_else(|| {
            format!(
                "unknown model {name:?}; expected elliott-H (H hidden units) or one of {}",
                crate::train::PRESETS.join(", ")
            )
        })?,
    };
    model
        .validate()
        .map_err(|e| format!("{name} on {VALUE_NET_ENCODER}: {e}"))?;
    Ok(model)
}

/// The directory of a model's value network.
fn net_dir(out: &Path, model: &str) -> PathBuf {
    out.join("value-nets").join(model)
}

/// `data` relabelled by `labels` at `out`, made again only when `data`,
/// the search or the file that keys its evaluator (a checkpoint's weights)
/// changed.
fn search_labelled(
    data: &Path,
    out: &Path,
    labels: &SearchLabels,
    evaluator_file: Option<&Path>,
    progress: Progress,
    say: &dyn Fn(&str),
) -> Result<PathBuf, AmazonsExperimentError> {
    let stamp = out.with_extension("key");
    let mut key = format!(
        "{} labelled by {}",
        Dataset::open(data)?.manifest_sha256(),
        serde_json::to_string(labels).unwrap_or_default()
    );
    if let Some(file) = evaluator_file {
        key.push_str(&format!(" with weights {}", file_key(file)));
    }
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str())
        && Dataset::open(out).is_ok()
    {
        return Ok(out.to_path_buf());
    }
    say(&format!(
        "value networks: labelling the database by alpha-beta depth {} with {} (mix {})",
        labels.depth, labels.eval, labels.mix
    ));
    // Labelling takes minutes to an hour on 2 cores: it shows its rows.
    let bar = progress(0, "positions labelled");
    let report = label_by_search::<Amazons>(data, out, labels, Some(&bar))?;
    bar.finish_and_clear();
    say(&format!("value networks: {report}"));
    crate::util::write_atomic(&stamp, key.as_bytes()).map_err(|e| {
        AmazonsExperimentError::File {
            path: stamp.clone(),
            why: e.to_string(),
        }
    })?;
    Ok(out.to_path_buf())
}

/// The dataset `base`'s round-`round` network is fitted on: the database
/// itself (round 0), its copy labelled by the configured search (round 1,
/// shared by every model), or its copy labelled by the same search over
/// `base`'s network of the round before (fitted first if need be).
fn round_dataset(
    cfg: &AmazonsExperimentConfig,
    data: &Path,
    base: &str,
    round: u32,
    fitted: &mut Vec<ValueNet>,
    progress: Progress,
    say: &dyn Fn(&str),
) -> Result<PathBuf, AmazonsExperimentError> {
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "dataset".into());
    let labels = &cfg.value_nets.search_labels;
    match round {
        0 => Ok(data.to_path_buf()),
        1 => search_labelled(
            data,
            &data.with_file_name(format!("{name}-search")),
            labels,
            None,
            progress,
            say,
        ),
        n => {
            let previous = fit_one(cfg, data, &round_name(base, n - 1), fitted, progress, say)?;
            let labels = SearchLabels {
                eval: format!("ckpt:{}", previous.dir.display()),
                ..labels.clone()
            };
            search_labelled(
                data,
                &data.with_file_name(format!("{name}-search{n}-{base}")),
                &labels,
                Some(&previous.dir.join("model.safetensors")),
                progress,
                say,
            )
        }
    }
}

/// Fits every configured model on `data` (a dataset of the database in
/// [`VALUE_NET_ENCODER`]; `MODEL+search` and `MODEL+searchN` on their
/// search-labelled copies): a finished run of the same settings and data
/// is kept, an interrupted one resumed, one of other settings or data
/// replaced (the trainer's `--resume --overwrite`). The configured models
/// come back in order; the earlier rounds a `+searchN` model needs are
/// fitted too but not returned unless configured.
pub fn fit_value_nets(
    cfg: &AmazonsExperimentConfig,
    data: &Path,
    progress: Progress,
    say: &dyn Fn(&str),
) -> Result<Vec<ValueNet>, AmazonsExperimentError> {
    let mut fitted = Vec::new();
    cfg.value_nets
        .models
        .iter()
        .map(|model| fit_one(cfg, data, model, &mut fitted, progress, say))
        .collect()
}

/// Fits `model` (and the rounds before it) unless `fitted` already has it.
fn fit_one(
    cfg: &AmazonsExperimentConfig,
    data: &Path,
    model: &str,
    fitted: &mut Vec<ValueNet>,
    progress: Progress,
    say: &dyn Fn(&str),
) -> Result<ValueNet, AmazonsExperimentError> {
    if let Some(done) = fitted.iter().find(|n| n.name == model) {
        return Ok(done.clone());
    }
    let v = &cfg.value_nets;
    let config_error = |why| AmazonsExperimentError::Config {
        field: "value-nets",
        why,
    };
    let name = split_model(model).map_err(config_error)?;
    let enc = Dataset::open(data)?.spec().encoder;
    let input = InputShape::new(enc.shape, enc.globals);
    let data = round_dataset(cfg, data, name.base, name.round, fitted, progress, say)?;
    let data = data.as_path();
    let dir = net_dir(&cfg.out, model);
    let model_cfg = value_net_model(model, &cfg.td, input).map_err(config_error)?;
    let fit_cfg = FitConfig {
        data: data.to_path_buf(),
        out: dir.clone(),
        model: model_cfg,
        model_source: model.to_string(),
        init_weights: None,
        optimizer: OptimizerConfig::AdamW(AdamWConfig {
            lr: v.lr,
            weight_decay: v.weight_decay,
            ..AdamWConfig::default()
        }),
        loss: LossKind::Mse,
        l1: 0.0,
        l2: 0.0,
        clip: Some(5.0),
        schedule: ScheduleSpec::Constant,
        warmup_steps: 0,
        epochs: v.epochs,
        batch_size: v.batch,
        buffer_rows: 65_536,
        // Seeded by its name: adding or removing another network
        // leaves this one as it was.
        seed: derive_seed(derive_seed(cfg.seed, VALUE_NET_STREAM), hash_of(model)),
        patience: None,
        save_every: 200,
        device_name: "cpu".into(),
        precision: Default::default(),
        resume: true,
        overwrite: true,
        quiet: true,
        comparison: name.compare.then(|| v.comparison.clone()),
        policy_weight: 0.0,
        // Amazons' 8 board symmetries multiply a small database (the
        // trainer maps no children, so comparison runs go without).
        augment: !name.compare,
        source_weights: Default::default(),
    };
    let trained = std::time::Instant::now();
    let report = fit(&fit_cfg, &candle_core::Device::Cpu).map_err(|e: FitError| {
        AmazonsExperimentError::File {
            path: dir.clone(),
            why: e.to_string(),
        }
    })?;
    if !report.already_finished {
        say(&format!(
            "value networks: fitted {model} ({} epochs, {} steps, {:.0} s)",
            v.epochs,
            report.steps,
            trained.elapsed().as_secs_f64()
        ));
    }
    let native = checkpoint::load(&dir, Some(Amazons::NAME), None)?
        .native_mlp()
        .is_ok();
    let net = ValueNet {
        name: model.to_string(),
        dir,
        native,
    };
    fitted.push(net.clone());
    Ok(net)
}
