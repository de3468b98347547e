//! Parameter counts with checked arithmetic, and the check of a config's
//! sizes against the memory limit before any tensor is made: a config with
//! an absurd width or depth is refused by name instead of aborting the
//! process in the allocation (or looping over a billion layers).

use super::ModelError;
use crate::util::memory::{MemoryError, MemoryLimit};

/// Bytes of one f32 parameter.
pub const F32_BYTES: u64 = 4;

/// How many parameters a model has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamCount {
    /// Trained parameters.
    pub trainable: u64,
    /// Batch-norm running statistics (saved, never trained).
    pub running: u64,
}

impl ParamCount {
    /// All parameters; `None` past 64 bits.
    pub fn total(&self) -> Option<u64> {
        self.trainable.checked_add(self.running)
    }
}

/// Checked `a * b * ...`.
pub(crate) fn mul(factors: &[u64]) -> Option<u64> {
    factors.iter().try_fold(1u64, |acc, &f| acc.checked_mul(f))
}

/// Checked `a + b + ...`.
pub(crate) fn add(terms: &[Option<u64>]) -> Option<u64> {
    terms
        .iter()
        .try_fold(0u64, |acc, &t| t.and_then(|t| acc.checked_add(t)))
}

/// The fields of an input shape: `input.planes[0..3]`, `input.globals`.
pub(crate) fn input_fields(input: &super::InputShape) -> Vec<(String, usize)> {
    let [c, h, w] = input.planes;
    vec![
        ("input.planes[0]".into(), c),
        ("input.planes[1]".into(), h),
        ("input.planes[2]".into(), w),
        ("input.globals".into(), input.globals),
    ]
}

type Counter = Box<dyn Fn(&[u64]) -> Option<ParamCount>>;

/// The size fields of a config, in the order they are checked, and how
/// they give the parameter count (`None` past 64 bits).
pub(crate) struct Sizes {
    model: &'static str,
    fields: Vec<(String, u64)>,
    count: Counter,
}

impl Sizes {
    pub(crate) fn new(
        model: &'static str,
        fields: Vec<(String, usize)>,
        count: impl Fn(&[u64]) -> Option<ParamCount> + 'static,
    ) -> Self {
        Sizes {
            model,
            fields: fields.into_iter().map(|(f, v)| (f, v as u64)).collect(),
            count: Box::new(count),
        }
    }

    /// The parameter count, or an error naming the field that makes it
    /// overflow 64 bits.
    pub(crate) fn count(&self) -> Result<ParamCount, ModelError> {
        let total = |vals: &[u64]| (self.count)(vals).filter(|c| c.total().is_some());
        let values: Vec<u64> = self.fields.iter().map(|f| f.1).collect();
        if let Some(c) = total(&values) {
            return Ok(c);
        }
        let (field, value) = self.culprit(|vals| total(vals).is_some());
        Err(ModelError::field(
            self.model,
            &field,
            format!("= {value} makes the parameter count overflow 64 bits"),
        ))
    }

    /// Refuses sizes whose weights alone need more memory than there is.
    pub(crate) fn check_weights(&self) -> Result<(), ModelError> {
        let limit = MemoryLimit::current().map_err(|error| ModelError::Memory {
            model: self.model.to_string(),
            error,
        })?;
        self.check(F32_BYTES, &limit)
    }

    /// Refuses sizes whose parameters, at `per_param` bytes each, need more
    /// than `limit`, naming the field that takes them over it.
    pub(crate) fn check(&self, per_param: u64, limit: &MemoryLimit) -> Result<(), ModelError> {
        let bytes = |vals: &[u64]| {
            (self.count)(vals)
                .and_then(|c| c.total())
                .and_then(|n| n.checked_mul(per_param))
        };
        let values: Vec<u64> = self.fields.iter().map(|f| f.1).collect();
        if bytes(&values).is_some_and(|b| b <= limit.bytes) {
            return Ok(());
        }
        let (field, value) = self.culprit(|vals| bytes(vals).is_some_and(|b| b <= limit.bytes));
        Err(ModelError::Memory {
            model: self.model.to_string(),
            error: MemoryError::TooLarge {
                field,
                value,
                needs: bytes(&values),
                limit: *limit,
            },
        })
    }

    /// The field to blame when the whole config does not `fit`: the first
    /// that, taken as given after the fields before it (the later ones at
    /// most 1), makes it not fit; the last field if none does alone.
    fn culprit(&self, fits: impl Fn(&[u64]) -> bool) -> (String, u64) {
        let mut probe: Vec<u64> = self.fields.iter().map(|f| f.1.min(1)).collect();
        for (i, (field, value)) in self.fields.iter().enumerate() {
            probe[i] = *value;
            if !fits(&probe) {
                return (field.clone(), *value);
            }
        }
        self.fields
            .last()
            .cloned()
            .unwrap_or_else(|| ("parameters".into(), 0))
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use crate::util::memory::{LimitSource, MemoryLimit};

    fn configs() -> Vec<ModelConfig> {
        let input = InputShape::new([6, 8, 8], 3);
        let planes = InputShape::new([2, 9, 9], 0);
        vec![
            ModelConfig::Linear(LinearConfig::new(input)),
            ModelConfig::Linear(LinearConfig::new(planes)),
            ModelConfig::Mlp(MlpNetConfig {
                inputs: 27,
                hidden: vec![16, 8],
                activation: Activation::Tanh,
                init: WeightInit::FanIn,
                dropout: 0.0,
                output: OutputActivation::Sigmoid,
            }),
            ModelConfig::Cnn3(Cnn3NetConfig::new(planes, Cnn3Config::default())),
            ModelConfig::Resnet(ResNetConfig::tiny(input)),
            ModelConfig::Resnet(ResNetConfig {
                policy: true,
                ..ResNetConfig::small(planes)
            }),
            ModelConfig::Resnet(ResNetConfig {
                policy: true,
                policy_planes: 8,
                ..ResNetConfig::tiny(planes)
            }),
            ModelConfig::Mdrnn(MdrnnConfig::stones(5, 10)),
        ]
    }

    #[test]
    fn counts_agree_with_the_tensors_of_every_kind() {
        for cfg in configs() {
            let tensors = cfg.expected_tensors();
            let sum = |running: bool| -> u64 {
                tensors
                    .iter()
                    .filter(|(n, _)| is_running_stat(n) == running)
                    .map(|(_, s)| s.iter().product::<usize>() as u64)
                    .sum()
            };
            let c = cfg.param_count().unwrap();
            assert_eq!((c.trainable, c.running), (sum(false), sum(true)), "{cfg:?}");
            assert_eq!(cfg.num_params() as u64, c.trainable);
        }
    }

    #[test]
    fn absurd_sizes_are_refused_by_field_before_anything_is_built() {
        let limit = MemoryLimit::from_sources(Some("8G"), None).unwrap();
        assert_eq!(limit.source, LimitSource::Environment);
        for cfg in configs() {
            cfg.check_memory_under(F32_BYTES, &limit).unwrap();
        }
        let mut resnet = ResNetConfig::tiny(InputShape::new([6, 8, 8], 0));
        resnet.blocks = 1 << 40;
        let mut wide = resnet.clone();
        wide.blocks = 2;
        wide.channels = 1 << 40;
        let mlp = MlpNetConfig {
            inputs: 27,
            hidden: vec![16, 1_000_000_000_000],
            activation: Activation::Tanh,
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: OutputActivation::Sigmoid,
        };
        for (cfg, field) in [
            (ModelConfig::Resnet(resnet), "`blocks` = 1099511627776"),
            (ModelConfig::Resnet(wide), "`channels` = 1099511627776"),
            (ModelConfig::Mlp(mlp), "`hidden[1]` = 1000000000000"),
        ] {
            let e = cfg.check_memory_under(F32_BYTES, &limit).unwrap_err();
            let t = e.to_string();
            assert!(
                t.contains(field) && t.contains("limit of 8589934592"),
                "{t}"
            );
        }
        let mut overflow = MdrnnConfig::stones(5, 10);
        overflow.hidden = usize::MAX;
        let cfg = ModelConfig::Mdrnn(overflow);
        let t = cfg.param_count().unwrap_err().to_string();
        assert!(t.contains("`hidden`") && t.contains("overflow"), "{t}");
        assert_eq!(cfg.num_params(), usize::MAX);
        let t = cfg.check_memory_under(1, &limit).unwrap_err().to_string();
        assert!(t.contains("more than 2^64 bytes"), "{t}");
    }
}
