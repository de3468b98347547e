//! Cells and files the benchmark reports share.

use std::fmt;
use std::path::Path;

use super::Result;

/// A benchmark's result: its text table (`Display`) and its JSON.
pub trait Report: fmt::Display {
    /// What `--json` prints.
    fn json(&self) -> serde_json::Result<String>;
}

/// A number with `prec` decimals, or `-` where there is none.
pub fn num(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.prec$}"))
}

/// `a / b` where both are there.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    a.zip(b).map(|(a, b)| a / b)
}

/// A byte count in MiB, or `-` where it is unknown.
pub fn mib(bytes: Option<u64>) -> String {
    bytes.map_or("-".into(), |b| {
        format!("{:.0} MiB", b as f64 / (1 << 20) as f64)
    })
}

/// Writes a report's CSV text to `path`, atomically.
pub fn write_csv(path: &Path, text: &str) -> Result<()> {
    Ok(crate::util::write_atomic(path, text.as_bytes())?)
}
