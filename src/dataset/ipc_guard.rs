//! A bounds check of an Arrow IPC file before it is handed to the decoder.
//!
//! arrow-ipc trusts the uncompressed length written in front of each
//! compressed buffer and allocates it up front: one flipped bit there asks for
//! exabytes and aborts the process (an allocation failure cannot be caught).
//! This walks the footer and the record-batch headers and refuses any block,
//! buffer or declared length that does not fit the file and the expected size
//! of the shard. Shards read through `Dataset` are sha256-checked first, so
//! this only guards files whose manifest was edited to match.

use arrow_ipc::{root_as_footer, root_as_message};

/// Marks an encapsulated message whose length follows (IPC format >= 0.15).
const CONTINUATION_MARKER: [u8; 4] = [0xff; 4];

const MAGIC: &[u8; 6] = b"ARROW1";

/// What the shard is expected to hold, to bound declared sizes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Expected {
    /// Rows in the shard (from the manifest).
    pub rows: u64,
    /// Upper bound on the bytes of one row in any single buffer.
    pub max_row_bytes: u64,
}

impl Expected {
    /// Largest uncompressed buffer a batch of `rows` rows may declare.
    fn max_buffer(&self, rows: u64) -> u64 {
        rows.saturating_add(1)
            .saturating_mul(self.max_row_bytes)
            .saturating_add(1 << 20)
    }
}

/// The part of the file a problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Footer,
    Batch(usize),
    BatchHeader(usize),
    Buffer { batch: usize, buffer: usize },
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Part::Footer => write!(f, "footer"),
            Part::Batch(i) => write!(f, "record batch {i}"),
            Part::BatchHeader(i) => write!(f, "record batch {i} header"),
            Part::Buffer { batch, buffer } => write!(f, "record batch {batch} buffer {buffer}"),
        }
    }
}

/// What is wrong with an Arrow IPC file ([`check_ipc_file`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum IpcGuardError {
    #[error("missing the ARROW1 magic at the start or end (not an Arrow IPC file, or truncated)")]
    NoMagic,
    #[error("{part}: negative {field} {value}")]
    Negative {
        part: Part,
        field: &'static str,
        value: i64,
    },
    #[error("{part}: bytes {start}..{start}+{len} lie outside the file of {size} bytes")]
    OutOfBounds {
        part: Part,
        start: usize,
        len: usize,
        size: usize,
    },
    /// The flatbuffer does not verify (the verifier's message).
    #[error("{part}: {why}")]
    Flatbuffer { part: Part, why: String },
    #[error("{0}: the message is not a record batch")]
    NotRecordBatch(Part),
    #[error("{0}: negative row count")]
    NegativeRows(Part),
    #[error("{part}: the batches hold more than the {expected} rows expected")]
    TooManyRows { part: Part, expected: u64 },
    #[error("{0}: too short for its length prefix")]
    ShortPrefix(Part),
    #[error("{part}: declares {declared} uncompressed bytes, expected at most {max}")]
    TooLarge { part: Part, declared: i64, max: u64 },
}

fn slice(bytes: &[u8], offset: i64, len: i64, part: Part) -> Result<(usize, usize), IpcGuardError> {
    let negative = |field, value| IpcGuardError::Negative { part, field, value };
    let start = usize::try_from(offset).map_err(|_| negative("offset", offset))?;
    let len = usize::try_from(len).map_err(|_| negative("length", len))?;
    match start.checked_add(len) {
        Some(end) if end <= bytes.len() => Ok((start, end)),
        _ => Err(IpcGuardError::OutOfBounds {
            part,
            start,
            len,
            size: bytes.len(),
        }),
    }
}

fn le_i32(b: &[u8]) -> Option<i32> {
    Some(i32::from_le_bytes(b.get(..4)?.try_into().ok()?))
}

fn le_i64(b: &[u8]) -> Option<i64> {
    Some(i64::from_le_bytes(b.get(..8)?.try_into().ok()?))
}

/// Checks magic, footer, block extents, batch lengths and every compressed
/// buffer's declared uncompressed length. The error says what is wrong.
pub(crate) fn check_ipc_file(bytes: &[u8], expected: Expected) -> Result<(), IpcGuardError> {
    let n = bytes.len();
    if n < 6 + 2 + 4 + 6 || &bytes[..6] != MAGIC || &bytes[n - 6..] != MAGIC {
        return Err(IpcGuardError::NoMagic);
    }
    let flatbuffer = |part, e: &dyn std::fmt::Display| IpcGuardError::Flatbuffer {
        part,
        why: e.to_string(),
    };
    let footer_len = le_i32(&bytes[n - 10..]).unwrap_or(-1);
    let (f0, f1) = slice(
        bytes,
        n as i64 - 10 - footer_len as i64,
        footer_len as i64,
        Part::Footer,
    )?;
    let footer = root_as_footer(&bytes[f0..f1]).map_err(|e| flatbuffer(Part::Footer, &e))?;
    let mut total_rows: u64 = 0;
    for (i, block) in footer.recordBatches().iter().flatten().enumerate() {
        let what = Part::Batch(i);
        let (m0, m1) = slice(bytes, block.offset(), block.metaDataLength() as i64, what)?;
        let (b0, b1) = slice(bytes, m1 as i64, block.bodyLength(), what)?;
        let meta = &bytes[m0..m1];
        let prefix = if meta.get(..4) == Some(&CONTINUATION_MARKER[..]) {
            8
        } else {
            4
        };
        let len = le_i32(meta.get(prefix - 4..).unwrap_or(&[])).unwrap_or(-1);
        let header = Part::BatchHeader(i);
        let (h0, h1) = slice(meta, prefix as i64, len as i64, header)?;
        let message = root_as_message(&meta[h0..h1]).map_err(|e| flatbuffer(header, &e))?;
        let Some(batch) = message.header_as_record_batch() else {
            return Err(IpcGuardError::NotRecordBatch(what));
        };
        let rows = u64::try_from(batch.length()).map_err(|_| IpcGuardError::NegativeRows(what))?;
        total_rows = total_rows.saturating_add(rows);
        if total_rows > expected.rows {
            return Err(IpcGuardError::TooManyRows {
                part: what,
                expected: expected.rows,
            });
        }
        let body = &bytes[b0..b1];
        let max = expected.max_buffer(rows);
        for (j, buffer) in batch.buffers().iter().flatten().enumerate() {
            let what = Part::Buffer {
                batch: i,
                buffer: j,
            };
            let (s0, s1) = slice(body, buffer.offset(), buffer.length(), what)?;
            if batch.compression().is_none() || s0 == s1 {
                continue;
            }
            let declared = le_i64(&body[s0..s1]).ok_or(IpcGuardError::ShortPrefix(what))?;
            if declared != -1 && !(0..=i64::try_from(max).unwrap_or(i64::MAX)).contains(&declared) {
                return Err(IpcGuardError::TooLarge {
                    part: what,
                    declared,
                    max,
                });
            }
        }
    }
    Ok(())
}
