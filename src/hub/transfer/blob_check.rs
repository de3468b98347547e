//! A fetched blob checked against the ETag that names it: an LFS file's
//! sha256, or a regular file's git blob id.

use super::Remote;
use crate::hub::{HubError, Mismatch};
use hf_hub::RepoType;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::path::Path;

impl<T: RepoType> Remote<T> {
    /// A blob is named by its ETag: an LFS file's sha256, or a regular
    /// file's git blob id (sha1 of `blob LEN\0` + bytes). The bytes must
    /// have `expected`; the file is hashed as it is read. Returns the hash.
    pub(super) fn check_blob(
        &self,
        file: &str,
        path: &Path,
        expected: Option<&str>,
        lfs: bool,
    ) -> Result<String, HubError> {
        let sha256_named = expected.map_or(lfs, |e| e.len() == 64);
        use std::io::Read;
        let io = |source| HubError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let mut sha256 = Sha256::new();
        let mut sha1 = Sha1::new();
        sha1.update(format!("blob {len}\0").as_bytes());
        let mut head = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let k = f.read(&mut buf).map_err(io)?;
            if k == 0 {
                break;
            }
            if head.len() < 512 {
                head.extend_from_slice(&buf[..k.min(512 - head.len())]);
            }
            if sha256_named {
                sha256.update(&buf[..k]);
            } else {
                sha1.update(&buf[..k]);
            }
        }
        let (algorithm, found) = if sha256_named {
            ("sha256", hex(&sha256.finalize()))
        } else {
            ("git blob id", hex(&sha1.finalize()))
        };
        let Some(name) = expected.filter(|name| *name != found) else {
            return Ok(found);
        };
        // A short text body is most likely the server's error message.
        let sent = match std::str::from_utf8(&head) {
            Ok(text) if len <= 512 => format!(": {}", text.trim()),
            _ => String::new(),
        };
        Err(HubError::Corrupt {
            at: self.at(file),
            endpoint: self.endpoint.clone(),
            mismatch: Box::new(Mismatch {
                algorithm,
                expected: name.to_string(),
                found,
                received: format!("{len} bytes{sent}"),
            }),
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
