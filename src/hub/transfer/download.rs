//! Downloads: the cache first, the network only for what it lacks; each
//! blob through a staging folder of its own, checked, then renamed into
//! `blobs/`; then the snapshot's links and the ref.

use super::plan::{Entry, Plan};
use super::snapshot_link::{link_in_snapshot, LinkError};
use super::{Downloaded, Remote};
use crate::hub::HubError;
use crate::util::safe_name::{self, NameKind};
use hf_hub::RepoType;
use std::path::{Path, PathBuf};

impl<T: RepoType> Remote<T> {
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

    /// The snapshot directory holding `files`: from the cache when every
    /// one is there (no network), else all of them from the network at the
    /// one commit the revision points to, every name checked first.
    pub(super) fn files(&self, files: &[&str]) -> Result<PathBuf, HubError> {
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
    pub(super) fn everything(&self) -> Result<Downloaded, HubError> {
        let plan = self.plan(None, "")?;
        let snapshot = self.fetch(&plan)?;
        Ok(Downloaded {
            snapshot,
            commit: plan.commit.clone(),
            files: plan.entries.iter().map(|e| e.path.clone()).collect(),
        })
    }
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
