//! Directory syncs and sha256 of what is written or read (the crash-safe
//! writes themselves are [`crate::util::atomic`]'s).

use std::io::{self, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::error::{DatasetError, Result};

/// Lower-case hex of a digest.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex sha256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A writer that hashes and counts what passes through it.
pub(crate) struct HashingWriter<W> {
    inner: W,
    hasher: Sha256,
    bytes: u64,
}

impl<W: Write> HashingWriter<W> {
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// The inner writer, the hex sha256 and the byte count of all bytes written.
    pub fn finish(self) -> (W, String, u64) {
        (self.inner, hex(&self.hasher.finalize()), self.bytes)
    }
}

impl<W: Write> Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that hashes what passes through it, so a file's sha256 is
/// checked in the same pass that reads it.
pub(crate) struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
}

impl<R: Read> HashingReader<R> {
    pub fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: Sha256::new(),
        }
    }

    /// The hex sha256 of all bytes read.
    pub fn finish(self) -> String {
        hex(&self.hasher.finalize())
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Makes a directory's entries (creations, renames, removals) durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    crate::util::atomic::sync_dir(dir).map_err(DatasetError::io(dir, "fsync the directory"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashing_writer_matches_one_shot_hash() {
        let mut w = HashingWriter::new(Vec::new());
        w.write_all(b"hello ").unwrap();
        w.write_all(b"world").unwrap();
        let (inner, hash, n) = w.finish();
        assert_eq!(inner, b"hello world");
        assert_eq!(n, 11);
        assert_eq!(hash, sha256_hex(b"hello world"));
        let mut r = HashingReader::new(&b"hello world"[..]);
        let mut read = Vec::new();
        r.read_to_end(&mut read).unwrap();
        assert_eq!(r.finish(), sha256_hex(&read));
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
