//! The tree's leaves: buckets of [`BUCKET`] slots, each summarised as a flat kinetic node
//! (its winner now and the first time another of its lines crosses below it).

use super::node::{Entry, Node, BUCKET, EMPTY_NODE};
use super::tree::KineticQueue;
use super::{before, Time, EMPTY};

impl KineticQueue {
    pub(super) fn bucket(&self, b: usize) -> &[Entry] {
        &self.entries[b * BUCKET..(b + 1) * BUCKET]
    }

    /// Recomputes bucket `b`'s summary: its minimum now, and the first time another of its
    /// lines drops below that minimum.
    #[inline]
    pub(super) fn recompute_bucket(&mut self, b: usize) {
        let dt = self.now - self.base;
        let bucket = self.bucket(b);
        // Each value is evaluated once and shared by the minimum and the crossings.
        let values: [f64; BUCKET] = std::array::from_fn(|i| bucket[i].v + bucket[i].slope * dt);
        let mut winner: Option<usize> = None;
        for (i, e) in bucket.iter().enumerate() {
            if e.id == EMPTY {
                continue;
            }
            let wins = winner.is_none_or(|w| {
                let w_entry = &bucket[w];
                before(
                    values[i],
                    e.slope,
                    e.id,
                    values[w],
                    w_entry.slope,
                    w_entry.id,
                )
            });
            if wins {
                winner = Some(i);
            }
        }
        let node = match winner {
            None => EMPTY_NODE,
            Some(w) => {
                let win = bucket[w];
                let mut melt = Time::INFINITY;
                for (i, e) in bucket.iter().enumerate() {
                    if i != w && e.id != EMPTY {
                        melt = melt.min(self.crossing(win.slope, values[w], e.slope, values[i]));
                    }
                }
                Node {
                    id: win.id,
                    v: win.v,
                    slope: win.slope,
                    melt,
                }
            }
        };
        self.nodes[self.cap + b] = node;
    }
}
