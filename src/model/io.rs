//! What every model reads and returns: input geometry, output activation,
//! and [`ModelOutput`].

use super::ModelError;
use candle_core::{Result, Tensor};
use serde::{Deserialize, Serialize};

/// The input a model was built for: encoder planes `[C, H, W]` plus `G`
/// global features per position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputShape {
    /// `[C, H, W]`.
    pub planes: [usize; 3],
    /// Global features (`G`), 0 when the encoder has none.
    #[serde(default)]
    pub globals: usize,
}

impl InputShape {
    pub fn new(planes: [usize; 3], globals: usize) -> Self {
        InputShape { planes, globals }
    }

    /// `C*H*W`.
    pub fn plane_len(&self) -> usize {
        self.planes.iter().product()
    }

    /// `C*H*W + G`: the features of the flattened input an MLP reads.
    pub fn features(&self) -> usize {
        self.plane_len() + self.globals
    }

    /// [`InputShape::features`], `None` past `usize::MAX` (shapes read from a file).
    pub fn checked_features(&self) -> Option<usize> {
        self.planes
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))?
            .checked_add(self.globals)
    }

    /// Board points `H*W`: the length of a policy row.
    pub fn points(&self) -> usize {
        self.planes[1] * self.planes[2]
    }

    pub(crate) fn validate(&self, model: &str) -> std::result::Result<(), ModelError> {
        if self.planes.contains(&0) {
            return Err(ModelError::field(
                model,
                "input.planes",
                format!("needs [C, H, W] all > 0, got {:?}", self.planes),
            ));
        }
        if self.checked_features().is_none() {
            return Err(ModelError::field(
                model,
                "input",
                format!(
                    "planes {:?} and {} globals: more values than memory can index",
                    self.planes, self.globals
                ),
            ));
        }
        Ok(())
    }

    /// [`validate`](Self::validate) for a model that reads planes only:
    /// also refuses globals.
    pub(crate) fn validate_planes_only(&self, model: &str) -> std::result::Result<(), ModelError> {
        self.validate(model)?;
        if self.globals != 0 {
            return Err(ModelError::field(
                model,
                "input.globals",
                format!("must be 0: {model} reads planes only, got {}", self.globals),
            ));
        }
        Ok(())
    }
}

/// The squashing applied to a model's value output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputActivation {
    /// A value in (0, 1), the scale of dataset labels (1 win, 0.5 draw, 0 loss).
    Sigmoid,
    /// A value in (-1, 1).
    Tanh,
    /// The raw linear output (the Tic-tac-toe MLPs, trained on -1..1).
    #[default]
    Identity,
}

impl OutputActivation {
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            OutputActivation::Sigmoid => candle_nn::ops::sigmoid(x),
            OutputActivation::Tanh => x.tanh(),
            OutputActivation::Identity => Ok(x.clone()),
        }
    }

    /// The inverse of [`forward`](Self::forward): the logit of a sigmoid
    /// value, the atanh of a tanh value. Values are kept a float's width
    /// inside the open interval first, so a saturated output gives a large
    /// finite logit (with no gradient) instead of an infinite one.
    pub fn inverse(&self, y: &Tensor) -> Result<Tensor> {
        const EDGE: f64 = 1e-7;
        match self {
            OutputActivation::Sigmoid => {
                let p = y.clamp(EDGE, 1.0 - EDGE)?;
                p.log()? - p.affine(-1.0, 1.0)?.log()?
            }
            OutputActivation::Tanh => {
                let t = y.clamp(EDGE - 1.0, 1.0 - EDGE)?;
                (t.affine(1.0, 1.0)?.log()? - t.affine(-1.0, 1.0)?.log()?)?.affine(0.5, 0.0)
            }
            OutputActivation::Identity => Ok(y.clone()),
        }
    }

    /// Maps a result in `[0, 1]` (1 win, 0.5 draw, 0 loss) to this output's scale.
    pub fn target(&self, label01: f32) -> f32 {
        match self {
            OutputActivation::Sigmoid => label01,
            _ => 2.0 * label01 - 1.0,
        }
    }

    /// Maps an output of this scale to `[-1, 1]` (the evaluators' scale).
    pub fn to_symmetric(&self, v: f32) -> f32 {
        match self {
            OutputActivation::Sigmoid => 2.0 * v - 1.0,
            _ => v,
        }
    }

    /// The output of an even position: 0.5 for sigmoid, else 0.
    pub fn center(&self) -> f32 {
        match self {
            OutputActivation::Sigmoid => 0.5,
            _ => 0.0,
        }
    }
}

/// What a model returns for a batch of `B` positions.
#[derive(Clone, Debug)]
pub struct ModelOutput {
    /// `[B]`: one value per position, on the config's output scale.
    pub value: Tensor,
    /// `[B, H*W]`: move preferences (logits) per board point, row-major,
    /// for models with a policy head.
    pub policy: Option<Tensor>,
}

/// What a model reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelInput {
    /// Planes `[B, C, H, W]` and globals `[B, G]` of this shape; with
    /// `any_board`, of any `H, W` (the MDRNN).
    Planes { shape: InputShape, any_board: bool },
    /// Planes of any rank >= 2, flattened from dimension 1 (so `[B,
    /// features]` rows work as well as `[B, C, H, W]`), plus any globals
    /// `[B, G]`: this many values per position in all (the MLP).
    Features(usize),
}

/// A model's name (in errors), input and value scale: what
/// [`ValueNet::forward`](super::ValueNet::forward) checks every batch
/// against and [`ValueNet::output`](super::ValueNet::output) reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelIo {
    pub model: &'static str,
    pub input: ModelInput,
    pub output: OutputActivation,
}

impl ModelInput {
    /// Planes and globals of exactly `shape`.
    pub fn planes(shape: InputShape) -> Self {
        ModelInput::Planes {
            shape,
            any_board: false,
        }
    }
}

impl ModelIo {
    pub fn new(model: &'static str, input: ModelInput, output: OutputActivation) -> Self {
        ModelIo {
            model,
            input,
            output,
        }
    }

    /// Refuses planes (and globals) the model does not read.
    pub fn check(&self, planes: &Tensor, globals: Option<&Tensor>) -> Result<()> {
        match self.input {
            ModelInput::Planes { shape, any_board } => {
                check_planes(self.model, &shape, planes, globals, any_board)
            }
            ModelInput::Features(n) => check_features(self.model, n, planes, globals),
        }
    }
}

/// A batch of positions, checked against the model's [`ModelIo`].
#[derive(Clone, Copy, Debug)]
pub struct Batch<'a> {
    /// `[B, C, H, W]` (or flattened rows, for [`ModelInput::Features`]).
    pub planes: &'a Tensor,
    /// `[B, G]`.
    pub globals: Option<&'a Tensor>,
    /// Training mode (dropout, batch statistics).
    pub train: bool,
}

/// Checks planes `[B, C, H, W]` (and globals `[B, G]`) against `input`;
/// `any_board` accepts any `H, W` (the MDRNN).
fn check_planes(
    model: &str,
    input: &InputShape,
    planes: &Tensor,
    globals: Option<&Tensor>,
    any_board: bool,
) -> Result<()> {
    let d = planes.dims();
    let ok = d.len() == 4
        && d[1] == input.planes[0]
        && (any_board || d[2..] == input.planes[1..])
        && d[2] > 0
        && d[3] > 0;
    if !ok {
        candle_core::bail!(
            "{model}: planes must be [B, {}, {}, {}], got {d:?}",
            input.planes[0],
            if any_board {
                "H".into()
            } else {
                input.planes[1].to_string()
            },
            if any_board {
                "W".into()
            } else {
                input.planes[2].to_string()
            },
        );
    }
    check_globals(model, input.globals, d[0], globals)
}

/// Checks planes of rank >= 2 (flattened from dimension 1) plus globals
/// `[B, G]` for `features` values per position.
fn check_features(
    model: &str,
    features: usize,
    planes: &Tensor,
    globals: Option<&Tensor>,
) -> Result<()> {
    let d = planes.dims();
    if d.len() < 2 {
        candle_core::bail!("{model}: planes must be [B, C, H, W] or [B, features], got {d:?}");
    }
    let g = globals.map(|g| g.dim(1)).transpose()?.unwrap_or(0);
    check_globals(model, g, d[0], globals)?;
    let values: usize = d[1..].iter().product();
    if values + g != features {
        candle_core::bail!(
            "{model}: reads {features} features (inputs) but got {values} plane values + {g} globals per position"
        );
    }
    Ok(())
}

fn check_globals(
    model: &str,
    expected: usize,
    batch: usize,
    globals: Option<&Tensor>,
) -> Result<()> {
    match (globals, expected) {
        (None, 0) => Ok(()),
        (Some(g), n) if g.dims() == [batch, n] => Ok(()),
        (Some(g), 0) if g.dims() == [batch, 0] => Ok(()),
        (g, n) => candle_core::bail!(
            "{model}: globals must be [B={batch}, {n}]{}, got {:?}",
            if n == 0 { " or absent" } else { "" },
            g.map(|g| g.dims().to_vec())
        ),
    }
}
