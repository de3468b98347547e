//! Search-value targets: a dataset whose labels are (or are mixed with)
//! what a depth-limited alpha-beta search with a given evaluator thinks of
//! each position, instead of the result of the game it came from.
//!
//! A game result is one noisy bit shared by every position of the game; a
//! search value is a dense target specific to the position. A network
//! fitted on the values of a depth-D search approximates that search, so
//! a depth-d search over it sees about d + D moves for the price of d
//! (the idea behind TD-leaf, texel-style tuning and search-labelled
//! engine data). Finished positions keep their exact result.
//!
//! The label of a row becomes `(1 - mix) * result + mix * (v + 1) / 2`,
//! `v` the search's score for the side to move on `[-1, 1]` (a hand
//! evaluator's score squashed by its scale, a model's value as it is,
//! forced results +-1).

use std::path::{Path, PathBuf};
use std::time::Instant;

use rayon::prelude::*;
use serde::Serialize;

use super::PositionsError;
use crate::dataset::{Dataset, DatasetWriter, PositionRow};
use crate::games::GameSupport;
use crate::search::alphabeta::{search, SearchLimits};
use crate::search::game_player::PlayerContext;
use crate::search::scorer::Scorer;

/// Which search labels the positions, and how much of the label it makes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchLabels {
    /// An evaluator name as players take it (`lieberum`, `ckpt:PATH`, ...).
    pub eval: String,
    /// Alpha-beta depth in moves, 1 or more.
    pub depth: u32,
    /// Share of the label that comes from the search, `0..=1`.
    pub mix: f32,
}

impl SearchLabels {
    /// A depth of at least 1 and a mix on `0..=1`, or the option at fault.
    pub fn check(&self) -> Result<(), PositionsError> {
        if self.depth == 0 {
            return Err(PositionsError::InvalidOption {
                option: "--depth",
                expected: "a depth of 1 or more moves".into(),
                found: "0".into(),
            });
        }
        if !(0.0..=1.0).contains(&self.mix) {
            return Err(PositionsError::InvalidOption {
                option: "--mix",
                expected: "a share between 0 and 1".into(),
                found: self.mix.to_string(),
            });
        }
        Ok(())
    }
}

/// What [`label_by_search`] did.
#[derive(Clone, Debug, Serialize)]
pub struct SearchLabelReport {
    pub out: PathBuf,
    pub labels: SearchLabels,
    pub rows: u64,
    /// Positions searched (the others were finished games).
    pub searched: u64,
    /// Of the searched positions, those where the search's side agrees
    /// with the game's winner (draws and even scores left out).
    pub agree_with_result: f64,
    /// Mean absolute change of the label.
    pub mean_change: f64,
    /// Alpha-beta nodes visited, over all positions.
    pub nodes: u64,
    pub seconds: f64,
}

impl std::fmt::Display for SearchLabelReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "labelled {} rows into {} ({} searched by alpha-beta depth {} with {}, mix {}): \
             the search agrees with the game's winner on {:.1}% of them; mean label change \
             {:.3}; {} nodes in {:.1} s",
            self.rows,
            self.out.display(),
            self.searched,
            self.labels.depth,
            self.labels.eval,
            self.labels.mix,
            100.0 * self.agree_with_result,
            self.mean_change,
            self.nodes,
            self.seconds
        )
    }
}

/// One row's new label, the search's value (`None`: finished game), nodes.
fn row_label<G: GameSupport>(
    data: &Path,
    row: &PositionRow,
    scorer: &Scorer<G>,
    labels: &SearchLabels,
) -> Result<(f32, Option<f32>, u64), PositionsError> {
    let state = G::from_text(&row.position).map_err(|e| PositionsError::BadStart {
        source_name: format!("{}: ply {}", data.display(), row.ply),
        id: row.game_id.clone(),
        why: format!("the position does not read back: {e}"),
    })?;
    if state.outcome().is_some() {
        return Ok((row.label, None, 0));
    }
    let found = search(&state, None, scorer, &SearchLimits::depth(labels.depth));
    let value = scorer.value_of(found.score);
    let target = (value + 1.0) / 2.0;
    let label = (1.0 - labels.mix) * row.label + labels.mix * target;
    Ok((label, Some(value), found.nodes))
}

/// Writes `out`: the dataset `data` with every label replaced as `labels`
/// say (every other column as stored). `out` must not be `data`; a
/// dataset already in `out` is replaced once the new one is complete.
pub fn label_by_search<G: GameSupport>(
    data: &Path,
    out: &Path,
    labels: &SearchLabels,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<SearchLabelReport, PositionsError> {
    let start = Instant::now();
    labels.check()?;
    let same = match (data.canonicalize(), out.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        return Err(PositionsError::InvalidOption {
            option: "--out",
            expected: "a directory other than the input dataset's".into(),
            found: out.display().to_string(),
        });
    }
    let ds = Dataset::open(data)?;
    let spec = ds.spec();
    if spec.game != G::NAME {
        return Err(PositionsError::Game(format!(
            "{}: a {} dataset, not {}",
            data.display(),
            spec.game,
            G::NAME
        )));
    }
    let mut rows = ds.rows(None)?;
    // The evaluator is built for the dataset's board (its positions all
    // have one size: the encoder's).
    let size = match rows.first() {
        Some(r) => G::from_text(&r.position)
            .map(|s| s.size())
            .unwrap_or(G::DEFAULT_SIZE),
        None => G::DEFAULT_SIZE,
    };
    let ctx = PlayerContext {
        size,
        ..PlayerContext::default_for::<G>()
    };
    let scorer =
        Scorer::<G>::by_name(&labels.eval, &ctx).map_err(|e| PositionsError::InvalidOption {
            option: "--eval",
            expected: format!("an evaluator of {}", G::NAME),
            found: e.to_string(),
        })?;
    if let Some(bar) = progress {
        bar.set_length(rows.len() as u64);
    }
    let found: Vec<(f32, Option<f32>, u64)> = rows
        .par_iter()
        .map(|row| {
            let r = row_label(data, row, &scorer, labels);
            if let Some(bar) = progress {
                bar.inc(1);
            }
            r
        })
        .collect::<Result<_, _>>()?;
    scorer
        .take_error()
        .map_err(|e| PositionsError::InvalidOption {
            option: "--eval",
            expected: "an evaluator that values every position".into(),
            found: e.to_string(),
        })?;
    let (mut searched, mut agree, mut decided, mut nodes, mut change) = (0u64, 0u64, 0u64, 0, 0.0);
    for (row, &(label, value, n)) in rows.iter_mut().zip(&found) {
        nodes += n;
        change += f64::from((label - row.label).abs());
        if let Some(v) = value {
            searched += 1;
            if v != 0.0 && row.label != 0.5 {
                decided += 1;
                agree += u64::from((v > 0.0) == (row.label > 0.5));
            }
        }
        row.label = label;
    }
    let total = rows.len() as u64;
    let mut writer = DatasetWriter::create_overwrite(out, spec)?;
    for row in rows {
        writer.push(row)?;
    }
    writer.finish(serde_json::json!({
        "made_by": "plies dataset relabel",
        "from": data.display().to_string(),
        "from_manifest_sha256": ds.manifest_sha256(),
        "search_labels": labels,
    }))?;
    Ok(SearchLabelReport {
        out: out.to_path_buf(),
        labels: labels.clone(),
        rows: total,
        searched,
        agree_with_result: if decided == 0 {
            0.0
        } else {
            agree as f64 / decided as f64
        },
        mean_change: if total == 0 {
            0.0
        } else {
            change / total as f64
        },
        nodes,
        seconds: start.elapsed().as_secs_f64(),
    })
}
