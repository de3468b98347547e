//! Evaluators by name, for the players' `eval=` option: `random`, the
//! game's hand-written evaluators (Arimaa `material`, Amazons `mindist` and
//! `lieberum`, Pentago `pentago-features`) and `ckpt:PATH`, a trained
//! checkpoint on the context's device.
//!
//! Every one is an [`Evaluator`]: a hand evaluator's score is squashed to
//! `[-1, 1]` by [`crate::infer::hand::HandEval`], so MCTS can back it up
//! like a network's value.

use super::SearchError;
use crate::checkpoint;
use crate::encode::EncoderSpec;
use crate::game::{hash_of, Game};
use crate::games::GameSupport;
use crate::infer::{weights_evaluator, Evaluator, InferError};
use candle_core::Device;
use std::path::Path;
use std::sync::Arc;

/// Where evaluators are built: the device checkpoints run on.
#[derive(Clone, Debug)]
pub struct EvalContext {
    pub device: Device,
}

impl Default for EvalContext {
    fn default() -> Self {
        EvalContext {
            device: Device::Cpu,
        }
    }
}

fn bad(name: &str, why: impl Into<String>) -> SearchError {
    SearchError::BadSpec {
        spec: format!("eval={name}"),
        why: why.into(),
    }
}

/// The evaluator called `name` for game `G` on boards of `size`.
pub fn evaluator_by_name<G: GameSupport>(
    name: &str,
    size: usize,
    ctx: &EvalContext,
) -> Result<Arc<dyn Evaluator<G>>, SearchError> {
    if let Some(path) = name.strip_prefix("ckpt:") {
        return checkpoint_evaluator::<G>(Path::new(path), size, &ctx.device);
    }
    if name == "random" {
        return Ok(Arc::new(RandomValue));
    }
    match G::hand_eval(name) {
        Some(hand) => Ok(Arc::new(hand)),
        None => {
            let mut known: Vec<&str> = G::HAND_EVALS.to_vec();
            known.push("random");
            known.push("ckpt:PATH");
            Err(bad(
                name,
                format!(
                    "'{name}' is not an evaluator of {}: expected {}",
                    G::NAME,
                    known.join(", ")
                ),
            ))
        }
    }
}

/// A checkpoint's model behind the encoder it was trained with; refuses a
/// checkpoint of another game, and one whose model reads boards of a fixed
/// size other than `size`, naming the field (a size-free model such as the
/// MDRNN plays any board the game allows).
pub fn checkpoint_evaluator<G: GameSupport>(
    dir: &Path,
    size: usize,
    device: &Device,
) -> Result<Arc<dyn Evaluator<G>>, SearchError> {
    let ck = checkpoint::load(dir, Some(G::NAME), None)?;
    let spec = &ck.config.encoder;
    let name = format!("ckpt:{}", dir.display());
    let encoder = G::encoder(&spec.name, size).map_err(|e| bad(&name, e.to_string()))?;
    // Boards are compared as the encoder lays them out (rows x columns),
    // so boards that are not square compare too.
    let here = encoder.spec();
    let [_, rows, columns] = here.shape;
    ck.config
        .model
        .check_input(here.shape, here.globals)
        .map_err(|e| {
            bad(
                &name,
                format!(
                    "the checkpoint's encoder {} read {}x{} boards and its model does not \
                     take the {rows}x{columns} board the game is played on: {e}",
                    spec.name, spec.shape[1], spec.shape[2]
                ),
            )
        })?;
    let same_but_board = EncoderSpec {
        shape: spec.shape,
        ..here.clone()
    };
    if same_but_board != *spec {
        return Err(bad(
            &name,
            format!(
                "the checkpoint's encoder {:?} differs from this program's {:?}",
                spec, here
            ),
        ));
    }
    let label = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "ckpt".into());
    Ok(weights_evaluator(
        encoder,
        &ck.config.model,
        &ck.tensors,
        device,
        label,
    )?)
}

/// `random`: a value on `[-1, 1]` drawn from the position's key, so the
/// same position always gets the same value (searches stay reproducible).
pub struct RandomValue;

impl<G: Game> Evaluator<G> for RandomValue {
    fn evaluate(&self, states: &[G]) -> Result<Vec<f32>, InferError> {
        Ok(states
            .iter()
            .map(|s| {
                let bits = hash_of(&s.hash_key()) >> 40; // 24 bits
                bits as f32 / (1u64 << 23) as f32 - 1.0
            })
            .collect())
    }

    fn name(&self) -> String {
        "random".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Amazons, Arimaa, Gomoku};

    #[test]
    fn names_resolve_and_bad_ones_are_named() {
        let ctx = EvalContext::default();
        let e = evaluator_by_name::<Amazons>("mindist", 6, &ctx).unwrap();
        let v = e.evaluate(&[Amazons::with_size(6).unwrap()]).unwrap();
        assert!(v[0].abs() < 1e-6, "a symmetric start is level: {v:?}");
        let r = evaluator_by_name::<Gomoku>("random", 9, &ctx).unwrap();
        let g = Gomoku::with_size(9).unwrap();
        let a = r.evaluate(&[g]).unwrap();
        assert_eq!(a, r.evaluate(&[g]).unwrap());
        assert!((-1.0..=1.0).contains(&a[0]));
        let err = evaluator_by_name::<Arimaa>("mindist", 8, &ctx)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("'mindist'") && err.contains("material"),
            "{err}"
        );
        let err = evaluator_by_name::<Arimaa>("ckpt:/no/such/dir", 8, &ctx)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("/no/such/dir"), "{err}");
    }
}
