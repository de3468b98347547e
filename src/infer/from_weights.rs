//! A model's weights behind an encoder, as the evaluator for them: the one
//! place that picks the backend that runs a network (the plain-Rust MDRNN
//! or one-hidden-layer MLP on the CPU, else candle's model on the device).
//! Checkpoints, evolved weight vectors and the benchmarks' seeded networks
//! all come through here.

use super::backend::{Backend, BackendChoice, CandleBackend, NativeMdrnnBackend, NativeMlpBackend};
use super::plan::{NetPlan, PlanBackend, Precision};
use super::{Evaluator, InferError, ModelEvaluator};
use crate::encode::Encoder;
use crate::game::Game;
use crate::model::{build, ModelConfig, ModelError, NativeMdrnn, NativeMlp, OutputActivation};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use std::collections::HashMap;
use std::sync::Arc;

/// The evaluator of `model` with `tensors` (named as the model's
/// `expected_tensors`) reading `encoder`'s planes on `device`, on the
/// fastest backend for them.
pub fn weights_evaluator<G: Game>(
    encoder: Box<dyn Encoder<G>>,
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
    device: &Device,
    label: impl Into<String>,
) -> Result<Arc<dyn Evaluator<G>>, InferError> {
    weights_evaluator_on(
        encoder,
        model,
        tensors,
        device,
        BackendChoice::Auto,
        Precision::F32,
        label,
    )
}

/// [`weights_evaluator`] on the backend `choice` names, in `precision`:
/// f32 on every device; TF32 and bf16 on a GPU (the CPU's backends refuse
/// them).
pub fn weights_evaluator_on<G: Game>(
    encoder: Box<dyn Encoder<G>>,
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
    device: &Device,
    choice: BackendChoice,
    precision: Precision,
    label: impl Into<String>,
) -> Result<Arc<dyn Evaluator<G>>, InferError> {
    let input = (encoder.shape(), encoder.globals_len());
    let backend = weights_backend(model, tensors, input, device, choice, precision)?;
    Ok(Arc::new(ModelEvaluator::new(encoder, backend, label)))
}

/// The evaluator of a plain-Rust MLP's current weights (a TD(lambda)
/// learner's snapshot), valued position by position.
pub fn mlp_evaluator<G: Game>(
    encoder: impl Into<Arc<dyn Encoder<G>>>,
    net: &NativeMlp,
) -> ModelEvaluator<G> {
    ModelEvaluator::new(encoder, Box::new(NativeMlpBackend::new(net)), "native-mlp")
}

/// Positions per bucket of the plan twin's largest batch.
const PLAN_TWIN_MAX_BATCH: usize = 256;

/// The native backend's largest bucket: larger batches run in chunks of
/// it (a residual net of 20 blocks of 256 channels on 19x19 holds about
/// 0.4 GB a buffer at this size).
#[cfg(feature = "cuda")]
const NATIVE_MAX_BATCH: usize = 1024;

/// Whether [`BackendChoice::Auto`] takes the native backend on a GPU:
/// `PLIES_BACKEND=native` asks for it until its speed and agreement with
/// candle are measured on every model (docs/gpu.md).
fn native_by_default(device: &Device) -> bool {
    device.is_cuda() && std::env::var("PLIES_BACKEND").is_ok_and(|v| v == "native")
}

/// The backend that runs `model` with `tensors`, for an encoder's
/// `(planes, globals)`, on `device`, in `precision`: the one place a
/// backend is chosen.
pub fn weights_backend(
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
    (planes, globals): ([usize; 3], usize),
    device: &Device,
    choice: BackendChoice,
    precision: Precision,
) -> Result<Box<dyn Backend>, InferError> {
    if let BackendChoice::PlanTwin(precision) = choice {
        let plan = NetPlan::build(
            model,
            tensors,
            planes,
            globals,
            precision,
            PLAN_TWIN_MAX_BATCH,
        )?;
        return Ok(Box::new(PlanBackend::new(plan)));
    }
    if choice == BackendChoice::Native {
        return native_backend(model, tensors, (planes, globals), device, precision);
    }
    if choice == BackendChoice::Auto && native_by_default(device) {
        match native_backend(model, tensors, (planes, globals), device, precision) {
            Ok(native) => return Ok(native),
            // A model without a plan (the MDRNNs) stays on candle.
            Err(InferError::Plan(why)) => tracing::debug!("no inference plan ({why})"),
            Err(e) => return Err(e),
        }
    }
    if precision != Precision::F32 && device.is_cpu() {
        return Err(InferError::Other(format!(
            "precision {precision} runs on a GPU; the CPU's backends run f32 \
             (use --precision f32, or --device cuda)"
        )));
    }
    if choice == BackendChoice::Auto && device.is_cpu() {
        match model {
            ModelConfig::Mdrnn(cfg) => {
                // The native network's flat order is the config's own, not
                // the sorted order of `ModelConfig::expected_tensors`.
                let flat = flat_in_order(model.kind(), cfg.expected_tensors(), tensors)?;
                let net = NativeMdrnn::new(cfg, flat)?;
                return Ok(Box::new(NativeMdrnnBackend::new(net)));
            }
            // A one-hidden-layer MLP with a linear output (TD(lambda)'s
            // networks): far cheaper per position than a candle call
            // inside a search.
            ModelConfig::Mlp(cfg)
                if cfg.hidden.len() == 1
                    && cfg.output == OutputActivation::Identity
                    && cfg.dropout == 0.0 =>
            {
                let net = NativeMlp::from_tensors(&cfg.shape(), tensors)?;
                return Ok(Box::new(NativeMlpBackend::new(&net)));
            }
            _ => {}
        }
    }
    let on_device = tensors
        .iter()
        .map(|(k, t)| Ok((k.clone(), t.to_device(device)?)))
        .collect::<Result<HashMap<_, _>, candle_core::Error>>()?;
    let dtype = match precision {
        Precision::F32 | Precision::Tf32 => DType::F32,
        Precision::Bf16 => DType::BF16,
    };
    if precision == Precision::Tf32 {
        reduced_precision_products();
    }
    let vb = VarBuilder::from_tensors(on_device, dtype, device);
    Ok(Box::new(CandleBackend::new(
        build(model, vb)?,
        device.clone(),
        dtype,
    )?))
}

/// The model's inference plan on the native backend of `device`.
fn native_backend(
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
    (planes, globals): ([usize; 3], usize),
    device: &Device,
    precision: Precision,
) -> Result<Box<dyn Backend>, InferError> {
    #[cfg(feature = "cuda")]
    if let Device::Cuda(d) = device {
        let plan = NetPlan::build(model, tensors, planes, globals, precision, NATIVE_MAX_BATCH)?;
        let ordinal = d.cuda_stream().context().ordinal();
        return super::backend::cuda_plan_backend(
            plan,
            ordinal,
            super::backend::CudaPlanOptions::from_env(),
        );
    }
    let _ = (model, tensors, planes, globals, precision);
    Err(InferError::Other(format!(
        "the native backend runs on CUDA (a build with --features cuda and --device cuda); \
         this is {device:?}"
    )))
}

/// TF32 matrix products for f32 on CUDA. candle keeps it as one setting of
/// the process: once one network asks for TF32, every f32 product on a GPU
/// uses it.
fn reduced_precision_products() {
    #[cfg(feature = "cuda")]
    candle_core::cuda::set_gemm_reduced_precision_f32(true);
}

/// `flat` split into the tensors `model` expects, in
/// [`ModelConfig::expected_tensors`] order (the layout evolution uses).
pub fn tensors_from_flat(
    model: &ModelConfig,
    flat: &[f32],
) -> Result<HashMap<String, Tensor>, InferError> {
    let expected = model.expected_tensors();
    let total: usize = expected
        .iter()
        .map(|(_, s)| s.iter().product::<usize>())
        .sum();
    if total != flat.len() {
        return Err(ModelError::Config(format!(
            "{} has {total} weights, got {}",
            model.kind(),
            flat.len()
        ))
        .into());
    }
    let mut at = 0;
    let mut out = HashMap::new();
    for (name, shape) in expected {
        let n: usize = shape.iter().product();
        let t = Tensor::from_vec(flat[at..at + n].to_vec(), shape, &Device::Cpu)?;
        out.insert(name, t);
        at += n;
    }
    Ok(out)
}

/// The weights of `tensors` as one flat vector, in
/// [`ModelConfig::expected_tensors`] order.
pub fn flat_from_tensors(
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
) -> Result<Vec<f32>, InferError> {
    flat_in_order(model.kind(), model.expected_tensors(), tensors)
}

/// The values of the tensors `names` names, one after another; a missing
/// one is named in the error, with the model `kind`.
fn flat_in_order(
    kind: &str,
    names: Vec<(String, Vec<usize>)>,
    tensors: &HashMap<String, Tensor>,
) -> Result<Vec<f32>, InferError> {
    let mut flat = Vec::new();
    for (name, _) in names {
        let t = tensors
            .get(&name)
            .ok_or_else(|| ModelError::Config(format!("{kind}: no tensor '{name}'")))?;
        flat.extend(t.flatten_all()?.to_dtype(DType::F32)?.to_vec1::<f32>()?);
    }
    Ok(flat)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tictactoe_encoder;
    use crate::game::{AtariGo, Game, TicTacToe};
    use crate::games::GameSupport;
    use crate::infer::plan::Precision;
    use crate::model::{
        seeded_tensors, Activation, InputShape, MdrnnConfig, MlpNetConfig, WeightInit,
    };
    use crate::util::seeded_rng;

    fn ttt_positions() -> Vec<TicTacToe> {
        [".../.../...", "x../.../...", "x../.o./...", "xo./.x./..o"]
            .iter()
            .map(|t| TicTacToe::from_text(t).expect("a position"))
            .collect()
    }

    /// The backend `choice` gives `model` on the CPU, and the values of
    /// `states` through it.
    fn run<G: GameSupport>(
        model: &ModelConfig,
        encoder: &impl Fn() -> Box<dyn Encoder<G>>,
        states: &[G],
        choice: BackendChoice,
    ) -> (String, Vec<f32>) {
        let dev = Device::Cpu;
        let tensors = seeded_tensors(model, &mut seeded_rng(4, 0), &dev).expect("weights");
        let enc = encoder();
        let input = (enc.shape(), enc.globals_len());
        let backend = weights_backend(model, &tensors, input, &dev, choice, Precision::F32)
            .expect("a backend");
        let name = backend.name();
        let eval = ModelEvaluator::new(enc, backend, "net");
        (name, eval.evaluate(states).expect("values"))
    }

    fn close(a: &[f32], b: &[f32]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-5, "{x} vs {y}");
        }
        assert!(a.iter().any(|v| v.abs() > 1e-3), "all values near 0: {a:?}");
    }

    fn mlp(hidden: &[usize], output: OutputActivation) -> ModelConfig {
        ModelConfig::Mlp(MlpNetConfig {
            inputs: 9,
            hidden: hidden.to_vec(),
            activation: Activation::Tanh,
            init: WeightInit::FanIn,
            dropout: 0.0,
            output,
        })
    }

    /// `states` valued by `model` on the backend the CPU picks and on
    /// candle: the picked backend's name, and the two agree.
    fn picked_agrees_with_candle<G: GameSupport>(
        model: &ModelConfig,
        encoder: impl Fn() -> Box<dyn Encoder<G>>,
        states: &[G],
    ) -> String {
        let (auto, a) = run(model, &encoder, states, BackendChoice::Auto);
        let (candle, b) = run(model, &encoder, states, BackendChoice::Candle);
        assert_eq!(candle, "candle-cpu");
        close(&a, &b);
        auto
    }

    #[test]
    fn picks_the_native_mlp_on_the_cpu_and_it_values_as_candle_does() {
        let model = mlp(&[12], OutputActivation::Identity);
        let enc = || tictactoe_encoder("tictactoe-9").expect("encoder");
        assert_eq!(
            picked_agrees_with_candle(&model, enc, &ttt_positions()),
            "native-mlp"
        );
    }

    #[test]
    fn a_sigmoid_or_deeper_mlp_stays_on_candle() {
        let enc = || tictactoe_encoder("tictactoe-9").expect("encoder");
        let states = ttt_positions();
        let sigmoid = mlp(&[12], OutputActivation::Sigmoid);
        let (name, values) = run(&sigmoid, &enc, &states, BackendChoice::Auto);
        assert_eq!(name, "candle-cpu");
        // Sigmoid outputs mapped to [-1, 1].
        assert!(values.iter().all(|v| (-1.0..=1.0).contains(v)));
        let deeper = mlp(&[12, 6], OutputActivation::Identity);
        assert_eq!(
            run(&deeper, &enc, &states, BackendChoice::Auto).0,
            "candle-cpu"
        );
    }

    #[test]
    fn picks_the_native_mdrnn_on_the_cpu_and_it_values_as_candle_does() {
        let size = 5;
        let model = ModelConfig::Mdrnn(MdrnnConfig {
            input: InputShape::new([2, size, size], 0),
            ..MdrnnConfig::stones(size, 10)
        });
        let enc = || AtariGo::encoder("stones-2", size).expect("encoder");
        let (mut rng, mut scratch) = (seeded_rng(8, 0), Vec::new());
        let mut states = vec![AtariGo::with_size(size).expect("a 5x5 board")];
        while states.len() < 12 {
            let mut next = states[states.len() - 1];
            match next.random_move(&mut rng, &mut scratch) {
                Some(mv) => next.play(mv),
                None => break,
            }
            states.push(next);
        }
        assert!(states.len() > 4);
        assert_eq!(
            picked_agrees_with_candle(&model, enc, &states),
            "native-mdrnn"
        );
    }

    #[test]
    fn the_plan_twin_values_as_candle_does_through_the_evaluator() {
        let model = mlp(&[12, 6], OutputActivation::Sigmoid);
        let enc = || tictactoe_encoder("tictactoe-9").expect("encoder");
        let states = ttt_positions();
        let (name, twin) = run(
            &model,
            &enc,
            &states,
            BackendChoice::PlanTwin(Precision::F32),
        );
        assert_eq!(name, "plan-cpu-f32");
        let (_, candle) = run(&model, &enc, &states, BackendChoice::Candle);
        close(&twin, &candle);
    }

    #[test]
    fn reduced_precision_is_refused_on_the_cpu_by_name() {
        use {BackendChoice::Auto, Precision::F32};
        let model = mlp(&[12], OutputActivation::Identity);
        let tensors = seeded_tensors(&model, &mut seeded_rng(4, 0), &Device::Cpu).expect("weights");
        for p in [Precision::Tf32, Precision::Bf16] {
            let enc = tictactoe_encoder("tictactoe-9").expect("encoder");
            let err = weights_evaluator_on(enc, &model, &tensors, &Device::Cpu, Auto, p, "net")
                .err()
                .expect("refused");
            let msg = err.to_string();
            assert!(msg.contains(p.name()) && msg.contains("GPU"), "{msg}");
        }
        let enc = tictactoe_encoder("tictactoe-9").expect("encoder");
        weights_evaluator_on(enc, &model, &tensors, &Device::Cpu, Auto, F32, "net")
            .expect("f32 runs on the CPU");
    }

    #[test]
    fn a_missing_tensor_is_named() {
        let model = ModelConfig::Mdrnn(MdrnnConfig::stones(5, 4));
        let dev = Device::Cpu;
        let mut tensors = seeded_tensors(&model, &mut seeded_rng(4, 0), &dev).expect("weights");
        let gone = tensors.keys().next().expect("a tensor").clone();
        tensors.remove(&gone);
        let err = weights_backend(
            &model,
            &tensors,
            ([2, 5, 5], 0),
            &dev,
            BackendChoice::Auto,
            Precision::F32,
        )
        .err()
        .expect("an error");
        assert!(err.to_string().contains(&gone), "{err}");
    }

    #[test]
    fn the_native_backend_is_refused_off_cuda_by_name() {
        let model = ModelConfig::Linear(crate::model::LinearConfig::new(
            crate::model::InputShape::new([2, 3, 3], 0),
        ));
        let dev = Device::Cpu;
        let tensors = seeded_tensors(&model, &mut seeded_rng(4, 0), &dev).expect("weights");
        let err = weights_backend(
            &model,
            &tensors,
            ([2, 3, 3], 0),
            &dev,
            BackendChoice::Native,
            Precision::F32,
        )
        .err()
        .expect("no native backend on the CPU");
        assert!(err.to_string().contains("runs on CUDA"), "{err}");
        // Auto on the CPU never takes it, whatever the environment says.
        assert!(!native_by_default(&dev));
    }
}
