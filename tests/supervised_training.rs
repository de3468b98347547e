//! Supervised training with candle and the Nesterov optimizer: it learns
//! the labels of a real self-play dataset, and the same seed gives the same
//! weights.

use candle_core::Device;
use plies::dataset::Dataset;
use plies::encode::{tictactoe_encoder, Encoder};
use plies::game::TicTacToe;
use plies::model::{Activation, MlpConfig, ModelConfig, WeightInit};
use plies::optim::{MomentumConfig, OptimizerConfig};
use plies::search::{ExpertPlayer, RandomPlayer};
use plies::selfplay::{generate_database, DatabaseConfig, SideSpec};
use plies::train::{train_supervised, SupervisedConfig};
use std::sync::Arc;

fn dataset(dir: &std::path::Path) -> Dataset {
    let enc: Arc<dyn Encoder<TicTacToe>> = Arc::from(tictactoe_encoder("tictactoe-2x3x3").unwrap());
    let cfg = DatabaseConfig {
        games: 3000,
        seed: 8,
        split: plies::dataset::SplitRule::new(0.2, 0.0).unwrap(),
        shard_rows: 5000,
    };
    generate_database(
        dir,
        SideSpec::Fixed(Arc::new(ExpertPlayer)),
        SideSpec::Fixed(Arc::new(RandomPlayer)),
        enc,
        &cfg,
        serde_json::json!({}),
        None,
    )
    .unwrap();
    Dataset::open(dir).unwrap()
}

fn config(seed: u64) -> SupervisedConfig {
    SupervisedConfig {
        model: ModelConfig::Mlp(
            MlpConfig {
                inputs: 18,
                hidden: vec![32],
                activation: Activation::Tanh,
                init: WeightInit::FanIn,
            }
            .into(),
        ),
        optimizer: OptimizerConfig::Momentum(MomentumConfig {
            lr: 0.02,
            momentum: 0.9,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: true,
        }),
        epochs: 4,
        batch_size: 64,
        seed,
        perspective: plies::encode::Perspective::SideToMove,
    }
}

#[test]
fn learns_the_labels_and_is_reproducible() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(&tmp.path().join("db"));
    let (vm_a, rep) = train_supervised(&ds, &config(3), &Device::Cpu, None).unwrap();
    let first = &rep.epochs[0];
    let last = rep.epochs.last().unwrap();
    assert!(last.train_mse < first.train_mse, "{rep:?}");
    // Beat the best constant prediction (the mean result) on held-out games.
    let t: Vec<f64> = ds
        .rows(Some(plies::dataset::Split::Valid))
        .unwrap()
        .iter()
        .map(|r| 2.0 * r.label as f64 - 1.0)
        .collect();
    let mean = t.iter().sum::<f64>() / t.len() as f64;
    let baseline = t.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / t.len() as f64;
    let mse = last.valid_mse.unwrap();
    assert!(
        mse < 0.97 * baseline,
        "valid mse {mse} vs constant {baseline}: {rep:?}"
    );
    assert!(last.valid_accuracy.unwrap() > 0.55, "{rep:?}");
    let (vm_b, _) = train_supervised(&ds, &config(3), &Device::Cpu, None).unwrap();
    let (vm_c, _) = train_supervised(&ds, &config(4), &Device::Cpu, None).unwrap();
    let get = |vm: &candle_nn::VarMap| {
        vm.data().lock().unwrap()["hidden.0.weight"]
            .as_tensor()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
    };
    assert_eq!(get(&vm_a), get(&vm_b));
    assert_ne!(get(&vm_a), get(&vm_c));
}
