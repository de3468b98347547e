//! A network compiled for a device: the ops a GPU backend launches, with
//! their weights already in the layout it wants, and the buffers they use.
//!
//! A [`NetPlan`] is what a native device backend executes, built once when
//! a network is loaded ([`NetPlan::build`]):
//!
//! - batch norm folded into its convolution (`w * gamma / sqrt(var + eps)`,
//!   bias `beta - mean * gamma / sqrt(var + eps)`), so a convolution,
//!   its bias, the residual add and the ReLU are one op, as cuDNN's
//!   `ConvolutionBiasActivationForward` runs them;
//! - activations position-major and channels last (NHWC, what tensor
//!   cores read) and filters `[out][kh][kw][in]` (cuDNN's NHWC filter
//!   layout); a dense layer that reads a board's planes has its weight
//!   columns permuted once from PyTorch's flatten order to that layout;
//! - the raw int8 planes widened on the device by the first op;
//! - dense layers over several inputs at once (`fc(x ++ globals)`, a value
//!   head plus its linear term of the raw planes), so no concatenation is
//!   ever materialised;
//! - logical buffers given physical slots by liveness ([`slots`]): a
//!   residual tower of any depth needs three;
//! - batch buckets ([`Buckets`]): a batch runs padded to the smallest
//!   bucket that holds it, each bucket with its own buffers and, on a GPU,
//!   its own captured graph, keyed by ([`GraphKey`]) bucket and precision.
//!
//! [`PlanTwin`] executes a plan on the CPU, op by op and in the same
//! layouts, at the padded bucket size: it is the plan's proof (the tests
//! compare it with candle's model for every model kind) and the reference
//! a device backend is compared with.

mod build;
mod slots;
mod twin;

#[cfg(test)]
mod tests;

pub use crate::util::Precision;
pub use slots::SlotPlan;
pub use twin::{PlanBackend, PlanTwin};

use crate::model::OutputActivation;

/// A logical buffer of a plan: `per_row` floats per position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufId(pub usize);

/// An element-wise activation after an op's bias (and skip input).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlanAct {
    Identity,
    Relu,
    Tanh,
    Sigmoid,
    /// `b x / (1 + |b x|)`.
    Elliott(f32),
}

impl PlanAct {
    #[inline]
    pub fn apply(self, x: f32) -> f32 {
        match self {
            PlanAct::Identity => x,
            PlanAct::Relu => x.max(0.0),
            PlanAct::Tanh => x.tanh(),
            PlanAct::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            PlanAct::Elliott(b) => {
                let bx = b * x;
                bx / (1.0 + bx.abs())
            }
        }
    }

    /// Whether cuDNN's fused convolution can apply it (identity or ReLU);
    /// others need a kernel of their own after the convolution.
    pub fn fuses_into_cudnn(self) -> bool {
        matches!(self, PlanAct::Identity | PlanAct::Relu)
    }
}

impl From<OutputActivation> for PlanAct {
    fn from(o: OutputActivation) -> Self {
        match o {
            OutputActivation::Sigmoid => PlanAct::Sigmoid,
            OutputActivation::Tanh => PlanAct::Tanh,
            OutputActivation::Identity => PlanAct::Identity,
        }
    }
}

/// `dst = act(conv(src) + bias (+ skip))`, NHWC, stride 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Conv {
    pub src: BufId,
    pub dst: BufId,
    /// A residual input of `dst`'s shape, added before the activation.
    pub skip: Option<BufId>,
    pub in_channels: usize,
    pub out_channels: usize,
    /// Input `[H, W]`.
    pub in_hw: [usize; 2],
    /// Output `[H, W]`.
    pub out_hw: [usize; 2],
    pub kernel: [usize; 2],
    /// Zero padding `[rows, columns]` on each side.
    pub pad: [usize; 2],
    /// `[out][kh][kw][in]`, batch norm folded in.
    pub weight: Vec<f32>,
    /// `[out]`.
    pub bias: Vec<f32>,
    pub act: PlanAct,
}

impl Conv {
    /// Multiply-adds per position.
    pub fn macs(&self) -> usize {
        self.out_hw[0]
            * self.out_hw[1]
            * self.out_channels
            * self.kernel[0]
            * self.kernel[1]
            * self.in_channels
    }
}

/// `dst = act(W [srcs...] + bias)`: one product over the concatenation of
/// `srcs`' rows, never materialised.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    pub srcs: Vec<BufId>,
    pub dst: BufId,
    /// The sum of the sources' `per_row`.
    pub inputs: usize,
    pub outputs: usize,
    /// `[outputs][inputs]`, columns in the order of `srcs` and of each
    /// source's own layout (NHWC for planes and feature maps).
    pub weight: Vec<f32>,
    pub bias: Vec<f32>,
    pub act: PlanAct,
}

/// One step of a plan.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// The int8 planes `[B, C, H, W]` as f32 `[B, H, W, C]` in `dst`.
    Widen {
        dst: BufId,
    },
    /// The f32 globals `[B, G]` copied into `dst`.
    Globals {
        dst: BufId,
    },
    Conv(Conv),
    Dense(Dense),
}

impl Op {
    /// The buffers the op reads.
    pub fn reads(&self) -> Vec<BufId> {
        match self {
            Op::Widen { .. } | Op::Globals { .. } => Vec::new(),
            Op::Conv(c) => std::iter::once(c.src).chain(c.skip).collect(),
            Op::Dense(d) => d.srcs.clone(),
        }
    }

    /// The buffer the op writes.
    pub fn writes(&self) -> BufId {
        match self {
            Op::Widen { dst } | Op::Globals { dst } => *dst,
            Op::Conv(c) => c.dst,
            Op::Dense(d) => d.dst,
        }
    }

    /// A short name for per-layer reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::Widen { .. } => "widen",
            Op::Globals { .. } => "globals",
            Op::Conv(c) if c.skip.is_some() => "conv+skip",
            Op::Conv(_) => "conv",
            Op::Dense(_) => "dense",
        }
    }
}

/// The batch sizes a plan is prepared for: powers of two up to the
/// largest, which may be any size. A batch of `n` runs padded to the
/// smallest bucket `>= n`; a larger one in chunks of the largest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buckets(Vec<usize>);

impl Buckets {
    /// Buckets up to `max_batch` (at least 1).
    pub fn up_to(max_batch: usize) -> Self {
        let max = max_batch.max(1);
        let mut v: Vec<usize> = std::iter::successors(Some(1usize), |b| b.checked_mul(2))
            .take_while(|&b| b < max)
            .collect();
        v.push(max);
        Buckets(v)
    }

    pub fn sizes(&self) -> &[usize] {
        &self.0
    }

    pub fn largest(&self) -> usize {
        *self.0.last().expect("at least one bucket")
    }

    /// The bucket a chunk of `rows` (at most [`largest`](Self::largest))
    /// runs in.
    pub fn for_rows(&self, rows: usize) -> usize {
        self.0
            .iter()
            .copied()
            .find(|&b| b >= rows)
            .unwrap_or_else(|| self.largest())
    }
}

/// What a device backend captures one graph for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GraphKey {
    pub bucket: usize,
    pub precision: Precision,
}

/// A network compiled for a device; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct NetPlan {
    /// The model kind it was built from (`cnn3`, `resnet`, ...).
    pub model: &'static str,
    /// Input planes `[C, H, W]` and globals.
    pub planes: [usize; 3],
    pub globals: usize,
    pub ops: Vec<Op>,
    /// Floats per position of each logical buffer, by [`BufId`].
    pub per_row: Vec<usize>,
    pub value: BufId,
    pub policy: Option<BufId>,
    /// The value head's output activation (applied by the last op).
    pub output: OutputActivation,
    /// Values and weights as a device stores them.
    pub precision: Precision,
    pub buckets: Buckets,
}

impl NetPlan {
    /// Physical slots for the plan's buffers.
    pub fn slots(&self) -> SlotPlan {
        SlotPlan::new(self)
    }

    /// The graphs a device backend captures: one per bucket.
    pub fn graph_keys(&self) -> Vec<GraphKey> {
        self.buckets
            .sizes()
            .iter()
            .map(|&bucket| GraphKey {
                bucket,
                precision: self.precision,
            })
            .collect()
    }

    /// Multiply-adds per position.
    pub fn macs(&self) -> usize {
        self.ops
            .iter()
            .map(|op| match op {
                Op::Conv(c) => c.macs(),
                Op::Dense(d) => d.inputs * d.outputs,
                _ => 0,
            })
            .sum()
    }

    /// Policy logits per position, when the network has a policy head.
    pub fn policy_len(&self) -> Option<usize> {
        self.policy.map(|b| self.per_row[b.0])
    }
}
