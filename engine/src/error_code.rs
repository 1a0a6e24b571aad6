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

/// A language's own error that a door's class also is, where the language has one (Python's
/// `except ValueError` catches an [`ErrorCode::InvalidInput`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// A bad value (Python's `ValueError`).
    Value,
    /// A missing key (Python's `LookupError`).
    Lookup,
    /// An operating-system failure (Python's `OSError`).
    Os,
}

/// One error class as every door names it: the table Python's exceptions, Node's and the
/// browser's error classes are generated from (`engine/tests/integration/door_errors.rs`
/// checks, and with `MEMLOOP_REGENERATE=1` writes, the generated parts of their files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorClass {
    /// The code's name: [`ErrorCode::name`], or `callback` and `panic`, the doors' own.
    pub code: &'static str,
    /// Its number: the C ABI's status (`MEMLOOP_ERR_*`).
    pub number: u32,
    /// The class a door raises.
    pub class: &'static str,
    /// What it means, one sentence: the class's documentation on every door.
    pub doc: &'static str,
    /// The code of the class it is a kind of, where that is not the doors' base class.
    pub parent: Option<&'static str>,
    /// The language's own error it also is, where the language has one.
    pub builtin: Option<Builtin>,
}

/// Every error class, by number: the engine's codes and the doors' two (11, a caller's
/// callback failed; 12, a panic caught at the boundary).
pub const ERROR_CLASSES: [ErrorClass; 15] = {
    const fn class(
        code: &'static str,
        number: u32,
        class: &'static str,
        doc: &'static str,
    ) -> ErrorClass {
        ErrorClass {
            code,
            number,
            class,
            doc,
            parent: None,
            builtin: None,
        }
    }
    const fn builtin(c: ErrorClass, b: Builtin) -> ErrorClass {
        ErrorClass {
            builtin: Some(b),
            ..c
        }
    }
    const fn kind_of(c: ErrorClass, parent: &'static str) -> ErrorClass {
        ErrorClass {
            parent: Some(parent),
            ..c
        }
    }
    [
        builtin(
            class(
                "invalid_input",
                1,
                "InvalidInputError",
                "A wrong argument: empty text, a bad value, an unknown field or operation, a closed store; nothing changed.",
            ),
            Builtin::Value,
        ),
        builtin(
            class(
                "not_found",
                2,
                "NotFoundError",
                "No memory has the given id (in the caller's scope).",
            ),
            Builtin::Lookup,
        ),
        class("locked", 3, "LockedError", "Another process holds the store open."),
        class(
            "model_mismatch",
            4,
            "ModelMismatchError",
            "The store was built with another embedding model.",
        ),
        class(
            "corrupt",
            5,
            "CorruptError",
            "A file of the store is damaged: refused before it was believed.",
        ),
        class(
            "unsupported_version",
            6,
            "UnsupportedVersionError",
            "A file was written by a newer memloop.",
        ),
        builtin(
            class(
                "io",
                7,
                "StorageIOError",
                "The file system refused a read or a write.",
            ),
            Builtin::Os,
        ),
        class("store", 8, "StoreError", "The embedded database failed."),
        class("index", 9, "VectorIndexError", "The vector index failed."),
        class(
            "embed",
            10,
            "EmbedError",
            "The embedding model failed or could not be loaded.",
        ),
        class(
            "callback",
            11,
            "CallbackError",
            "A caller's callback (a reranker, refiner, summarizer or token counter) failed; the cause is its error.",
        ),
        class(
            "panic",
            12,
            "PanicError",
            "memloop hit an internal bug, reported instead of crashing: stored data is unharmed and the store stays usable.",
        ),
        kind_of(
            class(
                "poisoned",
                13,
                "PoisonedError",
                "A commit failed and the database could not be reopened for writing yet (a full disk): reads go on, writes are refused until storage recovers.",
            ),
            "store",
        ),
        kind_of(
            class(
                "background",
                14,
                "BackgroundError",
                "The background thread's last checkpoint or flush failed.",
            ),
            "store",
        ),
        class(
            "key",
            15,
            "StoreKeyError",
            "The store is encrypted and its key file is missing, wrong or damaged, or a passphrase is wrong; nothing was written.",
        ),
    ]
};

impl ErrorCode {
    /// Its class on every door ([`ERROR_CLASSES`]).
    pub fn class(self) -> &'static ErrorClass {
        ERROR_CLASSES
            .iter()
            .find(|c| c.number == self as u32)
            .expect("every code has a class (tested)")
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
            assert_eq!(code.class().code, code.name());
        }
    }

    #[test]
    fn the_class_table_holds_every_code_once_by_number_with_its_parents_first() {
        let numbers: Vec<u32> = ERROR_CLASSES.iter().map(|c| c.number).collect();
        assert_eq!(numbers, (1..=15).collect::<Vec<_>>());
        for code in ErrorCode::ALL {
            assert_eq!(code.class().number, code as u32);
        }
        let doors: Vec<&str> = ERROR_CLASSES
            .iter()
            .filter(|c| ErrorCode::from_name(c.code).is_none())
            .map(|c| c.code)
            .collect();
        assert_eq!(doors, ["callback", "panic"]);
        for (i, c) in ERROR_CLASSES.iter().enumerate() {
            assert!(c.class.ends_with("Error") && c.doc.ends_with('.'), "{c:?}");
            if let Some(p) = c.parent {
                // Defined before it, so a door can make the parent's class first.
                assert!(ERROR_CLASSES[..i].iter().any(|q| q.code == p), "{c:?}");
            }
        }
    }
}
