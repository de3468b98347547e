//! The players an AEI engine can be: their specs, setups and move choice.
//!
//! Specs: `random` (uniform over the distinct legal moves) and `alphabeta`
//! (iterative-deepening alpha-beta on material), each optionally followed by
//! `:key=value,...`:
//!
//! - `depth=N`: the deepest iteration, in whole turns (alphabeta);
//! - `time=SECS`: think at most this long per move (alphabeta); the clock,
//!   when the controller sets one, can shorten it;
//! - `nodes=N`: a node budget per move (alphabeta);
//! - `setup=random|standard`: the setup to answer with (both players;
//!   random by default).
//!
//! ```
//! use plies::protocol::EngineSpec;
//! let spec: EngineSpec = "alphabeta:depth=2,time=0.5".parse().unwrap();
//! assert_eq!(spec.depth, Some(2));
//! assert_eq!(spec.to_string(), "alphabeta:depth=2,time=0.5");
//! ```

use crate::game::arimaa::{Arimaa, Move, PieceType, Setup};
use crate::game::{Game, Side};
use crate::search::alphabeta::{search_with_progress, SearchLimits, SearchResult};
use crate::search::arimaa_material;
use crate::search::SearchError;
use crate::util::SeededRng;
use rand::RngExt;
use std::fmt;
use std::str::FromStr;

/// Which player.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    Random,
    AlphaBeta,
}

/// A player and its settings.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSpec {
    pub kind: EngineKind,
    /// Deepest iteration in whole turns.
    pub depth: Option<u32>,
    /// Think time per move, seconds.
    pub time: Option<f64>,
    /// Node budget per move.
    pub nodes: Option<u64>,
    /// Answer setups with the standard one instead of a random one.
    pub standard_setup: bool,
}

/// The deepest iteration when neither the spec nor the controller sets one.
pub const DEFAULT_DEPTH: u32 = 3;
/// Think time of alphabeta when there is no clock and no `time=` or `depth=`.
pub const DEFAULT_TIME: f64 = 1.0;

impl EngineSpec {
    pub fn new(kind: EngineKind) -> EngineSpec {
        EngineSpec {
            kind,
            depth: None,
            time: None,
            nodes: None,
            standard_setup: false,
        }
    }
}

impl FromStr for EngineSpec {
    type Err = SearchError;
    fn from_str(s: &str) -> Result<Self, SearchError> {
        let bad = |why: String| SearchError::BadSpec {
            spec: s.to_string(),
            why,
        };
        let (kind, args) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        let kind = match kind {
            "random" => EngineKind::Random,
            "alphabeta" => EngineKind::AlphaBeta,
            other => {
                return Err(bad(format!(
                    "unknown player '{other}': expected random or alphabeta[:depth=N,time=SECS,nodes=N,setup=standard]"
                )))
            }
        };
        let mut spec = EngineSpec::new(kind);
        for kv in args.into_iter().flat_map(|a| a.split(',')) {
            let (key, value) = kv
                .split_once('=')
                .ok_or_else(|| bad(format!("'{kv}' is not key=value")))?;
            let searcher_only = |key: &str| {
                if kind == EngineKind::Random {
                    Err(bad(format!("random takes only setup=, not {key}=")))
                } else {
                    Ok(())
                }
            };
            match key {
                "depth" => {
                    searcher_only(key)?;
                    let d: u32 = value
                        .parse()
                        .map_err(|_| bad(format!("depth '{value}' is not a whole number")))?;
                    if d == 0 {
                        return Err(bad("depth must be at least 1".into()));
                    }
                    spec.depth = Some(d);
                }
                "time" => {
                    searcher_only(key)?;
                    let t: f64 = value
                        .parse()
                        .map_err(|_| bad(format!("time '{value}' is not a number of seconds")))?;
                    if !(t > 0.0 && t.is_finite()) {
                        return Err(bad("time must be a positive number of seconds".into()));
                    }
                    spec.time = Some(t);
                }
                "nodes" => {
                    searcher_only(key)?;
                    let n: u64 = value
                        .parse()
                        .map_err(|_| bad(format!("nodes '{value}' is not a whole number")))?;
                    spec.nodes = Some(n.max(1));
                }
                "setup" => {
                    spec.standard_setup = match value {
                        "standard" => true,
                        "random" => false,
                        _ => return Err(bad(format!("setup '{value}' is not random or standard"))),
                    }
                }
                _ => {
                    return Err(bad(format!(
                        "unknown setting '{key}' (known: depth, time, nodes, setup)"
                    )))
                }
            }
        }
        Ok(spec)
    }
}

impl fmt::Display for EngineSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            EngineKind::Random => "random",
            EngineKind::AlphaBeta => "alphabeta",
        })?;
        let mut args = Vec::new();
        if let Some(d) = self.depth {
            args.push(format!("depth={d}"));
        }
        if let Some(t) = self.time {
            args.push(format!("time={t}"));
        }
        if let Some(n) = self.nodes {
            args.push(format!("nodes={n}"));
        }
        if self.standard_setup {
            args.push("setup=standard".into());
        }
        if !args.is_empty() {
            write!(f, ":{}", args.join(","))?;
        }
        Ok(())
    }
}

/// A uniformly random legal setup for `side`: its 16 pieces shuffled over
/// its two home ranks.
pub fn random_setup(side: Side, rng: &mut SeededRng) -> Setup {
    let mut kinds: Vec<PieceType> = PieceType::ALL
        .iter()
        .flat_map(|&k| std::iter::repeat_n(k, PieceType::COUNTS[k as usize] as usize))
        .collect();
    shuffle(&mut kinds, rng);
    let first = match side {
        Side::First => 0u8,
        Side::Second => 48u8,
    };
    let placements = kinds
        .into_iter()
        .enumerate()
        .map(|(i, k)| (first + i as u8, k))
        .collect();
    Setup::new(side, placements).expect("16 pieces on the home ranks")
}

/// Fisher-Yates with the caller's generator.
pub fn shuffle<T>(items: &mut [T], rng: &mut SeededRng) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

/// How one move search is bounded.
#[derive(Clone, Copy, Debug)]
pub struct MoveLimits<'a> {
    pub max_depth: u32,
    pub deadline: Option<std::time::Instant>,
    pub max_nodes: Option<u64>,
    pub stop: &'a std::sync::atomic::AtomicBool,
}

/// The move chosen, with what the search saw (`None` for random).
pub struct Choice {
    pub mv: Move,
    pub search: Option<SearchResult<Move>>,
}

/// Picks a move in `game` (not over). `progress` sees every finished
/// alphabeta iteration.
pub fn choose_move(
    kind: EngineKind,
    game: &Arimaa,
    limits: &MoveLimits<'_>,
    rng: &mut SeededRng,
    progress: impl FnMut(&SearchResult<Move>),
) -> Option<Choice> {
    let mut moves = Vec::new();
    game.legal_moves(&mut moves);
    if moves.is_empty() {
        return None;
    }
    match kind {
        EngineKind::Random => {
            let mv = moves[rng.random_range(0..moves.len())];
            Some(Choice { mv, search: None })
        }
        EngineKind::AlphaBeta => {
            // Random order first, so that equal scores are broken at random.
            shuffle(&mut moves, rng);
            // The search runs on a copy without the game's history (cheap to
            // clone and play); the root moves come from the real game, so
            // the repetition rule is respected where it matters.
            let root = Arimaa::from_position(*game.position(), game.turn_number());
            let sl = SearchLimits {
                max_depth: limits.max_depth.max(1),
                deadline: limits.deadline,
                max_nodes: limits.max_nodes,
                stop: Some(limits.stop),
            };
            let r = search_with_progress(
                &root,
                Some(&moves),
                &arimaa_material::evaluate,
                &sl,
                progress,
            );
            let mv = r.best.unwrap_or(moves[0]);
            Some(Choice {
                mv,
                search: Some(r),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::seeded_rng;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn specs_parse_and_print() {
        for s in [
            "random",
            "alphabeta",
            "alphabeta:depth=2",
            "random:setup=standard",
        ] {
            assert_eq!(s.parse::<EngineSpec>().unwrap().to_string(), s);
        }
        let s: EngineSpec = "alphabeta:nodes=500,time=0.25,setup=standard"
            .parse()
            .unwrap();
        assert_eq!(s.nodes, Some(500));
        assert_eq!(s.time, Some(0.25));
        assert!(s.standard_setup);
        for (bad, why) in [
            ("minimax", "unknown player"),
            ("random:depth=2", "random takes only setup="),
            ("alphabeta:depth=0", "at least 1"),
            ("alphabeta:depth=x", "not a whole number"),
            ("alphabeta:time=-1", "positive"),
            ("alphabeta:speed=3", "unknown setting"),
            ("alphabeta:depth", "not key=value"),
            ("random:setup=clever", "not random or standard"),
        ] {
            let err = bad.parse::<EngineSpec>().unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn random_setups_are_legal_and_reproducible() {
        for side in [Side::First, Side::Second] {
            let a = random_setup(side, &mut seeded_rng(7, 0));
            let b = random_setup(side, &mut seeded_rng(7, 0));
            assert_eq!(a, b);
            let text = a.to_notation();
            assert_eq!(Setup::parse(side, &text).unwrap(), a);
        }
        let a = random_setup(Side::First, &mut seeded_rng(7, 0));
        let c = random_setup(Side::First, &mut seeded_rng(8, 0));
        assert_ne!(a, c);
    }

    #[test]
    fn alphabeta_takes_a_free_piece() {
        // Gold elephant d4 next to a silver cat on c3's neighbour: gold can
        // push the cat d3 -> c3 (a trap with no silver neighbour) and capture it.
        let mut game = Arimaa::from_text(&format!(
            "g {}",
            "r......r\
             ........\
             ........\
             ........\
             ...E....\
             ...c....\
             ........\
             R......R"
        ))
        .unwrap();
        let stop = AtomicBool::new(false);
        let limits = MoveLimits {
            max_depth: 1,
            deadline: None,
            max_nodes: None,
            stop: &stop,
        };
        let c = choose_move(
            EngineKind::AlphaBeta,
            &game,
            &limits,
            &mut seeded_rng(1, 0),
            |_| {},
        )
        .unwrap();
        let text = game.move_to_string(c.mv);
        let r = c.search.unwrap();
        assert!(r.complete && r.depth == 1);
        game.play(c.mv);
        let silver = game.position().material(Side::Second);
        assert_eq!(silver[PieceType::Cat as usize], 0, "{text}");
        assert!(r.score >= 1500, "{} {text}", r.score);
    }
}
