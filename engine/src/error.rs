//! The engine's error type.
//!
//! Errors fall into groups a caller reacts to differently:
//! - **caller errors** ([`Error::InvalidInput`], [`Error::NotFound`]): the request was wrong;
//!   nothing changed.
//! - **store state** ([`Error::Locked`], [`Error::ModelMismatch`], [`Error::Corrupt`],
//!   [`Error::UnsupportedVersion`], [`Error::Poisoned`]): the directory cannot be used as asked.
//! - **parts** ([`Error::Store`], [`Error::Index`], [`Error::Embed`], [`Error::Io`]): a component
//!   failed; a write that fails leaves the store as it was before the write.

use std::path::PathBuf;

use crate::id::MemoryId;
use crate::invalid::InvalidInput;

/// Everything that can go wrong in the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The request is malformed (empty text, bad parameter, …; the reason says which);
    /// nothing changed.
    #[error("invalid input: {0}")]
    InvalidInput(InvalidInput),
    /// No memory has this id.
    #[error("no memory with id {0}")]
    NotFound(MemoryId),
    /// Another process holds the store open for writing.
    #[error("{path}: store is locked by {} (close it there first)", holder(*pid))]
    Locked {
        /// The store directory.
        path: PathBuf,
        /// The process that holds the lock, as it recorded itself; `None` while the holder has
        /// taken the lock but not yet written its pid (two processes starting together).
        pid: Option<u32>,
    },
    /// The store was built with another embedding model; its vectors cannot be compared with
    /// this model's. Export it and import into a store of this model to re-embed.
    #[error("{path}: store was built with model {store} but {loaded} is loaded; open it with that model, or export and import to re-embed")]
    ModelMismatch {
        /// The store directory.
        path: PathBuf,
        /// Fingerprint recorded in the store.
        store: String,
        /// Fingerprint of the loaded model.
        loaded: String,
    },
    /// A file is not what it should be (bad magic, checksum, truncated record, undecodable item).
    #[error("{path}: corrupt: {detail}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A file was written by a newer memloop than this one.
    #[error("{path}: format version {found} is newer than this build reads ({supported}); upgrade memloop")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Version found.
        found: u32,
        /// Newest version this build reads.
        supported: u32,
    },
    /// A commit failed earlier in this session (a failed fsync, a full disk): what reached the
    /// disk is unknown, so the store refuses every write until it is reopened, when the
    /// database recovers its last committed state. Reads still work.
    #[error("{path}: store refuses writes after a failed commit ({cause}); close and reopen it")]
    Poisoned {
        /// The database file.
        path: PathBuf,
        /// The failure that poisoned it.
        cause: String,
    },
    /// The background thread's last checkpoint or flush failed and nothing has succeeded since
    /// (returned by [`crate::Admin::flush`]). The database keeps every acknowledged write;
    /// after a failed flush the store is also [`Error::Poisoned`].
    #[error("{0}")]
    Background(String),
    /// The embedded database failed.
    #[error("store database: {0}")]
    Store(StoreError),
    /// The vector index failed.
    #[error("index: {0}")]
    Index(#[from] memloop_index::IndexError),
    /// The embedder failed.
    #[error("embedder: {0}")]
    Embed(#[from] memloop_embed::EmbedError),
    /// The store's key is missing or wrong, the key file is damaged, or a sealed record
    /// fails authentication ([`crate::privacy::KeyError`]); nothing was written.
    #[error("{0}")]
    Key(#[from] crate::crypt::KeyError),
    /// An I/O operation failed.
    #[error("{path}: {op}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        op: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub(crate) fn io(path: &std::path::Path, op: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }
}

impl From<InvalidInput> for Error {
    fn from(e: InvalidInput) -> Self {
        Error::InvalidInput(e)
    }
}

/// Names the holder of a store's lock.
fn holder(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("process {pid}"),
        None => "another process that is still opening it".into(),
    }
}

/// A failure inside the embedded database. Opaque: which database the store uses is the
/// engine's business; the message and [`std::error::Error::source`] say what happened.
#[derive(Debug)]
pub struct StoreError(pub(crate) Box<dyn std::error::Error + Send + Sync>);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.0.as_ref())
    }
}

/// Result alias for this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
