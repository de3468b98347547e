//! What a download fetches, decided before anything is written: the
//! commit the revision points to and its files, each name, ETag and
//! commit checked, in the listing and in each file's own answer.

use super::Remote;
use crate::hub::HubError;
use crate::util::safe_name::{self, NameKind};
use hf_hub::repository::RepoTreeEntry;
use hf_hub::{HFError, RepoType};

/// A listed file: its checked path and, where the hub said it, its
/// checked ETag (hf-hub 1.0 drops an LFS file's sha256 from the listing,
/// so for those it comes from the file's own answer, or failing that from
/// the bytes themselves).
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub(super) path: String,
    pub(super) etag: Option<String>,
    pub(super) lfs: bool,
}

/// What a download fetches: the checked commit and files.
pub(super) struct Plan {
    pub(super) commit: String,
    pub(super) entries: Vec<Entry>,
}

impl<T: RepoType> Remote<T> {
    /// What the hub says the revision holds, every name and header checked
    /// before anything is written: the commit the revision points to, then
    /// every file of that commit (or only `wanted`) with its ETag (an LFS
    /// file's sha256, another file's git blob id), each listed name, ETag
    /// and commit, and the ETag and commit each file's own answer carries.
    /// `err_file` is the file errors about the whole repository name.
    pub(super) fn plan(&self, wanted: Option<&[&str]>, err_file: &str) -> Result<Plan, HubError> {
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
}
