//! Replacing a whole directory so that a complete version is at its path at
//! every instant: the new version is staged beside it, then swapped in.
//!
//! On Linux the swap is one `renameat2(RENAME_EXCHANGE)`: the path never
//! stops naming a complete directory, and the old version ends up at the
//! staging path, removed afterwards. Where that call is missing (other
//! systems, some file systems) the old version is renamed to `.NAME.plies-old`
//! first; a kill between the two renames leaves it there, and [`recover`]
//! puts it back.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use super::atomic::{sync_dir, AtomicStep, AtomicWriteError};

/// The parent directory and file name of `dir` (made absolute first when
/// the name alone does not say, e.g. `.`).
pub fn parent_and_name(dir: &Path) -> io::Result<(PathBuf, String)> {
    let plain = |p: &Path| -> Option<(PathBuf, String)> {
        let name = p.file_name()?.to_str()?.to_string();
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Some((parent, name))
    };
    if let Some(found) = plain(dir) {
        return Ok(found);
    }
    let abs = fs::canonicalize(dir)?;
    plain(&abs).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: a directory with no name", dir.display()),
        )
    })
}

fn sibling(dir: &Path, suffix: &str) -> io::Result<PathBuf> {
    let (parent, name) = parent_and_name(dir)?;
    Ok(parent.join(format!(".{name}{suffix}")))
}

/// Where a new version of `dir` is staged: `.NAME.plies-staging` beside it.
pub fn staging_path(dir: &Path) -> io::Result<PathBuf> {
    sibling(dir, ".plies-staging")
}

/// Where the old version of `dir` waits while a new one goes in:
/// `.NAME.plies-old` beside it.
pub fn old_path(dir: &Path) -> io::Result<PathBuf> {
    sibling(dir, ".plies-old")
}

fn err(path: &Path, step: AtomicStep) -> impl FnOnce(io::Error) -> AtomicWriteError + '_ {
    move |source| AtomicWriteError {
        path: path.to_path_buf(),
        step,
        source,
    }
}

/// Swaps the directories `a` and `b` in one step; `Ok(false)` where the
/// system or file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        CString::new(p.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: both are valid NUL-terminated paths that outlive the call.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::ENOTSUP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// Syncs the files directly in `dir` and `dir` itself.
fn sync_tree(dir: &Path, target: &Path) -> Result<(), AtomicWriteError> {
    for entry in fs::read_dir(dir).map_err(err(target, AtomicStep::Sync))? {
        let path = entry.map_err(err(target, AtomicStep::Sync))?.path();
        if path.is_file() {
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(err(target, AtomicStep::Sync))?;
        }
    }
    sync_dir(dir).map_err(err(target, AtomicStep::Sync))
}

/// Moves the complete directory `staged` onto `target`, replacing what is
/// there (see the module docs); the old version is removed last.
pub fn swap_in(staged: &Path, target: &Path) -> Result<(), AtomicWriteError> {
    sync_tree(staged, target)?;
    let parent = parent_and_name(target)
        .map_err(err(target, AtomicStep::Rename))?
        .0;
    let synced = |r: Result<(), AtomicWriteError>| {
        r?;
        sync_dir(&parent).map_err(err(target, AtomicStep::SyncDirectory))
    };
    if !target.exists() {
        return synced(fs::rename(staged, target).map_err(err(target, AtomicStep::Rename)));
    }
    if exchange(staged, target).map_err(err(target, AtomicStep::Rename))? {
        synced(Ok(()))?;
        // `staged` now holds the old version.
        return fs::remove_dir_all(staged).map_err(err(target, AtomicStep::RemoveOld));
    }
    let old = old_path(target).map_err(err(target, AtomicStep::Rename))?;
    remove_if_there(&old).map_err(err(target, AtomicStep::RemoveOld))?;
    fs::rename(target, &old).map_err(err(target, AtomicStep::Rename))?;
    synced(fs::rename(staged, target).map_err(err(target, AtomicStep::Rename)))?;
    fs::remove_dir_all(&old).map_err(err(target, AtomicStep::RemoveOld))
}

/// Removes the directory `path` if it exists.
pub fn remove_if_there(path: &Path) -> io::Result<()> {
    match fs::remove_dir_all(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Cleans up what an interrupted [`swap_in`] of `target` left: puts the old
/// version back when a kill came between the renames, and removes the
/// staging and old directories. Call it holding `target`'s lock.
pub fn recover(target: &Path) -> Result<(), AtomicWriteError> {
    let step = AtomicStep::RemoveOld;
    let old = old_path(target).map_err(err(target, step))?;
    if !target.exists() && old.is_dir() {
        fs::rename(&old, target).map_err(err(target, AtomicStep::Rename))?;
    }
    remove_if_there(&old).map_err(err(target, step))?;
    remove_if_there(&staging_path(target).map_err(err(target, step))?).map_err(err(target, step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swap_in_replaces_whole_directories_and_recover_restores_the_old_one() {
        let (dir, target) = crate::util::scratch("ds");
        let staged = staging_path(&target).unwrap();
        assert_eq!(staged, dir.path().join(".ds.plies-staging"));
        for contents in ["one", "two"] {
            fs::create_dir(&staged).unwrap();
            fs::write(staged.join("a.txt"), contents).unwrap();
            swap_in(&staged, &target).unwrap();
            assert_eq!(fs::read_to_string(target.join("a.txt")).unwrap(), contents);
            assert_eq!(crate::util::atomic::file_names(dir.path()), vec!["ds"]);
        }
        // Killed between the two renames of the fallback.
        let old = old_path(&target).unwrap();
        fs::rename(&target, &old).unwrap();
        fs::create_dir(&staged).unwrap();
        recover(&target).unwrap();
        assert_eq!(fs::read_to_string(target.join("a.txt")).unwrap(), "two");
        assert_eq!(crate::util::atomic::file_names(dir.path()), vec!["ds"]);
        let (_, name) = parent_and_name(Path::new(".")).unwrap();
        assert!(!name.is_empty() && name != ".");
    }
}
