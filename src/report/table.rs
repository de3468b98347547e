//! Plain tables: aligned text for the terminal and logs, CSV for files.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{write_atomic, ReportError};

/// A table of strings with a header row.
///
/// Rows may be shorter or longer than `headers`; missing cells print empty
/// and the table is as wide as its widest row.
///
/// `Display` renders an aligned plain-text table: columns separated by two
/// spaces, a rule of dashes under the header, and columns whose non-empty
/// cells all look like numbers (`12`, `-0.5`, `1e-3`, `55%`) right-aligned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Column names.
    pub headers: Vec<String>,
    /// Data rows, one `String` per cell.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// An empty table with these column names.
    pub fn new(headers: Vec<String>) -> Self {
        Table {
            headers,
            rows: Vec::new(),
        }
    }

    /// An empty table from anything string-like: `Table::with_headers(["a", "b"])`.
    pub fn with_headers<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table::new(headers.into_iter().map(Into::into).collect())
    }

    /// Appends a row (cells are converted with `ToString`).
    pub fn push_row<S: ToString>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows
            .push(cells.into_iter().map(|c| c.to_string()).collect());
    }

    /// Number of columns: the widest of the header and every row.
    pub fn num_columns(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .chain(std::iter::once(self.headers.len()))
            .max()
            .unwrap_or(0)
    }

    /// The table as CSV (RFC 4180 quoting, `\n` line ends, every line padded
    /// to [`num_columns`](Self::num_columns) fields).
    pub fn to_csv(&self) -> String {
        let ncols = self.num_columns();
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(&self.rows) {
            for col in 0..ncols {
                if col > 0 {
                    out.push(',');
                }
                push_csv_field(&mut out, row.get(col).map_or("", String::as_str));
            }
            out.push('\n');
        }
        out
    }

    /// Writes [`to_csv`](Self::to_csv) to `path` atomically (temporary file in
    /// the same directory, then rename), creating missing parent directories.
    pub fn write_csv(&self, path: impl AsRef<Path>) -> Result<(), ReportError> {
        Ok(write_atomic(path, self.to_csv().as_bytes())?)
    }
}

/// Appends one CSV field, quoting it if it contains a separator, a quote, a
/// line break, or leading/trailing whitespace.
fn push_csv_field(out: &mut String, field: &str) {
    let needs_quotes = field.contains([',', '"', '\n', '\r'])
        || field.starts_with(char::is_whitespace)
        || field.ends_with(char::is_whitespace);
    if needs_quotes {
        out.push('"');
        out.push_str(&field.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(field);
    }
}

/// Whether a cell reads as a number, for right alignment.
fn looks_numeric(cell: &str) -> bool {
    let s = cell.trim();
    let s = s.strip_suffix('%').unwrap_or(s).trim_end();
    !s.is_empty() && s.parse::<f64>().is_ok()
}

fn cell(row: &[String], col: usize) -> &str {
    row.get(col).map_or("", String::as_str)
}

fn width(s: &str) -> usize {
    s.chars().count()
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ncols = self.num_columns();
        if ncols == 0 {
            return Ok(());
        }
        // Line breaks inside a cell would break the layout; show them as spaces.
        let clean = |s: &str| s.replace(['\n', '\r'], " ");

        let mut widths = vec![0usize; ncols];
        let mut numeric = vec![true; ncols];
        let mut any_value = vec![false; ncols];
        for (col, w) in widths.iter_mut().enumerate() {
            *w = width(&clean(cell(&self.headers, col)));
            for row in &self.rows {
                let c = clean(cell(row, col));
                *w = (*w).max(width(&c));
                if !c.trim().is_empty() {
                    any_value[col] = true;
                    numeric[col] &= looks_numeric(&c);
                }
            }
        }
        let right: Vec<bool> = (0..ncols).map(|c| numeric[c] && any_value[c]).collect();

        let write_line = |f: &mut fmt::Formatter<'_>, row: &[String]| -> fmt::Result {
            let mut line = String::new();
            for col in 0..ncols {
                if col > 0 {
                    line.push_str("  ");
                }
                let c = clean(cell(row, col));
                let pad = " ".repeat(widths[col] - width(&c));
                if right[col] {
                    line.push_str(&pad);
                    line.push_str(&c);
                } else {
                    line.push_str(&c);
                    line.push_str(&pad);
                }
            }
            writeln!(f, "{}", line.trim_end())
        };

        write_line(f, &self.headers)?;
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        writeln!(f, "{}", rule.join("  "))?;
        for row in &self.rows {
            write_line(f, row)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::with_headers(["player", "games", "win rate"]);
        t.push_row(["alpha-beta d4", "100", "0.55"]);
        t.push_row(["mlp", "2000", "-0.125"]);
        t.push_row(["random", "7", "5%"]);
        t
    }

    #[test]
    fn display_aligns_columns_and_right_aligns_numbers() {
        let text = sample().to_string();
        let expected = "\
player         games  win rate
-------------  -----  --------
alpha-beta d4    100      0.55
mlp             2000    -0.125
random             7        5%
";
        assert_eq!(text, expected);
    }

    #[test]
    fn display_handles_ragged_rows_and_text_columns() {
        let mut t = Table::with_headers(["a", "b"]);
        t.push_row(["x"]);
        t.push_row(["1", "yy", "extra"]);
        let text = t.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "a  b");
        assert_eq!(lines[1], "-  --  -----");
        assert_eq!(lines[2], "x");
        assert_eq!(lines[3], "1  yy  extra");
        assert_eq!(Table::default().to_string(), "");
    }

    #[test]
    fn csv_quotes_commas_quotes_and_newlines() {
        let mut t = Table::with_headers(["name", "note"]);
        t.push_row(["a,b", "say \"hi\""]);
        t.push_row(["line\nbreak", " padded"]);
        t.push_row(["plain"]);
        assert_eq!(
            t.to_csv(),
            "name,note\n\"a,b\",\"say \"\"hi\"\"\"\n\"line\nbreak\",\" padded\"\nplain,\n"
        );
    }

    #[test]
    fn write_csv_is_atomic_and_complete() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        sample().write_csv(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), sample().to_csv());
        crate::util::atomic::assert_only_file(&path);
    }
}
