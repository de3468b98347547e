//! The one line an error becomes on the terminal: its chain of causes with
//! each cause said once, and the operating system's wording of the usual
//! file-system mistakes (an output path that is a file, a full disk, a
//! permission denied, a missing folder) replaced by what happened and what
//! to do.
//!
//! Many errors print their cause inside their own text (`{path}: {source}`)
//! and also return it as their `source()`, and library errors wrap each
//! other the same way (arrow's `Io error: ...`); printing the chain naively
//! repeats a cause once per layer. A cause whose text the line already
//! holds is left out.

use std::error::Error;
use std::io::ErrorKind;

/// `error` and its causes as one line, each cause once, with the advice
/// [`io_advice`] gives for the first I/O error in the chain.
pub fn error_line(error: &(dyn Error + 'static)) -> String {
    let mut line = String::new();
    let mut io: Option<&std::io::Error> = None;
    let mut next: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = next {
        if io.is_none() {
            io = e.downcast_ref::<std::io::Error>();
        }
        let text = e.to_string();
        let text = text.trim();
        if !text.is_empty() && !line.contains(text) {
            if line.is_empty() {
                line.push_str(text);
            } else if text.contains(line.as_str()) {
                // A cause that restates the whole line and more.
                line = text.to_string();
            } else {
                line.push_str(": ");
                line.push_str(text);
            }
        }
        next = e.source();
    }
    if let Some(io) = io {
        if let Some((what, todo)) = io_advice(io.kind()) {
            let os = io.to_string();
            line = if line.contains(&os) {
                line.replacen(&os, what, 1)
            } else {
                format!("{line}: {what}")
            };
            line.push_str("; ");
            line.push_str(todo);
        }
    }
    line
}

/// What an I/O error of `kind` means for a path the user named, and what
/// to do about it; `None` for kinds whose own text says enough.
pub fn io_advice(kind: ErrorKind) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        ErrorKind::AlreadyExists | ErrorKind::NotADirectory => (
            "exists and is not a folder (a folder, or a path that does not exist yet, was expected)",
            "name another path, or move the file away",
        ),
        ErrorKind::StorageFull | ErrorKind::QuotaExceeded => (
            "the disk is full (no space left on the device)",
            "free some space or write elsewhere, then run the command again (nothing finished \
             before was changed)",
        ),
        ErrorKind::PermissionDenied | ErrorKind::ReadOnlyFilesystem => (
            "permission denied",
            "use a path you may write to, or change the folder's permissions",
        ),
        ErrorKind::NotFound => (
            "no such file or folder",
            "check the path; an output's parent folder must exist (create it first)",
        ),
        ErrorKind::IsADirectory => (
            "is a folder (a file was expected)",
            "name the file inside it",
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("{path}: {source}")]
    struct AtPath {
        path: String,
        source: std::io::Error,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("Io error: {0}")]
    struct Wrapped(#[source] AtPath);

    #[derive(Debug, thiserror::Error)]
    #[error("writing the dataset")]
    struct Outer(#[source] Wrapped);

    fn os(code: i32) -> std::io::Error {
        std::io::Error::from_raw_os_error(code)
    }

    #[test]
    fn a_cause_already_in_the_line_is_said_once() {
        let e = Outer(Wrapped(AtPath {
            path: "runs/ds/part-00003.arrow".into(),
            source: os(28),
        }));
        let line = error_line(&e);
        assert_eq!(
            line.matches("part-00003.arrow").count(),
            1,
            "repeated path: {line}"
        );
        assert!(!line.contains("os error 28"), "{line}");
        assert!(
            line.starts_with(
                "writing the dataset: Io error: runs/ds/part-00003.arrow: the disk is full"
            ),
            "{line}"
        );
        assert_eq!(line.matches("disk is full").count(), 1, "{line}");
        assert!(line.contains("free some space"), "{line}");
    }

    #[test]
    fn an_output_path_that_is_a_file_says_what_was_expected() {
        let e = AtPath {
            path: "runs/notes.txt".into(),
            source: os(17),
        };
        let line = error_line(&e);
        assert_eq!(
            line,
            "runs/notes.txt: exists and is not a folder (a folder, or a path that does not exist \
             yet, was expected); name another path, or move the file away"
        );
    }

    #[test]
    fn permission_and_missing_folders_get_their_advice_and_other_errors_pass_through() {
        let denied = error_line(&AtPath {
            path: "/root/x".into(),
            source: os(13),
        });
        assert!(
            denied.contains("/root/x: permission denied; use a path"),
            "{denied}"
        );
        let missing = error_line(&AtPath {
            path: "no/such/dir/out".into(),
            source: os(2),
        });
        assert!(missing.contains("parent folder must exist"), "{missing}");
        let other = error_line(&AtPath {
            path: "x".into(),
            source: std::io::Error::other("a torn record"),
        });
        assert_eq!(other, "x: a torn record");
    }
}
