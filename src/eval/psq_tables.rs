//! A `linear` checkpoint's piece-square weights as tables, one per plane
//! (per piece type for `arimaa-6x8x8`), like the Bonanza paper's tables
//! I-VI: printed as text and drawn as heatmaps.
//!
//! Weights are shown in the units the model was started in: a table
//! started from material values (`init: material` with `scale`) is divided
//! by that scale, so Arimaa's read in the paper's units (a rabbit 1000).

use super::EvalError;
use crate::checkpoint::Checkpoint;
use crate::games::{GameKind, GameSupport};
use crate::model::{LinearInit, ModelConfig};
use crate::report::{Heatmap, Heatmaps};

/// The tables of one checkpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct PsqTables {
    pub title: String,
    /// What one unit of the values is.
    pub units: String,
    pub col_labels: Vec<String>,
    pub row_labels: Vec<String>,
    /// One per plane, in the encoder's plane order.
    pub planes: Vec<Heatmap>,
}

/// The piece-square tables of a `linear` checkpoint.
pub fn psq_tables(ckpt: &Checkpoint) -> Result<PsqTables, EvalError> {
    let not_linear = |why: String| EvalError::InvalidArgument {
        field: "checkpoint",
        expected: "a `linear` checkpoint (piece-square weights)".into(),
        found: why,
    };
    let ModelConfig::Linear(cfg) = &ckpt.config.model else {
        return Err(not_linear(format!(
            "{}: a `{}` model",
            ckpt.dir.display(),
            ckpt.config.model.kind()
        )));
    };
    if !cfg.board {
        return Err(not_linear(format!(
            "{}: a linear model without a board term (\"board\": false) has no piece-square tables",
            ckpt.dir.display()
        )));
    }
    let weights = ckpt
        .tensors
        .get("psq.weight")
        .ok_or_else(|| not_linear(format!("{}: no tensor `psq.weight`", ckpt.dir.display())))?;
    let [c, h, w] = cfg.input.planes;
    let values: Vec<f32> = weights.flatten_all()?.to_vec1::<f32>()?;
    let (scale, units) = match &cfg.init {
        LinearInit::Material { scale, .. } if *scale != 0.0 => (
            *scale,
            format!("the start's material units (logit x {})", 1.0 / scale),
        ),
        _ => (1.0, "logits (the model's weights)".to_string()),
    };
    let enc = &ckpt.config.encoder;
    let labels = enc.name.clone();
    let (names, (cols, rows)) = ckpt
        .config
        .game
        .parse::<GameKind>()
        .ok()
        .and_then(|kind| {
            with_game!(kind, G => G::encoder(&enc.name, w).ok().map(|e| (e.plane_names(), e.axis_labels())))
        })
        .unwrap_or_else(|| {
            (
                (0..c).map(|i| format!("plane {i}")).collect(),
                (
                    (0..w).map(|i| i.to_string()).collect(),
                    (0..h).map(|i| i.to_string()).collect(),
                ),
            )
        });
    let planes = (0..c)
        .map(|p| Heatmap {
            name: names
                .get(p)
                .cloned()
                .unwrap_or_else(|| format!("plane {p}")),
            rows: h,
            cols: w,
            values: values[p * h * w..(p + 1) * h * w]
                .iter()
                .map(|&v| f64::from(v) / scale)
                .collect(),
        })
        .collect();
    Ok(PsqTables {
        title: format!("{} ({labels}), in {units}", ckpt.dir.display()),
        units,
        col_labels: cols,
        row_labels: rows,
        planes,
    })
}

impl PsqTables {
    /// The tables as text, one block per plane, rounded to whole units.
    pub fn text(&self) -> String {
        let mut out = format!("{}\n", self.title);
        for p in &self.planes {
            out += &format!("\n{}\n", p.name);
            out += &format!(
                "     {}\n",
                self.col_labels
                    .iter()
                    .map(|l| format!("{l:>7}"))
                    .collect::<String>()
            );
            for r in 0..p.rows {
                let label = self.row_labels.get(r).cloned().unwrap_or_default();
                let cells: String = p.values[r * p.cols..(r + 1) * p.cols]
                    .iter()
                    .map(|v| format!("{:>7}", format!("{v:.0}")))
                    .collect();
                out += &format!("{label:>4} {cells}\n");
            }
        }
        out
    }

    /// The tables as heatmap panels.
    pub fn heatmaps(&self) -> Heatmaps {
        Heatmaps {
            title: self.title.clone(),
            col_labels: self.col_labels.clone(),
            row_labels: self.row_labels.clone(),
            panels: self.planes.clone(),
        }
    }
}
