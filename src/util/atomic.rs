//! Crash-safe file writing for the whole crate: a file is written under a
//! hidden temporary name next to its target, synced to disk and only then
//! renamed onto the target (and the directory synced), so readers never see
//! a half-written file and a crash leaves either the old file or the new one.
//!
//! Three ways in: [`write_atomic`] for bytes in memory, [`write_atomic_with`]
//! for writers that want a path (image encoders), and [`AtomicFile`] for
//! streaming writes, committed or removed on drop. [`replace_dir`] does the
//! same for a whole directory staged next to its target.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The step of an atomic write that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicStep {
    /// Creating the directory of the target.
    CreateDirectory,
    /// Creating the temporary file.
    CreateTemporary,
    /// Writing the contents.
    Write,
    /// Giving the written file the mode of a newly created one.
    Permissions,
    /// Syncing the temporary file (or a staged directory's files) to disk.
    Sync,
    /// Refusing to replace a target that exists ([`AtomicFile::commit_new`]).
    Exists,
    /// Renaming the temporary file (or directory) onto the target.
    Rename,
    /// Syncing the directory that holds the target.
    SyncDirectory,
    /// Removing the previous directory after [`replace_dir`].
    RemoveOld,
}

impl AtomicStep {
    /// The step as a verb phrase about the target, e.g. "write".
    pub fn as_str(self) -> &'static str {
        match self {
            AtomicStep::CreateDirectory => "create the directory for",
            AtomicStep::CreateTemporary => "create the temporary file for",
            AtomicStep::Write => "write",
            AtomicStep::Permissions => "set the permissions of",
            AtomicStep::Sync => "sync",
            AtomicStep::Exists => "replace (it exists)",
            AtomicStep::Rename => "rename the temporary file onto",
            AtomicStep::SyncDirectory => "sync the directory of",
            AtomicStep::RemoveOld => "remove the previous version of",
        }
    }
}

impl std::fmt::Display for AtomicStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an atomic write failed: the target path, the step, and the I/O error.
#[derive(Debug, thiserror::Error)]
#[error("cannot {step} `{}`", path.display())]
pub struct AtomicWriteError {
    /// The file (or directory) being written.
    pub path: PathBuf,
    /// What was being done.
    pub step: AtomicStep,
    /// The underlying I/O error.
    #[source]
    pub source: io::Error,
}

impl AtomicWriteError {
    fn new(path: &Path, step: AtomicStep, source: io::Error) -> Self {
        AtomicWriteError {
            path: path.to_path_buf(),
            step,
            source,
        }
    }

    /// A closure for `map_err` that names `path` and `step`.
    fn at(path: &Path, step: AtomicStep) -> impl FnOnce(io::Error) -> Self + '_ {
        move |source| AtomicWriteError::new(path, step, source)
    }
}

/// How the temporary file next to a target is named.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TempName {
    /// `.NAME.plies-tmp-PID-N.EXT`: unique per process and write, so
    /// concurrent writers of one target never share a temporary file; it
    /// keeps the target's extension for writers that pick a format by it,
    /// and names its writer, so that the leftovers of a killed one can be
    /// told from files in progress ([`remove_stale_temps`]).
    #[default]
    Unique,
    /// `.NAME.tmp`: one fixed name, for directories with a single writer
    /// that recognise (and clean up) their own leftovers by name.
    Fixed,
}

impl TempName {
    /// The temporary path for `target` (in the same directory).
    pub fn path_for(self, target: &Path) -> Result<PathBuf, AtomicWriteError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = target.file_name().ok_or_else(|| {
            AtomicWriteError::new(
                target,
                AtomicStep::CreateTemporary,
                io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"),
            )
        })?;
        let mut tmp = OsString::from(".");
        tmp.push(name);
        match self {
            TempName::Unique => {
                let n = COUNTER.fetch_add(1, Ordering::Relaxed);
                tmp.push(format!("{UNIQUE_MARK}{}-{n}", std::process::id()));
                if let Some(ext) = target.extension() {
                    tmp.push(".");
                    tmp.push(ext);
                }
            }
            TempName::Fixed => tmp.push(".tmp"),
        }
        Ok(parent_of(target).join(tmp))
    }
}

/// What follows the target's name in a [`TempName::Unique`] name.
const UNIQUE_MARK: &str = ".plies-tmp-";
/// The same in the names that earlier versions wrote, still recognised so
/// that their leftovers are cleaned up too.
const LEGACY_UNIQUE_MARK: &str = ".tmp-";

/// A temporary file left this long by a writer whose liveness cannot be
/// checked (no `/proc`) counts as abandoned: far longer than any one write.
const STALE_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// The target file name a temporary file name stands for, in either
/// [`TempName`] form (`.part-1.jsonl.plies-tmp-12-3.jsonl` and
/// `.part-1.jsonl.tmp` both give `part-1.jsonl`); `None` for any other name.
pub fn temp_target(name: &str) -> Option<&str> {
    let target = match name.strip_prefix('.')?.strip_suffix(".tmp") {
        Some(target) => target,
        None => unique_temp_owner(name)?.0,
    };
    (!target.is_empty()).then_some(target)
}

/// The target and the writer's PID of a [`TempName::Unique`] name.
fn unique_temp_owner(name: &str) -> Option<(&str, u32)> {
    let rest = name.strip_prefix('.')?;
    let (target, owner) = rest
        .split_once(UNIQUE_MARK)
        .or_else(|| rest.split_once(LEGACY_UNIQUE_MARK))?;
    let pid = owner.split_once('-')?.0.parse().ok()?;
    Some((target, pid))
}

/// Whether the writer `pid` of a temporary file is gone: by `/proc` where
/// there is one, else by the file's age.
fn writer_is_gone(pid: u32, file: &fs::DirEntry) -> bool {
    let proc = Path::new("/proc");
    if proc.join("self").exists() {
        return !proc.join(pid.to_string()).exists();
    }
    file.metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_AGE)
}

/// Removes the [`TempName::Unique`] temporary files of `target` whose
/// writers are no longer running (a killed import's half-written output),
/// never this process's own. Returns how many were removed. Best effort: a
/// file that cannot be listed or removed is left, since the write that
/// follows does not depend on it.
pub fn remove_stale_temps(target: &Path) -> usize {
    let (Some(name), Ok(entries)) = (
        target.file_name().and_then(|n| n.to_str()),
        fs::read_dir(parent_of(target)),
    ) else {
        return 0;
    };
    let own = std::process::id();
    let mut removed = 0;
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some((of, pid)) = file_name.to_str().and_then(unique_temp_owner) else {
            continue;
        };
        if of == name
            && pid != own
            && entry.file_type().is_ok_and(|t| t.is_file())
            && writer_is_gone(pid, &entry)
            && fs::remove_file(entry.path()).is_ok()
        {
            removed += 1;
        }
    }
    removed
}

/// The directory holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Creates the directory of `target` if it is missing.
fn create_parent(target: &Path) -> Result<(), AtomicWriteError> {
    fs::create_dir_all(parent_of(target))
        .map_err(AtomicWriteError::at(target, AtomicStep::CreateDirectory))
}

/// Makes the entries of `dir` (creations, renames, removals) durable. File
/// systems that cannot sync a directory (`EINVAL`) count as done; elsewhere
/// than Unix this does nothing.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    match File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if e.kind() != io::ErrorKind::InvalidInput => return Err(e),
        _ => {}
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// Renames the synced temporary `tmp` onto `target` and syncs the directory.
fn rename_into_place(tmp: &Path, target: &Path) -> Result<(), AtomicWriteError> {
    fs::rename(tmp, target).map_err(AtomicWriteError::at(target, AtomicStep::Rename))?;
    sync_dir(parent_of(target)).map_err(AtomicWriteError::at(target, AtomicStep::SyncDirectory))
}

/// Writes `contents` to `path` atomically (a [`TempName::Unique`] temporary
/// file), creating missing parent directories. On failure the temporary file
/// is removed and the old `path`, if any, is untouched.
pub fn write_atomic(path: impl AsRef<Path>, contents: &[u8]) -> Result<(), AtomicWriteError> {
    write_atomic_named(path.as_ref(), TempName::Unique, contents)
}

/// [`write_atomic`] with the temporary file named as `name` says.
pub fn write_atomic_named(
    path: &Path,
    name: TempName,
    contents: &[u8],
) -> Result<(), AtomicWriteError> {
    let mut file = AtomicFile::create_named(path, name)?;
    file.write_all(contents)
        .map_err(AtomicWriteError::at(path, AtomicStep::Write))?;
    file.commit()
}

/// Runs `write` with a temporary path in the directory of `path` (a
/// [`TempName::Unique`] name, with the same extension, so extension-sniffing
/// encoders pick the right format), then syncs the file `write` left there
/// and renames it onto `path`. Missing parent directories are created. The
/// file ends with the mode `File::create` gives, whatever `write` did.
///
/// If `write` fails, or syncing or renaming does, the temporary file is
/// removed.
pub fn write_atomic_with<E: From<AtomicWriteError>>(
    path: &Path,
    write: impl FnOnce(&Path) -> Result<(), E>,
) -> Result<(), E> {
    create_parent(path)?;
    remove_stale_temps(path);
    let tmp = TempGuard(TempName::Unique.path_for(path)?);
    // Created here only to learn the mode a new file gets (0666 less the
    // umask): `write` may replace it with a file of another mode, as
    // libraries that stage through a private 0600 temporary file do.
    let mode = File::create(&tmp.0)
        .and_then(|f| f.metadata())
        .map_err(AtomicWriteError::at(path, AtomicStep::CreateTemporary))?
        .permissions();
    write(&tmp.0)?;
    fs::set_permissions(&tmp.0, mode)
        .map_err(AtomicWriteError::at(path, AtomicStep::Permissions))?;
    File::open(&tmp.0)
        .and_then(|f| f.sync_all())
        .map_err(AtomicWriteError::at(path, AtomicStep::Sync))?;
    rename_into_place(&tmp.0, path)?;
    std::mem::forget(tmp);
    Ok(())
}

/// Removes its temporary file when dropped (on every early return).
struct TempGuard(PathBuf);

impl Drop for TempGuard {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// A file being written atomically: writes go to the temporary file, which
/// [`commit`](Self::commit) syncs and renames onto the target. Dropped
/// without a successful commit, it removes the temporary file, leaving the
/// target as it was.
///
/// Unbuffered, like [`File`]: wrap it in a [`std::io::BufWriter`] for many
/// small writes.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Starts writing `target` through a [`TempName::Unique`] temporary
    /// file, creating missing parent directories.
    pub fn create(target: impl AsRef<Path>) -> Result<AtomicFile, AtomicWriteError> {
        AtomicFile::create_named(target.as_ref(), TempName::Unique)
    }

    /// Starts writing `target` through a temporary file named as `name`
    /// says (a stale one of that name is truncated; stale
    /// [`TempName::Unique`] ones of dead writers are removed).
    pub fn create_named(target: &Path, name: TempName) -> Result<AtomicFile, AtomicWriteError> {
        create_parent(target)?;
        if name == TempName::Unique {
            remove_stale_temps(target);
        }
        let tmp = name.path_for(target)?;
        let file = File::create(&tmp)
            .map_err(AtomicWriteError::at(target, AtomicStep::CreateTemporary))?;
        Ok(AtomicFile {
            target: target.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// The file this one will replace.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Where the data goes until the commit.
    pub fn temp_path(&self) -> &Path {
        &self.tmp
    }

    fn file(&mut self) -> &mut File {
        self.file
            .as_mut()
            .expect("an AtomicFile is open until commit")
    }

    /// Syncs the temporary file and renames it onto the target, replacing
    /// any file there.
    pub fn commit(self) -> Result<(), AtomicWriteError> {
        self.commit_inner(false)
    }

    /// Like [`commit`](Self::commit), but refuses (removing the temporary
    /// file) when the target exists by then.
    pub fn commit_new(self) -> Result<(), AtomicWriteError> {
        self.commit_inner(true)
    }

    fn commit_inner(mut self, refuse_existing: bool) -> Result<(), AtomicWriteError> {
        let file = self
            .file
            .take()
            .expect("an AtomicFile is open until commit");
        file.sync_all()
            .map_err(AtomicWriteError::at(&self.target, AtomicStep::Sync))?;
        drop(file);
        if refuse_existing && self.target.exists() {
            return Err(AtomicWriteError::new(
                &self.target,
                AtomicStep::Exists,
                io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    "already exists; refusing to overwrite it",
                ),
            ));
        }
        rename_into_place(&self.tmp, &self.target)?;
        // Renamed: nothing left for `drop` to remove.
        self.tmp = PathBuf::new();
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        drop(self.file.take());
        if !self.tmp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Moves the complete directory `staged` onto `target`, replacing the
/// directory there: the files directly in `staged` are synced, a previous
/// `target` is renamed to `old` (a stale `old` is removed first), `staged`
/// renamed to `target`, and `old` removed last, so at every moment `target`
/// or `old` holds a complete directory.
pub fn replace_dir(staged: &Path, target: &Path, old: &Path) -> Result<(), AtomicWriteError> {
    let sync = AtomicWriteError::at(target, AtomicStep::Sync);
    let entries = fs::read_dir(staged).map_err(sync)?;
    for entry in entries {
        let path = entry
            .map_err(AtomicWriteError::at(target, AtomicStep::Sync))?
            .path();
        if path.is_file() {
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(AtomicWriteError::at(target, AtomicStep::Sync))?;
        }
    }
    let remove_old = || {
        if old.exists() {
            fs::remove_dir_all(old).map_err(AtomicWriteError::at(target, AtomicStep::RemoveOld))?;
        }
        Ok::<(), AtomicWriteError>(())
    };
    remove_old()?;
    if target.exists() {
        fs::rename(target, old).map_err(AtomicWriteError::at(target, AtomicStep::Rename))?;
    }
    rename_into_place(staged, target)?;
    remove_old()
}

/// The names of the files in `dir`, sorted. Tests of atomic writes check
/// with it that no temporary file is left behind.
#[cfg(test)]
pub(crate) fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Asserts that `path` is the only file in its directory: a write left no
/// temporary file beside it.
#[cfg(test)]
pub(crate) fn assert_only_file(path: &Path) {
    let name = path.file_name().unwrap().to_string_lossy();
    assert_eq!(file_names(path.parent().unwrap()), vec![name]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `path` holds `text`, alone in its directory.
    fn assert_alone_with(path: &Path, text: &str) {
        assert_eq!(fs::read_to_string(path).unwrap(), text);
        assert_only_file(path);
    }

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("out.txt");
        write_atomic(&path, b"first").unwrap();
        write_atomic(&path, b"second").unwrap();
        assert_alone_with(&path, "second");
        write_atomic_named(&path, TempName::Fixed, b"third").unwrap();
        assert_alone_with(&path, "third");
    }

    #[test]
    fn failed_closure_removes_temp_file_and_keeps_old() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keep.txt");
        write_atomic(&path, b"old").unwrap();
        let err = write_atomic_with(&path, |tmp| {
            fs::write(tmp, b"partial").unwrap();
            Err(AtomicWriteError::new(
                tmp,
                AtomicStep::Write,
                io::Error::other("boom"),
            ))
        })
        .unwrap_err();
        assert_eq!(err.step, AtomicStep::Write);
        assert_alone_with(&path, "old");
    }

    #[test]
    fn streaming_file_commits_or_vanishes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("games.jsonl");
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"half").unwrap();
        assert!(f.temp_path().exists() && !path.exists());
        drop(f);
        assert!(file_names(dir.path()).is_empty());

        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"whole").unwrap();
        f.commit().unwrap();
        assert_alone_with(&path, "whole");

        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"again").unwrap();
        let err = f.commit_new().unwrap_err();
        assert_eq!(err.step, AtomicStep::Exists);
        assert_eq!(err.path, path);
        assert!(err.to_string().contains("games.jsonl"), "{err}");
        assert_alone_with(&path, "whole");
    }

    #[test]
    fn temp_names_keep_directory_and_extension_and_parse_back() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("chart.png");
        let unique = TempName::Unique.path_for(&target).unwrap();
        assert_eq!(unique.parent().unwrap(), dir.path());
        assert_eq!(unique.extension().unwrap(), "png");
        let name = unique.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".chart.png.plies-tmp-"), "{name}");
        assert_eq!(temp_target(name), Some("chart.png"));
        let fixed = TempName::Fixed.path_for(&target).unwrap();
        assert_eq!(fixed, dir.path().join(".chart.png.tmp"));
        assert_eq!(temp_target(".chart.png.tmp"), Some("chart.png"));
        assert_eq!(temp_target(".chart.png.tmp-12-3.png"), Some("chart.png"));
        assert_eq!(temp_target("chart.png"), None);
        assert_eq!(temp_target(".chart.png"), None);
        assert_eq!(
            TempName::Unique.path_for(Path::new("x")).unwrap().parent(),
            Some(Path::new("."))
        );
    }

    #[test]
    fn stale_temp_files_of_dead_writers_are_removed_before_writing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("games.jsonl");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let own = std::process::id();
        let files = [
            format!(".games.jsonl.plies-tmp-{dead}-0.jsonl"),
            format!(".games.jsonl.tmp-{dead}-1.jsonl"),
            format!(".games.jsonl.plies-tmp-{own}-7.jsonl"),
            format!(".other.jsonl.plies-tmp-{dead}-0.jsonl"),
            ".games.jsonl.tmp".to_string(),
        ];
        for f in &files {
            fs::write(dir.path().join(f), "x").unwrap();
        }
        write_atomic(&target, b"whole").unwrap();
        let mut kept = files[2..].to_vec();
        kept.push("games.jsonl".into());
        kept.sort();
        assert_eq!(file_names(dir.path()), kept);
        assert_eq!(unique_temp_owner(&files[0]), Some(("games.jsonl", dead)));
        assert_eq!(unique_temp_owner(".games.jsonl.tmp"), None);
    }

    #[test]
    fn path_without_file_name_is_an_error() {
        let err = write_atomic("/", b"x").unwrap_err();
        assert_eq!(err.step, AtomicStep::CreateTemporary);
    }

    #[test]
    fn replace_dir_swaps_whole_directories() {
        let dir = tempfile::tempdir().unwrap();
        let (staged, target, old) = (
            dir.path().join(".ckpt.tmp"),
            dir.path().join("ckpt"),
            dir.path().join(".ckpt.old"),
        );
        for contents in ["one", "two"] {
            fs::create_dir(&staged).unwrap();
            fs::write(staged.join("a.txt"), contents).unwrap();
            replace_dir(&staged, &target, &old).unwrap();
            assert_eq!(fs::read_to_string(target.join("a.txt")).unwrap(), contents);
            assert_eq!(file_names(dir.path()), vec!["ckpt"]);
        }
    }
}
