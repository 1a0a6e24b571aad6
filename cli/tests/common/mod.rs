//! Running the real `memloop` binary.

#![allow(dead_code)] // each test binary uses a different part

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Exit success, stdout, stderr.
pub struct Run {
    /// The exit status (`None` when a signal ended it).
    pub code: Option<i32>,
    pub ok: bool,
    pub out: String,
    pub err: String,
}

/// Runs `memloop --store STORE ARGS…` with `stdin`.
pub fn memloop_in(store: &Path, args: &[&str], stdin: &str) -> Run {
    let mut full = vec!["--store", store.to_str().unwrap()];
    full.extend_from_slice(args);
    memloop(&full, stdin)
}

/// Runs `memloop ARGS…` with `stdin`.
pub fn memloop(args: &[&str], stdin: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memloop"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that fails before reading its input closes the pipe: not the test's concern.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    Run {
        ok: out.status.success(),
        code: out.status.code(),
        out: String::from_utf8(out.stdout).unwrap(),
        err: String::from_utf8(out.stderr).unwrap(),
    }
}
