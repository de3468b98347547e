//! Names from outside, checked before they become paths: the one place
//! that decides whether a file name a hub lists, an ETag or commit id it
//! sends, or a file inside a shared checkpoint or dataset may name
//! something on disk.
//!
//! A file name is a relative `/`-separated path whose every component is a
//! plain name: no absolute path, no `..` or `.` component, no empty
//! component (`a//b`, a leading or trailing `/`), no backslash, no drive
//! prefix (`C:`), no NUL or other control character (as Python's
//! huggingface_hub refuses). An ETag is the hex of a sha256 (64 digits) or a
//! git blob id (40), a commit id the hex of a sha1 (40). And a name that
//! exists on disk must not resolve, through a symbolic link, outside its
//! folder (for a hub cache snapshot, outside its repository's folder, where
//! its links point into `blobs/`).
//!
//! Paths a user writes (a config, a command line) are theirs and are not
//! checked here.

use std::fmt;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// What a checked name is used as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// A file inside a folder (a repository, a snapshot, a checkpoint).
    File,
    /// A branch or tag name (a file under the cache's `refs/`).
    Revision,
    /// A blob's ETag (its name under the cache's `blobs/`).
    Etag,
    /// A commit id (a folder under the cache's `snapshots/`).
    Commit,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NameKind::File => "file name",
            NameKind::Revision => "revision",
            NameKind::Etag => "ETag",
            NameKind::Commit => "commit id",
        })
    }
}

/// Why a name was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    Empty,
    Absolute,
    ParentComponent,
    DotComponent,
    EmptyComponent,
    Backslash,
    DrivePrefix,
    ControlCharacter(char),
    /// Not `digits` lower- or upper-case hex digits.
    NotHex {
        digits: &'static str,
    },
    /// The same list names it as a file and as the folder of `inside`.
    FileAndFolder {
        inside: String,
    },
    /// It resolves to `target`, outside `folder`.
    LinkOutside {
        target: PathBuf,
        folder: PathBuf,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Empty => write!(f, "is empty"),
            Problem::Absolute => write!(f, "is an absolute path"),
            Problem::ParentComponent => {
                write!(f, "has a '..' component (it climbs out of its folder)")
            }
            Problem::DotComponent => write!(f, "has a '.' component"),
            Problem::EmptyComponent => write!(
                f,
                "has an empty component ('//', or a leading or trailing '/')"
            ),
            Problem::Backslash => write!(f, "has a backslash"),
            Problem::DrivePrefix => write!(f, "has a drive prefix"),
            Problem::ControlCharacter(c) => {
                write!(f, "has a control character ({})", c.escape_default())
            }
            Problem::NotHex { digits } => write!(f, "is not {digits} hex digits"),
            Problem::FileAndFolder { inside } => write!(
                f,
                "is listed as a file and as the folder of '{}'",
                shown(inside)
            ),
            Problem::LinkOutside { target, folder } => write!(
                f,
                "is a symbolic link to {}, outside {}",
                target.display(),
                folder.display()
            ),
        }
    }
}

/// A refused name: what it is, the name (control characters escaped), why.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{kind} '{}' {problem}", shown(.name))]
pub struct UnsafeName {
    pub kind: NameKind,
    pub name: String,
    pub problem: Problem,
}

/// `name` with its control characters escaped (`\n`, `\u{0}`), so an
/// error message shows it on one line; other characters as they are.
pub fn shown(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn refuse(kind: NameKind, name: &str, problem: Problem) -> UnsafeName {
    UnsafeName {
        kind,
        name: name.to_string(),
        problem,
    }
}

/// Checks `name` as a relative `/`-separated path inside a folder.
pub fn relative(kind: NameKind, name: &str) -> Result<(), UnsafeName> {
    let bad = |p| Err(refuse(kind, name, p));
    if name.is_empty() {
        return bad(Problem::Empty);
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return bad(Problem::ControlCharacter(c));
    }
    if name.starts_with('/') {
        return bad(Problem::Absolute);
    }
    if name.contains('\\') {
        return bad(Problem::Backslash);
    }
    let b = name.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        return bad(Problem::DrivePrefix);
    }
    for part in name.split('/') {
        match part {
            "" => return bad(Problem::EmptyComponent),
            ".." => return bad(Problem::ParentComponent),
            "." => return bad(Problem::DotComponent),
            _ => {}
        }
    }
    Ok(())
}

/// Checks `name` as a file inside a folder.
pub fn file(name: &str) -> Result<(), UnsafeName> {
    relative(NameKind::File, name)
}

/// Checks that no name of `files` (each already checked by [`file`]) is
/// also the folder of another: both cannot be written.
pub fn distinct_files<'a>(files: impl IntoIterator<Item = &'a str>) -> Result<(), UnsafeName> {
    let files: Vec<&str> = files.into_iter().collect();
    let set: std::collections::HashSet<&str> = files.iter().copied().collect();
    for f in &files {
        let mut at = 0;
        while let Some(slash) = f[at..].find('/') {
            let folder = &f[..at + slash];
            if set.contains(folder) {
                return Err(refuse(
                    NameKind::File,
                    folder,
                    Problem::FileAndFolder {
                        inside: f.to_string(),
                    },
                ));
            }
            at += slash + 1;
        }
    }
    Ok(())
}

/// Checks an ETag: a sha256 (64 hex digits) or a git blob id (40).
pub fn etag(name: &str) -> Result<(), UnsafeName> {
    if matches!(name.len(), 40 | 64) && is_hex(name) {
        Ok(())
    } else {
        Err(refuse(
            NameKind::Etag,
            name,
            Problem::NotHex {
                digits: "64 (sha256) or 40 (git blob id)",
            },
        ))
    }
}

/// Checks a commit id: 40 hex digits.
pub fn commit(name: &str) -> Result<(), UnsafeName> {
    if is_commit(name) {
        Ok(())
    } else {
        Err(refuse(
            NameKind::Commit,
            name,
            Problem::NotHex { digits: "40" },
        ))
    }
}

/// Whether `name` is a commit id (40 hex digits).
pub fn is_commit(name: &str) -> bool {
    name.len() == 40 && is_hex(name)
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The folder whose links a file in `dir` may follow: `dir` itself, or for
/// a hub cache snapshot (`{models|datasets}--ORG--NAME/snapshots/COMMIT`)
/// its repository folder, where the snapshot's links point into `blobs/`.
pub fn link_root(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let name = |p: Option<&Path>| {
        p.and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .map(str::to_string)
            .unwrap_or_default()
    };
    let snapshots = dir.parent();
    let repo = snapshots.and_then(Path::parent);
    let repo_name = name(repo);
    if is_commit(&name(Some(&dir)))
        && name(snapshots) == "snapshots"
        && (repo_name.starts_with("models--") || repo_name.starts_with("datasets--"))
    {
        if let Some(repo) = repo {
            return repo.to_path_buf();
        }
    }
    dir
}

/// `dir/name` when `name` is a safe file name that, where it exists, does
/// not resolve through a symbolic link outside `root`. A name that does not
/// exist is returned as it is (the caller's read reports it missing).
pub fn inside_root(dir: &Path, name: &str, root: &Path) -> Result<PathBuf, UnsafeName> {
    file(name)?;
    let path = dir.join(name);
    if let Ok(real) = std::fs::canonicalize(&path) {
        let folder = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        if !real.starts_with(&folder) {
            return Err(refuse(
                NameKind::File,
                name,
                Problem::LinkOutside {
                    target: real,
                    folder,
                },
            ));
        }
    }
    Ok(path)
}

/// `dir/name` checked as [`inside_root`] with the root [`link_root`] gives.
pub fn inside(dir: &Path, name: &str) -> Result<PathBuf, UnsafeName> {
    inside_root(dir, name, &link_root(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass() {
        for ok in [
            "config.json",
            "a/b/c.arrow",
            ".gitattributes",
            "x..y",
            "refs/pr/1",
            "ünï/файл.txt",
        ] {
            file(ok).unwrap();
        }
    }

    #[test]
    fn each_kind_of_hostile_name_is_refused_with_its_problem() {
        let cases: [(&str, Problem); 12] = [
            ("", Problem::Empty),
            ("../x", Problem::ParentComponent),
            ("a/../../x", Problem::ParentComponent),
            ("a/..", Problem::ParentComponent),
            ("/abs", Problem::Absolute),
            ("C:\\x", Problem::Backslash),
            ("C:x", Problem::DrivePrefix),
            ("a\\b", Problem::Backslash),
            ("a\0b", Problem::ControlCharacter('\0')),
            ("a\nb", Problem::ControlCharacter('\n')),
            ("a//b", Problem::EmptyComponent),
            ("./a", Problem::DotComponent),
        ];
        for (name, problem) in cases {
            let e = file(name).unwrap_err();
            assert_eq!(e.problem, problem, "{name:?}");
            assert_eq!(e.name, name);
        }
        assert_eq!(file("a/").unwrap_err().problem, Problem::EmptyComponent);
        // The message shows control characters escaped.
        let msg = file("a\0b").unwrap_err().to_string();
        assert!(msg.contains("'a\\u{0}b'"), "{msg}");
    }

    #[test]
    fn etags_and_commits_are_hex_of_their_length() {
        etag(&"a".repeat(64)).unwrap();
        etag(&"0F".repeat(20)).unwrap();
        commit(&"1".repeat(40)).unwrap();
        for bad in [
            "../../x",
            &"g".repeat(64),
            &"a".repeat(63),
            "",
            &"a".repeat(41),
        ] {
            assert_eq!(etag(bad).unwrap_err().kind, NameKind::Etag, "{bad}");
        }
        for bad in ["../../x", &"a".repeat(64), &"z".repeat(40)] {
            assert_eq!(commit(bad).unwrap_err().kind, NameKind::Commit, "{bad}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn links_out_of_the_folder_are_refused_links_inside_pass() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ckpt");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(tmp.path().join("secret"), b"s").unwrap();
        std::fs::write(dir.join("real.json"), b"{}").unwrap();
        std::os::unix::fs::symlink("../secret", dir.join("config.json")).unwrap();
        std::os::unix::fs::symlink("real.json", dir.join("inner.json")).unwrap();
        let e = inside(&dir, "config.json").unwrap_err();
        assert!(matches!(e.problem, Problem::LinkOutside { .. }), "{e}");
        assert_eq!(inside(&dir, "inner.json").unwrap(), dir.join("inner.json"));
        assert_eq!(inside(&dir, "missing").unwrap(), dir.join("missing"));
        // A hub snapshot's links may point into its repository's blobs.
        let repo = tmp.path().join("models--o--n");
        let snap = repo.join("snapshots").join("a".repeat(40));
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::create_dir_all(repo.join("blobs")).unwrap();
        std::fs::write(repo.join("blobs/b"), b"x").unwrap();
        std::os::unix::fs::symlink("../../blobs/b", snap.join("f")).unwrap();
        // Three levels up from the snapshot is `tmp`, where `secret` is.
        std::os::unix::fs::symlink("../../../secret", snap.join("g")).unwrap();
        inside(&snap, "f").unwrap();
        assert!(inside(&snap, "g").is_err());
    }

    #[test]
    fn a_name_listed_as_a_file_and_as_a_folder_is_refused() {
        assert!(distinct_files(["a", "ab/c", "a-b/c", "b/c"]).is_ok());
        let e = distinct_files(["a/b", "a-x", "a/b/c/d"]).unwrap_err();
        assert_eq!(e.name, "a/b");
        assert!(e.to_string().contains("folder of 'a/b/c/d'"), "{e}");
    }
}
