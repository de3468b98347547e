//! TD(lambda) on a candle [`crate::model::Mlp`] through autograd: the
//! reference the plain-Rust learner is measured and checked against.

use super::{TdConfig, TdGame};
use crate::model::{Mlp, MlpConfig};
use candle_core::{DType, Device, Tensor, Var};
use candle_nn::VarBuilder;
use std::collections::HashMap;

pub struct CandleTdLearner {
    cfg: TdConfig,
    names: Vec<String>,
    vars: Vec<Var>,
    traces: Vec<Tensor>,
    mlp: Mlp,
    device: Device,
}

impl CandleTdLearner {
    /// Starts from the given weights (e.g. `NativeMlp::to_tensors`).
    pub fn new(
        cfg: TdConfig,
        mlp_cfg: &MlpConfig,
        weights: &HashMap<String, Tensor>,
        device: &Device,
    ) -> candle_core::Result<Self> {
        let mut names = Vec::new();
        let mut vars = Vec::new();
        let mut map = HashMap::new();
        for (name, _) in mlp_cfg.expected_tensors() {
            let t = weights
                .get(&name)
                .ok_or_else(|| candle_core::Error::Msg(format!("missing tensor {name}")))?;
            let v = Var::from_tensor(&t.to_device(device)?)?;
            map.insert(name.clone(), v.as_tensor().clone());
            names.push(name);
            vars.push(v);
        }
        let mlp = Mlp::new(
            &mlp_cfg.clone().into(),
            VarBuilder::from_tensors(map, DType::F32, device),
        )
        .map_err(|e| candle_core::Error::Msg(e.to_string()))?;
        let traces = vars
            .iter()
            .map(|v| v.as_tensor().zeros_like())
            .collect::<candle_core::Result<_>>()?;
        Ok(CandleTdLearner {
            cfg,
            names,
            vars,
            traces,
            mlp,
            device: device.clone(),
        })
    }

    fn value(&self, x: &[f32]) -> candle_core::Result<Tensor> {
        let t = Tensor::from_slice(x, (1, x.len()), &self.device)?;
        self.mlp.forward_flat(&t, false)?.sum_all()
    }

    pub fn learn_game(&mut self, game: &TdGame) -> candle_core::Result<()> {
        for t in self.traces.iter_mut() {
            *t = t.zeros_like()?;
        }
        let n = game.inputs.len();
        for k in 0..n {
            let v = (self.value(&game.inputs[k])? * game.signs[k] as f64)?;
            let grads = v.backward()?;
            let target = if k + 1 < n {
                game.signs[k + 1] * self.value(&game.inputs[k + 1])?.to_scalar::<f32>()?
            } else {
                game.result
            };
            let delta = target - v.to_scalar::<f32>()?;
            for (i, var) in self.vars.iter().enumerate() {
                let g = grads
                    .get(var.as_tensor())
                    .cloned()
                    .unwrap_or(var.as_tensor().zeros_like()?);
                self.traces[i] = ((&self.traces[i] * self.cfg.lambda as f64)? + g)?;
                let step = (&self.traces[i] * (self.cfg.lr * delta) as f64)?;
                var.set(&(var.as_tensor() + step)?)?;
            }
        }
        Ok(())
    }

    pub fn weights(&self) -> HashMap<String, Tensor> {
        self.names
            .iter()
            .cloned()
            .zip(self.vars.iter().map(|v| v.as_tensor().clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Activation, NativeMlp, WeightInit};
    use crate::train::TdLearner;
    use crate::util::seeded_rng;

    #[test]
    fn plain_rust_and_candle_learners_agree() {
        let cfg = MlpConfig {
            inputs: 9,
            hidden: vec![10],
            activation: Activation::Elliott { beta: 5.0 },
            init: WeightInit::Uniform { a: 0.2 },
        };
        let mut native = NativeMlp::new(&cfg, &mut seeded_rng(2, 0)).unwrap();
        let td_cfg = TdConfig {
            lambda: 0.8,
            lr: 0.05,
        };
        let mut candle = CandleTdLearner::new(
            td_cfg,
            &cfg,
            &native.to_tensors(&Device::Cpu).unwrap(),
            &Device::Cpu,
        )
        .unwrap();
        let game = TdGame {
            inputs: vec![
                vec![0.0; 9],
                vec![1., 0., 0., 0., 0., 0., 0., 0., 0.],
                vec![1., -1., 0., 0., 0., 0., 0., 0., 0.],
                vec![1., -1., 0., 0., 1., 0., 0., 0., 0.],
            ],
            signs: vec![1.0; 4],
            result: -1.0,
        };
        let mut td = TdLearner::new(td_cfg, &native);
        for _ in 0..5 {
            td.learn_game(&mut native, &game);
            candle.learn_game(&game).unwrap();
        }
        let back = NativeMlp::from_tensors(&cfg, &candle.weights()).unwrap();
        let moved = native
            .params()
            .iter()
            .zip(
                NativeMlp::new(&cfg, &mut seeded_rng(2, 0))
                    .unwrap()
                    .params(),
            )
            .any(|(a, b)| (a - b).abs() > 1e-3);
        assert!(moved, "the weights did not change");
        for (a, b) in native.params().iter().zip(back.params()) {
            assert!((a - b).abs() < 1e-4, "{a} vs {b}");
        }
    }
}
