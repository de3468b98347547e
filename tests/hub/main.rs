//! `plies hub` and `ckpt:hf:` against `scripts/hub_server.py`, a loopback
//! server speaking the hub protocol (standard-library Python, so these
//! tests need only `python3`), and Python's `huggingface_hub` and
//! `safetensors` (`scripts/hub_interop.py`) through the same server and
//! the same cache directory.
//!
//! Python with huggingface_hub: `$PLIES_HUB_PYTHON`, else
//! `.venv-hub/bin/python` in the crate root (created with pip when
//! missing); without it the interop test prints a note and passes, unless
//! `PLIES_REQUIRE_PYTHON=1` (as in CI), when it fails.
//!
//! | module | subject |
//! | --- | --- |
//! | `server` | the loopback hub and its test endpoints |
//! | `env` | the cache and environment plies and Python share |
//! | `files` | the crate's files, copies, comparisons |
//! | `round_trip` | a checkpoint up and back into matches, AEI, evaluation, training |
//! | `failures` | every failure naming the repository, revision and file |
//! | `interop` | plies and Python's huggingface_hub sharing one cache |
//! | `hostile` | hostile names and headers from the hub, refused before writing |
//! | `links` | links out of a folder, neither uploaded nor followed |

#[path = "../common/mod.rs"]
mod common;

mod env;
mod failures;
mod files;
mod hostile;
mod interop;
#[cfg(unix)]
mod links;
mod round_trip;
mod server;
