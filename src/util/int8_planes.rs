//! int8 planes widened to f32 where they are used: a dataset's planes are
//! int8, so the loader sends a batch to a GPU at a quarter of the f32 bytes
//! and it is widened there (`kernels/planes.cu`, a custom op whose CPU side
//! is the kernel's exact twin, [`widen_host`]). candle has no int8 type:
//! the bytes travel as `U8` holding two's-complement int8.

use candle_core::{CpuStorage, CustomOp1, Layout, Result, Shape, Tensor};

/// The kernel's twin: each byte read as int8, widened to f32.
pub fn widen_host(bytes: &[u8]) -> Vec<f32> {
    bytes.iter().map(|&b| b as i8 as f32).collect()
}

/// Int8 values as the `U8` tensor that carries them to a device.
pub fn int8_tensor(
    values: &[i8],
    shape: impl Into<Shape>,
    device: &candle_core::Device,
) -> Result<Tensor> {
    let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
    Tensor::from_vec(bytes, shape, device)
}

/// `t` (`U8` holding int8) widened to f32 on its own device.
pub fn widen(t: &Tensor) -> Result<Tensor> {
    t.contiguous()?.apply_op1_no_bwd(&Widen)
}

struct Widen;

impl CustomOp1 for Widen {
    fn name(&self) -> &'static str {
        "planes-i8-to-f32"
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        let CpuStorage::U8(v) = s else {
            candle_core::bail!("planes-i8-to-f32: u8 tensors holding int8 only");
        };
        let Some((a, b)) = l.contiguous_offsets() else {
            candle_core::bail!("planes-i8-to-f32: contiguous tensors only");
        };
        Ok((CpuStorage::F32(widen_host(&v[a..b])), l.shape().clone()))
    }

    #[cfg(feature = "cuda")]
    fn cuda_fwd(
        &self,
        s: &candle_core::CudaStorage,
        l: &Layout,
    ) -> Result<(candle_core::CudaStorage, Shape)> {
        use candle_core::backend::BackendStorage;
        use candle_core::cuda_backend::cudarc::driver::{LaunchConfig, PushKernelArg};
        use candle_core::cuda_backend::WrapErr;
        if !l.is_contiguous() {
            candle_core::bail!("planes-i8-to-f32: contiguous tensors only");
        }
        let dev = s.device().clone();
        let n = l.shape().elem_count();
        let input = s.as_cuda_slice::<u8>()?.slice(l.start_offset()..);
        // SAFETY: every element is written by the kernel below.
        let out = unsafe { dev.alloc::<f32>(n)? };
        let func = dev.get_or_load_custom_func("planes_i8_to_f32", "plies_planes", PTX)?;
        const THREADS: u32 = 256;
        let blocks = (n as u64).div_ceil(u64::from(THREADS)).clamp(1, 65_535) as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let count = n as u64;
        let mut builder = func.builder();
        builder.arg(&input);
        builder.arg(&out);
        builder.arg(&count);
        // SAFETY: the arguments match the kernel's signature in kernels/planes.cu.
        unsafe { builder.launch(cfg) }.w()?;
        Ok((
            candle_core::CudaStorage::wrap_cuda_slice(out, dev),
            l.shape().clone(),
        ))
    }
}

#[cfg(feature = "cuda")]
const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/planes.ptx"));

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};

    #[test]
    fn widening_reads_each_byte_as_int8() {
        let values: Vec<i8> = vec![-128, -1, 0, 1, 127, -3];
        let t = int8_tensor(&values, (2, 3), &Device::Cpu).unwrap();
        assert_eq!(t.dtype(), DType::U8);
        let w = widen(&t).unwrap();
        assert_eq!(w.dims(), [2, 3]);
        let got: Vec<f32> = w.flatten_all().unwrap().to_vec1().unwrap();
        let want: Vec<f32> = values.iter().map(|&v| f32::from(v)).collect();
        assert_eq!(got, want);
        // A view that is not contiguous is made so first.
        let t = t.t().unwrap();
        let got: Vec<f32> = widen(&t).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        assert_eq!(got, [-128.0, 1.0, -1.0, 127.0, 0.0, -3.0]);
    }
}
