//! The grid's axes (dropout, regulariser, learning rule, kernel shape) as
//! the flags give them, the paper's defaults, and [`GridPoint`], one
//! configuration of their product.

use serde::{Deserialize, Serialize};

use super::GridError;
use crate::optim::{MomentumConfig, OptimizerConfig, RmsPropConfig};

/// A weight penalty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Regularizer {
    L1,
    L2,
    None,
}

/// A learning rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    Sgd,
    Rmsprop,
    Momentum,
    Nesterov,
}

impl Regularizer {
    /// Every penalty, in the order the grid lists them.
    pub const ALL: [Regularizer; 3] = [Regularizer::L1, Regularizer::L2, Regularizer::None];

    pub fn as_str(self) -> &'static str {
        match self {
            Regularizer::L1 => "l1",
            Regularizer::L2 => "l2",
            Regularizer::None => "none",
        }
    }
}

impl Rule {
    /// Every rule, in the order the grid lists them.
    pub const ALL: [Rule; 4] = [Rule::Sgd, Rule::Rmsprop, Rule::Momentum, Rule::Nesterov];

    /// The optimizer of this rule; `momentum` and `weight_decay` are those
    /// of the rules that take them.
    pub fn optimizer(self, lr: f64, momentum: f64, weight_decay: f64) -> OptimizerConfig {
        match self {
            Rule::Sgd => OptimizerConfig::Sgd { lr },
            Rule::Momentum | Rule::Nesterov => OptimizerConfig::Momentum(MomentumConfig {
                lr,
                momentum,
                dampening: 0.0,
                weight_decay,
                nesterov: self == Rule::Nesterov,
            }),
            Rule::Rmsprop => OptimizerConfig::RmsProp(RmsPropConfig {
                lr,
                momentum,
                weight_decay,
                ..RmsPropConfig::default()
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Sgd => "sgd",
            Rule::Rmsprop => "rmsprop",
            Rule::Momentum => "momentum",
            Rule::Nesterov => "nesterov",
        }
    }
}

/// The axes of the grid; the defaults are Zaffetti's figure 3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridAxes {
    pub dropout: Vec<f64>,
    pub regularizer: Vec<Regularizer>,
    pub optimizer: Vec<Rule>,
    pub kernel: Vec<[usize; 2]>,
}

/// Figure 3's dropout rates (0: none).
pub const PAPER_DROPOUT: &str = "0.5,0.25,0.1,0.05,0.01,0.005,0";
pub const PAPER_REGULARIZER: &str = "l1,l2,none";
pub const PAPER_OPTIMIZER: &str = "sgd,rmsprop,momentum,nesterov";
pub const PAPER_KERNEL: &str = "2x2,3x3,4x4,5x5,6x6,1x4,1x8,3x1,6x1";

/// The values of an axis of keywords: each item of `s` must be one of the
/// names in `choices`.
fn keywords<T: Copy>(
    flag: &'static str,
    s: &str,
    choices: &[T],
    name: fn(T) -> &'static str,
) -> Result<Vec<T>, GridError> {
    items(flag, s)?
        .into_iter()
        .map(|t| {
            choices
                .iter()
                .copied()
                .find(|&v| name(v) == t)
                .ok_or_else(|| {
                    let names: Vec<&str> = choices.iter().map(|&v| name(v)).collect();
                    let (last, rest) = names.split_last().expect("choices");
                    GridError::Axis {
                        flag,
                        value: t.clone(),
                        why: format!("expected {} or {last}", rest.join(", ")),
                    }
                })
        })
        .collect()
}

fn items(flag: &'static str, s: &str) -> Result<Vec<String>, GridError> {
    let v: Vec<String> = s
        .split(',')
        .map(|t| t.trim().to_ascii_lowercase())
        .collect();
    if v.iter().any(String::is_empty) {
        return Err(GridError::Axis {
            flag,
            value: s.to_string(),
            why: "an empty item; expected a comma-separated list".into(),
        });
    }
    Ok(v)
}

impl GridAxes {
    /// Parses the four comma-separated lists.
    pub fn parse(
        dropout: &str,
        regularizer: &str,
        optimizer: &str,
        kernel: &str,
    ) -> Result<Self, GridError> {
        let dropout = items("dropout", dropout)?
            .into_iter()
            .map(|t| match t.as_str() {
                "none" => Ok(0.0),
                _ => match t.parse::<f64>() {
                    Ok(p) if (0.0..1.0).contains(&p) => Ok(p),
                    _ => Err(GridError::Axis {
                        flag: "dropout",
                        value: t.clone(),
                        why: "expected a rate in [0, 1) (0 or none: no dropout)".into(),
                    }),
                },
            })
            .collect::<Result<_, _>>()?;
        let regularizer = keywords(
            "regularizer",
            regularizer,
            &Regularizer::ALL,
            Regularizer::as_str,
        )?;
        let optimizer = keywords("optimizer", optimizer, &Rule::ALL, Rule::as_str)?;
        let kernel = items("kernel", kernel)?
            .into_iter()
            .map(|t| {
                let bad = || GridError::Axis {
                    flag: "kernel",
                    value: t.clone(),
                    why: "expected HxW with H, W >= 1 (e.g. 4x4, 1x8)".into(),
                };
                let (h, w) = t.split_once('x').ok_or_else(bad)?;
                match (h.parse::<usize>(), w.parse::<usize>()) {
                    (Ok(h), Ok(w)) if h > 0 && w > 0 => Ok([h, w]),
                    _ => Err(bad()),
                }
            })
            .collect::<Result<_, _>>()?;
        let mut axes = GridAxes {
            dropout,
            regularizer,
            optimizer,
            kernel,
        };
        // Repeated values would train the same configuration twice.
        dedup(&mut axes.dropout);
        dedup(&mut axes.regularizer);
        dedup(&mut axes.optimizer);
        dedup(&mut axes.kernel);
        Ok(axes)
    }

    /// The paper's axes.
    pub fn paper() -> Self {
        Self::parse(
            PAPER_DROPOUT,
            PAPER_REGULARIZER,
            PAPER_OPTIMIZER,
            PAPER_KERNEL,
        )
        .unwrap_or_else(|_| unreachable!("the paper's axes parse"))
    }

    /// Number of configurations in the product.
    pub fn len(&self) -> usize {
        self.dropout.len() * self.regularizer.len() * self.optimizer.len() * self.kernel.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The product, kernel slowest, dropout fastest.
    pub fn product(&self) -> Vec<GridPoint> {
        let mut out = Vec::with_capacity(self.len());
        for &kernel in &self.kernel {
            for &optimizer in &self.optimizer {
                for &regularizer in &self.regularizer {
                    for &dropout in &self.dropout {
                        out.push(GridPoint {
                            dropout,
                            regularizer,
                            optimizer,
                            kernel,
                        });
                    }
                }
            }
        }
        out
    }
}

fn dedup<T: PartialEq + Clone>(v: &mut Vec<T>) {
    let mut seen: Vec<T> = Vec::with_capacity(v.len());
    v.retain(|x| {
        if seen.contains(x) {
            false
        } else {
            seen.push(x.clone());
            true
        }
    });
}

/// One configuration of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridPoint {
    pub dropout: f64,
    pub regularizer: Regularizer,
    pub optimizer: Rule,
    pub kernel: [usize; 2],
}

impl GridPoint {
    /// A name usable as a directory: `k4x4-nesterov-l1-d0.01`.
    pub fn id(&self) -> String {
        format!(
            "k{}x{}-{}-{}-d{}",
            self.kernel[0],
            self.kernel[1],
            self.optimizer.as_str(),
            self.regularizer.as_str(),
            self.dropout
        )
    }

    /// Dropout as the paper writes it (`None` for 0).
    pub fn dropout_label(&self) -> String {
        if self.dropout == 0.0 {
            "none".into()
        } else {
            self.dropout.to_string()
        }
    }
}
