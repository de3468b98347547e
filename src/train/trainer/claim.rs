//! The second step of a run: its output folder claimed (locked, a swap a
//! kill interrupted settled), and where the run starts: afresh, or from
//! the saved state of an interrupted run with the same arguments.
//!
//! An `--overwrite` of a used folder trains beside it, in its staging
//! folder, and swaps in only when finished: until then the folder keeps
//! the old run, whole and readable.

use std::path::PathBuf;

use super::error::io_err;
use super::inputs::Inputs;
use super::{FitConfig, FitError};
use crate::train::metrics;
use crate::train::run_state::{self, SavedRun};
use crate::util::run_dir::{first_difference, Depth, Difference, RunDir};

/// A claimed output folder and where the run goes on.
pub(super) struct Claim {
    /// The output folder, locked while the run lasts.
    pub run_dir: RunDir,
    /// Where this run writes: the output folder or, for an overwrite, its
    /// staging folder.
    pub work: PathBuf,
    /// The state to continue from (`None`: start afresh).
    pub saved: Option<SavedRun>,
}

/// Where a saved run's arguments first differ from `fingerprint`.
fn differs(saved: &SavedRun, fingerprint: &serde_json::Value) -> Option<Difference> {
    first_difference(&saved.state.args, fingerprint, Depth::Nested)
}

impl Claim {
    /// Claims `cfg.out` and finds where the run starts (see the module
    /// docs); the folder written is created.
    pub fn take(cfg: &FitConfig, inputs: &Inputs) -> Result<Claim, FitError> {
        let out = &cfg.out;
        let run_dir = RunDir::claim(out)?;
        // The complete run wins: the new one once finished, else the old.
        run_dir.recover_interrupted_swap(run_state::finished)?;
        let staged = run_dir.staging_path()?;
        let fingerprint = &inputs.fingerprint;

        let mut work = out.clone();
        let mut saved = None;
        if cfg.resume {
            // An interrupted overwrite with these arguments continues first.
            if let Some(dir) = run_state::find(&staged) {
                let s = run_state::load(&dir)?;
                if differs(&s, fingerprint).is_none() {
                    work = staged.clone();
                    saved = Some(s);
                }
            }
            if saved.is_none() {
                if let Some(dir) = run_state::find(out) {
                    let s = run_state::load(&dir)?;
                    // With --overwrite too, a run of other arguments is replaced.
                    let other = differs(&s, fingerprint).is_some();
                    if !(cfg.overwrite && other) {
                        saved = Some(s);
                    }
                }
            }
        }
        if work == *out {
            // An abandoned overwrite, or the old run a swap left behind.
            run_dir.discard_staged()?;
        }
        if saved.is_none() {
            let used = run_state::find(out).is_some()
                || out.join(metrics::METRICS_JSONL).exists()
                || out.join(metrics::METRICS_CSV).exists();
            if used && !cfg.overwrite && !cfg.resume {
                return Err(FitError::Exists { dir: out.clone() });
            }
            if used && cfg.overwrite {
                // The old run is replaced only by a finished new one, and the
                // new one starts only once its inputs are known good.
                inputs.dataset.check_shards()?;
                work = staged.clone();
            }
            run_state::remove(&work)?;
            for f in [metrics::METRICS_CSV, metrics::METRICS_JSONL] {
                let p = work.join(f);
                if p.exists() {
                    std::fs::remove_file(&p).map_err(io_err(&p))?;
                }
            }
        }
        if let Some(d) = saved.as_ref().and_then(|s| differs(s, fingerprint)) {
            return Err(FitError::ResumeMismatch {
                saved: d.saved_text(),
                given: d.given_text(),
                field: d.field,
            });
        }
        std::fs::create_dir_all(&work).map_err(io_err(&work))?;
        Ok(Claim {
            run_dir,
            work,
            saved,
        })
    }
}
