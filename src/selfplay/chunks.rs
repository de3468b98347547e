//! The chunk files of a self-play run: `DIR/games/part-NNNNN.jsonl`, chunk
//! `c` holding games `c * chunk_games ..` up to the next chunk's first, in
//! order. A chunk is written to a hidden temporary name and renamed when
//! complete, so a chunk file that exists is whole; an interrupted run
//! leaves only temporary files, which the next run removes.

use std::ops::Range;
use std::path::{Path, PathBuf};

/// The folder of chunk files inside a run directory.
pub const GAMES_DIR: &str = "games";

/// The chunk file of chunk `c` under `games_dir`.
pub fn chunk_path(games_dir: &Path, c: u64) -> PathBuf {
    games_dir.join(format!("part-{c:05}.jsonl"))
}

/// How many chunks `games` games need.
pub fn chunk_count(games: u64, chunk_games: u64) -> u64 {
    games.div_ceil(chunk_games.max(1))
}

/// The game indices of chunk `c`.
pub fn chunk_range(c: u64, chunk_games: u64, games: u64) -> Range<u64> {
    let start = c * chunk_games;
    start.min(games)..(start + chunk_games).min(games)
}

/// Whether `name` is a chunk file's name (`part-00012.jsonl`), and which.
pub fn parse_chunk_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("part-")?.strip_suffix(".jsonl")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Whether `name` is a temporary chunk file left by an interrupted writer
/// (`.part-00012.jsonl.plies-tmp-PID-N.jsonl`, see [`crate::util::atomic`]).
pub fn is_temp_chunk(name: &str) -> bool {
    crate::util::atomic::temp_target(name).is_some_and(|target| parse_chunk_name(target).is_some())
}

/// What [`scan`] finds: the chunk files by chunk number, and temporary files.
pub type Scan = (Vec<(u64, PathBuf)>, Vec<PathBuf>);

/// The chunk files and temporary chunk files in `games_dir` (empty lists
/// when it does not exist).
pub fn scan(games_dir: &Path) -> std::io::Result<Scan> {
    let mut chunks = Vec::new();
    let mut temps = Vec::new();
    let entries = match std::fs::read_dir(games_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((chunks, temps)),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(c) = parse_chunk_name(&name) {
            chunks.push((c, entry.path()));
        } else if is_temp_chunk(&name) {
            temps.push(entry.path());
        }
    }
    chunks.sort();
    temps.sort();
    Ok((chunks, temps))
}

/// Counts the non-blank lines of a file.
pub fn count_lines(path: &Path) -> std::io::Result<u64> {
    use std::io::BufRead;
    let file = std::fs::File::open(path)?;
    let mut n = 0;
    for line in std::io::BufReader::new(file).lines() {
        if !line?.trim().is_empty() {
            n += 1;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_cover_every_game_once() {
        assert_eq!(chunk_count(0, 256), 0);
        assert_eq!(chunk_count(256, 256), 1);
        assert_eq!(chunk_count(257, 256), 2);
        assert_eq!(chunk_range(1, 256, 300), 256..300);
        let all: Vec<u64> = (0..chunk_count(1000, 64))
            .flat_map(|c| chunk_range(c, 64, 1000))
            .collect();
        assert_eq!(all, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn names() {
        let p = chunk_path(Path::new("d/games"), 12);
        assert_eq!(p, Path::new("d/games/part-00012.jsonl"));
        assert_eq!(parse_chunk_name("part-00012.jsonl"), Some(12));
        assert_eq!(parse_chunk_name("part-123456.jsonl"), Some(123456));
        assert_eq!(parse_chunk_name("part-.jsonl"), None);
        assert_eq!(parse_chunk_name("part-1x.jsonl"), None);
        assert!(is_temp_chunk(".part-00012.jsonl.tmp-123-4"));
        assert!(is_temp_chunk(".part-00012.jsonl.tmp-123-4.jsonl"));
        assert!(!is_temp_chunk(".other.jsonl.tmp-123-4"));
        assert!(!is_temp_chunk("part-00012.jsonl"));
    }

    #[test]
    fn the_chunk_writers_temporary_file_is_recognised() {
        let dir = tempfile::tempdir().unwrap();
        let f = crate::util::AtomicFile::create(chunk_path(dir.path(), 3)).unwrap();
        let name = f.temp_path().file_name().unwrap().to_str().unwrap();
        assert!(is_temp_chunk(name), "{name}");
        assert_eq!(
            scan(dir.path()).unwrap().1,
            vec![f.temp_path().to_path_buf()]
        );
    }
}
