//! Move prediction: where an evaluator ranks the move played among every
//! legal move of the position, searching one ply (each move's position
//! scored for the side that moved). Reported as top-1, top-5 and mean
//! reciprocal rank (MRR), overall and by game phase, for checkpoints, hand
//! evaluators (`material`, any game's by name), `naive` (a move that wins at
//! once first, one that lets the opponent win at once last) and `random`.
//!
//! Ties are broken uniformly at random and the figures are expectations
//! over that draw ([`PlayedRank`]), so `random` is exact (top-1 = mean of
//! 1/moves) and a scorer that cannot tell two moves apart is charged
//! exactly what chance gets.
//!
//! The phase of a position is the share of its game played before it:
//! opening below 1/3, middle game below 2/3, endgame from there.

use std::path::Path;

use candle_core::{Device, Tensor};
use rayon::prelude::*;
use serde::Serialize;

use super::EvalError;
use crate::checkpoint::Checkpoint;
use crate::dataset::{Dataset, Split};
use crate::game::Outcome;
use crate::games::{GameKind, GameSupport};
use crate::infer::hand::HandEval;
use crate::model::ValueNet;
use crate::positions::children::{ChildExpander, ChildrenError, GameChildren, MoveRow, PlayedRank};
use crate::report::{write_json, Table};
use crate::search::naive::winning_moves;

/// The game phases, in order.
pub const PHASES: [&str; 3] = ["opening", "middle", "end"];

/// The phase of a position `ply` plies into a game with `plies_to_end` to go.
pub fn phase_of(ply: u32, plies_to_end: u32) -> usize {
    let length = f64::from(ply) + f64::from(plies_to_end);
    if length == 0.0 {
        return 0;
    }
    let played = f64::from(ply) / length;
    if played < 1.0 / 3.0 {
        0
    } else if played < 2.0 / 3.0 {
        1
    } else {
        2
    }
}

/// Sums of ranks.
#[derive(Clone, Copy, Debug, Default)]
pub struct RankAcc {
    pub positions: u64,
    pub moves: u64,
    pub top1: f64,
    pub top5: f64,
    pub reciprocal: f64,
}

impl RankAcc {
    pub fn push(&mut self, rank: PlayedRank, moves: usize) {
        self.positions += 1;
        self.moves += moves as u64;
        self.top1 += rank.top(1);
        self.top5 += rank.top(5);
        self.reciprocal += rank.reciprocal();
    }

    pub fn summary(&self) -> MoveMetrics {
        let n = self.positions.max(1) as f64;
        MoveMetrics {
            positions: self.positions,
            mean_moves: self.moves as f64 / n,
            top1: self.top1 / n,
            top5: self.top5 / n,
            mrr: self.reciprocal / n,
        }
    }
}

/// Top-1, top-5 and MRR over some positions.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MoveMetrics {
    pub positions: u64,
    /// Legal moves per position.
    pub mean_moves: f64,
    pub top1: f64,
    pub top5: f64,
    pub mrr: f64,
}

/// One evaluator's ranks.
#[derive(Clone, Debug)]
pub struct MovePrediction {
    pub name: String,
    pub description: String,
    pub overall: RankAcc,
    /// Indexed like [`PHASES`].
    pub by_phase: [RankAcc; 3],
}

impl MovePrediction {
    fn new(name: &str, description: String) -> Self {
        MovePrediction {
            name: name.to_string(),
            description,
            overall: RankAcc::default(),
            by_phase: [RankAcc::default(); 3],
        }
    }

    fn push(&mut self, rank: PlayedRank, moves: usize, phase: usize) {
        self.overall.push(rank, moves);
        self.by_phase[phase].push(rank, moves);
    }
}

/// What to rank moves with.
pub struct MovePredictionInput<'a> {
    pub dataset: &'a Dataset,
    pub split: Option<Split>,
    /// Named checkpoints, each of the dataset's game and encoder.
    pub checkpoints: &'a [(String, Checkpoint)],
    /// Hand evaluators by name (the game's, or `naive`).
    pub hands: &'a [String],
    pub device: &'a Device,
    /// Children per forward pass.
    pub chunk: usize,
    pub progress: bool,
}

/// Every evaluator's ranks over the split's positions that have a move
/// played, `random` last.
#[derive(Clone, Debug)]
pub struct MovePredictionReport {
    pub dataset: String,
    pub game: String,
    pub split: String,
    pub results: Vec<MovePrediction>,
}

/// Ranks the move played by every evaluator of `input`.
pub fn predict_moves(
    input: &MovePredictionInput<'_>,
    split_name: &str,
) -> Result<MovePredictionReport, EvalError> {
    if input.chunk == 0 {
        return Err(EvalError::InvalidArgument {
            field: "chunk",
            expected: "at least 1".into(),
            found: "0".into(),
        });
    }
    for (_, ck) in input.checkpoints {
        super::check_compatible(ck, input.dataset)?;
    }
    let spec = input.dataset.spec();
    let kind: GameKind = spec.game.parse().map_err(|e| {
        EvalError::Children(Box::new(ChildrenError::Setup {
            game: spec.game.clone(),
            encoder: spec.encoder.name.clone(),
            why: format!("{e}"),
        }))
    })?;
    let rows: Vec<MoveRow> = input
        .dataset
        .rows(input.split)?
        .into_iter()
        .filter_map(|r| {
            Some(MoveRow {
                played: r.move_played?,
                game_id: r.game_id,
                ply: r.ply,
                plies_to_end: r.plies_to_end,
                position: r.position,
            })
        })
        .collect();
    if rows.is_empty() {
        return Err(EvalError::NoMoves {
            dataset: input.dataset.dir().to_path_buf(),
            split: split_name.to_string(),
        });
    }
    let expander: Box<dyn ChildExpander> = with_game!(kind, G => {
        let enc = G::encoder(&spec.encoder.name, spec.encoder.shape[2]).map_err(|e| {
            EvalError::Children(Box::new(ChildrenError::Setup {
                game: spec.game.clone(),
                encoder: spec.encoder.name.clone(),
                why: e.to_string(),
            }))
        })?;
        let mut hands = Vec::new();
        for name in input.hands {
            hands.push(hand_scorer::<G>(name).ok_or_else(|| EvalError::InvalidArgument {
                field: "baseline",
                found: name.clone(),
                expected: format!(
                    "naive or a hand evaluator of {} ({})",
                    spec.game,
                    if G::HAND_EVALS.is_empty() { "it has none".to_string() } else { G::HAND_EVALS.join(", ") }
                ),
            })?);
        }
        Box::new(GameChildren::<G>::new(kind.name(), enc, hands)) as Box<dyn ChildExpander>
    });
    let models: Vec<Box<dyn ValueNet>> = input
        .checkpoints
        .iter()
        .map(|(_, c)| c.model(input.device))
        .collect::<Result<_, _>>()?;
    let mut results: Vec<MovePrediction> = input
        .checkpoints
        .iter()
        .map(|(name, c)| {
            MovePrediction::new(
                name,
                format!(
                    "checkpoint {} ({}), 1 ply",
                    c.dir.display(),
                    c.config.model.kind()
                ),
            )
        })
        .collect();
    for h in input.hands {
        results.push(MovePrediction::new(
            h,
            format!("hand evaluator `{h}`, 1 ply"),
        ));
    }
    results.push(MovePrediction::new(
        "random",
        "a uniformly random order (exact expectation)".into(),
    ));
    let pb = progress(input.progress, rows.len() as u64);
    let [c, h, w] = spec.encoder.shape;
    let block = rayon::current_num_threads().max(1) * 2;
    for rows in rows.chunks(block) {
        let expanded: Vec<_> = rows.par_iter().map(|r| expander.expand(r, None)).collect();
        for (row, kids) in rows.iter().zip(expanded) {
            let kids = kids.map_err(|e| EvalError::Children(Box::new(e)))?;
            let phase = phase_of(row.ply, row.plies_to_end);
            for (m, model) in models.iter().enumerate() {
                let mut scores = Vec::with_capacity(kids.len);
                let per = c * h * w;
                let g = expander.globals_len();
                for from in (0..kids.len).step_by(input.chunk) {
                    let to = (from + input.chunk).min(kids.len);
                    let mut planes = Vec::with_capacity((to - from) * per);
                    kids.planes_f32(from, to, per, &mut planes);
                    let x = Tensor::from_vec(planes, (to - from, c, h, w), input.device)?;
                    let gl = (g > 0)
                        .then(|| {
                            Tensor::from_vec(
                                kids.globals[from * g..to * g].to_vec(),
                                (to - from, g),
                                input.device,
                            )
                        })
                        .transpose()?;
                    let z = model.pre_activation(&x, gl.as_ref(), false)?;
                    scores.extend(z.detach().to_vec1::<f32>()?);
                }
                for (s, sign) in scores.iter_mut().zip(&kids.sign) {
                    *s *= sign;
                }
                results[m].push(PlayedRank::of(&scores), kids.legal_moves, phase);
            }
            for (i, hand) in kids.hand.iter().enumerate() {
                results[models.len() + i].push(PlayedRank::of(hand), kids.legal_moves, phase);
            }
            let last = results.len() - 1;
            results[last].push(
                PlayedRank::random(kids.legal_moves),
                kids.legal_moves,
                phase,
            );
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    Ok(MovePredictionReport {
        dataset: input.dataset.dir().display().to_string(),
        game: spec.game,
        split: split_name.to_string(),
        results,
    })
}

/// `naive` (see the module docs) or the game's hand evaluator `name`. A
/// hand score is for the child's side to move; the expander turns it to
/// the mover's.
fn hand_scorer<G: GameSupport>(name: &str) -> Option<HandEval<G>> {
    if name != "naive" {
        return G::hand_eval(name);
    }
    Some(HandEval::new("naive", 1.0, |s: &G| {
        let me = s.side_to_move();
        match s.outcome() {
            Some(Outcome::Win(w)) if w == me => 2,
            Some(Outcome::Win(_)) => -2,
            Some(Outcome::Draw) => 0,
            None if !winning_moves(s).is_empty() => 1,
            None => 0,
        }
    }))
}

fn progress(on: bool, positions: u64) -> indicatif::ProgressBar {
    if !on {
        return indicatif::ProgressBar::hidden();
    }
    let pb = indicatif::ProgressBar::new(positions);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "ranking moves [{bar:30}] {human_pos}/{human_len} positions ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    pb
}

/// File names [`MovePredictionReport::write`] writes.
pub const MOVES_JSON: &str = "moves.json";
pub const MOVES_CSV: &str = "moves.csv";

impl MovePredictionReport {
    /// One row per evaluator and phase (`all` first).
    fn rows(&self) -> Vec<(String, String, MoveMetrics)> {
        let mut out = Vec::new();
        for r in &self.results {
            out.push((r.name.clone(), "all".to_string(), r.overall.summary()));
            for (p, acc) in PHASES.iter().zip(&r.by_phase) {
                out.push((r.name.clone(), p.to_string(), acc.summary()));
            }
        }
        out
    }

    /// Top-1 / top-5 / MRR per evaluator, overall and by phase.
    pub fn table(&self) -> Table {
        let mut t = Table::with_headers([
            "evaluator",
            "phase",
            "positions",
            "moves/pos",
            "top-1",
            "top-5",
            "MRR",
        ]);
        for (name, phase, m) in self.rows() {
            t.push_row([
                name,
                phase,
                m.positions.to_string(),
                format!("{:.1}", m.mean_moves),
                format!("{:.2}%", 100.0 * m.top1),
                format!("{:.2}%", 100.0 * m.top5),
                format!("{:.4}", m.mrr),
            ]);
        }
        t
    }

    pub fn to_json(&self) -> serde_json::Value {
        let results: Vec<serde_json::Value> = self
            .results
            .iter()
            .map(|r| {
                let phases: serde_json::Map<String, serde_json::Value> = PHASES
                    .iter()
                    .zip(&r.by_phase)
                    .map(|(p, a)| (p.to_string(), serde_json::json!(a.summary())))
                    .collect();
                serde_json::json!({
                    "name": r.name,
                    "description": r.description,
                    "all": r.overall.summary(),
                    "by_phase": phases,
                })
            })
            .collect();
        serde_json::json!({
            "dataset": self.dataset,
            "game": self.game,
            "split": self.split,
            "ranking": "1 ply; ties broken uniformly at random (expectations)",
            "phases": "share of the game played: opening < 1/3 <= middle < 2/3 <= end",
            "results": results,
        })
    }

    /// Writes `moves.json` and `moves.csv` into `dir`, atomically.
    pub fn write(&self, dir: &Path) -> Result<(), EvalError> {
        write_json(dir.join(MOVES_JSON), &self.to_json())?;
        let mut csv = Table::with_headers([
            "evaluator",
            "phase",
            "positions",
            "mean_moves",
            "top1",
            "top5",
            "mrr",
        ]);
        for (n, p, m) in self.rows() {
            csv.push_row([
                n,
                p,
                m.positions.to_string(),
                m.mean_moves.to_string(),
                m.top1.to_string(),
                m.top5.to_string(),
                m.mrr.to_string(),
            ]);
        }
        csv.write_csv(dir.join(MOVES_CSV))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_split_the_game_in_thirds() {
        assert_eq!(phase_of(0, 30), 0);
        assert_eq!(phase_of(9, 21), 0);
        assert_eq!(phase_of(10, 20), 1);
        assert_eq!(phase_of(20, 10), 2);
        assert_eq!(phase_of(0, 0), 0);
    }
}
