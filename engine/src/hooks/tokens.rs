//! How text is counted against a context's budget.

/// Counts tokens the way the model reading the context will.
pub trait TokenCounter: Send + Sync {
    /// Tokens in `text`.
    fn count(&self, text: &str) -> usize;
}
