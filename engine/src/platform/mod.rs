//! What differs between operating systems, in one place: who may use a store's files (Unix
//! mode bits and owners; Windows ACLs and owner SIDs), opening a file without following a
//! link planted in its place, positioned reads, directory syncs, and whether a mapped file can
//! be replaced by a rename (Windows refuses), the process lock and the process id (WebAssembly
//! has neither). Every other module calls these functions and names no operating system.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

#[cfg(target_family = "wasm")]
mod wasm;
#[cfg(target_family = "wasm")]
pub(crate) use wasm::*;
/// What the CLI's named pipe needs of the Windows security calls.
#[cfg(windows)]
pub use windows::{other_user_of_process, with_private_security};

use std::fs::File;
use std::path::Path;

impl Create {
    /// The standard library's options for opening a file this way (Unix and WebAssembly add
    /// their own flags; Windows asks its own call).
    #[cfg_attr(windows, allow(dead_code))]
    pub(crate) fn options(self) -> std::fs::OpenOptions {
        let mut options = std::fs::OpenOptions::new();
        match self {
            Create::ReadWrite => options.read(true).write(true).create(true).truncate(false),
            Create::Truncate => options.write(true).create(true).truncate(true),
            Create::New => options.write(true).create_new(true),
        };
        options
    }
}

/// Takes the exclusive advisory lock on `file` (`flock` on Unix, `LockFileEx` on Windows), or
/// says it is held.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn try_lock(file: &File) -> Result<(), std::fs::TryLockError> {
    file.try_lock()
}

/// Whether the build can start threads (WebAssembly's cannot): work done aside on one
/// elsewhere is done in line.
#[cfg(not(target_family = "wasm"))]
pub(crate) const THREADS: bool = true;

/// `path` with every link resolved (`std::fs::canonicalize`): two paths to one file compare
/// equal.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn canonical(path: &Path) -> std::io::Result<std::path::PathBuf> {
    std::fs::canonicalize(path)
}

/// Takes the exclusive advisory lock on `file`, waiting for it.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn lock(file: &File) -> std::io::Result<()> {
    file.lock()
}

/// This process's id.
#[cfg(not(target_family = "wasm"))]
pub(crate) fn process_id() -> u32 {
    std::process::id()
}

/// The shared folder `dir` as an object store (a `file://` sync remote).
#[cfg(not(target_family = "wasm"))]
pub(crate) fn folder_store(
    dir: &Path,
) -> Result<Box<dyn object_store::ObjectStore>, object_store::Error> {
    Ok(Box::new(
        object_store::local::LocalFileSystem::new_with_prefix(dir)?,
    ))
}

/// How [`open_private`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    /// For reading and writing, created when missing, kept as it is when there.
    ReadWrite,
    /// For writing, created or truncated.
    Truncate,
    /// For writing, created; failing when something is there.
    New,
}

/// Opens (creating when missing) a store file for reading and writing, private to this user,
/// refusing a symlink in its place.
pub(crate) fn open_own_file(path: &Path) -> std::io::Result<File> {
    open_private(path, Create::ReadWrite)
}

/// Creates `path` afresh (truncating it), private to this user, refusing a symlink in its place.
pub(crate) fn create_own_file(path: &Path) -> std::io::Result<File> {
    open_private(path, Create::Truncate)
}

/// Why the file at `path` may be read or written by users other than its owner (its mode bits
/// on Unix, its ACL on Windows), with how to fix it; `None` when it is private.
///
/// # Errors
/// When the file's metadata or ACL cannot be read.
pub fn exposed(path: &Path) -> std::io::Result<Option<String>> {
    let meta = std::fs::metadata(path)?;
    exposed_file(path, &meta)
}

/// Creates a new file at `path` (failing when one is there, or a link), readable and writable
/// by this user alone: mode 0600 on Unix, an ACL for this user alone on Windows, from the
/// moment it exists.
///
/// # Errors
/// As [`std::fs::OpenOptions::open`] with `create_new`.
pub fn create_new_private(path: &Path) -> std::io::Result<File> {
    open_private(path, Create::New)
}
