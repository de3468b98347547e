//! `plies train td` as a library job: TD(lambda) over a dataset's train
//! split, one network measured as it learns or N seeded runs of which the
//! one with the lowest held-out 0/1 error is kept, written as a checkpoint
//! with its training card.
//!
//! Strength is measured by the caller's [`EquityProbe`] (a match against
//! a fixed opponent lives in `arena`, a layer this one does not reach).

use super::td_dataset::{fresh_network, td_error, td_examples};
use super::{td_games, train_td_runs, TdNetConfig, TdRunResult, TrainError};
use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
use crate::dataset::{Dataset, Split};
use crate::encode::Encoder;
use crate::model::{ModelConfig, NativeMlp};
use crate::util::derive_seed;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;

/// A network's result against the probe's opponent.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Equity {
    /// Mean score in [-1, 1].
    pub equity: f64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
}

/// A match of the network (by `seed`) against the probe's opponent.
pub type MeasureEquity<'a> = Box<dyn Fn(&NativeMlp, u64) -> Result<Equity, TrainError> + 'a>;

/// Measures a network's strength: its opponent's name and a match of the
/// network against it.
pub struct EquityProbe<'a> {
    pub against: String,
    pub measure: MeasureEquity<'a>,
}

/// What the job is given.
pub struct TdJob<'a, G> {
    pub data: PathBuf,
    pub out: PathBuf,
    /// The settings' preset name, for the card.
    pub preset: String,
    pub net: TdNetConfig,
    /// Runs in parallel (1: one network, measured as it learns).
    pub runs: usize,
    pub seed: u64,
    /// With one run: measure after every this many games.
    pub eval_every: usize,
    pub eval_games: usize,
    pub encoder: Arc<dyn Encoder<G>>,
    pub probe: Option<EquityProbe<'a>>,
    /// Called once per game learned.
    pub tick: &'a (dyn Fn() + Sync),
}

/// One equity measurement: after `seen` games, with the TD error of the
/// games since the last one (none for the kept run of several).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EquityPoint {
    pub seen: usize,
    pub equity: Equity,
    pub td_mse: Option<f64>,
}

/// What the job did.
#[derive(Clone, Debug, Serialize)]
pub struct TdJobReport {
    pub equity: Vec<EquityPoint>,
    pub runs: Vec<TdRunResult>,
    /// The split the 0/1 errors are on (valid, else test).
    pub held_out_split: Split,
    pub checkpoint: PathBuf,
}

/// Runs `job` on `dataset` (of game `game`) and writes its checkpoint.
pub fn run_td_job<G: crate::game::Game>(
    job: &TdJob<'_, G>,
    dataset: &Dataset,
) -> Result<TdJobReport, TrainError> {
    let games = td_games(dataset, Some(Split::Train), job.encoder.as_ref())?;
    if games.is_empty() {
        return Err(TrainError::BadData {
            context: job.data.display().to_string(),
            why: "the train split has no games".into(),
        });
    }
    let held_out_split = if dataset.num_rows(Some(Split::Valid)) > 0 {
        Split::Valid
    } else {
        Split::Test
    };
    let held_out = td_games(dataset, Some(held_out_split), job.encoder.as_ref())?;
    let inputs = job.encoder.plane_len() + job.encoder.spec().globals;
    let cfg = &job.net;
    let mut equity = Vec::new();
    let (net, runs) = if job.runs <= 1 {
        let (mut net, mut rng) = fresh_network(cfg, inputs, job.seed)?;
        let (mut mse_sum, mut mse_n) = (0.0f64, 0usize);
        td_examples(
            &mut net,
            &mut rng,
            &games,
            cfg.td,
            cfg.examples,
            |net, seen, mse| -> Result<(), TrainError> {
                mse_sum += mse as f64;
                mse_n += 1;
                (job.tick)();
                let at_end = seen == cfg.examples;
                if let Some(probe) = &job.probe {
                    if seen % job.eval_every.max(1) == 0 || at_end {
                        let e = (probe.measure)(net, derive_seed(job.seed, (seen - 1) as u64))?;
                        equity.push(EquityPoint {
                            seen,
                            equity: e,
                            td_mse: Some(mse_sum / mse_n as f64),
                        });
                        (mse_sum, mse_n) = (0.0, 0);
                    }
                }
                Ok(())
            },
        )?;
        let error = (!held_out.is_empty())
            .then(|| td_error(&net, &held_out).overall.summary().error01)
            .flatten();
        let run = TdRunResult {
            run: 0,
            seed: job.seed,
            error,
            td_mse: 0.0,
        };
        (net, vec![run])
    } else {
        let (runs, net, _) =
            train_td_runs(cfg, inputs, &games, &held_out, job.runs, job.seed, job.tick)?;
        if let Some(probe) = &job.probe {
            let e = (probe.measure)(&net, derive_seed(job.seed, cfg.examples as u64))?;
            equity.push(EquityPoint {
                seen: cfg.examples,
                equity: e,
                td_mse: None,
            });
        }
        (net, runs)
    };
    let report = TdJobReport {
        equity,
        runs,
        held_out_split,
        checkpoint: job.out.clone(),
    };
    save(job, dataset, &net, inputs, &report)?;
    Ok(report)
}

/// The kept run's network as a checkpoint, its card naming the data, the
/// settings and what was measured.
fn save<G: crate::game::Game>(
    job: &TdJob<'_, G>,
    dataset: &Dataset,
    net: &NativeMlp,
    inputs: usize,
    report: &TdJobReport,
) -> Result<(), TrainError> {
    let cfg = &job.net;
    let best = report
        .runs
        .iter()
        .min_by(|x, y| {
            let e = |r: &TdRunResult| r.error.unwrap_or(f64::INFINITY);
            e(x).total_cmp(&e(y)).then(x.run.cmp(&y.run))
        })
        .cloned();
    let against = job.probe.as_ref().map_or("-", |p| p.against.as_str());
    let last_equity = report.equity.last().map(|p| p.equity.equity);
    let training = TrainingInfo {
        method: "td_lambda_from_dataset".into(),
        seed: best.as_ref().map(|r| r.seed),
        dataset_manifest_sha256: Some(dataset.manifest_sha256().to_string()),
        dataset: Some(job.data.display().to_string()),
        examples: cfg.examples as u64,
        hyperparameters: serde_json::json!({"preset": job.preset, "lambda": cfg.td.lambda, "lr": cfg.td.lr, "beta": cfg.beta, "init": cfg.init, "runs": job.runs}),
        metrics: serde_json::json!({"equity": last_equity, "against": against, "eval_games": job.eval_games, "runs": report.runs, "held_out_split": report.held_out_split.to_string()}),
    };
    let ck = CheckpointConfig::new(
        G::NAME,
        job.encoder.spec(),
        ModelConfig::Mlp(cfg.mlp(inputs).into()),
        training,
    );
    let tensors = net.to_tensors(&candle_core::Device::Cpu)?;
    checkpoint::save(&job.out, &ck, &tensors).map_err(|e| TrainError::Checkpoint {
        path: job.out.clone(),
        why: e.to_string(),
    })
}
