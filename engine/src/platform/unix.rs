//! Unix: mode bits (0700 directories, 0600 files), owners by uid, `O_NOFOLLOW`, `pread`,
//! and directories fsynced so a rename in them survives power loss.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::Create;

/// Mode of a store directory this engine creates.
const DIR_MODE: u32 = 0o700;
/// Mode of every file this engine creates (and of exports, which hold the same text).
const FILE_MODE: u32 = 0o600;

/// A rename may replace a file that is mapped: readers keep the old bytes until they unmap.
pub(crate) const RENAME_REPLACES_MAPPED: bool = true;

/// Creates directory `dir` (its parent exists) readable and writable by this user alone.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().mode(DIR_MODE).create(dir)
}

/// Why `dir` (with metadata `meta`) is not safe to keep a store in: another user owns it, or
/// others can write it. `None` when only this user (or root) can change it.
pub(crate) fn unsafe_directory(dir: &Path, meta: &Metadata) -> io::Result<Option<String>> {
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.permissions().mode() & 0o7777;
    Ok(if meta.uid() != me && meta.uid() != 0 {
        Some(format!("it belongs to user {} (you are {me})", meta.uid()))
    } else if mode & 0o022 != 0 {
        Some(format!(
            "other users can write it (mode {mode:04o}); `chmod go-w {}` fixes that",
            dir.display()
        ))
    } else {
        None
    })
}

/// Why a key file may be read or written by other users (its permission bits), or `None`.
pub(crate) fn exposed_file(_path: &Path, meta: &Metadata) -> io::Result<Option<String>> {
    let mode = meta.permissions().mode() & 0o777;
    Ok((mode & 0o077 != 0).then(|| format!("mode {mode:o}; chmod 600 it")))
}

/// Opens `path` as `how` says, a new file created private (0600), never through a symlink
/// (`O_NOFOLLOW`: ELOOP).
pub(crate) fn open_private(path: &Path, how: Create) -> io::Result<File> {
    let mut options = how.options();
    let nofollow = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    options.mode(FILE_MODE).custom_flags(nofollow).open(path)
}

/// Reads exactly `buf.len()` bytes at `offset`, leaving the file's position alone.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    file.read_exact_at(buf, offset)
}

/// Fsyncs directory `dir`, so that a rename or a new file in it survives power loss.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}
