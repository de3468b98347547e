//! Drawing square boards for people: rank numbers on the left (the top row
//! is rank N), file letters underneath.

/// The board `n` x `n` with `glyph(cell)` for cell `row * n + col` (row 0 at
/// the top) and `files[col]` under each column.
pub fn render_grid(n: usize, files: &[u8], glyph: impl Fn(usize) -> char) -> String {
    let mut s = String::with_capacity((n + 1) * (2 * n + 4));
    for row in 0..n {
        s.push_str(&format!("{:>2} ", n - row));
        for col in 0..n {
            s.push(glyph(row * n + col));
            s.push(' ');
        }
        s.push('\n');
    }
    s.push_str("   ");
    for &f in &files[..n] {
        s.push(f as char);
        s.push(' ');
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranks_count_down_and_files_run_across() {
        let s = super::render_grid(2, b"ab", |i| if i == 2 { 'X' } else { '.' });
        assert_eq!(s, " 2 . . \n 1 X . \n   a b \n");
    }
}
