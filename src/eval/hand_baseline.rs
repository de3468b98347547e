//! Any game's evaluators by name (`random`, its hand evaluators such as
//! Amazons' `lieberum` and `mindist`) as baselines on a dataset: each
//! row's position is re-read from its text and valued for the side to
//! move, on `[-1, 1]`, then put on the label scale as `(v + 1) / 2`.

use super::{EvalError, GroupedMetrics};
use crate::dataset::{Dataset, PositionRow, Split};
use crate::game::Game;
use crate::games::{GameKind, GameSupport};
use crate::infer::Evaluator;
use crate::search::evaluators::{evaluator_by_name, EvalContext};
use rayon::prelude::*;

/// The names `baseline_metrics` takes for a dataset of `game`.
pub fn baseline_names(game: &str) -> Vec<String> {
    match game.parse::<GameKind>() {
        Ok(kind) => with_game!(kind, G => {
            let mut names: Vec<String> = G::HAND_EVALS.iter().map(|n| n.to_string()).collect();
            names.push("random".into());
            names
        }),
        Err(_) => vec!["random".into()],
    }
}

/// The metrics of evaluator `name` of the dataset's game on `split` (every
/// row for `None`).
pub fn baseline_metrics(
    dataset: &Dataset,
    split: Option<Split>,
    name: &str,
) -> Result<GroupedMetrics, EvalError> {
    let spec = dataset.spec();
    let kind: GameKind =
        spec.game
            .parse()
            .map_err(|e: crate::games::SupportError| EvalError::InvalidArgument {
                field: "game",
                expected: "a game plies knows".into(),
                found: e.to_string(),
            })?;
    with_game!(kind, G => game_baseline::<G>(dataset, split, name))
}

fn game_baseline<G: GameSupport>(
    dataset: &Dataset,
    split: Option<Split>,
    name: &str,
) -> Result<GroupedMetrics, EvalError> {
    let size = dataset.spec().encoder.shape[2];
    let eval = evaluator_by_name::<G>(name, size, &EvalContext::default()).map_err(|e| {
        EvalError::InvalidArgument {
            field: "baseline",
            expected: format!("one of {}", baseline_names(G::NAME).join(", ")),
            found: format!("{name} ({e})"),
        }
    })?;
    let rows = dataset
        .rows(split)
        .map_err(|e| EvalError::Dataset(Box::new(e)))?;
    rows_metrics::<G>(dataset.dir(), eval.as_ref(), &rows, name)
}

/// The metrics of `eval` (values for the side to move on `[-1, 1]`) on
/// `rows` of the dataset in `dir`, their positions re-read from text.
pub fn rows_metrics<G: Game>(
    dir: &std::path::Path,
    eval: &dyn Evaluator<G>,
    rows: &[PositionRow],
    name: &str,
) -> Result<GroupedMetrics, EvalError> {
    rows.par_chunks(256)
        .map(|chunk| {
            let mut states = Vec::with_capacity(chunk.len());
            for r in chunk {
                states.push(
                    G::from_text(&r.position).map_err(|e| EvalError::BadPosition {
                        dataset: dir.to_path_buf(),
                        game_id: r.game_id.clone(),
                        ply: r.ply,
                        why: e.to_string(),
                    })?,
                );
            }
            let values = values_of(eval, &states, name)?;
            let mut m = GroupedMetrics::default();
            for (r, v) in chunk.iter().zip(values) {
                let p = ((v + 1.0) / 2.0).clamp(0.0, 1.0);
                m.push(p, r.label, r.ply, r.plies_to_end);
            }
            Ok(m)
        })
        .try_reduce(GroupedMetrics::default, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })
}

fn values_of<G: Game>(
    eval: &dyn Evaluator<G>,
    states: &[G],
    name: &str,
) -> Result<Vec<f32>, EvalError> {
    eval.evaluate(states)
        .map_err(|e| EvalError::InvalidArgument {
            field: "baseline",
            expected: "an evaluator that values every position".into(),
            found: format!("{name}: {e}"),
        })
}
