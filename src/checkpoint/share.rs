//! `plies hub download` and `plies hub upload`: a checkpoint or a dataset
//! between a directory, the shared cache and the hub, checked on both
//! sides (a checkpoint as `checkpoint::load` checks it, a dataset as
//! `Dataset::verify` does: every shard's size and sha256 against the
//! manifest).

use crate::checkpoint::{self, CheckpointError};
use crate::dataset::{Dataset, DatasetError};
use crate::hub::{download, upload, At, HubError, RepoKind, RepoRef};
use crate::util::replace::{remove_if_there, staging_path, swap_in};
use serde::Serialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum ShareError {
    #[error(transparent)]
    Hub(#[from] HubError),
    #[error("{at}: not a valid checkpoint: {source}")]
    Checkpoint {
        at: String,
        source: Box<CheckpointError>,
    },
    #[error("{at}: not a valid dataset: {source}")]
    Dataset {
        at: String,
        source: Box<DatasetError>,
    },
}

/// What was downloaded or uploaded, for the command's report.
#[derive(Clone, Debug, Serialize)]
pub struct ShareReport {
    pub repo: String,
    pub kind: &'static str,
    pub commit: String,
    /// The cached snapshot (download) or the uploaded directory.
    pub path: PathBuf,
    /// The copy made by `--out`, if any.
    pub out: Option<PathBuf>,
    pub files: Vec<String>,
    /// The commit's page (upload).
    pub url: Option<String>,
    /// What the check found: the checkpoint's game, encoder and model, or
    /// the dataset's rows and shards.
    pub checked: String,
}

/// Checks `dir` as a checkpoint or a dataset; `at` names it in errors.
fn check(kind: RepoKind, dir: &Path, at: &str) -> Result<String, ShareError> {
    match kind {
        RepoKind::Model => {
            let ck = checkpoint::load(dir, None, None).map_err(|e| ShareError::Checkpoint {
                at: at.to_string(),
                source: Box::new(e),
            })?;
            let c = &ck.config;
            Ok(format!(
                "checkpoint: {} {} on {}",
                c.game,
                c.model.describe(),
                c.encoder.name
            ))
        }
        RepoKind::Dataset => {
            let bad = |e| ShareError::Dataset {
                at: at.to_string(),
                source: Box::new(e),
            };
            let ds = Dataset::open(dir).map_err(bad)?;
            let report = ds.verify().map_err(bad)?;
            Ok(format!(
                "dataset: {} rows in {} shards, sha256 of every shard as in the manifest",
                report.rows,
                report.shards.len()
            ))
        }
    }
}

/// Downloads `repo` into the shared cache, checks it, and with `out`
/// copies its files there (the directory appears whole or not at all).
pub fn download_checked(repo: &RepoRef, out: Option<&Path>) -> Result<ShareReport, ShareError> {
    let got = download(repo)?;
    let checked = check(repo.kind, &got.snapshot, &repo.to_string())?;
    let files: Vec<String> = got
        .files
        .iter()
        .filter(|f| !f.split('/').any(|p| p.starts_with('.')))
        .cloned()
        .collect();
    if let Some(out) = out {
        copy_out(&got.snapshot, &files, out)?;
    }
    Ok(ShareReport {
        repo: repo.to_string(),
        kind: repo.kind.as_str(),
        commit: got.commit,
        path: got.snapshot,
        out: out.map(Path::to_path_buf),
        files,
        url: None,
        checked,
    })
}

/// Checks `dir` and commits it to `repo` (created when missing).
pub fn upload_checked(
    dir: &Path,
    repo: &RepoRef,
    private: bool,
    message: &str,
) -> Result<ShareReport, ShareError> {
    let checked = check(repo.kind, dir, &dir.display().to_string())?;
    let done = upload(dir, repo, private, message)?;
    Ok(ShareReport {
        repo: repo.to_string(),
        kind: repo.kind.as_str(),
        commit: done.commit,
        path: dir.to_path_buf(),
        out: None,
        files: done.files,
        url: Some(done.url),
        checked,
    })
}

/// Copies the snapshot's `files` (the bytes, not the cache's links) into
/// a staging directory beside `out`, then swaps it in.
fn copy_out(snapshot: &Path, files: &[String], out: &Path) -> Result<(), HubError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| HubError::Io { path, source }
    };
    let staged = staging_path(out).map_err(io(out))?;
    remove_if_there(&staged).map_err(io(&staged))?;
    for f in files {
        // Names as the download checked them, and a source that stays in
        // its repository's folder of the cache.
        let from =
            crate::util::safe_name::inside(snapshot, f).map_err(|source| HubError::Unsafe {
                at: At {
                    repo: snapshot.display().to_string(),
                    file: f.clone(),
                },
                name: Box::new(source),
                action: "nothing was copied",
            })?;
        let to = staged.join(f);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::copy(&from, &to).map_err(io(&to))?;
    }
    if files.is_empty() {
        return Err(HubError::Rejected {
            at: At {
                repo: snapshot.display().to_string(),
                file: String::new(),
            },
            why: "the repository has no files to copy".into(),
        });
    }
    swap_in(&staged, out)?;
    Ok(())
}
