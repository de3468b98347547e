//! The vector instruction set the hand-written CPU kernels run with: the
//! best this CPU has, detected once, or a lower one named by
//! `PLIES_KERNEL_SIMD` (`portable`, `avx2`, `avx512`) to compare the paths
//! or to check that a benchmark guard notices a kernel losing its fast path.
//! Every kernel that picks a compiled variant asks [`Simd::best`]; the
//! `gemm` crate's matrix products choose their own.

use std::sync::OnceLock;

/// The variable that caps the kernels' vector set.
pub const SIMD_CAP_VAR: &str = "PLIES_KERNEL_SIMD";

/// A kernel's instruction set, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Simd {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// A `PLIES_KERNEL_SIMD` value that cannot be honoured.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SimdCapError {
    #[error("{SIMD_CAP_VAR}={value:?} is not a vector set: expected portable, avx2 or avx512")]
    Unknown { value: String },
    #[error("{SIMD_CAP_VAR}={value:?} asks for a set this CPU lacks (it has: {available})")]
    Unavailable { value: String, available: String },
}

impl Simd {
    /// Every set this CPU can run, the best last.
    pub fn available() -> Vec<Simd> {
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
    pub fn name(self) -> &'static str {
        match self {
            Simd::Portable => "portable (no vector set)",
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => "AVX2+FMA",
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => "AVX-512F",
        }
    }

    /// The set a `PLIES_KERNEL_SIMD` value names, if this CPU has it.
    pub fn parse_cap(value: &str, available: &[Simd]) -> Result<Simd, SimdCapError> {
        let wanted = match value.trim().to_ascii_lowercase().as_str() {
            "portable" | "scalar" | "none" => Some(Simd::Portable),
            #[cfg(target_arch = "x86_64")]
            "avx2" => Some(Simd::Avx2),
            #[cfg(target_arch = "x86_64")]
            "avx512" | "avx-512" | "avx512f" => Some(Simd::Avx512),
            #[cfg(not(target_arch = "x86_64"))]
            "avx2" | "avx512" | "avx-512" | "avx512f" => None,
            _ => {
                return Err(SimdCapError::Unknown {
                    value: value.to_string(),
                })
            }
        };
        match wanted {
            Some(set) if available.contains(&set) => Ok(set),
            _ => Err(SimdCapError::Unavailable {
                value: value.to_string(),
                available: available
                    .iter()
                    .map(|s| s.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// The cap `PLIES_KERNEL_SIMD` sets, if any: the command line checks
    /// this at start so a bad value is an error, not a silent default.
    pub fn cap_from_env() -> Result<Option<Simd>, SimdCapError> {
        match std::env::var(SIMD_CAP_VAR) {
            Ok(value) if !value.trim().is_empty() => {
                Simd::parse_cap(&value, &Simd::available()).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The set the kernels run with: the CPU's best, or the cap's.
    pub fn best() -> Simd {
        static BEST: OnceLock<Simd> = OnceLock::new();
        *BEST.get_or_init(|| {
            let best = Simd::cpu_best();
            match Simd::cap_from_env() {
                Ok(cap) => cap.unwrap_or(best),
                Err(e) => {
                    tracing::warn!("{e}; the kernels use {}", best.name());
                    best
                }
            }
        })
    }

    /// Whether the kernels run below the CPU's best (a cap is set).
    pub fn capped() -> bool {
        Simd::best() != Simd::cpu_best()
    }

    /// The best set this CPU has, whatever the cap.
    fn cpu_best() -> Simd {
        Simd::available()
            .into_iter()
            .max()
            .unwrap_or(Simd::Portable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_names_a_set_the_cpu_has() {
        let all = Simd::available();
        assert_eq!(Simd::parse_cap("portable", &all), Ok(Simd::Portable));
        assert_eq!(Simd::parse_cap(" Portable ", &all), Ok(Simd::Portable));
        let err = Simd::parse_cap("sse9", &all).unwrap_err();
        assert!(
            err.to_string()
                .contains("expected portable, avx2 or avx512"),
            "{err}"
        );
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_cap_above_the_cpu_is_refused_naming_what_it_has() {
        let err = Simd::parse_cap("avx512", &[Simd::Portable, Simd::Avx2]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "PLIES_KERNEL_SIMD=\"avx512\" asks for a set this CPU lacks \
             (it has: portable (no vector set), AVX2+FMA)"
        );
        assert_eq!(
            Simd::parse_cap("AVX2", &[Simd::Portable, Simd::Avx2]),
            Ok(Simd::Avx2)
        );
    }

    #[test]
    fn the_best_set_is_one_the_cpu_has() {
        assert!(Simd::available().contains(&Simd::best()));
    }
}
