//! Reports: aligned text tables, CSV, JSON and line charts (PNG/SVG) for
//! experiment results.
//!
//! Every writer is atomic: it writes a hidden temporary file in the target's
//! directory and renames it into place, so a reader (or a crash) never sees a
//! half-written file. Missing parent directories are created. Failures come
//! back as [`ReportError`], which names the output path.
//!
//! Chart text uses DejaVu Sans, embedded in the binary, so charts render the
//! same on machines without system fonts.
//!
//! # Example
//!
//! ```no_run
//! use plies::report::{write_json, LineChart, Table};
//!
//! # fn main() -> Result<(), plies::report::ReportError> {
//! let mut table = Table::with_headers(["player", "games", "win rate"]);
//! table.push_row(["mlp", "200", "0.62"]);
//! table.push_row(["alpha-beta d2", "200", "0.38"]);
//! println!("{table}");
//! table.write_csv("runs/demo/results.csv")?;
//!
//! let chart = LineChart::new("Win rate during training", "step", "win rate")
//!     .with_series("mlp", [(0.0, 0.21), (1000.0, 0.35), (2000.0, 0.62)])
//!     .with_reference_line("thesis 0.30", 0.30)
//!     .with_y_range(0.0, 1.0);
//! chart.write_png("runs/demo/win_rate.png")?;
//! chart.write_svg("runs/demo/win_rate.svg")?;
//!
//! write_json("runs/demo/table.json", &table)?;
//! # Ok(())
//! # }
//! ```

mod error;
pub(crate) mod font;
mod heatmap;
mod plot;
mod table;

use std::path::Path;

use serde::Serialize;

pub use crate::util::atomic::write_atomic;
pub use error::{DrawError, ReportError};
pub use heatmap::{Heatmap, Heatmaps};
pub(crate) use plot::render_to;
pub use plot::{LineChart, Series, CHART_SIZE};
pub use table::Table;

/// Writes `value` as pretty-printed JSON (with a trailing newline) to `path`,
/// atomically, creating missing parent directories.
pub fn write_json<T: Serialize + ?Sized>(
    path: impl AsRef<Path>,
    value: &T,
) -> Result<(), ReportError> {
    let path = path.as_ref();
    let mut text = serde_json::to_string_pretty(value).map_err(|source| ReportError::Json {
        path: path.to_path_buf(),
        source,
    })?;
    text.push('\n');
    Ok(write_atomic(path, text.as_bytes())?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn write_json_is_pretty_and_atomic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("metrics.json");
        let mut m = BTreeMap::new();
        m.insert("win_rate", 0.5);
        m.insert("games", 10.0);
        write_json(&path, &m).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\n  \"games\": 10.0,\n  \"win_rate\": 0.5\n}\n");
        crate::util::atomic::assert_only_file(&path);
    }

    #[test]
    fn write_json_reports_serialisation_errors_with_path() {
        // Maps with non-string keys cannot be JSON objects.
        let mut m = BTreeMap::new();
        m.insert((1, 2), 3);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        let err = write_json(&path, &m).unwrap_err();
        assert!(matches!(err, ReportError::Json { .. }), "{err:?}");
        assert!(err.to_string().contains("bad.json"));
        assert!(!path.exists());
    }

    #[test]
    fn table_and_chart_round_trip_through_json() {
        let dir = tempfile::tempdir().unwrap();
        let mut t = Table::with_headers(["a"]);
        t.push_row([1]);
        let chart = LineChart::new("t", "x", "y").with_series("s", [(0.0, 1.0)]);
        write_json(dir.path().join("t.json"), &t).unwrap();
        write_json(dir.path().join("c.json"), &chart).unwrap();
        let t2: Table =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("t.json")).unwrap())
                .unwrap();
        let c2: LineChart =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("c.json")).unwrap())
                .unwrap();
        assert_eq!(t2, t);
        assert_eq!(c2, chart);
    }
}
