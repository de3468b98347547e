//! Reading text files made elsewhere: editors on some systems put a UTF-8
//! byte-order mark (EF BB BF) before the first line, which would otherwise
//! become part of the first header, record or move. Every reader of outside
//! text files goes through here.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// The UTF-8 byte-order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// `text` without a leading byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Moves `reader` past a byte-order mark at its start. Only the bytes that
/// the first fill of its buffer yields are looked at, which for files and
/// buffers of more than three bytes is the whole mark.
pub fn skip_bom<R: BufRead>(reader: &mut R) -> io::Result<()> {
    if reader.fill_buf()?.starts_with(BOM) {
        reader.consume(BOM.len());
    }
    Ok(())
}

/// Opens `path` for reading lines, past a leading byte-order mark.
pub fn open_text(path: &Path) -> io::Result<BufReader<File>> {
    let mut reader = BufReader::new(File::open(path)?);
    skip_bom(&mut reader)?;
    Ok(reader)
}

/// The whole text of `path`, without a leading byte-order mark.
pub fn read_text(path: &Path) -> io::Result<String> {
    let text = std::fs::read_to_string(path)?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_mark_is_dropped_and_nothing_else() {
        assert_eq!(strip_bom("\u{feff}id\tx"), "id\tx");
        assert_eq!(strip_bom("id\u{feff}"), "id\u{feff}");
        for (bytes, rest) in [
            (&b"\xEF\xBB\xBFab\n"[..], "ab\n"),
            (b"ab\n", "ab\n"),
            (b"\xEF\xBB", "\u{fffd}"),
            (b"", ""),
        ] {
            let mut r = bytes;
            skip_bom(&mut r).unwrap();
            assert_eq!(String::from_utf8_lossy(r), rest);
        }
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.txt");
        std::fs::write(&p, b"\xEF\xBB\xBFline 1\nline 2\n").unwrap();
        assert_eq!(read_text(&p).unwrap(), "line 1\nline 2\n");
        let first = open_text(&p).unwrap().lines().next().unwrap().unwrap();
        assert_eq!(first, "line 1");
    }
}
