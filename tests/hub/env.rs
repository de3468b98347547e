//! A cache directory and the environment plies and Python share, and
//! running plies in it.

use crate::common::text;
use crate::server::{Hub, TOKEN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A cache directory and the environment plies and Python share.
pub struct Env {
    pub endpoint: String,
    pub token: String,
    pub home: PathBuf,
}

impl Env {
    pub fn new(hub: &Hub, dir: &Path) -> Env {
        Env {
            endpoint: hub.url.clone(),
            token: TOKEN.into(),
            home: dir.join("hf-home"),
        }
    }

    pub fn cache(&self) -> PathBuf {
        self.home.join("hub")
    }

    pub fn apply<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        cmd.env("HF_ENDPOINT", &self.endpoint)
            .env("HF_TOKEN", &self.token)
            .env("HF_HUB_CACHE", self.cache())
            .env("HF_HOME", &self.home)
            .env_remove("HUGGINGFACE_HUB_CACHE")
            .env("HF_HUB_DISABLE_TELEMETRY", "1")
            // The test hub speaks the LFS protocol, not Xet storage.
            .env("HF_HUB_DISABLE_XET", "1")
            .env("RAYON_NUM_THREADS", "2")
    }

    pub fn plies(&self, args: &[&str]) -> Output {
        self.apply(&mut Command::new(env!("CARGO_BIN_EXE_plies")))
            .args(args)
            .output()
            .unwrap()
    }

    /// stdout of a run that must succeed.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.plies(args);
        assert!(o.status.success(), "plies {args:?}:\n{}", text(&o));
        String::from_utf8_lossy(&o.stdout).to_string()
    }

    pub fn fails(&self, args: &[&str]) -> String {
        let o = self.plies(args);
        assert!(
            !o.status.success(),
            "plies {args:?} should fail:\n{}",
            text(&o)
        );
        String::from_utf8_lossy(&o.stderr).to_string()
    }
}
