//! The output folder of a resumable job (`plies train`, `train mdp`,
//! `grid`, `loop`, `selfplay`, `tune`, `evolve`, `coevolve` and the
//! `experiment`s): what each of them does with it, in one place.
//!
//! - [`RunDir::claim`] locks the folder for this process ([`DirLock`]), so
//!   two writers never interleave; the lock is held while the `RunDir` is.
//! - [`check_fingerprint`] stores the job's arguments in the folder on the
//!   first start and, on every later one, refuses arguments that differ,
//!   naming the first differing field and both values ([`first_difference`]).
//!   A matching file is how a job knows it resumes.
//! - [`RunDir::staging_path`] and [`RunDir::publish`]: a replacement is
//!   built beside the folder and swapped in whole ([`replace::swap_in`]), so
//!   readers see the old version or the new one, never a mix;
//!   [`RunDir::recover_interrupted_swap`] settles a swap cut short by a kill.

use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::atomic::{write_atomic, AtomicWriteError};
use super::lock::{DirLock, LockError};
use super::replace;

/// Why a job's output folder could not be claimed, checked or swapped.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    /// Another live process writes the folder.
    #[error(transparent)]
    Locked(#[from] LockError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The stored fingerprint is not JSON.
    #[error("{path}: {why}")]
    Unreadable { path: PathBuf, why: String },
    /// The stored fingerprint differs from the given arguments.
    #[error(
        "{path}: `{}` differs from the stored arguments (they had {}, now {})",
        difference.field, difference.saved_text(), difference.given_text()
    )]
    Mismatch {
        /// The fingerprint file.
        path: PathBuf,
        difference: Difference,
    },
    #[error(transparent)]
    Write(#[from] AtomicWriteError),
}

/// A closure for `map_err` that names `path`.
fn io_at(path: &Path) -> impl FnOnce(io::Error) -> RunDirError + '_ {
    move |source| RunDirError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Where two fingerprints first differ.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The field, a dotted path into nested objects (`optimizer.lr`); empty
    /// when the two values are not objects.
    pub field: String,
    /// Its stored value (`None`: the stored fingerprint lacks it).
    pub saved: Option<Value>,
    /// Its given value (`None`: the given fingerprint lacks it).
    pub given: Option<Value>,
}

impl Difference {
    /// The stored value as messages show it: compact JSON, or `nothing`.
    pub fn saved_text(&self) -> String {
        text(self.saved.as_ref())
    }

    /// The given value as messages show it: compact JSON, or `nothing`.
    pub fn given_text(&self) -> String {
        text(self.given.as_ref())
    }
}

fn text(v: Option<&Value>) -> String {
    v.map_or_else(|| "nothing".into(), Value::to_string)
}

/// How deep [`first_difference`] looks into objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Down to the differing leaf (`optimizer.lr`).
    Nested,
    /// Only the top-level fields: a field whose value differs anywhere is
    /// named with its whole values.
    TopLevel,
}

/// The first field, in sorted key order, where `saved` and `given` differ;
/// `None` when they are equal.
pub fn first_difference(saved: &Value, given: &Value, depth: Depth) -> Option<Difference> {
    difference_under(saved, given, "", depth)
}

fn difference_under(
    saved: &Value,
    given: &Value,
    prefix: &str,
    depth: Depth,
) -> Option<Difference> {
    match (saved, given) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let field = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) if depth == Depth::Nested => {
                        difference_under(x, y, &field, depth)
                    }
                    (x, y) if x != y => Some(Difference {
                        field,
                        saved: x.cloned(),
                        given: y.cloned(),
                    }),
                    _ => None,
                }
            })
        }
        (a, b) if a != b => Some(Difference {
            field: prefix.to_string(),
            saved: Some(a.clone()),
            given: Some(b.clone()),
        }),
        _ => None,
    }
}

/// How a fingerprint file is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonLayout {
    /// Pretty-printed JSON.
    Pretty,
    /// Pretty-printed JSON and a newline.
    PrettyLine,
}

/// What [`check_fingerprint`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// No fingerprint was stored: this is the job's first start (the given
    /// one is stored now).
    Fresh,
    /// The stored fingerprint matches: the job resumes.
    Resume,
}

/// Checks `given` against the fingerprint stored at `path`, comparing as
/// `depth` says, or stores it there (atomically, laid out as `layout`, a
/// struct's fields in their declared order) when there is none. A mismatch
/// is refused with the first differing field.
pub fn check_fingerprint<T: Serialize + ?Sized>(
    path: &Path,
    given: &T,
    depth: Depth,
    layout: JsonLayout,
) -> Result<Start, RunDirError> {
    check_fingerprint_except(path, given, depth, layout, &[])
}

/// [`check_fingerprint`], leaving out of the comparison the top-level
/// fields named in `free`: settings a resumed job may change, such as how
/// many generations a loop runs, when the work already done does not
/// depend on them. The stored fingerprint is rewritten with the given
/// values when one of those differs, so it always holds the last start's.
pub fn check_fingerprint_except<T: Serialize + ?Sized>(
    path: &Path,
    given: &T,
    depth: Depth,
    layout: JsonLayout,
    free: &[&str],
) -> Result<Start, RunDirError> {
    let unreadable = |e: serde_json::Error| RunDirError::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    let store = || -> Result<(), RunDirError> {
        let mut text = serde_json::to_string_pretty(given).map_err(unreadable)?;
        if layout == JsonLayout::PrettyLine {
            text.push('\n');
        }
        write_atomic(path, text.as_bytes())?;
        Ok(())
    };
    let saved = match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice::<Value>(&bytes).map_err(unreadable)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            store()?;
            return Ok(Start::Fresh);
        }
        Err(e) => return Err(io_at(path)(e)),
    };
    let given_value = serde_json::to_value(given).map_err(unreadable)?;
    let without_free = |v: &Value| {
        let mut v = v.clone();
        if let Value::Object(m) = &mut v {
            for f in free {
                m.remove(*f);
            }
        }
        v
    };
    if let Some(difference) =
        first_difference(&without_free(&saved), &without_free(&given_value), depth)
    {
        return Err(RunDirError::Mismatch {
            path: path.to_path_buf(),
            difference,
        });
    }
    if saved != given_value {
        store()?;
    }
    Ok(Start::Resume)
}

/// Asserts that `error` is the refusal of a job whose folder `out` another
/// writer holds, naming the folder.
#[cfg(test)]
pub(crate) fn assert_refused_as_held(error: &dyn std::fmt::Display, out: &Path) {
    let msg = error.to_string();
    assert!(
        msg.contains(&out.display().to_string()) && msg.contains("another writer holds it"),
        "{msg}"
    );
}

/// A job's output folder, locked for this process until dropped.
#[derive(Debug)]
pub struct RunDir {
    path: PathBuf,
    _lock: DirLock,
}

impl RunDir {
    /// Locks `path` (which need not exist yet), or says who holds it.
    pub fn claim(path: &Path) -> Result<RunDir, RunDirError> {
        Ok(RunDir {
            _lock: DirLock::acquire(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a replacement of the folder is built: `.NAME.plies-staging`
    /// beside it, invisible at the folder's path until
    /// [`publish`](Self::publish)ed.
    pub fn staging_path(&self) -> Result<PathBuf, RunDirError> {
        replace::staging_path(&self.path).map_err(io_at(&self.path))
    }

    /// Removes an abandoned replacement.
    pub fn discard_staged(&self) -> Result<(), RunDirError> {
        let staged = self.staging_path()?;
        replace::remove_if_there(&staged).map_err(io_at(&staged))
    }

    /// Settles what a kill in the middle of a [`publish`](Self::publish)
    /// left in `.NAME.plies-old` (a swap that could not exchange in one
    /// step): the complete version wins. That is the folder once
    /// `is_complete` says so of it (the swap got that far); otherwise the
    /// old version goes back into place.
    pub fn recover_interrupted_swap(
        &self,
        is_complete: impl FnOnce(&Path) -> bool,
    ) -> Result<(), RunDirError> {
        let out = &self.path;
        let old = replace::old_path(out).map_err(io_at(out))?;
        if !old.is_dir() {
            return Ok(());
        }
        if is_complete(out) {
            return replace::remove_if_there(&old).map_err(io_at(&old));
        }
        replace::remove_if_there(out).map_err(io_at(out))?;
        std::fs::rename(&old, out).map_err(io_at(out))
    }

    /// Puts the finished work in `work` at the folder's path: a no-op when
    /// the work was written in place; otherwise the staged version swaps
    /// with the folder in one step where the system can
    /// ([`replace::swap_in`]), so the path names a complete version at
    /// every instant.
    pub fn publish(&self, work: &Path) -> Result<(), RunDirError> {
        if work != self.path {
            replace::swap_in(work, &self.path)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::fs;

    #[test]
    fn a_held_folder_refuses_a_second_claim_until_released() {
        let (_dir, out) = crate::util::scratch("run");
        let first = RunDir::claim(&out).unwrap();
        assert_eq!(first.path(), out);
        let err = RunDir::claim(&out).unwrap_err();
        assert!(matches!(err, RunDirError::Locked(LockError::Held { .. })));
        assert!(err.to_string().contains("another writer holds it"), "{err}");
        drop(first);
        RunDir::claim(&out).unwrap();
    }

    #[test]
    fn differences_name_the_first_field_and_both_values() {
        let a = json!({"seed": 1, "optimizer": {"kind": "sgd", "lr": 0.1}});
        let b = json!({"seed": 1, "optimizer": {"kind": "sgd", "lr": 0.2}});
        let d = first_difference(&a, &b, Depth::Nested).unwrap();
        assert_eq!(d.field, "optimizer.lr");
        assert_eq!(
            (d.saved_text(), d.given_text()),
            ("0.1".into(), "0.2".into())
        );
        let d = first_difference(&a, &b, Depth::TopLevel).unwrap();
        assert_eq!(d.field, "optimizer");
        assert_eq!(d.given_text(), r#"{"kind":"sgd","lr":0.2}"#);
        let d = first_difference(&json!({"a": 1}), &json!({"a": 1, "b": 2}), Depth::Nested);
        let d = d.unwrap();
        assert_eq!(
            (d.field.as_str(), d.saved, d.given),
            ("b", None, Some(json!(2)))
        );
        assert_eq!(
            first_difference(&json!(1), &json!(2), Depth::Nested)
                .unwrap()
                .field,
            ""
        );
        assert!(first_difference(&a, &a, Depth::Nested).is_none());
    }

    #[test]
    fn a_stored_fingerprint_is_resumed_and_a_mismatch_refused() {
        let (_dir, path) = crate::util::scratch("args.json");
        let given = json!({"seed": 1, "epochs": 3});
        let check = |v: &Value| check_fingerprint(&path, v, Depth::Nested, JsonLayout::PrettyLine);
        assert_eq!(check(&given).unwrap(), Start::Fresh);
        let stored = fs::read_to_string(&path).unwrap();
        assert_eq!(stored, serde_json::to_string_pretty(&given).unwrap() + "\n");
        assert_eq!(check(&given).unwrap(), Start::Resume);
        let err = check(&json!({"seed": 2, "epochs": 3})).unwrap_err();
        let RunDirError::Mismatch { difference, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!(difference.field, "seed");
        let msg = err.to_string();
        assert!(
            msg.contains("`seed`") && msg.contains("had 1, now 2"),
            "{msg}"
        );
        fs::write(&path, "{").unwrap();
        assert!(matches!(check(&given), Err(RunDirError::Unreadable { .. })));
    }

    #[test]
    fn a_struct_fingerprint_is_stored_in_its_declared_field_order() {
        #[derive(Serialize)]
        struct Args {
            seed: u64,
            epochs: u32,
        }
        let (_dir, path) = crate::util::scratch("args.json");
        let check = |v: &Args| check_fingerprint(&path, v, Depth::TopLevel, JsonLayout::Pretty);
        assert_eq!(check(&Args { seed: 1, epochs: 3 }).unwrap(), Start::Fresh);
        let stored = fs::read_to_string(&path).unwrap();
        assert_eq!(stored, "{\n  \"seed\": 1,\n  \"epochs\": 3\n}");
        assert_eq!(check(&Args { seed: 1, epochs: 3 }).unwrap(), Start::Resume);
        let err = check(&Args { seed: 1, epochs: 4 }).unwrap_err();
        assert!(err.to_string().contains("had 3, now 4"), "{err}");
    }

    #[test]
    fn a_free_field_may_change_and_the_stored_fingerprint_follows() {
        let (_dir, path) = crate::util::scratch("loop.json");
        let check = |v: &Value| {
            check_fingerprint_except(
                &path,
                v,
                Depth::Nested,
                JsonLayout::PrettyLine,
                &["generations"],
            )
        };
        let stored = || serde_json::from_str::<Value>(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            check(&json!({"seed": 1, "generations": 4})).unwrap(),
            Start::Fresh
        );
        let more = json!({"seed": 1, "generations": 8});
        assert_eq!(check(&more).unwrap(), Start::Resume);
        assert_eq!(stored(), more);
        // Any other field is still refused, and the file keeps the last start's.
        let err = check(&json!({"seed": 2, "generations": 8})).unwrap_err();
        assert!(err.to_string().contains("`seed`"), "{err}");
        assert_eq!(stored(), more);
    }

    /// A folder holding `a.txt` with `text`.
    fn version(dir: &Path, text: &str) {
        fs::create_dir_all(dir).unwrap();
        fs::write(dir.join("a.txt"), text).unwrap();
    }

    fn read(dir: &Path) -> String {
        fs::read_to_string(dir.join("a.txt")).unwrap()
    }

    #[test]
    fn staged_work_is_invisible_until_published() {
        let (dir, out) = crate::util::scratch("run");
        version(&out, "old");
        let run = RunDir::claim(&out).unwrap();
        let staged = run.staging_path().unwrap();
        assert_eq!(staged, dir.path().join(".run.plies-staging"));
        version(&staged, "new");
        assert_eq!(read(&out), "old");
        run.publish(&staged).unwrap();
        assert_eq!(read(&out), "new");
        assert!(!staged.exists());
        // Work written in place needs no swap.
        run.publish(&out).unwrap();
        assert_eq!(read(&out), "new");
        version(&staged, "abandoned");
        run.discard_staged().unwrap();
        assert!(!staged.exists());
    }

    #[test]
    fn an_interrupted_swap_is_recovered_to_the_complete_version() {
        let (_dir, out) = crate::util::scratch("run");
        let run = RunDir::claim(&out).unwrap();
        let old = replace::old_path(&out).unwrap();
        // Killed between the renames: the old version waits beside.
        version(&old, "old");
        run.recover_interrupted_swap(|_| false).unwrap();
        assert_eq!(read(&out), "old");
        assert!(!old.exists());
        // Killed after the new version went in, before the old was removed.
        version(&old, "old");
        version(&out, "new, incomplete");
        run.recover_interrupted_swap(|_| false).unwrap();
        assert_eq!(read(&out), "old");
        version(&old, "old");
        version(&out, "new");
        run.recover_interrupted_swap(|p| read(p) == "new").unwrap();
        assert_eq!(read(&out), "new");
        assert!(!old.exists());
        // Nothing to recover.
        run.recover_interrupted_swap(|_| unreachable!()).unwrap();
    }
}
