//! Options several commands take with the same meaning, flattened into
//! each command's arguments so each is spelled and documented once.

use clap::Args;
use plies::arena::StartConfig;
use plies::games::GameSupport;
use plies::infer::plan::Precision;
use plies::search::evaluators::EvalContext;
use plies::search::game_player::PlayerContext;

/// How the games of a match or an arena start and end.
#[derive(Args)]
pub struct GameStartArgs {
    /// Arimaa setups: a JSONL file of imported records, `random` or
    /// `standard`; default: the shipped arimaa.com archives.
    #[arg(long)]
    pub setups: Option<String>,
    /// Stop a game after this many moves and count it as a draw (0: no limit).
    #[arg(long, default_value_t = 1000)]
    pub max_plies: usize,
    /// Play this many uniformly random plies (none that ends the game)
    /// before the players move, drawn from each game's seeded stream.
    #[arg(long, default_value_t = 0)]
    pub random_opening: usize,
}

impl GameStartArgs {
    /// The start of every game on a board of `size` (default the game's).
    pub fn start<G: GameSupport>(&self, size: Option<usize>) -> anyhow::Result<StartConfig> {
        Ok(StartConfig::for_game::<G>(size, self.setups.as_deref())?
            .with_random_opening(self.random_opening))
    }

    /// The ply limit (`--max-plies 0`: none).
    pub fn ply_limit(&self) -> Option<usize> {
        (self.max_plies > 0).then_some(self.max_plies)
    }
}

/// Where a long command's work runs and how it reports.
#[derive(Args)]
pub struct JobArgs {
    /// Worker threads (0: rayon's default). The results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print the report as JSON instead of the tables.
    #[arg(long)]
    pub json: bool,
    /// No progress bar or stage lines.
    #[arg(long)]
    pub quiet: bool,
}

impl JobArgs {
    /// Whether progress is hidden: asked for, or stdout is JSON.
    pub fn silent(&self) -> bool {
        self.quiet || self.json
    }
}

/// Where the players' `ckpt:` evaluators run.
#[derive(Args)]
pub struct EvalDeviceArgs {
    /// Device of `ckpt:` evaluators: cpu, cuda[:N] or metal.
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Precision of `ckpt:` evaluators: f32, or tf32 / bf16 on a GPU.
    #[arg(long, default_value = "f32")]
    pub precision: Precision,
}

impl EvalDeviceArgs {
    /// Where players are built on a board of side `size`.
    pub fn player_context(&self, size: usize) -> anyhow::Result<PlayerContext> {
        Ok(PlayerContext {
            size,
            eval: EvalContext {
                device: plies::util::parse_device(&self.device)?,
                precision: self.precision,
            },
        })
    }
}
