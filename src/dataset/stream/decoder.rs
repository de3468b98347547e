//! The decoder threads: each reads its share of the epoch's shards (whole,
//! checking size and sha256), keeps the served rows and sends them to the
//! assembler in chunks over its own bounded channel.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;

use super::rows::Rows;
use super::StreamConfig;
use crate::dataset::error::DatasetError;
use crate::dataset::reader::Dataset;
use crate::dataset::schema::Columns;

/// What a decoder sends: chunks of a shard, then the end of that shard.
pub(super) enum Msg {
    /// Boxed: a chunk's columns are many vectors, the end marker none.
    Chunk(Box<Rows>),
    ShardDone,
}

/// Decoder thread `t` of `n`: shards at positions t, t+n, ... of `order`.
pub(super) fn decoder(
    ds: &Dataset,
    cfg: &StreamConfig,
    order: &[usize],
    t: usize,
    n: usize,
    stop: &AtomicBool,
    tx: &SyncSender<Result<Msg, DatasetError>>,
) {
    for &shard in order.iter().skip(t).step_by(n) {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let sent = match decode_shard(ds, cfg, shard, stop, tx) {
            Ok(true) => tx.send(Ok(Msg::ShardDone)).is_ok(),
            Ok(false) => false,
            Err(e) => {
                let _ = tx.send(Err(e));
                false
            }
        };
        if !sent {
            return;
        }
    }
}

/// Sends the split's rows of `shard` in chunks; `Ok(false)` when the
/// receiver is gone or the loader was stopped.
fn decode_shard(
    ds: &Dataset,
    cfg: &StreamConfig,
    shard: usize,
    stop: &AtomicBool,
    tx: &SyncSender<Result<Msg, DatasetError>>,
) -> Result<bool, DatasetError> {
    let path = ds.shard_path(shard);
    let batches = ds.read_shard_with(shard, cfg.verify_sha256)?;
    let wanted = cfg.wanted_splits();
    let mut chunk = Rows::default();
    let mut found = 0u64;
    let mut offset = 0;
    for batch in &batches {
        let cols = Columns::new(batch, &path, shard, offset)?;
        offset += batch.num_rows();
        for i in 0..cols.len() {
            if let Some(w) = &wanted {
                let name = cols.split.value(i);
                if !w.iter().any(|s| s.as_str() == name) {
                    continue;
                }
            }
            found += 1;
            if let Some(folds) = &cfg.folds {
                if !folds.contains(&cols.fold.value(i)) {
                    continue;
                }
            }
            chunk.push_from(&cols, i, cfg.with_text, cfg.policy_len, &cfg.source_weights)?;
            if chunk.len() == cfg.chunk_rows {
                let full = std::mem::take(&mut chunk);
                if stop.load(Ordering::Relaxed) || tx.send(Ok(Msg::Chunk(Box::new(full)))).is_err()
                {
                    return Ok(false);
                }
            }
        }
    }
    if let Some(w) = &wanted {
        let expected = w
            .iter()
            .map(|&s| ds.manifest().shards[shard].rows_per_split[s])
            .sum();
        if found != expected {
            let names: Vec<&str> = w.iter().map(|s| s.as_str()).collect();
            return Err(DatasetError::CountMismatch {
                path,
                what: format!("rows of split {}", names.join("+")),
                expected,
                found,
            });
        }
    }
    if chunk.len() > 0 && tx.send(Ok(Msg::Chunk(Box::new(chunk)))).is_err() {
        return Ok(false);
    }
    Ok(true)
}
