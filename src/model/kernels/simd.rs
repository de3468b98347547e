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

    pub(crate) fn best() -> Simd {
        static BEST: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
        *BEST.get_or_init(|| *Simd::available().last().expect("portable is always there"))
    }
}
