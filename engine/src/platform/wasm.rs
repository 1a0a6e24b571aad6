//! WebAssembly (`wasm32-wasip1`, the browser build): files through the host's WASI layer,
//! which keeps them in the page origin's private file system (or, for tests, in a folder Node
//! hands the program). No other user can reach an origin's files, so there are no permission
//! bits or owners to check and no links to refuse; no memory maps (the index is read into
//! memory); no other process, so no process lock: a store's files are held exclusively by the
//! host (the browser's file handles on them are), and a second page opening them fails there.

use std::fs::{File, Metadata, TryLockError};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use super::Create;

/// No threads: work done aside on one elsewhere is done in line.
pub(crate) const THREADS: bool = false;

/// Nothing is mapped: a rename may always replace the index file.
pub(crate) const RENAME_REPLACES_MAPPED: bool = true;

/// Creates directory `dir` (its parent exists): private to the page's origin, as every file is.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir(dir)
}

/// Never unsafe: an origin's files are that origin's alone.
pub(crate) fn unsafe_directory(_dir: &Path, _meta: &Metadata) -> io::Result<Option<String>> {
    Ok(None)
}

/// Never exposed: an origin's files are that origin's alone.
pub(crate) fn exposed_file(_path: &Path, _meta: &Metadata) -> io::Result<Option<String>> {
    Ok(None)
}

/// Opens `path` as `how` says (the host's file system has no links to refuse).
pub(crate) fn open_private(path: &Path, how: Create) -> io::Result<File> {
    how.options().open(path)
}

/// Reads exactly `buf.len()` bytes at `offset`. WASI's positioned read is not stable Rust, so
/// this seeks: the build has one thread, so nothing else moves the position meanwhile.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut file = file;
    file.seek(SeekFrom::Start(offset))?;
    file.read_exact(buf)
}

/// A directory needs no sync of its own: the host applies a rename or a new file at once.
pub(crate) fn sync_dir(_dir: &Path) -> io::Result<()> {
    Ok(())
}

/// Always taken: the host holds the store's files exclusively (see the module's documentation).
pub(crate) fn try_lock(_file: &File) -> Result<(), TryLockError> {
    Ok(())
}

/// Taken at once: the host holds the store's files exclusively, and the build has one thread.
pub(crate) fn lock(_file: &File) -> io::Result<()> {
    Ok(())
}

/// No process ids: 0, which a lock file reads as "no holder named".
pub(crate) fn process_id() -> u32 {
    0
}

/// No shared folder: object_store has no local file system for WebAssembly, and a page's
/// files are its origin's alone.
pub(crate) fn folder_store(
    dir: &Path,
) -> Result<Box<dyn object_store::ObjectStore>, object_store::Error> {
    Err(object_store::Error::NotSupported {
        source: format!(
            "{}: a shared folder is not a sync remote in the browser build",
            dir.display()
        )
        .into(),
    })
}

/// `path` made absolute with `.` and `..` resolved by name, once it exists: WASI has no links
/// and no `realpath` (`std::fs::canonicalize` is unsupported there), so two paths to one file
/// differ only by those.
pub(crate) fn canonical(path: &Path) -> io::Result<std::path::PathBuf> {
    std::fs::metadata(path)?;
    let mut out = std::path::PathBuf::new();
    for part in std::path::absolute(path)?.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}
