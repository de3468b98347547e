//! L1 and L2 weight penalties.
//!
//! The penalties apply to the weights: the trainable tensors of rank 2 or
//! more (weight matrices and convolution kernels) and a linear model's
//! weight vector over the globals ([`GLOBALS_WEIGHT`]). Biases and
//! batch-norm scales and shifts (vectors) are left out, as is usual
//! (penalising a bias only shifts the output). The added loss is
//! `l1 * sum(|w|) + l2 * sum(w^2)` (L2 without the 1/2 factor, so its
//! gradient is `2 * l2 * w`). The L1 gradient is `l1 * sign(w)`, 0 at 0.

use candle_core::{Result, Tensor, Var};
use candle_nn::VarMap;

use crate::model::{is_running_stat, GLOBALS_WEIGHT};

/// The vars the penalties apply to (the weights, see the module docs),
/// sorted by name.
pub fn penalized_vars(varmap: &VarMap) -> Vec<Var> {
    let data = match varmap.data().lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    let mut named: Vec<(&String, &Var)> = data
        .iter()
        .filter(|(n, v)| !is_running_stat(n) && (v.rank() >= 2 || n.as_str() == GLOBALS_WEIGHT))
        .collect();
    named.sort_by(|a, b| a.0.cmp(b.0));
    named.into_iter().map(|(_, v)| v.clone()).collect()
}

/// `l1 * sum|w| + l2 * sum w^2` over `vars`; `None` when both are 0.
pub fn penalty(vars: &[Var], l1: f64, l2: f64) -> Result<Option<Tensor>> {
    if (l1 == 0.0 && l2 == 0.0) || vars.is_empty() {
        return Ok(None);
    }
    let mut total: Option<Tensor> = None;
    for v in vars {
        let w = v.as_tensor();
        let mut term: Option<Tensor> = None;
        if l1 != 0.0 {
            // |w| as w * sign(w) with the sign held constant: the gradient is
            // sign(w), 0 at 0 (candle's abs gives 1 there).
            term = Some(((w * w.sign()?.detach())?.sum_all()? * l1)?);
        }
        if l2 != 0.0 {
            let t2 = (w.sqr()?.sum_all()? * l2)?;
            term = Some(match term {
                Some(t) => (t + t2)?,
                None => t2,
            });
        }
        if let Some(t) = term {
            total = Some(match total {
                Some(acc) => (acc + t)?,
                None => t,
            });
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device};

    #[test]
    fn gradients_are_sign_and_two_w() -> Result<()> {
        let vm = VarMap::new();
        let dev = Device::Cpu;
        let w = vm.get(
            (2, 2),
            "l.weight",
            candle_nn::Init::Const(0.0),
            DType::F32,
            &dev,
        )?;
        let b = vm.get(2, "l.bias", candle_nn::Init::Const(0.0), DType::F32, &dev)?;
        let vars = penalized_vars(&vm);
        assert_eq!(vars.len(), 1, "the bias is not penalised");
        vars[0].set(&Tensor::new(&[[1.5f32, -2.0], [0.0, 0.5]], &dev)?)?;
        let _ = (w, b);

        let p = penalty(&vars, 0.1, 0.0)?.unwrap();
        assert!((p.to_scalar::<f32>()? - 0.1 * 4.0).abs() < 1e-6);
        let g = p.backward()?;
        let g = g.get(&vars[0]).unwrap().flatten_all()?.to_vec1::<f32>()?;
        assert_eq!(g, vec![0.1, -0.1, 0.0, 0.1]);

        let p = penalty(&vars, 0.0, 0.5)?.unwrap();
        // 0.5 * (2.25 + 4 + 0 + 0.25)
        assert!((p.to_scalar::<f32>()? - 3.25).abs() < 1e-6);
        let g = p.backward()?;
        let g = g.get(&vars[0]).unwrap().flatten_all()?.to_vec1::<f32>()?;
        assert_eq!(g, vec![1.5, -2.0, 0.0, 0.5]);

        let both = penalty(&vars, 0.1, 0.5)?.unwrap().to_scalar::<f32>()?;
        assert!((both - 3.65).abs() < 1e-5);
        assert!(penalty(&vars, 0.0, 0.0)?.is_none());
        Ok(())
    }

    #[test]
    fn a_linear_model_s_weights_over_the_globals_are_penalised_its_bias_not() -> Result<()> {
        let vm = VarMap::new();
        let dev = Device::Cpu;
        let zero = candle_nn::Init::Const(0.0);
        vm.get(3, GLOBALS_WEIGHT, zero, DType::F32, &dev)?;
        vm.get(1, "psq.bias", zero, DType::F32, &dev)?;
        vm.get(4, "bn.running_mean", zero, DType::F32, &dev)?;
        vm.get((2, 2, 2), "psq.weight", zero, DType::F32, &dev)?;
        let dims: Vec<Vec<usize>> = penalized_vars(&vm)
            .iter()
            .map(|v| v.dims().to_vec())
            .collect();
        assert_eq!(dims, vec![vec![3], vec![2, 2, 2]]);
        Ok(())
    }
}
