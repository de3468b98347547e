//! Checkpoints shipped inside the program, by name: `ckpt:builtin:NAME`
//! (or `builtin:NAME` wherever a checkpoint or an evaluator is named).
//! A Gomocup or AEI manager starts an engine in a folder of its own, where
//! no relative path reaches the repository's `checkpoints/`; these resolve
//! wherever plies runs. Each is a folder of `checkpoints/` embedded at build
//! time, written out once to a folder under the system's temporary
//! directory named by its contents' digest, then loaded and checked as any
//! other checkpoint is.

use super::{CheckpointError, CARD_FILE, CONFIG_FILE, WEIGHTS_FILE};
use crate::util::write_atomic;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A checkpoint shipped in the program.
pub struct Builtin {
    /// The name after `builtin:`.
    pub name: &'static str,
    /// The repository folder it comes from (`checkpoints/<folder>`).
    pub folder: &'static str,
    /// Its files: the config, the weights and the model card.
    files: [(&'static str, &'static [u8]); 3],
}

/// Embeds `checkpoints/<folder>` as `builtin:<name>`.
macro_rules! builtin {
    ($name:literal, $folder:literal) => {
        Builtin {
            name: $name,
            folder: $folder,
            files: [
                (
                    CONFIG_FILE,
                    include_bytes!(concat!("../../checkpoints/", $folder, "/config.json")),
                ),
                (
                    WEIGHTS_FILE,
                    include_bytes!(concat!("../../checkpoints/", $folder, "/model.safetensors")),
                ),
                (
                    CARD_FILE,
                    include_bytes!(concat!("../../checkpoints/", $folder, "/README.md")),
                ),
            ],
        }
    };
}

/// Every shipped checkpoint; its card in `checkpoints/<folder>/README.md`
/// says how it was made and how it plays.
pub const BUILTINS: &[Builtin] = &[
    builtin!("tictactoe", "tictactoe-mlp80-td"),
    builtin!("connect-four", "connect-four-resnet-tiny-loop"),
    builtin!("arimaa", "arimaa-table-20x8x8-comparison"),
    builtin!("atari-go", "atari-go-9-resnet-tiny-loop"),
    builtin!("pentago", "pentago-resnet-tiny-loop"),
    builtin!("amazons", "amazons-10-elliott80-search"),
    builtin!("gomoku", "gomoku-15-cnn3-comparison"),
];

/// The shipped checkpoint `name`; an unknown name is an error listing the
/// shipped ones.
pub fn builtin(name: &str) -> Result<&'static Builtin, CheckpointError> {
    BUILTINS
        .iter()
        .find(|b| b.name == name)
        .ok_or_else(|| CheckpointError::UnknownBuiltin {
            name: name.to_string(),
            known: BUILTINS
                .iter()
                .map(|b| b.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The folder shipped checkpoints are written under: one per user, so on
/// a shared machine one user's folder never blocks another's.
fn shared_root() -> PathBuf {
    let user = std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .unwrap_or_default();
    let safe: String = user
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    std::env::temp_dir().join(format!("plies-builtin-{safe}"))
}

impl Builtin {
    /// The folder its files are written to: named by their digest, so a
    /// program shipping other bytes under the same name never reads these.
    pub fn directory(&self) -> PathBuf {
        self.directory_in(&shared_root())
    }

    fn directory_in(&self, root: &Path) -> PathBuf {
        let mut hash = Sha256::new();
        for (name, bytes) in &self.files {
            hash.update(name.as_bytes());
            hash.update((bytes.len() as u64).to_le_bytes());
            hash.update(bytes);
        }
        let digest = hash.finalize();
        let short: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        root.join(format!("{}-{short}", self.name))
    }

    /// Its folder, its files written out first where missing or changed
    /// (each atomically, so a reader in another process sees a whole file
    /// or none).
    pub fn materialize(&self) -> Result<PathBuf, CheckpointError> {
        self.materialize_in(&shared_root())
    }

    fn materialize_in(&self, root: &Path) -> Result<PathBuf, CheckpointError> {
        let dir = self.directory_in(root);
        for (name, bytes) in &self.files {
            let path = dir.join(name);
            let current = std::fs::read(&path).ok();
            if current.as_deref() != Some(*bytes) {
                write_atomic(&path, bytes)?;
            }
        }
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_builtin_is_written_out_whole_and_loads_as_its_game() {
        // Its own root: other tests read the shared folder meanwhile.
        let root = tempfile::tempdir().unwrap();
        let b = builtin("tictactoe").unwrap();
        let dir = b.materialize_in(root.path()).unwrap();
        for (name, bytes) in &b.files {
            assert_eq!(std::fs::read(dir.join(name)).unwrap(), *bytes, "{name}");
        }
        // A damaged file is written again.
        std::fs::write(dir.join(WEIGHTS_FILE), b"garbage").unwrap();
        assert_eq!(b.materialize_in(root.path()).unwrap(), dir);
        assert_eq!(std::fs::read(dir.join(WEIGHTS_FILE)).unwrap(), b.files[1].1);
        let ck = crate::checkpoint::load(&dir, Some("tictactoe"), None).unwrap();
        assert_eq!(ck.config.game, "tictactoe");
    }

    #[test]
    fn every_builtin_loads_and_names_are_unique() {
        for b in BUILTINS {
            let ck = crate::checkpoint::load(&b.materialize().unwrap(), None, None);
            assert!(ck.is_ok(), "builtin:{}: {:?}", b.name, ck.err());
            assert_eq!(BUILTINS.iter().filter(|o| o.name == b.name).count(), 1);
        }
    }

    #[test]
    fn an_unknown_name_lists_the_shipped_ones() {
        let e = builtin("chess").err().unwrap().to_string();
        assert!(
            e.contains("builtin:chess") && e.contains("tictactoe"),
            "{e}"
        );
    }
}
