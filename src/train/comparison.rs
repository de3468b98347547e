//! Comparison training (Hoki's Bonanza method, as Thitipong, Komiya and
//! Kotani apply it to Arimaa): the evaluation should rank the move played
//! above every other legal move. For a position with children `P_0` (the
//! move played) and `P_m`, and `E` the evaluation for the side that moved,
//!
//! ```text
//! sigmoid: J = r * sum_m T((E(P_m) - E(P_0)) / tau)   T the logistic function,
//!          r = 1 (sum, the paper) or 1 / #others (mean)
//! softmax: J = -log( exp(E(P_0)/tau) / sum_all exp(E(P_i)/tau) )
//! ```
//!
//! `E` is the model's value before its output activation (a sigmoid model's
//! logit, [`ValueNet::pre_activation`]), signed for the mover. The batch loss
//! is the mean of `J` over the batch's positions that have a move played.
//!
//! Memory stays bounded whatever the branching factor: children are
//! evaluated in forward passes of at most `chunk` positions. Rows whose
//! children fit are packed together, one pass each with the graph kept:
//! `J`'s derivative by each child's score is computed from the values, and
//! the gradient is the backward pass of `sum_i dJ/dz_i * z_i` (the same
//! gradient as `J`'s, without holding more than one chunk's graph). A row
//! with more children than `chunk` (an Arimaa middle game: thousands) is
//! scored in chunks first, then the chunks with a non-zero derivative are
//! run again with the graph. Both passes run the model in evaluation mode
//! (no dropout; batch norm on its running statistics), so they agree.
//!
//! Each pass's backward returns gradients for every tensor of its graph
//! (the input batch's included); only the model variables' are kept, so
//! the gradient of a batch is one set of weight-sized tensors however
//! many passes it took. Children are held as the encoder's int8 planes
//! and widened to f32 one pass at a time. [`ComparisonConfig::peak_bytes`]
//! bounds what a batch holds, so a run that cannot fit is refused before
//! it starts.

use candle_core::backprop::GradStore;
use candle_core::{Device, Tensor, Var};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::trainer::FitError;
use crate::model::{ModelConfig, ValueNet};
use crate::positions::children::{ChildExpander, Children, MoveRow, PlayedRank};
use crate::util::derive_seed;
use crate::util::memory::MemoryLimit;

/// The function of the score differences a position is charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ComparisonLoss {
    /// The paper's: a logistic function of each other move's margin over
    /// the played move.
    Sigmoid,
    /// The log-likelihood of the played move under a softmax of the scores.
    Softmax,
}

/// How the sigmoid loss adds up a position's other moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduce {
    /// The paper's sum: positions with more moves weigh more.
    Sum,
    /// The mean over the other moves: every position weighs the same.
    Mean,
}

/// The settings of the comparison objective.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonConfig {
    pub loss: ComparisonLoss,
    /// Score differences are divided by this (in the model's pre-activation
    /// units).
    pub temperature: f64,
    pub reduce: Reduce,
    /// Other moves per position drawn at random (seeded); `None`: all.
    pub sample: Option<usize>,
    /// Children per forward pass.
    pub chunk: usize,
    /// Weight of the value loss on the position before the move, added to
    /// the comparison loss (0: comparison only).
    pub value_weight: f64,
}

/// The paper's material values are in units where a rabbit is 1000; the
/// `linear` model's Bonanza start (`data/arimaa/models/linear-material.json`)
/// holds them times this, as logits.
pub const BONANZA_LOGIT_PER_UNIT: f64 = 1.0 / 5000.0;

/// The paper's learning rate `h = 10` on weights in its units, as a rate on
/// the logit-scaled weights (`h * unit^2`: the weights and the gradient are
/// both rescaled by the unit).
pub const BONANZA_LR: f64 = 10.0 * BONANZA_LOGIT_PER_UNIT * BONANZA_LOGIT_PER_UNIT;

impl Default for ComparisonConfig {
    /// Sigmoid of the logit margin, averaged over all other moves (every
    /// position weighs the same whatever its branching factor), all moves
    /// (generating them is needed to check the played move anyway, and
    /// for the linear and small models the forward pass costs less than
    /// the generation; sample for large nets).
    fn default() -> Self {
        ComparisonConfig {
            loss: ComparisonLoss::Sigmoid,
            temperature: 1.0,
            reduce: Reduce::Mean,
            sample: None,
            chunk: 4096,
            value_weight: 0.0,
        }
    }
}

impl ComparisonConfig {
    /// Thitipong et al.'s settings (section III.C): the sigmoid of the raw
    /// evaluation difference in material units summed over all other moves,
    /// the real gradient (not its sign) with `h = 10`, one position per
    /// update. With the `linear` Bonanza start, the temperature converts
    /// logits back to those units and [`BONANZA_LR`] is `h`.
    pub fn bonanza() -> Self {
        ComparisonConfig {
            loss: ComparisonLoss::Sigmoid,
            temperature: BONANZA_LOGIT_PER_UNIT,
            reduce: Reduce::Sum,
            sample: None,
            chunk: 4096,
            value_weight: 0.0,
        }
    }

    pub fn validate(&self) -> Result<(), FitError> {
        let bad = |field: &'static str, why: String| Err(FitError::Invalid { field, why });
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return bad(
                "temperature",
                format!("{}, expected a number > 0", self.temperature),
            );
        }
        if !(self.value_weight.is_finite() && self.value_weight >= 0.0) {
            return bad(
                "value-weight",
                format!("{}, expected a number >= 0", self.value_weight),
            );
        }
        if self.chunk == 0 {
            return bad("chunk", "0, expected at least 1".into());
        }
        if self.sample == Some(0) {
            return bad("sample", "0, expected at least 1 other move".into());
        }
        Ok(())
    }

    /// What a batch holds at its peak, worked out before a run starts:
    /// `rows_at_once` rows expanded together (the rayon threads), each with
    /// up to `widest` children (or the sample), held as int8 planes; the
    /// pass of `chunk` children widened to f32 with the model's kept
    /// activations and their gradients; the weights with their gradient and
    /// optimizer state. Saturating: an absurd setting gives `u64::MAX`.
    pub fn peak(
        &self,
        model: &ModelConfig,
        [c, h, w]: [usize; 3],
        globals: usize,
        widest: Option<u64>,
        rows_at_once: usize,
    ) -> ComparisonPeak {
        let plane = (c as u64).saturating_mul(h as u64).saturating_mul(w as u64);
        let globals = globals as u64;
        // int8 planes, f32 globals, the sign.
        let child = plane
            .saturating_add(globals.saturating_mul(4))
            .saturating_add(4);
        let kept = match (self.sample, widest) {
            (Some(k), Some(most)) => (k as u64).saturating_add(1).min(most),
            (Some(k), None) => (k as u64).saturating_add(1),
            (None, Some(most)) => most,
            (None, None) => 0,
        };
        let chunk = self.chunk as u64;
        // Rows being expanded, plus the packed group waiting for its pass.
        let children = (rows_at_once as u64)
            .saturating_mul(kept)
            .saturating_add(chunk)
            .saturating_mul(child);
        let per_child_pass = plane
            .saturating_add(globals)
            .saturating_add(model.activation_floats().saturating_mul(2))
            .saturating_mul(4);
        let pass = chunk.saturating_mul(per_child_pass);
        // Weights, their gradient, two optimizer moments.
        let weights = (model.num_params() as u64).saturating_mul(16);
        ComparisonPeak {
            children,
            pass,
            weights,
            per_child_pass,
            kept,
        }
    }

    /// One position's loss and its derivative by each child's score for the
    /// mover (`scores[0]` is the move played).
    pub fn position_loss(&self, scores: &[f64]) -> (f64, Vec<f64>) {
        let n = scores.len();
        let tau = self.temperature;
        let mut d = vec![0.0; n];
        if n < 2 {
            return (0.0, d);
        }
        match self.loss {
            ComparisonLoss::Sigmoid => {
                let r = match self.reduce {
                    Reduce::Sum => 1.0,
                    Reduce::Mean => 1.0 / (n - 1) as f64,
                };
                let mut j = 0.0;
                for m in 1..n {
                    let t = logistic((scores[m] - scores[0]) / tau);
                    j += r * t;
                    d[m] = r * t * (1.0 - t) / tau;
                    d[0] -= d[m];
                }
                (j, d)
            }
            ComparisonLoss::Softmax => {
                let top = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let exps: Vec<f64> = scores.iter().map(|s| ((s - top) / tau).exp()).collect();
                let total: f64 = exps.iter().sum();
                for (di, e) in d.iter_mut().zip(&exps) {
                    *di = e / total / tau;
                }
                d[0] -= 1.0 / tau;
                (total.ln() - (scores[0] - top) / tau, d)
            }
        }
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The parts of a batch's peak memory, in bytes ([`ComparisonConfig::peak`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComparisonPeak {
    /// Expanded children waiting for their pass.
    pub children: u64,
    /// One forward pass of `chunk` children with its graph.
    pub pass: u64,
    /// Weights, gradients and optimizer state.
    pub weights: u64,
    /// Bytes of one child in a pass.
    pub per_child_pass: u64,
    /// Children kept per position (the sample + 1, or the widest position).
    pub kept: u64,
}

impl ComparisonPeak {
    pub fn total(&self) -> u64 {
        self.children
            .saturating_add(self.pass)
            .saturating_add(self.weights)
    }

    /// Refuses a peak over `limit`, naming the setting that would bring it
    /// under: `--chunk` when the pass is the larger part, else `--sample`.
    pub fn check(&self, cfg: &ComparisonConfig, limit: &MemoryLimit) -> Result<(), FitError> {
        if self.total() <= limit.bytes {
            return Ok(());
        }
        let advice = if self.pass >= self.children {
            let room = limit
                .bytes
                .saturating_sub(self.children.saturating_add(self.weights));
            let fits = room / self.per_child_pass.max(1);
            format!(
                "lower --chunk (now {}; each child of a pass takes {} bytes, so about {} fit)",
                cfg.chunk, self.per_child_pass, fits
            )
        } else {
            match cfg.sample {
                Some(k) => format!("lower --sample (now {k}) or --chunk (now {})", cfg.chunk),
                None => format!(
                    "rank a sample of the other moves with --sample K (now all of them, up to \
                     {} a position) or use fewer threads (RAYON_NUM_THREADS)",
                    self.kept
                ),
            }
        };
        Err(FitError::ComparisonMemory {
            needs: self.total(),
            children: self.children,
            pass: self.pass,
            limit: *limit,
            advice,
        })
    }
}

/// What one batch of positions gave.
#[derive(Debug, Default)]
pub struct BatchComparison {
    /// Sum of the positions' losses.
    pub loss_sum: f64,
    /// Sum of the positions' top-1 shares (ties shared).
    pub top1_sum: f64,
    pub positions: usize,
    /// The gradient of `scale * loss_sum`, when asked for and non-empty.
    pub grads: Option<GradStore>,
}

/// Scores children with a model and charges the comparison loss.
pub struct Comparer<'a> {
    pub net: &'a dyn ValueNet,
    pub expander: &'a dyn ChildExpander,
    pub cfg: &'a ComparisonConfig,
    /// The encoder's `[C, H, W]`.
    pub shape: [usize; 3],
    pub device: &'a Device,
    /// The trained variables: the only gradients kept.
    pub vars: &'a [Var],
}

impl Comparer<'_> {
    /// Expands and scores `rows`; with `grads`, also the gradient of
    /// `scale` times their summed loss. Row `i` samples its other moves
    /// (when sampling) with a seed derived from `(seed, i)`.
    pub fn run(
        &self,
        rows: &[MoveRow],
        scale: f64,
        seed: u64,
        grads: bool,
    ) -> Result<BatchComparison, FitError> {
        let mut out = BatchComparison::default();
        let mut group: Vec<Children> = Vec::new();
        let mut group_len = 0;
        let block = rayon::current_num_threads().max(1);
        for (b, rows) in rows.chunks(block).enumerate() {
            let expanded: Vec<_> = rows
                .par_iter()
                .enumerate()
                .map(|(j, row)| {
                    let i = (b * block + j) as u64;
                    self.expander
                        .expand(row, self.cfg.sample.map(|k| (k, derive_seed(seed, i))))
                })
                .collect();
            for c in expanded {
                let c = c.map_err(|e| FitError::Children(Box::new(e)))?;
                if c.len > self.cfg.chunk {
                    self.large(c, scale, grads, &mut out)?;
                    continue;
                }
                if group_len + c.len > self.cfg.chunk {
                    self.packed(std::mem::take(&mut group), scale, grads, &mut out)?;
                    group_len = 0;
                }
                group_len += c.len;
                group.push(c);
            }
        }
        self.packed(group, scale, grads, &mut out)?;
        Ok(out)
    }

    /// Keeps `more`'s gradients of the trained variables, adding them in.
    fn add(&self, acc: &mut Option<GradStore>, more: GradStore) -> Result<(), FitError> {
        add_grads(acc, keep_vars(more, self.vars))
    }

    fn tensors(
        &self,
        planes: Vec<f32>,
        globals: Vec<f32>,
    ) -> Result<(Tensor, Option<Tensor>), FitError> {
        let [c, h, w] = self.shape;
        let n = planes.len() / (c * h * w).max(1);
        let x = Tensor::from_vec(planes, (n, c, h, w), self.device)?;
        let g = if globals.is_empty() {
            None
        } else {
            let per = globals.len() / n.max(1);
            Some(Tensor::from_vec(globals, (n, per), self.device)?)
        };
        Ok((x, g))
    }

    /// Records one position's loss; returns the derivative by each child's
    /// model value (the mover's sign applied).
    fn charge(&self, c: &Children, z: &[f32], out: &mut BatchComparison) -> Vec<f64> {
        let scores: Vec<f64> = z
            .iter()
            .zip(&c.sign)
            .map(|(&v, &s)| f64::from(v * s))
            .collect();
        let (j, d) = self.cfg.position_loss(&scores);
        out.loss_sum += j;
        out.top1_sum += PlayedRank::of(&scores).top(1);
        out.positions += 1;
        d.into_iter()
            .zip(&c.sign)
            .map(|(d, &s)| d * f64::from(s))
            .collect()
    }

    /// Rows whose children fit one pass together.
    fn packed(
        &self,
        group: Vec<Children>,
        scale: f64,
        grads: bool,
        out: &mut BatchComparison,
    ) -> Result<(), FitError> {
        if group.is_empty() {
            return Ok(());
        }
        let p = self.expander.plane_len();
        let total: usize = group.iter().map(|c| c.len).sum();
        let mut planes = Vec::with_capacity(total * p);
        let mut globals = Vec::new();
        for c in &group {
            c.planes_f32(0, c.len, p, &mut planes);
            globals.extend_from_slice(&c.globals);
        }
        let (x, g) = self.tensors(planes, globals)?;
        let z = self.net.pre_activation(&x, g.as_ref(), false)?;
        let values = z.to_vec1::<f32>()?;
        let mut weights = Vec::with_capacity(values.len());
        let mut at = 0;
        for c in &group {
            let d = self.charge(c, &values[at..at + c.len], out);
            weights.extend(d.into_iter().map(|d| (d * scale) as f32));
            at += c.len;
        }
        if grads && weights.iter().any(|&w| w != 0.0) {
            let w = Tensor::from_vec(weights, values.len(), self.device)?;
            self.add(&mut out.grads, (z * w)?.sum_all()?.backward()?)?;
        }
        Ok(())
    }

    /// One row with more children than a pass takes.
    fn large(
        &self,
        c: Children,
        scale: f64,
        grads: bool,
        out: &mut BatchComparison,
    ) -> Result<(), FitError> {
        let (p, g) = (self.expander.plane_len(), self.expander.globals_len());
        let chunk = self.cfg.chunk;
        let pass = |from: usize, to: usize| -> Result<Tensor, FitError> {
            let mut planes = Vec::with_capacity((to - from) * p);
            c.planes_f32(from, to, p, &mut planes);
            let (x, gl) = self.tensors(planes, c.globals[from * g..to * g].to_vec())?;
            Ok(self.net.pre_activation(&x, gl.as_ref(), false)?)
        };
        let mut values = Vec::with_capacity(c.len);
        for from in (0..c.len).step_by(chunk) {
            let to = (from + chunk).min(c.len);
            values.extend(pass(from, to)?.detach().to_vec1::<f32>()?);
        }
        let d = self.charge(&c, &values, out);
        if !grads {
            return Ok(());
        }
        for from in (0..c.len).step_by(chunk) {
            let to = (from + chunk).min(c.len);
            if d[from..to].iter().all(|&x| x == 0.0) {
                continue;
            }
            let w: Vec<f32> = d[from..to].iter().map(|&x| (x * scale) as f32).collect();
            let w = Tensor::from_vec(w, to - from, self.device)?;
            self.add(
                &mut out.grads,
                (pass(from, to)? * w)?.sum_all()?.backward()?,
            )?;
        }
        Ok(())
    }
}

/// The gradients of `vars` in `grads`, detached from the graph that made
/// them; the rest (every intermediate tensor's, the input batch's) dropped.
pub(crate) fn keep_vars(mut grads: GradStore, vars: &[Var]) -> GradStore {
    let mut kept = GradStore::default();
    for v in vars {
        if let Some(g) = grads.remove(v.as_tensor()) {
            kept.insert(v.as_tensor(), g.detach());
        }
    }
    kept
}

/// Adds `more` into `acc`.
pub(crate) fn add_grads(acc: &mut Option<GradStore>, more: GradStore) -> Result<(), FitError> {
    match acc {
        Some(a) => a.extend(more)?,
        None => *acc = Some(more),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The derivative of `position_loss` against central differences.
    #[test]
    fn position_loss_derivatives_match_finite_differences() {
        let scores = [0.3, 0.9, -0.2, 0.3, 1.7];
        for cfg in [
            ComparisonConfig::default(),
            ComparisonConfig {
                reduce: Reduce::Sum,
                temperature: 0.5,
                ..ComparisonConfig::default()
            },
            ComparisonConfig {
                loss: ComparisonLoss::Softmax,
                temperature: 0.7,
                ..ComparisonConfig::default()
            },
        ] {
            let (_, d) = cfg.position_loss(&scores);
            for i in 0..scores.len() {
                let h = 1e-6;
                let mut up = scores;
                up[i] += h;
                let mut down = scores;
                down[i] -= h;
                let fd = (cfg.position_loss(&up).0 - cfg.position_loss(&down).0) / (2.0 * h);
                assert!(
                    (fd - d[i]).abs() < 1e-7,
                    "{cfg:?} child {i}: {fd} vs {}",
                    d[i]
                );
            }
        }
    }

    #[test]
    fn a_position_with_one_move_costs_nothing() {
        let (j, d) = ComparisonConfig::default().position_loss(&[0.4]);
        assert_eq!((j, d), (0.0, vec![0.0]));
    }
}
