//! Tests of every model behind the one interface.

use super::*;
use crate::model::test_tensors::max_diff;
use crate::util::seeded_rng;
use candle_core::{DType, Device, Tensor};
use candle_nn::{Optimizer, VarBuilder, VarMap};

fn dev() -> Device {
    Device::Cpu
}

/// One config of each kind, small enough for unit tests.
fn zoo() -> Vec<ModelConfig> {
    vec![
        ModelConfig::Linear(LinearConfig::new(InputShape::new([3, 4, 5], 2))),
        ModelConfig::Mlp(MlpNetConfig {
            inputs: 3 * 4 * 5 + 2,
            hidden: vec![16, 8],
            activation: Activation::Elliott { beta: 2.0 },
            init: WeightInit::FanIn,
            dropout: 0.0,
            output: OutputActivation::Tanh,
        }),
        ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new([3, 4, 5], 0),
            Cnn3Config {
                filters: 6,
                kernel: [2, 3],
                hidden: 10,
                ..Default::default()
            },
        )),
        ModelConfig::Resnet(ResNetConfig {
            policy: true,
            channels: 8,
            value_hidden: 12,
            ..ResNetConfig::tiny(InputShape::new([3, 4, 5], 2))
        }),
        ModelConfig::Mdrnn(MdrnnConfig {
            init_std: 0.5,
            ..MdrnnConfig {
                input: InputShape::new([3, 4, 5], 0),
                hidden: 6,
                output: OutputActivation::Sigmoid,
                init_std: 1.0,
            }
        }),
        ModelConfig::Resnet(ResNetConfig {
            policy: true,
            policy_planes: 3,
            channels: 4,
            value_hidden: 6,
            ..ResNetConfig::tiny(InputShape::new([3, 4, 5], 2))
        }),
        ModelConfig::Linear(LinearConfig {
            board: false,
            ..LinearConfig::new(InputShape::new([3, 4, 5], 3))
        }),
    ]
}

fn built(cfg: &ModelConfig, seed: u64) -> (VarMap, Box<dyn ValueNet>) {
    let vm = VarMap::new();
    let net = build(cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev())).unwrap();
    seeded_init(&vm, cfg, &mut seeded_rng(seed, 0), &dev()).unwrap();
    (vm, net)
}

fn inputs(cfg: &ModelConfig, b: usize, seed: u64) -> (Tensor, Option<Tensor>) {
    let input = cfg.input().unwrap_or(InputShape::new([3, 4, 5], 2));
    let [c, h, w] = input.planes;
    let mut rng = seeded_rng(seed, 9);
    let planes: Vec<f32> = (0..b * c * h * w)
        .map(|_| [-1.0, 0.0, 0.0, 1.0][rand::RngExt::random_range(&mut rng, 0..4usize)])
        .collect();
    let planes = Tensor::from_vec(planes, (b, c, h, w), &dev()).unwrap();
    let g = (input.globals > 0).then(|| {
        Tensor::from_vec(
            (0..b * input.globals)
                .map(|i| (i as f32 * 0.37).sin())
                .collect::<Vec<f32>>(),
            (b, input.globals),
            &dev(),
        )
        .unwrap()
    });
    (planes, g)
}

#[test]
fn shapes_and_tensor_names_of_every_model() {
    for cfg in zoo() {
        let (vm, net) = built(&cfg, 1);
        let (x, g) = inputs(&cfg, 3, 1);
        let out = net.forward(&x, g.as_ref(), false).unwrap();
        assert_eq!(out.value.dims(), &[3], "{}", cfg.kind());
        assert_eq!(
            out.policy.as_ref().map(|p| p.dims().to_vec()),
            cfg.policy_len().map(|n| vec![3, n]),
            "{}",
            cfg.kind()
        );
        let mut found: Vec<(String, Vec<usize>)> = vm
            .data()
            .lock()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.dims().to_vec()))
            .collect();
        found.sort();
        assert_eq!(found, cfg.expected_tensors(), "{}", cfg.kind());
        let values: Vec<f32> = out.value.to_vec1().unwrap();
        assert!(values.iter().all(|v| v.is_finite()), "{}", cfg.kind());
        // Wrong planes are an error, not a panic.
        let bad = Tensor::zeros((3, 2, 4, 5), DType::F32, &dev()).unwrap();
        assert!(
            net.forward(&bad, g.as_ref(), false).is_err(),
            "{}",
            cfg.kind()
        );
    }
}

#[test]
fn seeded_init_is_reproducible() {
    for cfg in zoo() {
        let (x, g) = inputs(&cfg, 2, 3);
        let a = built(&cfg, 5).1.value(&x, g.as_ref()).unwrap();
        let b = built(&cfg, 5).1.value(&x, g.as_ref()).unwrap();
        let c = built(&cfg, 6).1.value(&x, g.as_ref()).unwrap();
        assert_eq!(max_diff(&a, &b), 0.0, "{}", cfg.kind());
        assert!(max_diff(&a, &c) > 0.0, "{}", cfg.kind());
    }
}

#[test]
fn optimizer_steps_lower_the_loss_of_every_model() {
    for cfg in zoo() {
        let (vm, net) = built(&cfg, 2);
        let (x, g) = inputs(&cfg, 8, 2);
        let t: Vec<f32> = (0..8)
            .map(|i| cfg.output().target([1.0, 0.0, 0.5, 1.0][i % 4]))
            .collect();
        let t = Tensor::from_vec(t, 8, &dev()).unwrap();
        let loss = |train: bool| {
            let out = net.forward(&x, g.as_ref(), train).unwrap();
            let mut l = (out.value - &t).unwrap().sqr().unwrap().mean_all().unwrap();
            if let Some(p) = out.policy {
                // Pull the first point's logit up: the policy head learns too.
                let p0 = p.narrow(1, 0, 1).unwrap().mean_all().unwrap();
                l = (l - (p0 * 0.01).unwrap()).unwrap();
            }
            l
        };
        let before = loss(false).to_scalar::<f32>().unwrap();
        let mut opt = candle_nn::AdamW::new(
            trainable_vars(&vm),
            candle_nn::ParamsAdamW {
                lr: 0.01,
                weight_decay: 0.0,
                ..Default::default()
            },
        )
        .unwrap();
        for _ in 0..30 {
            opt.backward_step(&loss(true)).unwrap();
        }
        let after = loss(false).to_scalar::<f32>().unwrap();
        assert!(after < before, "{}: {before} -> {after}", cfg.kind());
    }
}

#[test]
fn train_and_eval_differ_only_with_dropout_or_batch_norm() {
    for cfg in zoo() {
        let (vm, net) = built(&cfg, 4);
        let (x, g) = inputs(&cfg, 6, 4);
        let stats = || -> Vec<f32> {
            let data = vm.data().lock().unwrap();
            let mut names: Vec<&String> = data.keys().filter(|n| is_running_stat(n)).collect();
            names.sort();
            names
                .iter()
                .flat_map(|n| data[*n].as_tensor().to_vec1::<f32>().unwrap())
                .collect()
        };
        let s0 = stats();
        let eval = net.value(&x, g.as_ref()).unwrap();
        assert_eq!(
            stats(),
            s0,
            "{}: eval changed the running stats",
            cfg.kind()
        );
        let train = net.forward(&x, g.as_ref(), true).unwrap().value;
        let d = max_diff(&eval, &train);
        if matches!(cfg, ModelConfig::Resnet(_)) {
            assert!(d > 1e-4, "resnet: batch norm ignored train ({d})");
            assert_ne!(stats(), s0, "resnet: running stats not updated");
        } else {
            assert_eq!(d, 0.0, "{}", cfg.kind());
        }
    }
    let mut mlp = MlpNetConfig::from(MlpConfig {
        inputs: 20,
        hidden: vec![32],
        activation: Activation::Relu,
        init: WeightInit::FanIn,
    });
    mlp.dropout = 0.5;
    let cfg = ModelConfig::Mlp(mlp);
    let (_, net) = built(&cfg, 1);
    let x = Tensor::ones((4, 20), DType::F32, &dev()).unwrap();
    let eval = net.value(&x, None).unwrap();
    assert_eq!(max_diff(&eval, &net.value(&x, None).unwrap()), 0.0);
    let train = net.forward(&x, None, true).unwrap().value;
    assert!(max_diff(&eval, &train) > 0.0, "dropout ignored train");
}

#[test]
fn configs_round_trip_through_json() {
    for cfg in zoo() {
        let json = serde_json::to_string(&cfg).unwrap();
        assert!(
            json.contains(&format!("\"kind\":\"{}\"", cfg.kind())),
            "{json}"
        );
        let back: ModelConfig = serde_json::from_str(&json).unwrap();
        assert_eq!(back, cfg, "{json}");
    }
    // A checkpoint written before dropout and output existed.
    let old = r#"{"kind":"mlp","inputs":9,"hidden":[80],
        "activation":{"kind":"elliott","beta":5.0},"init":{"kind":"uniform","a":0.2}}"#;
    let ModelConfig::Mlp(m) = serde_json::from_str(old).unwrap() else {
        panic!("not an mlp")
    };
    assert_eq!(m.dropout, 0.0);
    assert_eq!(m.output, OutputActivation::Identity);
    // Defaults and refusals.
    let r: ModelConfig = serde_json::from_str(
        r#"{"kind":"resnet","input":{"planes":[2,9,9]},"blocks":1,"channels":4,"value_hidden":3}"#,
    )
    .unwrap();
    assert_eq!(r.output(), OutputActivation::Sigmoid);
    assert!(!r.has_policy());
    let typo =
        r#"{"kind":"resnet","input":{"planes":[2,9,9]},"blocks":1,"channel":4,"value_hidden":3}"#;
    assert!(serde_json::from_str::<ModelConfig>(typo).is_err());
    let c: ModelConfig = serde_json::from_str(
        r#"{"kind":"cnn3","input":{"planes":[6,8,8],"globals":0},"kernel":[1,8]}"#,
    )
    .unwrap();
    let ModelConfig::Cnn3(c) = c else {
        panic!("not a cnn3")
    };
    assert_eq!(c.net.filters, 48);
    assert_eq!(c.net.kernel, [1, 8]);
}

#[test]
fn input_mismatch_names_the_field() {
    let err = |cfg: &ModelConfig, planes: [usize; 3], g: usize| {
        cfg.check_input(planes, g).unwrap_err().to_string()
    };
    let zoo = zoo();
    for cfg in &zoo {
        assert!(cfg
            .check_input([3, 4, 5], cfg.input().map_or(2, |i| i.globals))
            .is_ok());
    }
    let e = err(&zoo[1], [3, 4, 4], 2);
    assert!(
        e.contains("`inputs`") && e.contains("62") && e.contains("50"),
        "{e}"
    );
    let e = err(&zoo[3], [3, 5, 4], 2);
    assert!(
        e.contains("`input.planes`") && e.contains("[3, 4, 5]"),
        "{e}"
    );
    let e = err(&zoo[3], [3, 4, 5], 0);
    assert!(e.contains("`input.globals`"), "{e}");
    let e = err(&zoo[0], [4, 4, 5], 2);
    assert!(e.contains("linear") && e.contains("`input.planes`"), "{e}");
    // The mdrnn takes any board, but not another plane count.
    assert!(zoo[4].check_input([3, 19, 19], 0).is_ok());
    let e = err(&zoo[4], [2, 4, 5], 0);
    assert!(e.contains("`input.planes[0]`"), "{e}");
    // Bad configs are errors naming the field.
    let bad = ModelConfig::Resnet(ResNetConfig {
        channels: 0,
        ..ResNetConfig::tiny(InputShape::new([2, 5, 5], 0))
    });
    let vm = VarMap::new();
    let e = build(&bad, VarBuilder::from_varmap(&vm, DType::F32, &dev()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("`channels`"), "{e}");
    let bad = ModelConfig::Mdrnn(MdrnnConfig {
        input: InputShape::new([2, 5, 5], 3),
        ..MdrnnConfig::stones(5, 4)
    });
    assert!(bad
        .validate()
        .unwrap_err()
        .to_string()
        .contains("`input.globals`"));
}

#[test]
fn mdrnn_has_the_papers_weight_count() {
    for k in [1, 4, 10, 16] {
        let cfg = ModelConfig::Mdrnn(MdrnnConfig::stones(9, k));
        assert_eq!(cfg.num_params(), k * k + 4 * k);
        let (vm, _) = built(&cfg, 1);
        let n: usize = vm.all_vars().iter().map(|v| v.elem_count()).sum();
        assert_eq!(n, k * k + 4 * k);
    }
    assert_eq!(
        ModelConfig::Mdrnn(MdrnnConfig::stones(5, 10)).num_params(),
        140
    );
}

/// The MDRNN computed point by point, straight from the paper's formula.
fn mdrnn_reference(vm: &VarMap, planes: &[f32], c: usize, h: usize, w: usize) -> Vec<f32> {
    let data = vm.data().lock().unwrap();
    let get = |n: &str| -> Vec<f32> {
        data[n]
            .as_tensor()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap()
    };
    let (wi, wh, wb, wo) = (get("wi"), get("wh"), get("wb"), get("wo"));
    let k = wb.len();
    let mut out = vec![0f32; h * w];
    for (fh, fw) in [(false, false), (false, true), (true, false), (true, true)] {
        let mut u = vec![vec![0f32; k]; h * w];
        for vi in 0..h {
            for vj in 0..w {
                let (i, j) = (
                    if fh { h - 1 - vi } else { vi },
                    if fw { w - 1 - vj } else { vj },
                );
                let up = if vi > 0 {
                    let pi = if fh { h - vi } else { vi - 1 };
                    u[pi * w + j].clone()
                } else {
                    wb.clone()
                };
                let left = if vj > 0 {
                    let pj = if fw { w - vj } else { vj - 1 };
                    u[i * w + pj].clone()
                } else {
                    wb.clone()
                };
                let mut next = vec![0f32; k];
                for (a, n) in next.iter_mut().enumerate() {
                    let mut s = 0.0;
                    for ch in 0..c {
                        s += wi[a * c + ch] * planes[ch * h * w + i * w + j];
                    }
                    for b in 0..k {
                        s += wh[a * k + b] * (up[b] + left[b]);
                    }
                    *n = s.tanh();
                }
                out[i * w + j] += next.iter().zip(&wo).map(|(x, y)| x * y).sum::<f32>();
                u[i * w + j] = next;
            }
        }
    }
    out
}

#[test]
fn mdrnn_matches_the_formula_on_any_board() {
    let cfg = ModelConfig::Mdrnn(MdrnnConfig {
        init_std: 0.6,
        ..MdrnnConfig::stones(5, 5)
    });
    let (vm, net) = built(&cfg, 7);
    for (h, w) in [(5, 5), (1, 1), (1, 4), (3, 7), (8, 2), (19, 19)] {
        let mut rng = seeded_rng(h as u64, w as u64);
        let b = 2;
        let planes: Vec<f32> = (0..b * 2 * h * w)
            .map(|_| (rand::RngExt::random_range(&mut rng, 0..3u8) == 0) as u8 as f32)
            .collect();
        let x = Tensor::from_vec(planes.clone(), (b, 2, h, w), &dev()).unwrap();
        let out = net.forward(&x, None, false).unwrap();
        let policy: Vec<Vec<f32>> = out.policy.unwrap().to_vec2().unwrap();
        let value: Vec<f32> = out.value.to_vec1().unwrap();
        for i in 0..b {
            let r = mdrnn_reference(&vm, &planes[i * 2 * h * w..(i + 1) * 2 * h * w], 2, h, w);
            for (a, e) in policy[i].iter().zip(&r) {
                assert!((a - e).abs() < 1e-4, "{h}x{w}: {a} vs {e}");
            }
            let mean = r.iter().sum::<f32>() / r.len() as f32;
            let v = 1.0 / (1.0 + (-mean).exp());
            assert!(
                (value[i] - v).abs() < 1e-5,
                "{h}x{w}: value {} vs {v}",
                value[i]
            );
        }
    }
}

#[test]
fn mdrnn_weights_move_between_board_sizes() {
    let small = ModelConfig::Mdrnn(MdrnnConfig::stones(5, 10));
    let big = ModelConfig::Mdrnn(MdrnnConfig::stones(19, 10));
    assert_eq!(small.expected_tensors(), big.expected_tensors());
    let tensors = seeded_tensors(&small, &mut seeded_rng(1, 0), &dev()).unwrap();
    let net = build(&big, VarBuilder::from_tensors(tensors, DType::F32, &dev())).unwrap();
    for n in [5, 9, 19] {
        let x = Tensor::zeros((1, 2, n, n), DType::F32, &dev()).unwrap();
        let out = net.forward(&x, None, false).unwrap();
        assert_eq!(out.policy.unwrap().dims(), &[1, n * n]);
    }
}

#[test]
fn linear_starts_from_material_values() {
    let cfg = ModelConfig::Linear(LinearConfig::arimaa_material());
    assert_eq!(cfg.num_params(), 385);
    assert!(cfg.check_input([6, 8, 8], 0).is_ok());
    let (_, net) = built(&cfg, 1);
    // One rabbit each, plus a camel for the side to move.
    let mut planes = vec![0f32; 384];
    planes[8] = 1.0;
    planes[50] = -1.0;
    planes[4 * 64 + 20] = 1.0;
    let x = Tensor::from_vec(planes, (1, 6, 8, 8), &dev()).unwrap();
    let v = net.value(&x, None).unwrap().to_vec1::<f32>().unwrap()[0];
    let expected = 1.0 / (1.0 + (-1.0f32).exp());
    assert!((v - expected).abs() < 1e-6, "{v} vs {expected}");
}

#[test]
fn resnet_presets() {
    let input = InputShape::new([6, 8, 8], 0);
    let (t, s, l) = (
        ResNetConfig::tiny(input),
        ResNetConfig::small(input),
        ResNetConfig::large(input),
    );
    assert_eq!((t.blocks, t.channels), (2, 32));
    assert_eq!((s.blocks, s.channels), (6, 64));
    assert_eq!((l.blocks, l.channels), (20, 256));
    let n = ModelConfig::Resnet(l).num_params();
    assert!(n > 23_000_000 && n < 24_000_000, "{n}");
    // Any board size, with a policy row per point.
    let cfg = ModelConfig::Resnet(ResNetConfig {
        policy: true,
        channels: 4,
        ..ResNetConfig::tiny(InputShape::new([2, 3, 7], 0))
    });
    let (_, net) = built(&cfg, 1);
    let x = Tensor::zeros((2, 2, 3, 7), DType::F32, &dev()).unwrap();
    assert_eq!(
        net.forward(&x, None, false).unwrap().policy.unwrap().dims(),
        &[2, 21]
    );
}

/// The path other devices take (candle's own ops, forced on the CPU) gives
/// what the fused CPU kernels give: outputs in evaluation and training
/// mode, and every weight's gradient.
#[test]
fn candle_ops_path_matches_the_fused_kernels_for_every_model() {
    let run = |cfg: &ModelConfig| {
        let (vm, net) = built(cfg, 6);
        let (x, g) = inputs(cfg, 5, 6);
        let eval = net.forward(&x, g.as_ref(), false).unwrap();
        let train = net.forward(&x, g.as_ref(), true).unwrap();
        let grads = train
            .value
            .sqr()
            .unwrap()
            .sum_all()
            .unwrap()
            .backward()
            .unwrap();
        let data = vm.data().lock().unwrap();
        let mut names: Vec<&String> = data.keys().collect();
        names.sort();
        let grads: Vec<(String, Option<Tensor>)> = names
            .iter()
            .map(|n| ((*n).clone(), grads.get(data[*n].as_tensor()).cloned()))
            .collect();
        (eval, train, grads)
    };
    for cfg in zoo() {
        let kind = cfg.kind();
        let (eval, train, grads) = run(&cfg);
        let (eval_c, train_c, grads_c) = kernels::with_candle_ops(|| run(&cfg));
        let close = |a: &Tensor, b: &Tensor, what: &str| {
            let scale = 1.0 + crate::model::test_tensors::max_abs(a);
            let d = max_diff(a, b);
            assert!(d <= 1e-4 * scale, "{kind} {what}: differs by {d}");
        };
        close(&eval.value, &eval_c.value, "eval value");
        close(&train.value, &train_c.value, "train value");
        match (&eval.policy, &eval_c.policy) {
            (Some(a), Some(b)) => close(a, b, "eval policy"),
            (None, None) => {}
            _ => panic!("{kind}: a policy on one path only"),
        }
        assert_eq!(grads.len(), grads_c.len());
        let mut compared = 0;
        for ((name, a), (_, b)) in grads.iter().zip(&grads_c) {
            match (a, b) {
                (Some(a), Some(b)) => {
                    close(a, b, &format!("gradient of {name}"));
                    compared += 1;
                }
                (None, None) => {}
                _ => panic!("{kind}: {name} has a gradient on one path only"),
            }
        }
        assert!(compared > 0, "{kind}: no gradient compared");
    }
}

/// Every model config shipped under `data/*/models/` reads and validates,
/// so a command that names one fails on nothing but the user's own input.
#[test]
fn every_shipped_model_config_reads_and_validates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let mut seen = 0;
    for game in std::fs::read_dir(&root).unwrap() {
        let models = game.unwrap().path().join("models");
        let Ok(files) = std::fs::read_dir(&models) else {
            continue;
        };
        for file in files {
            let path = file.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let mut v: serde_json::Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // A file without `input` takes the dataset's encoder at training
            // time (`train::resolve_model`): an 8x8 board with as many planes
            // as a material start has values (Arimaa's encoders), else any
            // board its kernels fit.
            let start = ["value_linear", "init"]
                .iter()
                .find_map(|f| v[f]["values"].as_array().map(Vec::len));
            let input = match start {
                Some(planes) => serde_json::json!({"planes": [planes, 8, 8], "globals": 0}),
                None => serde_json::json!({"planes": [2, 9, 9], "globals": 0}),
            };
            if let Some(obj) = v.as_object_mut() {
                obj.entry("input").or_insert(input);
            }
            let cfg: ModelConfig =
                serde_json::from_value(v).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            cfg.validate()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            seen += 1;
        }
    }
    assert!(seen >= 6, "found {seen} shipped model configs");
}
