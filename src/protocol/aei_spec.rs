//! What `plies engine aei` plays: any Arimaa player of the one spec
//! grammar ([`GamePlayerSpec`]: `random`, `alphabeta`, `greedy`,
//! `greedy:CKPT`, `mcts`, `random-steps`, with `material`, `random` or
//! `ckpt:PATH` as evaluator), plus `setup=random|standard`, the setup it
//! answers with in the setup phase (random by default); and AEI's score
//! unit, the centi-rabbit.
//!
//! Time: the controller's clock becomes the [`Budget`] of every search,
//! and the player keeps its own limits (`time=`, `depth=`, `sims=`):
//! whichever is tighter wins. An `alphabeta` with no limit of its own
//! thinks for [`DEFAULT_TIME`] when there is no clock. `stop` raises the
//! budget's stop flag: the search answers with the best move found so far.
//!
//! ```
//! use plies::protocol::EngineSpec;
//! let spec: EngineSpec = "alphabeta:depth=2,time=0.5".parse().unwrap();
//! assert_eq!(spec.to_string(), "alphabeta:depth=2,time=0.5");
//! let spec: EngineSpec = "mcts:sims=200,threads=2,eval=material,setup=standard"
//!     .parse()
//!     .unwrap();
//! assert!(spec.standard_setup);
//! assert_eq!(spec.to_string(), "mcts:sims=200,threads=2,eval=material,setup=standard");
//! let err = "mcts:simz=3".parse::<EngineSpec>().unwrap_err().to_string();
//! assert!(err.contains("unknown option 'simz' for mcts"), "{err}");
//! ```

use crate::infer::hand::arimaa_material::CLEAR_ADVANTAGE;
use crate::search::alphabeta::WIN_THRESHOLD;
use crate::search::game_player::{AlphaBetaSpec, GamePlayerSpec, SearchOptions};
use crate::search::{Budget, Score, SearchError};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Think time of an `alphabeta` with no limit of its own when there is no
/// clock and no `depth` option.
pub const DEFAULT_TIME: Duration = Duration::from_secs(1);

/// A player and the setup it answers with.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSpec {
    pub player: GamePlayerSpec,
    /// Answer setups with the standard one instead of a random one.
    pub standard_setup: bool,
}

impl EngineSpec {
    /// Whether the player sets no limit of its own on a move's search, so
    /// that without a clock the engine gives it [`DEFAULT_TIME`].
    pub fn unbounded(&self) -> bool {
        matches!(
            self.player,
            GamePlayerSpec::AlphaBeta(AlphaBetaSpec(SearchOptions {
                depth: None,
                time: None,
                nodes: None,
                ..
            }))
        )
    }

    /// The budget of a search for a move: the clock's time for it (none
    /// while pondering) or, for an unbounded player with neither clock nor
    /// depth option, [`DEFAULT_TIME`]; the depth option (in whole turns).
    pub fn budget(&self, clock: Option<Duration>, depth: Option<u32>, ponder: bool) -> Budget {
        let clock = if ponder { None } else { clock };
        let default = !ponder && depth.is_none() && self.unbounded();
        Budget {
            time: clock.or(default.then_some(DEFAULT_TIME)),
            depth,
            ..Budget::UNLIMITED
        }
    }
}

impl FromStr for EngineSpec {
    type Err = SearchError;

    /// A player spec of [`GamePlayerSpec`]'s grammar, where `setup=` may
    /// stand among the options.
    fn from_str(s: &str) -> Result<Self, SearchError> {
        let bad = |why: String| SearchError::BadSpec {
            spec: s.to_string(),
            why,
        };
        let (name, args) = match s.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (s, None),
        };
        let mut standard_setup = false;
        let mut kept = Vec::new();
        for part in args.into_iter().flat_map(|a| a.split(',')) {
            match part.trim().strip_prefix("setup=") {
                Some("standard") => standard_setup = true,
                Some("random") => standard_setup = false,
                Some(other) => {
                    return Err(bad(format!("setup '{other}' is not random or standard")))
                }
                None => kept.push(part),
            }
        }
        let player_text = if kept.is_empty() {
            name.to_string()
        } else {
            format!("{name}:{}", kept.join(","))
        };
        let player = player_text.parse().map_err(|e| match e {
            SearchError::BadSpec { why, .. } => bad(why),
            other => other,
        })?;
        Ok(EngineSpec {
            player,
            standard_setup,
        })
    }
}

impl fmt::Display for EngineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let player = self.player.to_string();
        f.write_str(&player)?;
        if self.standard_setup {
            let sep = if player.contains(':') { ',' } else { ':' };
            write!(f, "{sep}setup=standard")?;
        }
        Ok(())
    }
}

/// A score in AEI's centi-rabbits: material's millirabbits divided by
/// ten, a value on `[-1, 1]` through the inverse of the squashing
/// `tanh(millirabbits / 4000)` that makes material a value (so `material`
/// reads the same through every player), forced results far beyond any
/// material score.
pub fn centi_rabbits(score: Score) -> i64 {
    match score {
        Score::Hand(s) if s.abs() >= WIN_THRESHOLD => s.signum() as i64 * 100_000,
        Score::Hand(s) => s as i64 / 10,
        Score::Value(v) if !v.is_finite() => 0,
        Score::Value(v) => {
            let scale = CLEAR_ADVANTAGE as f64 / 10.0;
            (scale * v.clamp(-0.9999, 0.9999).atanh()).round() as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::alphabeta::WIN;

    #[test]
    fn specs_parse_and_print_with_their_setup() {
        for s in [
            "random",
            "alphabeta",
            "alphabeta:depth=2",
            "random:setup=standard",
            "greedy:eval=ckpt:runs/x/best,setup=standard",
            "greedy+:runs/x/best,setup=standard",
            "alphabeta:depth=1,time=0.5,nodes=100,eval=random,setup=standard",
            "mcts:sims=2000,threads=2,eval=ckpt:out/arimaa-cnn3/best",
            "mcts:time=0.5,eval=material,rollout=4,puct=off,c=2,reuse=off,setup=standard",
            "random-steps:end=0.25",
        ] {
            let spec: EngineSpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
            assert_eq!(spec.to_string().parse::<EngineSpec>().unwrap(), spec);
        }
        // setup= may stand anywhere among the options.
        let s: EngineSpec = "mcts:setup=standard,eval=ckpt:a/b,threads=2,sims=300"
            .parse()
            .unwrap();
        assert!(s.standard_setup);
        assert_eq!(
            s.to_string(),
            "mcts:sims=300,threads=2,eval=ckpt:a/b,setup=standard"
        );
        assert!(
            !"greedy:setup=random"
                .parse::<EngineSpec>()
                .unwrap()
                .standard_setup
        );
    }

    #[test]
    fn spec_errors_name_the_spec_and_what_is_wrong() {
        for (bad, why) in [
            ("minimax", "unknown player 'minimax'"),
            ("random:depth=2", "takes no options"),
            ("alphabeta:depth=0", "depth '0'"),
            ("alphabeta:time=-1", "time '-1'"),
            ("alphabeta:speed=3", "unknown option 'speed'"),
            ("alphabeta:depth", "not key=value"),
            (
                "random:setup=clever",
                "setup 'clever' is not random or standard",
            ),
            ("mcts:simz=3", "unknown option 'simz' for mcts"),
            ("mcts:sims=x", "sims=x"),
        ] {
            let err = bad.parse::<EngineSpec>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
            assert!(err.contains(&format!("'{bad}'")), "{bad}: {err}");
        }
    }

    #[test]
    fn the_clock_the_depth_option_and_the_default_time_make_the_budget() {
        let open: EngineSpec = "alphabeta".parse().unwrap();
        let deep: EngineSpec = "alphabeta:depth=2".parse().unwrap();
        let second = Duration::from_millis(1500);
        assert_eq!(open.budget(None, None, false).time, Some(DEFAULT_TIME));
        assert_eq!(open.budget(Some(second), None, false).time, Some(second));
        assert_eq!(open.budget(None, Some(2), false).time, None);
        assert_eq!(open.budget(Some(second), None, true).time, None);
        assert_eq!(deep.budget(None, None, false).time, None);
        assert_eq!(deep.budget(None, Some(1), false).depth, Some(1));
        let mcts: EngineSpec = "mcts:sims=10".parse().unwrap();
        assert!(!mcts.unbounded() && open.unbounded() && !deep.unbounded());
    }

    #[test]
    fn scores_in_centi_rabbits() {
        assert_eq!(centi_rabbits(Score::Hand(1000)), 100);
        assert_eq!(centi_rabbits(Score::Hand(-1500)), -150);
        assert_eq!(centi_rabbits(Score::Hand(WIN - 1)), 100_000);
        assert_eq!(centi_rabbits(Score::Hand(-(WIN - 1))), -100_000);
        // A value reads as the material score it squashes.
        assert_eq!(centi_rabbits(Score::Value((1000f64 / 4000.0).tanh())), 100);
        assert_eq!(
            centi_rabbits(Score::Value(-(1500f64 / 4000.0).tanh())),
            -150
        );
        assert_eq!(centi_rabbits(Score::Value(0.0)), 0);
        assert_eq!(centi_rabbits(Score::Value(f64::NAN)), 0);
    }
}
