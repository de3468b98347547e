//! Where an evaluator's call spends its time: encoding the positions,
//! the network (host-device copies included), and turning raw outputs into
//! side-to-move values. The batched service adds its own phases around
//! these ([`super::BatchStats::split`]).

use std::time::{Duration, Instant};

/// Time of one or more evaluator calls, by phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvalSplit {
    pub encode: Duration,
    pub network: Duration,
    pub finish: Duration,
}

impl EvalSplit {
    /// `f`'s result, its time added to the phase `phase` picks.
    pub fn time<R>(&mut self, phase: fn(&mut Self) -> &mut Duration, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        *phase(self) += t.elapsed();
        r
    }

    /// [`EvalSplit::time`] when a split is asked for; `f` alone (no clock
    /// read) when not, so that unsplit calls cost nothing extra.
    pub fn time_into<R>(
        split: Option<&mut Self>,
        phase: fn(&mut Self) -> &mut Duration,
        f: impl FnOnce() -> R,
    ) -> R {
        match split {
            Some(s) => s.time(phase, f),
            None => f(),
        }
    }
}
