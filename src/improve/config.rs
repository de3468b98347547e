//! The loop's configuration file (`plies loop --config FILE`, JSON): what
//! each stage of a generation does. Every field but `game` has a default,
//! so a file names only what it changes; an unknown field is refused by
//! name, as is a value out of range.

use super::LoopError;
use crate::infer::plan::Precision;
use crate::optim::OptimizerConfig;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Self-play: games between the current network's MCTS and itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SelfplaySettings {
    /// Games per generation.
    pub games: u64,
    /// MCTS simulations per move with the network.
    pub sims: u64,
    /// Simulations per move of the bootstrap search (UCT with random
    /// playouts to the end) that plays generation 0, before any network.
    pub bootstrap_sims: u64,
    /// Another bootstrap: any player spec (`alphabeta:depth=2,eval=E`)
    /// plays the games until a network is promoted, and is the gate's
    /// opponent until then; its policy targets are the moves it chose.
    /// `None`: UCT at `bootstrap_sims`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bootstrap: Option<String>,
    /// Moves drawn in proportion to the root's visits (temperature 1) for
    /// this many plies of each game, the most visited afterwards; a
    /// `bootstrap` player, which has no visits, plays uniformly random
    /// moves for these plies (with no policy target) and its choice after.
    pub temperature_plies: u32,
    /// Dirichlet noise on the root's priors: concentration and share.
    pub dirichlet_alpha: f64,
    pub dirichlet_fraction: f64,
    /// PUCT's exploration constant.
    pub c_puct: f64,
    /// Largest batch of the batched evaluator service shared by the games
    /// played at once (0: none; every game calls the model itself, which
    /// makes the games bit-for-bit reproducible on the CPU).
    pub batch: usize,
    /// Policy targets keep only the visits beyond the fewest any root child
    /// got: UCT visits every child once before any twice, and where moves
    /// are many (Pentago's 288 at 400 simulations) those forced visits
    /// would make the targets mostly uniform.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prune_forced_visits: bool,
    /// Every search of the loop (self-play, the bootstrap, the gate's and
    /// the anchors' network player) plays a move that wins at once when
    /// there is one (`mcts:decisive=on`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub decisive: bool,
}

impl Default for SelfplaySettings {
    fn default() -> Self {
        SelfplaySettings {
            games: 200,
            sims: 100,
            bootstrap_sims: 400,
            bootstrap: None,
            temperature_plies: 8,
            dirichlet_alpha: 1.0,
            dirichlet_fraction: 0.25,
            c_puct: 1.5,
            batch: 0,
            prune_forced_visits: false,
            decisive: false,
        }
    }
}

/// Training on the replay window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainSettings {
    /// The model: a `plies train --model` preset or JSON file; a residual
    /// net gets its policy head.
    pub model: String,
    pub epochs: usize,
    pub batch: usize,
    /// AdamW's learning rate and weight decay.
    pub lr: f64,
    pub weight_decay: f64,
    /// Another optimizer, as `plies train` configs write it (`{"kind":
    /// "momentum", "nesterov": true, "lr": 0.001}`); when given it replaces
    /// `lr` and `weight_decay`. Small plain steps keep a value head that
    /// starts from material near it, where AdamW's moves every weight by
    /// about `lr` a step whatever its gradient.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<OptimizerConfig>,
    /// Weight of the policy cross-entropy beside the value loss.
    pub policy_weight: f64,
}

impl Default for TrainSettings {
    fn default() -> Self {
        TrainSettings {
            model: "resnet-tiny".into(),
            epochs: 4,
            batch: 128,
            lr: 2e-3,
            weight_decay: 1e-4,
            optimizer: None,
            policy_weight: 1.0,
        }
    }
}

/// The gate: the new network against the current one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GateSettings {
    pub games: usize,
    /// Simulations per move of both sides.
    pub sims: u64,
    /// Random moves from the start before each game (variety: the
    /// searches are otherwise nearly deterministic).
    pub random_plies: u32,
    /// Promoted when the new network scores at least `0.5 + margin` and
    /// its score's lower confidence bound (`score - z * se`) is above 0.5.
    pub margin: f64,
    pub z: f64,
}

impl Default for GateSettings {
    fn default() -> Self {
        GateSettings {
            games: 40,
            sims: 100,
            random_plies: 2,
            margin: 0.05,
            z: 1.28,
        }
    }
}

/// Fixed opponents every generation's network is rated against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AnchorSettings {
    /// Player specs (`random`, `naive`, `alphabeta:depth=4,eval=threats`,
    /// `spiel-mcts:sims=100`, ...).
    pub players: Vec<String>,
    pub games: usize,
}

impl Default for AnchorSettings {
    fn default() -> Self {
        AnchorSettings {
            players: vec!["random".into(), "naive".into()],
            games: 20,
        }
    }
}

/// A whole loop.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopConfig {
    /// The game's name (`connect-four`, `gomoku`, ...).
    pub game: String,
    /// Board size (`None`: the game's standard board).
    #[serde(default)]
    pub size: Option<usize>,
    /// The encoder the networks read.
    #[serde(default = "default_encoder")]
    pub encoder: String,
    #[serde(default = "default_generations")]
    pub generations: u32,
    /// Self-play datasets of this many latest generations train each network.
    #[serde(default = "default_window")]
    pub window: u32,
    #[serde(default)]
    pub seed: u64,
    /// Threads for self-play and matches (0: all cores).
    #[serde(default)]
    pub threads: usize,
    /// `cpu`, `cuda:N`: where networks train and evaluate.
    #[serde(default = "default_device")]
    pub device: String,
    /// What networks compute in on `device`: self-play's evaluators and
    /// the training steps (which keep f32 master weights). Below f32 on a
    /// GPU only.
    #[serde(default, skip_serializing_if = "is_f32")]
    pub precision: Precision,
    #[serde(default)]
    pub selfplay: SelfplaySettings,
    #[serde(default)]
    pub train: TrainSettings,
    #[serde(default)]
    pub gate: GateSettings,
    #[serde(default)]
    pub anchors: AnchorSettings,
}

fn default_encoder() -> String {
    "stones-2".into()
}
fn default_generations() -> u32 {
    5
}
fn default_window() -> u32 {
    3
}
fn default_device() -> String {
    "cpu".into()
}
fn is_f32(p: &Precision) -> bool {
    *p == Precision::F32
}

impl LoopConfig {
    /// Reads and checks a configuration file.
    pub fn read(path: &Path) -> Result<Self, LoopError> {
        let text = crate::util::text::read_text(path).map_err(|source| LoopError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let cfg: LoopConfig = serde_json::from_str(&text).map_err(|e| LoopError::Config {
            path: path.to_path_buf(),
            why: format!("line {}, column {}: {e}", e.line(), e.column()),
        })?;
        cfg.check().map_err(|why| LoopError::Config {
            path: path.to_path_buf(),
            why,
        })?;
        Ok(cfg)
    }

    /// The first value out of range, by field name.
    pub fn check(&self) -> Result<(), String> {
        let positive = [
            ("generations", self.generations as u64),
            ("window", self.window as u64),
            ("selfplay.games", self.selfplay.games),
            ("selfplay.sims", self.selfplay.sims),
            ("selfplay.bootstrap_sims", self.selfplay.bootstrap_sims),
            ("train.epochs", self.train.epochs as u64),
            ("train.batch", self.train.batch as u64),
            ("gate.games", self.gate.games as u64),
            ("gate.sims", self.gate.sims),
        ];
        if let Some((field, _)) = positive.iter().find(|(_, v)| *v == 0) {
            return Err(format!("`{field}` is 0, expected at least 1"));
        }
        if self.precision != Precision::F32 && self.device == "cpu" {
            return Err(format!(
                "`precision` is {}, but `device` is cpu, whose evaluators run f32; \
                 use a GPU (`\"device\": \"cuda\"`) or f32",
                self.precision
            ));
        }
        let finite = [
            (
                "selfplay.dirichlet_alpha",
                self.selfplay.dirichlet_alpha,
                1e-6,
                1e6,
            ),
            (
                "selfplay.dirichlet_fraction",
                self.selfplay.dirichlet_fraction,
                0.0,
                1.0,
            ),
            ("selfplay.c_puct", self.selfplay.c_puct, 0.0, 1e6),
            ("train.lr", self.train.lr, 1e-12, 10.0),
            ("train.weight_decay", self.train.weight_decay, 0.0, 1.0),
            ("train.policy_weight", self.train.policy_weight, 0.0, 1e6),
            ("gate.margin", self.gate.margin, 0.0, 0.5),
            ("gate.z", self.gate.z, 0.0, 10.0),
        ];
        for (field, v, lo, hi) in finite {
            if !(v.is_finite() && (lo..=hi).contains(&v)) {
                return Err(format!(
                    "`{field}` is {v}, expected a number in [{lo}, {hi}]"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_a_short_file_and_errors_name_the_field() {
        let cfg: LoopConfig =
            serde_json::from_str(r#"{"game": "connect-four", "selfplay": {"games": 8}}"#).unwrap();
        assert_eq!(cfg.selfplay.games, 8);
        assert_eq!(cfg.selfplay.sims, SelfplaySettings::default().sims);
        assert_eq!(cfg.encoder, "stones-2");
        assert!(cfg.check().is_ok());
        let unknown =
            serde_json::from_str::<LoopConfig>(r#"{"game": "x", "selfplay": {"gmes": 1}}"#)
                .unwrap_err()
                .to_string();
        assert!(unknown.contains("gmes"), "{unknown}");
        let zero = LoopConfig {
            window: 0,
            ..cfg.clone()
        };
        assert!(zero.check().unwrap_err().contains("`window`"));
        let mut bad = cfg.clone();
        bad.gate.margin = 0.7;
        assert!(bad.check().unwrap_err().contains("`gate.margin`"));
        // Precision: f32 by default and not written; below f32 on a GPU only.
        assert_eq!(cfg.precision, Precision::F32);
        assert!(!serde_json::to_string(&cfg).unwrap().contains("precision"));
        let gpu: LoopConfig =
            serde_json::from_str(r#"{"game": "gomoku", "device": "cuda", "precision": "bf16"}"#)
                .unwrap();
        assert_eq!(gpu.precision, Precision::Bf16);
        assert!(gpu.check().is_ok());
        assert!(serde_json::to_string(&gpu)
            .unwrap()
            .contains(r#""precision":"bf16""#));
        let cpu = LoopConfig {
            device: "cpu".into(),
            ..gpu
        };
        let e = cpu.check().unwrap_err();
        assert!(
            e.contains("`precision` is bf16") && e.contains("cpu"),
            "{e}"
        );
        let e = serde_json::from_str::<LoopConfig>(r#"{"game": "gomoku", "precision": "fp8"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("fp8") && e.contains("expected f32, tf32 or bf16"),
            "{e}"
        );
    }

    /// `train.optimizer` reads as `plies train` configs write it; a config
    /// without it keeps AdamW and writes no such field.
    #[test]
    fn train_optimizer_reads_as_train_configs_write_it() {
        let text = r#"{"game": "arimaa-steps", "train": {"optimizer":
            {"kind": "momentum", "nesterov": true, "momentum": 0.9, "lr": 0.001}}}"#;
        let cfg: LoopConfig = serde_json::from_str(text).unwrap();
        let expected = OptimizerConfig::Momentum(crate::optim::MomentumConfig {
            lr: 0.001,
            momentum: 0.9,
            nesterov: true,
            ..Default::default()
        });
        assert_eq!(cfg.train.optimizer, Some(expected));
        let plain: LoopConfig = serde_json::from_str(r#"{"game": "pentago"}"#).unwrap();
        assert_eq!(plain.train.optimizer, None);
        let written = serde_json::to_string(&plain).unwrap();
        assert!(!written.contains("optimizer"), "{written}");
        let bad = r#"{"game": "pentago", "train": {"optimizer": {"kind": "adagrad"}}}"#;
        let e = serde_json::from_str::<LoopConfig>(bad)
            .unwrap_err()
            .to_string();
        assert!(e.contains("adagrad"), "{e}");
    }

    #[test]
    fn a_config_file_with_a_byte_order_mark_reads_as_without() {
        let dir = tempfile::tempdir().unwrap();
        let text = r#"{"game": "connect-four", "selfplay": {"games": 8}}"#;
        let plain = dir.path().join("plain.json");
        let marked = dir.path().join("marked.json");
        std::fs::write(&plain, text).unwrap();
        std::fs::write(&marked, format!("\u{feff}{text}")).unwrap();
        let a = LoopConfig::read(&plain).unwrap();
        let b = LoopConfig::read(&marked).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn every_shipped_config_reads_and_a_gpu_one_batches_its_games() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/loop");
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        assert!(files.len() >= 5, "{files:?}");
        let mut gpu = 0;
        for file in &files {
            let cfg = LoopConfig::read(file).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                cfg.game.parse::<crate::games::GameKind>().is_ok(),
                "{}: game {}",
                file.display(),
                cfg.game
            );
            if cfg.device.starts_with("cuda") {
                gpu += 1;
                // The service's batches fill only from games played at once.
                let batch = cfg.selfplay.batch;
                assert!(
                    batch > 1 && cfg.threads >= batch,
                    "{}: batch {batch}, threads {}",
                    file.display(),
                    cfg.threads
                );
            }
        }
        assert_eq!(gpu, 1, "the GPU config is data/loop/gomoku-15-gpu.json");
    }
}
