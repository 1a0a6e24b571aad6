//! A node with its similarity to a query, the unit every search ranks.

use std::cmp::Ordering;

/// A (similarity, node) pair ordered by similarity, then node id (a total order, no NaN issues).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scored {
    pub sim: f32,
    pub node: u32,
}

impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sim
            .total_cmp(&other.sim)
            .then(other.node.cmp(&self.node))
    }
}
