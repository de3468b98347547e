//! Schaul & Schmidhuber's multi-dimensional RNN for boards of any size.
//!
//! Four swiping units, one per diagonal direction, share one set of
//! weights. The unit swiping down-right computes, at every point,
//!
//! ```text
//! u(i,j) = tanh(wi . in(i,j) + wh . u(i-1,j) + wh . u(i,j-1))      (k hidden values)
//! ```
//!
//! with `u = wb` (a learned boundary vector) outside the board; the
//! down-left, up-right and up-left units do the same on the board flipped
//! left-right, top-bottom and both. The per-point output (the policy
//! logits, `[B, H*W]` row-major) is `out(i,j) = sum over the 4 units of
//! wo . u(i,j)`, and the value is the output activation of the mean of
//! `out` over the board's points (no further weights).
//!
//! Tensor names (no biases, as in the paper):
//!
//! | name | shape |
//! | --- | --- |
//! | `wi` | `[k, C]` |
//! | `wh` | `[k, k]` |
//! | `wb` | `[k]` |
//! | `wo` | `[k]` |
//!
//! `C*k + k^2 + 2k` weights: `k^2 + 4k` for the two stone planes
//! (`stones-2`), 140 for `k = 10`, the paper's count. The weights do not
//! depend on the board: a net built for 5x5 runs on 19x19 unchanged
//! (`input.planes`' `H, W` record the training board only).
//!
//! The recursion is unfolded by anti-diagonals: the points with
//! `i + j = d` depend only on diagonal `d - 1`, so each of the `H + W - 1`
//! steps is one matrix product over every point of the diagonal, every
//! board of the batch and all four directions at once.

use super::device_kernels::mdrnn_sweep as sweep;
use super::init::{Draw, TensorInit};
use super::io::{Batch, InputShape, ModelInput, ModelIo, ModelOutput, OutputActivation};
use super::size::{add, mul, ParamCount, Sizes};
use super::{ModelError, ValueNet};
use candle_core::{Device, Result, Tensor};
use candle_nn::{Init, VarBuilder};
use serde::{Deserialize, Serialize};

fn sigmoid() -> OutputActivation {
    OutputActivation::Sigmoid
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MdrnnConfig {
    /// Planes `[C, H, W]`; `H, W` are the training board, any board runs.
    /// `globals` must be 0.
    pub input: InputShape,
    /// Hidden units `k` of each swiping unit (the paper uses 10).
    pub hidden: usize,
    /// Default sigmoid.
    #[serde(default = "sigmoid")]
    pub output: OutputActivation,
    /// Fresh weights are normal with this standard deviation (default 1,
    /// the paper's N(0, 1)).
    #[serde(default = "one")]
    pub init_std: f64,
}

impl MdrnnConfig {
    /// The paper's network: `stones-2` planes, `k` hidden units.
    pub fn stones(board: usize, hidden: usize) -> Self {
        MdrnnConfig {
            input: InputShape::new([2, board, board], 0),
            hidden,
            output: OutputActivation::Sigmoid,
            init_std: 1.0,
        }
    }

    pub fn validate(&self) -> std::result::Result<(), ModelError> {
        self.input.validate_planes_only("mdrnn")?;
        if self.hidden == 0 {
            return Err(ModelError::field("mdrnn", "hidden", "must be > 0"));
        }
        if !(self.init_std.is_finite() && self.init_std >= 0.0) {
            return Err(ModelError::field(
                "mdrnn",
                "init_std",
                format!("must be a finite number >= 0, got {}", self.init_std),
            ));
        }
        self.sizes().check_weights()
    }

    /// The size fields and the parameter count they give (the board size
    /// is no part of it: the model runs on any board).
    pub(crate) fn sizes(&self) -> Sizes {
        let fields = vec![
            ("input.planes[0]".to_string(), self.input.planes[0]),
            ("hidden".into(), self.hidden),
        ];
        Sizes::new("mdrnn", fields, |v| {
            let &[c, k] = v else { return None };
            Some(ParamCount {
                trainable: add(&[mul(&[k, c]), mul(&[k, k]), mul(&[2, k])])?,
                running: 0,
            })
        })
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        let k = self.hidden;
        vec![
            ("wi".into(), vec![k, self.input.planes[0]]),
            ("wh".into(), vec![k, k]),
            ("wb".into(), vec![k]),
            ("wo".into(), vec![k]),
        ]
    }

    pub fn init_plan(&self) -> Vec<TensorInit> {
        self.expected_tensors()
            .into_iter()
            .map(|(n, s)| TensorInit::new(n, s, Draw::Normal(self.init_std as f32)))
            .collect()
    }
}

/// Index tensors of one board size.
struct Plan {
    /// Per direction: board point (row-major) of each position in
    /// anti-diagonal order, `[H*W]`.
    order: Vec<Tensor>,
    /// Per direction: the inverse, anti-diagonal position of each point.
    inverse: Vec<Tensor>,
    /// Per diagonal: `(offset, len, up, left)`, where `up` and `left` index
    /// `[wb, diagonal d-1...]` (0 = outside the board).
    diagonals: Vec<(usize, usize, Tensor, Tensor)>,
}

fn plan(h: usize, w: usize, device: &Device) -> Result<Plan> {
    let lo = |d: usize| d.saturating_sub(w - 1);
    let hi = |d: usize| d.min(h - 1);
    let mut virt = Vec::with_capacity(h * w);
    let mut diagonals = Vec::new();
    for d in 0..h + w - 1 {
        let offset = virt.len();
        let (mut up, mut left) = (Vec::new(), Vec::new());
        for i in lo(d)..=hi(d) {
            let j = d - i;
            virt.push((i, j));
            if d > 0 {
                up.push(if i >= 1 {
                    (1 + i - 1 - lo(d - 1)) as u32
                } else {
                    0
                });
                left.push(if j >= 1 {
                    (1 + i - lo(d - 1)) as u32
                } else {
                    0
                });
            }
        }
        let n = virt.len() - offset;
        diagonals.push((
            offset,
            n,
            Tensor::from_vec(up, if d > 0 { n } else { 0 }, device)?,
            Tensor::from_vec(left, if d > 0 { n } else { 0 }, device)?,
        ));
    }
    let mut order = Vec::new();
    let mut inverse = Vec::new();
    for (flip_h, flip_w) in [(false, false), (false, true), (true, false), (true, true)] {
        let o: Vec<u32> = virt
            .iter()
            .map(|&(i, j)| {
                let r = if flip_h { h - 1 - i } else { i };
                let c = if flip_w { w - 1 - j } else { j };
                (r * w + c) as u32
            })
            .collect();
        let mut inv = vec![0u32; o.len()];
        for (n, &p) in o.iter().enumerate() {
            inv[p as usize] = n as u32;
        }
        order.push(Tensor::from_vec(o, h * w, device)?);
        inverse.push(Tensor::from_vec(inv, h * w, device)?);
    }
    Ok(Plan {
        order,
        inverse,
        diagonals,
    })
}

/// The MDRNN; see the module docs.
pub struct Mdrnn {
    /// `wi` transposed, `[C, k]`.
    wi_t: Tensor,
    /// `wh` transposed, `[k, k]`.
    wh_t: Tensor,
    wb: Tensor,
    /// `wo` as `[k, 1]`.
    wo: Tensor,
    hidden: usize,
    io: ModelIo,
}

impl Mdrnn {
    pub fn new(cfg: &MdrnnConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        cfg.validate()?;
        let k = cfg.hidden;
        let init = Init::Randn {
            mean: 0.0,
            stdev: cfg.init_std,
        };
        let wi = vb.get_with_hints((k, cfg.input.planes[0]), "wi", init)?;
        let wh = vb.get_with_hints((k, k), "wh", init)?;
        let wb = vb.get_with_hints(k, "wb", init)?;
        let wo = vb.get_with_hints(k, "wo", init)?;
        let any_board = ModelInput::Planes {
            shape: cfg.input,
            any_board: true,
        };
        Ok(Mdrnn {
            wi_t: wi.t()?,
            wh_t: wh.t()?,
            wb,
            wo: wo.reshape((k, 1))?,
            hidden: k,
            io: ModelIo::new("mdrnn", any_board, cfg.output),
        })
    }

    /// Per-point outputs `[B, H*W]` (row-major) of planes `[B, C, H, W]`.
    pub fn point_outputs(&self, planes: &Tensor) -> Result<Tensor> {
        let (b, c, h, w) = planes.dims4()?;
        let k = self.hidden;
        let hw = h * w;
        let p = plan(h, w, planes.device())?;
        // Input projections of every point: [B, H*W, k].
        let x = planes.permute((0, 2, 3, 1))?.reshape((b * hw, c))?;
        let proj = x.matmul(&self.wi_t)?.reshape((b, hw, k))?;
        // The four directions side by side on the batch axis, each in its
        // own anti-diagonal order: [4B, H*W, k].
        let proj = Tensor::cat(
            &p.order
                .iter()
                .map(|o| proj.index_select(o, 1))
                .collect::<Result<Vec<_>>>()?,
            0,
        )?;
        let bb = 4 * b;
        let wb = self
            .wb
            .reshape((1, 1, k))?
            .broadcast_as((bb, 1, k))?
            .contiguous()?;
        let mut states: Vec<Tensor> = Vec::with_capacity(p.diagonals.len());
        for (d, (offset, n, up, left)) in p.diagonals.iter().enumerate() {
            let pred = match states.last() {
                // Both predecessors of the corner are outside the board.
                None => (&wb * 2.0)?,
                Some(prev) => {
                    let e = Tensor::cat(&[&wb, prev], 1)?;
                    (e.index_select(up, 1)? + e.index_select(left, 1)?)?
                }
            };
            debug_assert_eq!(pred.dim(1)?, *n, "diagonal {d}");
            let rec = pred
                .reshape((bb * n, k))?
                .matmul(&self.wh_t)?
                .reshape((bb, *n, k))?;
            states.push((proj.narrow(1, *offset, *n)? + rec)?.tanh()?);
        }
        let u = Tensor::cat(&states, 1)?;
        let out = u
            .reshape((bb * hw, k))?
            .matmul(&self.wo)?
            .reshape((bb, hw))?;
        let mut sum: Option<Tensor> = None;
        for (dir, inv) in p.inverse.iter().enumerate() {
            let o = out.narrow(0, dir * b, b)?.index_select(inv, 1)?;
            sum = Some(match sum {
                None => o,
                Some(s) => (s + o)?,
            });
        }
        sum.ok_or_else(|| candle_core::Error::Msg("mdrnn: no directions".into()))
    }
}

impl ValueNet for Mdrnn {
    fn has_policy(&self) -> bool {
        true
    }

    fn io(&self) -> &ModelIo {
        &self.io
    }

    fn forward_checked(&self, x: Batch<'_>) -> Result<ModelOutput> {
        let planes = x.planes;
        let out = if sweep::takes(planes, x.train) {
            let wi = self.wi_t.t()?;
            let wh = self.wh_t.t()?;
            let packed = sweep::pack_weights(&wi, &wh, &self.wb, &self.wo)?;
            sweep::sweep(planes, &packed, self.hidden)?.sum(1)?
        } else {
            self.point_outputs(planes)?
        };
        let value = self.io.output.forward(&out.mean(1)?)?;
        Ok(ModelOutput {
            value,
            policy: Some(out),
        })
    }
}
