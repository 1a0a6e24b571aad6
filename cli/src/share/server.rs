//! The serving side of a shared store: a Unix domain socket in the store directory (mode 0600,
//! peers checked to be this user; nothing listens on a network), one thread per connected
//! peer, each request run on the open store and answered in order.

use std::io::{BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use anyhow::{Context, Result};
use memloop::Memory;

use super::wire::{Request, Response, HELLO, MAX_LINE_BYTES, VERSION};
use crate::lines::BoundedLines;
use crate::mcp::tools;

/// The socket's file name inside the store directory.
pub const SOCKET_FILE: &str = "memloop.sock";

/// The socket of store `dir`.
pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join(SOCKET_FILE)
}

/// Listens on the socket of `memory`'s store until the process ends; the caller holds the
/// store's lock, so a socket file already there is a dead server's and is replaced. The file is
/// removed when the returned guard drops.
pub fn serve(memory: &Arc<Memory>) -> Result<Listening> {
    let path = socket_path(memory.dir());
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("remove stale {}", path.display())),
    }
    let listener = UnixListener::bind(&path).with_context(|| {
        format!(
            "listen on {} (a path over 107 bytes cannot be a socket; use a shorter store path)",
            path.display()
        )
    })?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .with_context(|| format!("restrict {}", path.display()))?;
    // The threads hold the store weakly: when the owner drops it, it closes (with its final
    // checkpoint) even while peers are connected.
    let memory = Arc::downgrade(memory);
    std::thread::Builder::new()
        .name("memloop-share".into())
        .spawn(move || accept(&listener, &memory))
        .context("start the socket thread")?;
    Ok(Listening { path })
}

/// Removes the socket file when the serving process stops serving.
#[derive(Debug)]
pub struct Listening {
    path: PathBuf,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn accept(listener: &UnixListener, memory: &Weak<Memory>) {
    let me = rustix::process::getuid();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        // Only this user's processes are served (the socket's mode says so too; this holds
        // even where a directory's permissions are loose).
        match rustix::net::sockopt::socket_peercred(&stream) {
            Ok(cred) if cred.uid == me => {}
            _ => continue,
        }
        let memory = memory.clone();
        let _ = std::thread::Builder::new()
            .name("memloop-peer".into())
            .spawn(move || answer(stream, &memory));
    }
}

/// Answers one peer's requests until it hangs up. A request is run to its end whatever the
/// peer does meanwhile: every engine write is all or nothing, so a peer that disconnects
/// mid-call leaves no partial write.
fn answer(stream: UnixStream, memory: &Weak<Memory>) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    for line in BoundedLines::new(BufReader::new(stream), MAX_LINE_BYTES) {
        let Ok(line) = line else { return };
        let response: Response = match serde_json::from_str::<Request>(&line) {
            Ok(r) if r.v == VERSION && r.tool == HELLO => Response::Ok(tools::Reply {
                text: "memloop".into(),
                structured: serde_json::json!({ "v": VERSION }),
            }),
            Ok(r) if r.v == VERSION => match memory.upgrade() {
                Some(memory) => tools::call(&memory, &r.tool, r.arguments).into(),
                None => Response::Error("the serving process is closing the store".into()),
            },
            Ok(r) => Response::Error(format!(
                "protocol version {} is not this memloop's {VERSION}; run the same memloop everywhere",
                r.v
            )),
            Err(e) => Response::Error(format!("malformed request: {e}")),
        };
        let Ok(mut bytes) = serde_json::to_vec(&response) else {
            return;
        };
        bytes.push(b'\n');
        if out.write_all(&bytes).and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
