//! What the queue stores: a slot's entry (an id and its line), a tree node (a subtree's
//! winner and its next change), and the bucket size.

use super::{Time, EMPTY};

/// Items per leaf bucket. A bucket is a flat kinetic node: its winner is the minimum of its
/// lines and its certificate the first time another of its lines crosses below that winner.
/// Scanning 16 contiguous lines (384 bytes) costs less than the four tree levels it replaces,
/// and it shrinks the tree 16-fold: at a million items the tree (4 MB) stays in cache.
pub(super) const BUCKET: usize = 16;

/// One item: its id and its line, stored as the value at the queue's base time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) v: f64,
    pub(super) slope: f64,
}

pub(super) const EMPTY_ENTRY: Entry = Entry {
    id: EMPTY,
    v: 0.0,
    slope: 0.0,
};

/// A tree node: the winner of its subtree (its id and line, copied in so a recompute reads
/// only the two adjacent child nodes, one cache line) and the subtree's next winner change.
/// The line is stored as its value at the queue's base time.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(32))]
pub(super) struct Node {
    pub(super) id: u64,
    pub(super) v: f64,
    pub(super) slope: f64,
    pub(super) melt: Time,
}

impl Node {
    /// Bit-for-bit equal (a recompute that changed nothing).
    #[inline]
    pub(super) fn same(&self, other: &Node) -> bool {
        self.id == other.id
            && self.v.to_bits() == other.v.to_bits()
            && self.slope.to_bits() == other.slope.to_bits()
            && self.melt.to_bits() == other.melt.to_bits()
    }
}

pub(super) const EMPTY_NODE: Node = Node {
    id: EMPTY,
    v: 0.0,
    slope: 0.0,
    melt: Time::INFINITY,
};
