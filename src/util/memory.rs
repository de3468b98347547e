//! What the machine can hold, and the check of user-given sizes (model
//! widths, batch sizes, buffers) against it before anything is allocated:
//! an absurd size is refused with an error that names it, instead of
//! aborting the process when the allocation fails or its size overflows.
//!
//! The limit is, in order: the environment variable [`MEMORY_LIMIT_ENV`]
//! (bytes, or with a K, M, G or T suffix in powers of 1024), `MemAvailable`
//! in `/proc/meminfo`, or [`FALLBACK_LIMIT`] where there is no
//! `/proc/meminfo` (other systems than Linux).

use std::fmt;

/// The environment variable that overrides the memory limit.
pub const MEMORY_LIMIT_ENV: &str = "PLIES_MEMORY_LIMIT";

/// The limit where the available memory cannot be read: 16 GiB, enough for
/// every shipped model and batch size, small enough to refuse absurd ones.
pub const FALLBACK_LIMIT: u64 = 16 << 30;

/// Where a [`MemoryLimit`] comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitSource {
    /// [`MEMORY_LIMIT_ENV`].
    Environment,
    /// `MemAvailable` in `/proc/meminfo`.
    MemAvailable,
    /// [`FALLBACK_LIMIT`].
    Fallback,
}

/// The most bytes one request may need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryLimit {
    pub bytes: u64,
    pub source: LimitSource,
}

/// A size refused, or an unreadable limit.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// `needs` is `None` where the byte count does not fit in 64 bits.
    #[error("`{field}` = {value} needs {}, more than the memory limit of {limit}", Needs(*needs))]
    TooLarge {
        field: String,
        value: u64,
        needs: Option<u64>,
        limit: MemoryLimit,
    },
    #[error("{MEMORY_LIMIT_ENV}=`{value}` is not a byte count (a number, optionally followed by K, M, G or T)")]
    BadLimit { value: String },
}

struct Needs(Option<u64>);

impl fmt::Display for Needs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(b) => write!(f, "{b} bytes ({})", human_bytes(b)),
            None => f.write_str("more than 2^64 bytes"),
        }
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match self.source {
            LimitSource::Environment => MEMORY_LIMIT_ENV.to_string(),
            LimitSource::MemAvailable => "MemAvailable in /proc/meminfo".into(),
            LimitSource::Fallback => "no /proc/meminfo; set PLIES_MEMORY_LIMIT to change it".into(),
        };
        write!(
            f,
            "{} bytes ({}, {source})",
            self.bytes,
            human_bytes(self.bytes)
        )
    }
}

/// `b` in the largest binary unit that keeps it at least 1.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} bytes")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// `"123"`, `"8G"`, `"512 MiB"`...: a byte count with an optional binary
/// suffix; `None` for anything else or a count over 64 bits.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let n: u64 = s[..digits].parse().ok()?;
    let shift = match s[digits..].trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

impl MemoryLimit {
    /// The limit now: the environment override, else the available memory.
    pub fn current() -> Result<MemoryLimit, MemoryError> {
        let env = std::env::var(MEMORY_LIMIT_ENV).ok();
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
        MemoryLimit::from_sources(env.as_deref(), meminfo.as_deref())
    }

    /// The limit from the override `env` (unset or empty: none) and the
    /// text of `/proc/meminfo` (`None`: not there).
    pub fn from_sources(env: Option<&str>, meminfo: Option<&str>) -> Result<Self, MemoryError> {
        if let Some(value) = env.filter(|v| !v.trim().is_empty()) {
            let bytes = parse_bytes(value).ok_or_else(|| MemoryError::BadLimit {
                value: value.to_string(),
            })?;
            return Ok(MemoryLimit {
                bytes,
                source: LimitSource::Environment,
            });
        }
        let available = meminfo.and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        });
        Ok(match available {
            Some(bytes) => MemoryLimit {
                bytes,
                source: LimitSource::MemAvailable,
            },
            None => MemoryLimit {
                bytes: FALLBACK_LIMIT,
                source: LimitSource::Fallback,
            },
        })
    }

    /// Refuses `needs` bytes (`None`: past 64 bits) over the limit, naming
    /// the size `field` = `value` that asks for them.
    pub fn check(&self, field: &str, value: u64, needs: Option<u64>) -> Result<u64, MemoryError> {
        match needs {
            Some(b) if b <= self.bytes => Ok(b),
            _ => Err(MemoryError::TooLarge {
                field: field.to_string(),
                value,
                needs,
                limit: *self,
            }),
        }
    }
}

/// [`MemoryLimit::check`] against the current limit.
pub fn check_bytes(field: &str, value: u64, needs: Option<u64>) -> Result<u64, MemoryError> {
    MemoryLimit::current()?.check(field, value, needs)
}

/// `count` items of `each` bytes (`None` past 64 bits); takes `usize`
/// counts as they come.
pub fn bytes_for(count: impl TryInto<u64>, each: u64) -> Option<u64> {
    count.try_into().ok()?.checked_mul(each)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEMINFO: &str =
        "MemTotal:       16318412 kB\nMemFree:         1022364 kB\nMemAvailable:    8388608 kB\n";

    #[test]
    fn the_override_comes_first_then_meminfo_then_the_fallback() {
        let l = MemoryLimit::from_sources(Some("8G"), Some(MEMINFO)).unwrap();
        assert_eq!((l.bytes, l.source), (8 << 30, LimitSource::Environment));
        let l = MemoryLimit::from_sources(Some(" "), Some(MEMINFO)).unwrap();
        assert_eq!((l.bytes, l.source), (8 << 30, LimitSource::MemAvailable));
        let l = MemoryLimit::from_sources(None, Some("MemTotal: 1 kB\n")).unwrap();
        assert_eq!((l.bytes, l.source), (FALLBACK_LIMIT, LimitSource::Fallback));
        let l = MemoryLimit::from_sources(None, None).unwrap();
        assert_eq!(l.source, LimitSource::Fallback);
        let e = MemoryLimit::from_sources(Some("lots"), None).unwrap_err();
        assert!(e.to_string().contains("PLIES_MEMORY_LIMIT=`lots`"), "{e}");
    }

    #[test]
    fn byte_counts_read_with_binary_suffixes() {
        assert_eq!(parse_bytes("123"), Some(123));
        assert_eq!(parse_bytes("4k"), Some(4096));
        assert_eq!(parse_bytes("512 MiB"), Some(512 << 20));
        assert_eq!(parse_bytes("2T"), Some(2 << 40));
        for bad in [
            "",
            "G",
            "1.5G",
            "-1",
            "3X",
            "99999999999999999999",
            "20000000T",
        ] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
    }

    #[test]
    fn sizes_over_the_limit_are_refused_naming_field_bytes_and_limit() {
        let limit = MemoryLimit::from_sources(Some("1K"), None).unwrap();
        assert_eq!(
            limit.check("batch", 256, bytes_for(256usize, 4)).unwrap(),
            1024
        );
        let e = limit
            .check("batch", 257, bytes_for(257usize, 4))
            .unwrap_err();
        let t = e.to_string();
        assert!(t.contains("`batch` = 257 needs 1028 bytes"), "{t}");
        assert!(
            t.contains("limit of 1024 bytes") && t.contains("PLIES_MEMORY_LIMIT"),
            "{t}"
        );
        let e = limit
            .check("hidden", u64::MAX, bytes_for(u64::MAX, 4))
            .unwrap_err();
        assert!(e.to_string().contains("more than 2^64 bytes"), "{e}");
        assert!(matches!(e, MemoryError::TooLarge { needs: None, .. }));
    }
}
