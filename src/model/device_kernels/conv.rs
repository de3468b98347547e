//! The models' 2-d convolution (stride 1, no dilation) as one op with its
//! own backward pass, so that on a GPU the forward pass, the input
//! gradient and the filter gradient each run on cuDNN
//! ([`super::conv_cudnn`]) instead of candle's im2col product and its
//! naive transposed-convolution kernel.
//!
//! Three ops, each with a CPU side that is candle's own arithmetic (bf16
//! widened to f32 and rounded once, as [`crate::model::stock_conv`] runs
//! it), so that CPU tests check the op's shapes, padding and gradient
//! wiring bit for bit against candle's autograd, and `tests/device.rs`
//! checks cuDNN's values against the CPU:
//! - [`Conv2d`]: `y = x ⋆ w`, `x` `[B, C, H, W]`, `w` `[F, C, KH, KW]`;
//! - [`DataGrad`]: `dx` from `dy` and `w` (skipped when `x` needs none:
//!   the first layer's input planes);
//! - [`FilterGrad`]: `dw` from `x` and `dy`.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp2, DType, Device, Layout, Result, Shape, Tensor};

/// `x` `[B, C, H, W]` convolved with `w` `[F, C, KH, KW]` with `pad`
/// zeros on each side, through the op (on any device that has a side for
/// it: the CPU and, with the `cuda` feature, CUDA).
pub fn conv2d(x: &Tensor, w: &Tensor, pad: usize) -> Result<Tensor> {
    x.contiguous()?.apply_op2(&w.contiguous()?, Conv2d { pad })
}

/// Whether a convolution of `x` takes the op: on CUDA (cuDNN) in f32 or
/// bf16 ([`super::device_ops_take`]). Elsewhere candle's own convolution
/// is as fast (the CPU has the fused kernels).
pub fn takes(x: &Tensor) -> bool {
    super::device_ops_take(x)
}

/// What cuDNN chose for the convolutions this thread ran: its version and
/// each shape's algorithms (`None` without the `cuda` feature or before a
/// convolution ran on CUDA). `plies bench device` reports it.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct CudnnChoices {
    /// `cudnnGetVersion()`, e.g. 91000 for 9.10.0.
    pub version: usize,
    pub convolutions: Vec<ChosenConv>,
}

/// One convolution shape's algorithms (cuDNN's enum names), `None` for a
/// pass that has not run.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct ChosenConv {
    pub x: [usize; 4],
    pub w: [usize; 4],
    pub pad: usize,
    pub precision: String,
    pub forward: Option<String>,
    pub data: Option<String>,
    pub filter: Option<String>,
    /// The largest workspace of the three.
    pub workspace_bytes: usize,
}

/// This thread's [`CudnnChoices`].
pub fn cudnn_choices() -> Option<CudnnChoices> {
    #[cfg(feature = "cuda")]
    {
        super::conv_cudnn::choices()
    }
    #[cfg(not(feature = "cuda"))]
    {
        None
    }
}

/// A convolution's sizes, checked once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ConvDims {
    /// Input `[B, C, H, W]`.
    pub x: [usize; 4],
    /// Filters `[F, C, KH, KW]`.
    pub w: [usize; 4],
    pub pad: usize,
}

impl ConvDims {
    fn new(op: &str, x: &[usize], w: &[usize], pad: usize) -> Result<Self> {
        let four = |what: &str, d: &[usize]| -> Result<[usize; 4]> {
            <[usize; 4]>::try_from(d).map_err(|_| {
                candle_core::Error::Msg(format!(
                    "{op}: {what} has shape {d:?}, expected 4 dimensions"
                ))
            })
        };
        let (x, w) = (four("the input", x)?, four("the filter", w)?);
        if x[1] != w[1] {
            candle_core::bail!(
                "{op}: the input has {} channels and the filter {}",
                x[1],
                w[1]
            );
        }
        if x[2] + 2 * pad < w[2] || x[3] + 2 * pad < w[3] {
            candle_core::bail!(
                "{op}: a {}x{} filter does not fit a {}x{} input padded by {pad}",
                w[2],
                w[3],
                x[2],
                x[3]
            );
        }
        Ok(ConvDims { x, w, pad })
    }

    /// Output `[B, F, OH, OW]`.
    pub fn y(&self) -> [usize; 4] {
        let [b, _, h, w] = self.x;
        let [f, _, kh, kw] = self.w;
        let p = 2 * self.pad;
        [b, f, h + p - kh + 1, w + p - kw + 1]
    }
}

/// The forward op.
pub(crate) struct Conv2d {
    pub pad: usize,
}

/// The input gradient: `dy` (first operand) and `w` in, `dx` of `x`'s
/// shape out.
pub(crate) struct DataGrad {
    pub dims: ConvDims,
}

/// The filter gradient: `x` and `dy` (second operand) in, `dw` of `w`'s
/// shape out.
pub(crate) struct FilterGrad {
    pub dims: ConvDims,
}

impl CustomOp2 for Conv2d {
    fn name(&self) -> &'static str {
        "conv2d"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        ConvDims::new(self.name(), l1.dims(), l2.dims(), self.pad)?;
        let (x, w) = (cpu_tensor(s1, l1)?, cpu_tensor(s2, l2)?);
        cpu_storage(&widened(&[&x, &w], |t| {
            t[0].conv2d(t[1], self.pad, 1, 1, 1)
        })?)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        let dims = ConvDims::new(self.name(), l1.dims(), l2.dims(), self.pad)?;
        super::conv_cudnn::run(super::conv_cudnn::Pass::Forward, dims, (s1, l1), (s2, l2))
    }

    fn bwd(
        &self,
        x: &Tensor,
        w: &Tensor,
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let dims = ConvDims::new(self.name(), x.dims(), w.dims(), self.pad)?;
        let dy = dy.contiguous()?;
        let dx = if x.track_op() {
            Some(dy.apply_op2_no_bwd(w, &DataGrad { dims })?)
        } else {
            None
        };
        let dw = if w.track_op() {
            Some(x.apply_op2_no_bwd(&dy, &FilterGrad { dims })?)
        } else {
            None
        };
        Ok((dx, dw))
    }
}

impl CustomOp2 for DataGrad {
    fn name(&self) -> &'static str {
        "conv2d-data-grad"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.check(l1.dims(), l2.dims())?;
        let (dy, w) = (cpu_tensor(s1, l1)?, cpu_tensor(s2, l2)?);
        // candle's own input gradient: the transposed convolution, with
        // the output padding that restores the input's height.
        let (pad, oh) = (self.dims.pad, self.dims.y()[2]);
        let reached = oh + self.dims.w[2] - 1 - 2 * pad;
        let out_padding = self.dims.x[2] - reached;
        cpu_storage(&widened(&[&dy, &w], |t| {
            t[0].conv_transpose2d(t[1], pad, out_padding, 1, 1)
        })?)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        self.check(l1.dims(), l2.dims())?;
        super::conv_cudnn::run(super::conv_cudnn::Pass::Data, self.dims, (s1, l1), (s2, l2))
    }
}

impl DataGrad {
    fn check(&self, dy: &[usize], w: &[usize]) -> Result<()> {
        expect_shapes(
            self.name(),
            ("dy", dy, self.dims.y()),
            ("w", w, self.dims.w),
        )
    }
}

/// A gradient op's two operands against the shapes its convolution fixed.
fn expect_shapes(
    op: &str,
    (a, got_a, want_a): (&str, &[usize], [usize; 4]),
    (b, got_b, want_b): (&str, &[usize], [usize; 4]),
) -> Result<()> {
    if got_a != want_a || got_b != want_b {
        candle_core::bail!(
            "{op}: got {a} {got_a:?} and {b} {got_b:?}, expected {want_a:?} and {want_b:?}"
        );
    }
    Ok(())
}

impl CustomOp2 for FilterGrad {
    fn name(&self) -> &'static str {
        "conv2d-filter-grad"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.check(l1.dims(), l2.dims())?;
        let (x, dy) = (cpu_tensor(s1, l1)?, cpu_tensor(s2, l2)?);
        // candle's own filter gradient: the batch as the channels being
        // summed over, then cut to the filter's size.
        let [_, _, kh, kw] = self.dims.w;
        cpu_storage(&widened(&[&x, &dy], |t| {
            t[0].transpose(0, 1)?
                .conv2d(&t[1].transpose(0, 1)?, self.dims.pad, 1, 1, 1)?
                .transpose(0, 1)?
                .narrow(2, 0, kh)?
                .narrow(3, 0, kw)
        })?)
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s1: &candle_core::CudaStorage,
        l1: &Layout,
        s2: &candle_core::CudaStorage,
        l2: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        self.check(l1.dims(), l2.dims())?;
        super::conv_cudnn::run(
            super::conv_cudnn::Pass::Filter,
            self.dims,
            (s1, l1),
            (s2, l2),
        )
    }
}

impl FilterGrad {
    fn check(&self, x: &[usize], dy: &[usize]) -> Result<()> {
        expect_shapes(
            self.name(),
            ("x", x, self.dims.x),
            ("dy", dy, self.dims.y()),
        )
    }
}

/// A CPU storage as a tensor of its own (a copy: the CPU side is for
/// checking, not for speed).
fn cpu_tensor(s: &CpuStorage, l: &Layout) -> Result<Tensor> {
    let Some((a, b)) = l.contiguous_offsets() else {
        candle_core::bail!("conv2d: contiguous tensors only");
    };
    match s {
        CpuStorage::F32(v) => Tensor::from_slice(&v[a..b], l.shape(), &Device::Cpu),
        CpuStorage::BF16(v) => Tensor::from_slice(&v[a..b], l.shape(), &Device::Cpu),
        other => candle_core::bail!("conv2d: f32 or bf16 only, got {:?}", other.dtype()),
    }
}

fn cpu_storage(t: &Tensor) -> Result<(CpuStorage, Shape)> {
    let flat = t.flatten_all()?;
    let storage = match t.dtype() {
        DType::BF16 => CpuStorage::BF16(flat.to_vec1()?),
        _ => CpuStorage::F32(flat.to_dtype(DType::F32)?.to_vec1()?),
    };
    Ok((storage, t.shape().clone()))
}

/// `f` of the operands, which are widened from bf16 to f32 and the result
/// rounded back once (candle's CPU convolutions have no bf16).
fn widened(operands: &[&Tensor], f: impl FnOnce(&[&Tensor]) -> Result<Tensor>) -> Result<Tensor> {
    let dtype = operands[0].dtype();
    if dtype != DType::BF16 {
        return f(operands);
    }
    let wide = operands
        .iter()
        .map(|t| t.to_dtype(DType::F32))
        .collect::<Result<Vec<_>>>()?;
    f(&wide.iter().collect::<Vec<_>>())?.to_dtype(DType::BF16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::test_tensors::SeededTensors;
    use candle_core::Var;

    /// Same bits: the two tensors are equal element for element.
    fn assert_same(what: &str, a: &Tensor, b: &Tensor) {
        assert_eq!(a.dims(), b.dims(), "{what}: shapes");
        assert_eq!(a.dtype(), b.dtype(), "{what}: dtypes");
        let (a, b) = (
            a.to_dtype(DType::F32).unwrap().flatten_all().unwrap(),
            b.to_dtype(DType::F32).unwrap().flatten_all().unwrap(),
        );
        let (a, b) = (a.to_vec1::<f32>().unwrap(), b.to_vec1::<f32>().unwrap());
        let differ = a.iter().zip(&b).filter(|(x, y)| x != y).count();
        assert_eq!(differ, 0, "{what}: {differ} of {} elements differ", a.len());
    }

    /// The op's output and both gradients are candle's own convolution's,
    /// bit for bit, for the models' shapes (3x3 padded, 1x1, cnn3's
    /// unpadded 5x5 style) and a rectangular board, in f32 and bf16.
    #[test]
    fn the_op_and_its_gradients_are_candles_convolution() {
        let dev = Device::Cpu;
        let mut rng = SeededTensors::new(11);
        for (b, c, h, w, f, k, pad) in [
            (3, 4, 8, 8, 5, 3, 1),
            (2, 6, 9, 9, 3, 1, 0),
            (2, 3, 8, 8, 4, 5, 0),
            (1, 2, 6, 11, 3, 3, 1),
            (2, 3, 5, 5, 2, 3, 2),
        ] {
            for dtype in [DType::F32, DType::BF16] {
                let what = format!("{b}x{c}x{h}x{w} * {f}x{c}x{k}x{k} pad {pad} {dtype:?}");
                let x = rng.rand(-1.0, 1.0, (b, c, h, w), &dev).unwrap();
                let wt = rng.rand(-0.5, 0.5, (f, c, k, k), &dev).unwrap();
                let (xv, wv) = (
                    Var::from_tensor(&x.to_dtype(dtype).unwrap()).unwrap(),
                    Var::from_tensor(&wt.to_dtype(dtype).unwrap()).unwrap(),
                );
                // A loss that weighs each output differently, so a
                // misplaced gradient cannot cancel out.
                let weigh = |y: &Tensor| {
                    let n = y.elem_count();
                    let ramp = Tensor::arange(0f32, n as f32, &dev)
                        .unwrap()
                        .affine(1.0 / n as f64, 0.5)
                        .unwrap()
                        .reshape(y.shape())
                        .unwrap()
                        .to_dtype(dtype)
                        .unwrap();
                    (y * ramp).unwrap().sum_all().unwrap()
                };
                let y_op = conv2d(xv.as_tensor(), wv.as_tensor(), pad).unwrap();
                let y_stock =
                    crate::model::stock_conv::conv2d(xv.as_tensor(), wv.as_tensor(), pad).unwrap();
                assert_same(&format!("{what}: output"), &y_op, &y_stock);
                let (g_op, g_stock) = (
                    weigh(&y_op).backward().unwrap(),
                    weigh(&y_stock).backward().unwrap(),
                );
                for (name, v) in [("dx", &xv), ("dw", &wv)] {
                    assert_same(
                        &format!("{what}: {name}"),
                        g_op.get(v.as_tensor()).unwrap(),
                        g_stock.get(v.as_tensor()).unwrap(),
                    );
                }
            }
        }
    }

    /// Input planes that need no gradient get none computed; the filter
    /// still gets its own.
    #[test]
    fn planes_without_gradients_skip_the_data_gradient() {
        let dev = Device::Cpu;
        let mut rng = SeededTensors::new(5);
        let planes = rng.rand(-1.0, 1.0, (2, 3, 6, 6), &dev).unwrap();
        let w = Var::from_tensor(&rng.rand(-1.0, 1.0, (4, 3, 3, 3), &dev).unwrap()).unwrap();
        let grads = conv2d(&planes, w.as_tensor(), 1)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        assert!(grads.get(&planes).is_none());
        assert_eq!(grads.get(w.as_tensor()).unwrap().dims(), [4, 3, 3, 3]);
    }

    #[test]
    fn mismatched_shapes_are_refused_by_name() {
        let dev = Device::Cpu;
        let x = Tensor::zeros((1, 3, 5, 5), DType::F32, &dev).unwrap();
        let w = Tensor::zeros((2, 4, 3, 3), DType::F32, &dev).unwrap();
        let err = conv2d(&x, &w, 1).unwrap_err().to_string();
        assert!(err.contains("3 channels and the filter 4"), "{err}");
        let big = Tensor::zeros((2, 3, 7, 7), DType::F32, &dev).unwrap();
        let err = conv2d(&x, &big, 0).unwrap_err().to_string();
        assert!(err.contains("does not fit"), "{err}");
        let flat = Tensor::zeros((3, 5, 5), DType::F32, &dev).unwrap();
        let err = conv2d(&flat, &w, 1).unwrap_err().to_string();
        assert!(err.contains("expected 4 dimensions"), "{err}");
    }

    /// On the CPU the models keep candle's convolution (and the fused
    /// kernels) unless a test asks for the device path; forced candle ops
    /// win over both.
    #[test]
    fn the_cpu_takes_the_op_only_when_asked() {
        let x = Tensor::zeros((1, 1, 2, 2), DType::F32, &Device::Cpu).unwrap();
        assert!(!takes(&x));
        assert!(super::super::with_device_ops_on_the_cpu(|| takes(&x)));
        assert!(!takes(&x));
        let forced = crate::model::kernels::with_candle_ops(|| {
            super::super::with_device_ops_on_the_cpu(|| takes(&x))
        });
        assert!(!forced);
        let ints = Tensor::zeros((1, 1, 2, 2), DType::U8, &Device::Cpu).unwrap();
        assert!(!super::super::with_device_ops_on_the_cpu(|| takes(&ints)));
    }
}
