//! The CPU twin of a device backend: a plan's ops executed one by one, in
//! the plan's layouts and precision, on its slots, at the padded bucket
//! size. Plain loops (positions in parallel): it is the reference a device
//! backend is compared with, not a fast path.

use super::{Conv, Dense, NetPlan, Op, Precision, SlotPlan};
use crate::infer::backend::{Backend, Encoded, Outputs};
use crate::infer::InferError;
use crate::model::OutputActivation;
use rayon::prelude::*;
use std::sync::Arc;

/// A plan and its slots, run on the CPU.
pub struct PlanTwin {
    plan: Arc<NetPlan>,
    slots: SlotPlan,
}

impl PlanTwin {
    pub fn new(plan: NetPlan) -> Self {
        let slots = plan.slots();
        PlanTwin {
            plan: Arc::new(plan),
            slots,
        }
    }

    pub fn plan(&self) -> &NetPlan {
        &self.plan
    }

    /// Values (and policy logits) of `batch`, chunk by chunk of at most
    /// the largest bucket, each run padded to its bucket.
    pub fn run(&self, batch: &Encoded) -> Result<Outputs, InferError> {
        let plan = &self.plan;
        if batch.shape != plan.planes || batch.globals_len != plan.globals {
            return Err(InferError::Plan(format!(
                "{} plan reads planes {:?} and {} globals, the batch has {:?} and {}",
                plan.model, plan.planes, plan.globals, batch.shape, batch.globals_len
            )));
        }
        let mut values = Vec::with_capacity(batch.rows);
        let mut policy = plan.policy.map(|_| Vec::with_capacity(batch.rows));
        let largest = plan.buckets.largest();
        let mut start = 0;
        while start < batch.rows {
            let rows = (batch.rows - start).min(largest);
            let bucket = plan.buckets.for_rows(rows);
            let slots = self.execute(batch, start, rows, bucket);
            let read = |b: super::BufId| {
                let per = plan.per_row[b.0];
                let s = &slots[self.slots.slot(b)];
                (0..rows).map(move |r| &s[r * per..(r + 1) * per])
            };
            values.extend(read(plan.value).map(|v| v[0]));
            if let (Some(p), Some(out)) = (plan.policy, policy.as_mut()) {
                out.extend(read(p).map(<[f32]>::to_vec));
            }
            start += rows;
        }
        Ok(Outputs { values, policy })
    }

    /// Every op over rows `start..start + rows` of `batch`, padded with
    /// zero positions to `bucket`; the slots afterwards.
    fn execute(&self, batch: &Encoded, start: usize, rows: usize, bucket: usize) -> Vec<Vec<f32>> {
        let plan = &self.plan;
        let mut slots: Vec<Vec<f32>> = self
            .slots
            .per_row
            .iter()
            .map(|&n| vec![0f32; n * bucket])
            .collect();
        for op in &plan.ops {
            let dst_slot = self.slots.slot(op.writes());
            // The op writes one slot and reads others (never its own).
            let mut dst = std::mem::take(&mut slots[dst_slot]);
            let per = plan.per_row[op.writes().0];
            let dst_rows = &mut dst[..per * bucket];
            match op {
                Op::Widen { .. } => widen(batch, start, rows, dst_rows, plan.precision),
                Op::Globals { .. } => {
                    dst_rows.fill(0.0);
                    let g = batch.globals_len;
                    dst_rows[..rows * g]
                        .copy_from_slice(&batch.globals[start * g..(start + rows) * g]);
                    dst_rows
                        .iter_mut()
                        .for_each(|v| *v = plan.precision.store(*v));
                }
                Op::Conv(c) => {
                    let src = &slots[self.slots.slot(c.src)];
                    let skip = c.skip.map(|s| &slots[self.slots.slot(s)][..]);
                    conv(c, src, skip, dst_rows, plan.precision);
                }
                Op::Dense(d) => {
                    let srcs: Vec<(&[f32], usize)> = d
                        .srcs
                        .iter()
                        .map(|&s| (&slots[self.slots.slot(s)][..], plan.per_row[s.0]))
                        .collect();
                    dense(d, &srcs, dst_rows, plan.precision);
                }
            }
            slots[dst_slot] = dst;
        }
        slots
    }
}

/// int8 `[B, C, H, W]` rows as f32 `[B, H, W, C]`; padding rows zero.
fn widen(batch: &Encoded, start: usize, rows: usize, dst: &mut [f32], p: Precision) {
    let [c, h, w] = batch.shape;
    let n = c * h * w;
    dst.fill(0.0);
    for (r, out) in dst.chunks_exact_mut(n).take(rows).enumerate() {
        let src = &batch.planes[(start + r) * n..(start + r + 1) * n];
        for ch in 0..c {
            for pt in 0..h * w {
                out[pt * c + ch] = p.store(f32::from(src[ch * h * w + pt]));
            }
        }
    }
}

fn conv(c: &Conv, src: &[f32], skip: Option<&[f32]>, dst: &mut [f32], p: Precision) {
    let [ih, iw] = c.in_hw;
    let [oh, ow] = c.out_hw;
    let [kh, kw] = c.kernel;
    let (cin, cout) = (c.in_channels, c.out_channels);
    let (in_len, out_len) = (ih * iw * cin, oh * ow * cout);
    dst.par_chunks_exact_mut(out_len)
        .enumerate()
        .for_each(|(b, out)| {
            let x = &src[b * in_len..(b + 1) * in_len];
            let mut xin = vec![0f32; cin];
            for oy in 0..oh {
                for ox in 0..ow {
                    for o in 0..cout {
                        let mut s = 0f32;
                        for ky in 0..kh {
                            let Some(iy) = (oy + ky).checked_sub(c.pad[0]).filter(|&y| y < ih)
                            else {
                                continue;
                            };
                            for kx in 0..kw {
                                let Some(ix) = (ox + kx).checked_sub(c.pad[1]).filter(|&x| x < iw)
                                else {
                                    continue;
                                };
                                let at = (iy * iw + ix) * cin;
                                for (v, &xv) in xin.iter_mut().zip(&x[at..at + cin]) {
                                    *v = p.product_input(xv);
                                }
                                let wr = &c.weight[((o * kh + ky) * kw + kx) * cin..][..cin];
                                s += dot(wr, &xin);
                            }
                        }
                        let at = (oy * ow + ox) * cout + o;
                        s += c.bias[o];
                        if let Some(skip) = skip {
                            s += skip[b * out_len + at];
                        }
                        out[at] = p.store(c.act.apply(s));
                    }
                }
            }
        });
}

fn dense(d: &Dense, srcs: &[(&[f32], usize)], dst: &mut [f32], p: Precision) {
    dst.par_chunks_exact_mut(d.outputs)
        .enumerate()
        .for_each(|(b, out)| {
            let x: Vec<f32> = srcs
                .iter()
                .flat_map(|&(s, per)| s[b * per..(b + 1) * per].iter())
                .map(|&v| p.product_input(v))
                .collect();
            for (o, y) in out.iter_mut().enumerate() {
                let s = dot(&d.weight[o * d.inputs..(o + 1) * d.inputs], &x) + d.bias[o];
                *y = p.store(d.act.apply(s));
            }
        });
}

/// A sum in f64, so the twin's own rounding stays far under the
/// precisions it models.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| f64::from(x) * f64::from(y))
        .sum::<f64>() as f32
}

/// [`PlanTwin`] as an inference backend (`plan-cpu-<precision>`).
pub struct PlanBackend {
    twin: PlanTwin,
}

impl PlanBackend {
    pub fn new(plan: NetPlan) -> Self {
        PlanBackend {
            twin: PlanTwin::new(plan),
        }
    }
}

impl Backend for PlanBackend {
    fn run(&self, batch: &Encoded, policy: bool) -> Result<Outputs, InferError> {
        let out = self.twin.run(batch)?;
        Ok(Outputs {
            policy: out.policy.filter(|_| policy),
            ..out
        })
    }

    fn output(&self) -> OutputActivation {
        self.twin.plan.output
    }

    fn has_policy(&self) -> bool {
        self.twin.plan.policy.is_some()
    }

    fn name(&self) -> String {
        format!("plan-cpu-{}", self.twin.plan.precision)
    }
}
