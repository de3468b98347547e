//! The device path: with `PLIES_TEST_DEVICE` naming a device (`cuda`,
//! `cuda:N`, `metal`; `scripts/gpu_check.sh` sets it), every model's
//! outputs and gradients on it match the CPU's, and the kernels of
//! `kernels/` match their CPU twins. Without it these tests say so and
//! check nothing else: CI has no GPU. On the CPU the same paths are tested
//! with candle's ops forced (`model::tests`) and against the twins
//! (`model::device_kernels`).

use candle_core::{DType, Device, Tensor};
use candle_nn::{VarBuilder, VarMap};
use plies::model::device_kernels::mdrnn_sweep;
use plies::model::{
    build, seeded_init, Cnn3Config, Cnn3NetConfig, InputShape, LinearConfig, MdrnnConfig,
    ModelConfig, ResNetConfig, WeightInit,
};
use plies::util::int8_planes as planes;
use plies::util::{parse_device, seeded_rng};

/// The device under test, or `None` (with a note) when none is named. A
/// device named but not openable fails the test: a GPU check must not pass
/// by skipping.
fn device() -> Option<Device> {
    let Ok(name) = std::env::var("PLIES_TEST_DEVICE") else {
        eprintln!("PLIES_TEST_DEVICE is not set: the device tests check nothing here");
        return None;
    };
    Some(parse_device(&name).unwrap_or_else(|e| panic!("PLIES_TEST_DEVICE={name}: {e}")))
}

fn models() -> Vec<ModelConfig> {
    vec![
        ModelConfig::Linear(LinearConfig::new(InputShape::new([6, 8, 8], 3))),
        ModelConfig::Mlp(plies::model::MlpNetConfig {
            inputs: 4 * 10 * 10 + 3,
            hidden: vec![40, 20],
            activation: plies::model::Activation::Elliott { beta: 5.0 },
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: plies::model::OutputActivation::Tanh,
        }),
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new([6, 8, 8], 0),
            Cnn3Config::default(),
        )),
        ModelConfig::Resnet(ResNetConfig {
            channels: 16,
            value_hidden: 32,
            policy: true,
            ..ResNetConfig::tiny(InputShape::new([3, 7, 6], 2))
        }),
        ModelConfig::Mdrnn(MdrnnConfig {
            init_std: 0.5,
            ..MdrnnConfig::stones(9, 10)
        }),
    ]
}

/// Seeded uniform values in [-scale, scale), as a tensor on `dev`.
fn uniform(seed: u64, scale: f32, shape: &[usize], dev: &Device) -> Tensor {
    use rand::RngExt;
    let mut rng = seeded_rng(seed, 0xd3);
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|_| scale * (2.0 * rng.random::<f32>() - 1.0))
        .collect();
    Tensor::from_vec(v, shape, dev).unwrap()
}

/// `t`'s values on the CPU as f32, flattened (bf16 widened exactly).
fn host_values(t: &Tensor) -> Vec<f32> {
    t.to_device(&Device::Cpu)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
        .flatten_all()
        .unwrap()
        .to_vec1()
        .unwrap()
}

fn max_rel_diff(a: &Tensor, b: &Tensor) -> f32 {
    let a: Vec<f32> = a.flatten_all().unwrap().to_vec1().unwrap();
    let b: Vec<f32> = b.flatten_all().unwrap().to_vec1().unwrap();
    let scale = 1.0 + a.iter().fold(0f32, |m, v| m.max(v.abs()));
    a.iter()
        .zip(&b)
        .fold(0f32, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// One model on `dev`: its evaluation outputs and the gradients of a
/// training-mode loss, by variable name, all copied to the CPU.
fn run(cfg: &ModelConfig, dev: &Device) -> (Vec<Tensor>, Vec<(String, Tensor)>) {
    let vm = VarMap::new();
    let net = build(cfg, VarBuilder::from_varmap(&vm, DType::F32, dev)).unwrap();
    seeded_init(&vm, cfg, &mut seeded_rng(5, 0), dev).unwrap();
    let input = cfg.input().unwrap_or(InputShape::new([4, 10, 10], 3));
    let [c, h, w] = input.planes;
    let x = uniform(9, 1.0, &[33, c, h, w], dev);
    let g = (input.globals > 0).then(|| uniform(10, 1.0, &[33, input.globals], dev));
    let eval = net.forward(&x, g.as_ref(), false).unwrap();
    let mut outs = vec![eval.value.to_device(&Device::Cpu).unwrap()];
    if let Some(p) = eval.policy {
        outs.push(p.to_device(&Device::Cpu).unwrap());
    }
    let train = net.forward(&x, g.as_ref(), true).unwrap();
    let grads = train
        .value
        .sqr()
        .unwrap()
        .mean_all()
        .unwrap()
        .backward()
        .unwrap();
    let data = vm.data().lock().unwrap();
    let mut names: Vec<&String> = data.keys().collect();
    names.sort();
    let grads = names
        .into_iter()
        .filter_map(|n| {
            let g = grads.get(data[n].as_tensor())?;
            Some((n.clone(), g.to_device(&Device::Cpu).unwrap()))
        })
        .collect();
    (outs, grads)
}

#[test]
fn every_model_on_the_device_matches_the_cpu() {
    let Some(dev) = device() else { return };
    for cfg in models() {
        let kind = cfg.kind();
        let (cpu_out, cpu_grads) = run(&cfg, &Device::Cpu);
        let (dev_out, dev_grads) = run(&cfg, &dev);
        for (a, b) in cpu_out.iter().zip(&dev_out) {
            let d = max_rel_diff(a, b);
            assert!(d < 1e-4, "{kind}: outputs differ by {d} (relative)");
        }
        assert_eq!(cpu_grads.len(), dev_grads.len(), "{kind}: gradient count");
        for ((name, a), (_, b)) in cpu_grads.iter().zip(&dev_grads) {
            let d = max_rel_diff(a, b);
            assert!(
                d < 1e-3,
                "{kind}: gradient of {name} differs by {d} (relative)"
            );
        }
    }
}

#[test]
fn the_mdrnn_sweep_kernel_matches_its_twin() {
    let Some(dev) = device() else { return };
    for (seed, (c, h, w, k)) in mdrnn_sweep::DEVICE_TEST_SHAPES.into_iter().enumerate() {
        let seed = seed as u64;
        let planes = uniform(seed, 1.0, &[17, c, h, w], &Device::Cpu);
        let packed = uniform(100 + seed, 0.5, &[k * c + k * k + 2 * k], &Device::Cpu);
        let want = mdrnn_sweep::sweep(&planes, &packed, k).unwrap();
        let got = mdrnn_sweep::sweep(
            &planes.to_device(&dev).unwrap(),
            &packed.to_device(&dev).unwrap(),
            k,
        )
        .unwrap()
        .to_device(&Device::Cpu)
        .unwrap();
        // The twin runs the kernel's loops in its order, but the GPU fuses
        // multiply-adds and its tanhf differs by an ulp or two (2.3e-5 at
        // 2x19x19 on an H100); the bound comes from the twin under that
        // rounding (mdrnn_sweep's tests).
        let d = max_rel_diff(&want, &got);
        let tol = mdrnn_sweep::DEVICE_TOLERANCE;
        assert!(d < tol, "{c}x{h}x{w}, k = {k}: differs by {d} (relative)");
    }
}

#[test]
fn the_plane_widening_kernel_matches_its_twin() {
    let Some(dev) = device() else { return };
    let values: Vec<i8> = (0..100_003).map(|i| (i % 256) as u8 as i8).collect();
    let t = planes::int8_tensor(&values, values.len(), &dev).unwrap();
    let got: Vec<f32> = planes::widen(&t)
        .unwrap()
        .to_device(&Device::Cpu)
        .unwrap()
        .to_vec1()
        .unwrap();
    let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
    assert_eq!(got, planes::widen_host(&bytes));
}

/// The convolution op on cuDNN (forward, input and filter gradients)
/// against its CPU side (candle's convolution) for the models' shapes, in
/// f32 (FMA math), TF32 and bf16; and in f32 a second run gives the same
/// bits (deterministic algorithms).
#[cfg(feature = "cuda")]
#[test]
fn the_cudnn_convolution_matches_the_cpu_in_each_precision() {
    use candle_core::Var;
    use plies::model::device_kernels::conv;
    let Some(dev) = device() else { return };
    if !dev.is_cuda() {
        eprintln!("{dev:?} is not CUDA: the cuDNN convolution is not tested");
        return;
    }
    // (label, dtype, TF32 products, relative tolerance). f32 sums in
    // another order; TF32 reads 10-bit mantissas; bf16 rounds the result
    // once, as the CPU side does, but from sums in another order.
    let precisions = [
        ("f32", DType::F32, false, 1e-5),
        ("tf32", DType::F32, true, 5e-3),
        ("bf16", DType::BF16, false, 1.6e-2),
    ];
    let shapes = [
        (64, 64, 8, 8, 64, 3, 1),
        (33, 6, 8, 8, 32, 5, 0),
        (17, 64, 19, 19, 2, 1, 0),
        (5, 3, 7, 6, 16, 3, 1),
    ];
    // Gradients of a loss that weighs each output differently, copied to
    // the CPU as f32: [y, dx, dw].
    let pass = |x: &Tensor, w: &Tensor, pad: usize, dtype: DType| -> Vec<Tensor> {
        let (xv, wv) = (
            Var::from_tensor(&x.to_dtype(dtype).unwrap()).unwrap(),
            Var::from_tensor(&w.to_dtype(dtype).unwrap()).unwrap(),
        );
        let y = conv::conv2d(xv.as_tensor(), wv.as_tensor(), pad).unwrap();
        let ramp = uniform(77, 1.0, y.dims(), &x.device().clone())
            .to_dtype(dtype)
            .unwrap();
        let grads = (&y * ramp).unwrap().sum_all().unwrap().backward().unwrap();
        let cpu = |t: &Tensor| {
            t.to_dtype(DType::F32)
                .unwrap()
                .to_device(&Device::Cpu)
                .unwrap()
        };
        vec![
            cpu(&y),
            cpu(grads.get(xv.as_tensor()).unwrap()),
            cpu(grads.get(wv.as_tensor()).unwrap()),
        ]
    };
    for (label, dtype, tf32, tol) in precisions {
        candle_core::cuda::set_gemm_reduced_precision_f32(tf32);
        for (i, &(b, c, h, w, f, k, pad)) in shapes.iter().enumerate() {
            let x = uniform(30 + i as u64, 1.0, &[b, c, h, w], &Device::Cpu);
            let wt = uniform(40 + i as u64, 0.3, &[f, c, k, k], &Device::Cpu);
            let want = pass(&x, &wt, pad, dtype);
            let (xd, wd) = (x.to_device(&dev).unwrap(), wt.to_device(&dev).unwrap());
            let got = pass(&xd, &wd, pad, dtype);
            for (name, (a, g)) in ["y", "dx", "dw"].iter().zip(want.iter().zip(&got)) {
                let d = max_rel_diff(a, g);
                assert!(
                    d < tol,
                    "{label} {b}x{c}x{h}x{w} * {f}x{c}x{k}x{k} pad {pad}: {name} differs by {d} (relative)"
                );
            }
            if label == "f32" {
                let again = pass(&xd, &wd, pad, dtype);
                for (name, (a, g)) in ["y", "dx", "dw"].iter().zip(got.iter().zip(&again)) {
                    assert_eq!(max_rel_diff(a, g), 0.0, "f32 {name} is not repeatable");
                }
            }
        }
    }
    candle_core::cuda::set_gemm_reduced_precision_f32(false);
}

/// The batch-norm kernels against their twin (the ops' CPU side): the
/// kernels round every step explicitly, so the values, statistics and
/// gradients should agree to the last bit; the bound leaves a rounding or
/// two.
#[cfg(feature = "cuda")]
#[test]
fn the_batch_norm_kernels_match_their_twin() {
    use candle_core::Var;
    use plies::model::device_kernels::batch_norm;
    let Some(dev) = device() else { return };
    if !dev.is_cuda() {
        eprintln!("{dev:?} is not CUDA: the batch-norm kernels are not tested");
        return;
    }
    let shapes: [&[usize]; 4] = [&[256, 64, 8, 8], &[33, 5, 19, 19], &[7, 3, 2, 2], &[40, 16]];
    let mut worst = 0f32;
    for (i, shape) in shapes.iter().enumerate() {
        for dtype in [DType::F32, DType::BF16] {
            for relu in [false, true] {
                let c = shape[1];
                let x = (uniform(50 + i as u64, 2.0, shape, &Device::Cpu) + 0.5).unwrap();
                let gamma = (uniform(60 + i as u64, 0.5, &[c], &Device::Cpu) + 1.0).unwrap();
                let beta = uniform(70 + i as u64, 0.5, &[c], &Device::Cpu);
                let weigh = uniform(80 + i as u64, 1.0, shape, &Device::Cpu);
                let run = |on: &Device| -> Vec<Tensor> {
                    let put = |t: &Tensor| {
                        Var::from_tensor(&t.to_dtype(dtype).unwrap().to_device(on).unwrap())
                            .unwrap()
                    };
                    let (xv, gv, bv) = (put(&x), put(&gamma), put(&beta));
                    let (y, stats) = batch_norm::train(
                        xv.as_tensor(),
                        gv.as_tensor(),
                        bv.as_tensor(),
                        1e-5,
                        relu,
                    )
                    .unwrap();
                    let w = weigh.to_dtype(dtype).unwrap().to_device(on).unwrap();
                    let grads = (&y * w).unwrap().sum_all().unwrap().backward().unwrap();
                    let cpu = |t: &Tensor| {
                        t.to_dtype(DType::F32)
                            .unwrap()
                            .to_device(&Device::Cpu)
                            .unwrap()
                    };
                    vec![
                        cpu(&y),
                        cpu(&stats),
                        cpu(grads.get(xv.as_tensor()).unwrap()),
                        cpu(grads.get(gv.as_tensor()).unwrap()),
                        cpu(grads.get(bv.as_tensor()).unwrap()),
                    ]
                };
                let (want, got) = (run(&Device::Cpu), run(&dev));
                for (name, (a, b)) in ["y", "stats", "dx", "dgamma", "dbeta"]
                    .iter()
                    .zip(want.iter().zip(&got))
                {
                    let d = max_rel_diff(a, b);
                    worst = worst.max(d);
                    assert!(
                        d < 1e-5,
                        "{shape:?} {dtype:?} relu {relu}: {name} differs by {d} (relative)"
                    );
                }
            }
        }
    }
    // The residual block's end (batch norm + skip + ReLU), with the skip
    // input's gradient.
    for dtype in [DType::F32, DType::BF16] {
        let shape = [64, 16, 8, 8];
        let x = uniform(55, 2.0, &shape, &Device::Cpu);
        let skip = uniform(56, 1.0, &shape, &Device::Cpu);
        let gamma = (uniform(57, 0.5, &[16], &Device::Cpu) + 1.0).unwrap();
        let beta = uniform(58, 0.5, &[16], &Device::Cpu);
        let weigh = uniform(59, 1.0, &shape, &Device::Cpu);
        let run = |on: &Device| -> Vec<Tensor> {
            let put = |t: &Tensor| {
                Var::from_tensor(&t.to_dtype(dtype).unwrap().to_device(on).unwrap()).unwrap()
            };
            let (xv, sv, gv, bv) = (put(&x), put(&skip), put(&gamma), put(&beta));
            let (y, _) = batch_norm::train_residual(
                xv.as_tensor(),
                gv.as_tensor(),
                bv.as_tensor(),
                sv.as_tensor(),
                1e-5,
            )
            .unwrap();
            let w = weigh.to_dtype(dtype).unwrap().to_device(on).unwrap();
            let grads = (&y * w).unwrap().sum_all().unwrap().backward().unwrap();
            let cpu = |t: &Tensor| {
                t.to_dtype(DType::F32)
                    .unwrap()
                    .to_device(&Device::Cpu)
                    .unwrap()
            };
            let mut out = vec![cpu(&y)];
            for v in [&xv, &sv, &gv, &bv] {
                out.push(cpu(grads.get(v.as_tensor()).unwrap()));
            }
            out
        };
        let (want, got) = (run(&Device::Cpu), run(&dev));
        for (name, (a, b)) in ["y", "dx", "dskip", "dgamma", "dbeta"]
            .iter()
            .zip(want.iter().zip(&got))
        {
            let d = max_rel_diff(a, b);
            worst = worst.max(d);
            assert!(
                d < 1e-5,
                "residual {dtype:?}: {name} differs by {d} (relative)"
            );
        }
    }
    eprintln!("batch-norm kernels against the twin: largest relative difference {worst:e}");
}

/// SGD with Nesterov momentum, AdamW and centered RMSProp with momentum,
/// all with weight decay, on the device (every parameter in one launch)
/// against the CPU's steps: the kernels run the CPU's operations, each
/// rounded alone, so three steps agree to the bit.
#[cfg(feature = "cuda")]
#[test]
fn the_fused_optimizer_steps_match_the_cpu() {
    use candle_core::Var;
    use candle_nn::Optimizer;
    use plies::optim::{AdamW, AdamWConfig, Momentum, MomentumConfig, RmsProp, RmsPropConfig};
    let Some(dev) = device() else { return };
    if !dev.is_cuda() {
        eprintln!("{dev:?} is not CUDA: the fused optimizer steps are not tested");
        return;
    }
    let shapes: [&[usize]; 4] = [&[64, 64, 3, 3], &[64], &[1], &[300_001]];
    // Three steps of `step` over seeded vars on `on`, their values after.
    fn run<O: Optimizer>(shapes: &[&[usize]], on: &Device, config: O::Config) -> Vec<Vec<f32>> {
        let vars: Vec<Var> = shapes
            .iter()
            .enumerate()
            .map(|(i, s)| Var::from_tensor(&uniform(90 + i as u64, 1.0, s, on)).unwrap())
            .collect();
        let mut opt = O::new(vars.clone(), config).unwrap();
        for step in 0..3u64 {
            let mut loss = Tensor::zeros((), DType::F32, on).unwrap();
            for (i, v) in vars.iter().enumerate() {
                let g = uniform(100 * step + i as u64, 1.0, v.dims(), on);
                loss = (loss + (v.as_tensor() * g).unwrap().sum_all().unwrap()).unwrap();
            }
            opt.backward_step(&loss).unwrap();
        }
        vars.iter().map(|v| host_values(v.as_tensor())).collect()
    }
    let momentum = MomentumConfig {
        lr: 0.01,
        momentum: 0.9,
        weight_decay: 1e-4,
        nesterov: true,
        ..Default::default()
    };
    let adamw = AdamWConfig {
        lr: 1e-3,
        weight_decay: 0.01,
        ..Default::default()
    };
    let rmsprop = RmsPropConfig {
        lr: 1e-3,
        momentum: 0.9,
        centered: true,
        weight_decay: 1e-4,
        ..Default::default()
    };
    let pairs = [
        (
            "momentum",
            run::<Momentum>(&shapes, &Device::Cpu, momentum),
            run::<Momentum>(&shapes, &dev, momentum),
        ),
        (
            "adamw",
            run::<AdamW>(&shapes, &Device::Cpu, adamw),
            run::<AdamW>(&shapes, &dev, adamw),
        ),
        (
            "rmsprop",
            run::<RmsProp>(&shapes, &Device::Cpu, rmsprop),
            run::<RmsProp>(&shapes, &dev, rmsprop),
        ),
    ];
    for (name, want, got) in pairs {
        for (i, (a, b)) in want.iter().zip(&got).enumerate() {
            let differ = a.iter().zip(b).filter(|(x, y)| x != y).count();
            assert_eq!(
                differ, 0,
                "{name}, tensor {i} ({:?}): {differ} values differ",
                shapes[i]
            );
        }
    }
}

/// The models an inference plan covers, for the native backend.
#[cfg(feature = "cuda")]
fn plan_models() -> Vec<ModelConfig> {
    vec![
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new([6, 8, 8], 0),
            Cnn3Config::default(),
        )),
        ModelConfig::Resnet(ResNetConfig {
            channels: 16,
            value_hidden: 32,
            policy: true,
            value_linear: Some(plies::model::LinearInit::FanIn),
            ..ResNetConfig::tiny(InputShape::new([3, 7, 6], 2))
        }),
        ModelConfig::Mlp(plies::model::MlpNetConfig {
            inputs: 4 * 5 * 5 + 3,
            hidden: vec![40, 20],
            activation: plies::model::Activation::Elliott { beta: 5.0 },
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: plies::model::OutputActivation::Tanh,
        }),
        ModelConfig::Linear(LinearConfig::new(InputShape::new([6, 8, 8], 3))),
    ]
}

/// `rows` seeded positions: planes in {-1, 0, 1}, globals in [-1, 1).
#[cfg(feature = "cuda")]
fn encoded(
    planes: [usize; 3],
    globals: usize,
    rows: usize,
    seed: u64,
) -> plies::infer::backend::Encoded {
    use rand::RngExt;
    let mut rng = seeded_rng(seed, 0xe1);
    let n: usize = planes.iter().product();
    plies::infer::backend::Encoded {
        rows,
        shape: planes,
        globals_len: globals,
        planes: (0..rows * n).map(|_| rng.random_range(-1i8..=1)).collect(),
        globals: (0..rows * globals)
            .map(|_| rng.random_range(-1.0f32..1.0))
            .collect(),
    }
}

#[cfg(feature = "cuda")]
fn assert_near(what: &str, got: &[f32], want: &[f32], tol: f32) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: native {g}, twin {w}"
        );
    }
}

/// The native CUDA backend (cuDNN, cuBLAS, graphs) gives its plan's CPU
/// twin's values and policy logits, in every precision, with graphs and
/// without, fused and not, in padded buckets, full ones and chunks, and
/// from several threads at once.
#[cfg(feature = "cuda")]
#[test]
fn the_native_backend_matches_the_plan_twin() {
    use plies::infer::backend::{cuda_plan_backend, CudaPlanOptions};
    use plies::infer::plan::{NetPlan, PlanTwin, Precision};
    let Some(dev) = device() else { return };
    let Device::Cuda(cuda) = &dev else {
        eprintln!("{dev:?} is not CUDA: the native backend is not tested");
        return;
    };
    let ordinal = cuda.cuda_stream().context().ordinal();
    for (m, model) in plan_models().iter().enumerate() {
        let vm = VarMap::new();
        build(
            model,
            VarBuilder::from_varmap(&vm, DType::F32, &Device::Cpu),
        )
        .unwrap();
        seeded_init(&vm, model, &mut seeded_rng(40 + m as u64, 0), &Device::Cpu).unwrap();
        let tensors: std::collections::HashMap<String, Tensor> = vm
            .data()
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_tensor().detach()))
            .collect();
        let (planes, globals) = match model.input() {
            Some(i) => (i.planes, i.globals),
            None => ([4, 5, 5], 3),
        };
        // What each precision's rounding allows, relative to 1 + |value|.
        for (precision, tol) in [
            (Precision::F32, 1e-4),
            (Precision::Tf32, 5e-3),
            (Precision::Bf16, 3e-2),
        ] {
            let plan = NetPlan::build(model, &tensors, planes, globals, precision, 64).unwrap();
            let twin = PlanTwin::new(plan.clone());
            let mut variants = vec![CudaPlanOptions::default()];
            if precision == Precision::F32 {
                variants.push(CudaPlanOptions {
                    graphs: false,
                    ..Default::default()
                });
                variants.push(CudaPlanOptions {
                    fused: false,
                    ..Default::default()
                });
            }
            for options in variants {
                let native = cuda_plan_backend(plan.clone(), ordinal, options)
                    .unwrap_or_else(|e| panic!("{} {precision}: {e}", model.kind()));
                let name = native.name();
                if options.graphs {
                    assert!(!name.contains("eager"), "{name}: graphs were not captured");
                }
                for rows in [1, 3, 64, 100] {
                    let b = encoded(planes, globals, rows, 7 + rows as u64);
                    let got = native.run(&b, true).unwrap();
                    let want = twin.run(&b).unwrap();
                    let what = format!("{} #{m} {name} {options:?} at {rows} rows", model.kind());
                    assert_near(&format!("{what}: values"), &got.values, &want.values, tol);
                    assert_eq!(
                        got.policy.is_some(),
                        want.policy.is_some(),
                        "{what}: policy"
                    );
                    if let (Some(g), Some(w)) = (&got.policy, &want.policy) {
                        assert_eq!(g.len(), rows, "{what}: policy rows");
                        for (r, (g, w)) in g.iter().zip(w).enumerate() {
                            assert_near(&format!("{what}: policy row {r}"), g, w, tol);
                        }
                    }
                }
                // Four threads at once through two lanes: each gets its own
                // batch's values.
                let batches: Vec<_> = (0..4)
                    .map(|t| encoded(planes, globals, 5 + t, 90 + t as u64))
                    .collect();
                let alone: Vec<Vec<f32>> = batches
                    .iter()
                    .map(|b| native.run(b, false).unwrap().values)
                    .collect();
                std::thread::scope(|s| {
                    for (b, want) in batches.iter().zip(&alone) {
                        let (native, name) = (&native, &name);
                        s.spawn(move || {
                            for _ in 0..20 {
                                assert_eq!(
                                    &native.run(b, false).unwrap().values,
                                    want,
                                    "{name}: concurrent runs"
                                );
                            }
                        });
                    }
                });
            }
        }
    }
}

/// Mixed precision's bf16 copies, refreshed on CUDA in one launch, get the
/// bits the CPU's cast gives their masters (rounding to nearest even,
/// halfway cases included).
#[test]
fn the_one_launch_bf16_refresh_rounds_as_the_cpu() {
    use plies::model::trainable_vars;
    use plies::train::mixed_precision::ComputeCopy;
    let Some(dev) = device() else { return };
    let cfg = ModelConfig::Resnet(ResNetConfig::tiny(InputShape::new([6, 8, 8], 0)));
    let vm = VarMap::new();
    build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    let masters = trainable_vars(&vm);
    let copy = ComputeCopy::new(&cfg, &vm, &masters, DType::BF16, &dev).unwrap();
    // Seeded values over six decades, and in the first tensor values
    // exactly halfway between two bf16 values (ties go to the even one).
    let halfway = [
        1.0 + 1.0 / 256.0,
        1.0 + 3.0 / 256.0,
        -2.0 - 1.0 / 128.0,
        0.0,
    ];
    for (i, m) in masters.iter().enumerate() {
        let mut v = host_values(&uniform(700 + i as u64, 1.0, m.dims(), &Device::Cpu));
        for (k, x) in v.iter_mut().enumerate() {
            *x *= 10f32.powi((k % 7) as i32 - 3);
        }
        if i == 0 {
            for (x, h) in v.iter_mut().zip(halfway) {
                *x = h;
            }
        }
        let t = Tensor::from_vec(v, m.dims(), &dev).unwrap();
        m.set(&t).unwrap();
    }
    copy.refresh().unwrap();
    for (m, c) in masters.iter().zip(&copy.vars) {
        let on_cpu = m.as_tensor().to_device(&Device::Cpu).unwrap();
        let want = host_values(&on_cpu.to_dtype(DType::BF16).unwrap());
        let got = host_values(c.as_tensor());
        assert_eq!(got, want, "a tensor of shape {:?}", m.dims());
    }
}
