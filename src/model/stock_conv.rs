//! The models' 2-d convolution (stride 1, no dilation) for every device
//! and dtype they run in: on CUDA the cuDNN op of
//! [`crate::model::device_kernels::conv`], elsewhere candle's own.
//!
//! candle's CPU convolution has no bf16, so on the CPU a bf16 convolution
//! reads its inputs widened to f32 and rounds its output back: what bf16
//! tensor cores compute (bf16 inputs, f32 sums, a bf16 result). Both casts
//! are graph ops, so gradients flow (in f32 inside, bf16 outside), which
//! is how bf16 training runs on the CPU.

use candle_core::{DType, Result, Tensor};

/// `x` `[B, C, H, W]` convolved with `w` `[F, C, KH, KW]`, `pad` zeros on
/// each side.
pub fn conv2d(x: &Tensor, w: &Tensor, pad: usize) -> Result<Tensor> {
    if super::device_kernels::conv::takes(x) {
        return super::device_kernels::conv::conv2d(x, w, pad);
    }
    if x.device().is_cpu() && x.dtype() == DType::BF16 {
        let wide = x
            .to_dtype(DType::F32)?
            .conv2d(&w.to_dtype(DType::F32)?, pad, 1, 1, 1)?;
        return wide.to_dtype(DType::BF16);
    }
    x.conv2d(w, pad, 1, 1, 1)
}

#[cfg(test)]
mod tests {
    use candle_core::{Device, Var};

    use super::*;

    /// On the CPU in bf16: the f32 convolution of the bf16 values, rounded
    /// once, with gradients for both operands.
    #[test]
    fn bf16_on_the_cpu_is_the_widened_convolution_rounded() {
        let dev = Device::Cpu;
        let x = Tensor::arange(0f32, 2.0 * 3.0 * 5.0 * 5.0, &dev)
            .unwrap()
            .affine(0.013, -0.7)
            .unwrap()
            .reshape((2, 3, 5, 5))
            .unwrap();
        let w = Tensor::arange(0f32, 4.0 * 3.0 * 9.0, &dev)
            .unwrap()
            .affine(-0.021, 0.9)
            .unwrap()
            .reshape((4, 3, 3, 3))
            .unwrap();
        let (xb, wb) = (
            x.to_dtype(DType::BF16).unwrap(),
            w.to_dtype(DType::BF16).unwrap(),
        );
        let y = conv2d(&xb, &wb, 1).unwrap();
        assert_eq!(y.dtype(), DType::BF16);
        let want = xb
            .to_dtype(DType::F32)
            .unwrap()
            .conv2d(&wb.to_dtype(DType::F32).unwrap(), 1, 1, 1, 1)
            .unwrap()
            .to_dtype(DType::BF16)
            .unwrap();
        let same: Vec<f32> = (y - want)
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        assert!(same.iter().all(|&d| d == 0.0));
        let wv = Var::from_tensor(&wb).unwrap();
        let g = conv2d(&xb, wv.as_tensor(), 1)
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let gw = g.get(wv.as_tensor()).unwrap();
        assert_eq!(
            (gw.dtype(), gw.dims()),
            (DType::BF16, &[4usize, 3, 3, 3][..])
        );
        // f32 is candle's own convolution.
        let y32 = conv2d(&x, &w, 1).unwrap();
        assert_eq!(y32.dtype(), DType::F32);
    }
}
