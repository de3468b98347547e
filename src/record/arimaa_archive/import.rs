//! Whole archive files: the header, then every row, with the counts.

use super::columns::Columns;
use super::row::{process_row, RowResult};
use super::{FileSummary, ImportOptions};
use crate::record::game_record::GameRecord;
use crate::record::RecordError;
use crate::util::text::skip_bom;
use std::io::BufRead;
use std::path::Path;

/// Reads one archive from `reader`. `path` names it in errors and its file
/// name goes into each record's `source`. Each kept record goes to
/// `on_record`; `on_game` is called after every game line (for progress).
/// Fails on I/O errors, a missing header or column, an error from
/// `on_record`, or (with `stop_on_error`) the first game that does not replay.
pub fn import_archive<R: BufRead>(
    mut reader: R,
    path: &Path,
    opts: &ImportOptions,
    mut on_record: impl FnMut(GameRecord) -> Result<(), RecordError>,
    mut on_game: impl FnMut(),
) -> Result<FileSummary, RecordError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let io = RecordError::io(path);
    skip_bom(&mut reader).map_err(io)?;
    let mut buf = Vec::new();
    let mut read_line = |buf: &mut Vec<u8>| -> Result<Option<String>, RecordError> {
        buf.clear();
        if reader.read_until(b'\n', buf).map_err(io)? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(buf);
        Ok(Some(text.trim_end_matches(['\n', '\r']).to_string()))
    };
    let header = read_line(&mut buf)?.ok_or_else(|| RecordError::Parse {
        path: path.to_path_buf(),
        line: 1,
        why: "empty file: expected a header row naming the columns".into(),
    })?;
    let cols = Columns::from_header(&header).map_err(|e| RecordError::Parse {
        path: path.to_path_buf(),
        line: 1,
        why: e.to_string(),
    })?;
    let mut summary = FileSummary {
        file: name.clone(),
        ..FileSummary::default()
    };
    let mut line_no = 1;
    while let Some(line) = read_line(&mut buf)? {
        line_no += 1;
        if line.trim().is_empty() {
            continue;
        }
        summary.games_read += 1;
        let fields: Vec<&str> = line.split('\t').collect();
        let source = format!("{name}:{line_no}");
        match process_row(&fields, &cols, &source, opts) {
            RowResult::Kept(rec) => {
                summary.kept += 1;
                *summary
                    .kept_by_termination
                    .entry(rec.termination.clone())
                    .or_default() += 1;
                on_record(*rec)?;
            }
            RowResult::Filtered(why) => {
                *summary.skipped.entry(why.to_string()).or_default() += 1;
            }
            RowResult::Skipped(report) => {
                if opts.stop_on_error {
                    return Err(RecordError::Parse {
                        path: path.to_path_buf(),
                        line: line_no,
                        why: report.to_string(),
                    });
                }
                *summary.skipped.entry(report.reason.clone()).or_default() += 1;
                summary.reports.push(report);
            }
        }
        on_game();
    }
    Ok(summary)
}

/// Reads an archive file whole: the kept records and the counts.
pub fn import_file(
    path: impl AsRef<Path>,
    opts: &ImportOptions,
) -> Result<(Vec<GameRecord>, FileSummary), RecordError> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(RecordError::io(path))?;
    import_all(std::io::BufReader::new(file), path, opts)
}

/// Reads archive text; `name` stands for the file in messages and sources.
pub fn import_str(
    text: &str,
    name: &str,
    opts: &ImportOptions,
) -> Result<(Vec<GameRecord>, FileSummary), RecordError> {
    import_all(text.as_bytes(), Path::new(name), opts)
}

/// [`import_archive`] gathering every kept record.
fn import_all(
    reader: impl BufRead,
    path: &Path,
    opts: &ImportOptions,
) -> Result<(Vec<GameRecord>, FileSummary), RecordError> {
    let mut records = Vec::new();
    let summary = import_archive(
        reader,
        path,
        opts,
        |r| {
            records.push(r);
            Ok(())
        },
        || {},
    )?;
    Ok((records, summary))
}
