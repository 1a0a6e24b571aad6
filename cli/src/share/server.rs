//! The serving side of a shared store: a Unix domain socket in the store directory (mode 0600),
//! or on Windows a named pipe named after it (socket/), peers checked to be this user, nothing
//! listening on a network; one thread per connected peer, each request run on the open store
//! and answered in order.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use anyhow::{Context, Result};
use memloop::Memory;

use super::socket::{self, Listener, Stream};
use super::wire::{
    Request, Response, CLOSING, HELLO, MAX_LINE_BYTES, MAX_PEERS, MAX_REPLY_BYTES, VERSION,
};
use crate::lines::BoundedLines;
use crate::mcp::tools;

/// The socket's file name inside the store directory (on Windows, hashed into the pipe's name).
pub const SOCKET_FILE: &str = "memloop.sock";

/// The socket of store `dir`.
pub fn socket_path(dir: &Path) -> PathBuf {
    dir.join(SOCKET_FILE)
}

/// Listens on the socket of `memory`'s store until the process ends; the caller holds the
/// store's lock, so a socket file already there is a dead server's and is replaced. The file is
/// removed, and the listener stopped, when the returned guard drops.
pub fn serve(memory: &Arc<Memory>) -> Result<Listening> {
    let path = socket_path(memory.dir());
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("remove stale {}", path.display())),
    }
    let listener = match socket::bind(&path) {
        Ok(listener) => listener,
        Err(e) => {
            let hint = if socket::too_long(&path) {
                " (a path over 107 bytes cannot be a socket; use a shorter store path)"
            } else if e.kind() == std::io::ErrorKind::PermissionDenied {
                " (the store directory is not writable by you, so the store cannot be shared from it)"
            } else {
                ""
            };
            return Err(anyhow::anyhow!("listen on {}{hint}: {e}", path.display()));
        }
    };
    // The threads hold the store weakly: when the owner drops it, it closes (with its final
    // checkpoint) even while peers are connected.
    let memory = Arc::downgrade(memory);
    let stopper = socket::stopper(&listener);
    std::thread::Builder::new()
        .name("memloop-share".into())
        .spawn(move || accept(&listener, &memory))
        .context("start the socket thread")?;
    Ok(Listening {
        path,
        _stopper: stopper,
    })
}

/// Removes the socket file and stops the listener when the serving process stops serving.
#[derive(Debug)]
pub struct Listening {
    /// The socket file (none is made on Windows: removing it finds nothing).
    path: PathBuf,
    /// Stops the listener when dropped.
    _stopper: socket::Stopper,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// How long a peer may stay silent before its connection is closed (a forwarding process
/// reconnects by itself at its next call), and how long a reply may take to be read.
const PEER_IDLE: std::time::Duration = std::time::Duration::from_secs(600);

fn accept(listener: &Listener, memory: &Weak<Memory>) {
    let peers = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else { continue };
        // Only this user's processes are served (the socket's mode says so too; this holds
        // even where a directory's permissions are loose).
        if !matches!(socket::other_user(&stream), Ok(None)) {
            continue;
        }
        if peers.fetch_add(1, Ordering::AcqRel) >= MAX_PEERS {
            peers.fetch_sub(1, Ordering::AcqRel);
            let busy = Response::Error(format!(
                "the serving process has {MAX_PEERS} connections already; try again later"
            ));
            let _ = send(&mut stream, &busy);
            continue;
        }
        let (memory, peers) = (memory.clone(), peers.clone());
        let spawned = std::thread::Builder::new()
            .name("memloop-peer".into())
            .spawn(move || {
                answer(stream, &memory);
                peers.fetch_sub(1, Ordering::AcqRel);
            });
        if spawned.is_err() {
            // The thread (and with it the count's release) never started.
            continue;
        }
    }
}

/// The longest request line a peer may send: a remember of the largest text the store takes,
/// with its shorter versions and JSON escapes, within [`MAX_LINE_BYTES`]. With
/// [`MAX_PEERS`] it bounds what peers can make the server hold (192 MiB at the default
/// 512 KiB text limit).
fn request_limit(max_text_bytes: usize) -> usize {
    max_text_bytes
        .saturating_mul(4)
        .saturating_add(1 << 20)
        .min(MAX_LINE_BYTES)
}

/// Writes one reply line; a reply over [`MAX_REPLY_BYTES`] is replaced by an error saying so.
fn send(out: &mut Stream, response: &Response) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(response).map_err(std::io::Error::other)?;
    if bytes.len() > MAX_REPLY_BYTES {
        let too_big = Response::Error(format!(
            "the reply is {} bytes, over the {MAX_REPLY_BYTES} a shared store sends: ask for fewer hits (k) or a smaller budget",
            bytes.len()
        ));
        bytes = serde_json::to_vec(&too_big).map_err(std::io::Error::other)?;
    }
    bytes.push(b'\n');
    out.write_all(&bytes).and_then(|()| out.flush())
}

/// Answers one peer's requests until it hangs up, stays silent for [`PEER_IDLE`] or sends a
/// line over [`MAX_LINE_BYTES`]. A request is run to its end whatever the peer does
/// meanwhile: every engine write is all or nothing, so a peer that disconnects mid-call
/// leaves no partial write.
fn answer(stream: Stream, memory: &Weak<Memory>) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    if stream.set_read_timeout(Some(PEER_IDLE)).is_err()
        || out.set_write_timeout(Some(PEER_IDLE)).is_err()
    {
        return;
    }
    let Some((dir, limit)) = memory.upgrade().map(|m| {
        let dir = m.dir().canonicalize().ok().map(|d| d.display().to_string());
        (dir, request_limit(m.admin().max_text_bytes()))
    }) else {
        return;
    };
    for line in BoundedLines::new(BufReader::new(stream), limit) {
        let line = match line {
            Ok(line) => line,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                // Said before hanging up, so the peer reports it rather than a dead server.
                let refused = Response::Error(format!(
                    "refused a request that is not one line of UTF-8 within {limit} bytes ({e}); nothing was run"
                ));
                let _ = send(&mut out, &refused);
                return;
            }
            Err(_) => return,
        };
        let response: Response = match serde_json::from_str::<Request>(&line) {
            // The greeting names the store served, so a peer knows it reached its own.
            Ok(r) if r.v == VERSION && r.tool == HELLO => Response::Ok(tools::Reply {
                text: "memloop".into(),
                structured: serde_json::json!({ "v": VERSION, "store": dir }),
            }),
            Ok(r) if r.v == VERSION => match memory.upgrade() {
                Some(memory) if super::admin::handles(&r.tool) => {
                    super::admin::call(&memory, &r.tool, r.arguments).into()
                }
                Some(memory) => tools::call(&memory, &r.tool, r.arguments).into(),
                None => Response::Error(CLOSING.into()),
            },
            Ok(r) => Response::Error(format!(
                "protocol version {} is not this memloop's {VERSION}; run the same memloop everywhere",
                r.v
            )),
            Err(e) => Response::Error(format!("malformed request: {e}")),
        };
        if send(&mut out, &response).is_err() {
            return;
        }
    }
}
