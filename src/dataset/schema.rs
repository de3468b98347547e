//! The Arrow schema of a shard, and rows <-> `RecordBatch`.
//!
//! | column | Arrow type | nullable |
//! | --- | --- | --- |
//! | `game_id` | Utf8 | no |
//! | `ply` | UInt32 | no |
//! | `plies_to_end` | UInt32 | no |
//! | `side_to_move` | UInt8 (0 = first player) | no |
//! | `position` | Utf8 | no |
//! | `planes` | FixedSizeList<Int8 "item">\[C*H*W\] | no |
//! | `globals` | FixedSizeList<Float32 "item">\[G\] (absent when G = 0) | no |
//! | `label` | Float32 | no |
//! | `move_played` | Utf8 | yes |
//! | `split` | Utf8 (`train` / `valid` / `test`) | no |
//! | `fold` | UInt8 (`0..k`, see [`fold`](super::fold)) | no |
//! | `source` | Utf8 | no |
//! | `termination` | Utf8 | yes |
//! | `white_rating` | UInt32 | yes |
//! | `black_rating` | UInt32 | yes |
//! | `policy_index` | List<UInt32 "item"> (format 3) | yes |
//! | `policy_prob` | List<Float32 "item"> (format 3) | yes |
//!
//! The two policy columns (format 3 on) hold the search's distribution over
//! the moves of the position ([`PolicyTarget`]): policy indices and their
//! probabilities, null where no search chose the move. Format 2 datasets
//! have neither column and are read as having no policy anywhere.
//!
//! When the encoder has no global features (`G = 0`) the `globals` column is
//! left out: pyarrow and DuckDB read a fixed-size list of size 0, but polars
//! (2.1) refuses the whole file ("Cannot read zero sized arrays from IPC").
//! Rows read back have `globals` empty.
//! The schema metadata key `plies.dataset` holds the format version, game and
//! encoder as JSON, for tools that see a shard without its manifest.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float32Builder, ListBuilder, StringBuilder, UInt32Builder};
use arrow_array::{
    Array, ArrayRef, FixedSizeListArray, Float32Array, Int8Array, ListArray, RecordBatch,
    StringArray, UInt32Array, UInt8Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use super::error::{DatasetError, Result};
use super::row::{PolicyTarget, PositionRow};
use super::spec::EncoderInfo;
use super::split::Split;

/// Schema metadata key holding `{format_version, game, encoder}` as JSON.
pub const SCHEMA_METADATA_KEY: &str = "plies.dataset";

/// Position of the `globals` column (after `planes`) when it is present.
const GLOBALS_INDEX: usize = 6;

/// Name of the child field of the fixed-size list columns.
const ITEM: &str = "item";

fn list_type(item: DataType, size: usize) -> DataType {
    // `EncoderInfo::validate` keeps sizes within i32.
    let size = i32::try_from(size).unwrap_or(i32::MAX);
    DataType::FixedSizeList(Arc::new(Field::new(ITEM, item, false)), size)
}

/// The first format version with the policy columns.
pub const POLICY_FORMAT_VERSION: u32 = 3;

fn policy_list(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new(ITEM, item, true)))
}

/// The schema of every shard of a dataset with this game and encoder,
/// written in `format_version` (2 or 3; 2 has no policy columns).
pub fn dataset_schema(game: &str, encoder: &EncoderInfo, format_version: u32) -> Schema {
    let mut fields = vec![
        Field::new("game_id", DataType::Utf8, false),
        Field::new("ply", DataType::UInt32, false),
        Field::new("plies_to_end", DataType::UInt32, false),
        Field::new("side_to_move", DataType::UInt8, false),
        Field::new("position", DataType::Utf8, false),
        Field::new(
            "planes",
            list_type(DataType::Int8, encoder.planes_len()),
            false,
        ),
        Field::new("label", DataType::Float32, false),
        Field::new("move_played", DataType::Utf8, true),
        Field::new("split", DataType::Utf8, false),
        Field::new("fold", DataType::UInt8, false),
        Field::new("source", DataType::Utf8, false),
        Field::new("termination", DataType::Utf8, true),
        Field::new("white_rating", DataType::UInt32, true),
        Field::new("black_rating", DataType::UInt32, true),
    ];
    if format_version >= POLICY_FORMAT_VERSION {
        fields.push(Field::new(
            "policy_index",
            policy_list(DataType::UInt32),
            true,
        ));
        fields.push(Field::new(
            "policy_prob",
            policy_list(DataType::Float32),
            true,
        ));
    }
    if encoder.globals > 0 {
        let globals = list_type(DataType::Float32, encoder.globals);
        fields.insert(GLOBALS_INDEX, Field::new("globals", globals, false));
    }
    let meta = serde_json::json!({
        "format_version": format_version,
        "game": game,
        "encoder": encoder,
    });
    let metadata =
        std::collections::HashMap::from([(SCHEMA_METADATA_KEY.to_string(), meta.to_string())]);
    Schema::new(fields).with_metadata(metadata)
}

/// Checks a shard's schema against the expected one, column by column
/// (metadata is not compared).
pub(crate) fn check_schema(
    found: &Schema,
    expected: &Schema,
    path: &Path,
    shard: usize,
) -> Result<()> {
    let err = |field: &str, expected: String, found: String| DatasetError::ShardSchema {
        path: path.to_path_buf(),
        shard,
        field: field.to_string(),
        expected,
        found,
    };
    for want in expected.fields() {
        let got = found.field_with_name(want.name()).map_err(|_| {
            err(
                want.name(),
                format!("{}", want.data_type()),
                "missing".into(),
            )
        })?;
        if got.data_type() != want.data_type() {
            return Err(err(
                want.name(),
                want.data_type().to_string(),
                got.data_type().to_string(),
            ));
        }
        if got.is_nullable() && !want.is_nullable() {
            return Err(err(want.name(), "not nullable".into(), "nullable".into()));
        }
    }
    if let Some(extra) = found
        .fields()
        .iter()
        .find(|f| expected.field_with_name(f.name()).is_err())
    {
        return Err(err(
            extra.name(),
            "absent".into(),
            extra.data_type().to_string(),
        ));
    }
    Ok(())
}

/// One row to append, borrowed from a [`PositionRow`] or a [`GameRows`](super::GameRows).
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowRef<'a> {
    pub game_id: &'a str,
    pub ply: u32,
    pub plies_to_end: u32,
    pub side_to_move: u8,
    pub position: &'a str,
    pub planes: &'a [i8],
    pub globals: &'a [f32],
    pub label: f32,
    pub move_played: Option<&'a str>,
    pub split: Split,
    pub fold: u8,
    pub source: &'a str,
    pub termination: Option<&'a str>,
    pub white_rating: Option<u32>,
    pub black_rating: Option<u32>,
    pub policy: Option<&'a PolicyTarget>,
}

/// Most values [`BatchBuilder::with_capacity`] reserves per list column.
const MAX_RESERVE: usize = 1 << 24;

/// Column buffers for one record batch: rows are appended one by one (no
/// allocation per row) and turned into a `RecordBatch` by [`BatchBuilder::finish`].
pub(crate) struct BatchBuilder {
    len: usize,
    /// Rows, plane values and global values per row reserved up front, so
    /// the buffers do not grow by reallocation.
    reserve: (usize, usize, usize),
    game_id: StringBuilder,
    ply: Vec<u32>,
    plies_to_end: Vec<u32>,
    side_to_move: Vec<u8>,
    position: StringBuilder,
    planes: Vec<i8>,
    globals: Vec<f32>,
    label: Vec<f32>,
    move_played: StringBuilder,
    split: StringBuilder,
    fold: Vec<u8>,
    source: StringBuilder,
    termination: StringBuilder,
    white_rating: UInt32Builder,
    black_rating: UInt32Builder,
    policy_index: ListBuilder<UInt32Builder>,
    policy_prob: ListBuilder<Float32Builder>,
}

impl BatchBuilder {
    /// A builder with room for `rows` rows of `planes` and `globals` values.
    pub fn with_capacity(rows: usize, planes: usize, globals: usize) -> Self {
        // Typical text sizes; the string buffers grow when they are exceeded.
        let text = |bytes: usize| StringBuilder::with_capacity(rows, rows * bytes);
        BatchBuilder {
            len: 0,
            reserve: (rows, planes, globals),
            game_id: text(16),
            ply: Vec::with_capacity(rows),
            plies_to_end: Vec::with_capacity(rows),
            side_to_move: Vec::with_capacity(rows),
            position: text(80),
            // Capped: a huge encoder shape must not reserve memory up front.
            planes: Vec::with_capacity(rows.saturating_mul(planes).min(MAX_RESERVE)),
            globals: Vec::with_capacity(rows.saturating_mul(globals).min(MAX_RESERVE)),
            label: Vec::with_capacity(rows),
            move_played: text(16),
            split: text(5),
            fold: Vec::with_capacity(rows),
            source: text(24),
            termination: text(8),
            white_rating: UInt32Builder::with_capacity(rows),
            black_rating: UInt32Builder::with_capacity(rows),
            policy_index: ListBuilder::new(UInt32Builder::new()),
            policy_prob: ListBuilder::new(Float32Builder::new()),
        }
    }

    /// Rows appended since the last `finish`.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Appends a row whose planes/globals lengths were checked.
    pub fn append(&mut self, r: &RowRef<'_>) {
        self.len += 1;
        self.game_id.append_value(r.game_id);
        self.ply.push(r.ply);
        self.plies_to_end.push(r.plies_to_end);
        self.side_to_move.push(r.side_to_move);
        self.position.append_value(r.position);
        self.planes.extend_from_slice(r.planes);
        self.globals.extend_from_slice(r.globals);
        self.label.push(r.label);
        self.move_played.append_option(r.move_played);
        self.split.append_value(r.split.as_str());
        self.fold.push(r.fold);
        self.source.append_value(r.source);
        self.termination.append_option(r.termination);
        self.white_rating.append_option(r.white_rating);
        self.black_rating.append_option(r.black_rating);
        match r.policy {
            Some(p) => {
                self.policy_index.values().append_slice(&p.index);
                self.policy_index.append(true);
                self.policy_prob.values().append_slice(&p.prob);
                self.policy_prob.append(true);
            }
            None => {
                self.policy_index.append_null();
                self.policy_prob.append_null();
            }
        }
    }

    /// The appended rows as a batch of `schema`; the builder is empty again.
    pub fn finish(
        &mut self,
        schema: &SchemaRef,
        encoder: &EncoderInfo,
    ) -> Result<RecordBatch, ArrowError> {
        let (rows, planes, globals) = self.reserve;
        let mut full = std::mem::replace(self, BatchBuilder::with_capacity(rows, planes, globals));
        full.finish_into(schema, encoder)
    }

    fn finish_into(
        &mut self,
        schema: &SchemaRef,
        encoder: &EncoderInfo,
    ) -> Result<RecordBatch, ArrowError> {
        let n = std::mem::take(&mut self.len);
        let list =
            |item: DataType, size: usize, values: ArrayRef| -> Result<ArrayRef, ArrowError> {
                let size = i32::try_from(size).map_err(|_| {
                    ArrowError::InvalidArgumentError(format!("list size {size} > i32"))
                })?;
                Ok(Arc::new(FixedSizeListArray::try_new_with_length(
                    Arc::new(Field::new(ITEM, item, false)),
                    size,
                    values,
                    None,
                    n,
                )?))
            };
        let mut columns: Vec<ArrayRef> = vec![
            Arc::new(self.game_id.finish()),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.ply))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.plies_to_end))),
            Arc::new(UInt8Array::from(std::mem::take(&mut self.side_to_move))),
            Arc::new(self.position.finish()),
            list(
                DataType::Int8,
                encoder.planes_len(),
                Arc::new(Int8Array::from(std::mem::take(&mut self.planes))),
            )?,
            Arc::new(Float32Array::from(std::mem::take(&mut self.label))),
            Arc::new(self.move_played.finish()),
            Arc::new(self.split.finish()),
            Arc::new(UInt8Array::from(std::mem::take(&mut self.fold))),
            Arc::new(self.source.finish()),
            Arc::new(self.termination.finish()),
            Arc::new(self.white_rating.finish()),
            Arc::new(self.black_rating.finish()),
        ];
        let (policy_index, policy_prob) = (self.policy_index.finish(), self.policy_prob.finish());
        if schema.field_with_name("policy_index").is_ok() {
            columns.push(Arc::new(policy_index));
            columns.push(Arc::new(policy_prob));
        }
        let globals = std::mem::take(&mut self.globals);
        if encoder.globals > 0 {
            let values = Arc::new(Float32Array::from(globals));
            columns.insert(
                GLOBALS_INDEX,
                list(DataType::Float32, encoder.globals, values)?,
            );
        }
        RecordBatch::try_new(schema.clone(), columns)
    }
}

/// Typed views of the columns of one record batch read from a shard.
pub(crate) struct Columns<'a> {
    path: &'a Path,
    shard: usize,
    /// Index in the shard of this batch's first row.
    row_offset: usize,
    len: usize,
    pub game_id: &'a StringArray,
    pub ply: &'a UInt32Array,
    pub plies_to_end: &'a UInt32Array,
    pub side_to_move: &'a UInt8Array,
    pub position: &'a StringArray,
    planes: &'a [i8],
    planes_len: usize,
    globals: &'a [f32],
    globals_len: usize,
    pub label: &'a Float32Array,
    pub move_played: &'a StringArray,
    pub split: &'a StringArray,
    pub fold: &'a UInt8Array,
    pub source: &'a StringArray,
    pub termination: &'a StringArray,
    pub white_rating: &'a UInt32Array,
    pub black_rating: &'a UInt32Array,
    /// The policy columns; `None` in a format 2 shard.
    policy: Option<(&'a ListArray, &'a ListArray)>,
}

impl<'a> Columns<'a> {
    /// Typed views of `batch`, whose schema was checked by [`check_schema`].
    pub fn new(
        batch: &'a RecordBatch,
        path: &'a Path,
        shard: usize,
        row_offset: usize,
    ) -> Result<Self> {
        fn col<'b, T: 'static>(
            batch: &'b RecordBatch,
            name: &str,
            path: &Path,
            shard: usize,
        ) -> Result<&'b T> {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<T>())
                .ok_or_else(|| DatasetError::ShardSchema {
                    path: path.to_path_buf(),
                    shard,
                    field: name.to_string(),
                    expected: std::any::type_name::<T>().to_string(),
                    found: batch
                        .column_by_name(name)
                        .map_or("missing".into(), |c| c.data_type().to_string()),
                })
        }
        let len = batch.num_rows();
        let planes_list = col::<FixedSizeListArray>(batch, "planes", path, shard)?;
        let planes_len = usize::try_from(planes_list.value_length()).unwrap_or(0);
        let wrong_item =
            |field: &str, expected: &str, list: &FixedSizeListArray| DatasetError::ShardSchema {
                path: path.to_path_buf(),
                shard,
                field: field.to_string(),
                expected: expected.to_string(),
                found: list.data_type().to_string(),
            };
        let planes: &'a [i8] = planes_list
            .values()
            .as_any()
            .downcast_ref::<Int8Array>()
            .ok_or_else(|| wrong_item("planes", "a fixed-size list of Int8", planes_list))?
            .values();
        // No `globals` column: no global features (G = 0).
        let (globals, globals_len): (&'a [f32], usize) = match batch.column_by_name("globals") {
            None => (&[], 0),
            Some(_) => {
                let list = col::<FixedSizeListArray>(batch, "globals", path, shard)?;
                let values = list
                    .values()
                    .as_any()
                    .downcast_ref::<Float32Array>()
                    .ok_or_else(|| wrong_item("globals", "a fixed-size list of Float32", list))?
                    .values();
                (values, usize::try_from(list.value_length()).unwrap_or(0))
            }
        };
        for (name, values, size) in [
            ("planes", planes.len(), planes_len),
            ("globals", globals.len(), globals_len),
        ] {
            if values < len.saturating_mul(size) {
                return Err(DatasetError::ShardRow {
                    path: path.to_path_buf(),
                    shard,
                    row: row_offset,
                    field: name,
                    expected: format!("{} values for {len} rows of {size}", len * size),
                    found: format!("{values} values"),
                });
            }
        }
        let policy = match batch.column_by_name("policy_index") {
            None => None,
            Some(_) => Some((
                col::<ListArray>(batch, "policy_index", path, shard)?,
                col::<ListArray>(batch, "policy_prob", path, shard)?,
            )),
        };
        Ok(Columns {
            policy,
            path,
            shard,
            row_offset,
            len,
            game_id: col(batch, "game_id", path, shard)?,
            ply: col(batch, "ply", path, shard)?,
            plies_to_end: col(batch, "plies_to_end", path, shard)?,
            side_to_move: col(batch, "side_to_move", path, shard)?,
            position: col(batch, "position", path, shard)?,
            planes,
            planes_len,
            globals,
            globals_len,
            label: col(batch, "label", path, shard)?,
            move_played: col(batch, "move_played", path, shard)?,
            split: col(batch, "split", path, shard)?,
            fold: col(batch, "fold", path, shard)?,
            source: col(batch, "source", path, shard)?,
            termination: col(batch, "termination", path, shard)?,
            white_rating: col(batch, "white_rating", path, shard)?,
            black_rating: col(batch, "black_rating", path, shard)?,
        })
    }

    /// Rows in this batch.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Index in the shard of row `i` of this batch.
    pub fn shard_row(&self, i: usize) -> usize {
        self.row_offset + i
    }

    /// Planes of row `i`.
    pub fn planes(&self, i: usize) -> &'a [i8] {
        &self.planes[i * self.planes_len..(i + 1) * self.planes_len]
    }

    /// Globals of row `i`.
    pub fn globals(&self, i: usize) -> &'a [f32] {
        &self.globals[i * self.globals_len..(i + 1) * self.globals_len]
    }

    /// The policy target of row `i`: `None` where it is null or the shard
    /// has no policy columns; an error names a column of the wrong type.
    pub fn policy(&self, i: usize) -> Result<Option<PolicyTarget>> {
        let Some((index, prob)) = self.policy else {
            return Ok(None);
        };
        if index.is_null(i) || prob.is_null(i) {
            return Ok(None);
        }
        let (iv, pv) = (index.value(i), prob.value(i));
        let index = iv.as_any().downcast_ref::<UInt32Array>().ok_or_else(|| {
            self.row_error(
                i,
                "policy_index",
                "a list of UInt32".into(),
                iv.data_type().to_string(),
            )
        })?;
        let prob = pv.as_any().downcast_ref::<Float32Array>().ok_or_else(|| {
            self.row_error(
                i,
                "policy_prob",
                "a list of Float32".into(),
                pv.data_type().to_string(),
            )
        })?;
        Ok(Some(PolicyTarget {
            index: index.values().to_vec(),
            prob: prob.values().to_vec(),
        }))
    }

    /// An error about column `field` of row `i`.
    pub fn row_error(
        &self,
        i: usize,
        field: &'static str,
        expected: String,
        found: String,
    ) -> DatasetError {
        DatasetError::ShardRow {
            path: self.path.to_path_buf(),
            shard: self.shard,
            row: self.shard_row(i),
            field,
            expected,
            found,
        }
    }

    /// The stored split of row `i`.
    pub fn split(&self, i: usize) -> Result<Split> {
        let s = self.split.value(i);
        s.parse().map_err(|_| {
            self.row_error(i, "split", "train, valid or test".into(), format!("`{s}`"))
        })
    }

    /// Row `i` as a [`PositionRow`].
    pub fn row(&self, i: usize) -> PositionRow {
        let opt_str = |a: &StringArray| (!a.is_null(i)).then(|| a.value(i).to_string());
        let opt_u32 = |a: &UInt32Array| (!a.is_null(i)).then(|| a.value(i));
        PositionRow {
            game_id: self.game_id.value(i).to_string(),
            ply: self.ply.value(i),
            plies_to_end: self.plies_to_end.value(i),
            side_to_move: self.side_to_move.value(i),
            position: self.position.value(i).to_string(),
            planes: self.planes(i).to_vec(),
            globals: self.globals(i).to_vec(),
            label: self.label.value(i),
            move_played: opt_str(self.move_played),
            source: self.source.value(i).to_string(),
            termination: opt_str(self.termination),
            white_rating: opt_u32(self.white_rating),
            black_rating: opt_u32(self.black_rating),
            policy: self.policy(i).ok().flatten(),
        }
    }
}
