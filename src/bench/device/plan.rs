//! What `plies bench device` measures: the networks, batch sizes, training
//! batches and MCTS thread counts. The full plan is the GPU check's list;
//! `--quick` keeps its shape (every kind of row) at sizes a CPU runs in
//! seconds, to check the plumbing, never to quote.

use super::super::{BenchError, Result};
use crate::model::{
    Cnn3Config, Cnn3NetConfig, InputShape, MdrnnConfig, ModelConfig, OutputActivation, ResNetConfig,
};

/// Arimaa's planes (`arimaa-6x8x8`), the input of cnn3 and the residual nets.
const ARIMAA_PLANES: [usize; 3] = [6, 8, 8];

/// One benchmarked network, with fresh seeded weights.
#[derive(Clone, Debug)]
pub struct BenchNet {
    /// The row's name, from the architecture that runs (`resnet-6x64`,
    /// `mdrnn-k10-19x19`).
    pub name: String,
    pub config: ModelConfig,
    /// Its place in the full list: the weights' and inputs' seed is the
    /// run's seed plus this, so a run of a few networks (`--nets`) gets
    /// the same ones as a run of all.
    pub seed_offset: u64,
}

/// Everything one run measures.
#[derive(Clone, Debug)]
pub struct Plan {
    pub nets: Vec<BenchNet>,
    /// Inference batch sizes, for every network.
    pub batches: Vec<usize>,
    /// The batches of the training rows.
    pub train_batches: Vec<usize>,
    /// Search threads of the MCTS rows (Arimaa).
    pub mcts_threads: Vec<usize>,
    /// The preset MCTS evaluates with (`plies bench mcts --model`).
    pub mcts_model: &'static str,
    pub mcts_sims: u64,
    pub mcts_positions: usize,
    /// Seconds per timed round and rounds per figure (the best counts).
    pub seconds: f64,
    pub rounds: usize,
    /// Positions whose outputs are compared: bf16 against f32, PyTorch
    /// against plies.
    pub check_rows: usize,
    /// Whether torch.compile is tried on every network or only the first
    /// (each compile takes tens of seconds on a CPU).
    pub compile_all: bool,
}

fn resnet(blocks: usize, channels: usize, value_hidden: usize) -> BenchNet {
    BenchNet {
        name: format!("resnet-{blocks}x{channels}"),
        config: ModelConfig::Resnet(ResNetConfig {
            input: InputShape::new(ARIMAA_PLANES, 0),
            blocks,
            channels,
            value_hidden,
            policy: false,
            policy_planes: 1,
            value_linear: None,
            output: OutputActivation::Sigmoid,
        }),
        seed_offset: 0,
    }
}

fn mdrnn(hidden: usize, board: usize) -> BenchNet {
    BenchNet {
        name: format!("mdrnn-k{hidden}-{board}x{board}"),
        config: ModelConfig::Mdrnn(MdrnnConfig::stones(board, hidden)),
        seed_offset: 0,
    }
}

fn cnn3() -> BenchNet {
    BenchNet {
        name: "cnn3".into(),
        config: ModelConfig::Cnn3(Cnn3NetConfig::new(
            InputShape::new(ARIMAA_PLANES, 0),
            Cnn3Config::default(),
        )),
        seed_offset: 0,
    }
}

/// The GPU check's plan, or (`quick`) the same rows at tiny sizes.
pub fn plan(quick: bool) -> Plan {
    let mut plan = sizes(quick);
    for (i, n) in plan.nets.iter_mut().enumerate() {
        n.seed_offset = i as u64;
    }
    plan
}

impl Plan {
    /// Keeps the networks named in `nets` (all when empty) and, unless
    /// `mcts`, drops the MCTS rows: a GPU run in pieces.
    pub fn only(mut self, nets: &[String], mcts: bool) -> Result<Plan> {
        if let Some(bad) = nets
            .iter()
            .find(|n| !self.nets.iter().any(|b| &b.name == *n))
        {
            let known: Vec<&str> = self.nets.iter().map(|b| b.name.as_str()).collect();
            return Err(BenchError::bad_option(
                format!("--nets {bad}"),
                format!("expected some of {}", known.join(", ")),
            ));
        }
        if !nets.is_empty() {
            self.nets.retain(|b| nets.contains(&b.name));
        }
        if !mcts {
            self.mcts_threads.clear();
        }
        Ok(self)
    }
}

fn sizes(quick: bool) -> Plan {
    if quick {
        return Plan {
            nets: vec![
                cnn3(),
                resnet(1, 8, 16),
                resnet(2, 16, 16),
                mdrnn(4, 5),
                mdrnn(8, 5),
                mdrnn(4, 7),
                mdrnn(8, 7),
            ],
            batches: vec![1, 8],
            train_batches: vec![8],
            mcts_threads: vec![2, 4, 8],
            mcts_model: "cnn3",
            mcts_sims: 64,
            mcts_positions: 1,
            seconds: 0.02,
            rounds: 1,
            check_rows: 8,
            compile_all: false,
        };
    }
    Plan {
        nets: vec![
            cnn3(),
            resnet(6, 64, 128),
            resnet(20, 256, 256),
            mdrnn(10, 9),
            mdrnn(64, 9),
            mdrnn(10, 19),
            mdrnn(64, 19),
        ],
        batches: vec![1, 64, 1024, 16384],
        train_batches: vec![256, 1024],
        mcts_threads: vec![32, 128, 512],
        mcts_model: "resnet-small",
        mcts_sims: 2048,
        mcts_positions: 2,
        seconds: 0.5,
        rounds: 2,
        check_rows: 256,
        compile_all: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_plan_is_the_gpu_checks_list() {
        let p = plan(false);
        let names: Vec<&str> = p.nets.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "cnn3",
                "resnet-6x64",
                "resnet-20x256",
                "mdrnn-k10-9x9",
                "mdrnn-k64-9x9",
                "mdrnn-k10-19x19",
                "mdrnn-k64-19x19"
            ]
        );
        assert_eq!(p.batches, [1, 64, 1024, 16384]);
        assert_eq!(p.mcts_threads, [32, 128, 512]);
        for n in &p.nets {
            n.config.validate().unwrap();
        }
    }

    #[test]
    fn the_quick_plan_has_as_many_rows_of_every_kind() {
        let (q, f) = (plan(true), plan(false));
        assert_eq!(q.nets.len(), f.nets.len());
        assert_eq!(q.mcts_threads.len(), f.mcts_threads.len());
        for n in &q.nets {
            n.config.validate().unwrap();
        }
    }

    #[test]
    fn a_partial_plan_keeps_its_seeds_and_refuses_unknown_names() {
        let p = plan(false)
            .only(&["mdrnn-k10-19x19".into(), "cnn3".into()], false)
            .unwrap();
        let kept: Vec<(&str, u64)> = p
            .nets
            .iter()
            .map(|n| (n.name.as_str(), n.seed_offset))
            .collect();
        assert_eq!(kept, [("cnn3", 0), ("mdrnn-k10-19x19", 5)]);
        assert!(p.mcts_threads.is_empty());
        assert_eq!(plan(true).only(&[], true).unwrap().nets.len(), 7);
        let e = plan(false)
            .only(&["resnet-9x9".into()], true)
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("--nets resnet-9x9") && e.to_string().contains("cnn3"),
            "{e}"
        );
    }
}
