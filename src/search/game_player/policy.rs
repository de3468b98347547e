//! `policy:ckpt=PATH[,temperature=T]`: a move drawn from a checkpoint's
//! per-point outputs ([`PolicyPlayer`]).

use super::grammar::in_spec;
use super::{Options, PlayerKind};
use crate::checkpoint::CheckpointSource;
use crate::games::GameSupport;
use crate::search::evaluators::{checkpoint_evaluator, PlayerContext};
use crate::search::{Player, PolicyPlayer, SearchError};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A `policy` spec: a move drawn from the Gibbs distribution of the
/// checkpoint's per-point outputs over the legal points at `temperature`
/// (0: greedy, ties at random).
#[derive(Clone, Debug, PartialEq)]
pub struct PolicySpec {
    pub checkpoint: PathBuf,
    pub temperature: f64,
}

impl fmt::Display for PolicySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "policy:ckpt={}", self.checkpoint.display())?;
        if self.temperature != 0.0 {
            write!(f, ",temperature={}", self.temperature)?;
        }
        Ok(())
    }
}

impl PlayerKind for PolicySpec {
    const NAMES: &'static [&'static str] = &["policy"];

    fn parse(text: &str, name: &str, args: Option<&str>) -> Result<Self, SearchError> {
        let opts = Options::parse(text, name, args, &["ckpt", "temperature"])?;
        let checkpoint = match opts.get("ckpt") {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => return Err(opts.bad("expected policy:ckpt=CHECKPOINT_DIR")),
        };
        let temperature = opts
            .read("temperature", "a finite number >= 0", |t| {
                t.parse().ok().filter(|&t: &f64| t.is_finite() && t >= 0.0)
            })?
            .unwrap_or(0.0);
        Ok(PolicySpec {
            checkpoint,
            temperature,
        })
    }

    fn build<G: GameSupport>(
        &self,
        ctx: &PlayerContext,
    ) -> Result<Arc<dyn Player<G>>, SearchError> {
        let source = CheckpointSource::Dir(self.checkpoint.clone());
        let eval =
            checkpoint_evaluator::<G>(&source, ctx.size, &ctx.eval).map_err(in_spec(self))?;
        Ok(Arc::new(PolicyPlayer::new(
            eval,
            self.temperature,
            self.to_string(),
        )?))
    }
}
