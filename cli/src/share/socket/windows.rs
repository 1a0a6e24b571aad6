//! Windows: sharing a store between processes is not offered yet (docs/limits.md). Connecting
//! finds no server, so every process opens the store itself and a second one is told it is
//! locked; serving says why it cannot.

use std::io;
use std::path::Path;
use std::time::Duration;

/// The longest socket path (unused where nothing is served).
pub const MAX_PATH_BYTES: usize = 107;

/// A connection (none can exist on this platform).
#[derive(Debug)]
pub enum Stream {}

/// A listening socket (none can exist on this platform).
#[derive(Debug)]
pub enum Listener {}

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "sharing a store between processes is not available on Windows yet",
    )
}

/// Fails: nothing serves a store on this platform.
pub fn connect(_path: &Path) -> io::Result<Stream> {
    Err(io::Error::new(io::ErrorKind::NotFound, unsupported()))
}

/// Fails with [`io::ErrorKind::Unsupported`].
pub fn bind(_path: &Path) -> io::Result<Listener> {
    Err(unsupported())
}

/// Unreachable: no stream exists.
pub fn other_user(stream: &Stream) -> io::Result<Option<String>> {
    match *stream {}
}

impl Stream {
    /// Unreachable: no stream exists.
    pub fn try_clone(&self) -> io::Result<Stream> {
        match *self {}
    }

    /// Unreachable: no stream exists.
    pub fn set_read_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        match *self {}
    }

    /// Unreachable: no stream exists.
    pub fn set_write_timeout(&self, _: Option<Duration>) -> io::Result<()> {
        match *self {}
    }
}

impl io::Read for Stream {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match *self {}
    }
}

impl io::Write for Stream {
    fn write(&mut self, _: &[u8]) -> io::Result<usize> {
        match *self {}
    }

    fn flush(&mut self) -> io::Result<()> {
        match *self {}
    }
}

impl Listener {
    /// Unreachable: no listener exists.
    pub fn incoming(&self) -> std::iter::Empty<io::Result<Stream>> {
        match *self {}
    }
}
