//! A database of games between two players, written as a dataset. Either
//! side may be a NETWORK that learns by TD(lambda) while it plays (how the
//! Tic-tac-toe study made its database: a learning network against EXPERT).

use super::LearningNetwork;
use crate::arena::{play_game, Wdl};
use crate::dataset::{DatasetSpec, DatasetWriter, EncoderInfo, Manifest, SplitRule};
use crate::encode::Encoder;
use crate::game::{Game, Side};
use crate::positions::{played_rows, GameHeader};
use crate::search::Player;
use crate::util::seeded_rng;
use std::path::Path;
use std::sync::Arc;

pub enum SideSpec<G: Game> {
    Fixed(Arc<dyn Player<G>>),
    Learning(Box<LearningNetwork<G>>),
}

impl<G: Game> SideSpec<G> {
    fn name(&self) -> String {
        match self {
            SideSpec::Fixed(p) => p.name(),
            SideSpec::Learning(n) => format!("td-network-{}", n.net.config().hidden[0]),
        }
    }
}

pub struct DatabaseConfig {
    pub games: usize,
    pub seed: u64,
    pub split: SplitRule,
    pub shard_rows: usize,
}

/// Plays `cfg.games` games of A against B (A first in even games) and
/// writes every position to a new dataset in `out`. Returns the manifest
/// and A's results.
pub fn generate_database<G: Game>(
    out: &Path,
    mut a: SideSpec<G>,
    b: SideSpec<G>,
    encoder: Arc<dyn Encoder<G>>,
    cfg: &DatabaseConfig,
    provenance: serde_json::Value,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<(Manifest, Wdl), Box<dyn std::error::Error + Send + Sync>> {
    let b = match b {
        SideSpec::Fixed(p) => p,
        SideSpec::Learning(_) => return Err("only player A may learn while playing".into()),
    };
    let es = encoder.spec();
    let spec = DatasetSpec {
        game: G::NAME.to_string(),
        encoder: EncoderInfo {
            name: es.name.clone(),
            version: es.version,
            shape: es.shape,
            globals: es.globals,
        },
        split: cfg.split,
        shard_rows: cfg.shard_rows,
        folds: crate::dataset::DEFAULT_FOLDS,
    };
    let mut writer = DatasetWriter::create(out, spec)?;
    let source = format!("selfplay:{}-vs-{}", a.name(), b.name());
    let mut wdl = Wdl::default();
    for i in 0..cfg.games {
        let mut rng = seeded_rng(cfg.seed, i as u64);
        let a_first = i % 2 == 0;
        let (states, moves, outcome) = match &mut a {
            SideSpec::Learning(net) => net.play_and_learn(b.as_ref(), a_first, &mut rng)?,
            SideSpec::Fixed(pa) => {
                let (first, second) = if a_first {
                    (pa.as_ref(), b.as_ref())
                } else {
                    (b.as_ref(), pa.as_ref())
                };
                let (o, moves) = play_game(first, second, i, &mut rng)?;
                let mut s = G::new();
                let mut states = vec![s.clone()];
                for &m in &moves {
                    s.play(m);
                    states.push(s.clone());
                }
                (states, moves, o)
            }
        };
        wdl.add(outcome, if a_first { Side::First } else { Side::Second });
        let id = format!("{}-s{}-g{:07}", G::NAME, cfg.seed, i);
        let header = GameHeader {
            game_id: id,
            source: source.clone(),
            ..GameHeader::default()
        };
        if let Some(rows) = played_rows(header, &states, &moves, encoder.as_ref(), None) {
            writer.push_game(&rows)?;
        }
        if let Some(p) = progress {
            p.inc(1);
        }
    }
    let mut prov = provenance;
    if let Some(obj) = prov.as_object_mut() {
        obj.insert("players".into(), serde_json::json!([a.name(), b.name()]));
        obj.insert("games".into(), serde_json::json!(cfg.games));
        obj.insert("seed".into(), serde_json::json!(cfg.seed));
        obj.insert(
            "a_results".into(),
            serde_json::json!({"wins": wdl.wins, "draws": wdl.draws, "losses": wdl.losses}),
        );
    }
    Ok((writer.finish(prov)?, wdl))
}
