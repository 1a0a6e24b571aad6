//! Running the real `memloop` binary.

#![allow(dead_code)] // each test binary uses a different part

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

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

/// Starts `memloop ARGS…` with `stdin` written to it from a thread, stderr dropped: the child
/// and its stdout's whole lines as they come (a line cut short by a kill is not sent).
pub fn spawn_lines(args: &[&std::ffi::OsStr], stdin: String) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memloop"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
            if !line.ends_with('\n') || tx.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    (child, rx)
}
