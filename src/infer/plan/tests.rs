use super::*;
use crate::infer::backend::{Encoded, Outputs};
use crate::model::{
    build, seeded_tensors, Activation, Cnn3Config, Cnn3NetConfig, Cnn3Output, InputShape,
    LinearConfig, LinearInit, MdrnnConfig, MlpNetConfig, ModelConfig, OutputActivation,
    ResNetConfig, WeightInit,
};
use crate::util::seeded_rng;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use rand::RngExt;
use std::collections::HashMap;

/// Every model kind a plan covers, with odd shapes, globals, heads and
/// activations.
fn models() -> Vec<ModelConfig> {
    vec![
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new([6, 8, 8], 0),
            Cnn3Config::default(),
        )),
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new([3, 5, 4], 0),
            Cnn3Config {
                filters: 7,
                kernel: [2, 3],
                hidden: 11,
                output: Cnn3Output::Relu,
                dropout: 0.0,
            },
        )),
        ModelConfig::Resnet(ResNetConfig {
            policy: true,
            value_linear: Some(LinearInit::FanIn),
            ..ResNetConfig::tiny(InputShape::new([3, 5, 4], 2))
        }),
        ModelConfig::Resnet(ResNetConfig {
            blocks: 1,
            channels: 8,
            value_hidden: 6,
            policy: true,
            policy_planes: 3,
            output: OutputActivation::Tanh,
            ..ResNetConfig::tiny(InputShape::new([2, 4, 4], 0))
        }),
        ModelConfig::Mlp(MlpNetConfig {
            inputs: 2 * 3 * 3 + 1,
            hidden: vec![7, 5],
            activation: Activation::Elliott { beta: 2.0 },
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: OutputActivation::Sigmoid,
        }),
        ModelConfig::Mlp(MlpNetConfig {
            inputs: 2 * 3 * 3 + 1,
            hidden: vec![6],
            activation: Activation::Relu,
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: OutputActivation::Identity,
        }),
        ModelConfig::Linear(LinearConfig {
            output: OutputActivation::Tanh,
            ..LinearConfig::new(InputShape::new([3, 4, 5], 2))
        }),
        ModelConfig::Linear(LinearConfig {
            board: false,
            ..LinearConfig::new(InputShape::new([3, 4, 5], 3))
        }),
    ]
}

/// The encoder input a model reads (the MLP's is chosen here).
fn input_of(model: &ModelConfig) -> ([usize; 3], usize) {
    match model.input() {
        Some(i) => (i.planes, i.globals),
        None => ([2, 3, 3], 1),
    }
}

/// Seeded weights with batch-norm statistics away from their initial
/// values, so folding them is tested.
fn weights(model: &ModelConfig, seed: u64) -> HashMap<String, Tensor> {
    let dev = Device::Cpu;
    let mut rng = seeded_rng(seed, 0);
    let mut tensors = seeded_tensors(model, &mut rng, &dev).expect("weights");
    let mut names: Vec<String> = tensors.keys().cloned().collect();
    names.sort();
    for name in names {
        let (lo, hi) = match name.rsplit('.').next() {
            Some("running_mean") => (-0.3, 0.3),
            Some("running_var") => (0.5, 2.0),
            _ if name.contains("bn.") || name.contains(".bn") => match name.rsplit('.').next() {
                Some("weight") => (0.5, 1.5),
                _ => (-0.2, 0.2),
            },
            _ => continue,
        };
        let t = &tensors[&name];
        let v: Vec<f32> = (0..t.elem_count())
            .map(|_| rng.random_range(lo..hi))
            .collect();
        let t = Tensor::from_vec(v, t.dims(), &dev).expect("a tensor");
        tensors.insert(name, t);
    }
    tensors
}

/// `rows` random positions: planes in {-1, 0, 1}, normal globals.
fn batch(planes: [usize; 3], globals: usize, rows: usize, seed: u64) -> Encoded {
    let mut rng = seeded_rng(seed, 1);
    let n: usize = planes.iter().product();
    Encoded {
        rows,
        shape: planes,
        globals_len: globals,
        planes: (0..rows * n).map(|_| rng.random_range(-1i8..=1)).collect(),
        globals: (0..rows * globals)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect(),
    }
}

/// candle's model on the same batch: values and policy logits.
fn candle_outputs(
    model: &ModelConfig,
    tensors: &HashMap<String, Tensor>,
    b: &Encoded,
) -> (Vec<f32>, Option<Vec<Vec<f32>>>) {
    let dev = Device::Cpu;
    let net = build(
        model,
        VarBuilder::from_tensors(tensors.clone(), DType::F32, &dev),
    )
    .expect("a model");
    let [c, h, w] = b.shape;
    let x = Tensor::from_vec(b.planes_f32(), (b.rows, c, h, w), &dev).expect("planes");
    let g = (b.globals_len > 0)
        .then(|| Tensor::from_slice(&b.globals, (b.rows, b.globals_len), &dev).expect("globals"));
    let out = net.forward(&x, g.as_ref(), false).expect("a forward pass");
    (
        out.value.to_vec1().expect("values"),
        out.policy.map(|p| p.to_vec2().expect("logits")),
    )
}

fn assert_close(what: &str, got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: plan {g}, candle {w}"
        );
    }
}

#[test]
fn the_twin_values_as_candle_does_for_every_model_kind() {
    for (m, model) in models().iter().enumerate() {
        let tensors = weights(model, 10 + m as u64);
        let (planes, globals) = input_of(model);
        let plan = NetPlan::build(model, &tensors, planes, globals, Precision::F32, 8)
            .unwrap_or_else(|e| panic!("{}: {e}", model.kind()));
        assert_eq!(plan.buckets.sizes(), &[1, 2, 4, 8]);
        let twin = PlanTwin::new(plan);
        // One position, a padded bucket, a full bucket, two chunks.
        for rows in [1, 5, 8, 13] {
            let b = batch(planes, globals, rows, 100 + rows as u64);
            let Outputs { values, policy } = twin.run(&b).expect("a run");
            let (want_v, want_p) = candle_outputs(model, &tensors, &b);
            let what = format!("{} #{m} at {rows} rows", model.kind());
            assert_close(&format!("{what}: values"), &values, &want_v, 1e-5);
            let spread = want_v
                .iter()
                .fold(0f32, |a, v| a.max((v - want_v[0]).abs()));
            assert!(
                rows == 1 || spread > 1e-4,
                "{what}: values all alike {want_v:?}"
            );
            assert_eq!(policy.is_some(), want_p.is_some(), "{what}: policy head");
            if let (Some(p), Some(want)) = (policy, want_p) {
                assert_eq!(p.len(), rows);
                for (r, (got, want)) in p.iter().zip(&want).enumerate() {
                    assert_close(&format!("{what}: policy row {r}"), got, want, 1e-5);
                }
            }
        }
    }
}

#[test]
fn a_position_gets_the_same_value_alone_and_padded_in_any_bucket() {
    let model = &models()[2];
    let tensors = weights(model, 3);
    let (planes, globals) = input_of(model);
    let twin = PlanTwin::new(
        NetPlan::build(model, &tensors, planes, globals, Precision::F32, 16).expect("a plan"),
    );
    let b = batch(planes, globals, 11, 5);
    let all = twin.run(&b).expect("a run").values;
    let n: usize = planes.iter().product();
    for r in [0, 6, 10] {
        let one = Encoded {
            rows: 1,
            planes: b.planes[r * n..(r + 1) * n].to_vec(),
            globals: b.globals[r * globals..(r + 1) * globals].to_vec(),
            ..b.clone()
        };
        assert_eq!(
            twin.run(&one).expect("a run").values,
            vec![all[r]],
            "row {r}"
        );
    }
}

/// Replays the ops over the slots: every buffer an op reads still holds
/// what was written to it, and no op writes a slot it reads.
fn check_slots(plan: &NetPlan) -> usize {
    let slots = plan.slots();
    let mut holds: HashMap<usize, BufId> = HashMap::new();
    for op in &plan.ops {
        let dst = slots.slot(op.writes());
        for b in op.reads() {
            assert_eq!(
                holds.get(&slots.slot(b)),
                Some(&b),
                "{} reads {b:?}",
                op.kind()
            );
            assert_ne!(slots.slot(b), dst, "{} writes the slot it reads", op.kind());
        }
        assert!(slots.per_row[dst] >= plan.per_row[op.writes().0]);
        holds.insert(dst, op.writes());
    }
    for out in std::iter::once(plan.value).chain(plan.policy) {
        assert_eq!(holds.get(&slots.slot(out)), Some(&out), "output {out:?}");
    }
    slots.per_row.len()
}

#[test]
fn slots_keep_live_buffers_apart_and_a_tower_of_any_depth_needs_the_same() {
    let mut counts = Vec::new();
    for blocks in [0, 2, 6] {
        let model = ModelConfig::Resnet(ResNetConfig {
            blocks,
            policy: true,
            ..ResNetConfig::tiny(InputShape::new([2, 5, 5], 1))
        });
        let tensors = weights(&model, 1);
        let plan =
            NetPlan::build(&model, &tensors, [2, 5, 5], 1, Precision::F32, 4).expect("a plan");
        counts.push(check_slots(&plan));
        let buffers = plan.per_row.len();
        assert!(buffers >= 2 * blocks + 6, "{buffers} buffers");
    }
    assert_eq!(counts[1], counts[2], "slots by depth: {counts:?}");
    assert!(counts[2] <= 5, "slots: {counts:?}");
    for model in models() {
        let (planes, globals) = input_of(&model);
        let tensors = weights(&model, 2);
        check_slots(
            &NetPlan::build(&model, &tensors, planes, globals, Precision::F32, 4).expect("a plan"),
        );
    }
}

#[test]
fn buckets_are_powers_of_two_up_to_the_largest_batch() {
    assert_eq!(Buckets::up_to(8).sizes(), &[1, 2, 4, 8]);
    assert_eq!(Buckets::up_to(100).sizes(), &[1, 2, 4, 8, 16, 32, 64, 100]);
    assert_eq!(Buckets::up_to(0).sizes(), &[1]);
    let b = Buckets::up_to(100);
    assert_eq!(
        [1, 3, 64, 65, 100].map(|r| b.for_rows(r)),
        [1, 4, 64, 100, 100]
    );
    let model = &models()[0];
    let plan = NetPlan::build(model, &weights(model, 1), [6, 8, 8], 0, Precision::Bf16, 64)
        .expect("a plan");
    let keys = plan.graph_keys();
    assert_eq!(keys.len(), 7);
    assert!(keys.iter().all(|k| k.precision == Precision::Bf16));
    // cnn3: 48 filters of 6x4x4 at 5x5, then 1200x384 and 384x1.
    assert_eq!(plan.macs(), 25 * 48 * 96 + 1200 * 384 + 384);
}

#[test]
fn reduced_precisions_round_as_the_device_does() {
    let model = &models()[2];
    let tensors = weights(model, 4);
    let (planes, globals) = input_of(model);
    let b = batch(planes, globals, 32, 9);
    let run = |p| {
        let plan = NetPlan::build(model, &tensors, planes, globals, p, 32).expect("a plan");
        PlanTwin::new(plan).run(&b).expect("a run").values
    };
    let f32s = run(Precision::F32);
    let worst = |v: &[f32]| {
        v.iter()
            .zip(&f32s)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max)
    };
    let (tf32, bf16) = (worst(&run(Precision::Tf32)), worst(&run(Precision::Bf16)));
    // Rounding happened, and stays within each format's reach on a small
    // net (bf16 keeps 8 significant bits, TF32 11).
    assert!(bf16 > 0.0 && bf16 < 3e-2, "bf16 off by {bf16}");
    assert!(tf32 > 0.0 && tf32 < 4e-3, "tf32 off by {tf32}");
    assert!(tf32 < bf16, "tf32 {tf32} vs bf16 {bf16}");
}

#[test]
fn what_has_no_plan_or_does_not_fit_is_named() {
    let mdrnn = ModelConfig::Mdrnn(MdrnnConfig::stones(5, 4));
    let t = seeded_tensors(&mdrnn, &mut seeded_rng(1, 0), &Device::Cpu).expect("weights");
    let err = NetPlan::build(&mdrnn, &t, [2, 5, 5], 0, Precision::F32, 4).unwrap_err();
    assert!(err.to_string().contains("mdrnn"), "{err}");

    let model = &models()[0];
    let mut t = weights(model, 1);
    t.insert(
        "hidden.bias".into(),
        Tensor::zeros(7, DType::F32, &Device::Cpu).expect("a tensor"),
    );
    let err = NetPlan::build(model, &t, [6, 8, 8], 0, Precision::F32, 4).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("hidden.bias") && msg.contains("[7]") && msg.contains("[384]"),
        "{msg}"
    );
    t.remove("hidden.bias");
    let err = NetPlan::build(model, &t, [6, 8, 8], 0, Precision::F32, 4).unwrap_err();
    assert!(
        err.to_string().contains("`hidden.bias` is missing"),
        "{err}"
    );

    let t = weights(model, 1);
    let plan = NetPlan::build(model, &t, [6, 8, 8], 0, Precision::F32, 4).expect("a plan");
    let err = PlanTwin::new(plan)
        .run(&batch([6, 8, 7], 0, 2, 1))
        .unwrap_err();
    assert!(err.to_string().contains("[6, 8, 7]"), "{err}");
}
