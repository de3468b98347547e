//! `plies dataset generate` and `dump`, and the `verify` and `stats` that
//! every dataset shares (`plies data` is the same command).

use super::progress;
use anyhow::{bail, Context};
use clap::Args;
use plies::dataset::{Dataset, SplitRule};
use plies::encode::tictactoe_encoder;
use plies::game::TicTacToe;
use plies::games::GameKind;
use plies::model::{Activation, MlpConfig, NativeMlp, WeightInit};
use plies::search::game_player::{player_from_spec_in, PlayerContext};
use plies::selfplay::{generate_database, DatabaseConfig, LearningNetwork, SideSpec};
use plies::train::TdConfig;
use plies::util::seeded_rng;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args)]
pub struct GenerateArgs {
    #[arg(long)]
    game: GameKind,
    /// Player A: random, expert, greedy:CKPT, greedy+:CKPT, or td:HIDDEN (a
    /// fresh Elliott MLP that learns by TD(lambda) while it plays).
    #[arg(long)]
    a: String,
    /// Player B (random, expert, greedy:CKPT, greedy+:CKPT).
    #[arg(long)]
    b: String,
    #[arg(long)]
    games: usize,
    #[arg(long)]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value = "tictactoe-9")]
    encoder: String,
    /// Share of games in the validation split (by hash of the game id).
    #[arg(long, default_value_t = 0.1)]
    valid: f64,
    #[arg(long, default_value_t = 0.1)]
    test: f64,
    #[arg(long, default_value_t = 100_000)]
    shard_rows: usize,
    #[arg(long)]
    quiet: bool,
}

pub fn generate(a: GenerateArgs) -> anyhow::Result<ExitCode> {
    super::require_tictactoe(a.game)?;
    let encoder: Arc<dyn plies::encode::Encoder<TicTacToe>> =
        Arc::from(tictactoe_encoder(&a.encoder)?);
    let ctx = PlayerContext::default_for::<TicTacToe>();
    let side_a = if let Some(h) = a.a.strip_prefix("td:") {
        let hidden: usize = h
            .parse()
            .with_context(|| format!("--a '{}': expected td:HIDDEN with a number", a.a))?;
        let cfg = MlpConfig {
            inputs: encoder.plane_len() + encoder.spec().globals,
            hidden: vec![hidden],
            activation: Activation::Elliott { beta: 5.0 },
            init: WeightInit::Uniform { a: 0.2 },
        };
        let net = NativeMlp::new(&cfg, &mut seeded_rng(a.seed, u64::MAX))?;
        SideSpec::Learning(Box::new(LearningNetwork::new(
            net,
            encoder.clone(),
            TdConfig::default(),
            false,
        )))
    } else {
        SideSpec::Fixed(player_from_spec_in::<TicTacToe>(&a.a, &ctx)?)
    };
    let side_b = SideSpec::Fixed(player_from_spec_in::<TicTacToe>(&a.b, &ctx)?);
    let cfg = DatabaseConfig {
        games: a.games,
        seed: a.seed,
        split: SplitRule::new(a.valid, a.test)?,
        shard_rows: a.shard_rows,
    };
    let prov = serde_json::json!({
        "command": std::env::args().collect::<Vec<_>>().join(" "),
    });
    let pb = progress(a.games as u64, "games", a.quiet);
    let (manifest, wdl) = generate_database(&a.out, side_a, side_b, encoder, &cfg, prov, Some(&pb))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    pb.finish_and_clear();
    println!(
        "wrote {}: {} games, {} positions in {} shard(s); A ({}) won {}, drew {}, lost {}",
        a.out.display(),
        manifest.totals.games,
        manifest.totals.rows,
        manifest.shards.len(),
        a.a,
        wdl.wins,
        wdl.draws,
        wdl.losses
    );
    Ok(ExitCode::SUCCESS)
}

/// `plies data verify` / `plies dataset verify`: checks every shard; a
/// failure (or a directory that is not a complete dataset) exits non-zero.
pub fn verify(dir: &std::path::Path, json: bool) -> anyhow::Result<ExitCode> {
    let ds = match Dataset::open(dir) {
        Ok(ds) => ds,
        Err(e) => {
            eprintln!("verify failed: {e}");
            return Ok(ExitCode::FAILURE);
        }
    };
    match ds.verify() {
        Ok(r) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&r)?);
            } else {
                println!("{r}");
            }
            if !r.interrupted_write.is_empty() {
                eprintln!(
                    "warning: an interrupted write left {} in {}",
                    r.interrupted_write.join(", "),
                    dir.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("verify failed: {e}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `plies data stats` / `plies dataset stats`.
pub fn stats(
    dir: &std::path::Path,
    json: bool,
    plot: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let ds = Dataset::open(dir)?;
    let s = ds.stats()?;
    if let Some(path) = plot {
        height_chart(&s, dir).write(path)?;
        eprintln!("wrote {}", path.display());
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        println!("{s}");
    }
    if let Ok(left) = ds.verify_leftovers() {
        if !left.is_empty() {
            eprintln!(
                "warning: an interrupted write left {} in {}",
                left.join(", "),
                dir.display()
            );
        }
    }
    if s.rows == 0 {
        bail!("{}: the dataset has no rows", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
pub struct DumpArgs {
    dir: PathBuf,
    /// Only rows of this split (train, valid or test).
    #[arg(long)]
    split: Option<String>,
    /// At most this many rows.
    #[arg(long)]
    limit: Option<usize>,
}

/// `plies data dump`: one JSON object per row, in stored order (shards in
/// manifest order): the row as `PositionRow` serialises it (`globals` empty
/// when the dataset has none), plus every stored column that is not one of
/// its fields, converted generically from the Arrow arrays.
pub fn dump(a: DumpArgs) -> anyhow::Result<ExitCode> {
    use arrow_array::Array;
    use std::io::Write;
    let ds = Dataset::open(&a.dir)?;
    let split = match &a.split {
        Some(s) => Some(
            s.parse::<plies::dataset::Split>()
                .map_err(|e| anyhow::anyhow!("--split {s}: {e}"))?,
        ),
        None => None,
    };
    let rows = ds.rows(split)?;
    let limit = a.limit.unwrap_or(usize::MAX);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut k = 0;
    'shards: for shard in 0..ds.manifest().shards.len() {
        for batch in ds.shard_batches(shard)? {
            let splits = batch
                .column_by_name("split")
                .and_then(|c| c.as_any().downcast_ref::<arrow_array::StringArray>())
                .with_context(|| {
                    format!("{}: no `split` column", ds.shard_path(shard).display())
                })?;
            for i in 0..batch.num_rows() {
                if split.is_some_and(|s| splits.value(i) != s.as_str()) {
                    continue;
                }
                if k == limit {
                    break 'shards;
                }
                let row = rows.get(k).with_context(|| {
                    format!("{}: more rows than the reader returned", a.dir.display())
                })?;
                let serde_json::Value::Object(mut obj) = serde_json::to_value(row)? else {
                    bail!("a row did not serialise to a JSON object");
                };
                for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
                    if !obj.contains_key(field.name()) {
                        let v = arrow_cell(column.as_ref(), i).with_context(|| {
                            format!(
                                "{}: column `{}`",
                                ds.shard_path(shard).display(),
                                field.name()
                            )
                        })?;
                        obj.insert(field.name().clone(), v);
                    }
                }
                writeln!(out, "{}", serde_json::Value::Object(obj))?;
                k += 1;
            }
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Row `i` of an Arrow array as JSON (strings, integers, floats, booleans,
/// lists and fixed-size lists; nulls as `null`).
fn arrow_cell(col: &dyn arrow_array::Array, i: usize) -> anyhow::Result<serde_json::Value> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::*;
    use arrow_schema::DataType as T;
    use serde_json::json;
    if col.is_null(i) {
        return Ok(serde_json::Value::Null);
    }
    let list = |values: arrow_array::ArrayRef| -> anyhow::Result<serde_json::Value> {
        (0..values.len())
            .map(|j| arrow_cell(values.as_ref(), j))
            .collect::<anyhow::Result<Vec<_>>>()
            .map(serde_json::Value::Array)
    };
    Ok(match col.data_type() {
        T::Utf8 => json!(col.as_string::<i32>().value(i)),
        T::LargeUtf8 => json!(col.as_string::<i64>().value(i)),
        T::Boolean => json!(col.as_boolean().value(i)),
        T::Int8 => json!(col.as_primitive::<Int8Type>().value(i)),
        T::Int16 => json!(col.as_primitive::<Int16Type>().value(i)),
        T::Int32 => json!(col.as_primitive::<Int32Type>().value(i)),
        T::Int64 => json!(col.as_primitive::<Int64Type>().value(i)),
        T::UInt8 => json!(col.as_primitive::<UInt8Type>().value(i)),
        T::UInt16 => json!(col.as_primitive::<UInt16Type>().value(i)),
        T::UInt32 => json!(col.as_primitive::<UInt32Type>().value(i)),
        T::UInt64 => json!(col.as_primitive::<UInt64Type>().value(i)),
        T::Float32 => json!(col.as_primitive::<Float32Type>().value(i)),
        T::Float64 => json!(col.as_primitive::<Float64Type>().value(i)),
        T::FixedSizeList(..) => list(col.as_fixed_size_list().value(i))?,
        T::List(_) => list(col.as_list::<i32>().value(i))?,
        other => bail!("type {other} is not supported by `plies data dump`"),
    })
}

/// Rows per plies-to-end bucket, the dataset's "height" profile.
fn height_chart(s: &plies::dataset::Stats, dir: &std::path::Path) -> HeightChart {
    let points = s
        .heights
        .iter()
        .map(|b| ((b.from + b.to) as f64 / 2.0, b.rows as f64));
    HeightChart(
        plies::report::LineChart::new(
            format!(
                "{} ({}): rows by plies to the end",
                dir.display(),
                s.encoder
            ),
            "plies to the end of the game",
            "rows",
        )
        .with_series("rows", points),
    )
}

struct HeightChart(plies::report::LineChart);

impl HeightChart {
    /// PNG, or SVG when the name ends in `.svg`.
    fn write(&self, path: &std::path::Path) -> anyhow::Result<()> {
        let svg = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
        if svg {
            self.0.write_svg(path)?;
        } else {
            self.0.write_png(path)?;
        }
        Ok(())
    }
}
