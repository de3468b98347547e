//! Where a checkpoint comes from, the one place a checkpoint spec becomes a
//! directory: `PATH`, `ckpt:PATH`, `ckpt:hf:ORG/NAME[@REVISION]` (also
//! `hf:ORG/NAME[@REVISION]`), a model repository on the hub read through
//! the shared cache, or `ckpt:builtin:NAME` (also `builtin:NAME`), a
//! checkpoint shipped in the program ([`super::builtin`]). Players (`eval=ckpt:...`), both engines, `evaluate`
//! and `train --model` all resolve through [`CheckpointSource`].

use super::{load, Checkpoint, CheckpointError, CARD_FILE, CONFIG_FILE, WEIGHTS_FILE};
use crate::hub::{RepoKind, RepoRef};
use std::fmt;
use std::path::{Path, PathBuf};

const HUB_PREFIX: &str = "hf:";
/// The prefix of a checkpoint shipped in the program.
pub const BUILTIN_PREFIX: &str = "builtin:";

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CheckpointSource {
    Dir(PathBuf),
    Hub(RepoRef),
    /// A checkpoint shipped in the program ([`super::BUILTINS`]).
    Builtin(&'static str),
}

impl CheckpointSource {
    /// Parses a spec, with or without its `ckpt:` prefix.
    pub fn parse(spec: &str) -> Result<CheckpointSource, CheckpointError> {
        let spec = spec.strip_prefix("ckpt:").unwrap_or(spec);
        if let Some(name) = spec.strip_prefix(BUILTIN_PREFIX) {
            return Ok(CheckpointSource::Builtin(super::builtin(name)?.name));
        }
        match spec.strip_prefix(HUB_PREFIX) {
            Some(repo) => Ok(CheckpointSource::Hub(RepoRef::parse(
                RepoKind::Model,
                repo,
            )?)),
            None => Ok(CheckpointSource::Dir(PathBuf::from(spec))),
        }
    }

    /// Whether `spec` names a checkpoint rather than something else a flag
    /// takes (a preset, a JSON file): a hub reference, `ckpt:...`, or a
    /// directory.
    pub fn names_checkpoint(spec: &str) -> bool {
        spec.starts_with("ckpt:")
            || spec.starts_with(HUB_PREFIX)
            || spec.starts_with(BUILTIN_PREFIX)
            || Path::new(spec).is_dir()
    }

    /// The local directory: the path itself, or the cached snapshot of the
    /// hub repository (downloaded only when the cache lacks a file).
    pub fn directory(&self) -> Result<PathBuf, CheckpointError> {
        match self {
            CheckpointSource::Dir(dir) => Ok(dir.clone()),
            CheckpointSource::Hub(repo) => Ok(crate::hub::fetch_files(
                repo,
                &[CONFIG_FILE, WEIGHTS_FILE, CARD_FILE],
            )?),
            CheckpointSource::Builtin(name) => super::builtin(name)?.materialize(),
        }
    }

    /// A short name for reports: the directory's or the repository's name.
    pub fn label(&self) -> String {
        match self {
            CheckpointSource::Dir(dir) => dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_else(|| "ckpt".into()),
            CheckpointSource::Hub(repo) => repo.name.clone(),
            CheckpointSource::Builtin(name) => name.to_string(),
        }
    }

    /// Resolves and loads, with the checks of [`load`].
    pub fn open(
        &self,
        game: Option<&str>,
        encoder: Option<&str>,
    ) -> Result<Checkpoint, CheckpointError> {
        load(&self.directory()?, game, encoder)
    }
}

impl fmt::Display for CheckpointSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckpointSource::Dir(dir) => write!(f, "{}", dir.display()),
            CheckpointSource::Hub(repo) => write!(f, "{HUB_PREFIX}{repo}"),
            CheckpointSource::Builtin(name) => write!(f, "{BUILTIN_PREFIX}{name}"),
        }
    }
}

/// Loads the checkpoint `spec` names (see the module docs).
pub fn open(
    spec: &str,
    game: Option<&str>,
    encoder: Option<&str>,
) -> Result<Checkpoint, CheckpointError> {
    CheckpointSource::parse(spec)?.open(game, encoder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_name_a_directory_or_a_hub_repository() {
        let dir = CheckpointSource::parse("ckpt:runs/x/best").unwrap();
        assert_eq!(dir, CheckpointSource::Dir("runs/x/best".into()));
        let hub = CheckpointSource::parse("ckpt:hf:team/ttt@v2").unwrap();
        let CheckpointSource::Hub(r) = &hub else {
            panic!("{hub:?}")
        };
        assert_eq!((r.id().as_str(), r.revision()), ("team/ttt", "v2"));
        assert_eq!(hub, CheckpointSource::parse("hf:team/ttt@v2").unwrap());
        assert_eq!(hub.to_string(), "hf:team/ttt@v2");
        let e = CheckpointSource::parse("ckpt:hf:noslash").unwrap_err();
        assert!(e.to_string().contains("'noslash'"), "{e}");
    }
}
