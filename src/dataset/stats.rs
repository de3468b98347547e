//! `Dataset::stats`: counts and distributions computed from the rows.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

use super::error::Result;
use super::reader::Dataset;
use super::split::{Split, SplitCounts};

/// Game lengths in plies, over games.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct PliesPerGame {
    pub mean: f64,
    pub min: u64,
    pub max: u64,
}

/// Labels for the side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LabelCounts {
    /// label 1.
    pub wins: u64,
    /// label 0.5.
    pub draws: u64,
    /// label 0.
    pub losses: u64,
    /// Any other value (soft targets).
    pub other: u64,
}

/// Rows per side to move.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SideCounts {
    /// side_to_move = 0.
    pub first: u64,
    /// side_to_move = 1.
    pub second: u64,
}

/// Width of the buckets of [`Stats::heights`], in plies.
pub const HEIGHT_BUCKET: u32 = 10;

/// Rows whose plies to the end lie in `from..=to`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HeightBucket {
    pub from: u32,
    pub to: u32,
    pub rows: u64,
}

/// Summary of a dataset, read from its rows. `Display` prints a table;
/// `Serialize` gives the same numbers as JSON.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub game: String,
    /// `name v<version> [C, H, W] + G globals`.
    pub encoder: String,
    pub rows: u64,
    pub games: u64,
    pub rows_per_split: SplitCounts,
    pub games_per_split: SplitCounts,
    /// Length of a game = max over its rows of `ply + plies_to_end`, so games
    /// stored with only some positions still count their full length.
    pub plies_per_game: PliesPerGame,
    pub labels: LabelCounts,
    pub side_to_move: SideCounts,
    /// Rows per fold (index = fold, `0..k`).
    pub rows_per_fold: Vec<u64>,
    /// Rows per plies-to-end ("height") bucket of [`HEIGHT_BUCKET`] plies,
    /// from height 0 up to the largest height present.
    pub heights: Vec<HeightBucket>,
}

/// `name n (p%)` for each of `parts`, joined by `, `.
fn shares(parts: &[(&str, u64)], total: u64) -> String {
    let part = |&(name, n): &(&str, u64)| format!("{name} {n} ({:.1}%)", pct(n, total));
    parts.iter().map(part).collect::<Vec<_>>().join(", ")
}

fn pct(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * n as f64 / total as f64
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "game {}, encoder {}", self.game, self.encoder)?;
        writeln!(
            f,
            "{:<8} {:>10} {:>10} {:>10} {:>10}",
            "", "total", "train", "valid", "test"
        )?;
        for (name, total, c) in [
            ("rows", self.rows, &self.rows_per_split),
            ("games", self.games, &self.games_per_split),
        ] {
            writeln!(
                f,
                "{:<8} {:>10} {:>10} {:>10} {:>10}",
                name, total, c.train, c.valid, c.test
            )?;
        }
        let p = &self.plies_per_game;
        writeln!(
            f,
            "plies per game: mean {:.1}, min {}, max {}",
            p.mean, p.min, p.max
        )?;
        let l = &self.labels;
        let mut labels = vec![("wins", l.wins), ("draws", l.draws), ("losses", l.losses)];
        if l.other > 0 {
            labels.push(("other", l.other));
        }
        writeln!(f, "labels (side to move): {}", shares(&labels, self.rows))?;
        let s = &self.side_to_move;
        writeln!(
            f,
            "side to move: {}",
            shares(&[("first", s.first), ("second", s.second)], self.rows)
        )?;
        writeln!(f, "{:<14} {:>10} {:>7}", "fold", "rows", "%")?;
        for (k, n) in self.rows_per_fold.iter().enumerate() {
            writeln!(f, "{:<14} {:>10} {:>6.1}%", k, n, pct(*n, self.rows))?;
        }
        writeln!(f, "{:<14} {:>10} {:>7}", "plies to end", "rows", "%")?;
        for b in &self.heights {
            writeln!(
                f,
                "{:<14} {:>10} {:>6.1}%",
                format!("{}-{}", b.from, b.to),
                b.rows,
                pct(b.rows, self.rows)
            )?;
        }
        Ok(())
    }
}

/// Per-shard partial sums.
#[derive(Default)]
struct Partial {
    rows_per_split: SplitCounts,
    labels: LabelCounts,
    side_to_move: SideCounts,
    rows_per_fold: Vec<u64>,
    /// Rows per height bucket.
    heights: Vec<u64>,
    /// Game id -> (split, length seen so far).
    games: HashMap<String, (Split, u64)>,
}

impl Dataset {
    /// Counts and distributions over all rows (reads every shard).
    pub fn stats(&self) -> Result<Stats> {
        let folds = usize::from(self.manifest().folds.k.max(1));
        let parts = self.map_shards(None, |cols| {
            let mut p = Partial {
                rows_per_fold: vec![0; folds],
                ..Partial::default()
            };
            for i in 0..cols.len() {
                let split = cols.split(i)?;
                p.rows_per_split[split] += 1;
                let label = cols.label.value(i);
                if label == 1.0 {
                    p.labels.wins += 1;
                } else if label == 0.5 {
                    p.labels.draws += 1;
                } else if label == 0.0 {
                    p.labels.losses += 1;
                } else {
                    p.labels.other += 1;
                }
                if cols.side_to_move.value(i) == 0 {
                    p.side_to_move.first += 1;
                } else {
                    p.side_to_move.second += 1;
                }
                let fold = usize::from(cols.fold.value(i));
                match p.rows_per_fold.get_mut(fold) {
                    Some(n) => *n += 1,
                    None => {
                        return Err(cols.row_error(
                            i,
                            "fold",
                            format!("below k = {folds}"),
                            fold.to_string(),
                        ))
                    }
                }
                let bucket = (cols.plies_to_end.value(i) / HEIGHT_BUCKET) as usize;
                if p.heights.len() <= bucket {
                    p.heights.resize(bucket + 1, 0);
                }
                p.heights[bucket] += 1;
                let len = cols.ply.value(i) as u64 + cols.plies_to_end.value(i) as u64;
                let entry = p
                    .games
                    .entry(cols.game_id.value(i).to_string())
                    .or_insert((split, 0));
                entry.1 = entry.1.max(len);
            }
            Ok(p)
        })?;

        let mut rows_per_split = SplitCounts::default();
        let mut labels = LabelCounts::default();
        let mut side_to_move = SideCounts::default();
        let mut games: HashMap<String, (Split, u64)> = HashMap::new();
        let mut rows_per_fold = vec![0u64; folds];
        let mut heights: Vec<u64> = Vec::new();
        for p in parts.into_iter().flatten() {
            for (total, n) in rows_per_fold.iter_mut().zip(&p.rows_per_fold) {
                *total += n;
            }
            if heights.len() < p.heights.len() {
                heights.resize(p.heights.len(), 0);
            }
            for (total, n) in heights.iter_mut().zip(&p.heights) {
                *total += n;
            }
            rows_per_split.add(&p.rows_per_split);
            labels.wins += p.labels.wins;
            labels.draws += p.labels.draws;
            labels.losses += p.labels.losses;
            labels.other += p.labels.other;
            side_to_move.first += p.side_to_move.first;
            side_to_move.second += p.side_to_move.second;
            for (id, (split, len)) in p.games {
                let entry = games.entry(id).or_insert((split, 0));
                entry.1 = entry.1.max(len);
            }
        }
        let mut games_per_split = SplitCounts::default();
        let mut plies = PliesPerGame {
            mean: 0.0,
            min: u64::MAX,
            max: 0,
        };
        let mut sum = 0u64;
        for (split, len) in games.values() {
            games_per_split[*split] += 1;
            sum += len;
            plies.min = plies.min.min(*len);
            plies.max = plies.max.max(*len);
        }
        if games.is_empty() {
            plies.min = 0;
        } else {
            plies.mean = sum as f64 / games.len() as f64;
        }
        let m = self.manifest();
        let e = &m.encoder;
        Ok(Stats {
            game: m.game.clone(),
            encoder: format!(
                "{} v{} {:?} + {} globals",
                e.name, e.version, e.shape, e.globals
            ),
            rows: rows_per_split.total(),
            games: games.len() as u64,
            rows_per_split,
            games_per_split,
            plies_per_game: plies,
            labels,
            side_to_move,
            rows_per_fold,
            heights: heights
                .iter()
                .enumerate()
                .map(|(b, &rows)| HeightBucket {
                    from: b as u32 * HEIGHT_BUCKET,
                    to: b as u32 * HEIGHT_BUCKET + HEIGHT_BUCKET - 1,
                    rows,
                })
                .collect(),
        })
    }
}
