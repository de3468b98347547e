//! [`FitReport`], what a training run did.

use crate::train::metrics::{self, EpochMetrics};
use crate::train::run_state::RunState;

/// What a run did.
#[derive(Clone, Debug)]
pub struct FitReport {
    pub history: Vec<EpochMetrics>,
    pub best_epoch: Option<usize>,
    pub best_valid_loss: Option<f64>,
    pub stopped_early: bool,
    pub steps: u64,
    /// The run had already finished: nothing was trained.
    pub already_finished: bool,
}

impl FitReport {
    pub fn table(&self) -> crate::report::Table {
        metrics::table(&self.history, self.best_epoch)
    }
}

impl FitReport {
    /// The report of a run that stands at `st`.
    pub(super) fn of_state(st: &RunState, already_finished: bool) -> Self {
        FitReport {
            history: st.history.clone(),
            best_epoch: st.best_epoch,
            best_valid_loss: st.best_valid_loss,
            stopped_early: st.stopped_early,
            steps: st.step,
            already_finished,
        }
    }
}
