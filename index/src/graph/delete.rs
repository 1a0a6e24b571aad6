//! Deletion: a tombstone plus repair of the neighbour lists that pointed at the deleted node.
//!
//! HNSW links are mostly mutual, so the nodes that link to `d` are found among `d`'s own
//! neighbours. Each such node drops `d` and re-selects its neighbours (heuristic of Algorithm 4)
//! from its remaining links plus `d`'s neighbours, which keeps the region `d` bridged connected
//! (the "repair" of Xiao et al., "Enhancing HNSW Index for Real-Time Updates", 2024). The
//! tombstoned node keeps its own links and stays traversable until the next save compacts it
//! away; searches never return it. Links to `d` that repair missed (one-way links) are dropped at
//! compaction.

use super::select::reselect;
use super::Index;
use crate::error::{IndexError, Result};

impl Index {
    /// Deletes `id`: it is never returned again, and its neighbours are relinked.
    ///
    /// # Errors
    /// [`IndexError::NotFound`] if `id` is not live.
    pub fn delete(&self, id: u64) -> Result<()> {
        let _gate = self.gate.read();
        let view = self.store.view();
        let node = view.find(id).ok_or(IndexError::NotFound(id))?;
        if !view.mark_deleted(node) {
            return Err(IndexError::NotFound(id));
        }
        if node >= self.store.base_len {
            self.store.fresh_ids.write().remove(&id);
        }
        let sims = self.node_sim();
        let mut outs = Vec::new();
        for level in 0..=view.level(node) {
            view.links_into(node, level, &mut outs);
            let max = self.params.max_links(level);
            for &x in &outs {
                if x == node || view.is_deleted(x) {
                    continue;
                }
                view.with_links_mut(x, level, |ls| {
                    let Some(pos) = ls.iter().position(|&n| n == node) else {
                        return;
                    };
                    ls.swap_remove(pos);
                    let extra = outs
                        .iter()
                        .copied()
                        .filter(|&o| o != x && o != node && !view.is_deleted(o));
                    let ids: Vec<u32> = ls
                        .iter()
                        .copied()
                        .filter(|&n| !view.is_deleted(n))
                        .chain(extra)
                        .collect();
                    *ls = reselect(&view, sims, x, ids.into_iter(), max);
                });
            }
        }
        Ok(())
    }
}
