//! [`NetPlan::build`]: a model's config and tensors compiled into a plan
//! (batch norm folded, filters and dense columns in NHWC order).

use super::{Buckets, BufId, Conv, Dense, NetPlan, Op, PlanAct, Precision};
use crate::infer::InferError;
use crate::model::{
    Activation, Cnn3NetConfig, LinearConfig, MlpNetConfig, ModelConfig, ResNetConfig,
};
use candle_core::Tensor;
use std::collections::HashMap;

/// Batch norm's epsilon in every model (PyTorch's default).
const BN_EPS: f32 = 1e-5;
/// Filters of the policy head's 1x1 convolution.
const POLICY_FILTERS: usize = 2;

fn plan_error(msg: impl Into<String>) -> InferError {
    InferError::Plan(msg.into())
}

/// The named tensors of a model, read as flat f32 with their shapes
/// checked.
struct Weights<'a> {
    kind: &'static str,
    tensors: &'a HashMap<String, Tensor>,
}

impl Weights<'_> {
    fn get(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, InferError> {
        let t = self
            .tensors
            .get(name)
            .ok_or_else(|| plan_error(format!("{}: tensor `{name}` is missing", self.kind)))?;
        if t.dims() != shape {
            return Err(plan_error(format!(
                "{}: tensor `{name}` is {:?}, expected {shape:?}",
                self.kind,
                t.dims()
            )));
        }
        Ok(t.flatten_all()?
            .to_dtype(candle_core::DType::F32)?
            .to_vec1()?)
    }

    /// A convolution `[out, in, kh, kw]` with the batch norm `bn` folded in:
    /// the weight as `[out][kh][kw][in]`, and the bias.
    fn conv_bn(
        &self,
        conv: &str,
        bn: &str,
        [out, inp, kh, kw]: [usize; 4],
    ) -> Result<(Vec<f32>, Vec<f32>), InferError> {
        let w = self.get(conv, &[out, inp, kh, kw])?;
        let [gamma, beta, mean, var] = ["weight", "bias", "running_mean", "running_var"]
            .map(|part| self.get(&format!("{bn}.{part}"), &[out]));
        let (gamma, beta, mean, var) = (gamma?, beta?, mean?, var?);
        let scale: Vec<f32> = gamma
            .iter()
            .zip(&var)
            .map(|(g, v)| g / (v + BN_EPS).sqrt())
            .collect();
        let bias = (0..out).map(|o| beta[o] - mean[o] * scale[o]).collect();
        let mut krsc = krsc(&w, [out, inp, kh, kw]);
        for (o, row) in krsc.chunks_exact_mut(kh * kw * inp).enumerate() {
            row.iter_mut().for_each(|v| *v *= scale[o]);
        }
        Ok((krsc, bias))
    }
}

/// `[out, in, kh, kw]` as `[out][kh][kw][in]`.
fn krsc(w: &[f32], [out, inp, kh, kw]: [usize; 4]) -> Vec<f32> {
    let mut v = vec![0f32; w.len()];
    for o in 0..out {
        for i in 0..inp {
            for y in 0..kh {
                for x in 0..kw {
                    v[((o * kh + y) * kw + x) * inp + i] = w[((o * inp + i) * kh + y) * kw + x];
                }
            }
        }
    }
    v
}

/// Dense weight columns that read a `[C, H, W]` map flattened channel
/// first (PyTorch's order) moved to where the same value sits in the
/// channels-last layout: column `c*H*W + p` goes to `p*C + c`. `w` is
/// `[rows][cols]`, the map's columns start at `at`.
fn nchw_columns_to_nhwc(w: &mut [f32], cols: usize, at: usize, [c, h, wd]: [usize; 3]) {
    let hw = h * wd;
    let mut tmp = vec![0f32; c * hw];
    for row in w.chunks_exact_mut(cols) {
        let map = &mut row[at..at + c * hw];
        for ch in 0..c {
            for p in 0..hw {
                tmp[p * c + ch] = map[ch * hw + p];
            }
        }
        map.copy_from_slice(&tmp);
    }
}

/// Ops and buffers as a plan is built.
struct Builder {
    ops: Vec<Op>,
    per_row: Vec<usize>,
    planes: [usize; 3],
    globals: usize,
}

impl Builder {
    fn new(planes: [usize; 3], globals: usize) -> Self {
        Builder {
            ops: Vec::new(),
            per_row: Vec::new(),
            planes,
            globals,
        }
    }

    fn buffer(&mut self, per_row: usize) -> BufId {
        self.per_row.push(per_row);
        BufId(self.per_row.len() - 1)
    }

    /// The widened planes, NHWC.
    fn planes(&mut self) -> BufId {
        let dst = self.buffer(self.planes.iter().product());
        self.ops.push(Op::Widen { dst });
        dst
    }

    /// The globals, when the encoder has any.
    fn globals(&mut self) -> Option<BufId> {
        (self.globals > 0).then(|| {
            let dst = self.buffer(self.globals);
            self.ops.push(Op::Globals { dst });
            dst
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn conv(
        &mut self,
        src: BufId,
        skip: Option<BufId>,
        [in_channels, out_channels]: [usize; 2],
        in_hw: [usize; 2],
        kernel: [usize; 2],
        pad: [usize; 2],
        (weight, bias): (Vec<f32>, Vec<f32>),
        act: PlanAct,
    ) -> BufId {
        let out_hw = [
            in_hw[0] + 2 * pad[0] + 1 - kernel[0],
            in_hw[1] + 2 * pad[1] + 1 - kernel[1],
        ];
        let dst = self.buffer(out_hw[0] * out_hw[1] * out_channels);
        self.ops.push(Op::Conv(Conv {
            src,
            dst,
            skip,
            in_channels,
            out_channels,
            in_hw,
            out_hw,
            kernel,
            pad,
            weight,
            bias,
            act,
        }));
        dst
    }

    fn dense(&mut self, srcs: Vec<BufId>, weight: Vec<f32>, bias: Vec<f32>, act: PlanAct) -> BufId {
        let inputs: usize = srcs.iter().map(|b| self.per_row[b.0]).sum();
        let outputs = bias.len();
        debug_assert_eq!(weight.len(), inputs * outputs);
        let dst = self.buffer(outputs);
        self.ops.push(Op::Dense(Dense {
            srcs,
            dst,
            inputs,
            outputs,
            weight,
            bias,
            act,
        }));
        dst
    }

    fn finish(
        self,
        model: &ModelConfig,
        value: BufId,
        policy: Option<BufId>,
        precision: Precision,
        max_batch: usize,
    ) -> NetPlan {
        let mut plan = NetPlan {
            model: model.kind(),
            planes: self.planes,
            globals: self.globals,
            ops: self.ops,
            per_row: self.per_row,
            value,
            policy,
            output: model.output(),
            precision,
            buckets: Buckets::up_to(max_batch),
        };
        // Weights as the device stores them.
        for op in &mut plan.ops {
            let (w, b) = match op {
                Op::Conv(c) => (&mut c.weight, &mut c.bias),
                Op::Dense(d) => (&mut d.weight, &mut d.bias),
                _ => continue,
            };
            w.iter_mut().for_each(|v| *v = precision.store(*v));
            b.iter_mut().for_each(|v| *v = precision.store(*v));
        }
        plan
    }
}

impl NetPlan {
    /// `model` with `tensors` (named as its `expected_tensors`) for an
    /// encoder of `planes` and `globals`, in `precision`, with buffers for
    /// batches up to `max_batch`. The MDRNN has no plan (its own kernels
    /// run it).
    pub fn build(
        model: &ModelConfig,
        tensors: &HashMap<String, Tensor>,
        planes: [usize; 3],
        globals: usize,
        precision: Precision,
        max_batch: usize,
    ) -> Result<NetPlan, InferError> {
        model.check_input(planes, globals)?;
        let w = Weights {
            kind: model.kind(),
            tensors,
        };
        let mut b = Builder::new(planes, globals);
        let (value, policy) = match model {
            ModelConfig::Cnn3(cfg) => (cnn3(&mut b, &w, cfg)?, None),
            ModelConfig::Resnet(cfg) => resnet(&mut b, &w, cfg)?,
            ModelConfig::Mlp(cfg) => (mlp(&mut b, &w, cfg)?, None),
            ModelConfig::Linear(cfg) => (linear(&mut b, &w, cfg)?, None),
            ModelConfig::Mdrnn(_) => {
                return Err(plan_error(
                    "mdrnn: no plan; the MDRNN runs on its own sweep kernels",
                ))
            }
        };
        Ok(b.finish(model, value, policy, precision, max_batch))
    }
}

fn cnn3(b: &mut Builder, w: &Weights, cfg: &Cnn3NetConfig) -> Result<BufId, InferError> {
    let [c, h, wd] = b.planes;
    let net = &cfg.net;
    let [kh, kw] = net.kernel;
    let [f, oh, ow] = net.conv_output(b.planes);
    let x = b.planes();
    let conv_w = krsc(&w.get("conv.weight", &[f, c, kh, kw])?, [f, c, kh, kw]);
    let conv_b = w.get("conv.bias", &[f])?;
    let x = b.conv(
        x,
        None,
        [c, f],
        [h, wd],
        net.kernel,
        [0, 0],
        (conv_w, conv_b),
        PlanAct::Tanh,
    );
    let flat = f * oh * ow;
    let mut hidden_w = w.get("hidden.weight", &[net.hidden, flat])?;
    nchw_columns_to_nhwc(&mut hidden_w, flat, 0, [f, oh, ow]);
    let hidden_b = w.get("hidden.bias", &[net.hidden])?;
    let x = b.dense(vec![x], hidden_w, hidden_b, PlanAct::Tanh);
    let out_w = w.get("out.weight", &[1, net.hidden])?;
    let out_b = w.get("out.bias", &[1])?;
    let act = match net.output {
        crate::model::Cnn3Output::Sigmoid => PlanAct::Sigmoid,
        crate::model::Cnn3Output::Relu => PlanAct::Relu,
    };
    Ok(b.dense(vec![x], out_w, out_b, act))
}

/// The planes (and globals) as the first sources of a dense layer whose
/// weight reads `C*H*W + G` columns in PyTorch's order.
fn raw_input_sources(b: &mut Builder) -> Vec<BufId> {
    let planes = b.planes();
    std::iter::once(planes).chain(b.globals()).collect()
}

fn mlp(b: &mut Builder, w: &Weights, cfg: &MlpNetConfig) -> Result<BufId, InferError> {
    let mut srcs = raw_input_sources(b);
    let act = match cfg.activation {
        Activation::Tanh => PlanAct::Tanh,
        Activation::Relu => PlanAct::Relu,
        Activation::Elliott { beta } => PlanAct::Elliott(beta as f32),
    };
    let mut fan_in = cfg.inputs;
    for (i, &h) in cfg.hidden.iter().enumerate() {
        let mut weight = w.get(&format!("hidden.{i}.weight"), &[h, fan_in])?;
        if i == 0 {
            nchw_columns_to_nhwc(&mut weight, fan_in, 0, b.planes);
        }
        let bias = w.get(&format!("hidden.{i}.bias"), &[h])?;
        srcs = vec![b.dense(srcs, weight, bias, act)];
        fan_in = h;
    }
    let mut weight = w.get("out.weight", &[1, fan_in])?;
    if cfg.hidden.is_empty() {
        nchw_columns_to_nhwc(&mut weight, fan_in, 0, b.planes);
    }
    let bias = w.get("out.bias", &[1])?;
    Ok(b.dense(srcs, weight, bias, cfg.output.into()))
}

fn linear(b: &mut Builder, w: &Weights, cfg: &LinearConfig) -> Result<BufId, InferError> {
    let [c, h, wd] = b.planes;
    let g = b.globals;
    let srcs = raw_input_sources(b);
    // Without the board term the planes still arrive; they weigh nothing.
    let mut weight = if cfg.board {
        w.get("psq.weight", &[c, h, wd])?
    } else {
        vec![0.0; c * h * wd]
    };
    nchw_columns_to_nhwc(&mut weight, c * h * wd, 0, b.planes);
    if g > 0 {
        weight.extend(w.get("globals.weight", &[g])?);
    }
    let bias = w.get("psq.bias", &[1])?;
    Ok(b.dense(srcs, weight, bias, cfg.output.into()))
}

fn resnet(
    b: &mut Builder,
    w: &Weights,
    cfg: &ResNetConfig,
) -> Result<(BufId, Option<BufId>), InferError> {
    let [c, h, wd] = b.planes;
    let (ch, hw) = (cfg.channels, h * wd);
    let planes = b.planes();
    let globals = b.globals();
    let conv3 = |b: &mut Builder, src, skip, [inp, out]: [usize; 2], conv: &str, bn: &str| {
        let folded = w.conv_bn(conv, bn, [out, inp, 3, 3])?;
        Ok::<_, InferError>(b.conv(
            src,
            skip,
            [inp, out],
            [h, wd],
            [3, 3],
            [1, 1],
            folded,
            PlanAct::Relu,
        ))
    };
    let mut x = conv3(b, planes, None, [c, ch], "stem.conv.weight", "stem.bn")?;
    for i in 0..cfg.blocks {
        let p = format!("blocks.{i}");
        let y = conv3(
            b,
            x,
            None,
            [ch, ch],
            &format!("{p}.conv1.weight"),
            &format!("{p}.bn1"),
        )?;
        x = conv3(
            b,
            y,
            Some(x),
            [ch, ch],
            &format!("{p}.conv2.weight"),
            &format!("{p}.bn2"),
        )?;
    }
    let conv1 = |b: &mut Builder, out: usize, head: &str| {
        let folded = w.conv_bn(
            &format!("{head}.conv.weight"),
            &format!("{head}.bn"),
            [out, ch, 1, 1],
        )?;
        Ok::<_, InferError>(b.conv(
            x,
            None,
            [ch, out],
            [h, wd],
            [1, 1],
            [0, 0],
            folded,
            PlanAct::Relu,
        ))
    };
    // Value head: one plane, so its NHWC and NCHW orders agree.
    let v = conv1(b, 1, "value")?;
    let g = b.globals;
    let fc1_in = hw + g;
    let fc1 = b.dense(
        std::iter::once(v).chain(globals).collect(),
        w.get("value.fc1.weight", &[cfg.value_hidden, fc1_in])?,
        w.get("value.fc1.bias", &[cfg.value_hidden])?,
        PlanAct::Relu,
    );
    // fc2 and the linear term of the raw input as one product:
    // [fc2 | linear's plane columns (NHWC) | linear's globals].
    let mut weight = w.get("value.fc2.weight", &[1, cfg.value_hidden])?;
    let mut srcs = vec![fc1];
    if cfg.value_linear.is_some() {
        let n = c * hw + g;
        let mut lin = w.get("value.linear.weight", &[1, n])?;
        nchw_columns_to_nhwc(&mut lin, n, 0, b.planes);
        weight.extend(lin);
        srcs.push(planes);
        srcs.extend(globals);
    }
    let value = b.dense(
        srcs,
        weight,
        w.get("value.fc2.bias", &[1])?,
        cfg.output.into(),
    );
    let policy = if cfg.policy {
        let p = conv1(b, POLICY_FILTERS, "policy")?;
        let n = POLICY_FILTERS * hw;
        let out = cfg.policy_planes * hw;
        let mut weight = w.get("policy.fc.weight", &[out, n])?;
        nchw_columns_to_nhwc(&mut weight, n, 0, [POLICY_FILTERS, h, wd]);
        Some(b.dense(
            vec![p],
            weight,
            w.get("policy.fc.bias", &[out])?,
            PlanAct::Identity,
        ))
    } else {
        None
    };
    Ok((value, policy))
}
