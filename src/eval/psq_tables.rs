//! A `linear` checkpoint's piece-square weights as tables, one per plane
//! (per piece type for `arimaa-6x8x8`), like the Bonanza paper's tables
//! I-VI: printed as text and drawn as heatmaps; and its weights on the
//! encoder's globals, by name (all there is of a model without the board
//! term).
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
    /// One per plane, in the encoder's plane order; none without the
    /// board term.
    pub planes: Vec<Heatmap>,
    /// The weight on each global feature, by name, in the same units.
    pub globals: Vec<(String, f64)>,
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
    let tensor = |name: &str| -> Result<Vec<f32>, EvalError> {
        let t = ckpt
            .tensors
            .get(name)
            .ok_or_else(|| not_linear(format!("{}: no tensor `{name}`", ckpt.dir.display())))?;
        Ok(t.flatten_all()?.to_vec1::<f32>()?)
    };
    let [c, h, w] = cfg.input.planes;
    let values = if cfg.board {
        tensor("psq.weight")?
    } else {
        Vec::new()
    };
    let global_weights = if cfg.input.globals > 0 {
        tensor("globals.weight")?
    } else {
        Vec::new()
    };
    let (scale, units) = match &cfg.init {
        LinearInit::Material { scale, .. } if *scale != 0.0 => (
            *scale,
            format!("the start's material units (logit x {})", 1.0 / scale),
        ),
        _ => (1.0, "logits (the model's weights)".to_string()),
    };
    let enc = &ckpt.config.encoder;
    let labels = enc.name.clone();
    let (names, (cols, rows), global_names) = ckpt
        .config
        .game
        .parse::<GameKind>()
        .ok()
        .and_then(|kind| {
            with_game!(kind, G => G::encoder(&enc.name, w).ok().map(|e| (e.plane_names(), e.axis_labels(), e.global_names())))
        })
        .unwrap_or_else(|| {
            (
                (0..c).map(|i| format!("plane {i}")).collect(),
                (
                    (0..w).map(|i| i.to_string()).collect(),
                    (0..h).map(|i| i.to_string()).collect(),
                ),
                Vec::new(),
            )
        });
    let globals = global_weights
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let name = global_names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("global {i}"));
            (name, f64::from(v) / scale)
        })
        .collect();
    let board_planes = if cfg.board { c } else { 0 };
    let planes = (0..board_planes)
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
        globals,
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
        if self.planes.is_empty() {
            out += "\nno board term (\"board\": false): the globals are the whole model\n";
        }
        if !self.globals.is_empty() {
            // Largest first: what the model leans on.
            let mut by_size = self.globals.clone();
            by_size.sort_by(|a, b| b.1.abs().total_cmp(&a.1.abs()));
            let width = by_size.iter().map(|g| g.0.len()).max().unwrap_or(0);
            out += "\nglobals, largest weight first\n";
            for (name, v) in by_size {
                out += &format!("  {name:<width$}  {v:>9.4}\n");
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
