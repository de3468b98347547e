//! A residual convolutional network (AlphaZero / KataGo shape) with a value
//! head and an optional policy head, for any board size.
//!
//! ```text
//! planes [B, C, H, W]
//!   stem:     conv3x3 C->ch (padding 1, no bias) -> BN -> relu
//!   blocks.i: x + BN(conv3x3(relu(BN(conv3x3(x))))) -> relu      (i < blocks)
//!   value:    conv1x1 ch->1 -> BN -> relu -> flatten [B, H*W] ++ globals [B, G]
//!             -> fc1 (value_hidden) -> relu -> fc2 (1)
//!             (+ linear(flatten(planes) ++ globals) with `value_linear`)
//!             -> output activation                                          [B]
//!   policy:   conv1x1 ch->2 -> BN -> relu -> flatten [B, 2*H*W] -> fc (H*W)   [B, H*W]
//! ```
//!
//! Tensor names (PyTorch layouts: `nn.Conv2d` weight `[out, in, kh, kw]`,
//! `nn.Linear` `[out, in]`, `nn.BatchNorm2d` `weight`, `bias`,
//! `running_mean`, `running_var`, each `[channels]`):
//!
//! | name | shape |
//! | --- | --- |
//! | `stem.conv.weight` | `[ch, C, 3, 3]` |
//! | `stem.bn.{weight,bias,running_mean,running_var}` | `[ch]` |
//! | `blocks.{i}.conv1.weight`, `blocks.{i}.conv2.weight` | `[ch, ch, 3, 3]` |
//! | `blocks.{i}.bn1.*`, `blocks.{i}.bn2.*` | `[ch]` |
//! | `value.conv.weight` | `[1, ch, 1, 1]` |
//! | `value.bn.*` | `[1]` |
//! | `value.fc1.weight` / `value.fc1.bias` | `[value_hidden, H*W + G]` / `[value_hidden]` |
//! | `value.fc2.weight` / `value.fc2.bias` | `[1, value_hidden]` / `[1]` |
//! | `value.linear.weight` | `[1, C*H*W + G]` (with `value_linear`) |
//! | `policy.conv.weight` | `[2, ch, 1, 1]` (with `policy: true`) |
//! | `policy.bn.*` | `[2]` |
//! | `policy.fc.weight` / `policy.fc.bias` | `[H*W, 2*H*W]` / `[H*W]` |
//!
//! Batch norm: eps 1e-5, momentum 0.1 (PyTorch's defaults). `train: true`
//! normalises with the batch's statistics and updates the running ones,
//! which are variables saved with the weights (and left out of the
//! optimizer, see [`super::trainable_vars`]); `train: false` uses the
//! running statistics.
//!
//! In eval mode (`train: false`) on CPU f32, each batch norm is folded into
//! its convolution (`w * gamma / sqrt(var + eps)`, bias
//! `beta - mean * gamma / sqrt(var + eps)`) and the convolution, bias and
//! relu run as one fused kernel ([`super::kernels::conv2d_act`]). That path
//! is for inference: the folded weights are detached, so no gradient flows
//! from its output to the parameters (nothing in it records a graph).
//! [`ResNet::forward_stock`] keeps candle's stock ops everywhere, and
//! gradients in eval mode.

use super::init::{fan_in_bound, Draw, TensorInit};
use super::io::{Batch, InputShape, ModelInput, ModelIo, ModelOutput, OutputActivation};
use super::kernels::{self, Act};
use super::linear::LinearInit;
use super::size::{add, input_fields, mul, ParamCount, Sizes};
use super::{ModelError, ValueNet};
use candle_core::{Result, Tensor};
use candle_nn::{
    BatchNorm, BatchNormConfig, Conv2d, Conv2dConfig, Init, Linear, Module, ModuleT, VarBuilder,
};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};

fn sigmoid() -> OutputActivation {
    OutputActivation::Sigmoid
}

fn one_plane() -> usize {
    1
}

fn is_one_plane(planes: &usize) -> bool {
    *planes == 1
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResNetConfig {
    pub input: InputShape,
    /// Residual blocks (0 allowed: stem and heads only).
    pub blocks: usize,
    /// Channels of the stem and every block.
    pub channels: usize,
    /// Units of the value head's hidden layer.
    pub value_hidden: usize,
    /// With a policy head (default false).
    #[serde(default)]
    pub policy: bool,
    /// Policy logits per board point (default 1): a game whose moves share
    /// points scores each move on its own plane (Pentago: one plane per
    /// quadrant rotation, [`crate::game::Game::POLICY_PLANES`]).
    #[serde(default = "one_plane", skip_serializing_if = "is_one_plane")]
    pub policy_planes: usize,
    /// A linear term of the raw input added to the value before the output
    /// activation, and how its weights start (default none): a
    /// piece-square table beside the tower. Material and where pieces stand
    /// are linear in piece planes, so the network can start from material
    /// (`{"kind": "material", ...}`, as the `linear` model's `init`; the
    /// globals' weights start at 0) and the tower learns what it misses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_linear: Option<LinearInit>,
    /// Default sigmoid.
    #[serde(default = "sigmoid")]
    pub output: OutputActivation,
}

const BN_EPS: f64 = 1e-5;
const BN_MOMENTUM: f64 = 0.1;
const POLICY_FILTERS: usize = 2;
const BN_PARTS: [&str; 4] = ["weight", "bias", "running_mean", "running_var"];

impl ResNetConfig {
    fn preset(input: InputShape, blocks: usize, channels: usize, value_hidden: usize) -> Self {
        ResNetConfig {
            input,
            blocks,
            channels,
            value_hidden,
            policy: false,
            policy_planes: 1,
            value_linear: None,
            output: OutputActivation::Sigmoid,
        }
    }

    /// 2 blocks of 32 channels, value head 64: tests and quick experiments.
    pub fn tiny(input: InputShape) -> Self {
        Self::preset(input, 2, 32, 64)
    }

    /// 6 blocks of 64 channels, value head 128.
    pub fn small(input: InputShape) -> Self {
        Self::preset(input, 6, 64, 128)
    }

    /// 20 blocks of 256 channels, value head 256 (KataGo's b20c256 trunk).
    pub fn large(input: InputShape) -> Self {
        Self::preset(input, 20, 256, 256)
    }

    pub fn validate(&self) -> std::result::Result<(), ModelError> {
        self.input.validate("resnet")?;
        if self.channels == 0 {
            return Err(ModelError::field("resnet", "channels", "must be > 0"));
        }
        if self.value_hidden == 0 {
            return Err(ModelError::field("resnet", "value_hidden", "must be > 0"));
        }
        if self.policy_planes == 0 {
            return Err(ModelError::field("resnet", "policy_planes", "must be > 0"));
        }
        if let Some(init) = &self.value_linear {
            init.validate("resnet", "value_linear", self.input.planes)?;
        }
        self.sizes().check_weights()
    }

    /// The size fields and the parameter count they give (as
    /// [`init_plan`](Self::init_plan) lays the tensors out).
    pub(crate) fn sizes(&self) -> Sizes {
        let mut fields = input_fields(&self.input);
        fields.extend([
            ("blocks".to_string(), self.blocks),
            ("channels".into(), self.channels),
            ("value_hidden".into(), self.value_hidden),
        ]);
        let policy = self.policy;
        let planes = self.policy_planes as u64;
        let value_linear = self.value_linear.is_some();
        Sizes::new("resnet", fields, move |v| {
            let &[c, h, w, g, blocks, ch, vh] = v else {
                return None;
            };
            let hw = mul(&[h, w])?;
            let pf = POLICY_FILTERS as u64;
            // Per block: two 3x3 convolutions and two batch norms.
            let block = add(&[mul(&[2, ch, ch, 9]), mul(&[4, ch])]);
            let mut trainable = add(&[
                mul(&[ch, c, 9]),
                mul(&[2, ch]),
                block.and_then(|b| b.checked_mul(blocks)),
                Some(ch + 2),
                mul(&[vh, hw.checked_add(g)?]),
                mul(&[vh, 2]),
                Some(1),
            ])?;
            let mut running = add(&[mul(&[2, ch]), mul(&[4, ch, blocks]), Some(2)])?;
            if value_linear {
                trainable = add(&[Some(trainable), mul(&[c, hw]), Some(g)])?;
            }
            if policy {
                trainable = add(&[
                    Some(trainable),
                    mul(&[pf, ch]),
                    Some(2 * pf),
                    mul(&[planes, hw, pf, hw]),
                    mul(&[planes, hw]),
                ])?;
                running = running.checked_add(2 * pf)?;
            }
            Some(ParamCount { trainable, running })
        })
    }

    pub fn expected_tensors(&self) -> Vec<(String, Vec<usize>)> {
        self.init_plan()
            .into_iter()
            .map(|t| (t.name, t.shape))
            .collect()
    }

    /// Convolutions and linear layers uniform in `+-1/sqrt(fan_in)`
    /// (PyTorch's bounds); batch norm scale 1, shift 0, running mean 0 and
    /// variance 1.
    pub fn init_plan(&self) -> Vec<TensorInit> {
        let [c, _, _] = self.input.planes;
        let ch = self.channels;
        let hw = self.input.points();
        let mut v = Vec::new();
        let conv = |v: &mut Vec<TensorInit>, name: String, out: usize, inp: usize, k: usize| {
            v.push(TensorInit::new(
                name,
                vec![out, inp, k, k],
                Draw::Uniform(fan_in_bound(inp * k * k)),
            ));
        };
        let bn = |v: &mut Vec<TensorInit>, prefix: &str, n: usize| {
            for (part, c) in BN_PARTS.iter().zip([1.0, 0.0, 0.0, 1.0]) {
                v.push(TensorInit::new(
                    format!("{prefix}.{part}"),
                    vec![n],
                    Draw::Const(c),
                ));
            }
        };
        let linear = |v: &mut Vec<TensorInit>, prefix: &str, out: usize, inp: usize| {
            let a = fan_in_bound(inp);
            v.push(TensorInit::new(
                format!("{prefix}.weight"),
                vec![out, inp],
                Draw::Uniform(a),
            ));
            v.push(TensorInit::new(
                format!("{prefix}.bias"),
                vec![out],
                Draw::Uniform(a),
            ));
        };
        conv(&mut v, "stem.conv.weight".into(), ch, c, 3);
        bn(&mut v, "stem.bn", ch);
        for i in 0..self.blocks {
            conv(&mut v, format!("blocks.{i}.conv1.weight"), ch, ch, 3);
            bn(&mut v, &format!("blocks.{i}.bn1"), ch);
            conv(&mut v, format!("blocks.{i}.conv2.weight"), ch, ch, 3);
            bn(&mut v, &format!("blocks.{i}.bn2"), ch);
        }
        conv(&mut v, "value.conv.weight".into(), 1, ch, 1);
        bn(&mut v, "value.bn", 1);
        linear(
            &mut v,
            "value.fc1",
            self.value_hidden,
            hw + self.input.globals,
        );
        linear(&mut v, "value.fc2", 1, self.value_hidden);
        if let Some(init) = &self.value_linear {
            let inputs = c * hw + self.input.globals;
            let draw = match init.plane_weights(self.input.planes) {
                Some(mut weights) => {
                    weights.resize(inputs, 0.0);
                    Draw::Values(weights)
                }
                None if *init == LinearInit::Zeros => Draw::Const(0.0),
                None => Draw::Uniform(fan_in_bound(inputs)),
            };
            v.push(TensorInit::new(
                "value.linear.weight",
                vec![1, inputs],
                draw,
            ));
        }
        if self.policy {
            conv(&mut v, "policy.conv.weight".into(), POLICY_FILTERS, ch, 1);
            bn(&mut v, "policy.bn", POLICY_FILTERS);
            linear(
                &mut v,
                "policy.fc",
                self.policy_planes * hw,
                POLICY_FILTERS * hw,
            );
        }
        v
    }
}

/// A convolution without bias followed by batch norm.
struct ConvBn {
    conv: Conv2d,
    bn: BatchNorm,
    pad: usize,
}

impl ConvBn {
    fn new(inp: usize, out: usize, k: usize, vb: VarBuilder, conv: &str, bn: &str) -> Result<Self> {
        let a = fan_in_bound(inp * k * k) as f64;
        let w = vb.get_with_hints(
            (out, inp, k, k),
            &format!("{conv}.weight"),
            Init::Uniform { lo: -a, up: a },
        )?;
        let cfg = Conv2dConfig {
            padding: k / 2,
            ..Default::default()
        };
        let bn_cfg = BatchNormConfig {
            eps: BN_EPS,
            remove_mean: true,
            affine: true,
            momentum: BN_MOMENTUM,
        };
        Ok(ConvBn {
            conv: Conv2d::new(w, None, cfg),
            bn: candle_nn::batch_norm(out, bn_cfg, vb.pp(bn))?,
            pad: k / 2,
        })
    }

    /// The stock path's `act(BN(conv(x)))`. Training on CUDA runs the
    /// batch norm and ReLU as one set of device ops
    /// ([`super::device_kernels::batch_norm`]); elsewhere candle's
    /// `BatchNorm`, then the activation.
    fn forward(&self, x: &Tensor, train: bool, act: Act) -> Result<Tensor> {
        let y = super::stock_conv::conv2d(x, self.conv.weight(), self.pad)?;
        let relu = act == Act::Relu;
        if train && super::device_kernels::batch_norm::takes(&y) {
            let (gamma, beta) = self.affine()?;
            let (out, stats) =
                super::device_kernels::batch_norm::train(&y, gamma, beta, self.bn.eps(), relu)?;
            self.update_running_on_device(&stats, y.elem_count() / y.dim(1)?)?;
            return Ok(out);
        }
        let y = self.bn.forward_t(&y, train)?;
        if relu {
            y.relu()
        } else {
            Ok(y)
        }
    }

    /// The stock path's residual end `relu(BN(conv(x)) + skip)`: on CUDA
    /// in training, the batch norm, the add and the ReLU as one set of
    /// device ops ([`super::device_kernels::batch_norm::train_residual`]).
    fn forward_residual(&self, x: &Tensor, skip: &Tensor, train: bool) -> Result<Tensor> {
        let y = super::stock_conv::conv2d(x, self.conv.weight(), self.pad)?;
        if train && super::device_kernels::batch_norm::takes(&y) {
            let (gamma, beta) = self.affine()?;
            let (out, stats) = super::device_kernels::batch_norm::train_residual(
                &y,
                gamma,
                beta,
                skip,
                self.bn.eps(),
            )?;
            self.update_running_on_device(&stats, y.elem_count() / y.dim(1)?)?;
            return Ok(out);
        }
        (skip + self.bn.forward_t(&y, train)?)?.relu()
    }

    /// [`ConvBn::update_running`] with the batch's statistics `[2, C]` on
    /// the device, by tensor ops (no copy to the host).
    fn update_running_on_device(&self, stats: &Tensor, count: usize) -> Result<()> {
        let m = self.bn.momentum();
        let n = count as f64;
        let (mean, var) = super::device_kernels::batch_norm::split_stats(stats)?;
        let update = |running: &Tensor, batch: &Tensor, weight: f64| -> Result<()> {
            let new = ((running * (1.0 - m))? + (batch.to_dtype(running.dtype())? * weight)?)?;
            candle_core::Var::from_tensor(running)?.set(&new)
        };
        update(self.bn.running_mean(), &mean, m)?;
        update(self.bn.running_var(), &var, m * n / (n - 1.0))
    }

    /// The convolution's weight and bias with the batch norm's running
    /// statistics folded in (`w * gamma / sqrt(var + eps)`,
    /// `beta - mean * gamma / sqrt(var + eps)`), detached.
    fn folded(&self) -> Result<(Tensor, Tensor)> {
        let Some((gamma, beta)) = self.bn.weight_and_bias() else {
            candle_core::bail!("resnet: batch norm without affine parameters");
        };
        let scale = gamma.broadcast_div(&(self.bn.running_var() + self.bn.eps())?.sqrt()?)?;
        let f = scale.dim(0)?;
        let w = self
            .conv
            .weight()
            .broadcast_mul(&scale.reshape((f, 1, 1, 1))?)?;
        let b = (beta - self.bn.running_mean().mul(&scale)?)?;
        Ok((w.detach(), b.detach()))
    }

    /// `act(BN(conv(x)))` with the running statistics, the batch norm folded
    /// into the convolution's weight and bias, as one fused kernel; the
    /// folded parameters are detached (inference only).
    fn forward_folded(&self, x: &Tensor, act: Act) -> Result<Tensor> {
        let (w, b) = self.folded()?;
        kernels::conv2d_act(x, &w, &b, [self.pad; 4], act)
    }

    /// The folded 3x3 convolution laid out for [`kernels::Conv3x3Weights::apply`]
    /// on bordered activations.
    fn bordered_folded(&self) -> Result<Arc<kernels::Conv3x3Weights>> {
        let (w, b) = self.folded()?;
        Ok(Arc::new(kernels::Conv3x3Weights::new(&w, &b)?))
    }

    /// The batch norm's scale and shift.
    fn affine(&self) -> Result<(&Tensor, &Tensor)> {
        match self.bn.weight_and_bias() {
            Some(gb) => Ok(gb),
            None => candle_core::bail!("resnet: batch norm without affine parameters"),
        }
    }

    /// Moves the running statistics towards a batch's, as candle's
    /// `BatchNorm` does (momentum, unbiased variance).
    fn update_running(&self, stats: &kernels::BatchStats) -> Result<()> {
        let m = self.bn.momentum();
        let n = stats.count as f64;
        let update = |running: &Tensor, batch: &[f32], weight: f64| -> Result<()> {
            let old = running.to_vec1::<f32>()?;
            let new: Vec<f32> = old
                .iter()
                .zip(batch)
                .map(|(&r, &b)| (r as f64 * (1.0 - m) + b as f64 * weight) as f32)
                .collect();
            candle_core::Var::from_tensor(running)?.set(&Tensor::from_vec(
                new,
                old.len(),
                running.device(),
            )?)
        };
        update(self.bn.running_mean(), &stats.mean, m)?;
        update(self.bn.running_var(), &stats.var, m * n / (n - 1.0))
    }

    /// Training mode on bordered activations: `relu(BN(conv3x3(x)))` with
    /// the batch's statistics, updating the running ones.
    fn bordered_train(&self, x: &Tensor) -> Result<Tensor> {
        let (gamma, beta) = self.affine()?;
        let z = kernels::conv3x3(x, self.conv.weight())?;
        let (y, stats) = kernels::batch_norm_relu(&z, gamma, beta, None, self.bn.eps())?;
        self.update_running(&stats)?;
        Ok(y)
    }

    /// Training mode for the heads' 1x1 convolutions: from the tower's
    /// bordered output straight to planes, then candle's batch norm.
    fn head_train(&self, x: &Tensor) -> Result<Tensor> {
        let y = kernels::conv1x1_from_bordered(x, self.conv.weight())?;
        self.bn.forward_t(&y, true)
    }
}

fn linear(inp: usize, out: usize, vb: VarBuilder) -> Result<Linear> {
    let a = fan_in_bound(inp) as f64;
    let init = Init::Uniform { lo: -a, up: a };
    let w = vb.get_with_hints((out, inp), "weight", init)?;
    let b = vb.get_with_hints(out, "bias", init)?;
    Ok(Linear::new(w, Some(b)))
}

struct Block {
    a: ConvBn,
    b: ConvBn,
}

impl Block {
    /// Training mode on bordered activations, the whole block as one op
    /// ([`kernels::residual_block`]).
    fn train(&self, x: &Tensor) -> Result<Tensor> {
        let (gamma1, beta1) = self.a.affine()?;
        let (gamma2, beta2) = self.b.affine()?;
        let p = kernels::BlockParams {
            w1: self.a.conv.weight(),
            gamma1,
            beta1,
            w2: self.b.conv.weight(),
            gamma2,
            beta2,
        };
        let (y, [s1, s2]) = kernels::residual_block(x, &p, self.a.bn.eps())?;
        self.a.update_running(&s1)?;
        self.b.update_running(&s2)?;
        Ok(y)
    }
}

/// The residual network; see the module docs.
pub struct ResNet {
    stem: ConvBn,
    blocks: Vec<Block>,
    value_conv: ConvBn,
    value_fc1: Linear,
    value_fc2: Linear,
    /// The input's linear term (`value_linear`), no bias.
    value_linear: Option<Linear>,
    policy: Option<(ConvBn, Linear)>,
    io: ModelIo,
    /// The tower's inference weights, prepared once by
    /// [`ValueNet::freeze`] (dropped by a training-mode pass).
    frozen: RwLock<Option<FoldedTower>>,
}

/// Folded, laid-out convolutions of the tower: the stem, then each block's
/// two.
type FoldedTower = Arc<Vec<Arc<kernels::Conv3x3Weights>>>;

impl ResNet {
    pub fn new(cfg: &ResNetConfig, vb: VarBuilder) -> std::result::Result<Self, ModelError> {
        cfg.validate()?;
        let [c, _, _] = cfg.input.planes;
        let ch = cfg.channels;
        let hw = cfg.input.points();
        let stem = ConvBn::new(c, ch, 3, vb.pp("stem"), "conv", "bn")?;
        let blocks = (0..cfg.blocks)
            .map(|i| {
                let vb = vb.pp(format!("blocks.{i}"));
                Ok(Block {
                    a: ConvBn::new(ch, ch, 3, vb.clone(), "conv1", "bn1")?,
                    b: ConvBn::new(ch, ch, 3, vb, "conv2", "bn2")?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let vv = vb.pp("value");
        let value_conv = ConvBn::new(ch, 1, 1, vv.clone(), "conv", "bn")?;
        let value_fc1 = linear(hw + cfg.input.globals, cfg.value_hidden, vv.pp("fc1"))?;
        let value_fc2 = linear(cfg.value_hidden, 1, vv.pp("fc2"))?;
        let value_linear = cfg
            .value_linear
            .is_some()
            .then(|| {
                let inputs = c * hw + cfg.input.globals;
                let w = vv
                    .pp("linear")
                    .get_with_hints((1, inputs), "weight", Init::Const(0.0))?;
                Ok::<_, candle_core::Error>(Linear::new(w, None))
            })
            .transpose()?;
        let policy = cfg
            .policy
            .then(|| -> Result<_> {
                let vp = vb.pp("policy");
                Ok((
                    ConvBn::new(ch, POLICY_FILTERS, 1, vp.clone(), "conv", "bn")?,
                    linear(POLICY_FILTERS * hw, cfg.policy_planes * hw, vp.pp("fc"))?,
                ))
            })
            .transpose()?;
        Ok(ResNet {
            stem,
            blocks,
            value_conv,
            value_fc1,
            value_fc2,
            value_linear,
            policy,
            io: ModelIo::new("resnet", ModelInput::planes(cfg.input), cfg.output),
            frozen: RwLock::new(None),
        })
    }
}

impl ValueNet for ResNet {
    fn has_policy(&self) -> bool {
        self.policy.is_some()
    }

    /// Folds every batch norm of the tower into its convolution and lays
    /// the weights out for the kernel, once: each evaluation-mode call did
    /// that work again (at batch 1, more than the convolutions took).
    fn freeze(&self) -> Result<()> {
        let w = self.stem.conv.weight();
        if !super::kernels::native(w) {
            // Other devices and dtypes run candle's own ops.
            return Ok(());
        }
        let convs = self.folded_tower()?;
        if let Ok(mut f) = self.frozen.write() {
            *f = Some(convs);
        }
        Ok(())
    }

    fn io(&self) -> &ModelIo {
        &self.io
    }

    fn forward_checked(&self, x: Batch<'_>) -> Result<ModelOutput> {
        let path = if !super::kernels::native(x.planes) {
            Path::Stock
        } else if x.train {
            Path::Train
        } else {
            Path::Infer
        };
        self.forward_impl(x, path)
    }
}

/// How [`ResNet::forward_impl`] runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    /// candle's stock ops everywhere.
    Stock,
    /// Training mode on CPU f32: the tower on bordered activations
    /// (3x3 convolution kernel, fused batch norm + residual + relu), the
    /// heads' 1x1 convolutions reading it directly.
    Train,
    /// Eval mode on CPU f32: batch norms folded into fused convolutions.
    Infer,
}

impl ResNet {
    /// [`ValueNet::forward`] through candle's stock ops only (convolution,
    /// batch norm and relu as separate ops, in eval mode too): the
    /// reference for the folded eval path.
    pub fn forward_stock(
        &self,
        planes: &Tensor,
        globals: Option<&Tensor>,
        train: bool,
    ) -> Result<ModelOutput> {
        self.io.check(planes, globals)?;
        let x = Batch {
            planes,
            globals,
            train,
        };
        self.forward_impl(x, Path::Stock)
    }

    /// The tower's folded convolutions (stem, then each block's two),
    /// prepared for inference.
    fn folded_tower(&self) -> Result<FoldedTower> {
        let mut convs = vec![self.stem.bordered_folded()?];
        for b in &self.blocks {
            convs.push(b.a.bordered_folded()?);
            convs.push(b.b.bordered_folded()?);
        }
        Ok(Arc::new(convs))
    }

    /// The tower's output through the bordered kernels (bordered).
    fn tower_bordered(&self, planes: &Tensor, train: bool) -> Result<Tensor> {
        let x = kernels::to_bordered(planes)?;
        if train {
            // Training moves the weights and running statistics.
            self.unfreeze();
            let mut x = self.stem.bordered_train(&x)?;
            for b in &self.blocks {
                x = b.train(&x)?;
            }
            return Ok(x);
        }
        let frozen = self.frozen.read().ok().and_then(|f| f.clone());
        let convs = match frozen {
            Some(convs) => convs,
            None => self.folded_tower()?,
        };
        let mut x = convs[0].apply(&x, None, Act::Relu)?;
        for pair in convs[1..].chunks_exact(2) {
            let y = pair[0].apply(&x, None, Act::Relu)?;
            x = pair[1].apply(&y, Some(&x), Act::Relu)?;
        }
        Ok(x)
    }

    fn unfreeze(&self) {
        if let Ok(mut f) = self.frozen.write() {
            *f = None;
        }
    }

    /// A batch checked against [`ResNet::io`](ValueNet::io), along `path`.
    fn forward_impl(&self, x: Batch<'_>, path: Path) -> Result<ModelOutput> {
        let Batch {
            planes,
            globals,
            train,
        } = x;
        // conv -> BN -> act.
        let cba = |cb: &ConvBn, x: &Tensor, act: Act| -> Result<Tensor> {
            let y = match path {
                Path::Infer => return cb.forward_folded(x, act),
                Path::Train => cb.head_train(x)?,
                Path::Stock => return cb.forward(x, train, act),
            };
            match act {
                Act::Relu => y.relu(),
                _ => Ok(y),
            }
        };
        let x = match path {
            Path::Stock => {
                let mut x = cba(&self.stem, planes, Act::Relu)?;
                for b in &self.blocks {
                    let y = cba(&b.a, &x, Act::Relu)?;
                    x = b.b.forward_residual(&y, &x, train)?;
                }
                x
            }
            // Bordered: the heads read it directly.
            Path::Train => self.tower_bordered(planes, true)?,
            Path::Infer => kernels::from_bordered(&self.tower_bordered(planes, false)?)?,
        };
        let v = cba(&self.value_conv, &x, Act::Relu)?.flatten_from(1)?;
        let v = match globals {
            Some(g) if g.dim(1)? > 0 => Tensor::cat(&[&v, g], 1)?,
            _ => v,
        };
        let v = self.value_fc1.forward(&v)?.relu()?;
        let mut v = self.value_fc2.forward(&v)?;
        if let Some(skip) = &self.value_linear {
            let raw = planes.flatten_from(1)?;
            let raw = match globals {
                Some(g) if g.dim(1)? > 0 => Tensor::cat(&[&raw, g], 1)?,
                _ => raw,
            };
            v = (v + skip.forward(&raw)?)?;
        }
        let v = v.squeeze(1)?;
        let policy = match &self.policy {
            Some((conv, fc)) => {
                let p = cba(conv, &x, Act::Relu)?.flatten_from(1)?;
                Some(fc.forward(&p)?)
            }
            None => None,
        };
        Ok(ModelOutput {
            value: self.io.output.forward(&v)?,
            policy,
        })
    }
}

#[cfg(test)]
mod tests;
