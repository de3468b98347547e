//! The loopback hub (`scripts/hub_server.py`), stopped when dropped, and
//! its test endpoints: faults, request log, hand-made repositories.

use crate::files::root;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};

pub const TOKEN: &str = "hf_test_token";

/// The loopback hub, stopped when dropped.
pub struct Hub {
    child: Child,
    pub url: String,
}

impl Hub {
    pub fn start() -> Option<Hub> {
        let child = Command::new("python3")
            .arg(root().join("scripts/hub_server.py"))
            .args(["--token", TOKEN, "--max-seconds", "600"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match child {
            Ok(c) => c,
            Err(e) => {
                let required = std::env::var("PLIES_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "PLIES_REQUIRE_PYTHON=1 but python3 cannot run: {e}"
                );
                eprintln!("skipped: python3 cannot run the test hub ({e})");
                return None;
            }
        };
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("http://127.0.0.1:"), "hub said {line:?}");
        Some(Hub {
            child,
            url: line.trim().to_string(),
        })
    }

    /// One request to the server's test endpoints; the body of the answer.
    pub fn call(&self, method: &str, path: &str, body: &str) -> String {
        let addr = self.url.trim_start_matches("http://");
        let mut s = TcpStream::connect(addr).unwrap();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        answer
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_default()
    }

    /// Makes the server fail GETs of `file` (`500`, `cut`, `corrupt`).
    pub fn fault(&self, file: &str, kind: &str) {
        self.call(
            "POST",
            "/_test/fault",
            &format!(r#"{{"file":"{file}","kind":"{kind}"}}"#),
        );
    }

    pub fn clear_faults(&self) {
        self.call("POST", "/_test/fault", "{}");
    }

    /// How many hub requests (not these test calls) the server has answered.
    pub fn requests(&self) -> usize {
        let log: Vec<String> = serde_json::from_str(&self.call("GET", "/_test/log", "")).unwrap();
        log.iter().filter(|l| !l.contains(" /_test/")).count()
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
