//! Player specs on the command line: `random`, `expert`,
//! `greedy:CHECKPOINT_DIR` (the published NETWORK player) and
//! `greedy+:CHECKPOINT_DIR` (the same, but finished games are scored by
//! their result).

use super::{ExpertPlayer, GreedyPlayer, Player, RandomPlayer, SearchError};
use crate::checkpoint;
use crate::encode::tictactoe_encoder;
use crate::game::{Game, TicTacToe};
use crate::infer::CandleEvaluator;
use candle_core::Device;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    Random,
    Expert,
    Greedy {
        checkpoint: PathBuf,
        exact_terminal: bool,
    },
}

impl FromStr for PlayerSpec {
    type Err = SearchError;
    fn from_str(s: &str) -> Result<Self, SearchError> {
        let bad = |why: &str| SearchError::BadSpec {
            spec: s.to_string(),
            why: why.to_string(),
        };
        let (kind, arg) = match s.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (s, None),
        };
        match (kind, arg) {
            ("random", None) => Ok(PlayerSpec::Random),
            ("expert", None) => Ok(PlayerSpec::Expert),
            ("greedy" | "greedy+", Some(path)) if !path.is_empty() => Ok(PlayerSpec::Greedy {
                checkpoint: PathBuf::from(path),
                exact_terminal: kind == "greedy+",
            }),
            ("greedy" | "greedy+", _) => Err(bad("expected greedy:CHECKPOINT_DIR")),
            ("random" | "expert", Some(_)) => Err(bad("this player takes no argument")),
            _ => Err(bad(
                "expected random, expert, greedy:CHECKPOINT_DIR or greedy+:CHECKPOINT_DIR",
            )),
        }
    }
}

/// Builds a Tic-tac-toe player from its spec (loading checkpoints on `device`).
pub fn build_tictactoe_player(
    spec: &PlayerSpec,
    device: &Device,
) -> Result<Arc<dyn Player<TicTacToe>>, SearchError> {
    Ok(match spec {
        PlayerSpec::Random => Arc::new(RandomPlayer),
        PlayerSpec::Expert => Arc::new(ExpertPlayer),
        PlayerSpec::Greedy {
            checkpoint: dir,
            exact_terminal,
        } => {
            let ck = checkpoint::load(dir, Some(TicTacToe::NAME), None)?;
            let encoder =
                tictactoe_encoder(&ck.config.encoder.name).map_err(|e| SearchError::BadSpec {
                    spec: dir.display().to_string(),
                    why: e.to_string(),
                })?;
            if encoder.spec() != ck.config.encoder {
                return Err(SearchError::BadSpec {
                    spec: dir.display().to_string(),
                    why: format!(
                        "checkpoint encoder {:?} differs from this program's {:?}",
                        ck.config.encoder,
                        encoder.spec()
                    ),
                });
            }
            let model = ck.model(device)?;
            model
                .freeze()
                .map_err(crate::checkpoint::CheckpointError::from)?;
            let label = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| "net".into());
            let eval = CandleEvaluator::new(encoder, model, device.clone(), label);
            Arc::new(GreedyPlayer::new(Arc::new(eval), *exact_terminal))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs_and_names_bad_ones() {
        assert_eq!("random".parse::<PlayerSpec>().unwrap(), PlayerSpec::Random);
        assert!(matches!(
            "greedy+:ck".parse::<PlayerSpec>().unwrap(),
            PlayerSpec::Greedy {
                exact_terminal: true,
                ..
            }
        ));
        for bad in ["greedy", "greedy:", "expert:x", "alphabeta"] {
            let e = bad.parse::<PlayerSpec>().unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
    }
}
