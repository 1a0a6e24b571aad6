//! The index's error type.
//!
//! Errors fall into four groups, kept apart so callers can react to each:
//! - **caller errors** ([`IndexError::DimensionMismatch`], [`IndexError::InvalidVector`],
//!   [`IndexError::InvalidParameter`], [`IndexError::DuplicateId`], [`IndexError::NotFound`]):
//!   the request was wrong; nothing changed.
//! - **file errors** ([`IndexError::NotAnIndex`], [`IndexError::UnsupportedVersion`],
//!   [`IndexError::Truncated`], [`IndexError::Corrupted`], [`IndexError::ChecksumMismatch`]):
//!   an index file cannot be trusted. The index is a derived cache, so a store that owns one
//!   rebuilds it from its source of truth instead of repairing it.
//! - **I/O** ([`IndexError::Io`]): the operating system refused; a failed save leaves the
//!   previous file in place.
//! - **cancellation** ([`IndexError::Cancelled`]): a long operation stopped when asked to.

use std::path::PathBuf;

/// Everything that can go wrong in `memloop-index`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// A vector or query has the wrong number of components.
    #[error("vector has {got} dimensions but the index holds {expected}-dimensional vectors")]
    DimensionMismatch {
        /// The index's dimension.
        expected: usize,
        /// The length that was passed.
        got: usize,
    },
    /// A vector cannot be normalised (zero, NaN or infinite components).
    #[error("invalid vector: {reason}")]
    InvalidVector {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A construction or search parameter is out of range.
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// What range it must be in.
        reason: String,
    },
    /// An id that is already in the index was inserted again; delete it first to replace it.
    #[error("id {0} is already in the index (delete it first to replace its vector)")]
    DuplicateId(u64),
    /// The id is not in the index (never inserted, or deleted).
    #[error("id {0} is not in the index")]
    NotFound(u64),
    /// The file does not start with the memloop index magic.
    #[error("{path}: not a memloop index file (wrong magic bytes)")]
    NotAnIndex {
        /// The file.
        path: PathBuf,
    },
    /// The file was written by a newer format version than this library reads.
    #[error("{path}: index format version {found} is not supported (this build reads {min}..={max}); upgrade memloop or rebuild the index")]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u32,
        /// Oldest version read.
        min: u32,
        /// Newest version read.
        max: u32,
    },
    /// The file is shorter than its header says.
    #[error("{path}: truncated: {what} needs {needed} bytes but the file has {actual}")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Which part ran past the end.
        what: &'static str,
        /// Bytes that part needs.
        needed: u64,
        /// Bytes in the file.
        actual: u64,
    },
    /// The header or a section is inconsistent.
    #[error("{path}: corrupted {section}: {detail}")]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// Which part of the file.
        section: &'static str,
        /// What is inconsistent.
        detail: String,
    },
    /// A checksum does not match the bytes it covers.
    #[error("{path}: checksum mismatch in {section}: expected {expected:#018x}, got {got:#018x}")]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// Which part of the file.
        section: &'static str,
        /// Checksum stored in the file.
        expected: u64,
        /// Checksum of the bytes found.
        got: u64,
    },
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
    /// The operation was cancelled through its cancel flag; `done` items were applied.
    #[error("cancelled after {done} items")]
    Cancelled {
        /// How many items were applied before stopping.
        done: usize,
    },
}

impl IndexError {
    pub(crate) fn io(path: &std::path::Path, op: &'static str, source: std::io::Error) -> Self {
        IndexError::Io {
            path: path.to_path_buf(),
            op,
            source,
        }
    }
}

/// Result alias for this crate.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;
