//! The policy part of value+policy training: cross-entropy of a policy
//! head's logits against the search's move distributions (AlphaZero's
//! `-pi . log p`), averaged over the rows that have a target.
//!
//! Targets come dense from the loader (`[B, P]`, one distribution per row,
//! all zeros for a row no search chose, which therefore adds nothing), so
//! a batch mixing searched and unsearched positions needs no mask.

use candle_core::{DType, Result, Tensor, D};

/// `-sum(target * log_softmax(logits)) / rows with a target` (0 when no
/// row has one), for logits and targets `[B, P]`; with `weights` (`[B]`)
/// each row's cross-entropy counts its weight, over the weight of the rows
/// with a target.
pub fn policy_cross_entropy(
    logits: &Tensor,
    target: &Tensor,
    weights: Option<&Tensor>,
) -> Result<Tensor> {
    if logits.dims() != target.dims() {
        return Err(candle_core::Error::Msg(format!(
            "policy logits {:?} and targets {:?} differ in shape (the dataset's policy \
             indices do not fit the model's policy head)",
            logits.dims(),
            target.dims()
        )));
    }
    let log_p = candle_nn::ops::log_softmax(logits, D::Minus1)?;
    let Some(w) = weights else {
        // Each row with a target sums to 1, so the total mass counts them.
        let rows = target
            .sum_all()?
            .to_dtype(DType::F64)?
            .to_scalar::<f64>()?
            .round()
            .max(1.0);
        return (target * log_p)?.sum_all()?.affine(-1.0 / rows, 0.0);
    };
    let w = w.to_dtype(logits.dtype())?.flatten_all()?;
    let per_row = (target * log_p)?.sum(D::Minus1)?;
    // A row's mass is 1 with a target, 0 without.
    let mass = (target.sum(D::Minus1)? * &w)?
        .sum_all()?
        .to_dtype(DType::F64)?
        .to_scalar::<f64>()?;
    let denominator = if mass > 0.0 { mass } else { 1.0 };
    (per_row * &w)?.sum_all()?.affine(-1.0 / denominator, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    fn rows(v: &[[f32; 3]]) -> Tensor {
        let flat: Vec<f32> = v.iter().flatten().copied().collect();
        Tensor::from_vec(flat, (v.len(), 3), &Device::Cpu).unwrap()
    }

    fn loss_at(logits: &[[f32; 3]], target: &Tensor) -> f64 {
        policy_cross_entropy(&rows(logits), target, None)
            .unwrap()
            .to_dtype(DType::F64)
            .unwrap()
            .to_scalar::<f64>()
            .unwrap()
    }

    #[test]
    fn by_hand_and_rows_without_a_target_count_nothing() {
        // Row 0: uniform logits, target on index 1: -ln(1/3). Row 1: no target.
        let target = rows(&[[0.0, 1.0, 0.0], [0.0, 0.0, 0.0]]);
        let got = loss_at(&[[0.0, 0.0, 0.0], [5.0, -2.0, 1.0]], &target);
        assert!((got - 3f64.ln()).abs() < 1e-6, "{got}");
        let none = rows(&[[0.0; 3], [0.0; 3]]);
        assert_eq!(loss_at(&[[1.0, 2.0, 3.0], [0.0; 3]], &none), 0.0);
        let wrong = Tensor::zeros((2, 4), DType::F32, &Device::Cpu).unwrap();
        let msg = policy_cross_entropy(&rows(&[[0.0; 3], [0.0; 3]]), &wrong, None)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("policy head"), "{msg}");
    }

    #[test]
    fn weights_count_rows_as_repeats_and_rows_without_a_target_still_count_nothing() {
        let logits = rows(&[[0.0, 0.0, 0.0], [2.0, 0.0, -1.0], [5.0, -2.0, 1.0]]);
        let target = rows(&[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0; 3]]);
        let w = Tensor::new(&[3.0f32, 1.0, 9.0], &Device::Cpu).unwrap();
        let got = policy_cross_entropy(&logits, &target, Some(&w))
            .unwrap()
            .to_scalar::<f32>()
            .unwrap() as f64;
        // Row 0 three times and row 1 once; row 2 has no target.
        let ce1 = -(2.0 - (2f64.exp() + 1.0 + (-1f64).exp()).ln());
        let want = (3.0 * 3f64.ln() + ce1) / 4.0;
        assert!((got - want).abs() < 1e-5, "{got} {want}");
        let none = rows(&[[0.0; 3], [0.0; 3], [0.0; 3]]);
        let zero = policy_cross_entropy(&logits, &none, Some(&w))
            .unwrap()
            .to_scalar::<f32>()
            .unwrap();
        assert_eq!(zero, 0.0);
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let start = [[0.3f32, -1.2, 0.8], [2.0, 0.1, -0.4], [0.0, 0.5, 0.5]];
        let target = rows(&[[0.2, 0.5, 0.3], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
        let var = Var::from_tensor(&rows(&start)).unwrap();
        let loss = policy_cross_entropy(var.as_tensor(), &target, None).unwrap();
        let grad = loss.backward().unwrap();
        let g = grad.get(&var).unwrap().to_vec2::<f32>().unwrap();
        // Analytically (softmax - target) / 2 on the two rows with a target.
        let h = 1e-3f32;
        for r in 0..3 {
            for c in 0..3 {
                let (mut up, mut down) = (start, start);
                up[r][c] += h;
                down[r][c] -= h;
                let numeric = (loss_at(&up, &target) - loss_at(&down, &target)) / (2.0 * h as f64);
                assert!(
                    (numeric - g[r][c] as f64).abs() < 2e-3,
                    "[{r}][{c}]: numeric {numeric}, backward {}",
                    g[r][c]
                );
            }
        }
        assert!(g[1].iter().all(|&x| x == 0.0), "no target, no gradient");
    }
}
