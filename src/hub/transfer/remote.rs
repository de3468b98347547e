//! One repository on one hub: the hf-hub client and handle, where its
//! files go in the cache, and the hub's answers as plies' errors.

use crate::hub::{At, HubError, RepoKind, RepoRef};
use crate::util::safe_name::UnsafeName;
use hf_hub::{
    HFClient, HFError, HFRepositorySync, HFResult, RepoType, RepoTypeDataset, RepoTypeModel,
};
use std::path::PathBuf;

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
pub(super) type CommitOf<T> = fn(&HFRepositorySync<T>, &str) -> HFResult<Option<String>>;

pub(super) fn model_commit(
    h: &HFRepositorySync<RepoTypeModel>,
    revision: &str,
) -> HFResult<Option<String>> {
    Ok(h.info().revision(revision.to_string()).send()?.sha)
}

pub(super) fn dataset_commit(
    h: &HFRepositorySync<RepoTypeDataset>,
    revision: &str,
) -> HFResult<Option<String>> {
    Ok(h.info().revision(revision.to_string()).send()?.sha)
}

/// One repository on one hub, with what errors need to name.
pub(super) struct Remote<T: RepoType> {
    pub(super) handle: HFRepositorySync<T>,
    pub(super) commit_of: CommitOf<T>,
    pub(super) repo: RepoRef,
    pub(super) endpoint: String,
    pub(super) cache: PathBuf,
}

pub(super) fn client(repo: &RepoRef) -> Result<hf_hub::HFClientSync, HubError> {
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
    pub(super) fn new(handle: HFRepositorySync<T>, commit_of: CommitOf<T>, repo: &RepoRef) -> Self {
        Remote {
            handle,
            commit_of,
            repo: repo.clone(),
            endpoint: endpoint(),
            cache: cache_dir(),
        }
    }

    pub(super) fn at(&self, file: &str) -> At {
        At {
            repo: self.repo.to_string(),
            file: file.to_string(),
        }
    }

    /// The hub's answer as one of plies' errors about `file`. The hub's
    /// `X-Error-Code` decides what was not found (hf-hub names a 404 by the
    /// call it answered: a repository's missing `main` is a "revision").
    pub(super) fn classify(&self, file: &str, e: HFError) -> HubError {
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
    pub(super) fn folder(&self) -> PathBuf {
        let plural = match self.repo.kind {
            RepoKind::Model => "models",
            RepoKind::Dataset => "datasets",
        };
        self.cache
            .join(format!("{plural}--{}--{}", self.repo.owner, self.repo.name))
    }

    /// An unsafe name in what the hub said about `file`.
    pub(super) fn unsafe_name(&self, file: &str, source: UnsafeName) -> HubError {
        HubError::Unsafe {
            at: self.at(file),
            name: Box::new(source),
            action: "nothing was downloaded",
        }
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
