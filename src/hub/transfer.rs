//! Downloads into and uploads from the shared cache, through hf-hub.
//!
//! The cache is asked first and the network only for what it lacks, so a
//! cached checkpoint loads with no network at all (hf-hub on its own would
//! try the network for seconds before falling back to the cache). hf-hub
//! writes a blob as `BLOB.incomplete` and renames it when the transfer is
//! whole; this module then checks the blob against its ETag (an LFS file's
//! sha256, a regular file's git blob id) and removes it, with its snapshot
//! link, when they differ, so a cut or corrupted transfer never stays in
//! the cache as a complete file.

use super::{At, HubError, Mismatch, RepoKind, RepoRef};
use hf_hub::{HFClient, HFError, HFRepositorySync, RepoType};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The shared cache: `HF_HUB_CACHE`, `HUGGINGFACE_HUB_CACHE`, `$HF_HOME/hub`,
/// or `~/.cache/huggingface/hub` (Python's huggingface_hub's order).
pub fn cache_dir() -> PathBuf {
    hf_hub::resolve_cache_dir()
}

/// The hub: `HF_ENDPOINT` (default huggingface.co).
fn endpoint() -> String {
    std::env::var("HF_ENDPOINT")
        .ok()
        .filter(|e| !e.is_empty())
        .unwrap_or_else(|| "https://huggingface.co".into())
        .trim_end_matches('/')
        .to_string()
}

/// One repository on one hub, with what errors need to name.
struct Remote<T: RepoType> {
    handle: HFRepositorySync<T>,
    repo: RepoRef,
    endpoint: String,
    cache: PathBuf,
}

/// Runs `$body` with `$remote` bound to the model or dataset handle of `$repo`.
macro_rules! with_remote {
    ($repo:expr, $remote:ident => $body:expr) => {{
        let repo: &RepoRef = $repo;
        let client = client(repo)?;
        match repo.kind {
            RepoKind::Model => {
                let $remote = Remote::new(client.model(&repo.owner, &repo.name), repo);
                $body
            }
            RepoKind::Dataset => {
                let $remote = Remote::new(client.dataset(&repo.owner, &repo.name), repo);
                $body
            }
        }
    }};
}

fn client(repo: &RepoRef) -> Result<hf_hub::HFClientSync, HubError> {
    HFClient::builder()
        .endpoint(endpoint())
        .cache_dir(cache_dir())
        .build_sync()
        .map_err(|e| HubError::Rejected {
            at: At {
                repo: repo.to_string(),
                file: String::new(),
            },
            why: format!("the hub client cannot start: {e}"),
        })
}

impl<T: RepoType> Remote<T> {
    fn new(handle: HFRepositorySync<T>, repo: &RepoRef) -> Self {
        Remote {
            handle,
            repo: repo.clone(),
            endpoint: endpoint(),
            cache: cache_dir(),
        }
    }

    fn at(&self, file: &str) -> At {
        At {
            repo: self.repo.to_string(),
            file: file.to_string(),
        }
    }

    /// The hub's answer as one of plies' errors about `file`. The hub's
    /// `X-Error-Code` decides what was not found (hf-hub names a 404 by the
    /// call it answered: a repository's missing `main` is a "revision").
    fn classify(&self, file: &str, e: HFError) -> HubError {
        let at = self.at(file);
        let endpoint = self.endpoint.clone();
        let code = match &e {
            HFError::RepoNotFound { context, .. }
            | HFError::RevisionNotFound { context, .. }
            | HFError::EntryNotFound { context, .. } => {
                context.as_ref().and_then(|c| c.error_code.clone())
            }
            HFError::AuthRequired { context } | HFError::Forbidden { context } => {
                context.error_code.clone()
            }
            _ => None,
        };
        match (code.as_deref(), e) {
            (Some("RepoNotFound"), _) | (None, HFError::RepoNotFound { .. }) => {
                HubError::RepoNotFound { at, endpoint }
            }
            (Some("RevisionNotFound"), _) | (None, HFError::RevisionNotFound { .. }) => {
                HubError::RevisionNotFound { at, endpoint }
            }
            (_, HFError::EntryNotFound { .. }) => HubError::FileNotFound { at, endpoint },
            (_, HFError::AuthRequired { context } | HFError::Forbidden { context }) => {
                HubError::Refused {
                    at,
                    endpoint,
                    status: context.status.as_u16(),
                    message: context
                        .server_message
                        .as_deref()
                        .map(|m| format!(": {m}"))
                        .unwrap_or_default(),
                }
            }
            (_, HFError::Request { source, .. }) if source.is_connect() || source.is_timeout() => {
                HubError::Unreachable {
                    at,
                    endpoint,
                    cache: self.cache.clone(),
                    why: error_chain(&source),
                }
            }
            (_, HFError::Request { source, .. }) => HubError::Transfer {
                at,
                endpoint,
                why: error_chain(&source),
            },
            (_, other) => HubError::Transfer {
                at,
                endpoint,
                why: other.to_string(),
            },
        }
    }

    /// `file` from the cache alone, at the asked revision.
    fn cached(&self, file: &str) -> Option<PathBuf> {
        self.handle
            .download_file()
            .filename(file)
            .revision(self.repo.revision().to_string())
            .local_files_only(true)
            .send()
            .ok()
            .filter(|p| p.is_file())
    }

    /// `file` through the network at `revision`, checked.
    fn fetch(&self, file: &str, revision: &str) -> Result<PathBuf, HubError> {
        let path = self
            .handle
            .download_file()
            .filename(file)
            .revision(revision.to_string())
            .send()
            .map_err(|e| self.not_found(self.classify(file, e), revision))?;
        self.check_blob(file, &path)?;
        Ok(path)
    }

    /// A file's 404 carries no error code from hf-hub: asks the hub
    /// whether the repository, then the revision, is what is missing.
    fn not_found(&self, e: HubError, revision: &str) -> HubError {
        let HubError::FileNotFound { at, endpoint } = e else {
            return e;
        };
        if self.handle.exists().send().is_ok_and(|there| !there) {
            HubError::RepoNotFound { at, endpoint }
        } else if self
            .handle
            .revision_exists()
            .revision(revision)
            .send()
            .is_ok_and(|there| !there)
        {
            HubError::RevisionNotFound { at, endpoint }
        } else {
            HubError::FileNotFound { at, endpoint }
        }
    }

    /// A blob is named by its ETag: an LFS file's sha256, or a regular
    /// file's git blob id (sha1 of `blob LEN\0` + bytes). The bytes must
    /// have it: hf-hub 1.0 stores an error response's body as the file
    /// when retries run out, and this is what catches it.
    fn check_blob(&self, file: &str, link: &Path) -> Result<(), HubError> {
        let Some(blob) = std::fs::read_link(link)
            .ok()
            .map(|t| link.parent().map(|p| p.join(&t)).unwrap_or(t))
        else {
            return Ok(());
        };
        let Some(name) = blob
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| n.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_ascii_lowercase)
        else {
            return Ok(());
        };
        let bytes = std::fs::read(&blob).map_err(|source| HubError::Io {
            path: blob.clone(),
            source,
        })?;
        let (algorithm, found) = match name.len() {
            64 => ("sha256", hex(&Sha256::digest(&bytes))),
            40 => {
                let mut h = Sha1::new();
                h.update(format!("blob {}\0", bytes.len()).as_bytes());
                h.update(&bytes);
                ("git blob id", hex(&h.finalize()))
            }
            _ => return Ok(()),
        };
        if found == name {
            return Ok(());
        }
        for path in [link, blob.as_path()] {
            std::fs::remove_file(path).map_err(|source| HubError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        // A short text body is most likely the server's error message.
        let sent = match std::str::from_utf8(&bytes) {
            Ok(text) if bytes.len() <= 512 => format!(": {}", text.trim()),
            _ => String::new(),
        };
        Err(HubError::Corrupt {
            at: self.at(file),
            endpoint: self.endpoint.clone(),
            mismatch: Box::new(Mismatch {
                algorithm,
                expected: name,
                found,
                received: format!("{} bytes{sent}", bytes.len()),
            }),
        })
    }

    /// The snapshot directory holding `files`: from the cache when every
    /// one is there, else all of them from the network at one commit.
    fn files(&self, files: &[&str]) -> Result<PathBuf, HubError> {
        let cached: Vec<Option<PathBuf>> = files.iter().map(|f| self.cached(f)).collect();
        if let Some(paths) = cached.iter().cloned().collect::<Option<Vec<PathBuf>>>() {
            if let Some(dir) = same_snapshot(files, &paths) {
                return Ok(dir);
            }
        }
        // A missing file first, so an error names one the cache lacks. It
        // pins the commit the revision points to; the others come from
        // that commit, so the set is consistent.
        let mut order: Vec<&str> = files.to_vec();
        order.sort_by_key(|f| cached[files.iter().position(|g| g == f).unwrap_or(0)].is_some());
        let first = self.fetch(order[0], self.repo.revision())?;
        let dir = snapshot_of(order[0], &first);
        let commit = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        for f in &order[1..] {
            self.fetch(f, &commit)?;
        }
        Ok(dir)
    }

    /// Every file of the revision, through the network.
    fn everything(&self) -> Result<Downloaded, HubError> {
        let dir = self
            .handle
            .snapshot_download()
            .revision(self.repo.revision().to_string())
            .send()
            .map_err(|e| self.classify("", e))?;
        let mut files = Vec::new();
        list_files(&dir, &dir, &mut files)?;
        files.sort();
        for f in &files {
            self.check_blob(f, &dir.join(f))?;
        }
        let commit = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        Ok(Downloaded {
            snapshot: dir,
            commit,
            files,
        })
    }

    fn upload(&self, dir: &Path, private: bool, message: &str) -> Result<Uploaded, HubError> {
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
        if revision != super::DEFAULT_REVISION {
            match self.handle.create_branch().branch(revision).send() {
                Ok(()) | Err(HFError::Conflict { .. }) => {}
                Err(e) => return Err(whole(e)),
            }
        }
        let mut files = Vec::new();
        list_files(dir, dir, &mut files)?;
        files.retain(|f| !is_hidden(f));
        files.sort();
        let info = self
            .handle
            .upload_folder()
            .folder_path(dir.to_path_buf())
            .revision(revision.to_string())
            .commit_message(message.to_string())
            .allow_patterns(files.clone())
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

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

fn is_hidden(relative: &str) -> bool {
    relative.split('/').any(|part| part.starts_with('.'))
}

/// The snapshot directory `path` (the cached `file`) lies in.
fn snapshot_of(file: &str, path: &Path) -> PathBuf {
    let depth = file.split('/').count();
    let mut dir = path.to_path_buf();
    for _ in 0..depth {
        dir.pop();
    }
    dir
}

/// The one snapshot every cached path lies in, if they share one.
fn same_snapshot(files: &[&str], paths: &[PathBuf]) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = files
        .iter()
        .zip(paths)
        .map(|(f, p)| snapshot_of(f, p))
        .collect();
    dirs.windows(2)
        .all(|w| w[0] == w[1])
        .then(|| dirs[0].clone())
}

fn list_files(root: &Path, dir: &Path, out: &mut Vec<String>) -> Result<(), HubError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HubError::Io { path, source }
    };
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.is_dir() {
            list_files(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The snapshot directory holding `files` of `repo`: read from the cache
/// when all of them are there (no network), else downloaded and checked.
pub fn fetch_files(repo: &RepoRef, files: &[&str]) -> Result<PathBuf, HubError> {
    with_remote!(repo, remote => remote.files(files))
}

/// What [`download`] put in the cache.
#[derive(Clone, Debug)]
pub struct Downloaded {
    /// `CACHE/{models|datasets}--ORG--NAME/snapshots/COMMIT`.
    pub snapshot: PathBuf,
    pub commit: String,
    /// Paths inside the snapshot, sorted.
    pub files: Vec<String>,
}

/// Every file of `repo` at its revision into the cache, LFS files checked
/// against their sha256.
pub fn download(repo: &RepoRef) -> Result<Downloaded, HubError> {
    with_remote!(repo, remote => remote.everything())
}

/// What [`upload`] committed.
#[derive(Clone, Debug)]
pub struct Uploaded {
    pub commit: String,
    pub url: String,
    pub files: Vec<String>,
}

/// Commits the files of `dir` (hidden ones left out) to `repo` at its
/// revision, creating the repository (and the branch) when missing.
pub fn upload(
    dir: &Path,
    repo: &RepoRef,
    private: bool,
    message: &str,
) -> Result<Uploaded, HubError> {
    with_remote!(repo, remote => remote.upload(dir, private, message))
}
