//! The thread pool an embedder or a cross-encoder may keep of its own.

use crate::error::{EmbedError, Result};

/// A pool of `threads` threads; `None` (the caller's rayon pool) for `None`.
///
/// # Errors
/// [`EmbedError::InvalidOption`] (`threads`) for 0 or a pool the system cannot start.
pub(crate) fn own_pool(threads: Option<usize>) -> Result<Option<rayon::ThreadPool>> {
    match threads {
        None => Ok(None),
        Some(0) => Err(EmbedError::InvalidOption {
            name: "threads",
            reason: "must be at least 1".into(),
        }),
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map(Some)
            .map_err(|e| EmbedError::InvalidOption {
                name: "threads",
                reason: e.to_string(),
            }),
    }
}
