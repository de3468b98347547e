//! Arimaa's support: its encoders, the material evaluator, setups (the
//! shipped arimaa.com archives, a file of imported records, or random),
//! records that start from two setups, named terminations, and turns built
//! one random step at a time for exploration.

use super::{
    unknown_format, GameKind, GameSupport, ImportedFile, Openings, OpeningsChoice, SupportError,
};
use crate::encode::{
    arimaa_encoder, ArimaaFeatures, ArimaaRichPlanes, ArimaaTypePlanes, EncodeError, Encoder,
};
use crate::game::arimaa::random_steps::random_steps_or_uniform;
use crate::game::arimaa::{Setup, SetupSampler};
use crate::game::{Arimaa, Game, Side};
use crate::infer::hand::arimaa_material::{evaluate as material, CLEAR_ADVANTAGE};
use crate::infer::hand::HandEval;
use crate::record::{GameRecord, RecordError, ReplaySummary};
use crate::util::SeededRng;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

/// The chance of ending an exploration turn after each step.
const EXPLORATION_END_PROB: f64 = 0.1;

impl GameSupport for Arimaa {
    const KIND: GameKind = GameKind::Arimaa;

    /// Distinct whole turns: 101,363 in the widest of the reference move
    /// counts (`movecounts.tsv`, pyrimaa's generator), most middle games
    /// 10,000-40,000; rarer positions may have more.
    fn most_legal_moves(_size: usize) -> Option<u64> {
        Some(120_000)
    }

    const SIDE_NAMES: [&'static str; 2] = ["gold", "silver"];
    const ENCODERS: &'static [&'static str] = &[
        ArimaaTypePlanes::NAME,
        ArimaaRichPlanes::NAME,
        ArimaaFeatures::NAME,
    ];

    fn encoder(name: &str, _size: usize) -> Result<Box<dyn Encoder<Self>>, EncodeError> {
        arimaa_encoder(name)
    }

    const HAND_EVALS: &'static [&'static str] = &["material"];

    fn hand_eval(name: &str) -> Option<HandEval<Self>> {
        (name == "material").then(|| HandEval::new(name, CLEAR_ADVANTAGE, material))
    }

    /// `None`: the shipped arimaa.com archives; `random`; `standard`; or a
    /// JSONL file of imported Arimaa records.
    fn openings(setups: Option<&str>) -> Result<OpeningsChoice, SupportError> {
        Ok(match setups {
            None => {
                let (sampler, name) = shipped_setups()?;
                OpeningsChoice {
                    openings: Openings::Setups(Arc::new(sampler)),
                    name,
                    file_sha256: None,
                }
            }
            Some("random") => OpeningsChoice {
                openings: Openings::RandomSetups,
                name: "random".into(),
                file_sha256: None,
            },
            Some("standard") => OpeningsChoice::standard(),
            Some(file) => {
                let path = Path::new(file);
                let bytes = std::fs::read(path).map_err(|e| SupportError::Setups {
                    given: file.to_string(),
                    why: format!("cannot read it: {e}"),
                })?;
                let sha: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                OpeningsChoice {
                    openings: Openings::Setups(Arc::new(setups_from_file(path)?)),
                    name: format!("file:{file}"),
                    file_sha256: Some(sha),
                }
            }
        })
    }

    fn start(
        _size: usize,
        openings: &Openings,
        rng: &mut SeededRng,
    ) -> Result<(Self, Vec<String>), SupportError> {
        let (gold, silver) = match openings {
            Openings::Setups(sampler) => sampler.sample(rng),
            Openings::RandomSetups => (
                Setup::random(Side::First, rng),
                Setup::random(Side::Second, rng),
            ),
            Openings::Standard => (Setup::standard(Side::First), Setup::standard(Side::Second)),
        };
        let g = Arimaa::from_setups(&gold, &silver).map_err(|why| SupportError::Setups {
            given: format!("{} / {}", gold.to_notation(), silver.to_notation()),
            why: why.to_string(),
        })?;
        Ok((g, vec![gold.to_notation(), silver.to_notation()]))
    }

    fn record_start(rec: &GameRecord) -> Result<Self, SupportError> {
        super::check_record_game::<Self>(rec)?;
        game_after_setups(rec)
    }

    const TERMINATIONS: Option<&'static [&'static str]> = Some(&[
        "goal",
        "elimination",
        "immobilization",
        "repetition",
        "resignation",
        "timeout",
        "illegal_move",
        "forfeit",
        "other",
    ]);

    /// The endings decided on the board (the study's "meaningful" games).
    /// Resignations and timeouts add label noise and are used only on
    /// request.
    const DEFAULT_TERMINATIONS: Option<&'static [&'static str]> =
        Some(&["goal", "elimination", "immobilization"]);

    fn termination_name(&self) -> &'static str {
        match self.result() {
            Some((_, t)) => t.name(),
            None => "unfinished",
        }
    }

    fn exploration_move(
        &self,
        rng: &mut SeededRng,
        scratch: &mut Vec<Self::Move>,
    ) -> Option<Self::Move> {
        random_steps_or_uniform(self, EXPLORATION_END_PROB, rng, scratch)
    }

    /// The arimaa.com game archive (tab-separated; `plies import` reads it
    /// streaming, with its own filters and skip reports).
    const RECORD_FORMATS: &'static [&'static str] = &[crate::record::arimaa_archive::FORMAT];

    fn import_records(format: &str, path: &Path) -> Result<ImportedFile, SupportError> {
        use crate::record::arimaa_archive::{import_file, ImportOptions, FORMAT};
        if format != FORMAT {
            return Err(unknown_format::<Self>(format));
        }
        let (records, summary) = import_file(path, &ImportOptions::default())?;
        Ok(ImportedFile {
            records,
            skipped: summary.reports.iter().map(|r| r.to_string()).collect(),
        })
    }

    fn replay_oracle(path: &Path) -> Result<ReplaySummary, RecordError> {
        crate::record::arimaa_oracle::replay_oracle_games(path)
    }

    const RANDOM_STEPS: bool = true;

    fn random_steps_move(
        &self,
        end: f64,
        rng: &mut SeededRng,
        scratch: &mut Vec<Self::Move>,
    ) -> Option<Self::Move> {
        random_steps_or_uniform(self, end, rng, scratch)
    }
}

/// The game after a record's two setups (gold's, then silver's), for the
/// whole-turn and the step game alike.
pub(super) fn game_after_setups(rec: &GameRecord) -> Result<Arimaa, SupportError> {
    let bad = |why: String| SupportError::Record {
        id: rec.id.clone(),
        why,
    };
    if rec.setups.len() != 2 {
        return Err(bad(format!(
            "an Arimaa record needs 2 setups (gold's, silver's), found {}",
            rec.setups.len()
        )));
    }
    let gold =
        Setup::parse(Side::First, &rec.setups[0]).map_err(|e| bad(format!("gold's setup: {e}")))?;
    let silver = Setup::parse(Side::Second, &rec.setups[1])
        .map_err(|e| bad(format!("silver's setup: {e}")))?;
    Arimaa::from_setups(&gold, &silver).map_err(|e| bad(e.to_string()))
}

/// The setups of the arimaa.com games shipped in `data/arimaa`
/// (`allgames2002.txt` and `fake_archive.txt`), imported with the archive
/// importer; the `setups` value that names them.
pub fn shipped_setups() -> Result<(SetupSampler, String), SupportError> {
    use crate::record::arimaa_archive::{import_str, ImportOptions};
    const FILES: [(&str, &str); 2] = [
        (
            "allgames2002.txt",
            include_str!("../../data/arimaa/allgames2002.txt"),
        ),
        (
            "fake_archive.txt",
            include_str!("../../data/arimaa/fake_archive.txt"),
        ),
    ];
    let shipped = |why: String| SupportError::Setups {
        given: "(default)".into(),
        why: format!("shipped Arimaa archives: {why}"),
    };
    let mut records = Vec::new();
    for (name, text) in FILES {
        records.extend(
            import_str(text, name, &ImportOptions::default())
                .map_err(|e| shipped(e.to_string()))?
                .0,
        );
    }
    let sampler = setups_of(&records).map_err(|e| shipped(e.to_string()))?;
    Ok((sampler, "archive:allgames2002.txt,fake_archive.txt".into()))
}

/// The setups of the Arimaa records in a JSONL file (as `plies import`
/// writes them).
pub fn setups_from_file(path: &Path) -> Result<SetupSampler, SupportError> {
    let bad = |why: String| SupportError::Setups {
        given: path.display().to_string(),
        why,
    };
    let records = crate::record::read_records(path).map_err(|e| bad(e.to_string()))?;
    setups_of(&records).map_err(|why| {
        bad(format!(
            "{why} (expected Arimaa records with two setups each)"
        ))
    })
}

/// The setups of the Arimaa records among `records`.
fn setups_of(records: &[GameRecord]) -> Result<SetupSampler, crate::game::arimaa::SetupError> {
    SetupSampler::from_notations(
        records
            .iter()
            .filter(|r| r.game == Arimaa::NAME && r.setups.len() == 2)
            .map(|r| (r.setups[0].as_str(), r.setups[1].as_str())),
    )
}
