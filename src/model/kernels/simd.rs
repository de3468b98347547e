//! The vector instruction sets the hand-written kernels can use, detected
//! once at run time.

/// A kernel's instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Simd {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Simd {
    /// Every set this CPU can run, the best last.
    pub(crate) fn available() -> Vec<Simd> {
        #[allow(unused_mut)]
        let mut sets = vec![Simd::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
            {
                sets.push(Simd::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f") {
                sets.push(Simd::Avx512);
            }
        }
        sets
    }

    /// The set's name as a header prints it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Simd::Portable => "portable (no vector set)",
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => "AVX2+FMA",
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => "AVX-512F",
        }
    }

    pub(crate) fn best() -> Simd {
        static BEST: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| *Simd::available().last().expect("portable is always there"))
    }
}

/// What the CPU kernels run with on this processor, for benchmark headers:
/// the hand-written kernels' vector set (activations, direct 3x3
/// convolutions, batch norm) and the matrix products' (the `gemm` crate,
/// whose AVX-512 kernels the `x86-v4` feature enables, chosen at run time
/// on the same test).
pub fn kernel_instruction_sets() -> String {
    format!(
        "kernels {}, matrix products (gemm) {}",
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
