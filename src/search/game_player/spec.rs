//! The player spec grammar: `NAME[:key=value,...]` parsed into a
//! [`GamePlayerSpec`] and written back the same way.

use crate::search::mcts::MctsConfig;
use crate::search::steps::player::{StepsSpec, MAX_STEPS, MIN_STEPS};
use crate::search::SearchError;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// The default chance of ending a `random-steps` turn after each step.
pub const DEFAULT_END_PROB: f64 = 0.1;

/// The deepest `alphabeta` search a spec may ask for.
const MAX_DEPTH: u32 = 64;

/// The deepest `alphabeta` iteration when neither the spec nor the budget
/// sets a depth.
pub const DEFAULT_DEPTH: u32 = 3;

/// A parsed player spec (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub enum GamePlayerSpec {
    /// Uniform over the legal moves ([`RandomPlayer`]).
    Random,
    /// Wins at once, avoids losing at once, else random ([`NaivePlayer`]).
    Naive,
    /// Wins at once, else blocks an immediate win, else random
    /// ([`ExpertPlayer`]; games with immediate wins).
    Expert,
    /// The published NETWORK player: `greedy:CHECKPOINT_DIR` picks the
    /// successor the checkpoint values best; `greedy+:CHECKPOINT_DIR`
    /// scores finished games by their result ([`GreedyPlayer`]).
    Network {
        checkpoint: std::path::PathBuf,
        exact_terminal: bool,
    },
    /// Iterative-deepening negamax alpha-beta with an evaluator, to
    /// `depth` moves ([`DEFAULT_DEPTH`] unless the budget sets one), for at
    /// most `time` and `nodes` a move; ties broken at random.
    AlphaBeta {
        depth: Option<u32>,
        time: Option<Duration>,
        nodes: Option<u64>,
        eval: Option<String>,
    },
    /// The move whose resulting position the evaluator likes best (1 ply).
    Greedy { eval: Option<String> },
    /// Arimaa: a turn built one random step at a time, ending after each
    /// step with probability `end`.
    RandomSteps { end: f64 },
    /// Arimaa: alpha-beta over single steps ([`StepsSpec`]).
    Steps(StepsSpec),
    /// Monte Carlo tree search ([`MctsConfig`] lists the options).
    Mcts(MctsConfig),
    /// OpenSpiel's MCTS bot, run by Python (Amazons, Pentago, Gomoku,
    /// Tic-tac-toe); the options as given.
    SpielMcts(Vec<(String, String)>),
    /// The bucketed MDP learner's model file ([`MdpPlayer`]).
    Mdp { model: std::path::PathBuf },
    /// A move drawn from the Gibbs distribution of a checkpoint's per-point
    /// outputs over the legal points at `temperature` (0: greedy, ties at
    /// random; [`PolicyPlayer`]).
    Policy {
        checkpoint: std::path::PathBuf,
        temperature: f64,
    },
}

impl GamePlayerSpec {
    /// The spec names, for help and errors.
    pub const NAMES: [&'static str; 12] = [
        "random",
        "naive",
        "expert",
        "alphabeta",
        "greedy",
        "greedy+",
        "random-steps",
        "steps",
        "mcts",
        "spiel-mcts",
        "mdp",
        "policy",
    ];
}

pub(super) fn bad(spec: &str, why: impl Into<String>) -> SearchError {
    SearchError::BadSpec {
        spec: spec.to_string(),
        why: why.into(),
    }
}

/// The value of option `key` (`None` when absent), read by `parse`; a
/// value `parse` refuses is an error naming the key, the value and what
/// was `expected`.
pub(super) fn option<T>(
    spec: &str,
    key: &str,
    value: Option<&str>,
    expected: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<Option<T>, SearchError> {
    value
        .map(|text| {
            parse(text).ok_or_else(|| bad(spec, format!("{key} '{text}' is not {expected}")))
        })
        .transpose()
}

/// Names `spec` in an error met while building its player (a bad option,
/// a checkpoint that cannot be loaded), so that a user with several
/// players sees which one failed.
pub(super) fn in_spec(spec: &GamePlayerSpec) -> impl Fn(SearchError) -> SearchError + '_ {
    move |e| match e {
        SearchError::BadSpec { why, .. } => bad(&spec.to_string(), why),
        SearchError::Checkpoint(e) => bad(&spec.to_string(), e.to_string()),
        other => other,
    }
}

impl FromStr for GamePlayerSpec {
    type Err = SearchError;

    fn from_str(s: &str) -> Result<Self, SearchError> {
        let (name, args) = match s.split_once(':') {
            Some((n, a)) => (n.trim(), Some(a)),
            None => (s.trim(), None),
        };
        // `greedy:DIR` and `greedy+:DIR` name a checkpoint directory, not
        // key=value options (`greedy:eval` is an option missing its value).
        match (name, args) {
            ("greedy+", None | Some("")) => return Err(bad(s, "expected greedy+:CHECKPOINT_DIR")),
            ("greedy+", Some(dir)) | ("greedy", Some(dir))
                if !dir.contains('=') && !dir.is_empty() && dir.trim() != "eval" =>
            {
                return Ok(GamePlayerSpec::Network {
                    checkpoint: dir.into(),
                    exact_terminal: name == "greedy+",
                })
            }
            ("mdp", None | Some("")) => return Err(bad(s, "expected mdp:MODEL_FILE")),
            ("mdp", Some(file)) => {
                return Ok(GamePlayerSpec::Mdp {
                    model: file.trim().into(),
                })
            }
            _ => {}
        }
        let mut opts: Vec<(&str, &str)> = Vec::new();
        if let Some(args) = args {
            for part in args.split(',') {
                let (k, v) = part
                    .split_once('=')
                    .ok_or_else(|| bad(s, format!("option '{part}' is not key=value")))?;
                let (k, v) = (k.trim(), v.trim());
                if opts.iter().any(|&(seen, _)| seen == k) {
                    return Err(bad(s, format!("option '{k}' given twice")));
                }
                opts.push((k, v));
            }
        }
        let allowed: &[&str] = match name {
            "random" | "naive" | "expert" => &[],
            "alphabeta" | "steps" => &["depth", "time", "nodes", "eval"],
            "greedy" => &["eval"],
            "random-steps" => &["end"],
            "mcts" => &MctsConfig::KEYS,
            "spiel-mcts" => &["sims", "rollouts", "c", "seed", "impl", "python", "timeout"],
            "policy" => &["ckpt", "temperature"],
            other => {
                return Err(bad(
                    s,
                    format!(
                        "unknown player '{other}'; expected one of {}",
                        Self::NAMES.join(", ")
                    ),
                ))
            }
        };
        for &(k, _) in &opts {
            if !allowed.contains(&k) {
                let expected = if allowed.is_empty() {
                    "it takes no options".to_string()
                } else {
                    format!("expected {}", allowed.join(" or "))
                };
                return Err(bad(
                    s,
                    format!("unknown option '{k}' for {name}: {expected}"),
                ));
            }
        }
        let get = |k: &str| opts.iter().find(|&&(key, _)| key == k).map(|&(_, v)| v);
        let eval = |s: &str| -> Result<Option<String>, SearchError> {
            match get("eval") {
                Some("") => Err(bad(s, "eval= needs an evaluator name")),
                v => Ok(v.map(str::to_string)),
            }
        };
        Ok(match name {
            "random" => GamePlayerSpec::Random,
            "naive" => GamePlayerSpec::Naive,
            "expert" => GamePlayerSpec::Expert,
            "alphabeta" | "steps" => {
                let (least, most) = if name == "steps" {
                    (MIN_STEPS, MAX_STEPS)
                } else {
                    (1, MAX_DEPTH)
                };
                let depth = option(
                    s,
                    "depth",
                    get("depth"),
                    &format!("a whole number in {least}..={most}"),
                    |t| t.parse().ok().filter(|d| (least..=most).contains(d)),
                )?;
                let time = option(
                    s,
                    "time",
                    get("time"),
                    "a positive number of seconds",
                    |t| {
                        let secs: f64 = t.parse().ok().filter(|&t: &f64| t > 0.0)?;
                        Duration::try_from_secs_f64(secs).ok()
                    },
                )?;
                let nodes = option(
                    s,
                    "nodes",
                    get("nodes"),
                    "a whole number of at least 1",
                    |t| t.parse().ok().filter(|&n: &u64| n > 0),
                )?;
                let eval = eval(s)?;
                if name == "steps" {
                    GamePlayerSpec::Steps(StepsSpec {
                        depth,
                        time,
                        nodes,
                        eval,
                    })
                } else {
                    GamePlayerSpec::AlphaBeta {
                        depth,
                        time,
                        nodes,
                        eval,
                    }
                }
            }
            "greedy" => GamePlayerSpec::Greedy { eval: eval(s)? },
            "mcts" => GamePlayerSpec::Mcts(
                MctsConfig::from_pairs(&opts).map_err(|why| bad(s, why.to_string()))?,
            ),
            "spiel-mcts" => GamePlayerSpec::SpielMcts(
                opts.iter()
                    .map(|&(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            "policy" => {
                let checkpoint = match get("ckpt") {
                    Some(dir) if !dir.is_empty() => std::path::PathBuf::from(dir),
                    _ => return Err(bad(s, "expected policy:ckpt=CHECKPOINT_DIR")),
                };
                let temperature = option(
                    s,
                    "temperature",
                    get("temperature"),
                    "a finite number >= 0",
                    |t| t.parse().ok().filter(|&t: &f64| t.is_finite() && t >= 0.0),
                )?
                .unwrap_or(0.0);
                GamePlayerSpec::Policy {
                    checkpoint,
                    temperature,
                }
            }
            _ => {
                let end = option(s, "end", get("end"), "a probability in 0..=1", |t| {
                    t.parse().ok().filter(|p: &f64| (0.0..=1.0).contains(p))
                })?
                .unwrap_or(DEFAULT_END_PROB);
                GamePlayerSpec::RandomSteps { end }
            }
        })
    }
}

impl fmt::Display for GamePlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GamePlayerSpec::Random => f.write_str("random"),
            GamePlayerSpec::Naive => f.write_str("naive"),
            GamePlayerSpec::Expert => f.write_str("expert"),
            GamePlayerSpec::Network {
                checkpoint,
                exact_terminal,
            } => {
                let plus = if *exact_terminal { "+" } else { "" };
                write!(f, "greedy{plus}:{}", checkpoint.display())
            }
            GamePlayerSpec::AlphaBeta {
                depth,
                time,
                nodes,
                eval,
            } => {
                let mut args = Vec::new();
                if let Some(d) = depth {
                    args.push(format!("depth={d}"));
                }
                if let Some(t) = time {
                    args.push(format!("time={}", t.as_secs_f64()));
                }
                if let Some(n) = nodes {
                    args.push(format!("nodes={n}"));
                }
                if let Some(e) = eval {
                    args.push(format!("eval={e}"));
                }
                f.write_str("alphabeta")?;
                if args.is_empty() {
                    Ok(())
                } else {
                    write!(f, ":{}", args.join(","))
                }
            }
            GamePlayerSpec::Greedy { eval: Some(e) } => write!(f, "greedy:eval={e}"),
            GamePlayerSpec::Greedy { eval: None } => f.write_str("greedy"),
            GamePlayerSpec::RandomSteps { end } if *end == DEFAULT_END_PROB => {
                f.write_str("random-steps")
            }
            GamePlayerSpec::RandomSteps { end } => write!(f, "random-steps:end={end}"),
            GamePlayerSpec::Steps(steps) => write!(f, "{steps}"),
            GamePlayerSpec::Mcts(cfg) => write!(f, "{cfg}"),
            GamePlayerSpec::Mdp { model } => write!(f, "mdp:{}", model.display()),
            GamePlayerSpec::Policy {
                checkpoint,
                temperature,
            } => {
                write!(f, "policy:ckpt={}", checkpoint.display())?;
                if *temperature != 0.0 {
                    write!(f, ",temperature={temperature}")?;
                }
                Ok(())
            }
            GamePlayerSpec::SpielMcts(opts) if opts.is_empty() => f.write_str("spiel-mcts"),
            GamePlayerSpec::SpielMcts(opts) => {
                let parts: Vec<String> = opts.iter().map(|(k, v)| format!("{k}={v}")).collect();
                write!(f, "spiel-mcts:{}", parts.join(","))
            }
        }
    }
}
