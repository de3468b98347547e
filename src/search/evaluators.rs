//! Evaluators by name, for the players' `eval=` option: `random`, the
//! game's hand-written evaluators (Arimaa `material`, Amazons `mindist` and
//! `lieberum`, Pentago `pentago-features`), a weighted one with weights
//! from a file (`pentago-features:WEIGHTS_FILE`, as `plies tune` writes
//! them) and `ckpt:PATH` or `ckpt:hf:ORG/NAME[@REV]`, a trained checkpoint
//! on the context's device.
//!
//! Every one is an [`Evaluator`]: a hand evaluator's score is squashed to
//! `[-1, 1]` by [`crate::infer::hand::HandEval`], so MCTS can back it up
//! like a network's value.

use super::SearchError;
use crate::checkpoint::{CheckpointSource, BUILTINS, BUILTIN_PREFIX};
use crate::encode::EncoderSpec;
use crate::game::{hash_of, Game};
use crate::games::GameSupport;
use crate::infer::hand::{HandEval, WeightsFile};
use crate::infer::plan::Precision;
use crate::infer::{weights_evaluator_on, BackendChoice, Evaluator, InferError};
use candle_core::Device;
use std::path::Path;
use std::sync::Arc;

/// Where evaluators are built: the device checkpoints run on.
#[derive(Clone, Debug)]
pub struct EvalContext {
    pub device: Device,
    /// The precision `ckpt:` networks run in (f32 unless asked).
    pub precision: Precision,
}

impl Default for EvalContext {
    fn default() -> Self {
        EvalContext {
            device: Device::Cpu,
            precision: Precision::F32,
        }
    }
}

/// Where players are built: the board size and the evaluators' context
/// (the device and precision of `ckpt:` networks).
#[derive(Clone, Debug)]
pub struct PlayerContext {
    pub size: usize,
    pub eval: EvalContext,
}

impl PlayerContext {
    /// The game's standard board on the CPU.
    pub fn default_for<G: Game>() -> Self {
        PlayerContext {
            size: G::DEFAULT_SIZE,
            eval: EvalContext::default(),
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
    if name.starts_with("ckpt:") || name.starts_with(BUILTIN_PREFIX) {
        let source = CheckpointSource::parse(name)?;
        return checkpoint_evaluator::<G>(&source, size, ctx);
    }
    if name == "random" {
        return Ok(Arc::new(RandomValue));
    }
    match hand_eval_by_name::<G>(name)? {
        Some(hand) => Ok(Arc::new(hand)),
        None => {
            let mut known: Vec<String> = G::HAND_EVALS.iter().map(|n| n.to_string()).collect();
            known.extend(G::FEATURE_SETS.iter().map(|n| format!("{n}:WEIGHTS_FILE")));
            known.push("random".into());
            known.push("ckpt:PATH".into());
            known.push("ckpt:hf:ORG/NAME[@REV]".into());
            known.extend(
                BUILTINS
                    .iter()
                    .filter(|b| b.name == G::NAME)
                    .map(|b| format!("{BUILTIN_PREFIX}{}", b.name)),
            );
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

/// The hand evaluator `name` of `G`: one of [`GameSupport::HAND_EVALS`],
/// or `SET:WEIGHTS_FILE`, a weighted one ([`GameSupport::FEATURE_SETS`])
/// with the weights of that file; `None` when `name` is neither. A weights
/// file that cannot be used is an error naming the file and the field.
pub fn hand_eval_by_name<G: GameSupport>(name: &str) -> Result<Option<HandEval<G>>, SearchError> {
    if let Some((set_name, path)) = name.split_once(':') {
        if let Some(set) = G::feature_set(set_name) {
            let eval = WeightsFile::load(Path::new(path), G::NAME, &set)
                .map_err(|e| bad(name, e.to_string()))?;
            return Ok(Some(HandEval::from_formula(name, set.scale, eval)));
        }
    }
    Ok(G::hand_eval(name))
}

/// A checkpoint's model behind the encoder it was trained with (a local
/// directory or a hub repository, checked alike); refuses a checkpoint of
/// another game, and one whose model reads boards of a fixed size other
/// than `size`, naming the field (a size-free model such as the MDRNN plays
/// any board the game allows). It runs on `ctx`'s device in its precision.
pub fn checkpoint_evaluator<G: GameSupport>(
    source: &CheckpointSource,
    size: usize,
    ctx: &EvalContext,
) -> Result<Arc<dyn Evaluator<G>>, SearchError> {
    let ck = source.open(Some(G::NAME), None)?;
    let spec = &ck.config.encoder;
    let name = format!("ckpt:{source}");
    let encoder = G::encoder(&spec.name, size).map_err(|e| bad(&name, e.to_string()))?;
    // Boards are compared as the encoder lays them out (rows x columns),
    // so boards that are not square compare too.
    let here = encoder.spec();
    // An older version of the same encoder gives other inputs: say so
    // before the shape check blames the board.
    if spec.version != here.version {
        return Err(bad(
            &name,
            format!(
                "the checkpoint was trained on encoder {} version {} ({} globals), this \
                 program's is version {} ({} globals): retrain it on a dataset built now",
                spec.name, spec.version, spec.globals, here.version, here.globals
            ),
        ));
    }
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
    let label = source.label();
    Ok(weights_evaluator_on(
        encoder,
        &ck.config.model,
        &ck.tensors,
        &ctx.device,
        BackendChoice::Auto,
        ctx.precision,
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
    use crate::game::{Amazons, Arimaa, Gomoku, Pentago};
    use crate::infer::hand::PENTAGO_FEATURE_SET;

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

    #[test]
    fn weighted_evaluators_load_their_weights_file() {
        let ctx = EvalContext::default();
        let (_dir, path) = crate::util::scratch("tuned.json");
        let mut weights = (PENTAGO_FEATURE_SET.default_weights)();
        weights.iter_mut().for_each(|w| *w = -*w);
        WeightsFile::new(
            "pentago",
            &PENTAGO_FEATURE_SET,
            &weights,
            serde_json::Value::Null,
        )
        .save(&path)
        .unwrap();
        let mut g = Pentago::new();
        let mut moves = Vec::new();
        g.legal_moves(&mut moves);
        g.play(moves[0]);
        let default = evaluator_by_name::<Pentago>("pentago-features", 6, &ctx).unwrap();
        let name = format!("pentago-features:{}", path.display());
        let negated = evaluator_by_name::<Pentago>(&name, 6, &ctx).unwrap();
        let (d, n) = (
            default.evaluate(&[g]).unwrap()[0],
            negated.evaluate(&[g]).unwrap()[0],
        );
        assert!(d != 0.0 && (d + n).abs() < 1e-5, "{d} {n}");
        let err = evaluator_by_name::<Pentago>("pentago-features:/no/such.json", 6, &ctx)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("/no/such.json") && err.contains("cannot read"),
            "{err}"
        );
    }
}
