//! The brute-force reference queue.

use rustc_hash::FxHashMap;

use super::{KineticError, Line, Time};

/// The brute-force reference: every query scans all items. The oracle of the property tests
/// and the baseline of `kinetic-bench`.
#[derive(Debug, Clone, Default)]
pub struct BruteForceQueue {
    now: Time,
    pub(super) items: FxHashMap<u64, Line>,
}

impl BruteForceQueue {
    /// An empty queue at `now`.
    pub fn new(now: Time) -> Self {
        BruteForceQueue {
            now,
            items: FxHashMap::default(),
        }
    }
    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// True if empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    /// Adds or replaces.
    pub fn set_line(&mut self, id: u64, line: Line) {
        self.items.insert(id, line);
    }
    /// Removes.
    pub fn remove(&mut self, id: u64) -> Option<Line> {
        self.items.remove(&id)
    }
    /// Moves time forward.
    ///
    /// # Errors
    /// As [`super::KineticQueue::advance`].
    pub fn advance(&mut self, t: Time) -> Result<(), KineticError> {
        if t < self.now || t.is_nan() {
            return Err(KineticError::TimeWentBack {
                now: self.now,
                to: t,
            });
        }
        self.now = t;
        Ok(())
    }
    /// The minimum by (value, slope, id).
    pub fn peek_min(&self) -> Option<(u64, f64)> {
        self.items
            .iter()
            .map(|(&id, l)| (l.eval(self.now), l.slope, id))
            .min_by(|a, b| {
                a.0.total_cmp(&b.0)
                    .then(a.1.total_cmp(&b.1))
                    .then(a.2.cmp(&b.2))
            })
            .map(|(v, _, id)| (id, v))
    }
    /// Removes the minimum.
    pub fn pop_min(&mut self) -> Option<(u64, f64)> {
        let m = self.peek_min()?;
        self.items.remove(&m.0);
        Some(m)
    }
    /// Items at most `theta` now.
    pub fn at_most(&self, theta: f64) -> Vec<(u64, f64)> {
        self.items
            .iter()
            .map(|(&id, l)| (id, l.eval(self.now)))
            .filter(|&(_, v)| v <= theta)
            .collect()
    }
}
