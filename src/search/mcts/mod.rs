//! Monte Carlo tree search: UCT with random playouts (cut off at a depth
//! and scored by an evaluator, or played to the end), and PUCT with the
//! priors and values of a network's policy and value heads. Many threads
//! share one tree with virtual losses; a game session reuses the subtree of
//! the position reached between its moves. With one thread a search is a
//! function of its seed.
//!
//! ```
//! use plies::game::{Game, TicTacToe};
//! use plies::search::mcts::{MctsConfig, MctsPlayer};
//! use plies::search::Player;
//! let cfg: MctsConfig = "sims=400".parse().unwrap();
//! let player = MctsPlayer::<TicTacToe>::new(cfg, None).unwrap();
//! // x on a1 and b1; it is x's turn again after o's b2: c1 wins at once.
//! let mut g = TicTacToe::new();
//! for m in ["a1", "b2", "b1", "c3"] { g.play_str(m).unwrap(); }
//! let mv = player.choose(&g, &mut plies::util::seeded_rng(1, 0)).unwrap();
//! assert_eq!(g.move_to_string(mv), "c1");
//! ```

mod noise;
mod player;
mod search;
#[cfg(test)]
mod search_tests;
mod tree;

pub use noise::RootNoise;
pub use player::{MctsPlayer, MctsSession};
pub use search::{best_move, run_search, SearchStats};
pub use tree::{Edge, Node};

use crate::search::OptionError;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// How a new leaf is valued before its value is backed up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollout {
    /// Random moves up to this many, then the evaluator (0: the evaluator
    /// at the leaf itself).
    Plies(u32),
    /// Random moves to the end of the game.
    ToEnd,
}

/// Search settings; parsed from `key=value` pairs (see [`MctsConfig::KEYS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MctsConfig {
    /// Simulations per move (new ones; a reused subtree's visits are extra).
    pub simulations: u64,
    /// Thinking time per move; the search stops at whichever limit comes first.
    pub time: Option<Duration>,
    pub threads: usize,
    /// Exploration constant (UCT's c, or PUCT's c_puct); `None`: 1.4 for
    /// UCT, 1.5 for PUCT.
    pub c: Option<f64>,
    pub rollout: Rollout,
    /// PUCT (priors from the evaluator's policy, uniform without one)
    /// instead of UCT; `None`: PUCT exactly when the evaluator has a policy
    /// head (uniform priors spread a few hundred simulations too thinly
    /// over wide move lists).
    pub puct: Option<bool>,
    /// Losses counted per thread in flight below a node.
    pub virtual_loss: f64,
    /// Keep the subtree of the position reached for the next move.
    pub reuse: bool,
    /// The evaluator's name (`eval=`), resolved by the caller.
    pub eval: Option<String>,
    /// Largest batch of the batched evaluator service a checkpoint
    /// evaluator runs behind (`batch=`; `None`: three quarters of the
    /// threads on the CPU, all of them on a GPU, when there is more than one
    /// thread; 0: no service, every thread calls the model itself).
    pub batch: Option<usize>,
    /// Dirichlet noise on the priors of a root this search expands
    /// (self-play's exploration; not part of the spec grammar).
    pub root_noise: Option<RootNoise>,
    /// Decisive moves (`decisive=on`): a node whose side to move has a move
    /// that wins at once gets that move as its only child. Costs playing
    /// every move of each expanded node once; where moves are many and the
    /// simulations few (Pentago's 288 moves) the search otherwise may never
    /// try the winning one.
    pub decisive: bool,
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            simulations: 1000,
            time: None,
            threads: 1,
            c: None,
            rollout: Rollout::ToEnd,
            puct: None,
            virtual_loss: 1.0,
            reuse: true,
            eval: None,
            batch: None,
            root_noise: None,
            decisive: false,
        }
    }
}

impl MctsConfig {
    /// The option keys of an `mcts:` spec.
    pub const KEYS: [&'static str; 11] = [
        "sims", "time", "threads", "eval", "rollout", "c", "puct", "vloss", "reuse", "batch",
        "decisive",
    ];

    /// Whether the search runs PUCT, for an evaluator with or without a
    /// policy head.
    pub fn uses_puct(&self, has_policy: bool) -> bool {
        self.puct.unwrap_or(has_policy)
    }

    /// The exploration constant for UCT or PUCT.
    pub fn exploration(&self, puct: bool) -> f64 {
        self.c.unwrap_or(if puct { 1.5 } else { 1.4 })
    }

    /// The batch size of the evaluator service for a checkpoint
    /// evaluator on the CPU, `None` for no service. By default three
    /// quarters of the threads (rounded up): some threads are always
    /// walking the tree, and waiting for all of them left the model idle
    /// (on 2 cores, 32 threads: about 15% more simulations/s with batches
    /// of 24 than 32).
    pub fn service_batch(&self) -> Option<usize> {
        self.service_batch_on(false)
    }

    /// [`MctsConfig::service_batch`] for a model on a GPU (`gpu`): there
    /// the default is every thread's leaf in one batch, since a GPU's
    /// forward pass costs about the same for a few positions as for
    /// hundreds, and the CPU threads walking the tree are not what waits.
    pub fn service_batch_on(&self, gpu: bool) -> Option<usize> {
        match self.batch {
            Some(0) => None,
            Some(n) => Some(n),
            None if self.threads > 1 && gpu => Some(self.threads),
            None if self.threads > 1 => Some(self.threads - self.threads / 4),
            None => None,
        }
    }

    /// Builds a config from `key=value` pairs; the error names the bad key
    /// or value. Without `eval` leaves are valued by playouts to the end;
    /// with one, at the leaf (`rollout=0`) unless `rollout` says otherwise;
    /// `puct` defaults to on for evaluators with a policy head and `c` to
    /// 1.4 for UCT and 1.5 for PUCT.
    pub fn from_pairs(pairs: &[(&str, &str)]) -> Result<Self, OptionError> {
        let mut cfg = MctsConfig::default();
        let mut rollout = None;
        let mut puct = None;
        let mut c = None;
        let mut sims_given = false;
        for &(k, v) in pairs {
            let num = |what: &str| -> Result<f64, OptionError> {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && *x >= 0.0)
                    .ok_or_else(|| OptionError::bad(k, v, what))
            };
            let whole = || -> Result<u64, OptionError> {
                v.parse::<u64>()
                    .map_err(|_| OptionError::bad(k, v, "a whole number"))
            };
            let flag = || -> Result<bool, OptionError> {
                match v {
                    "on" | "true" | "1" => Ok(true),
                    "off" | "false" | "0" => Ok(false),
                    _ => Err(OptionError::bad(k, v, "on or off")),
                }
            };
            match k {
                "sims" => {
                    cfg.simulations = whole()?;
                    sims_given = true;
                }
                "time" => cfg.time = Some(Duration::from_secs_f64(num("seconds")?)),
                "threads" => {
                    cfg.threads = whole()? as usize;
                    if !(1..=1024).contains(&cfg.threads) {
                        return Err(OptionError::bad(k, v, "a number of threads in 1..=1024"));
                    }
                }
                "eval" if v.is_empty() => {
                    return Err(OptionError::Inconsistent("eval= needs an evaluator name"))
                }
                "eval" => cfg.eval = Some(v.to_string()),
                "rollout" if v == "end" => rollout = Some(Rollout::ToEnd),
                "rollout" => rollout = Some(Rollout::Plies(whole()? as u32)),
                "c" => c = Some(num("a number >= 0")?),
                "puct" => puct = Some(flag()?),
                "vloss" => cfg.virtual_loss = num("a number >= 0")?,
                "reuse" => cfg.reuse = flag()?,
                "batch" => cfg.batch = Some(whole()? as usize),
                "decisive" => cfg.decisive = flag()?,
                _ => {
                    return Err(OptionError::Unknown {
                        key: k.to_string(),
                        player: "mcts",
                        known: Self::KEYS.join(", "),
                    })
                }
            }
        }
        let has_eval = cfg.eval.is_some();
        cfg.rollout = rollout.unwrap_or(if has_eval {
            Rollout::Plies(0)
        } else {
            Rollout::ToEnd
        });
        cfg.puct = puct;
        cfg.c = c;
        if cfg.rollout == Rollout::Plies(0) && !has_eval {
            return Err(OptionError::Inconsistent(
                "rollout=0 values leaves by the evaluator alone: give eval=NAME",
            ));
        }
        if cfg.time.is_some() && !sims_given {
            cfg.simulations = 0;
        }
        if cfg.simulations == 0 && cfg.time.is_none() {
            return Err(OptionError::Inconsistent(
                "sims=0 needs a time limit (time=SECONDS)",
            ));
        }
        if cfg.simulations == 0 {
            cfg.simulations = u64::MAX;
        }
        Ok(cfg)
    }
}

impl FromStr for MctsConfig {
    type Err = OptionError;
    /// `key=value,key=value` (the part after `mcts:`).
    fn from_str(s: &str) -> Result<Self, OptionError> {
        let mut pairs = Vec::new();
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| OptionError::NotKeyValue(part.to_string()))?;
            pairs.push((k.trim(), v.trim()));
        }
        MctsConfig::from_pairs(&pairs)
    }
}

impl fmt::Display for MctsConfig {
    /// The spec that builds this config (defaults left out).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "mcts:")?;
        let mut parts = Vec::new();
        if self.simulations != u64::MAX {
            parts.push(format!("sims={}", self.simulations));
        }
        if let Some(t) = self.time {
            parts.push(format!("time={}", t.as_secs_f64()));
        }
        if self.threads != 1 {
            parts.push(format!("threads={}", self.threads));
        }
        if let Some(e) = &self.eval {
            parts.push(format!("eval={e}"));
            match self.rollout {
                Rollout::Plies(0) => {}
                Rollout::Plies(n) => parts.push(format!("rollout={n}")),
                Rollout::ToEnd => parts.push("rollout=end".into()),
            }
        } else if let Rollout::Plies(n) = self.rollout {
            parts.push(format!("rollout={n}"));
        }
        if let Some(p) = self.puct {
            parts.push(format!("puct={}", if p { "on" } else { "off" }));
        }
        if let Some(c) = self.c {
            parts.push(format!("c={c}"));
        }
        if self.virtual_loss != 1.0 {
            parts.push(format!("vloss={}", self.virtual_loss));
        }
        if !self.reuse {
            parts.push("reuse=off".into());
        }
        if let Some(b) = self.batch {
            parts.push(format!("batch={b}"));
        }
        if self.decisive {
            parts.push("decisive=on".into());
        }
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_batch_defaults_to_the_device() {
        let c: MctsConfig = "sims=100,threads=512,eval=mindist".parse().unwrap();
        assert_eq!(c.service_batch(), Some(384));
        assert_eq!(c.service_batch_on(true), Some(512));
        let one: MctsConfig = "sims=100".parse().unwrap();
        assert_eq!(one.service_batch_on(true), None);
        let set: MctsConfig = "sims=100,threads=512,batch=64".parse().unwrap();
        assert_eq!(set.service_batch_on(true), Some(64));
        let off: MctsConfig = "sims=100,threads=512,batch=0".parse().unwrap();
        assert_eq!(off.service_batch_on(true), None);
    }

    #[test]
    fn options_parse_with_defaults_and_print_back() {
        let c: MctsConfig = "sims=800,threads=8,eval=mindist".parse().unwrap();
        assert_eq!(c.simulations, 800);
        assert_eq!(c.threads, 8);
        assert_eq!(c.rollout, Rollout::Plies(0));
        assert!(c.uses_puct(true) && !c.uses_puct(false));
        assert_eq!(c.exploration(true), 1.5);
        let plain: MctsConfig = "sims=100".parse().unwrap();
        assert_eq!(plain.rollout, Rollout::ToEnd);
        assert_eq!(plain.exploration(false), 1.4);
        for text in [
            "mcts:sims=800,threads=8,eval=mindist",
            "mcts:sims=100",
            "mcts:sims=50,eval=material,rollout=4,puct=off,c=2,reuse=off",
            "mcts:sims=50,threads=4,eval=ckpt:x,batch=0",
            "mcts:time=0.5",
        ] {
            let c: MctsConfig = text["mcts:".len()..].parse().unwrap();
            assert_eq!(c.to_string(), text);
        }
    }

    #[test]
    fn bad_options_are_named() {
        let err = |s: &str| s.parse::<MctsConfig>().unwrap_err().to_string();
        assert!(err("simz=3").contains("unknown option 'simz'"));
        assert!(err("sims=x").contains("sims=x: expected a whole number"));
        assert!(err("threads=0").contains("threads=0"));
        assert!(err("c=-1").contains("c=-1"));
        assert!(err("puct=maybe").contains("puct=maybe: expected on or off"));
        assert!(err("rollout=0").contains("eval=NAME"));
        assert!(err("sims=0").contains("time="));
        assert!(err("sims").contains("'sims' is not key=value"));
    }
}
