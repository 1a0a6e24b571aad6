//! One stable code and category per engine error, the same on every door: the C ABI's status
//! (`MEMLOOP_ERR_*` has these numbers), Python's exception class, MCP tool errors and the CLI's
//! exit status are all read from [`crate::Error::code`]. The enum is exhaustive on purpose: a
//! new code breaks every door's mapping at compile time instead of falling through to a
//! generic one.

use serde::Serialize;

/// An engine error's stable code. The numbers never change meaning; 11 and 12 belong to the
/// doors (a caller's callback failed; a panic was caught at the boundary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u32)]
pub enum ErrorCode {
    /// The request was wrong ([`crate::Error::InvalidInput`]); nothing changed.
    InvalidInput = 1,
    /// No memory with that id (in the caller's scope).
    NotFound = 2,
    /// Another process holds the store.
    Locked = 3,
    /// The store was built with another embedding model.
    ModelMismatch = 4,
    /// A file of the store is damaged.
    Corrupt = 5,
    /// A file was written by a newer memloop.
    UnsupportedVersion = 6,
    /// An operating-system I/O operation failed.
    Io = 7,
    /// The embedded database failed.
    Store = 8,
    /// The vector index failed.
    Index = 9,
    /// The embedding model failed or could not be loaded.
    Embed = 10,
    /// A commit failed and the database could not be reopened for writing yet.
    Poisoned = 13,
    /// The background thread's last checkpoint or flush failed.
    Background = 14,
    /// The store's key is missing or wrong, or its key file is damaged.
    Key = 15,
}

/// What a caller does about an error: the coarse groups the CLI's exit status reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCategory {
    /// Fix the request.
    InvalidInput,
    /// Nothing there.
    NotFound,
    /// Wait for, or stop, the other process.
    Locked,
    /// A file is damaged or foreign: check, salvage, or use another memloop.
    Damaged,
    /// Writes are refused until storage recovers.
    Poisoned,
    /// The disk, database or index failed.
    Storage,
    /// The model is missing, failed or does not match.
    Model,
    /// Give the store's key file (and passphrase).
    Key,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::InvalidInput,
        ErrorCode::NotFound,
        ErrorCode::Locked,
        ErrorCode::ModelMismatch,
        ErrorCode::Corrupt,
        ErrorCode::UnsupportedVersion,
        ErrorCode::Io,
        ErrorCode::Store,
        ErrorCode::Index,
        ErrorCode::Embed,
        ErrorCode::Poisoned,
        ErrorCode::Background,
        ErrorCode::Key,
    ];

    /// The code's name (`"poisoned"`), as the doors print it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Locked => "locked",
            ErrorCode::ModelMismatch => "model_mismatch",
            ErrorCode::Corrupt => "corrupt",
            ErrorCode::UnsupportedVersion => "unsupported_version",
            ErrorCode::Io => "io",
            ErrorCode::Store => "store",
            ErrorCode::Index => "index",
            ErrorCode::Embed => "embed",
            ErrorCode::Poisoned => "poisoned",
            ErrorCode::Background => "background",
            ErrorCode::Key => "key",
        }
    }

    /// The code named `name` ([`ErrorCode::name`]), as a door that received only text (a
    /// forwarded call) reads it back.
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Its category.
    pub fn category(self) -> ErrorCategory {
        match self {
            ErrorCode::InvalidInput => ErrorCategory::InvalidInput,
            ErrorCode::NotFound => ErrorCategory::NotFound,
            ErrorCode::Locked => ErrorCategory::Locked,
            ErrorCode::Corrupt | ErrorCode::UnsupportedVersion => ErrorCategory::Damaged,
            ErrorCode::Poisoned => ErrorCategory::Poisoned,
            ErrorCode::Io | ErrorCode::Store | ErrorCode::Index | ErrorCode::Background => {
                ErrorCategory::Storage
            }
            ErrorCode::ModelMismatch | ErrorCode::Embed => ErrorCategory::Model,
            ErrorCode::Key => ErrorCategory::Key,
        }
    }
}

impl ErrorCategory {
    /// The CLI's exit status for an error of this category (1 is kept for failures that are
    /// not the engine's, 2 is clap's for a malformed command line).
    pub fn exit_status(self) -> u8 {
        match self {
            ErrorCategory::InvalidInput => 3,
            ErrorCategory::NotFound => 4,
            ErrorCategory::Locked => 5,
            ErrorCategory::Damaged => 6,
            ErrorCategory::Poisoned => 7,
            ErrorCategory::Storage => 8,
            ErrorCategory::Model => 9,
            ErrorCategory::Key => 10,
        }
    }
}

impl crate::error::Error {
    /// This error's stable code.
    pub fn code(&self) -> ErrorCode {
        use crate::error::Error as E;
        match self {
            E::InvalidInput(_) => ErrorCode::InvalidInput,
            E::NotFound(_) => ErrorCode::NotFound,
            E::Locked { .. } => ErrorCode::Locked,
            E::ModelMismatch { .. } => ErrorCode::ModelMismatch,
            E::Corrupt { .. } => ErrorCode::Corrupt,
            E::UnsupportedVersion { .. } => ErrorCode::UnsupportedVersion,
            E::Poisoned { .. } => ErrorCode::Poisoned,
            E::Background(_) => ErrorCode::Background,
            E::Store(_) => ErrorCode::Store,
            E::Index(_) => ErrorCode::Index,
            E::Embed(_) => ErrorCode::Embed,
            E::Io { .. } => ErrorCode::Io,
            // A record that fails authentication is a damaged file, like a bad checksum.
            E::Key(crate::crypt::KeyError::Tampered { .. }) => ErrorCode::Corrupt,
            E::Key(_) => ErrorCode::Key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_stable_and_named_once() {
        let all = [
            (ErrorCode::InvalidInput, 1),
            (ErrorCode::NotFound, 2),
            (ErrorCode::Locked, 3),
            (ErrorCode::ModelMismatch, 4),
            (ErrorCode::Corrupt, 5),
            (ErrorCode::UnsupportedVersion, 6),
            (ErrorCode::Io, 7),
            (ErrorCode::Store, 8),
            (ErrorCode::Index, 9),
            (ErrorCode::Embed, 10),
            (ErrorCode::Poisoned, 13),
            (ErrorCode::Background, 14),
            (ErrorCode::Key, 15),
        ];
        let mut names = std::collections::HashSet::new();
        for (code, n) in all {
            assert_eq!(code as u32, n);
            assert!(names.insert(code.name()));
            assert_eq!(ErrorCode::from_name(code.name()), Some(code));
            assert_eq!(serde_json::to_value(code).unwrap(), code.name());
            assert!((3..=10).contains(&code.category().exit_status()));
        }
    }
}
