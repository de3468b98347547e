//! Comparison training (`plies train --objective comparison`): its gradient
//! against finite differences for every model kind, chunked passes equal to
//! whole ones, seeded sampling, named errors for bad rows, and a killed run
//! resumed to the weights of an uninterrupted one.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use candle_core::{DType, Device, Tensor, Var};
use candle_nn::{VarBuilder, VarMap};
use plies::dataset::{DatasetSpec, DatasetWriter, EncoderInfo, PositionRow};
use plies::game::{Game, Gomoku, Outcome};
use plies::games::GameSupport;
use plies::model::{build, seeded_init, trainable_vars, InputShape};
use plies::positions::children::{expander, ChildExpander, MoveRow};
use plies::train::comparison::Comparer;
use plies::train::{fit, preset, ComparisonConfig, ComparisonLoss, FitConfig, FitError, Reduce};
use plies::util::seeded_rng;
use rand::RngExt;

const SIZE: usize = 5;

fn encoder_info() -> EncoderInfo {
    let enc = Gomoku::encoder("stones-2", SIZE).unwrap();
    EncoderInfo {
        name: enc.name().to_string(),
        version: 1,
        shape: enc.shape(),
        globals: enc.globals_len(),
    }
}

/// Seeded random 5x5 Gomoku games: every position with the move played
/// from it and the result for the side to move.
fn games(n: usize, seed: u64) -> Vec<Vec<(Gomoku, String, f32)>> {
    let mut rng = seeded_rng(seed, 0);
    (0..n)
        .map(|_| {
            let mut g = Gomoku::with_size(SIZE).unwrap();
            let mut plies = Vec::new();
            let mut moves = Vec::new();
            while g.outcome().is_none() {
                g.legal_moves(&mut moves);
                let m = moves[rng.random_range(0..moves.len())];
                plies.push((g, g.move_to_string(m)));
                g.play(m);
            }
            let outcome = g.outcome().unwrap();
            plies
                .into_iter()
                .map(|(s, m)| {
                    let label = match outcome {
                        Outcome::Win(w) if w == s.side_to_move() => 1.0,
                        Outcome::Win(_) => 0.0,
                        Outcome::Draw => 0.5,
                    };
                    (s, m, label)
                })
                .collect()
        })
        .collect()
}

fn move_rows(n: usize, seed: u64) -> Vec<MoveRow> {
    games(n, seed)
        .into_iter()
        .enumerate()
        .flat_map(|(i, g)| {
            let len = g.len() as u32;
            g.into_iter()
                .enumerate()
                .map(move |(ply, (s, m, _))| MoveRow {
                    game_id: format!("g{i}"),
                    ply: ply as u32,
                    plies_to_end: len - ply as u32,
                    position: s.to_text(),
                    played: m,
                })
        })
        .collect()
}

/// A model of preset `name` on the 5x5 planes, weights drawn from `seed`.
fn model(name: &str, seed: u64) -> (VarMap, Box<dyn plies::model::ValueNet>) {
    let info = encoder_info();
    let cfg = preset(name, InputShape::new(info.shape, info.globals)).unwrap();
    let vm = VarMap::new();
    let dev = Device::Cpu;
    let net = build(&cfg, VarBuilder::from_varmap(&vm, DType::F32, &dev)).unwrap();
    seeded_init(&vm, &cfg, &mut seeded_rng(seed, 1), &dev).unwrap();
    (vm, net)
}

fn comparer<'a>(
    net: &'a dyn plies::model::ValueNet,
    x: &'a dyn ChildExpander,
    cfg: &'a ComparisonConfig,
    vars: &'a [Var],
) -> Comparer<'a> {
    Comparer {
        net,
        expander: x,
        cfg,
        shape: encoder_info().shape,
        device: &Device::Cpu,
        vars,
    }
}

fn flat(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1::<f32>().unwrap()
}

/// The gradient the objective computes (chunked or not) is the gradient of
/// its loss: central differences on a few entries of every weight tensor
/// of every model kind agree with it.
#[test]
fn gradients_match_finite_differences_for_every_model_kind() {
    let rows: Vec<MoveRow> = move_rows(3, 7).into_iter().step_by(3).collect();
    let x = expander("gomoku", &encoder_info()).unwrap();
    let cfgs = [
        ComparisonConfig {
            chunk: 7,
            ..ComparisonConfig::default()
        },
        ComparisonConfig {
            loss: ComparisonLoss::Softmax,
            reduce: Reduce::Sum,
            temperature: 0.5,
            chunk: 4096,
            ..ComparisonConfig::default()
        },
    ];
    for name in ["linear", "mlp", "cnn3", "resnet-tiny"] {
        let (vm, net) = model(name, 3);
        let vars = trainable_vars(&vm);
        for cfg in &cfgs {
            let c = comparer(net.as_ref(), x.as_ref(), cfg, &vars);
            let loss = |c: &Comparer| c.run(&rows, 1.0, 9, false).unwrap().loss_sum;
            let got = c.run(&rows, 1.0, 9, true).unwrap();
            let grads = got.grads.unwrap();
            let mut checked = 0;
            for var in trainable_vars(&vm) {
                let Some(g) = grads.get(var.as_tensor()) else {
                    continue;
                };
                let g = flat(g);
                let w0 = var.as_tensor().copy().unwrap();
                let values = flat(&w0);
                for &i in &[0, values.len() / 2, values.len() - 1] {
                    let h = 1e-3f32;
                    let at = |delta: f32| {
                        let mut v = values.clone();
                        v[i] += delta;
                        var.set(&Tensor::from_vec(v, w0.dims(), &Device::Cpu).unwrap())
                            .unwrap();
                        loss(&c)
                    };
                    let fd = (at(h) - at(-h)) / (2.0 * f64::from(h));
                    var.set(&w0).unwrap();
                    let an = f64::from(g[i]);
                    assert!(
                        (fd - an).abs() <= 2e-3 + 3e-2 * an.abs().max(fd.abs()),
                        "{name} {cfg:?}: weight {i} of {:?}: finite difference {fd}, gradient {an}",
                        w0.dims()
                    );
                    checked += 1;
                }
            }
            assert!(checked >= 6, "{name}: only {checked} weights checked");
        }
    }
}

/// Bounded passes change nothing: one child per pass and every child in
/// one pass give the same loss, top-1 and gradient.
#[test]
fn chunked_passes_equal_one_pass() {
    let rows = move_rows(2, 11);
    let x = expander("gomoku", &encoder_info()).unwrap();
    let (vm, net) = model("mlp", 5);
    let vars = trainable_vars(&vm);
    let whole = ComparisonConfig::default();
    let tiny = ComparisonConfig {
        chunk: 1,
        ..ComparisonConfig::default()
    };
    let a = comparer(net.as_ref(), x.as_ref(), &whole, &vars)
        .run(&rows, 0.5, 1, true)
        .unwrap();
    let b = comparer(net.as_ref(), x.as_ref(), &tiny, &vars)
        .run(&rows, 0.5, 1, true)
        .unwrap();
    assert_eq!(a.positions, rows.len());
    assert!((a.loss_sum - b.loss_sum).abs() < 1e-5 * a.loss_sum.abs().max(1.0));
    assert!((a.top1_sum - b.top1_sum).abs() < 1e-9);
    let (ga, gb) = (a.grads.unwrap(), b.grads.unwrap());
    // Every pass's backward also returns the gradients of its input batch
    // and intermediate tensors; one child a pass is many passes, and only
    // the weights' gradients stay (memory does not grow with the passes).
    assert_eq!(gb.get_ids().count(), vars.len());
    assert_eq!(ga.get_ids().count(), vars.len());
    for var in trainable_vars(&vm) {
        let (u, v) = (
            flat(ga.get(var.as_tensor()).unwrap()),
            flat(gb.get(var.as_tensor()).unwrap()),
        );
        for (p, q) in u.iter().zip(&v) {
            assert!((p - q).abs() <= 1e-4 + 1e-3 * p.abs(), "{p} vs {q}");
        }
    }
}

/// Sampling K other moves: the same seed draws the same moves, another
/// seed others; K at least the number of moves is all of them.
#[test]
fn sampled_moves_follow_the_seed() {
    let rows: Vec<MoveRow> = move_rows(1, 4).into_iter().take(3).collect();
    let x = expander("gomoku", &encoder_info()).unwrap();
    let (vm, net) = model("linear", 2);
    let vars = trainable_vars(&vm);
    let run = |sample: Option<usize>, seed: u64| {
        let cfg = ComparisonConfig {
            sample,
            ..ComparisonConfig::default()
        };
        comparer(net.as_ref(), x.as_ref(), &cfg, &vars)
            .run(&rows, 1.0, seed, false)
            .unwrap()
            .loss_sum
    };
    assert_eq!(run(Some(3), 1), run(Some(3), 1));
    assert_ne!(run(Some(3), 1), run(Some(3), 2));
    assert_eq!(run(Some(100), 1), run(None, 1));
    let child = x.expand(&rows[0], Some((3, 1))).unwrap();
    assert_eq!(child.len, 4);
    assert_eq!(child.legal_moves, SIZE * SIZE);
}

/// Writes a 5x5 Gomoku dataset of `n` seeded random games; `edit` may
/// change each row (drop or break its move).
fn write_dataset(dir: &Path, n: usize, edit: impl Fn(&mut PositionRow)) -> PathBuf {
    let enc = Gomoku::encoder("stones-2", SIZE).unwrap();
    let out = dir.join("ds");
    let mut w = DatasetWriter::create(&out, DatasetSpec::new("gomoku", encoder_info())).unwrap();
    for (i, g) in games(n, 21).into_iter().enumerate() {
        let len = g.len() as u32;
        for (ply, (s, m, label)) in g.into_iter().enumerate() {
            let mut planes = vec![0i8; enc.plane_len()];
            let mut globals = vec![0f32; enc.globals_len()];
            enc.encode(&s, &mut planes, &mut globals);
            let mut row = PositionRow {
                game_id: format!("game-{i}"),
                ply: ply as u32,
                plies_to_end: len - ply as u32,
                side_to_move: if s.side_to_move() == plies::game::Side::First {
                    0
                } else {
                    1
                },
                position: s.to_text(),
                planes,
                globals,
                label,
                move_played: Some(m),
                source: "test".into(),
                termination: None,
                white_rating: None,
                black_rating: None,
                policy: None,
            };
            edit(&mut row);
            w.push(row).unwrap();
        }
    }
    w.finish(serde_json::json!({})).unwrap();
    out
}

fn fit_config(data: &Path, out: &Path) -> FitConfig {
    let info = encoder_info();
    FitConfig {
        data: data.to_path_buf(),
        out: out.to_path_buf(),
        model: preset("linear", InputShape::new(info.shape, info.globals)).unwrap(),
        model_source: "linear".into(),
        init_weights: None,
        optimizer: plies::optim::OptimizerConfig::Sgd { lr: 0.05 },
        loss: plies::train::loss::LossKind::Mse,
        l1: 0.0,
        l2: 0.0,
        clip: None,
        schedule: plies::train::ScheduleSpec::Constant,
        warmup_steps: 0,
        epochs: 1,
        batch_size: 16,
        buffer_rows: 256,
        seed: 1,
        patience: None,
        save_every: 0,
        device_name: "cpu".into(),
        precision: Default::default(),
        resume: false,
        overwrite: false,
        quiet: true,
        comparison: Some(ComparisonConfig::default()),
        policy_weight: 0.0,
        augment: false,
        source_weights: Default::default(),
    }
}

#[test]
fn a_move_that_is_not_legal_names_its_game_and_ply() {
    // A deterministic illegal move: the first move of the game again.
    let tmp2 = tempfile::tempdir().unwrap();
    let first_moves = games(4, 21);
    let replayed = first_moves[2][0].1.clone();
    let data = write_dataset(tmp2.path(), 4, |r| {
        if r.game_id == "game-2" && r.ply == 3 {
            r.move_played = Some(replayed.clone());
        }
    });
    let e =
        plies::train::fit(&fit_config(&data, &tmp2.path().join("run")), &Device::Cpu).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, FitError::Children(_)), "{msg}");
    assert!(
        msg.contains("game game-2, ply 3") && msg.contains(&replayed),
        "{msg}"
    );
}

#[test]
fn a_dataset_without_moves_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_dataset(tmp.path(), 3, |r| r.move_played = None);
    let e =
        plies::train::fit(&fit_config(&data, &tmp.path().join("run")), &Device::Cpu).unwrap_err();
    assert!(matches!(e, FitError::NoMoves { .. }), "{e}");
    assert!(e.to_string().contains("move_played"), "{e}");
}

fn plies() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_plies"));
    c.env("RAYON_NUM_THREADS", "2")
        .env("CANDLE_NUM_THREADS", "1");
    c
}

fn train_args(data: &Path, out: &Path) -> Vec<String> {
    let d = data.display().to_string();
    let o = out.display().to_string();
    [
        "train",
        "--data",
        &d,
        "--model",
        "mlp",
        "--out",
        &o,
        "--objective",
        "comparison",
        "--comparison-loss",
        "softmax",
        "--sample",
        "6",
        "--chunk",
        "40",
        "--value-weight",
        "0.5",
        "--optimizer",
        "nesterov",
        "--lr",
        "0.01",
        "--epochs",
        "2",
        "--batch",
        "8",
        "--buffer-rows",
        "64",
        "--save-every",
        "3",
        "--seed",
        "4",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn step_of(out: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(out.join("run-state/state.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["step"].as_u64()
}

/// A comparison run killed at several points and resumed ends with the
/// bytes of an uninterrupted run (sampling and the value-loss mix included).
#[test]
fn a_killed_comparison_run_resumes_to_the_same_weights() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_dataset(tmp.path(), 40, |_| {});
    let straight = tmp.path().join("straight");
    let o = plies().args(train_args(&data, &straight)).output().unwrap();
    assert!(o.status.success(), "{}", common::text(&o));
    let want = std::fs::read(straight.join("model.safetensors")).unwrap();
    let total = step_of(&straight).unwrap();
    let metrics = std::fs::read_to_string(straight.join("metrics.csv")).unwrap();
    assert!(
        metrics
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .next_back()
            .unwrap()
            != ""
    );

    let killed = tmp.path().join("killed");
    let args = train_args(&data, &killed);
    let mut kills = Vec::new();
    let mut after = 0;
    loop {
        let mut child = plies()
            .args(&args)
            .arg("--resume")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        let killed_at = loop {
            if let Some(s) = step_of(&killed) {
                if s > after {
                    child.kill().unwrap();
                    child.wait().unwrap();
                    break Some(s);
                }
            }
            if child.try_wait().unwrap().is_some() {
                break None;
            }
            assert!(t0.elapsed() < Duration::from_secs(300), "run hangs");
            std::thread::sleep(Duration::from_micros(300));
        };
        match killed_at {
            Some(s) => {
                kills.push(s);
                after = s + total / 4;
                assert!(kills.len() < 20, "never finishes: {kills:?}");
            }
            None => break,
        }
    }
    assert!(!kills.is_empty(), "the run was never killed");
    let got = std::fs::read(killed.join("model.safetensors")).unwrap();
    assert!(got == want, "resumed weights differ (killed at {kills:?})");
}

#[test]
fn augmenting_is_refused_where_it_cannot_be_done() {
    let tmp = tempfile::tempdir().unwrap();
    let data = write_dataset(tmp.path(), 4, |_| {});
    let out = tmp.path().join("run");
    // Comparison training is not augmented.
    let cfg = FitConfig {
        augment: true,
        ..fit_config(&data, &out)
    };
    let e = fit(&cfg, &Device::Cpu).err().unwrap().to_string();
    assert!(e.contains("augment") && e.contains("compared"), "{e}");
    // Value training on an encoder that declares no symmetries.
    let cfg = FitConfig {
        comparison: None,
        ..cfg
    };
    let e = fit(&cfg, &Device::Cpu).err().unwrap().to_string();
    assert!(
        e.contains("augment") && e.contains("no board symmetries"),
        "{e}"
    );
    assert!(!out.join("model.safetensors").exists());
}
