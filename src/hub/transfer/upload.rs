//! Uploads: the folder's files listed with every name checked and every
//! link looked at before the repository is created or anything is sent.

use super::remote::client;
use super::{Remote, Uploaded};
use crate::hub::{At, HubError, RepoRef};
use crate::util::safe_name::{self, NameKind, Problem, UnsafeName};
use hf_hub::{HFError, RepoType};
use std::path::Path;

impl<T: RepoType> Remote<T> {
    pub(super) fn upload(
        &self,
        dir: &Path,
        private: bool,
        message: &str,
    ) -> Result<Uploaded, HubError> {
        // Every name checked, every link looked at, before anything is
        // created or sent.
        let mut files = Vec::new();
        list_files(&self.repo, dir, dir, &mut files)?;
        files.sort();
        let client = client(&self.repo)?;
        let whole = |e| self.classify("", e);
        let created = client
            .create_repository()
            .repo_id(&self.repo.id())
            .repo_type(self.handle_type())
            .private(private)
            .exist_ok(true)
            .send();
        created.map_err(whole)?;
        let revision = self.repo.revision();
        if revision != crate::hub::DEFAULT_REVISION {
            match self.handle.create_branch().branch(revision).send() {
                Ok(()) | Err(HFError::Conflict { .. }) => {}
                Err(e) => return Err(whole(e)),
            }
        }
        let info = self
            .handle
            .upload_folder()
            .folder_path(dir.to_path_buf())
            .revision(revision.to_string())
            .commit_message(message.to_string())
            .allow_patterns(files.iter().map(|f| literal_glob(f)).collect())
            .send()
            .map_err(whole)?;
        Ok(Uploaded {
            commit: info.commit_oid.unwrap_or_default(),
            url: info.commit_url.unwrap_or_default(),
            files,
        })
    }

    fn handle_type(&self) -> T {
        T::default()
    }
}

/// The files of `dir` to upload, relative and `/`-separated: hidden ones
/// (a leading `.` in any part) left out, every name checked; a symbolic
/// link is refused when it resolves outside `dir` (it is neither followed
/// nor sent), and otherwise left out (hf-hub does not upload links).
fn list_files(
    repo: &RepoRef,
    root: &Path,
    dir: &Path,
    out: &mut Vec<String>,
) -> Result<(), HubError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HubError::Io { path, source }
    };
    let real_root = std::fs::canonicalize(root).map_err(io(root))?;
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        let rel_path = path.strip_prefix(root).unwrap_or(&path);
        let rel = rel_path.to_string_lossy().to_string();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let refuse = |source: UnsafeName| HubError::Unsafe {
            at: At {
                repo: repo.to_string(),
                file: rel.clone(),
            },
            name: Box::new(source),
            action: "nothing was uploaded",
        };
        let Some(text) = rel_path.to_str() else {
            return Err(refuse(UnsafeName {
                kind: NameKind::File,
                name: rel.clone(),
                problem: Problem::ControlCharacter('\u{fffd}'),
            }));
        };
        safe_name::file(text).map_err(refuse)?;
        let kind = entry.file_type().map_err(io(&path))?;
        if kind.is_symlink() {
            let target = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if !target.starts_with(&real_root) {
                return Err(refuse(UnsafeName {
                    kind: NameKind::File,
                    name: rel.clone(),
                    problem: Problem::LinkOutside {
                        target,
                        folder: real_root.clone(),
                    },
                }));
            }
        } else if kind.is_dir() {
            list_files(repo, root, &path, out)?;
        } else if kind.is_file() {
            out.push(text.to_string());
        }
    }
    Ok(())
}

/// `name` as a glob matching only itself (hf-hub's allow patterns are
/// globs): each metacharacter in a class of its own.
fn literal_glob(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            '*' | '?' | '[' | ']' | '{' | '}' => format!("[{c}]"),
            c => c.to_string(),
        })
        .collect()
}
