//! Atomic file writes: write a temporary file next to the target, flush it to
//! disk, then rename it over the target, so readers never see a half-written
//! report and a crash leaves either the old file or the new one.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::ReportError;

/// Writes `contents` to `path` atomically, creating missing parent
/// directories.
///
/// The bytes go to a hidden temporary file in the same directory, which is
/// synced and then renamed onto `path`; on failure the temporary file is
/// removed.
pub fn write_atomic(path: impl AsRef<Path>, contents: &[u8]) -> Result<(), ReportError> {
    let path = path.as_ref();
    write_atomic_with(path, |tmp| {
        let mut file = fs::File::create(tmp).map_err(|e| ReportError::io(path, "create", e))?;
        file.write_all(contents)
            .map_err(|e| ReportError::io(path, "write", e))?;
        Ok(())
    })
}

/// Runs `write` with a temporary path in the directory of `path` (with the
/// same extension, so extension-sniffing encoders pick the right format),
/// then syncs and renames the temporary file onto `path`.
///
/// If `write` fails, or the rename fails, the temporary file is removed.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let tmp = temp_path_for(path)?;
    let result = write(&tmp).and_then(|()| {
        // Flush the data before the rename makes it visible.
        fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| ReportError::io(path, "sync", e))?;
        fs::rename(&tmp, path).map_err(|e| ReportError::io(path, "rename temporary file onto", e))
    });
    match result {
        Ok(()) => {
            sync_parent(path);
            Ok(())
        }
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Picks a fresh hidden temporary path next to `path`, creating the parent
/// directory if needed: `dir/.NAME.tmp-PID-N.EXT`.
fn temp_path_for(path: &Path) -> Result<PathBuf, ReportError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);

    let name = path.file_name().ok_or_else(|| {
        ReportError::io(
            path,
            "write",
            io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"),
        )
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| ReportError::io(path, "create directory for", e))?;

    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".tmp-{}-{n}", std::process::id()));
    if let Some(ext) = path.extension() {
        tmp_name.push(".");
        tmp_name.push(ext);
    }
    Ok(dir.join(tmp_name))
}

/// Best effort: make the rename itself durable (Unix only; ignored elsewhere).
fn sync_parent(path: &Path) {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("out.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "second");
        assert_eq!(dir_entries(path.parent().unwrap()), vec!["out.txt"]);
    }

    #[test]
    fn failed_write_removes_temp_file_and_keeps_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keep.txt");
        write_atomic(&path, b"old").unwrap();
        let err = write_atomic_with(&path, |tmp| {
            fs::write(tmp, b"partial").unwrap();
            Err(ReportError::Render {
                path: path.clone(),
                message: "boom".into(),
            })
        })
        .unwrap_err();
        assert_eq!(err.path(), path);
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(dir_entries(dir.path()), vec!["keep.txt"]);
    }

    #[test]
    fn temp_path_keeps_extension_and_directory() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = temp_path_for(&dir.path().join("chart.png")).unwrap();
        assert_eq!(tmp.parent().unwrap(), dir.path());
        assert_eq!(tmp.extension().unwrap(), "png");
        assert!(tmp
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".chart.png.tmp-"));
    }

    #[test]
    fn path_without_file_name_is_an_error() {
        let err = write_atomic("/", b"x").unwrap_err();
        assert!(matches!(err, ReportError::Io { .. }), "{err:?}");
    }
}
