//! The background thread: checkpoints after enough changes or time, flushes grouped writes.

use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::Inner;
use crate::error::Result;
use crate::options::Durability;

/// How often the thread wakes to look.
const TICK: Duration = Duration::from_millis(250);
/// Grouped writes are flushed at least this often.
const FLUSH_EVERY: Duration = Duration::from_secs(1);

/// A checkpoint writes the whole index, so on a large index it waits for changes amounting to
/// this fraction of its items (1 / `SAVE_SPACING`).
const SAVE_SPACING: u64 = 4;

/// Changes after which a checkpoint is due: `every`, or a quarter of the `indexed` items when
/// that is more. Spacing saves in proportion to the index keeps their cost a fixed share of the
/// writes': a bulk load of a million memories saved the growing index a hundred times at 10,000
/// changes apart, a third of its time.
fn changes_before_checkpoint(every: u64, indexed: usize) -> u64 {
    every.max(indexed as u64 / SAVE_SPACING)
}

/// Handle to the running thread.
pub(crate) struct Background {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Background {
    pub(crate) fn start(inner: &Arc<Inner>) -> Background {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let weak: Weak<Inner> = Arc::downgrade(inner);
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("memloop-checkpoint".into())
            .spawn(move || run(&weak, &signal))
            .ok();
        Background { stop, thread }
    }

    /// Stops the thread and waits for it.
    pub(crate) fn stop(mut self) {
        *self.stop.0.lock() = true;
        self.stop.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn run(inner: &Weak<Inner>, stop: &(Mutex<bool>, Condvar)) {
    // First, the full check of the index file the store opened with; a failure here is
    // retried before the first search or save, which report it.
    if let Some(inner) = inner.upgrade() {
        let _ = inner.ensure_index_verified();
    }
    let mut last_flush = std::time::Instant::now();
    loop {
        {
            let mut stopped = stop.0.lock();
            if *stopped {
                return;
            }
            stop.1.wait_for(&mut stopped, TICK);
            if *stopped {
                return;
            }
        }
        let Some(inner) = inner.upgrade() else { return };
        let (due, flush) = {
            let w = inner.writer.lock();
            let indexed = inner.index.len();
            let due = w.unsaved
                >= changes_before_checkpoint(inner.options.checkpoint_every, indexed)
                || w.first_unsaved
                    .is_some_and(|t| t.elapsed() >= inner.options.checkpoint_interval);
            (due, w.unflushed && last_flush.elapsed() >= FLUSH_EVERY)
        };
        // A failed checkpoint is retried at the next tick (the database keeps every
        // acknowledged write meanwhile); a failed flush poisons the store and is not retried.
        // The last failure is kept for `flush` to report until something succeeds.
        if due {
            let r = inner.checkpoint(false);
            inner.note_background("checkpoint", r);
        } else if flush && inner.options.durability == Durability::Grouped {
            let mut w = inner.writer.lock();
            let r = inner.flush_locked(&mut w);
            drop(w);
            inner.note_background("flush", r);
            last_flush = std::time::Instant::now();
        }
    }
}

impl Inner {
    /// Records the outcome of a background `op`: a failure is kept, a success clears it.
    fn note_background(&self, op: &str, result: Result<()>) {
        *self.background_error.lock() =
            result.err().map(|e| format!("background {op} failed: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::changes_before_checkpoint;

    #[test]
    fn checkpoints_space_out_with_the_index() {
        assert_eq!(changes_before_checkpoint(10_000, 0), 10_000);
        assert_eq!(changes_before_checkpoint(10_000, 40_000), 10_000);
        assert_eq!(changes_before_checkpoint(10_000, 1_000_000), 250_000);
        assert_eq!(changes_before_checkpoint(1, 3), 1);
    }
}
