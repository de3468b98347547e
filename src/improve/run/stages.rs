//! A generation's five stages, each skipped when its output is complete:
//! self-play by the current network, the replay window, training, the
//! gate and the anchors. Players are handed over as values; the network a
//! stage plays is loaded once.

use super::super::generation::{play_generation, GenerationPlayer, Searcher};
use super::super::{LoopConfig, LoopError};
use super::network::{LoopPlayer, Network};
use super::summary::{anchor_result, decide, AnchorResult, GateResult, StageTimes};
use super::{
    bar, clear_partial, generation_dir, play_from_random_openings, read_json, timed, Loop,
    ANCHOR_STREAM, GATE_STREAM, SELFPLAY_STREAM, TRAIN_STREAM,
};
use crate::arena::build_players;
use crate::dataset::{Dataset, MANIFEST_FILE};
use crate::games::GameSupport;
use crate::infer::{BatchOptions, BatchedEvaluator, Evaluator};
use crate::model::ModelConfig;
use crate::optim::{AdamWConfig, OptimizerConfig};
use crate::search::evaluators::EvalContext;
use crate::search::game_player::PlayerContext;
use crate::train::{fit, resolve_model, FitConfig, ScheduleSpec};
use crate::util::{derive_seed, parse_device};
use std::path::{Path, PathBuf};
use std::sync::Arc;

impl<'a, G: GameSupport> Loop<'a, G> {
    /// Checks what can fail before any work (the board size, the device,
    /// the encoder, the anchors and the bootstrap player: an unknown spec,
    /// OpenSpiel's bot without its Python) and builds what every
    /// generation shares.
    pub(super) fn prepare(
        dir: &'a Path,
        cfg: &'a LoopConfig,
        quiet: bool,
    ) -> Result<Self, LoopError> {
        let size = cfg.size.unwrap_or(G::DEFAULT_SIZE);
        G::with_size(size)?;
        let device = parse_device(&cfg.device)?;
        let ctx = PlayerContext {
            size,
            eval: EvalContext {
                device: device.clone(),
                precision: cfg.precision,
            },
        };
        let encoder = Arc::from(G::encoder(&cfg.encoder, size)?);
        build_players::<G>(&cfg.anchors.players, &ctx, |i| format!("anchor {i}"))?;
        let (bootstrap, bootstrap_named) = match &cfg.selfplay.bootstrap {
            Some(spec) => {
                let player = build_players::<G>(std::slice::from_ref(spec), &ctx, |_| {
                    "selfplay.bootstrap".into()
                })?
                .remove(0);
                (
                    LoopPlayer {
                        player,
                        label: spec.clone(),
                    },
                    true,
                )
            }
            None => (
                LoopPlayer::bootstrap_search(cfg.selfplay.bootstrap_sims, cfg.selfplay.decisive)?,
                false,
            ),
        };
        Ok(Loop {
            dir,
            cfg,
            quiet,
            size,
            device,
            ctx,
            encoder,
            bootstrap,
            bootstrap_named,
        })
    }

    /// Stage 1: Self-play by the current network (the bootstrap before any).
    pub(super) fn selfplay(
        &self,
        g: u32,
        best: Option<&Network<G>>,
        times: &mut StageTimes,
    ) -> Result<(), LoopError> {
        let gdir = generation_dir(self.dir, g);
        let data = gdir.join("data");
        if data.join(MANIFEST_FILE).exists() {
            return Ok(());
        }
        let cfg = self.cfg;
        let eval: Option<Arc<dyn Evaluator<G>>> = match (best, cfg.selfplay.batch) {
            (Some(net), b) if b > 0 => {
                let opts = BatchOptions {
                    max_batch: b,
                    workers: BatchOptions::workers_on(!self.ctx.eval.device.is_cpu()),
                    ..Default::default()
                };
                let service = BatchedEvaluator::new(net.eval.clone(), opts)
                    .map_err(|e| LoopError::Pool(e.to_string()))?;
                Some(Arc::new(service))
            }
            (Some(net), _) => Some(net.eval.clone()),
            (None, _) => None,
        };
        let player = match eval {
            None if self.bootstrap_named => GenerationPlayer::Player(self.bootstrap.player.clone()),
            eval => GenerationPlayer::Search(Searcher::new(&cfg.selfplay, eval)),
        };
        let pb = bar(
            cfg.selfplay.games,
            format!("generation {g}: self-play ({})", player.describe()),
            self.quiet,
        );
        let size = self.size;
        let start = || G::with_size(size).unwrap_or_else(|_| G::new());
        timed(&mut times.selfplay_wall, &mut times.selfplay_cpu, || {
            play_generation(
                &data,
                &player,
                &cfg.selfplay,
                &start,
                self.encoder.clone(),
                derive_seed(derive_seed(cfg.seed, SELFPLAY_STREAM), g as u64),
                &format!("gen{g:03}"),
                cfg.threads,
                &pb,
            )
        })?;
        pb.finish_and_clear();
        crate::report::write_json(gdir.join("timing.json"), times)?;
        Ok(())
    }

    /// Stage 2: The replay window: this and the previous generations' data.
    pub(super) fn window(&self, g: u32) -> Result<PathBuf, LoopError> {
        let window = generation_dir(self.dir, g).join("window");
        if !window.join(MANIFEST_FILE).exists() {
            clear_partial(&window)?;
            let first = (g + 1).saturating_sub(self.cfg.window);
            let sources: Vec<PathBuf> = (first..=g)
                .map(|k| generation_dir(self.dir, k).join("data"))
                .collect();
            crate::dataset::merge(&sources, &window)?;
        }
        Ok(window)
    }

    /// Stage 3: Training on the window, from the previous generation's weights;
    /// the trained network, loaded.
    pub(super) fn train(
        &self,
        g: u32,
        window: &Path,
        times: &mut StageTimes,
    ) -> Result<Network<G>, LoopError> {
        let cfg = self.cfg;
        let gdir = generation_dir(self.dir, g);
        let net = gdir.join("net");
        let previous = g
            .checked_sub(1)
            .map(|k| generation_dir(self.dir, k).join("net"));
        let dataset = Dataset::open(window)?;
        let model_source = match &previous {
            Some(p) => p.display().to_string(),
            None => cfg.train.model.clone(),
        };
        let (mut model, init_weights) = resolve_model(&model_source, &dataset)?;
        if let ModelConfig::Resnet(r) = &mut model {
            r.policy = true;
            r.policy_planes = G::POLICY_PLANES;
        }
        let fit_cfg = FitConfig {
            data: window.to_path_buf(),
            out: net.clone(),
            model,
            model_source,
            init_weights,
            optimizer: cfg
                .train
                .optimizer
                .unwrap_or(OptimizerConfig::AdamW(AdamWConfig {
                    lr: cfg.train.lr,
                    weight_decay: cfg.train.weight_decay,
                    ..AdamWConfig::default()
                })),
            loss: crate::train::loss::LossKind::Mse,
            l1: 0.0,
            l2: 0.0,
            clip: Some(5.0),
            schedule: ScheduleSpec::Constant,
            warmup_steps: 0,
            epochs: cfg.train.epochs,
            batch_size: cfg.train.batch,
            buffer_rows: 65_536,
            seed: derive_seed(derive_seed(cfg.seed, TRAIN_STREAM), g as u64),
            patience: None,
            save_every: 50,
            device_name: cfg.device.clone(),
            precision: cfg.precision,
            resume: true,
            overwrite: false,
            quiet: self.quiet,
            comparison: None,
            policy_weight: cfg.train.policy_weight,
            augment: false,
            source_weights: Default::default(),
        };
        if !crate::train::run_state::finished(&net) {
            if !self.quiet {
                eprintln!(
                    "generation {g}: training {} on {}",
                    fit_cfg.model.describe(),
                    window.display()
                );
            }
            timed(&mut times.train_wall, &mut times.train_cpu, || {
                fit(&fit_cfg, &self.device)
            })?;
            crate::report::write_json(gdir.join("timing.json"), times)?;
        }
        Network::load(&net, self.size, &self.ctx.eval)
    }

    /// Stage 4: The gate: the new network against the current player.
    pub(super) fn gate(
        &self,
        g: u32,
        net: &Network<G>,
        best: Option<&Network<G>>,
        times: &mut StageTimes,
    ) -> Result<GateResult, LoopError> {
        let cfg = self.cfg;
        let gdir = generation_dir(self.dir, g);
        let gate_path = gdir.join("gate.json");
        if let Some(done) = read_json::<GateResult>(&gate_path)? {
            return Ok(done);
        }
        let (sims, decisive) = (cfg.gate.sims, cfg.selfplay.decisive);
        let current = match best {
            Some(b) => b.mcts_player(sims, decisive)?,
            None => self.bootstrap.clone(),
        };
        let new = net.mcts_player(sims, decisive)?;
        let pb = bar(
            cfg.gate.games as u64,
            format!("generation {g}: gate"),
            self.quiet,
        );
        let r = timed(&mut times.matches_wall, &mut times.matches_cpu, || {
            play_from_random_openings(
                new.player.as_ref(),
                current.player.as_ref(),
                cfg.gate.games,
                cfg.gate.random_plies,
                self.size,
                derive_seed(derive_seed(cfg.seed, GATE_STREAM), g as u64),
                &pb,
            )
        })?;
        pb.finish_and_clear();
        let gate = decide(g, current.label, &r, cfg.gate.margin, cfg.gate.z);
        crate::report::write_json(&gate_path, &gate)?;
        crate::report::write_json(gdir.join("timing.json"), times)?;
        Ok(gate)
    }

    /// Stage 5: Ratings of the new network against the fixed anchors.
    pub(super) fn anchors(
        &self,
        g: u32,
        net: &Network<G>,
        times: &mut StageTimes,
    ) -> Result<Vec<AnchorResult>, LoopError> {
        let cfg = self.cfg;
        let gdir = generation_dir(self.dir, g);
        let anchors_path = gdir.join("anchors.json");
        if let Some(done) = read_json::<Vec<AnchorResult>>(&anchors_path)? {
            return Ok(done);
        }
        let network = net.mcts_player(cfg.gate.sims, cfg.selfplay.decisive)?;
        let anchors =
            build_players::<G>(&cfg.anchors.players, &self.ctx, |i| format!("anchor {i}"))?;
        let mut out = Vec::new();
        for (k, (spec, anchor)) in cfg.anchors.players.iter().zip(&anchors).enumerate() {
            let pb = bar(
                cfg.anchors.games as u64,
                format!("generation {g}: against {spec}"),
                self.quiet,
            );
            let seed = derive_seed(derive_seed(cfg.seed, ANCHOR_STREAM), g as u64);
            let r = timed(&mut times.matches_wall, &mut times.matches_cpu, || {
                play_from_random_openings(
                    network.player.as_ref(),
                    anchor.as_ref(),
                    cfg.anchors.games,
                    cfg.gate.random_plies,
                    self.size,
                    derive_seed(seed, k as u64),
                    &pb,
                )
            })?;
            pb.finish_and_clear();
            out.push(anchor_result(g, spec, &r));
        }
        crate::report::write_json(&anchors_path, &out)?;
        crate::report::write_json(gdir.join("timing.json"), times)?;
        Ok(out)
    }
}
