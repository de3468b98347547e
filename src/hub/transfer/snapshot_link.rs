//! The snapshot's links to the blobs, relative as huggingface_hub makes
//! them, through folders that are made one by one and never followed when
//! they are links.

use crate::util::safe_name::{NameKind, Problem, UnsafeName};
use std::path::{Path, PathBuf};

/// Why a snapshot link could not be made.
pub(super) enum LinkError {
    Io(std::io::Error),
    Unsafe(UnsafeName),
}

/// `snapshot/file -> ../../blobs/ETAG` (one more `../` per folder in
/// `file`), as huggingface_hub links them. The folders on the way are made
/// one by one, and one that is a symbolic link (a cache someone tampered
/// with) is refused rather than followed.
pub(super) fn link_in_snapshot(
    folder: &Path,
    snapshot: &Path,
    file: &str,
    etag: &str,
) -> Result<(), (PathBuf, LinkError)> {
    let parts: Vec<&str> = file.split('/').collect();
    let mut dir = folder.to_path_buf();
    let rel_snapshot = snapshot.strip_prefix(folder).unwrap_or(snapshot);
    let steps: Vec<String> = rel_snapshot
        .iter()
        .map(|c| c.to_string_lossy().to_string())
        .chain(parts[..parts.len() - 1].iter().map(|p| p.to_string()))
        .collect();
    for step in &steps {
        dir.push(step);
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                let target = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
                return Err((
                    dir.clone(),
                    LinkError::Unsafe(UnsafeName {
                        kind: NameKind::File,
                        name: file.to_string(),
                        problem: Problem::LinkOutside {
                            target,
                            folder: folder.to_path_buf(),
                        },
                    }),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(|e| (dir.clone(), LinkError::Io(e)))?;
            }
            Err(e) => return Err((dir.clone(), LinkError::Io(e))),
        }
    }
    let link = dir.join(parts[parts.len() - 1]);
    let up = "../".repeat(steps.len());
    let target = format!("{up}blobs/{etag}");
    match std::fs::symlink_metadata(&link) {
        Ok(m) if m.is_dir() => {
            return Err((
                link.clone(),
                LinkError::Io(std::io::Error::other("a folder is where the file goes")),
            ))
        }
        Ok(_) => std::fs::remove_file(&link).map_err(|e| (link.clone(), LinkError::Io(e)))?,
        Err(_) => {}
    }
    make_link(&target, &link).map_err(|e| (link.clone(), LinkError::Io(e)))
}

#[cfg(unix)]
fn make_link(target: &str, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// Where links need privileges, the blob is copied (as hf-hub does).
#[cfg(not(unix))]
fn make_link(target: &str, link: &Path) -> std::io::Result<()> {
    let blob = link.parent().unwrap_or(Path::new(".")).join(target);
    std::fs::copy(blob, link).map(|_| ())
}
