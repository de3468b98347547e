//! One writer per output directory: an advisory lock on a file beside the
//! directory (`.NAME.plies.lock`, holding the writer's PID and command).
//!
//! The lock lives beside the directory, not in it, so it stays put while
//! the directory itself is swapped for a new version. The kernel drops the
//! lock when its holder dies, so a killed writer never blocks the next one;
//! the file it leaves is taken over.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// Why an output directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live process writes the directory.
    #[error(
        "{}: another writer holds it (pid {pid}: {command}); wait for it to finish or stop it",
        dir.display()
    )]
    Held {
        dir: PathBuf,
        /// The holder's process id, as it wrote it.
        pid: String,
        /// The holder's command line, as it wrote it.
        command: String,
    },
    /// Creating, reading or writing the lock file failed.
    #[error("{}: cannot lock it for writing: {source}", lock.display())]
    Io {
        lock: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// An exclusive lock on an output directory, released (and its file
/// removed) on drop.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
}

/// The lock file of `dir`: `.NAME.plies.lock` in its parent.
pub fn lock_path(dir: &Path) -> io::Result<PathBuf> {
    let (parent, name) = super::replace::parent_and_name(dir)?;
    Ok(parent.join(format!(".{name}.plies.lock")))
}

impl DirLock {
    /// Locks `dir` for this process, or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock, LockError> {
        let lock = lock_path(dir).map_err(|source| LockError::Io {
            lock: dir.to_path_buf(),
            source,
        })?;
        let io = |source| LockError::Io {
            lock: lock.clone(),
            source,
        };
        if let Some(parent) = lock.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&lock)
                .map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    file.read_to_string(&mut text).map_err(io)?;
                    let mut lines = text.lines();
                    let pid = lines.next().unwrap_or("unknown").to_string();
                    let command = lines.next().unwrap_or("unknown").to_string();
                    return Err(LockError::Held {
                        dir: dir.to_path_buf(),
                        pid,
                        command,
                    });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
            // A holder that was releasing may have removed the file after
            // we opened it: then the lock is on a file nobody else sees.
            if !same_file(&file, &lock) {
                continue;
            }
            let command: Vec<String> = std::env::args().collect();
            file.set_len(0).map_err(io)?;
            file.rewind().map_err(io)?;
            writeln!(file, "{}\n{}", std::process::id(), command.join(" ")).map_err(io)?;
            return Ok(DirLock { file, path: lock });
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Removed while still held, so no other writer can hold this file.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_and_freed_on_drop() {
        let (dir, out) = crate::util::scratch("out");
        let lock = DirLock::acquire(&out).unwrap();
        assert_eq!(lock.path(), dir.path().join(".out.plies.lock"));
        let err = DirLock::acquire(&out).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains(&format!("pid {}", std::process::id())),
            "{msg}"
        );
        drop(lock);
        assert!(!dir.path().join(".out.plies.lock").exists());
        // A file left by a killed holder is taken over.
        std::fs::write(dir.path().join(".out.plies.lock"), "999999\ngone\n").unwrap();
        let again = DirLock::acquire(&out).unwrap();
        let text = std::fs::read_to_string(again.path()).unwrap();
        assert!(
            text.starts_with(&format!("{}\n", std::process::id())),
            "{text}"
        );
    }
}
