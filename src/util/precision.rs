//! The precisions networks run and train in on a device, and the rounding
//! each applies, so CPU twins compute what a device computes. (Kept here,
//! below the models and the inference backends, which both decide by it.)

use std::fmt;
use std::str::FromStr;

/// How a device stores and multiplies a plan's values. Sums are f32 in
/// every precision (tensor cores accumulate in f32).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// f32 everywhere.
    #[default]
    F32,
    /// f32 storage; products read their inputs with a 10-bit mantissa
    /// (TF32 tensor cores).
    Tf32,
    /// bf16 storage of weights and activations (8-bit mantissa), f32 sums.
    Bf16,
}

impl Precision {
    pub const ALL: [Precision; 3] = [Precision::F32, Precision::Tf32, Precision::Bf16];

    /// A value as the device stores it.
    #[inline]
    pub fn store(self, x: f32) -> f32 {
        match self {
            Precision::Bf16 => round_mantissa(x, 16),
            Precision::F32 | Precision::Tf32 => x,
        }
    }

    /// A value as a product reads it.
    #[inline]
    pub fn product_input(self, x: f32) -> f32 {
        match self {
            Precision::F32 => x,
            Precision::Tf32 => round_mantissa(x, 13),
            Precision::Bf16 => round_mantissa(x, 16),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Tf32 => "tf32",
            Precision::Bf16 => "bf16",
        }
    }
}

/// `x` with its low `drop` mantissa bits rounded off, to nearest, ties to
/// even (the hardware's conversion). Infinities and NaN pass unchanged.
#[inline]
fn round_mantissa(x: f32, drop: u32) -> f32 {
    if !x.is_finite() {
        return x;
    }
    let bits = x.to_bits();
    let half = (1u32 << (drop - 1)) - 1;
    let odd = (bits >> drop) & 1;
    f32::from_bits(bits.wrapping_add(half + odd) & !((1u32 << drop) - 1))
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// By name (`"bf16"`), as configuration files write it.
impl serde::Serialize for Precision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Precision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Precision {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Precision::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| format!("unknown precision `{s}`: expected f32, tf32 or bf16"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_matches_the_formats() {
        // 1 + 2^-8 is halfway between two bf16 values: ties to even (1.0);
        // 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
        assert_eq!(Precision::Bf16.store(1.0 + 2f32.powi(-8)), 1.0);
        assert_eq!(
            Precision::Bf16.store(1.0 + 3.0 * 2f32.powi(-8)),
            1.0 + 2f32.powi(-6)
        );
        // bf16 keeps 7 stored mantissa bits, TF32 10.
        let x = 1.0 + 2f32.powi(-9);
        assert_eq!(Precision::Bf16.product_input(x), 1.0);
        assert_eq!(Precision::Tf32.product_input(x), x);
        assert_eq!(Precision::Tf32.product_input(1.0 + 2f32.powi(-12)), 1.0);
        assert_eq!(
            Precision::Tf32.store(1.0 + 2f32.powi(-12)),
            1.0 + 2f32.powi(-12)
        );
        for p in Precision::ALL {
            assert_eq!(p.store(-3.0), -3.0);
            assert!(p.product_input(f32::NAN).is_nan());
            assert_eq!(p.name().parse::<Precision>(), Ok(p));
        }
        let err = "fp16".parse::<Precision>().unwrap_err();
        assert!(err.contains("fp16") && err.contains("bf16"), "{err}");
        for p in Precision::ALL {
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.name()));
            assert_eq!(serde_json::from_str::<Precision>(&json).unwrap(), p);
        }
        let err = serde_json::from_str::<Precision>("\"f16\"").unwrap_err();
        assert!(
            err.to_string().contains("expected f32, tf32 or bf16"),
            "{err}"
        );
    }

    #[test]
    fn relative_error_is_bounded_by_the_mantissa() {
        let mut x = 0.001f32;
        while x < 1e4 {
            let b = Precision::Bf16.store(x);
            let t = Precision::Tf32.product_input(x);
            assert!(((b - x) / x).abs() <= 2f32.powi(-8), "{x} -> {b}");
            assert!(((t - x) / x).abs() <= 2f32.powi(-11), "{x} -> {t}");
            x *= 1.37;
        }
    }
}
