//! Heon & Oetting (2012), Pentago: the bucketed MDP learner and the
//! feature player with tuned weights, against RANDOM and against the
//! feature-based greedy player with random opening moves, beside plies'
//! own searches (alpha-beta and MCTS) on the tuned features.
//!
//! The run trains the MDP learner with the paper's settings (measuring it
//! along the way for the learning curve), tunes the 35 weights twice (the
//! paper's perturbation self-play, and SPSA), then plays every player
//! against both opponents with colours alternating. Every stage resumes:
//! the learner and the tuners from their own state, each match from its
//! result file in `OUT/matches/` (kept while the players' files and the
//! match settings are the same).
//!
//! The run holds `OUT` ([`RunDir::claim`]) while it works. Most stages are
//! named by their own settings, which may change on a rerun: a match's key
//! holds its players, their files' contents, its games, opening and seed
//! (another key plays it again), and each tuner checks its own state (and
//! may go on to more iterations). The learner's curve is not: a stage in
//! `mdp-stages/` is named only by its game count and copied from `mdp.json`
//! trained up to it, so once `mdp.json` has gone past a count, a stage of
//! that count made later would hold a longer-trained model. So
//! `experiment.json` holds what the learner and its stages depend on
//! (`curve_every` and the learner's settings, seed and games), and a rerun
//! with other values is refused, naming the first.

use crate::arena::{play_match_from, ArenaError, MatchResult, StartConfig};
use crate::experiment::match_cache::{file_key, read_cached_match, write_cached_match};
use crate::game::{hash_of, Pentago};
use crate::report::{write_json, LineChart, ReportError, Series, Table};
use crate::search::game_player::player_from_spec;
use crate::search::mdp::MdpSettings;
use crate::search::SearchError;
use crate::train::mdp::{train_mdp, MdpTrainConfig, MdpTrainError};
use crate::tune::{tune, TuneConfig, TuneError, TuneMethod};
use crate::util::run_dir::{check_fingerprint, Depth, JsonLayout, RunDir, RunDirError};
use crate::util::{derive_seed, write_atomic};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The paper's figures for its MDP learner: wins against RANDOM and against
/// the greedy feature player making its first three moves at random.
pub const PAPER_VS_RANDOM: f64 = 0.96;
pub const PAPER_VS_GREEDY: f64 = 0.30;

/// The feature-based greedy opponent (hand-set weights).
pub const GREEDY_OPPONENT: &str = "greedy:eval=pentago-features";

#[derive(Clone, Debug, Serialize)]
pub struct PentagoExperimentConfig {
    pub out: PathBuf,
    pub seed: u64,
    /// Games of each match (colours alternate).
    pub games: usize,
    /// Random plies before the games against the greedy player: 6 is each
    /// side's first three moves.
    pub random_opening: usize,
    /// The MDP learner: the paper's settings.
    pub mdp: MdpTrainConfig,
    /// Measure the learner every this many training games (0: only at
    /// the end), with `curve_games` games against each opponent.
    pub curve_every: usize,
    pub curve_games: usize,
    /// The paper's tuner.
    pub perturb: TuneConfig,
    /// The stronger tuner, whose weights alpha-beta and MCTS search with.
    pub spsa: TuneConfig,
    pub alphabeta_depth: u32,
    pub mcts_sims: u64,
}

impl PentagoExperimentConfig {
    /// The default budget (a few minutes on 2 cores).
    pub fn new(out: PathBuf) -> Self {
        PentagoExperimentConfig {
            out,
            seed: 1,
            games: 500,
            random_opening: 6,
            mdp: MdpTrainConfig::default(),
            curve_every: 250,
            curve_games: 200,
            perturb: TuneConfig {
                iterations: 1000,
                games: 8,
                sigma: 0.3,
                eval_every: 100,
                eval_games: 200,
                ..TuneConfig::new("pentago-features", TuneMethod::Perturb)
            },
            spsa: TuneConfig {
                iterations: 600,
                games: 16,
                sigma: 0.5,
                eval_every: 100,
                eval_games: 200,
                ..TuneConfig::new("pentago-features", TuneMethod::Spsa)
            },
            alphabeta_depth: 2,
            mcts_sims: 1000,
        }
    }
}

#[derive(Debug, Error)]
pub enum PentagoExperimentError {
    #[error("MDP learner: {0}")]
    Mdp(#[from] MdpTrainError),
    #[error("tuning: {0}")]
    Tune(#[from] TuneError),
    #[error(transparent)]
    Arena(#[from] ArenaError),
    #[error("player: {0}")]
    Player(#[from] SearchError),
    #[error(transparent)]
    Report(#[from] ReportError),
    /// Another writer holds the output folder, or it holds a run of other
    /// settings.
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("{path}: {why}")]
    File { path: PathBuf, why: String },
}

/// One match of the table, from the player's side.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultRow {
    pub player: String,
    pub spec: String,
    pub opponent: String,
    pub random_plies: usize,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    pub win_rate: f64,
    pub win_lo: f64,
    pub win_hi: f64,
    /// The paper's win rate for this player and opponent, where it has one.
    pub paper: Option<f64>,
}

/// The learner measured during training.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CurvePoint {
    pub training_games: usize,
    pub vs_random: f64,
    pub vs_greedy: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct PentagoExperimentReport {
    pub config: PentagoExperimentConfig,
    pub rows: Vec<ResultRow>,
    pub curve: Vec<CurvePoint>,
    pub paper_vs_random: f64,
    pub paper_vs_greedy: f64,
    pub seconds: f64,
}

/// Where the run's `Fingerprint` is stored.
pub const FINGERPRINT_FILE: &str = "experiment.json";

/// What the learner and its stages depend on (see the module docs).
#[derive(Serialize)]
struct Fingerprint {
    curve_every: usize,
    mdp: MdpFingerprint,
}

/// The learner's settings that shape its model: not how often it is
/// saved, which a resumed run does not see.
#[derive(Serialize)]
struct MdpFingerprint {
    settings: MdpSettings,
    games: usize,
    epsilon: f64,
    seed: u64,
}

impl Fingerprint {
    fn of(cfg: &PentagoExperimentConfig) -> Self {
        Fingerprint {
            curve_every: cfg.curve_every,
            mdp: MdpFingerprint {
                settings: cfg.mdp.settings,
                games: cfg.mdp.games,
                epsilon: cfg.mdp.epsilon,
                seed: cfg.mdp.seed,
            },
        }
    }
}

struct Runner<'a> {
    cfg: &'a PentagoExperimentConfig,
    say: &'a dyn Fn(&str),
}

impl Runner<'_> {
    /// `spec` against `opponent`, `games` games from `random_plies` random
    /// plies, or its cached result.
    fn play(
        &self,
        name: &str,
        spec: &str,
        files: &[&Path],
        opponent: &str,
        random_plies: usize,
        games: usize,
    ) -> Result<(u64, u64, u64), PentagoExperimentError> {
        // Seeded by the match's name, not its specs (which hold paths), so
        // the same seed plays the same games in any output directory.
        let seed = derive_seed(self.cfg.seed, hash_of(name));
        let keys: Vec<String> = files.iter().map(|p| file_key(p)).collect();
        let key = format!("{spec} vs {opponent}, {games} games, {random_plies} random plies, seed {seed}, files {keys:?}");
        let path = self.cfg.out.join("matches").join(format!("{name}.json"));
        if let Some(t) = read_cached_match(&path, &key) {
            return Ok((t.wins, t.draws, t.losses));
        }
        (self.say)(&format!("{spec} vs {opponent}: {games} games"));
        let a = player_from_spec::<Pentago>(spec)?;
        let b = player_from_spec::<Pentago>(opponent)?;
        let start = StartConfig::standard::<Pentago>().with_random_opening(random_plies);
        let starter = start.starter::<Pentago>();
        let r: MatchResult =
            play_match_from(a.as_ref(), b.as_ref(), &starter, games, seed, None, None)?;
        let t = r.total;
        write_cached_match(&path, &key, &t)?;
        Ok((t.wins, t.draws, t.losses))
    }
}

/// Runs the experiment; writes `results.csv`, `results.json`,
/// `mdp_curve.csv` and `mdp_curve.png|svg` to `cfg.out`.
pub fn run(
    cfg: &PentagoExperimentConfig,
    say: &dyn Fn(&str),
) -> Result<PentagoExperimentReport, PentagoExperimentError> {
    let started = std::time::Instant::now();
    let out = &cfg.out;
    let _run_dir = RunDir::claim(out)?;
    std::fs::create_dir_all(out).map_err(|e| PentagoExperimentError::File {
        path: out.clone(),
        why: e.to_string(),
    })?;
    check_fingerprint(
        &out.join(FINGERPRINT_FILE),
        &Fingerprint::of(cfg),
        Depth::Nested,
        JsonLayout::PrettyLine,
    )?;
    let runner = Runner { cfg, say };
    let mdp_path = out.join("mdp.json");
    let mdp_spec = format!("mdp:{}", mdp_path.display());

    // The learner, measured as it learns.
    let mut curve = Vec::new();
    let points = cfg.mdp.games.checked_div(cfg.curve_every).unwrap_or(0);
    let mut stages: Vec<usize> = (1..=points).map(|k| k * cfg.curve_every).collect();
    if stages.last() != Some(&cfg.mdp.games) {
        stages.push(cfg.mdp.games);
    }
    for &n in &stages {
        // Each stage's model is kept, so a resumed run measures the same one.
        let stage = out.join("mdp-stages").join(format!("{n}.json"));
        if !stage.exists() {
            say(&format!("MDP learner: training to {n} games"));
            train_mdp::<Pentago>(
                &MdpTrainConfig {
                    games: n,
                    ..cfg.mdp
                },
                &mdp_path,
                &|_| {},
            )?;
            let file = |e: std::io::Error| PentagoExperimentError::File {
                path: mdp_path.clone(),
                why: e.to_string(),
            };
            let bytes = std::fs::read(&mdp_path).map_err(file)?;
            write_atomic(&stage, &bytes).map_err(ReportError::from)?;
        }
        let stage_spec = format!("mdp:{}", stage.display());
        let files = [stage.as_path()];
        let rate = |r: (u64, u64, u64)| r.0 as f64 / (r.0 + r.1 + r.2).max(1) as f64;
        let vs_random = runner.play(
            &format!("curve-{n}-random"),
            &stage_spec,
            &files,
            "random",
            0,
            cfg.curve_games,
        )?;
        let vs_greedy = runner.play(
            &format!("curve-{n}-greedy"),
            &stage_spec,
            &files,
            GREEDY_OPPONENT,
            cfg.random_opening,
            cfg.curve_games,
        )?;
        curve.push(CurvePoint {
            training_games: n,
            vs_random: rate(vs_random),
            vs_greedy: rate(vs_greedy),
        });
    }

    train_mdp::<Pentago>(&cfg.mdp, &mdp_path, &|_| {})?;

    // The weights, tuned both ways.
    let mut tuned = Vec::new();
    for (dir, tc) in [("tune-perturb", &cfg.perturb), ("tune-spsa", &cfg.spsa)] {
        say(&format!(
            "tuning: {} for {} iterations",
            tc.method, tc.iterations
        ));
        let r = tune::<Pentago>(tc, &out.join(dir), &|_| {})?;
        tuned.push(r.weights_file);
    }
    let (perturbed, spsa) = (&tuned[0], &tuned[1]);
    let eval_of = |p: &Path| format!("pentago-features:{}", p.display());

    let players: Vec<(&str, &str, String, Vec<&Path>)> = vec![
        (
            "mdp",
            "MDP learner (paper's method and settings)",
            mdp_spec.clone(),
            vec![mdp_path.as_path()],
        ),
        (
            "greedy-perturb",
            "greedy, weights tuned by perturbation (paper)",
            format!("greedy:eval={}", eval_of(perturbed)),
            vec![perturbed.as_path()],
        ),
        (
            "greedy-spsa",
            "greedy, weights tuned by SPSA",
            format!("greedy:eval={}", eval_of(spsa)),
            vec![spsa.as_path()],
        ),
        (
            "alphabeta-spsa",
            "alpha-beta, SPSA weights",
            format!(
                "alphabeta:depth={},eval={}",
                cfg.alphabeta_depth,
                eval_of(spsa)
            ),
            vec![spsa.as_path()],
        ),
        (
            "mcts-spsa",
            "MCTS, SPSA weights at the leaves",
            format!(
                "mcts:sims={},rollout=0,eval={}",
                cfg.mcts_sims,
                eval_of(spsa)
            ),
            vec![spsa.as_path()],
        ),
        (
            "greedy-hand",
            "greedy, hand-set weights (baseline)",
            GREEDY_OPPONENT.to_string(),
            vec![],
        ),
        ("random", "random (baseline)", "random".to_string(), vec![]),
    ];
    let mut rows = Vec::new();
    for (name, label, spec, files) in &players {
        for (opp_name, opponent, plies) in [
            ("random", "random", 0),
            ("greedy", GREEDY_OPPONENT, cfg.random_opening),
        ] {
            let (wins, draws, losses) = runner.play(
                &format!("{name}-vs-{opp_name}"),
                spec,
                files,
                opponent,
                plies,
                cfg.games,
            )?;
            let games = wins + draws + losses;
            let (win_lo, win_hi) = crate::arena::wilson_interval(wins, games);
            let paper = match (*name, opp_name) {
                ("mdp", "random") => Some(PAPER_VS_RANDOM),
                ("mdp", "greedy") => Some(PAPER_VS_GREEDY),
                _ => None,
            };
            rows.push(ResultRow {
                player: label.to_string(),
                spec: spec.clone(),
                opponent: opponent.to_string(),
                random_plies: plies,
                games,
                wins,
                draws,
                losses,
                win_rate: wins as f64 / games.max(1) as f64,
                win_lo,
                win_hi,
                paper,
            });
        }
    }
    let report = PentagoExperimentReport {
        config: cfg.clone(),
        rows,
        curve,
        paper_vs_random: PAPER_VS_RANDOM,
        paper_vs_greedy: PAPER_VS_GREEDY,
        seconds: started.elapsed().as_secs_f64(),
    };
    write_outputs(&report)?;
    Ok(report)
}

/// The table for people: one row per player, a column per opponent.
pub fn summary_table(report: &PentagoExperimentReport) -> Table {
    let plies = report.config.random_opening;
    let mut t = Table::with_headers([
        "player".to_string(),
        "wins vs random [95%]".to_string(),
        format!("wins vs greedy, {plies} random plies [95%]"),
        "paper".to_string(),
    ]);
    for pair in report.rows.chunks(2) {
        let cell = |r: &ResultRow| {
            format!(
                "{:.1}% [{:.1}, {:.1}] of {}",
                100.0 * r.win_rate,
                100.0 * r.win_lo,
                100.0 * r.win_hi,
                r.games
            )
        };
        let paper = match (pair[0].paper, pair.get(1).and_then(|r| r.paper)) {
            (Some(a), Some(b)) => format!("{:.0}% / {:.0}%", 100.0 * a, 100.0 * b),
            _ => String::new(),
        };
        t.push_row([
            pair[0].player.clone(),
            cell(&pair[0]),
            pair.get(1).map(cell).unwrap_or_default(),
            paper,
        ]);
    }
    t
}

fn write_outputs(report: &PentagoExperimentReport) -> Result<(), PentagoExperimentError> {
    let out = &report.config.out;
    let mut csv = Table::with_headers([
        "player",
        "spec",
        "opponent",
        "random_plies",
        "games",
        "wins",
        "draws",
        "losses",
        "win_rate",
        "win_lo",
        "win_hi",
        "paper",
    ]);
    for r in &report.rows {
        csv.push_row([
            r.player.clone(),
            r.spec.clone(),
            r.opponent.clone(),
            r.random_plies.to_string(),
            r.games.to_string(),
            r.wins.to_string(),
            r.draws.to_string(),
            r.losses.to_string(),
            format!("{:.4}", r.win_rate),
            format!("{:.4}", r.win_lo),
            format!("{:.4}", r.win_hi),
            r.paper.map(|p| format!("{p:.2}")).unwrap_or_default(),
        ]);
    }
    csv.write_csv(out.join("results.csv"))?;
    let mut curve = Table::with_headers(["training_games", "vs_random", "vs_greedy"]);
    for p in &report.curve {
        curve.push_row([
            p.training_games.to_string(),
            format!("{:.4}", p.vs_random),
            format!("{:.4}", p.vs_greedy),
        ]);
    }
    curve.write_csv(out.join("mdp_curve.csv"))?;
    write_json(out.join("results.json"), report)?;
    write_atomic(
        out.join("results.txt"),
        summary_table(report).to_string().as_bytes(),
    )
    .map_err(ReportError::from)?;
    let chart = LineChart {
        title: format!(
            "Pentago MDP learner: win rate as it learns ({} games a point)",
            report.config.curve_games
        ),
        x_label: "self-play training games".into(),
        y_label: "win rate".into(),
        series: vec![
            Series::new(
                "vs random",
                report
                    .curve
                    .iter()
                    .map(|p| (p.training_games as f64, p.vs_random)),
            ),
            Series::new(
                format!("vs greedy, {} random plies", report.config.random_opening),
                report
                    .curve
                    .iter()
                    .map(|p| (p.training_games as f64, p.vs_greedy)),
            ),
        ],
        reference_lines: vec![
            ("paper vs random 96%".into(), PAPER_VS_RANDOM),
            ("paper vs greedy 30%".into(), PAPER_VS_GREEDY),
        ],
        y_range: Some((0.0, 1.0)),
    };
    chart.write_png(out.join("mdp_curve.png"))?;
    chart.write_svg(out.join("mdp_curve.svg"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(out: PathBuf) -> PentagoExperimentConfig {
        let mut cfg = PentagoExperimentConfig::new(out);
        cfg.games = 2;
        cfg.mdp.games = 4;
        cfg.mdp.settings.buckets = 50;
        cfg.curve_every = 0;
        cfg.curve_games = 2;
        for t in [&mut cfg.perturb, &mut cfg.spsa] {
            t.iterations = 1;
            t.games = 2;
            t.eval_games = 2;
        }
        cfg.mcts_sims = 10;
        cfg
    }

    #[test]
    fn a_folder_another_writer_holds_is_refused_before_anything_runs() {
        let (_d, out) = crate::util::scratch("pentago");
        let _held = RunDir::claim(&out).unwrap();
        let e = run(&tiny(out.clone()), &|_| {}).unwrap_err();
        assert!(
            matches!(e, PentagoExperimentError::RunDir(RunDirError::Locked(_))),
            "{e}"
        );
        crate::util::run_dir::assert_refused_as_held(&e, &out);
        assert!(!out.join(FINGERPRINT_FILE).exists());
    }

    #[test]
    fn a_rerun_with_another_learner_is_refused_and_other_matches_are_played() {
        let (_d, out) = crate::util::scratch("pentago");
        let cfg = tiny(out.clone());
        run(&cfg, &|_| {}).unwrap();
        let mut longer = cfg.clone();
        longer.mdp.games = 6;
        let e = run(&longer, &|_| {}).unwrap_err().to_string();
        assert!(
            e.contains("`mdp.games`") && e.contains("had 4, now 6"),
            "{e}"
        );
        let mut curve = cfg.clone();
        curve.curve_every = 2;
        let e = run(&curve, &|_| {}).unwrap_err().to_string();
        assert!(e.contains("`curve_every`"), "{e}");
        // Matches are named by their own settings: more games play again.
        let mut more = cfg;
        more.games = 4;
        let r = run(&more, &|_| {}).unwrap();
        assert!(r.rows.iter().all(|row| row.games == 4));
    }
}
