//! Sharing checkpoints and datasets through a Hugging Face-style hub.
//!
//! A checkpoint directory is already a model repository (`model.safetensors`,
//! `config.json` and a model card), and a dataset directory (manifest and
//! shards) a dataset repository; this module moves them between a hub and
//! the shared cache that Python's `huggingface_hub` uses too
//! (`HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`),
//! against `HF_ENDPOINT` with `HF_TOKEN`.
//!
//! What is cached is used without asking the network; what comes from the
//! network is checked before it is used: LFS files against their sha256,
//! checkpoints as local ones are, datasets against their manifest. The
//! client itself (hf-hub) needs the `hub` cargo feature. The checked
//! transfers of checkpoint and dataset repositories
//! (`checkpoint::{download_checked, upload_checked}`) sit above this
//! module, beside the checks they run.

mod error;
mod repo_ref;
#[cfg(feature = "hub")]
mod transfer;

pub use error::{At, HubError, Mismatch};
pub use repo_ref::{RepoKind, RepoRef, DEFAULT_REVISION};
#[cfg(feature = "hub")]
pub use transfer::{cache_dir, download, fetch_files, upload, Downloaded, Uploaded};

/// `fetch_files` without the `hub` feature: a clear refusal.
#[cfg(not(feature = "hub"))]
pub fn fetch_files(repo: &RepoRef, _files: &[&str]) -> Result<std::path::PathBuf, HubError> {
    Err(HubError::NotBuilt {
        repo: repo.to_string(),
    })
}
