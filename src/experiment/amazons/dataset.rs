//! The database's records as an encoded dataset at `OUT/db/NAME`, split
//! into train and test by game. A stamp file (`OUT/db/NAME.key`) records
//! the records' hash, the test share and the encoder, so the dataset is
//! rebuilt only when one of them changed.

use super::config::AmazonsExperimentConfig;
use super::database::{chunk_count, chunk_path, games_dir};
use super::error::{file_error, AmazonsExperimentError, Result};
use crate::dataset::{Dataset, SplitRule};
use crate::encode::Encoder;
use crate::game::{hash_of, Amazons};
use crate::games::GameSupport;
use crate::positions::{build_dataset, BuildOptions, Terminations};
use crate::util::write_atomic;
use std::path::PathBuf;
use std::sync::Arc;

/// The database's record files (`part-NNNNN.jsonl`), in order.
pub(super) fn record_files(cfg: &AmazonsExperimentConfig) -> Vec<PathBuf> {
    let games = games_dir(&cfg.out);
    let mut records: Vec<PathBuf> = (0..chunk_count(cfg))
        .map(|c| chunk_path(&games, c, "jsonl"))
        .collect();
    records.sort();
    records
}

/// What a dataset was built from: the records' bytes, the test share and
/// the encoder. A dataset whose stamp differs is rebuilt.
pub(super) fn dataset_key(record_bytes: &[u8], test_fraction: f64, encoder: &str) -> String {
    format!(
        "records {:016x}, test {test_fraction}, encoder {encoder}",
        hash_of(record_bytes)
    )
}

/// The database's records as a dataset in `encoder` at `OUT/db/NAME`,
/// rebuilt when the records, the split or the encoder changed. Every
/// position is kept (finished and adjudicated games alike).
pub(super) fn build_database_dataset(
    cfg: &AmazonsExperimentConfig,
    encoder: &str,
    name: &str,
    say: &dyn Fn(&str),
) -> Result<PathBuf> {
    let out = cfg.out.join("db").join(name);
    let records = record_files(cfg);
    let mut key_bytes = Vec::new();
    for r in &records {
        key_bytes.extend(std::fs::read(r).map_err(|e| file_error(r, e))?);
    }
    let key = dataset_key(&key_bytes, cfg.test_fraction, encoder);
    let stamp = cfg.out.join("db").join(format!("{name}.key"));
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(key.as_str())
        && Dataset::open(&out).is_ok()
    {
        return Ok(out);
    }
    say(&format!(
        "database: encoding the records into a dataset ({encoder})"
    ));
    let encoder: Arc<dyn Encoder<Amazons>> =
        Arc::from(Amazons::encoder(encoder, cfg.size).map_err(|e| {
            AmazonsExperimentError::Config {
                field: "encoder",
                why: e.to_string(),
            }
        })?);
    let mut options = BuildOptions::new::<Amazons>();
    options.filters.terminations = Terminations::All;
    options.split = SplitRule::new(0.0, cfg.test_fraction)?;
    options.force = true;
    options.strict = true;
    options.provenance =
        serde_json::json!({"made_by": "plies experiment amazons", "seed": cfg.seed});
    build_dataset::<Amazons>(&records, &out, encoder, cfg.size, &options, None)?;
    write_atomic(&stamp, key.as_bytes()).map_err(|e| file_error(&stamp, e))?;
    Ok(out)
}
