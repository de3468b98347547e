//! The policy part of value+policy training: cross-entropy of a policy
//! head's logits against the search's move distributions (AlphaZero's
//! `-pi . log p`), averaged over the rows that have a target.
//!
//! Targets come dense from the loader (`[B, P]`, one distribution per row,
//! all zeros for a row no search chose, which therefore adds nothing), so
//! a batch mixing searched and unsearched positions needs no mask.

use candle_core::{DType, Result, Tensor, D};

/// `-sum(target * log_softmax(logits)) / rows with a target` (0 when no
/// row has one), for logits and targets `[B, P]`.
pub fn policy_cross_entropy(logits: &Tensor, target: &Tensor) -> Result<Tensor> {
    if logits.dims() != target.dims() {
        return Err(candle_core::Error::Msg(format!(
            "policy logits {:?} and targets {:?} differ in shape (the dataset's policy \
             indices do not fit the model's policy head)",
            logits.dims(),
            target.dims()
        )));
    }
    // Each row with a target sums to 1, so the total mass counts them.
    let rows = target
        .sum_all()?
        .to_dtype(DType::F64)?
        .to_scalar::<f64>()?
        .round()
        .max(1.0);
    let log_p = candle_nn::ops::log_softmax(logits, D::Minus1)?;
    (target * log_p)?.sum_all()?.affine(-1.0 / rows, 0.0)
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
        policy_cross_entropy(&rows(logits), target)
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
        let msg = policy_cross_entropy(&rows(&[[0.0; 3], [0.0; 3]]), &wrong)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("policy head"), "{msg}");
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let start = [[0.3f32, -1.2, 0.8], [2.0, 0.1, -0.4], [0.0, 0.5, 0.5]];
        let target = rows(&[[0.2, 0.5, 0.3], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
        let var = Var::from_tensor(&rows(&start)).unwrap();
        let loss = policy_cross_entropy(var.as_tensor(), &target).unwrap();
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
