//! What differs between operating systems for the index's files, in one place (the memory
//! maps, and WebAssembly's lack of them, are `mmap.rs`'s): a file's identity (Unix keeps a
//! change time no process can set back; elsewhere there is nothing to trust), a new file
//! readable by its owner alone, and the directory fsync that makes a rename durable.

use std::fs::{Metadata, OpenOptions};
use std::path::Path;

/// What identifies one version of a file beside its length: its modification and change
/// times (ns), inode and device.
pub(crate) struct FileIdentity {
    pub(crate) mtime_ns: i128,
    pub(crate) ctime_ns: i128,
    pub(crate) ino: u64,
    pub(crate) dev: u64,
}

/// The identity of the file `meta` describes.
#[cfg(unix)]
pub(crate) fn file_identity(meta: &Metadata) -> Option<FileIdentity> {
    use std::os::unix::fs::MetadataExt;
    let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
    Some(FileIdentity {
        mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
        ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        ino: meta.ino(),
        dev: meta.dev(),
    })
}

/// None off Unix: no change time to trust, so such files are always verified before use.
#[cfg(not(unix))]
pub(crate) fn file_identity(_meta: &Metadata) -> Option<FileIdentity> {
    None
}

/// Makes the files `options` creates readable and writable by their owner alone (0600).
#[cfg(unix)]
pub(crate) fn owner_only(options: &mut OpenOptions) {
    std::os::unix::fs::OpenOptionsExt::mode(options, 0o600);
}

/// Nothing off Unix: the file takes its directory's access rules.
#[cfg(not(unix))]
pub(crate) fn owner_only(_options: &mut OpenOptions) {}

/// Fsyncs the directory `dir`, so a rename into it survives power loss; on failure, what was
/// being done and the error.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> Result<(), (&'static str, std::io::Error)> {
    let d = std::fs::File::open(dir).map_err(|e| ("open directory for fsync", e))?;
    d.sync_all().map_err(|e| ("fsync directory", e))
}

/// Nothing off Unix: a directory cannot be opened to be synced there.
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> Result<(), (&'static str, std::io::Error)> {
    Ok(())
}
