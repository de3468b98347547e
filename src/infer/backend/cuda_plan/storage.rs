//! The two ways a plan's values live on the device: f32 (for f32 and TF32)
//! and bf16. Everything that differs between them is here.

use crate::infer::plan::Precision;
use cudarc::cublas::sys::{cublasComputeType_t, cudaDataType};
use cudarc::cudnn::CudnnDataType;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

/// A storage type of activations and weights.
pub(super) trait Storage:
    DeviceRepr + ValidAsZeroBits + CudnnDataType + Copy + Default + Send + Sync + 'static
{
    /// The suffix of its kernels in `kernels/plan_ops.cu`.
    const KERNEL_SUFFIX: &'static str;
    /// Its type for cuBLAS.
    const BLAS_TYPE: cudaDataType;

    fn from_f32(v: f32) -> Self;
    fn to_f32(self) -> f32;
}

impl Storage for f32 {
    const KERNEL_SUFFIX: &'static str = "f32";
    const BLAS_TYPE: cudaDataType = cudaDataType::CUDA_R_32F;

    fn from_f32(v: f32) -> Self {
        v
    }

    fn to_f32(self) -> f32 {
        self
    }
}

impl Storage for half::bf16 {
    const KERNEL_SUFFIX: &'static str = "bf16";
    const BLAS_TYPE: cudaDataType = cudaDataType::CUDA_R_16BF;

    /// Rounded to nearest even, as [`Precision::store`] rounds.
    fn from_f32(v: f32) -> Self {
        half::bf16::from_f32(v)
    }

    fn to_f32(self) -> f32 {
        half::bf16::to_f32(self)
    }
}

/// cuBLAS's compute type for a precision: f32 products stay f32 (no TF32
/// unless asked), bf16 inputs accumulate in f32.
pub(super) fn blas_compute(precision: Precision) -> cublasComputeType_t {
    match precision {
        Precision::F32 => cublasComputeType_t::CUBLAS_COMPUTE_32F_PEDANTIC,
        Precision::Tf32 => cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32,
        Precision::Bf16 => cublasComputeType_t::CUBLAS_COMPUTE_32F,
    }
}
