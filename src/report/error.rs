//! The error type shared by every writer in [`crate::report`].

use std::io;
use std::path::PathBuf;

/// Why writing a report artefact failed. Every variant names the output path.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A filesystem operation (create, write, sync, rename, ...) failed.
    #[error("cannot {action} `{}`", path.display())]
    Io {
        /// The output file the operation was for.
        path: PathBuf,
        /// What was being done, e.g. "create directory for" or "write".
        action: &'static str,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// A value could not be serialised to JSON.
    #[error("cannot serialise JSON for `{}`", path.display())]
    Json {
        /// The output file.
        path: PathBuf,
        /// The underlying serde_json error.
        #[source]
        source: serde_json::Error,
    },
    /// The chart description cannot be drawn (no series, empty series,
    /// non-finite values, an empty axis range, ...).
    #[error("invalid chart for `{}`: {reason}", path.display())]
    InvalidChart {
        /// The output file.
        path: PathBuf,
        /// What is wrong with the chart.
        reason: String,
    },
    /// The plotting backend failed while drawing or encoding the image.
    #[error("cannot render chart to `{}`: {source}", path.display())]
    Render {
        /// The output file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: DrawError,
    },
}

/// Why drawing a chart failed.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    /// The embedded font could not be registered with plotters.
    #[error("the embedded DejaVu Sans font could not be loaded")]
    Font,
    /// The drawing backend failed. Its error type differs per backend
    /// (bitmap, SVG), so only its message is kept.
    #[error("{0}")]
    Backend(String),
}

impl<E: std::error::Error + Send + Sync> From<plotters::drawing::DrawingAreaErrorKind<E>>
    for DrawError
{
    fn from(e: plotters::drawing::DrawingAreaErrorKind<E>) -> Self {
        DrawError::Backend(e.to_string())
    }
}

/// A failed atomic write is an I/O error about its target.
impl From<crate::util::AtomicWriteError> for ReportError {
    fn from(e: crate::util::AtomicWriteError) -> Self {
        ReportError::Io {
            path: e.path,
            action: e.step.as_str(),
            source: e.source,
        }
    }
}

impl ReportError {
    /// The output path this error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            ReportError::Io { path, .. }
            | ReportError::Json { path, .. }
            | ReportError::InvalidChart { path, .. }
            | ReportError::Render { path, .. } => path,
        }
    }
}
