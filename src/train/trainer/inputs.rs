//! The first step of a run: everything checked and derived from the
//! arguments and the dataset before the output folder is touched.

use super::encoder::{encoder_spec, encoder_symmetries};
use super::{CvFolds, FitConfig, FitError};
use crate::dataset::{Dataset, DatasetSpec, Split, StreamConfig};
use crate::encode::{EncoderSpec, Symmetries};
use crate::positions::children::{expander, ChildExpander};

/// A run's checked inputs.
pub(super) struct Inputs {
    pub dataset: Dataset,
    pub spec: DatasetSpec,
    /// The encoder with its perspective.
    pub encoder: EncoderSpec,
    /// The symmetries training examples are mapped by (`None`: as they are).
    pub symmetries: Symmetries,
    /// The expander of compared moves' children (comparison training only).
    pub children: Option<Box<dyn ChildExpander>>,
    /// What a resumed run must share ([`FitConfig::fingerprint`] and the
    /// folds).
    pub fingerprint: serde_json::Value,
}

impl Inputs {
    /// Checks `cfg` against its dataset and the memory limits.
    pub fn check(cfg: &FitConfig, cv: Option<&CvFolds>) -> Result<Inputs, FitError> {
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
        check_source_weights(cfg, cv.is_some(), &dataset)?;
        let symmetries = augmentation(cfg, &spec)?;
        let encoder = encoder_spec(&spec.game, &spec.encoder);
        let children = comparison_children(cfg, &dataset, &spec)?;
        let mut fingerprint = cfg.fingerprint(dataset.manifest_sha256());
        if let (Some(cv), Some(obj)) = (cv, fingerprint.as_object_mut()) {
            obj.insert("cv".into(), serde_json::json!(cv));
        }
        Ok(Inputs {
            dataset,
            spec,
            encoder,
            symmetries,
            children,
            fingerprint,
        })
    }
}

/// Refuses a source weight that decides no training row (a mistyped
/// prefix would otherwise train unweighted without a word), and says how
/// many rows each weight decides.
fn check_source_weights(cfg: &FitConfig, cv: bool, dataset: &Dataset) -> Result<(), FitError> {
    let weights = &cfg.source_weights;
    if weights.is_empty() {
        return Ok(());
    }
    let splits: &[Split] = if cv {
        &[Split::Train, Split::Valid]
    } else {
        &[Split::Train]
    };
    let counts = weights.count_rows(dataset, splits)?;
    let rules = weights.rules();
    if let Some(r) = counts.per_rule.iter().position(|&n| n == 0) {
        return Err(FitError::Invalid {
            field: "source_weight",
            why: format!(
                "{}: no training row of {} has a source starting with {:?} (sources there: {})",
                rules[r],
                cfg.data.display(),
                rules[r].prefix,
                counts.unmatched_sources.join(", ")
            ),
        });
    }
    if !cfg.quiet {
        let mut parts: Vec<String> = rules
            .iter()
            .zip(&counts.per_rule)
            .map(|(rule, n)| format!("{:?} x{} on {n} rows", rule.prefix, rule.weight))
            .collect();
        parts.push(format!("the other {} rows x1", counts.unmatched));
        eprintln!("source weights: {}", parts.join("; "));
    }
    Ok(())
}

/// The symmetries of `--augment`, refused for an encoder that has none.
fn augmentation(cfg: &FitConfig, spec: &DatasetSpec) -> Result<Symmetries, FitError> {
    if !cfg.augment {
        return Ok(Symmetries::None);
    }
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
    Ok(s)
}

/// The children expander of comparison training, once the dataset has
/// the moves played and the batches fit the memory limit.
fn comparison_children(
    cfg: &FitConfig,
    dataset: &Dataset,
    spec: &DatasetSpec,
) -> Result<Option<Box<dyn ChildExpander>>, FitError> {
    let Some(cmp) = &cfg.comparison else {
        return Ok(None);
    };
    if dataset.schema().field_with_name("move_played").is_err() {
        return Err(FitError::NoMoveColumn {
            data: cfg.data.clone(),
        });
    }
    let x = expander(&spec.game, &spec.encoder).map_err(|e| FitError::Children(Box::new(e)))?;
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
    Ok(Some(x))
}
