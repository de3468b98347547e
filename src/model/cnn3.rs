//! The three-layer convolutional value network of Zaffetti's Arimaa thesis:
//! one convolution, one fully connected hidden layer, one output.
//!
//! ```text
//! planes [B, C, H, W]
//!   -> conv: F filters kh x kw, valid padding, stride 1 -> tanh  [B, F, H-kh+1, W-kw+1]
//!   -> flatten (filter-major, as torch.flatten)                  [B, F*(H-kh+1)*(W-kw+1)]
//!   -> hidden: fully connected, `hidden` units -> tanh           [B, hidden]
//!   -> out: one unit -> sigmoid (or relu)                        [B, 1]
//! ```
//!
//! Tensor names (PyTorch's `nn.Conv2d` / `nn.Linear` layouts):
//!
//! | name | shape |
//! | --- | --- |
//! | `conv.weight` | `[F, C, kh, kw]` |
//! | `conv.bias` | `[F]` |
//! | `hidden.weight` | `[hidden, F*(H-kh+1)*(W-kw+1)]` |
//! | `hidden.bias` | `[hidden]` |
//! | `out.weight` | `[1, hidden]` |
//! | `out.bias` | `[1]` |
//!
//! Fresh weights and biases are uniform in `+-1/sqrt(fan_in)` (PyTorch's
//! default bounds).
//!
//! On CPU f32 [`Cnn3::forward`] runs three fused kernels of
//! [`super::kernels`] (convolution as im2col plus one matrix product with
//! bias and tanh; hidden layer with bias and tanh; output with bias and its
//! activation), each with its own backward pass; elsewhere it runs candle's
//! stock ops, as [`Cnn3::forward_stock`] does everywhere (tanh there is
//! `2 sigmoid(2x) - 1`, faster than candle's scalar CPU tanh). The two agree
//! within 1e-5 (tested). In a training step ([`Cnn3::forward_t`] with
//! `train`, parameters that learn from data planes) the three kernels run
//! as one op
//! ([`super::kernels::cnn3_train`]) with the same values and gradients.
//!
//! ```
//! use candle_core::{DType, Device, Tensor};
//! use candle_nn::{VarBuilder, VarMap};
//! use plies::model::{Cnn3, Cnn3Config};
//! let vm = VarMap::new();
//! let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
//! let net = Cnn3::new(&Cnn3Config::default(), [6, 8, 8], vb).unwrap();
//! let x = Tensor::zeros((2, 6, 8, 8), DType::F32, &Device::Cpu).unwrap();
//! assert_eq!(net.forward(&x).unwrap().dims(), &[2, 1]);
//! ```

use super::dropout::Dropout;
use super::kernels::{self, Act};
use super::ModelError;
use candle_core::{Result, Tensor};
use candle_nn::{Init, Linear, Module, VarBuilder};
use serde::{Deserialize, Serialize};

/// Activation of the output unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cnn3Output {
    /// A value in (0, 1): the expected result for the side to move.
    Sigmoid,
    /// `max(0, x)`, as one of the thesis' variants.
    Relu,
}

/// Shape of a [`Cnn3`]; missing fields take their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Cnn3Config {
    /// Convolution filters (default 48).
    pub filters: usize,
    /// Kernel `[kh, kw]` (default `[4, 4]`; e.g. `[1, 8]` or `[6, 1]` too).
    pub kernel: [usize; 2],
    /// Units of the hidden layer (default 384).
    pub hidden: usize,
    /// Output activation (default sigmoid).
    pub output: Cnn3Output,
    /// Seeded dropout on the hidden layer's activations while training, in
    /// `[0, 1)` (default 0: none; not written when 0).
    #[serde(skip_serializing_if = "is_zero")]
    pub dropout: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl Default for Cnn3Config {
    fn default() -> Self {
        Cnn3Config {
            filters: 48,
            kernel: [4, 4],
            hidden: 384,
            output: Cnn3Output::Sigmoid,
            dropout: 0.0,
        }
    }
}

impl Cnn3Config {
    /// Checks the config against the input shape `[C, H, W]`.
    pub fn validate(&self, input: [usize; 3]) -> std::result::Result<(), ModelError> {
        let [c, h, w] = input;
        let [kh, kw] = self.kernel;
        if self.filters == 0 || self.hidden == 0 || c == 0 {
            return Err(ModelError::Config(format!(
                "cnn3 needs filters, hidden units and input channels > 0, got filters {}, hidden {}, channels {c}",
                self.filters, self.hidden
            )));
        }
        if !(0.0..1.0).contains(&self.dropout) {
            return Err(ModelError::Config(format!(
                "cnn3 dropout must be in [0, 1), got {}",
                self.dropout
            )));
        }
        if kh == 0 || kw == 0 || kh > h || kw > w {
            return Err(ModelError::Config(format!(
                "cnn3 kernel {kh}x{kw} does not fit a {h}x{w} board (valid padding needs 1 <= kernel <= board)"
            )));
        }
        Ok(())
    }

    /// Shape `[F, H-kh+1, W-kw+1]` of the convolution's output.
    pub fn conv_output(&self, input: [usize; 3]) -> [usize; 3] {
        let [_, h, w] = input;
        let [kh, kw] = self.kernel;
        [
            self.filters,
            (h + 1).saturating_sub(kh),
            (w + 1).saturating_sub(kw),
        ]
    }

    /// The tensors of a model for input `[C, H, W]`: `(name, shape)`.
    pub fn expected_tensors(&self, input: [usize; 3]) -> Vec<(String, Vec<usize>)> {
        let [f, oh, ow] = self.conv_output(input);
        let [kh, kw] = self.kernel;
        vec![
            ("conv.weight".into(), vec![f, input[0], kh, kw]),
            ("conv.bias".into(), vec![f]),
            ("hidden.weight".into(), vec![self.hidden, f * oh * ow]),
            ("hidden.bias".into(), vec![self.hidden]),
            ("out.weight".into(), vec![1, self.hidden]),
            ("out.bias".into(), vec![1]),
        ]
    }
}

/// The three-layer CNN; see the module docs.
#[derive(Clone, Debug)]
pub struct Cnn3 {
    conv_weight: Tensor,
    /// `conv.bias` shaped `[1, F, 1, 1]` for broadcasting.
    conv_bias: Tensor,
    /// `conv.bias` as stored, `[F]`.
    conv_bias_flat: Tensor,
    hidden: Linear,
    out: Linear,
    output: Cnn3Output,
    input: [usize; 3],
    /// Seeded dropout on the hidden activations ([`super::dropout`]).
    dropout: Dropout,
}

fn uniform(fan_in: usize) -> Init {
    let a = 1.0 / (fan_in.max(1) as f64).sqrt();
    Init::Uniform { lo: -a, up: a }
}

fn bias(l: &Linear) -> Result<&Tensor> {
    l.bias()
        .ok_or_else(|| candle_core::Error::Msg("cnn3 layers have biases".into()))
}

/// tanh as `2 sigmoid(2x) - 1`.
fn tanh(x: &Tensor) -> Result<Tensor> {
    (candle_nn::ops::sigmoid(&(x * 2.0)?)? * 2.0)? - 1.0
}

impl Cnn3 {
    /// Creates (or reads) the variables through `vb` for inputs `[C, H, W]`.
    pub fn new(
        cfg: &Cnn3Config,
        input: [usize; 3],
        vb: VarBuilder,
    ) -> std::result::Result<Self, ModelError> {
        cfg.validate(input)?;
        let [c, _, _] = input;
        let [kh, kw] = cfg.kernel;
        let [f, oh, ow] = cfg.conv_output(input);
        let conv_fan_in = c * kh * kw;
        let vc = vb.pp("conv");
        let conv_weight = vc.get_with_hints((f, c, kh, kw), "weight", uniform(conv_fan_in))?;
        let conv_bias_flat = vc.get_with_hints(f, "bias", uniform(conv_fan_in))?;
        let conv_bias = conv_bias_flat.reshape((1, f, 1, 1))?;
        let linear = |fan_in: usize, fan_out: usize, vb: VarBuilder| -> Result<Linear> {
            let w = vb.get_with_hints((fan_out, fan_in), "weight", uniform(fan_in))?;
            let b = vb.get_with_hints(fan_out, "bias", uniform(fan_in))?;
            Ok(Linear::new(w, Some(b)))
        };
        Ok(Cnn3 {
            conv_weight,
            conv_bias,
            conv_bias_flat,
            hidden: linear(f * oh * ow, cfg.hidden, vb.pp("hidden"))?,
            out: linear(cfg.hidden, 1, vb.pp("out"))?,
            output: cfg.output,
            input,
            dropout: Dropout::new(cfg.dropout, "hidden"),
        })
    }

    /// Input shape `[C, H, W]`.
    pub fn input(&self) -> [usize; 3] {
        self.input
    }

    /// Values `[B, 1]` of planes `[B, C, H, W]`: the fused kernels on CPU
    /// f32, candle's stock ops elsewhere.
    pub fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.check_input(x)?;
        if !Self::fused(x) {
            return self.forward_stock(x);
        }
        self.output_layer(&self.hidden_layers(x)?)
    }

    fn params(&self) -> Result<kernels::Cnn3Params<'_>> {
        Ok(kernels::Cnn3Params {
            conv_weight: &self.conv_weight,
            conv_bias: &self.conv_bias_flat,
            hidden_weight: self.hidden.weight(),
            hidden_bias: bias(&self.hidden)?,
            out_weight: self.out.weight(),
            out_bias: bias(&self.out)?,
        })
    }

    fn output_act(&self) -> Act {
        match self.output {
            Cnn3Output::Sigmoid => Act::Sigmoid,
            Cnn3Output::Relu => Act::Relu,
        }
    }

    /// The fused kernels run on CPU f32; other devices and types take the
    /// stock path.
    fn fused(x: &Tensor) -> bool {
        super::kernels::native(x)
    }

    /// Convolution and hidden layer on the fused kernels: `[B, hidden]`.
    fn hidden_layers(&self, x: &Tensor) -> Result<Tensor> {
        let h = kernels::conv2d_act(
            x,
            &self.conv_weight,
            &self.conv_bias_flat,
            [0; 4],
            Act::Tanh,
        )?;
        kernels::linear_act(
            &h.flatten_from(1)?,
            self.hidden.weight(),
            bias(&self.hidden)?,
            Act::Tanh,
        )
    }

    /// The output unit on the fused kernel: `[B, 1]`.
    fn output_layer(&self, h: &Tensor) -> Result<Tensor> {
        kernels::linear_act(h, self.out.weight(), bias(&self.out)?, self.output_act())
    }

    /// [`Cnn3::forward`], with dropout on the hidden activations when
    /// `train` (and a dropout rate > 0); on the fused kernels too.
    pub fn forward_t(&self, x: &Tensor, train: bool) -> Result<Tensor> {
        if !train {
            return self.forward(x);
        }
        self.check_input(x)?;
        let learning = self.hidden.weight().track_op() && !x.track_op();
        if self.dropout.p() <= 0.0 && learning && Self::fused(x) {
            // Parameters that learn from data planes: the whole network as
            // one op, its backward pass without candle's per-activation
            // gradient buffers. (Not for evaluation: it permutes the hidden
            // weight on every call.)
            return kernels::cnn3_train(x, &self.params()?, self.output_act());
        }
        if self.dropout.p() <= 0.0 {
            return self.forward(x);
        }
        if Self::fused(x) {
            let h = self.dropout.forward(&self.hidden_layers(x)?, true)?;
            return self.output_layer(&h);
        }
        self.forward_stock_dropout(x)
    }

    /// The training forward with dropout through candle's stock ops.
    fn forward_stock_dropout(&self, x: &Tensor) -> Result<Tensor> {
        let h = super::stock_conv::conv2d(x, &self.conv_weight, 0)?;
        let h = tanh(&h.broadcast_add(&self.conv_bias)?)?;
        let h = tanh(&self.hidden.forward(&h.flatten_from(1)?)?)?;
        let y = self.out.forward(&self.dropout.forward(&h, true)?)?;
        match self.output {
            Cnn3Output::Sigmoid => candle_nn::ops::sigmoid(&y),
            Cnn3Output::Relu => y.relu(),
        }
    }

    fn check_input(&self, x: &Tensor) -> Result<()> {
        let dims = x.dims();
        if dims.len() != 4 || dims[1..] != self.input {
            candle_core::bail!(
                "cnn3 expects planes [B, {}, {}, {}], got {:?}",
                self.input[0],
                self.input[1],
                self.input[2],
                dims
            );
        }
        Ok(())
    }

    /// The same values through candle's stock ops only (conv2d, matmul,
    /// tanh as `2 sigmoid(2x) - 1`): the reference for the fused path.
    pub fn forward_stock(&self, x: &Tensor) -> Result<Tensor> {
        self.check_input(x)?;
        let h = super::stock_conv::conv2d(x, &self.conv_weight, 0)?;
        let h = tanh(&h.broadcast_add(&self.conv_bias)?)?;
        let h = tanh(&self.hidden.forward(&h.flatten_from(1)?)?)?;
        let y = self.out.forward(&h)?;
        match self.output {
            Cnn3Output::Sigmoid => candle_nn::ops::sigmoid(&y),
            Cnn3Output::Relu => y.relu(),
        }
    }
}

impl Module for Cnn3 {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        Cnn3::forward(self, x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_tensors::max_diff;
    use candle_core::{DType, Device};
    use candle_nn::{Optimizer, VarMap, SGD};

    fn build(cfg: &Cnn3Config, input: [usize; 3]) -> (VarMap, Cnn3) {
        let vm = VarMap::new();
        let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
        let net = Cnn3::new(cfg, input, vb).unwrap();
        (vm, net)
    }

    /// [`build`], with a positive output bias for a relu output: it keeps
    /// the relu unit alive at the start (random weights can leave it at 0
    /// for every input) and its outputs positive for a useful comparison.
    fn build_live(cfg: &Cnn3Config, input: [usize; 3]) -> (VarMap, Cnn3) {
        let (vm, net) = build(cfg, input);
        if cfg.output == Cnn3Output::Relu {
            let data = vm.data().lock().unwrap();
            data["out.bias"]
                .set(&Tensor::new(&[0.5f32], &Device::Cpu).unwrap())
                .unwrap();
        }
        (vm, net)
    }

    #[test]
    fn shapes_and_tensor_names() {
        let mut rt = crate::model::test_tensors::SeededTensors::new(1);
        for kernel in [[4, 4], [1, 8], [6, 1]] {
            let cfg = Cnn3Config {
                kernel,
                ..Default::default()
            };
            let (vm, net) = build(&cfg, [6, 8, 8]);
            let x = rt.randn(0f32, 1.0, (5, 6, 8, 8), &Device::Cpu).unwrap();
            let y = net.forward(&x).unwrap();
            assert_eq!(y.dims(), &[5, 1]);
            let v: Vec<f32> = y.flatten_all().unwrap().to_vec1().unwrap();
            assert!(v.iter().all(|&p| p > 0.0 && p < 1.0));
            let data = vm.data().lock().unwrap();
            let mut found: Vec<(String, Vec<usize>)> = data
                .iter()
                .map(|(k, v)| (k.clone(), v.dims().to_vec()))
                .collect();
            found.sort();
            let mut expected = cfg.expected_tensors([6, 8, 8]);
            expected.sort();
            assert_eq!(found, expected);
        }
        let x = Tensor::zeros((2, 5, 8, 8), DType::F32, &Device::Cpu).unwrap();
        let (_, net) = build(&Cnn3Config::default(), [6, 8, 8]);
        assert!(net.forward(&x).is_err());
        let too_big = Cnn3Config {
            kernel: [9, 1],
            ..Default::default()
        };
        let vm = VarMap::new();
        let vb = VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu);
        assert!(Cnn3::new(&too_big, [6, 8, 8], vb).is_err());
    }

    #[test]
    fn fused_dropout_path_matches_stock_ops_with_the_same_masks() {
        let mut rt = crate::model::test_tensors::SeededTensors::new(2);
        let dev = Device::Cpu;
        let cfg = Cnn3Config {
            dropout: 0.3,
            ..Default::default()
        };
        let (vm, net) = build(&cfg, [6, 8, 8]);
        let x = rt.randn(0f32, 1.0, (50, 6, 8, 8), &dev).unwrap();
        let t = rt.rand(0f32, 1.0, (50, 1), &dev).unwrap();
        let (fast, stock) = super::super::dropout::with_step(5, 9, || {
            (
                net.forward_t(&x, true).unwrap(),
                net.forward_stock_dropout(&x).unwrap(),
            )
        });
        let max_diff = |a: &Tensor, b: &Tensor| {
            (a - b)
                .unwrap()
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap()
        };
        assert!(max_diff(&fast, &stock) < 1e-5);
        // Dropout is on: the training output differs from evaluation's.
        assert!(max_diff(&fast, &net.forward_t(&x, false).unwrap()) > 1e-4);
        let loss = |y: &Tensor| (y - &t).unwrap().sqr().unwrap().mean_all().unwrap();
        let (gf, gs) = (
            loss(&fast).backward().unwrap(),
            loss(&stock).backward().unwrap(),
        );
        for var in vm.all_vars() {
            let (a, b) = (gf.get(&var).unwrap(), gs.get(&var).unwrap());
            let scale = b
                .abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f32>()
                .unwrap();
            assert!(
                max_diff(a, b) <= 1e-5 * scale.max(1.0),
                "gradient of {:?}",
                var.dims()
            );
        }
    }

    #[test]
    fn fused_path_matches_stock_ops() {
        let mut rt = crate::model::test_tensors::SeededTensors::new(3);
        let dev = Device::Cpu;
        for (kernel, output) in [
            ([4, 4], Cnn3Output::Sigmoid),
            ([1, 8], Cnn3Output::Relu),
            ([6, 1], Cnn3Output::Sigmoid),
            ([2, 2], Cnn3Output::Relu),
            ([8, 8], Cnn3Output::Sigmoid),
        ] {
            let cfg = Cnn3Config {
                kernel,
                output,
                ..Default::default()
            };
            let (vm, net) = build_live(&cfg, [6, 8, 8]);
            for batch in [1, 7, 300] {
                let x = rt.randn(0f32, 1.0, (batch, 6, 8, 8), &dev).unwrap();
                let t = rt.rand(0f32, 1.0, (batch, 1), &dev).unwrap();
                let fast = net.forward(&x).unwrap();
                let stock = net.forward_stock(&x).unwrap();
                let d = max_diff(&fast, &stock);
                assert!(d < 1e-5, "{kernel:?} b{batch}: outputs differ by {d}");
                let loss = |y: Tensor| (y - &t).unwrap().sqr().unwrap().mean_all().unwrap();
                let gf = loss(fast).backward().unwrap();
                let gs = loss(stock).backward().unwrap();
                for var in vm.all_vars() {
                    let (a, b) = (gf.get(&var).unwrap(), gs.get(&var).unwrap());
                    let d = max_diff(a, b);
                    assert!(
                        d < 1e-5,
                        "{kernel:?} b{batch}: gradient of {:?} differs by {d}",
                        var.dims()
                    );
                }
            }
        }
    }

    #[test]
    fn tanh_matches_candle() {
        let x = Tensor::new(&[-30f32, -2.0, -0.5, 0.0, 0.3, 1.0, 40.0], &Device::Cpu).unwrap();
        let a: Vec<f32> = tanh(&x).unwrap().to_vec1().unwrap();
        let b: Vec<f32> = x.tanh().unwrap().to_vec1().unwrap();
        for (a, b) in a.iter().zip(&b) {
            assert!((a - b).abs() < 1e-6, "{a} vs {b}");
        }
    }

    #[test]
    fn gradient_steps_lower_the_mse() {
        let mut rt = crate::model::test_tensors::SeededTensors::new(4);
        let dev = Device::Cpu;
        for output in [Cnn3Output::Sigmoid, Cnn3Output::Relu] {
            let cfg = Cnn3Config {
                filters: 8,
                hidden: 16,
                output,
                ..Default::default()
            };
            let (vm, net) = build_live(&cfg, [2, 5, 5]);
            let x = rt.randn(0f32, 1.0, (16, 2, 5, 5), &dev).unwrap();
            let t = Tensor::new(&[[1f32], [0.], [0.5], [1.], [0.], [1.], [0.], [0.5]], &dev)
                .unwrap()
                .repeat((2, 1))
                .unwrap();
            let mse = |net: &Cnn3| {
                let d = (net.forward(&x).unwrap() - &t).unwrap();
                d.sqr().unwrap().mean_all().unwrap()
            };
            let before = mse(&net).to_scalar::<f32>().unwrap();
            let mut sgd = SGD::new(vm.all_vars(), 0.2).unwrap();
            for _ in 0..60 {
                sgd.backward_step(&mse(&net)).unwrap();
            }
            let after = mse(&net).to_scalar::<f32>().unwrap();
            assert!(after < 0.7 * before, "{output:?}: {before} -> {after}");
        }
    }

    #[test]
    fn config_serde_defaults() {
        let c: Cnn3Config = serde_json::from_str(r#"{"kernel": [1, 8]}"#).unwrap();
        assert_eq!(c.filters, 48);
        assert_eq!(c.hidden, 384);
        assert_eq!(c.output, Cnn3Output::Sigmoid);
        let json = serde_json::to_string(&Cnn3Config::default()).unwrap();
        assert_eq!(
            json,
            r#"{"filters":48,"kernel":[4,4],"hidden":384,"output":"sigmoid"}"#
        );
        assert!(serde_json::from_str::<Cnn3Config>(r#"{"filter": 3}"#).is_err());
    }
}
