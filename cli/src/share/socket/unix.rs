//! Unix domain sockets, the peer checked by its uid (`SO_PEERCRED`).

use std::io;
use std::os::unix::fs::PermissionsExt;
pub use std::os::unix::net::{UnixListener as Listener, UnixStream as Stream};
use std::path::Path;

/// The longest socket path the kernel takes (`sun_path` less its NUL).
const MAX_PATH_BYTES: usize = 107;

/// Whether `path` is too long to be a socket.
pub fn too_long(path: &Path) -> bool {
    path.as_os_str().len() > MAX_PATH_BYTES
}

/// Connects to the socket at `path`.
pub fn connect(path: &Path) -> io::Result<Stream> {
    Stream::connect(path)
}

/// Listens at `path`, readable and writable by this user alone.
pub fn bind(path: &Path) -> io::Result<Listener> {
    let listener = Listener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// `Ok(None)` when the process at the other end of `stream` runs as this user; else who it
/// runs as (for the message), or the error that kept it from being known.
pub fn other_user(stream: &Stream) -> io::Result<Option<String>> {
    let me = rustix::process::getuid();
    let peer = rustix::net::sockopt::socket_peercred(stream)?;
    Ok((peer.uid != me)
        .then(|| format!("user {}, not by you ({})", peer.uid.as_raw(), me.as_raw())))
}

/// Nothing to stop: the guard that removes the socket file is what ends new connections (a
/// listener no path reaches any more accepts none).
#[derive(Debug)]
pub struct Stopper;

/// What stops `listener` (nothing more to do on Unix).
pub fn stopper(_listener: &Listener) -> Stopper {
    Stopper
}

/// A connected pair, for tests.
#[cfg(test)]
pub fn pair() -> io::Result<(Stream, Stream)> {
    Stream::pair()
}
