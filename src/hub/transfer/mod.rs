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
//!
//! | file | concept |
//! | --- | --- |
//! | `remote.rs` | one repository on one hub: the client, the cache folder, the hub's errors as plies' |
//! | `plan.rs` | what a download fetches: the commit and files, every name and header checked |
//! | `download.rs` | the cache first, then the network: blobs through staging, the snapshot, the ref |
//! | `blob_check.rs` | a fetched blob against its ETag (sha256 or git blob id) |
//! | `snapshot_link.rs` | the snapshot's relative links to the blobs, refusing linked folders |
//! | `upload.rs` | the folder's files, checked, up to the hub |

mod blob_check;
mod download;
mod plan;
mod remote;
mod snapshot_link;
mod upload;

use super::{HubError, RepoKind, RepoRef};
use remote::{client, dataset_commit, model_commit, Remote};
use std::path::{Path, PathBuf};

pub use remote::cache_dir;

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
