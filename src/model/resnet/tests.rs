use super::*;
use candle_core::{DType, Device};
use candle_nn::VarMap;

/// The folded eval path against candle's stock ops, with batch-norm
/// statistics away from their initial values and a policy head.
#[test]
fn folded_eval_matches_stock() {
    let mut rt = crate::model::test_tensors::SeededTensors::new(1);
    let dev = Device::Cpu;
    let cfg = ResNetConfig {
        policy: true,
        value_linear: Some(LinearInit::FanIn),
        ..ResNetConfig::tiny(InputShape::new([3, 5, 4], 2))
    };
    let vm = VarMap::new();
    let net = ResNet::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    let model = crate::model::ModelConfig::Resnet(cfg.clone());
    let mut rng = crate::util::seeded_rng(1, 0);
    crate::model::seeded_init(&vm, &model, &mut rng, &dev).unwrap();
    let data = vm.data().lock().unwrap();
    let mut vars: Vec<_> = data.iter().collect();
    vars.sort_by(|a, b| a.0.cmp(b.0));
    for (name, var) in vars {
        let t = var.as_tensor();
        let (lo, hi) = match name.rsplit('.').next() {
            Some("running_var") => (0.5f32, 2.0),
            Some("running_mean") | Some("bias") if name.contains("bn") => (-0.5, 0.5),
            Some("weight") if name.contains("bn") => (0.5, 1.5),
            // Starts at zero: give the input's linear term a part.
            Some("weight") if name.contains("value.linear") => (-0.3, 0.3),
            _ => continue,
        };
        var.set(&rt.rand(lo, hi, t.shape(), &dev).unwrap()).unwrap();
    }
    let x = rt.randn(0f32, 1.0, (5, 3, 5, 4), &dev).unwrap();
    let g = rt.randn(0f32, 1.0, (5, 2), &dev).unwrap();
    let a = ValueNet::forward(&net, &x, Some(&g), false).unwrap();
    let b = net.forward_stock(&x, Some(&g), false).unwrap();
    let close = |a: &Tensor, b: &Tensor| {
        let d = (a - b).unwrap().abs().unwrap().max_all().unwrap();
        let d = d.to_scalar::<f32>().unwrap();
        assert!(d < 1e-4, "max difference {d}");
    };
    close(&a.value, &b.value);
    close(a.policy.as_ref().unwrap(), b.policy.as_ref().unwrap());
}

/// `value_linear` adds exactly the input's dot product with its
/// weights (planes, then globals) to the value before the activation,
/// starting at zero.
#[test]
fn value_linear_adds_the_inputs_dot_product() {
    let dev = Device::Cpu;
    let mut rt = crate::model::test_tensors::SeededTensors::new(3);
    let cfg = ResNetConfig {
        value_linear: Some(LinearInit::Zeros),
        output: OutputActivation::Identity,
        ..ResNetConfig::tiny(InputShape::new([2, 3, 3], 1))
    };
    let vm = VarMap::new();
    let net = ResNet::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    let model = crate::model::ModelConfig::Resnet(cfg.clone());
    crate::model::seeded_init(&vm, &model, &mut crate::util::seeded_rng(3, 0), &dev).unwrap();
    let x = rt.randn(0f32, 1.0, (4, 2, 3, 3), &dev).unwrap();
    let g = rt.randn(0f32, 1.0, (4, 1), &dev).unwrap();
    let value = |net: &ResNet| {
        let v = ValueNet::forward(net, &x, Some(&g), false).unwrap().value;
        v.to_vec1::<f32>().unwrap()
    };
    let start = value(&net);
    let w = rt.rand(-1f32, 1.0, (1, 19), &dev).unwrap();
    vm.data().lock().unwrap()["value.linear.weight"]
        .set(&w)
        .unwrap();
    let after = value(&net);
    let raw = Tensor::cat(&[&x.flatten_from(1).unwrap(), &g], 1).unwrap();
    let dot = raw.matmul(&w.t().unwrap()).unwrap().squeeze(1).unwrap();
    let dot = dot.to_vec1::<f32>().unwrap();
    for i in 0..4 {
        assert!(
            (after[i] - start[i] - dot[i]).abs() < 1e-4,
            "{i}: {after:?} {start:?} {dot:?}"
        );
    }
    assert!(dot.iter().any(|d| d.abs() > 0.1), "{dot:?}");
    assert_eq!(model.num_params(), {
        let plain = crate::model::ModelConfig::Resnet(ResNetConfig {
            value_linear: None,
            ..cfg.clone()
        });
        plain.num_params() + 19
    });
}

/// A material start lays its values out per square of each plane, the
/// globals' weights at 0; a start that does not fit the planes is an
/// error naming the field.
#[test]
fn value_linear_starts_from_material() {
    let dev = Device::Cpu;
    let material = |values: Vec<f64>| ResNetConfig {
        value_linear: Some(LinearInit::Material {
            values,
            scale: 0.5,
            row_bonus: Vec::new(),
        }),
        ..ResNetConfig::tiny(InputShape::new([2, 3, 3], 1))
    };
    let cfg = material(vec![2.0, 3.0]);
    let vm = VarMap::new();
    ResNet::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    let model = crate::model::ModelConfig::Resnet(cfg);
    crate::model::seeded_init(&vm, &model, &mut crate::util::seeded_rng(1, 0), &dev).unwrap();
    let w = vm.data().lock().unwrap()["value.linear.weight"]
        .as_tensor()
        .clone();
    let mut expected = vec![1.0f32; 9];
    expected.extend([1.5f32; 9]);
    expected.push(0.0);
    assert_eq!(w.flatten_all().unwrap().to_vec1::<f32>().unwrap(), expected);
    let e = material(vec![1.0]).validate().unwrap_err().to_string();
    assert!(
        e.contains("value_linear.values") && e.contains("(2)"),
        "{e}"
    );
}

/// A frozen net evaluates exactly as an unfrozen one; a training-mode
/// pass (which moves the running statistics) drops the frozen weights;
/// weights set afterwards are seen once frozen again.
#[test]
fn freeze_reuses_folded_weights_until_training() {
    let mut rt = crate::model::test_tensors::SeededTensors::new(2);
    let dev = Device::Cpu;
    let cfg = ResNetConfig::tiny(InputShape::new([3, 6, 5], 0));
    let vm = VarMap::new();
    let net = ResNet::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    let model = crate::model::ModelConfig::Resnet(cfg.clone());
    crate::model::seeded_init(&vm, &model, &mut crate::util::seeded_rng(2, 0), &dev).unwrap();
    let x = rt.randn(0f32, 1.0, (4, 3, 6, 5), &dev).unwrap();
    let eval = || {
        let v = ValueNet::forward(&net, &x, None, false).unwrap().value;
        v.to_vec1::<f32>().unwrap()
    };
    let before = eval();
    net.freeze().unwrap();
    assert!(net.frozen.read().unwrap().is_some());
    assert_eq!(eval(), before, "frozen differs from unfrozen");
    // A training pass moves the running statistics: the frozen weights
    // are dropped, and evaluation follows the new statistics.
    ValueNet::forward(&net, &x, None, true).unwrap();
    assert!(net.frozen.read().unwrap().is_none());
    let trained = eval();
    assert_ne!(trained, before);
    net.freeze().unwrap();
    assert_eq!(eval(), trained);
    // Weights set while frozen are seen after freezing again.
    let w = vm.data().lock().unwrap()["stem.conv.weight"].clone();
    w.set(&(w.as_tensor() * 2.0).unwrap()).unwrap();
    assert_eq!(eval(), trained, "frozen weights are reused");
    net.freeze().unwrap();
    assert_ne!(eval(), trained);
}

/// Uniform values in [lo, hi) from a seeded generator, so a failure
/// can be replayed.
fn uniform(rng: &mut crate::util::SeededRng, shape: &[usize], lo: f32, hi: f32) -> Tensor {
    use rand::RngExt;
    let n = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|_| lo + (hi - lo) * rng.random::<f32>())
        .collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

/// Runs two training steps of the bordered kernels and of candle's stock
/// ops (in f32 and in f64) from the same seeded weights and data. Returns,
/// for every output, gradient and running statistic, the largest
/// difference from the f64 reference of each f32 path, relative to the
/// reference's largest magnitude (at least 1).
fn train_path_errors(seed: u64) -> Vec<(String, f64, f64)> {
    let dev = Device::Cpu;
    let mut rng = crate::util::seeded_rng(seed, 0);
    let cfg = ResNetConfig {
        policy: true,
        value_linear: Some(LinearInit::FanIn),
        ..ResNetConfig::tiny(InputShape::new([3, 5, 4], 2))
    };
    let build = |dtype| {
        let vm = VarMap::new();
        let net = ResNet::new(&cfg, VarBuilder::from_varmap(&vm, dtype, &dev)).unwrap();
        (vm, net)
    };
    let (va, a) = build(DType::F32);
    let (vb, b) = build(DType::F32);
    let (vr, r) = build(DType::F64);
    let mut names: Vec<String> = va.data().lock().unwrap().keys().cloned().collect();
    names.sort();
    for name in &names {
        let shape = va.data().lock().unwrap()[name].dims().to_vec();
        let fan: usize = shape.iter().skip(1).product::<usize>().max(1);
        let bound = 1.0 / (fan as f32).sqrt();
        let t = if name.contains("running_var") {
            uniform(&mut rng, &shape, 1.0, 1.0)
        } else if name.contains("running_mean") {
            uniform(&mut rng, &shape, 0.0, 0.0)
        } else if name.contains("bn") && name.ends_with("weight") {
            uniform(&mut rng, &shape, 0.5, 1.5)
        } else if name.contains("bn") && name.ends_with(".bias") {
            uniform(&mut rng, &shape, -0.5, 0.5)
        } else {
            uniform(&mut rng, &shape, -bound, bound)
        };
        va.data().lock().unwrap()[name].set(&t).unwrap();
        vb.data().lock().unwrap()[name].set(&t).unwrap();
        let t64 = t.to_dtype(DType::F64).unwrap();
        vr.data().lock().unwrap()[name].set(&t64).unwrap();
    }
    let var = |vm: &VarMap, n: &str| vm.data().lock().unwrap()[n].clone();
    let mut errors = Vec::new();
    let mut record = |what: String, x: &Tensor, y: &Tensor, reference: &Tensor| {
        let reference = reference.to_dtype(DType::F64).unwrap();
        let scale = reference.abs().unwrap().max_all().unwrap();
        let scale = scale.to_scalar::<f64>().unwrap().max(1.0);
        let err = |t: &Tensor| {
            let d = (t.to_dtype(DType::F64).unwrap() - &reference).unwrap();
            d.abs()
                .unwrap()
                .max_all()
                .unwrap()
                .to_scalar::<f64>()
                .unwrap()
                / scale
        };
        errors.push((what, err(x), err(y)));
    };
    for step in 0..2 {
        let x = uniform(&mut rng, &[7, 3, 5, 4], -2.0, 2.0);
        let g = uniform(&mut rng, &[7, 2], -2.0, 2.0);
        let up = uniform(&mut rng, &[7, 20], -1.0, 1.0);
        let (x64, g64, up64) = (
            x.to_dtype(DType::F64).unwrap(),
            g.to_dtype(DType::F64).unwrap(),
            up.to_dtype(DType::F64).unwrap(),
        );
        let oa = ValueNet::forward(&a, &x, Some(&g), true).unwrap();
        let ob = b.forward_stock(&x, Some(&g), true).unwrap();
        let or = r.forward_stock(&x64, Some(&g64), true).unwrap();
        let (pa, pb, pr) = (oa.policy.unwrap(), ob.policy.unwrap(), or.policy.unwrap());
        record(
            format!("step {step} value"),
            &oa.value,
            &ob.value,
            &or.value,
        );
        record(format!("step {step} policy"), &pa, &pb, &pr);
        let loss = |v: &Tensor, p: &Tensor, up: &Tensor| {
            (v.sum_all().unwrap() + (p * up).unwrap().sum_all().unwrap()).unwrap()
        };
        let ga = loss(&oa.value, &pa, &up).backward().unwrap();
        let gb = loss(&ob.value, &pb, &up).backward().unwrap();
        let gr = loss(&or.value, &pr, &up64).backward().unwrap();
        for name in &names {
            let what = format!("step {step} {name}");
            let (ta, tb, tr) = (var(&va, name), var(&vb, name), var(&vr, name));
            if name.contains("running") {
                record(what, ta.as_tensor(), tb.as_tensor(), tr.as_tensor());
                continue;
            }
            let grad = |g: &candle_core::backprop::GradStore, t: &candle_core::Var| {
                g.get(t).expect("grad").clone()
            };
            record(what, &grad(&ga, &ta), &grad(&gb, &tb), &grad(&gr, &tr));
        }
    }
    errors
}

/// Training mode on the bordered kernels against candle's stock ops:
/// outputs, every parameter's gradient and the running statistics after
/// two steps, measured against an f64 run of the stock ops. The kernels
/// must be as close to it as stock f32 is (batch norm's backward through
/// a small variance amplifies rounding in both), and close in absolute
/// terms.
#[test]
fn train_path_matches_stock() {
    for seed in 0..8 {
        for (what, kernel, stock) in train_path_errors(seed) {
            assert!(
                kernel <= 1e-4_f64.max(4.0 * stock),
                "seed {seed} {what}: kernel error {kernel:e}, stock f32 error {stock:e}"
            );
        }
    }
}

/// Training-mode outputs, gradients and running statistics are the same
/// bits on 1 and 3 threads (blocked sums in a fixed order).
#[test]
fn train_path_does_not_depend_on_threads() {
    let mut rt = crate::model::test_tensors::SeededTensors::new(2);
    let dev = Device::Cpu;
    let cfg = ResNetConfig::tiny(InputShape::new([3, 8, 8], 0));
    let x = rt.randn(0f32, 1.0, (67, 3, 8, 8), &dev).unwrap();
    let init = VarMap::new();
    ResNet::new(&cfg, VarBuilder::from_varmap(&init, DType::F32, &dev)).unwrap();
    let model = crate::model::ModelConfig::Resnet(cfg.clone());
    crate::model::seeded_init(&init, &model, &mut crate::util::seeded_rng(2, 0), &dev).unwrap();
    let run = |threads: usize| -> Vec<(String, Vec<f32>)> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let vm = VarMap::new();
            let net = ResNet::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
            let data = vm.data().lock().unwrap();
            for (name, var) in data.iter() {
                let t = init.data().lock().unwrap()[name]
                    .as_tensor()
                    .copy()
                    .unwrap();
                var.set(&t).unwrap();
            }
            let out = ValueNet::forward(&net, &x, None, true).unwrap();
            let grads = out
                .value
                .sqr()
                .unwrap()
                .sum_all()
                .unwrap()
                .backward()
                .unwrap();
            let mut all = vec![("value".to_string(), out.value.to_vec1::<f32>().unwrap())];
            for (name, var) in data.iter() {
                let t = match grads.get(var) {
                    Some(g) => g.clone(),
                    None => var.as_tensor().clone(),
                };
                all.push((
                    name.clone(),
                    t.flatten_all().unwrap().to_vec1::<f32>().unwrap(),
                ));
            }
            all.sort_by(|a, b| a.0.cmp(&b.0));
            all
        })
    };
    let (one, three) = (run(1), run(3));
    for ((name, a), (_, b)) in one.iter().zip(&three) {
        assert!(a == b, "{name} differs between 1 and 3 threads");
    }
}

/// The path a GPU trains by (the convolution op, the fused batch norm +
/// ReLU, running statistics moved on the device) gives candle's stock
/// ops' outputs, gradients and running statistics, run through the ops'
/// CPU sides.
#[test]
fn the_device_ops_path_trains_as_candles_ops() {
    let dev = Device::Cpu;
    let cfg = ResNetConfig {
        policy: true,
        ..ResNetConfig::tiny(InputShape::new([3, 5, 4], 2))
    };
    let model = crate::model::ModelConfig::Resnet(cfg.clone());
    let mut rt = crate::model::test_tensors::SeededTensors::new(8);
    let x = rt.randn(0f32, 1.0, (6, 3, 5, 4), &dev).unwrap();
    let g = rt.randn(0f32, 1.0, (6, 2), &dev).unwrap();
    // One training step's outputs, gradients and running statistics, by
    // variable name.
    let step = |device_ops: bool| {
        let vm = VarMap::new();
        let net = ResNet::new(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
        crate::model::seeded_init(&vm, &model, &mut crate::util::seeded_rng(8, 0), &dev).unwrap();
        let run = || net.forward_stock(&x, Some(&g), true).unwrap();
        let out = if device_ops {
            crate::model::device_kernels::with_device_ops_on_the_cpu(run)
        } else {
            run()
        };
        let policy = out.policy.clone().unwrap();
        let loss = (out.value.sqr().unwrap().sum_all().unwrap()
            + (policy.sqr().unwrap().mean_all().unwrap()))
        .unwrap();
        let grads = loss.backward().unwrap();
        let data = vm.data().lock().unwrap();
        let mut named: Vec<(String, Tensor)> = data
            .iter()
            .map(|(n, v)| {
                let t = if n.contains("running") {
                    v.as_tensor().clone()
                } else {
                    grads.get(v.as_tensor()).unwrap().clone()
                };
                (n.clone(), t)
            })
            .collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        (out.value, policy, named)
    };
    let (v_ref, p_ref, ref_named) = step(false);
    let (v_dev, p_dev, dev_named) = step(true);
    let rel = |a: &Tensor, b: &Tensor| {
        let d = crate::model::test_tensors::max_diff(a, b);
        d / (1.0 + crate::model::test_tensors::max_abs(b))
    };
    assert!(
        rel(&v_dev, &v_ref) < 1e-5,
        "values: {}",
        rel(&v_dev, &v_ref)
    );
    assert!(
        rel(&p_dev, &p_ref) < 1e-5,
        "policy: {}",
        rel(&p_dev, &p_ref)
    );
    assert_eq!(ref_named.len(), dev_named.len());
    let mut running = 0;
    for ((name, a), (_, b)) in dev_named.iter().zip(&ref_named) {
        running += usize::from(name.contains("running"));
        assert!(
            rel(a, b) < 1e-4,
            "{name}: differs by {} (relative)",
            rel(a, b)
        );
    }
    // Every batch norm's two running statistics moved, and were compared.
    assert_eq!(running, 2 * (1 + 2 * cfg.blocks + 2));
    let moved = ref_named
        .iter()
        .find(|(n, _)| n == "stem.bn.running_mean")
        .map(|(_, t)| crate::model::test_tensors::max_abs(t))
        .unwrap();
    assert!(moved > 0.0, "the stem's running mean did not move");
}
