//! Physical buffers for a plan's logical ones, by liveness: a buffer's
//! slot is free again after the last op that reads it, and an op never
//! writes into a slot it reads. A device backend allocates each slot once
//! per batch bucket (`floats(bucket)`), so a captured graph always sees the
//! same addresses.

use super::{BufId, NetPlan};

/// Which slot each logical buffer lives in, and each slot's size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotPlan {
    /// By [`BufId`].
    pub slot_of: Vec<usize>,
    /// Floats per position of each slot (the largest buffer it holds).
    pub per_row: Vec<usize>,
}

impl SlotPlan {
    pub fn new(plan: &NetPlan) -> Self {
        let n = plan.per_row.len();
        // The last op that reads each buffer; the outputs live to the end.
        let mut last_read = vec![None; n];
        for (i, op) in plan.ops.iter().enumerate() {
            for b in op.reads() {
                last_read[b.0] = Some(i);
            }
        }
        for out in std::iter::once(plan.value).chain(plan.policy) {
            last_read[out.0] = Some(usize::MAX);
        }
        let mut slot_of = vec![usize::MAX; n];
        let mut per_row: Vec<usize> = Vec::new();
        let mut free: Vec<usize> = Vec::new();
        for (i, op) in plan.ops.iter().enumerate() {
            let dst = op.writes();
            // Prefer a free slot already large enough, else grow the
            // largest free one, else add a slot.
            let need = plan.per_row[dst.0];
            let pick = free
                .iter()
                .enumerate()
                .filter(|(_, &s)| per_row[s] >= need)
                .min_by_key(|(_, &s)| per_row[s])
                .or_else(|| free.iter().enumerate().max_by_key(|(_, &s)| per_row[s]))
                .map(|(at, _)| at);
            let slot = match pick {
                Some(at) => free.swap_remove(at),
                None => {
                    per_row.push(0);
                    per_row.len() - 1
                }
            };
            per_row[slot] = per_row[slot].max(need);
            slot_of[dst.0] = slot;
            // After op i, free what no later op reads (its sources, and
            // its own output if nothing reads it).
            let mut done: Vec<BufId> = op.reads();
            done.push(dst);
            done.sort();
            done.dedup();
            for b in done {
                if last_read[b.0].is_none_or(|l| l == i) {
                    free.push(slot_of[b.0]);
                }
            }
        }
        SlotPlan { slot_of, per_row }
    }

    /// Floats of every slot at `bucket` positions.
    pub fn floats(&self, bucket: usize) -> usize {
        self.per_row.iter().sum::<usize>() * bucket
    }

    pub fn slot(&self, b: BufId) -> usize {
        self.slot_of[b.0]
    }
}
