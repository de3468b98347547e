//! The networks of figure 15 and tables 4 and 5: an Elliott MLP per
//! encoder x hidden size, trained `runs` times by TD(lambda) on the train
//! games, the run of lowest test error kept. Each run is saved as a
//! checkpoint at `OUT/nets/NAME/run-R/` whose metrics carry the settings it
//! was trained with, so a rerun with the same settings and data trains
//! nothing again.

use super::config::{encoder_of, AmazonsExperimentConfig};
use super::error::{file_error, Result};
use crate::checkpoint::{self, CheckpointConfig, TrainingInfo};
use crate::dataset::{Dataset, Split};
use crate::encode::Encoder;
use crate::game::{Amazons, Game};
use crate::model::{ModelConfig, NativeMlp};
use crate::train::td_dataset::{fresh_network, run_seed, td_error, td_examples};
use crate::train::{td_games, TdGame, TdNetConfig};
use indicatif::ProgressBar;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One network configuration's result.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NetResult {
    pub name: String,
    pub encoder: String,
    pub hidden: usize,
    pub best_run: usize,
    /// Test error of every run.
    pub run_errors: Vec<f64>,
}

impl NetResult {
    /// The kept run's test error.
    pub fn best_error(&self) -> f64 {
        self.run_errors
            .get(self.best_run)
            .copied()
            .unwrap_or(f64::INFINITY)
    }
}

/// A trained configuration: its best network behind its encoder.
pub(super) struct TrainedNet {
    pub(super) result: NetResult,
    pub(super) encoder: Arc<dyn Encoder<Amazons>>,
    pub(super) net: NativeMlp,
    /// The best run's checkpoint (`eval=ckpt:` of the equity players).
    pub(super) best_dir: PathBuf,
}

/// `amazons-units` -> `UNITS`.
fn short(encoder: &str) -> String {
    encoder
        .strip_prefix("amazons-")
        .unwrap_or(encoder)
        .to_ascii_uppercase()
}

/// A configuration's name, as the thesis writes it: `UNITS-40`.
pub(super) fn net_name(encoder: &str, hidden: usize) -> String {
    format!("{}-{hidden}", short(encoder))
}

/// Where run `run` of the configuration (`encoder`, `hidden`) is saved.
pub(super) fn run_dir(out: &Path, encoder: &str, hidden: usize, run: usize) -> PathBuf {
    out.join("nets")
        .join(net_name(encoder, hidden))
        .join(format!("run-{run}"))
}

/// One TD(lambda) run of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Job {
    /// Index into the configured encoders.
    pub(super) encoder: usize,
    pub(super) hidden: usize,
    pub(super) run: usize,
}

/// Every run of the grid: by encoder, then hidden size, then run.
pub(super) fn jobs(encoders: usize, hidden: &[usize], runs: usize) -> Vec<Job> {
    let mut jobs = Vec::new();
    for encoder in 0..encoders {
        for &hidden in hidden {
            for run in 0..runs {
                jobs.push(Job {
                    encoder,
                    hidden,
                    run,
                });
            }
        }
    }
    jobs
}

/// The run kept: the first of the lowest test error; `None` without runs.
pub(super) fn best_run(errors: &[f64]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (run, &error) in errors.iter().enumerate() {
        if best.is_none_or(|(_, b)| error < b) {
            best = Some((run, error));
        }
    }
    best.map(|(run, _)| run)
}

/// Saves a run's network as a checkpoint at `dir`; `metrics` holds the
/// run's key and test error.
fn save_net(
    dir: &Path,
    cfg: &AmazonsExperimentConfig,
    td: &TdNetConfig,
    encoder: &dyn Encoder<Amazons>,
    net: &NativeMlp,
    seed: u64,
    metrics: serde_json::Value,
) -> Result<()> {
    let training = TrainingInfo {
        method: "td_lambda_from_dataset".into(),
        seed: Some(seed),
        dataset_manifest_sha256: None,
        dataset: Some(cfg.out.join("db").join("dataset").display().to_string()),
        examples: td.examples as u64,
        hyperparameters: serde_json::to_value(td).unwrap_or_default(),
        metrics,
    };
    let model = ModelConfig::Mlp(td.mlp(net.config().inputs).into());
    let ck = CheckpointConfig::new(Amazons::NAME, encoder.spec(), model, training);
    let tensors = net
        .to_tensors(&candle_core::Device::Cpu)
        .map_err(|e| file_error(dir, e))?;
    checkpoint::save(dir, &ck, &tensors)?;
    Ok(())
}

/// Every configuration x run, in parallel, each resumed from its
/// checkpoint; the run with the lowest test error kept per configuration.
pub(super) fn train_networks(
    cfg: &AmazonsExperimentConfig,
    ds: &Dataset,
    progress: &dyn Fn(u64, &str) -> ProgressBar,
    say: &dyn Fn(&str),
) -> Result<Vec<TrainedNet>> {
    let encoders: Vec<Arc<dyn Encoder<Amazons>>> = cfg
        .encoders
        .iter()
        .map(|e| encoder_of(cfg, e))
        .collect::<Result<_>>()?;
    let td_of = |hidden: usize| TdNetConfig {
        hidden,
        ..cfg.td.clone()
    };
    let dir_of = |e: usize, h: usize, r: usize| run_dir(&cfg.out, &cfg.encoders[e], h, r);
    let key = |e: usize, h: usize, r: usize| serde_json::json!({"td": td_of(h), "seed": run_seed(cfg.seed, r), "encoder": cfg.encoders[e], "dataset": ds.manifest_sha256()});
    let jobs = jobs(encoders.len(), &cfg.hidden, cfg.runs);
    // Runs already trained (same settings, same data) are kept.
    let done = |j: &Job| -> Option<(NativeMlp, f64)> {
        let ck = checkpoint::load(
            &dir_of(j.encoder, j.hidden, j.run),
            Some(Amazons::NAME),
            None,
        )
        .ok()?;
        let metrics = &ck.config.training.metrics;
        if metrics.get("key")? != &key(j.encoder, j.hidden, j.run) {
            return None;
        }
        let error = metrics.get("test_error")?.as_f64()?;
        let encoder = &encoders[j.encoder];
        let mlp = td_of(j.hidden).mlp(encoder.plane_len() + encoder.spec().globals);
        let net = NativeMlp::from_tensors(&mlp, &ck.tensors).ok()?;
        Some((net, error))
    };
    let todo: Vec<&Job> = jobs.iter().filter(|j| done(j).is_none()).collect();
    if !todo.is_empty() {
        say(&format!(
            "networks: training {} of {} runs ({} games each)",
            todo.len(),
            jobs.len(),
            cfg.td.examples
        ));
        let used: Vec<usize> = {
            let mut u: Vec<usize> = todo.iter().map(|j| j.encoder).collect();
            u.sort_unstable();
            u.dedup();
            u
        };
        let mut games: Vec<Option<(Vec<TdGame>, Vec<TdGame>)>> = vec![None; encoders.len()];
        for e in used {
            let train = td_games(ds, Some(Split::Train), encoders[e].as_ref())?;
            let test = td_games(ds, Some(Split::Test), encoders[e].as_ref())?;
            games[e] = Some((train, test));
        }
        let pb = progress((todo.len() * cfg.td.examples) as u64, "td games");
        todo.par_iter()
            .map(|j| -> Result<()> {
                let (train, test) = games[j.encoder]
                    .as_ref()
                    .ok_or_else(|| file_error(&cfg.out, "encoded games missing"))?;
                let td = td_of(j.hidden);
                let inputs = encoders[j.encoder].plane_len() + encoders[j.encoder].spec().globals;
                let seed = run_seed(cfg.seed, j.run);
                let (mut net, mut rng) = fresh_network(&td, inputs, seed)?;
                td_examples(
                    &mut net,
                    &mut rng,
                    train,
                    td.td,
                    td.examples,
                    |_, _, _| -> Result<()> {
                        pb.inc(1);
                        Ok(())
                    },
                )?;
                let error = td_error(&net, test).overall.summary().error01.unwrap_or(0.5);
                save_net(
                    &dir_of(j.encoder, j.hidden, j.run),
                    cfg,
                    &td,
                    encoders[j.encoder].as_ref(),
                    &net,
                    seed,
                    serde_json::json!({"key": key(j.encoder, j.hidden, j.run), "test_error": error}),
                )
            })
            .collect::<Result<Vec<()>>>()?;
        pb.finish_and_clear();
    }
    let mut out = Vec::new();
    for (e, encoder) in encoders.iter().enumerate() {
        for &h in &cfg.hidden {
            let mut nets = Vec::new();
            let mut run_errors = Vec::new();
            for r in 0..cfg.runs {
                let j = Job {
                    encoder: e,
                    hidden: h,
                    run: r,
                };
                let (net, error) = done(&j).ok_or_else(|| {
                    file_error(
                        &dir_of(e, h, r),
                        "the run's checkpoint is missing after training",
                    )
                })?;
                nets.push(net);
                run_errors.push(error);
            }
            let best_run = best_run(&run_errors).ok_or_else(|| file_error(&cfg.out, "no runs"))?;
            let net = nets.swap_remove(best_run);
            out.push(TrainedNet {
                result: NetResult {
                    name: net_name(&cfg.encoders[e], h),
                    encoder: cfg.encoders[e].clone(),
                    hidden: h,
                    best_run,
                    run_errors,
                },
                encoder: encoder.clone(),
                net,
                best_dir: dir_of(e, h, best_run),
            });
        }
    }
    Ok(out)
}
