//! The store's bytes on disk outside redb's own pages: vectors as little-endian `f32`s, the
//! engine's atomic file writes, the database opened through the fault seam, directory syncs.

use std::path::Path;
use std::sync::Arc;

use redb::backends::FileBackend;
use redb::Database;

use super::faults::{self, StorageFaults};
use super::{db, dir};
use crate::error::{Error, Result};

/// Encodes a vector as little-endian f32s.
pub(crate) fn encode_vector(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decodes a stored vector (little-endian f32s); `None` for a ragged length.
pub(crate) fn decode_vector(bytes: &[u8]) -> Option<Vec<f32>> {
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

/// Writes `bytes` to `path` atomically: temporary file, fsync, rename, directory fsync.
pub(crate) fn write_atomic(
    path: &Path,
    bytes: &[u8],
    faults: Option<&Arc<StorageFaults>>,
) -> Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let fault = |op: &'static str| faults::file_op(faults, &tmp, op);
    let published = fault("create")
        .and_then(|()| dir::create_own_file(&tmp).map_err(|e| Error::io(&tmp, "create", e)))
        .and_then(|mut f| {
            f.write_all(bytes)
                .map_err(|e| Error::io(&tmp, "write", e))
                .and_then(|()| fault("fsync"))
                .and_then(|()| f.sync_all().map_err(|e| Error::io(&tmp, "fsync", e)))
        })
        .and_then(|()| std::fs::rename(&tmp, path).map_err(|e| Error::io(path, "rename", e)));
    if published.is_err() {
        // A full disk must not leave a half-written temporary file behind.
        let _ = std::fs::remove_file(&tmp);
    }
    published?;
    sync_parent(path)
}

/// Opens (creating) the redb database at `path`, through the fault seam when given. redb can
/// panic on a damaged file; that is reported as a corrupt store, not a crash.
pub(crate) fn open_database(path: &Path, faults: Option<&Arc<StorageFaults>>) -> Result<Database> {
    let open = || -> Result<Database> {
        // Created 0600 and never through a symlink; redb opens the file it is given.
        let file = dir::open_own_file(path).map_err(|e| Error::io(path, "open database", e))?;
        let Some(faults) = faults else {
            return Database::builder().create_file(file).map_err(db);
        };
        let backend = FileBackend::new(file).map_err(db)?;
        Database::builder()
            .create_with_backend(faults::FaultyBackend::new(backend, faults.clone()))
            .map_err(db)
    };
    crate::contained::catch(open).unwrap_or_else(|| {
        Err(Error::Corrupt {
            path: path.to_path_buf(),
            detail: "the database file is damaged (redb could not read it)".into(),
        })
    })
}

/// fsyncs the directory holding `path` so a rename to it is durable.
pub(crate) fn sync_parent(path: &Path) -> Result<()> {
    // The parent of a bare file name (`backup.mlx`) is the empty path: the current directory.
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    crate::platform::sync_dir(dir).map_err(|e| Error::io(dir, "fsync directory", e))
}
