//! Global-norm gradient clipping, as `torch.nn.utils.clip_grad_norm_`.

use std::collections::HashSet;

use candle_core::backprop::GradStore;
use candle_core::{DType, Result, Var};

use super::non_negative;

/// The L2 norm of all the gradients of `vars` taken together (vars without
/// a gradient count as zero; a var listed twice counts once).
pub fn grad_norm(grads: &GradStore, vars: &[Var]) -> Result<f64> {
    let mut seen = HashSet::new();
    let mut sum_sq = 0.0f64;
    for var in vars {
        if !seen.insert(var.id()) {
            continue;
        }
        if let Some(g) = grads.get(var) {
            sum_sq += g
                .to_dtype(DType::F64)?
                .sqr()?
                .sum_all()?
                .to_scalar::<f64>()?;
        }
    }
    Ok(sum_sq.sqrt())
}

/// Scales the gradients of `vars` in `grads` so that their global L2 norm is
/// at most `max_norm`, and returns the norm they had before.
///
/// As in PyTorch, the scale is `max_norm / (norm + 1e-6)` when that is below
/// 1, and nothing changes otherwise. A non-finite norm is returned as is and
/// the gradients are then left alone (PyTorch's default
/// `error_if_nonfinite=False` would scale them by 0 or NaN): check the
/// returned value to skip such a step. `max_norm` must be finite and
/// non-negative.
pub fn clip_grad_norm(grads: &mut GradStore, vars: &[Var], max_norm: f64) -> Result<f64> {
    non_negative("gradient clipping", "max_norm", max_norm)?;
    let norm = grad_norm(grads, vars)?;
    if !norm.is_finite() {
        return Ok(norm);
    }
    let coef = max_norm / (norm + 1e-6);
    if coef < 1.0 {
        let mut seen = HashSet::new();
        for var in vars {
            if !seen.insert(var.id()) {
                continue;
            }
            if let Some(g) = grads.get(var) {
                let scaled = (g.detach() * coef)?;
                grads.insert(var, scaled);
            }
        }
    }
    Ok(norm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Tensor};

    fn setup() -> Result<(Var, Var, GradStore)> {
        let a = Var::from_tensor(&Tensor::new(&[1.0f64, 2.0], &Device::Cpu)?)?;
        let b = Var::from_tensor(&Tensor::new(&[[0.5f32]], &Device::Cpu)?)?;
        // grads: a -> [3, 4] (loss 3 a0 + 4 a1), b -> [[0]] (loss 0 * b)
        let w = Tensor::new(&[3.0f64, 4.0], &Device::Cpu)?;
        let loss = ((a.as_tensor() * &w)?.sum_all()?
            + b.as_tensor()
                .mul(&b.as_tensor().zeros_like()?)?
                .sum_all()?
                .to_dtype(DType::F64)?)?;
        let grads = loss.backward()?;
        Ok((a, b, grads))
    }

    #[test]
    fn norm_and_clip() -> Result<()> {
        let (a, b, mut grads) = setup()?;
        let vars = [a.clone(), b.clone(), a.clone()];
        assert!((grad_norm(&grads, &vars)? - 5.0).abs() < 1e-12);
        let before = clip_grad_norm(&mut grads, &vars, 1.0)?;
        assert!((before - 5.0).abs() < 1e-12);
        let ga = grads.get(&a).unwrap().to_vec1::<f64>()?;
        let k = 1.0 / (5.0 + 1e-6);
        assert!((ga[0] - 3.0 * k).abs() < 1e-12 && (ga[1] - 4.0 * k).abs() < 1e-12);
        assert!((grad_norm(&grads, &vars)? - 1.0).abs() < 1e-6);
        assert_eq!(grads.get(&b).unwrap().dtype(), DType::F32);
        Ok(())
    }

    #[test]
    fn small_norm_is_untouched_and_bad_max_is_an_error() -> Result<()> {
        let (a, _b, mut grads) = setup()?;
        let vars = [a.clone()];
        assert!((clip_grad_norm(&mut grads, &vars, 10.0)? - 5.0).abs() < 1e-12);
        assert_eq!(grads.get(&a).unwrap().to_vec1::<f64>()?, vec![3.0, 4.0]);
        assert!(clip_grad_norm(&mut grads, &vars, -1.0).is_err());
        assert!(clip_grad_norm(&mut grads, &vars, f64::NAN).is_err());
        Ok(())
    }
}
