//! `ORG/NAME[@REVISION]`: a repository on the hub and the revision asked for.

use super::HubError;
use std::fmt;

pub const DEFAULT_REVISION: &str = "main";

/// The two kinds of repository plies shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepoKind {
    /// A checkpoint: `model.safetensors`, `config.json`, `README.md`.
    Model,
    /// A dataset: `manifest.json` and its shards.
    Dataset,
}

impl RepoKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RepoKind::Model => "model",
            RepoKind::Dataset => "dataset",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoRef {
    pub kind: RepoKind,
    pub owner: String,
    pub name: String,
    /// `None`: the default branch, `main`.
    pub revision: Option<String>,
}

impl RepoRef {
    /// Parses `ORG/NAME[@REVISION]`.
    pub fn parse(kind: RepoKind, spec: &str) -> Result<RepoRef, HubError> {
        let bad = |why: &str| HubError::BadRef {
            spec: spec.to_string(),
            why: why.to_string(),
        };
        let (id, revision) = match spec.split_once('@') {
            Some((_, "")) => return Err(bad("the revision after '@' is empty")),
            Some((id, rev)) => (id, Some(rev.to_string())),
            None => (spec, None),
        };
        let (owner, name) = id
            .split_once('/')
            .ok_or_else(|| bad("no '/' between the organisation and the name"))?;
        let valid = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && !s.starts_with('.')
        };
        if !valid(owner) || !valid(name) {
            return Err(bad(
                "the organisation and the name are letters, digits, '-', '_' and '.'",
            ));
        }
        Ok(RepoRef {
            kind,
            owner: owner.to_string(),
            name: name.to_string(),
            revision,
        })
    }

    /// `ORG/NAME`.
    pub fn id(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    pub fn revision(&self) -> &str {
        self.revision.as_deref().unwrap_or(DEFAULT_REVISION)
    }
}

/// `ORG/NAME@REVISION` (datasets prefixed `datasets/`, as in hub URLs).
impl fmt::Display for RepoRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix = match self.kind {
            RepoKind::Model => "",
            RepoKind::Dataset => "datasets/",
        };
        write!(f, "{prefix}{}@{}", self.id(), self.revision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_repo_and_revision() {
        let r = RepoRef::parse(RepoKind::Model, "team-a/ttt_mlp.v2@v1").unwrap();
        assert_eq!(
            (r.owner.as_str(), r.name.as_str()),
            ("team-a", "ttt_mlp.v2")
        );
        assert_eq!(r.revision(), "v1");
        assert_eq!(r.to_string(), "team-a/ttt_mlp.v2@v1");
        let d = RepoRef::parse(RepoKind::Dataset, "org/data").unwrap();
        assert_eq!(d.revision(), "main");
        assert_eq!(d.to_string(), "datasets/org/data@main");
    }

    #[test]
    fn refuses_malformed_refs_naming_the_spec() {
        for bad in [
            "noslash",
            "org/",
            "/name",
            "org/na me",
            "org/name@",
            "org/.hidden",
        ] {
            let e = RepoRef::parse(RepoKind::Model, bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains(&format!("'{bad}'")), "{e}");
        }
    }
}
