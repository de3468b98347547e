//! What the CPU kernels run with on this processor, for benchmark headers.
//! The hand-written kernels' vector set is decided in one place,
//! [`crate::util::simd`].

pub(crate) use crate::util::simd::Simd;

/// What the CPU kernels run with on this processor, for benchmark headers:
/// the hand-written kernels' vector set (activations, direct 3x3
/// convolutions, batch norm) and the matrix products' (the `gemm` crate,
/// whose AVX-512 kernels the `x86-v4` feature enables, chosen at run time
/// on the same test).
pub fn kernel_instruction_sets() -> String {
    let cap = if Simd::capped() {
        format!(" (capped by {})", crate::util::simd::SIMD_CAP_VAR)
    } else {
        String::new()
    };
    format!(
        "kernels {}{cap}, matrix products (gemm) {}",
        Simd::best().name(),
        gemm_set()
    )
}

/// The set `gemm` takes: its AVX-512 kernels need pulp's x86-v4 level
/// (F, BW, CD, DQ and VL), else AVX2 with FMA, else scalar code.
fn gemm_set() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512dq")
            && has!("avx512vl")
        {
            return "AVX-512";
        }
        if has!("avx2") && has!("fma") {
            return "AVX2+FMA";
        }
    }
    "scalar"
}

/// The processor's model name (`/proc/cpuinfo`), or `unknown processor`.
pub fn processor_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown processor".into())
}
