//! Downloads into and uploads from the shared cache, through hf-hub.
//!
//! The cache is asked first and the network only for what it lacks, so a
//! cached checkpoint loads with no network at all (hf-hub on its own would
//! try the network for seconds before falling back to the cache).
//!
//! plies writes the cache itself, in the layout Python's huggingface_hub
//! reads (`blobs/ETAG`, `snapshots/COMMIT/PATH -> ../../blobs/ETAG`,
//! `refs/REVISION`): hf-hub would name the blob and the snapshot folder
//! after the ETag and commit headers of each answer, unchecked. A download
//! first asks the commit the revision points to and the file list of that
//! commit, and checks every name, ETag and commit (the listing's, and the
//! headers of each file's answer) with [`crate::util::safe_name`]; one bad
//! name refuses the whole download before anything is written. Each blob
//! then comes through hf-hub into a staging folder of its own, is checked
//! against its ETag (an LFS file's sha256, a regular file's git blob id)
//! and only then renamed into `blobs/`, so a cut or corrupted transfer
//! never stays in the cache as a complete file.
//!
//! An upload sends the folder's files under their checked names and
//! refuses a symbolic link that leaves the folder (it is neither followed
//! nor sent).

use super::{At, HubError, Mismatch, RepoKind, RepoRef};
use crate::util::safe_name::{self, NameKind, Problem, UnsafeName};
use hf_hub::repository::RepoTreeEntry;
use hf_hub::{
    HFClient, HFError, HFRepositorySync, HFResult, RepoType, RepoTypeDataset, RepoTypeModel,
};
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

/// The commit a revision points to, as the hub's revision info says.
type CommitOf<T> = fn(&HFRepositorySync<T>, &str) -> HFResult<Option<String>>;

fn model_commit(h: &HFRepositorySync<RepoTypeModel>, revision: &str) -> HFResult<Option<String>> {
    Ok(h.info().revision(revision.to_string()).send()?.sha)
}

fn dataset_commit(
    h: &HFRepositorySync<RepoTypeDataset>,
    revision: &str,
) -> HFResult<Option<String>> {
    Ok(h.info().revision(revision.to_string()).send()?.sha)
}

/// One repository on one hub, with what errors need to name.
struct Remote<T: RepoType> {
    handle: HFRepositorySync<T>,
    commit_of: CommitOf<T>,
    repo: RepoRef,
    endpoint: String,
    cache: PathBuf,
}

/// A listed file: its checked path and, where the hub said it, its
/// checked ETag (hf-hub 1.0 drops an LFS file's sha256 from the listing,
/// so for those it comes from the file's own answer, or failing that from
/// the bytes themselves).
#[derive(Clone, Debug)]
struct Entry {
    path: String,
    etag: Option<String>,
    lfs: bool,
}

/// What a download fetches: the checked commit and files.
struct Plan {
    commit: String,
    entries: Vec<Entry>,
}

/// Runs `$body` with `$remote` bound to the model or dataset handle of `$repo`.
macro_rules! with_remote {
    ($repo:expr, $remote:ident => $body:expr) => {{
        let repo: &RepoRef = $repo;
        let client = client(repo)?;
        match repo.kind {
            RepoKind::Model => {
                let $remote =
                    Remote::new(client.model(&repo.owner, &repo.name), model_commit, repo);
                $body
            }
            RepoKind::Dataset => {
                let $remote = Remote::new(
                    client.dataset(&repo.owner, &repo.name),
                    dataset_commit,
                    repo,
                );
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
    fn new(handle: HFRepositorySync<T>, commit_of: CommitOf<T>, repo: &RepoRef) -> Self {
        Remote {
            handle,
            commit_of,
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

    /// The repository's folder in the cache: `{models|datasets}--ORG--NAME`
    /// (`RepoRef::parse` allows no `/` and no leading `.` in either part).
    fn folder(&self) -> PathBuf {
        let plural = match self.repo.kind {
            RepoKind::Model => "models",
            RepoKind::Dataset => "datasets",
        };
        self.cache
            .join(format!("{plural}--{}--{}", self.repo.owner, self.repo.name))
    }

    /// An unsafe name in what the hub said about `file`.
    fn unsafe_name(&self, file: &str, source: UnsafeName) -> HubError {
        HubError::Unsafe {
            at: self.at(file),
            name: Box::new(source),
            action: "nothing was downloaded",
        }
    }

    /// `file` from the cache alone, at the asked revision: the ref, the
    /// commit it names and the file are checked as names, and the file must
    /// not resolve outside the repository's folder.
    fn cached(&self, file: &str) -> Option<PathBuf> {
        let folder = self.folder();
        let revision = self.repo.revision();
        let commit = if safe_name::is_commit(revision) {
            revision.to_string()
        } else {
            safe_name::relative(NameKind::Revision, revision).ok()?;
            let c = std::fs::read_to_string(folder.join("refs").join(revision)).ok()?;
            let c = c.trim().to_string();
            safe_name::commit(&c).ok()?;
            c
        };
        let snapshot = folder.join("snapshots").join(commit);
        safe_name::inside_root(&snapshot, file, &folder)
            .ok()
            .filter(|p| p.is_file())
    }

    /// What the hub says the revision holds, every name and header checked
    /// before anything is written: the commit the revision points to, then
    /// every file of that commit (or only `wanted`) with its ETag (an LFS
    /// file's sha256, another file's git blob id), each listed name, ETag
    /// and commit, and the ETag and commit each file's own answer carries.
    /// `err_file` is the file errors about the whole repository name.
    fn plan(&self, wanted: Option<&[&str]>, err_file: &str) -> Result<Plan, HubError> {
        let revision = self.repo.revision();
        if !safe_name::is_commit(revision) {
            safe_name::relative(NameKind::Revision, revision)
                .map_err(|e| self.unsafe_name(err_file, e))?;
        }
        let commit = (self.commit_of)(&self.handle, revision)
            .map_err(|e| self.classify(err_file, e))?
            .ok_or_else(|| HubError::Transfer {
                at: self.at(err_file),
                endpoint: self.endpoint.clone(),
                why: "the hub named no commit for the revision".into(),
            })?;
        safe_name::commit(&commit).map_err(|e| self.unsafe_name(err_file, e))?;
        let listed = self
            .handle
            .list_tree()
            .revision(commit.clone())
            .recursive(true)
            .send()
            .map_err(|e| self.classify(err_file, e))?;
        let mut all = Vec::new();
        for entry in listed {
            let RepoTreeEntry::File { oid, path, lfs, .. } = entry else {
                continue;
            };
            safe_name::file(&path).map_err(|e| self.unsafe_name(&path, e))?;
            let is_lfs = lfs.is_some();
            let etag = match lfs {
                Some(l) => l.sha256,
                None => Some(oid),
            }
            .map(|e| e.to_ascii_lowercase());
            if let Some(etag) = &etag {
                safe_name::etag(etag).map_err(|e| self.unsafe_name(&path, e))?;
            }
            all.push(Entry {
                path,
                etag,
                lfs: is_lfs,
            });
        }
        all.sort_by(|a, b| a.path.cmp(&b.path));
        safe_name::distinct_files(all.iter().map(|e| e.path.as_str()))
            .map_err(|e| self.unsafe_name(&e.name.clone(), e))?;
        let entries = match wanted {
            None => all,
            Some(files) => {
                let mut picked = Vec::new();
                for f in files {
                    safe_name::file(f).map_err(|e| self.unsafe_name(f, e))?;
                    match all.iter().find(|e| e.path == *f) {
                        Some(e) => picked.push(e.clone()),
                        None => {
                            return Err(HubError::FileNotFound {
                                at: self.at(f),
                                endpoint: self.endpoint.clone(),
                            })
                        }
                    }
                }
                picked
            }
        };
        let mut entries = entries;
        for e in &mut entries {
            self.check_headers(e, &commit)?;
        }
        Ok(Plan { commit, entries })
    }

    /// The ETag and commit the hub's answer for `entry` carries must be
    /// plain hex and agree with the listing (hf-hub would name the blob and
    /// the snapshot after them). An answer without them (a CDN's, after a
    /// redirect) has nothing to check, and nothing of it is used.
    fn check_headers(&self, entry: &mut Entry, commit: &str) -> Result<(), HubError> {
        let meta = match self
            .handle
            .get_file_metadata()
            .filepath(entry.path.clone())
            .revision(commit)
            .send()
        {
            Ok(m) => m,
            Err(HFError::MalformedResponse { .. }) => return Ok(()),
            Err(e) => return Err(self.classify(&entry.path, e)),
        };
        let etag = meta.etag.to_ascii_lowercase();
        safe_name::etag(&etag).map_err(|e| self.unsafe_name(&entry.path, e))?;
        safe_name::commit(&meta.commit_hash).map_err(|e| self.unsafe_name(&entry.path, e))?;
        let listed = entry.etag.clone().unwrap_or_else(|| etag.clone());
        // An LFS file is named by its sha256, another by its git blob id.
        let length_ok = etag.len() == if entry.lfs { 64 } else { 40 };
        if etag != listed || !length_ok || !meta.commit_hash.eq_ignore_ascii_case(commit) {
            return Err(HubError::Rejected {
                at: self.at(&entry.path),
                why: format!(
                    "the hub's answer names ETag '{etag}' at commit '{}', its file list {} \
                     at commit {commit}; nothing was downloaded",
                    meta.commit_hash,
                    entry.etag.as_deref().unwrap_or("an LFS file")
                ),
            });
        }
        entry.etag = Some(etag);
        Ok(())
    }

    /// Fetches the checked `plan` into the cache: each missing blob through
    /// a staging folder (hf-hub writes only there, under the checked name),
    /// checked against its ETag and renamed to `blobs/ETAG`; then the
    /// snapshot's relative links and the ref. Returns the snapshot folder.
    fn fetch(&self, plan: &Plan) -> Result<PathBuf, HubError> {
        let folder = self.folder();
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| HubError::Io { path, source }
        };
        let blobs = folder.join("blobs");
        std::fs::create_dir_all(&blobs).map_err(io(&blobs))?;
        let snapshot = folder.join("snapshots").join(&plan.commit);
        let mut named = Vec::new();
        for e in &plan.entries {
            let etag = match &e.etag {
                Some(etag) if blobs.join(etag).is_file() => etag.clone(),
                _ => self.fetch_blob(e, &plan.commit, &blobs)?,
            };
            named.push((e, etag));
        }
        for (e, etag) in named {
            link_in_snapshot(&folder, &snapshot, &e.path, &etag).map_err(|(path, source)| {
                match source {
                    LinkError::Io(source) => HubError::Io { path, source },
                    LinkError::Unsafe(u) => self.unsafe_name(&e.path, u),
                }
            })?;
        }
        let revision = self.repo.revision();
        if !safe_name::is_commit(revision) {
            let r = folder.join("refs").join(revision);
            if let Some(parent) = r.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            crate::util::write_atomic(&r, plan.commit.as_bytes())?;
        }
        Ok(snapshot)
    }

    /// One blob: downloaded into `blobs/.plies-incoming-PID-N/` (hf-hub's
    /// local-folder download, which names nothing after the headers),
    /// checked against its ETag, renamed to `blobs/ETAG`; the staging
    /// folder is removed whatever happens. Returns the ETag: an LFS file
    /// whose sha256 the hub did not say is named by its bytes' sha256.
    fn fetch_blob(&self, e: &Entry, commit: &str, blobs: &Path) -> Result<String, HubError> {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let staging = blobs.join(format!(".plies-incoming-{}-{n}", std::process::id()));
        struct Cleanup<'a>(&'a Path);
        impl Drop for Cleanup<'_> {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(self.0);
            }
        }
        let _cleanup = Cleanup(&staging);
        let got = self
            .handle
            .download_file()
            .filename(e.path.clone())
            .revision(commit.to_string())
            .local_dir(staging.clone())
            .send()
            .map_err(|err| self.classify(&e.path, err))?;
        let staged = staging.join(&e.path);
        if got != staged {
            return Err(HubError::Rejected {
                at: self.at(&e.path),
                why: format!(
                    "hf-hub wrote {} instead of {}; nothing was kept",
                    got.display(),
                    staged.display()
                ),
            });
        }
        let etag = self.check_blob(&e.path, &staged, e.etag.as_deref(), e.lfs)?;
        let blob = blobs.join(&etag);
        std::fs::rename(&staged, &blob).map_err(|source| HubError::Io { path: blob, source })?;
        Ok(etag)
    }

    /// A blob is named by its ETag: an LFS file's sha256, or a regular
    /// file's git blob id (sha1 of `blob LEN\0` + bytes). The bytes must
    /// have `expected`; the file is hashed as it is read. Returns the hash.
    fn check_blob(
        &self,
        file: &str,
        path: &Path,
        expected: Option<&str>,
        lfs: bool,
    ) -> Result<String, HubError> {
        let sha256_named = expected.map_or(lfs, |e| e.len() == 64);
        use std::io::Read;
        let io = |source| HubError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let mut sha256 = Sha256::new();
        let mut sha1 = Sha1::new();
        sha1.update(format!("blob {len}\0").as_bytes());
        let mut head = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let k = f.read(&mut buf).map_err(io)?;
            if k == 0 {
                break;
            }
            if head.len() < 512 {
                head.extend_from_slice(&buf[..k.min(512 - head.len())]);
            }
            if sha256_named {
                sha256.update(&buf[..k]);
            } else {
                sha1.update(&buf[..k]);
            }
        }
        let (algorithm, found) = if sha256_named {
            ("sha256", hex(&sha256.finalize()))
        } else {
            ("git blob id", hex(&sha1.finalize()))
        };
        let Some(name) = expected.filter(|name| *name != found) else {
            return Ok(found);
        };
        // A short text body is most likely the server's error message.
        let sent = match std::str::from_utf8(&head) {
            Ok(text) if len <= 512 => format!(": {}", text.trim()),
            _ => String::new(),
        };
        Err(HubError::Corrupt {
            at: self.at(file),
            endpoint: self.endpoint.clone(),
            mismatch: Box::new(Mismatch {
                algorithm,
                expected: name.to_string(),
                found,
                received: format!("{len} bytes{sent}"),
            }),
        })
    }

    /// The snapshot directory holding `files`: from the cache when every
    /// one is there (no network), else all of them from the network at the
    /// one commit the revision points to, every name checked first.
    fn files(&self, files: &[&str]) -> Result<PathBuf, HubError> {
        let cached: Vec<Option<PathBuf>> = files.iter().map(|f| self.cached(f)).collect();
        if let Some(paths) = cached.iter().cloned().collect::<Option<Vec<PathBuf>>>() {
            if let Some(dir) = same_snapshot(files, &paths) {
                return Ok(dir);
            }
        }
        // Errors about the whole repository name a file the cache lacks.
        let missing = files
            .iter()
            .zip(&cached)
            .find(|(_, c)| c.is_none())
            .map_or(files[0], |(f, _)| *f);
        let plan = self.plan(Some(files), missing)?;
        self.fetch(&plan)
    }

    /// Every file of the revision, through the network.
    fn everything(&self) -> Result<Downloaded, HubError> {
        let plan = self.plan(None, "")?;
        let snapshot = self.fetch(&plan)?;
        Ok(Downloaded {
            snapshot,
            commit: plan.commit.clone(),
            files: plan.entries.iter().map(|e| e.path.clone()).collect(),
        })
    }

    fn upload(&self, dir: &Path, private: bool, message: &str) -> Result<Uploaded, HubError> {
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
        if revision != super::DEFAULT_REVISION {
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

/// Why a snapshot link could not be made.
enum LinkError {
    Io(std::io::Error),
    Unsafe(UnsafeName),
}

/// `snapshot/file -> ../../blobs/ETAG` (one more `../` per folder in
/// `file`), as huggingface_hub links them. The folders on the way are made
/// one by one, and one that is a symbolic link (a cache someone tampered
/// with) is refused rather than followed.
fn link_in_snapshot(
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
