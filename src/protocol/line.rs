//! Engine protocols speak in lines: a message goes out as exactly one
//! line whatever its text holds (an error naming a file with a newline in
//! it cannot split into two messages).

use std::io::{self, Write};

/// Writes `text` as one line, its own line breaks turned into spaces.
pub fn write_line<W: Write + ?Sized>(w: &mut W, text: &str) -> io::Result<()> {
    let one_line: String = text
        .chars()
        .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
        .collect();
    w.write_all(one_line.as_bytes())?;
    w.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_one_line() {
        let mut out = Vec::new();
        write_line(&mut out, "log Error: a\nb\r\nc").unwrap();
        write_line(&mut out, "readyok").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "log Error: a b  c\nreadyok\n"
        );
    }
}
