//! One store shared by several processes. memloop lets one process open a store (its lock);
//! the first `memloop mcp` (or other sharing process) that takes the lock serves the store to
//! the others through a socket in the store directory (a named pipe on Windows; `server.rs`,
//! `socket/`), and every later one forwards its calls there ([`Peer`]). When the serving
//! process exits or is killed, the system drops its lock; the next call of a forwarding process
//! finds the socket dead, takes the lock and serves, and the others reconnect to it
//! ([`Shared::call`]).
//!
//! A write is acknowledged only after the serving process's engine call returned, so it is as
//! durable as in process (synced by default). A call whose connection breaks before its answer
//! may or may not have been applied: reads are retried on the new server, writes are reported
//! as failed (the caller repeats them; a repeated remember merges into the same memory).

mod admin;
mod server;
mod socket;
mod wire;

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use memloop::Memory;
use parking_lot::Mutex;
use serde_json::Value;

pub use admin::{check_on, AdminCall};
pub use server::{socket_path, Listening};

use crate::lines::BoundedLines;
use crate::mcp::tools::{self, ToolError, ToolResult};
use wire::{Request, Response, MAX_REPLY_BYTES, VERSION};

/// How long a process waits for a store's holder to start serving (it may be loading its model,
/// or a peer may be taking over from a killed one).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a serving process may take to answer the greeting of a new connection.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times one call is sent again after its server went away.
const MAX_RETRIES: usize = 3;

/// A call on a shared store, typed: an operation of the registry or one of the socket's own
/// requests. Run here when this process serves the store, else sent by its name and fields.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// An operation of the registry.
    Operation(Box<memloop::Request>),
    /// One of the socket's own requests (`memloop check`, the inspector's views).
    Admin(AdminCall),
}

impl Asked {
    /// Its name on the socket.
    pub fn name(&self) -> &'static str {
        match self {
            Asked::Operation(request) => request.operation().name(),
            Asked::Admin(call) => call.name(),
        }
    }

    /// Its fields as the socket carries them.
    pub fn arguments(&self) -> Value {
        match self {
            Asked::Operation(request) => request.fields(),
            Asked::Admin(call) => call.arguments(),
        }
    }

    /// True when it changes nothing: safe to send again when the server went away mid-call.
    pub fn reads_only(&self) -> bool {
        match self {
            Asked::Operation(request) => request.operation().reads_only(),
            Asked::Admin(call) => call.reads_only(),
        }
    }

    /// Runs it on `memory` (in the process that serves the store).
    pub fn run(&self, memory: &Memory) -> ToolResult {
        match self {
            Asked::Operation(request) => tools::run(memory, (**request).clone()),
            Asked::Admin(call) => call.run(memory),
        }
    }
}

/// Opens the store (taking its lock) with this process's settings.
pub type Opener = Box<dyn Fn() -> memloop::Result<Memory> + Send + Sync>;

/// A connection to the process serving a store.
pub struct Peer {
    lines: BoundedLines<BufReader<socket::Stream>>,
    out: socket::Stream,
}

impl Peer {
    /// Connects to the process serving store `dir`.
    ///
    /// # Errors
    /// When no process serves it (no socket, or a dead one).
    pub fn connect(dir: &Path) -> std::io::Result<Peer> {
        Self::greet(socket::connect(&socket_path(dir))?, dir)
    }

    /// Checks who answers on `stream`, connected to store `dir`'s socket, and greets it.
    fn greet(stream: socket::Stream, dir: &Path) -> std::io::Result<Peer> {
        // Whoever answers must be this user: where another user can write the store
        // directory, a socket of theirs would otherwise receive this user's memories and
        // serve forged ones back.
        let other = socket::other_user(&stream).map_err(|e| {
            std::io::Error::other(format!("cannot tell who serves the socket: {e}"))
        })?;
        if let Some(who) = other {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} is served by {who}: refusing to talk to it",
                    socket_path(dir).display(),
                ),
            ));
        }
        let out = stream.try_clone()?;
        let mut peer = Peer {
            lines: BoundedLines::new(BufReader::new(stream), MAX_REPLY_BYTES + 4096),
            out,
        };
        // A process that was killed a moment ago may still accept connections (its socket
        // lives until the kernel has torn it down) but never answers: only a peer that
        // answers the greeting is connected.
        peer.out.set_read_timeout(Some(HELLO_TIMEOUT))?;
        let busy = |e: ToolError| std::io::Error::new(std::io::ErrorKind::ResourceBusy, e.0);
        let hello = match peer.call(wire::HELLO, Value::Null) {
            Ok(Ok(reply)) => reply,
            // It answered with a refusal (its peer cap): it serves the store, and is busy.
            Ok(Err(e)) => return Err(busy(e)),
            // A server at its cap writes its refusal and closes without reading, so the
            // greeting may not go out at all (a broken pipe): the refusal is still there to
            // read, and says the same.
            Err(Lost::NotSent(e)) => {
                return Err(match peer.lines.next() {
                    Some(Ok(line)) => match serde_json::from_str::<Response>(&line) {
                        Ok(Response::Error(refusal)) => busy(ToolError(refusal)),
                        _ => e,
                    },
                    _ => e,
                })
            }
            Err(Lost::NoAnswer(e)) => return Err(e),
        };
        // And it must serve this store, not another one whose socket was put here.
        let served = hello.structured.get("store").and_then(Value::as_str);
        let ours = dir.canonicalize()?;
        if served.map(Path::new) != Some(ours.as_path()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "the socket in {} serves {}, not this store: refusing to talk to it",
                    dir.display(),
                    served.unwrap_or("an unnamed store")
                ),
            ));
        }
        peer.out.set_read_timeout(None)?;
        Ok(peer)
    }

    /// Runs `tool` in the serving process. The outer error is the connection's (the server
    /// went away); the inner result is the tool's.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<ToolResult, Lost> {
        let request = Request {
            v: VERSION,
            tool: tool.to_string(),
            arguments,
        };
        let mut line = serde_json::to_vec(&request).map_err(|e| Lost::NotSent(e.into()))?;
        line.push(b'\n');
        self.out
            .write_all(&line)
            .and_then(|()| self.out.flush())
            .map_err(Lost::NotSent)?;
        let answer = self
            .lines
            .next()
            .unwrap_or_else(|| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the serving process closed the connection",
                ))
            })
            .map_err(Lost::NoAnswer)?;
        let response: Response =
            serde_json::from_str(&answer).map_err(|e| Lost::NoAnswer(e.into()))?;
        // A server closing the store ran nothing: the call goes to the next one.
        if matches!(&response, Response::Error(e) if e == wire::CLOSING) {
            return Err(Lost::NotSent(std::io::Error::other(wire::CLOSING)));
        }
        Ok(response.into())
    }
}

/// How a forwarded call lost its server.
#[derive(Debug)]
pub enum Lost {
    /// The request never reached it (the connection was already broken): safe to send again.
    NotSent(std::io::Error),
    /// It was sent but no answer came: it may or may not have been applied.
    NoAnswer(std::io::Error),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::NotSent(e) => write!(f, "not sent: {e}"),
            Lost::NoAnswer(e) => write!(f, "no answer: {e}"),
        }
    }
}

/// This process's side of a shared store: serving it, or forwarding to the process that does.
enum Role {
    Serving {
        memory: Arc<Memory>,
        _listening: Listening,
    },
    Forwarding(Option<Peer>),
}

/// A store shared with other processes; see the module documentation.
pub struct Shared {
    dir: PathBuf,
    open: Opener,
    role: Mutex<Role>,
}

impl Shared {
    /// Serves store `dir` if its lock is free, or connects to the process that serves it.
    ///
    /// # Errors
    /// When the store cannot be opened, or its holder does not serve it within
    /// [`SETTLE_TIMEOUT`] (a process that opened it without sharing, such as an ingest).
    pub fn start(dir: &Path, open: Opener) -> Result<Shared> {
        let shared = Shared {
            dir: dir.to_path_buf(),
            open,
            role: Mutex::new(Role::Forwarding(None)),
        };
        {
            let mut role = shared.role.lock();
            shared.settle(&mut role)?;
        }
        Ok(shared)
    }

    /// True while this process serves the store.
    pub fn is_serving(&self) -> bool {
        matches!(*self.role.lock(), Role::Serving { .. })
    }

    /// Runs `tool` with `arguments` (as an MCP client sent them) on the store, here or in the
    /// serving process, taking over serving when that process is gone.
    pub fn call(&self, tool: &str, arguments: Value) -> ToolResult {
        if let Some(call) = AdminCall::parse(tool, arguments.clone()) {
            return self.run(&Asked::Admin(call?));
        }
        let reads_only = memloop::Operation::named(tool).is_ok_and(memloop::Operation::reads_only);
        self.dispatch(
            tool,
            reads_only,
            |memory| tools::call(memory, tool, arguments.clone()),
            || arguments.clone(),
        )
    }

    /// Runs `asked` on the store, here or in the serving process, taking over serving when
    /// that process is gone.
    pub fn run(&self, asked: &Asked) -> ToolResult {
        self.dispatch(
            asked.name(),
            asked.reads_only(),
            |memory| asked.run(memory),
            || asked.arguments(),
        )
    }

    /// Runs a call named `tool`: `here` when this process serves the store, else sent with
    /// `fields()` to the process that does; sent again after that process went away only if
    /// it never left or `reads_only`.
    fn dispatch(
        &self,
        tool: &str,
        reads_only: bool,
        here: impl Fn(&Memory) -> ToolResult,
        fields: impl Fn() -> Value,
    ) -> ToolResult {
        let mut role = self.role.lock();
        let mut retries = 0;
        loop {
            match &mut *role {
                Role::Serving { memory, .. } => {
                    let memory = memory.clone();
                    drop(role); // calls on the store run concurrently
                    return here(&memory);
                }
                Role::Forwarding(Some(peer)) => match peer.call(tool, fields()) {
                    Ok(result) => return result,
                    Err(lost) => {
                        *role = Role::Forwarding(None);
                        if let Err(e) = self.settle(&mut role) {
                            return Err(ToolError(format!(
                                "the process serving the store went away ({lost}) and it could not be taken over: {e:#}"
                            )));
                        }
                        // A request that never left can always be sent again; one that may
                        // have been applied only if it changes nothing.
                        let again = matches!(lost, Lost::NotSent(_)) || reads_only;
                        if !again || retries == MAX_RETRIES {
                            return Err(ToolError(format!(
                                "the process serving the store went away during this call ({lost}); it may or may not have been applied. The store is served again: call again (a repeated remember merges into the same memory)"
                            )));
                        }
                        retries += 1;
                    }
                },
                Role::Forwarding(None) => {
                    if let Err(e) = self.settle(&mut role) {
                        return Err(ToolError(format!("the store is unreachable: {e:#}")));
                    }
                }
            }
        }
    }

    /// Takes the store's lock and serves it, or connects to the process that holds it.
    fn settle(&self, role: &mut Role) -> Result<()> {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            match (self.open)() {
                Ok(memory) => {
                    let memory = Arc::new(memory);
                    let listening = server::serve(&memory)?;
                    *role = Role::Serving {
                        memory,
                        _listening: listening,
                    };
                    return Ok(());
                }
                Err(memloop::Error::Locked { pid, .. }) => match Peer::connect(&self.dir) {
                    Ok(peer) => {
                        *role = Role::Forwarding(Some(peer));
                        return Ok(());
                    }
                    // Another user (or another store) answers on the socket.
                    Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                        bail!("store {}: {e}", self.dir.display())
                    }
                    // The holder is still starting (loading its model), or it just died and
                    // the kernel is releasing its lock: try again shortly.
                    Err(_) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    // It serves the store but refused this connection (all its peer slots
                    // taken): say that, not that it does not share.
                    Err(e) if e.kind() == std::io::ErrorKind::ResourceBusy => bail!(
                        "store {} is served by {}, which refused this connection: {e}",
                        self.dir.display(),
                        pid.map_or("another process".to_string(), |p| format!("process {p}"))
                    ),
                    Err(e) => bail!(
                        "store {} is open in {} which does not share it ({e}); close it there, or let `memloop mcp` hold it",
                        self.dir.display(),
                        pid.map_or("another process".to_string(), |p| format!("process {p}"))
                    ),
                },
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot open store {}", self.dir.display()))
                }
            }
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // Stop listening before the store closes, so peers move on to the next server.
        let role = std::mem::replace(&mut *self.role.lock(), Role::Forwarding(None));
        if let Role::Serving { memory, _listening } = role {
            drop(_listening);
            if let Ok(memory) = Arc::try_unwrap(memory) {
                crate::store_args::close(memory);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server at its peer cap writes its refusal and stops reading before the greeting
    /// arrives (round 4, L9, seen under load): the greeting meets a broken pipe, and the
    /// refusal is still what the client reports, not that nobody serves the store.
    #[test]
    fn a_refusal_written_before_the_greeting_still_reads_as_busy() {
        let dir = tempfile::tempdir().unwrap();
        let (client, mut server) = socket::pair().unwrap();
        let busy = Response::Error("the serving process has 64 connections already".into());
        let mut line = serde_json::to_vec(&busy).unwrap();
        line.push(b'\n');
        server.write_all(&line).unwrap();
        // Closed before the client speaks: its greeting meets a broken pipe.
        drop(server);
        let e = Peer::greet(client, dir.path())
            .err()
            .expect("a refused connection");
        assert_eq!(e.kind(), std::io::ErrorKind::ResourceBusy, "{e}");
        assert!(e.to_string().contains("connections already"), "{e}");
    }
}
