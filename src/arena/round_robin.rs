//! Round-robin tournaments: every pair of players meets for the same number
//! of games with colours alternating, all games of all pairs in parallel;
//! per-pair results with an Elo difference, and one rating per player
//! fitted on all games ([`super::fit_ratings`]).
//!
//! Pair `p` (pairs in the order (0,1), (0,2), ..., (1,2), ...) plays games
//! `p * N .. (p + 1) * N`; game `g` draws its start position and every
//! random choice from stream `g` of the seed, and the lower-numbered player
//! of the pair moves first in its even games. The results therefore depend
//! on the seed, the players and `N`, never on the number of threads.
//!
//! With [`RoundRobinConfig::stop_decided`] pairs play in blocks of
//! [`DECIDED_BLOCK`] games and a pair stops once decided: its score's
//! interval at [`DECIDED_Z`] standard errors (99.9%) excludes an even
//! score. Game `k` of a pair is still game `p * N + k`, so a stopped pair's
//! games are the first games the full run would have played.

use super::{
    play_game_from, ArenaError, FitOptions, GameStart, MatchResult, PairScore, StartConfig, Wdl,
};
use crate::game::{Game, Outcome, Side};
use crate::search::Player;
use crate::util::seeded_rng;
use rayon::prelude::*;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// How a tournament is played and rated.
#[derive(Clone, Debug)]
pub struct RoundRobinConfig {
    pub games_per_pair: usize,
    pub seed: u64,
    /// Games still going after this many moves stop unfinished and count
    /// as draws.
    pub max_plies: Option<usize>,
    pub fit: FitOptions,
    /// Keep every game's start and moves ([`RoundRobin::game_log`]).
    pub keep_games: bool,
    /// Stop a pair once it is decided (at most `games_per_pair` games).
    pub stop_decided: bool,
}

/// Games a pair plays between two looks at whether it is decided (even, so
/// colours stay balanced).
pub const DECIDED_BLOCK: usize = 10;

/// Standard errors the decided interval spans on each side: 99.9%, strict
/// because the pair is looked at after every block.
pub const DECIDED_Z: f64 = 3.29;

/// Whether a pair's games so far decide it: the Wilson interval of its
/// score at [`DECIDED_Z`] lies wholly above or below 1/2.
pub fn is_decided(result: &MatchResult) -> bool {
    let n = result.total.games() as f64;
    if n < DECIDED_BLOCK as f64 {
        return false;
    }
    let (lo, hi) = super::result::wilson_at(result.total.score(), n, DECIDED_Z);
    lo > 0.5 || hi < 0.5
}

/// The games of one pair, from player `a`'s point of view (`a < b`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PairResult {
    pub a_index: usize,
    pub b_index: usize,
    #[serde(flatten)]
    pub result: MatchResult,
}

/// One player's rating and results over the whole tournament.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlayerRating {
    /// 1 for the highest rated.
    pub rank: usize,
    /// Place in the player list (0-based).
    pub index: usize,
    pub player: String,
    pub elo: f64,
    /// Standard error and 95% interval, in Elo.
    pub se: f64,
    pub lo: f64,
    pub hi: f64,
    pub games: u64,
    #[serde(flatten)]
    pub wdl: Wdl,
    /// Points per game: a win 1, a draw 1/2.
    pub score: f64,
}

/// One game, for the games file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameLog {
    pub index: usize,
    /// Players by index.
    pub first: usize,
    pub second: usize,
    /// `1-0`, `0-1`, `1/2-1/2`, or `*` when stopped unfinished.
    pub result: String,
    /// The start position in the game's text notation.
    pub start: String,
    pub moves: Vec<String>,
}

/// A finished tournament.
#[derive(Clone, Debug, Serialize)]
pub struct RoundRobin {
    pub game: String,
    pub board_size: usize,
    pub openings: String,
    /// Player names (their specs, evaluators filled in), in list order;
    /// a name given twice gets ` #2`, ` #3` appended.
    pub players: Vec<String>,
    /// Games per pair; at most, with `stop_decided`.
    pub games_per_pair: usize,
    /// Pairs stopped once decided ([`is_decided`]).
    pub stop_decided: bool,
    pub seed: u64,
    pub max_plies: Option<usize>,
    #[serde(flatten)]
    pub fit: FitOptions,
    /// Pairs in schedule order.
    pub pairs: Vec<PairResult>,
    /// In rank order; empty when no ratings could be fitted.
    pub ratings: Vec<PlayerRating>,
    /// Why there are no ratings.
    pub rating_error: Option<String>,
    pub games: u64,
    pub plies: u64,
    pub unfinished: u64,
    pub seconds: f64,
    pub games_per_second: f64,
    pub threads: usize,
    #[serde(skip)]
    pub game_log: Vec<GameLog>,
}

/// What one scheduled game came to.
struct Played {
    a_first: bool,
    outcome: Option<Outcome>,
    plies: usize,
    log: Option<GameLog>,
}

/// The pairs `(a, b)`, `a < b`, in schedule order.
pub fn schedule(players: usize) -> Vec<(usize, usize)> {
    (0..players)
        .flat_map(|a| (a + 1..players).map(move |b| (a, b)))
        .collect()
}

/// Player names, with repeats numbered so that every name is unique.
fn unique_names(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        let k = names[..i].iter().filter(|m| *m == n).count();
        out.push(if k == 0 {
            n.clone()
        } else {
            format!("{n} #{}", k + 1)
        });
    }
    out
}

/// Plays the tournament on the current rayon pool (see the module docs).
pub fn round_robin<G: crate::games::GameSupport>(
    players: &[Arc<dyn Player<G>>],
    start: &StartConfig,
    cfg: &RoundRobinConfig,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<RoundRobin, ArenaError> {
    if players.len() < 2 {
        return Err(ArenaError::Options(format!(
            "a round robin needs at least 2 players, got {}",
            players.len()
        )));
    }
    if cfg.games_per_pair == 0 {
        return Err(ArenaError::Options(
            "--games-per-pair must be at least 1".into(),
        ));
    }
    let names = unique_names(players.iter().map(|p| p.name()).collect());
    let pairs = schedule(players.len());
    let per_pair = cfg.games_per_pair;
    let started = Instant::now();
    let mut results: Vec<PairResult> = pairs
        .iter()
        .map(|&(a, b)| PairResult {
            a_index: a,
            b_index: b,
            result: MatchResult::new(names[a].clone(), names[b].clone(), cfg.seed),
        })
        .collect();
    let block = if cfg.stop_decided {
        DECIDED_BLOCK
    } else {
        per_pair
    };
    let mut played_per_pair = vec![0usize; pairs.len()];
    let mut game_log = Vec::new();
    let (mut games, mut plies, mut unfinished) = (0u64, 0u64, 0u64);
    loop {
        // This block's games: the next `block` of every pair still playing.
        let todo: Vec<usize> = (0..pairs.len())
            .filter(|&p| {
                played_per_pair[p] < per_pair
                    && !(cfg.stop_decided && is_decided(&results[p].result))
            })
            .flat_map(|p| {
                let from = played_per_pair[p];
                (from..(from + block).min(per_pair)).map(move |k| p * per_pair + k)
            })
            .collect();
        if todo.is_empty() {
            break;
        }
        let played: Vec<Played> = todo
            .par_iter()
            .map(|&g| {
                let (a, b) = pairs[g / per_pair];
                let a_first = (g % per_pair).is_multiple_of(2);
                let (first, second) = if a_first { (a, b) } else { (b, a) };
                let mut rng = seeded_rng(cfg.seed, g as u64);
                let s: GameStart<G> = start
                    .start(&mut rng)
                    .map_err(|source| ArenaError::Start { game: g, source })?;
                let game = play_game_from(
                    s,
                    players[first].as_ref(),
                    players[second].as_ref(),
                    g,
                    &mut rng,
                    cfg.max_plies,
                )?;
                if let Some(p) = progress {
                    p.inc(1);
                }
                let log = cfg.keep_games.then(|| GameLog {
                    index: g,
                    first,
                    second,
                    result: result_text(game.outcome).into(),
                    start: game.start.to_text(),
                    moves: move_texts(&game.start, &game.moves),
                });
                Ok(Played {
                    a_first,
                    outcome: game.outcome,
                    plies: game.moves.len(),
                    log,
                })
            })
            .collect::<Result<_, ArenaError>>()?;
        // In game order, so each pair's results add up as in one pass.
        for (&g, p) in todo.iter().zip(played) {
            results[g / per_pair]
                .result
                .add_game(p.a_first, p.outcome, p.plies);
            played_per_pair[g / per_pair] += 1;
            games += 1;
            plies += p.plies as u64;
            unfinished += u64::from(p.outcome.is_none());
            game_log.extend(p.log);
        }
    }
    game_log.sort_by_key(|l| l.index);
    let seconds = started.elapsed().as_secs_f64();
    let (ratings, rating_error) = match rate(&names, &results, &cfg.fit) {
        Ok(r) => (r, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    Ok(RoundRobin {
        game: G::NAME.to_string(),
        board_size: start.size,
        openings: start.openings_name.clone(),
        players: names,
        games_per_pair: per_pair,
        stop_decided: cfg.stop_decided,
        seed: cfg.seed,
        max_plies: cfg.max_plies,
        fit: cfg.fit,
        pairs: results,
        ratings,
        rating_error,
        games,
        plies,
        unfinished,
        seconds,
        games_per_second: games as f64 / seconds.max(1e-9),
        threads: rayon::current_num_threads(),
        game_log,
    })
}

/// Every player's totals and fitted rating, best first.
fn rate(
    names: &[String],
    pairs: &[PairResult],
    fit: &FitOptions,
) -> Result<Vec<PlayerRating>, super::RatingFitError> {
    let scores: Vec<PairScore> = pairs
        .iter()
        .map(|p| PairScore {
            a: p.a_index,
            b: p.b_index,
            games: p.result.total.games() as f64,
            points_a: p.result.a_points(),
        })
        .collect();
    let fitted = super::fit_ratings(names.len(), &scores, fit)?;
    let mut totals = vec![Wdl::default(); names.len()];
    for p in pairs {
        let t = p.result.total;
        let (a, b) = (&mut totals[p.a_index], t);
        a.wins += b.wins;
        a.draws += b.draws;
        a.losses += b.losses;
        let o = &mut totals[p.b_index];
        o.wins += t.losses;
        o.draws += t.draws;
        o.losses += t.wins;
    }
    let mut ratings: Vec<PlayerRating> = fitted
        .iter()
        .enumerate()
        .map(|(i, f)| PlayerRating {
            rank: 0,
            index: i,
            player: names[i].clone(),
            elo: f.elo,
            se: f.se,
            lo: f.lo,
            hi: f.hi,
            games: totals[i].games(),
            wdl: totals[i],
            score: totals[i].score(),
        })
        .collect();
    ratings.sort_by(|x, y| y.elo.total_cmp(&x.elo).then(x.index.cmp(&y.index)));
    for (k, r) in ratings.iter_mut().enumerate() {
        r.rank = k + 1;
    }
    Ok(ratings)
}

/// `1-0`, `0-1`, `1/2-1/2` or `*`.
pub fn result_text(outcome: Option<Outcome>) -> &'static str {
    match outcome {
        Some(Outcome::Win(Side::First)) => "1-0",
        Some(Outcome::Win(Side::Second)) => "0-1",
        Some(Outcome::Draw) => "1/2-1/2",
        None => "*",
    }
}

/// The moves in the game's notation, each in the position it was played in.
fn move_texts<G: Game>(start: &G, moves: &[G::Move]) -> Vec<String> {
    let mut g = start.clone();
    moves
        .iter()
        .map(|&m| {
            let t = g.move_to_string(m);
            g.play(m);
            t
        })
        .collect()
}

impl RoundRobin {
    /// The player's rating, by list index.
    pub fn rating_of(&self, index: usize) -> Option<&PlayerRating> {
        self.ratings.iter().find(|r| r.index == index)
    }

    /// Games player `i` and player `j` played against each other.
    pub fn games_between(&self, i: usize, j: usize) -> u64 {
        self.pairs
            .iter()
            .find(|p| (p.a_index, p.b_index) == (i.min(j), i.max(j)))
            .map_or(0, |p| p.result.total.games())
    }

    /// Points of player `i` against player `j` (out of the games they
    /// played, `games_per_pair` unless the pair stopped decided).
    pub fn points(&self, i: usize, j: usize) -> Option<f64> {
        self.pairs.iter().find_map(|p| {
            if (p.a_index, p.b_index) == (i, j) {
                Some(p.result.a_points())
            } else if (p.a_index, p.b_index) == (j, i) {
                Some(p.result.total.games() as f64 - p.result.a_points())
            } else {
                None
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::TicTacToe;
    use crate::search::{ExpertPlayer, NaivePlayer, RandomPlayer};

    fn players() -> Vec<Arc<dyn Player<TicTacToe>>> {
        vec![
            Arc::new(RandomPlayer),
            Arc::new(NaivePlayer),
            Arc::new(ExpertPlayer),
        ]
    }

    fn cfg(games: usize) -> RoundRobinConfig {
        RoundRobinConfig {
            games_per_pair: games,
            seed: 3,
            max_plies: None,
            fit: FitOptions::default(),
            keep_games: true,
            stop_decided: false,
        }
    }

    #[test]
    fn the_schedule_covers_every_pair_once() {
        assert_eq!(schedule(3), vec![(0, 1), (0, 2), (1, 2)]);
        assert_eq!(schedule(5).len(), 10);
        assert!(schedule(1).is_empty());
    }

    #[test]
    fn repeated_names_are_numbered() {
        let names = unique_names(vec!["random".into(), "naive".into(), "random".into()]);
        assert_eq!(names, ["random", "naive", "random #2"]);
    }

    #[test]
    fn scores_add_up_and_colours_alternate() {
        let start = StartConfig::standard::<TicTacToe>();
        let t = round_robin(&players(), &start, &cfg(40), None).unwrap();
        assert_eq!(t.games, 120);
        assert_eq!(t.pairs.len(), 3);
        for p in &t.pairs {
            assert_eq!(p.result.total.games(), 40);
            assert_eq!(p.result.a_first.games(), 20);
        }
        let points: f64 = t.ratings.iter().map(|r| r.score * r.games as f64).sum();
        assert_eq!(points, 120.0);
        for i in 0..3 {
            for j in 0..3 {
                if i != j {
                    let sum = t.points(i, j).unwrap() + t.points(j, i).unwrap();
                    assert_eq!(sum, 40.0);
                }
            }
        }
        assert_eq!(t.game_log.len(), 120);
        assert_eq!(t.game_log[1].first, 1);
        assert_eq!(t.game_log[1].second, 0);
        // Random comes last; naive (which never misses an immediate win or
        // block) and expert are close.
        assert_eq!(t.ratings[2].player, "random");
        assert!(t.ratings[1].lo > 0.0, "{:?}", t.ratings);
        assert_eq!(t.rating_of(0).unwrap().elo, 0.0);
    }

    /// Stopping decided pairs: random against expert is decided within a
    /// few blocks, naive against expert (mostly draws) is not; a stopped
    /// pair's games are the first games of the full run.
    #[test]
    fn decided_pairs_stop_with_the_full_runs_first_games() {
        let start = StartConfig::standard::<TicTacToe>();
        let full = round_robin(&players(), &start, &cfg(60), None).unwrap();
        let stopping = RoundRobinConfig {
            stop_decided: true,
            ..cfg(60)
        };
        let t = round_robin(&players(), &start, &stopping, None).unwrap();
        let games: Vec<u64> = t.pairs.iter().map(|p| p.result.total.games()).collect();
        // Pairs: (random, naive), (random, expert), (naive, expert).
        assert!(games[1] < 60 && games[1].is_multiple_of(10), "{games:?}");
        assert!(is_decided(&t.pairs[1].result));
        assert_eq!(games[2], 60, "{games:?}");
        assert!(!is_decided(&t.pairs[2].result));
        assert_eq!(t.games, games.iter().sum::<u64>());
        assert_eq!(t.game_log.len() as u64, t.games);
        for (p, &n) in games.iter().enumerate() {
            let first = |rr: &RoundRobin| -> Vec<GameLog> {
                let range = p * 60..p * 60 + n as usize;
                rr.game_log
                    .iter()
                    .filter(|l| range.contains(&l.index))
                    .cloned()
                    .collect()
            };
            assert_eq!(first(&t), first(&full), "pair {p}");
        }
        let row_games: f64 = (1..3).map(|j| t.games_between(0, j) as f64).sum();
        let table = t.cross_table().to_csv();
        assert!(table.contains(&format!("/{row_games}")), "{table}");
    }

    #[test]
    fn too_few_players_or_games_are_refused() {
        let start = StartConfig::standard::<TicTacToe>();
        let one = &players()[..1];
        assert!(round_robin(one, &start, &cfg(4), None).is_err());
        assert!(round_robin(&players(), &start, &cfg(0), None).is_err());
    }
}
