//! The embedded database's failures, kept opaque behind [`StoreError`].

/// A failure inside the embedded database. Opaque: which database the store uses is the
/// engine's business; the message and [`std::error::Error::source`] say what happened.
#[derive(Debug)]
pub struct StoreError(pub(super) redb::Error);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}
