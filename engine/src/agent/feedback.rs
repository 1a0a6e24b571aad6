//! Five-level feedback: durable, steering decay and the precision a memory is served at.

use crate::error::{Error, Result};
use crate::invalid::InvalidInput;
use crate::item::{MemoryId, Scope};
use crate::memory::views::Scoped;
use crate::memory::Memory;
use crate::retrieve::FeedbackState;
use crate::store::FEEDBACK;

/// The lowest and highest precision shift feedback can accumulate.
const SHIFT_RANGE: std::ops::RangeInclusive<i8> = -2..=2;

impl Memory {
    /// Records how much memory `id` contributed to a task, from 1 to 5, durably:
    ///
    /// | level | meaning | decay | precision served next time |
    /// |---|---|---|---|
    /// | 1 | harmful, noise | importance × 0.5, strength × 0.5 | one step lower |
    /// | 2 | not useful | importance × 0.8 | one step lower |
    /// | 3 | useful, but should have contributed more | reinforced (like a recall hit) | one step higher |
    /// | 4 | useful | reinforced, importance + 0.1 | unchanged: fine where it was |
    /// | 5 | decisive | reinforced, importance + 0.2 | unchanged |
    ///
    /// Pinned memories keep their decay; their precision still moves. Returns the memory's feedback
    /// so far.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a level outside 1..=5; [`crate::Error::NotFound`].
    pub fn feedback(&self, id: MemoryId, level: u8) -> Result<FeedbackState> {
        self.scoped(&Scope::default()).feedback(id, level)
    }
}

impl<'a> Scoped<'a> {
    /// [`Memory::feedback`] for a caller confined to `scope`: a memory outside it is
    /// [`crate::Error::NotFound`], as if it did not exist.
    ///
    /// # Errors
    /// As [`Memory::feedback`].
    pub fn feedback(&self, id: MemoryId, level: u8) -> Result<FeedbackState> {
        let scope = &self.scope;
        if !(1..=5).contains(&level) {
            return Err(InvalidInput::FeedbackLevel(level).into());
        }
        self.memory.inner.write(|inner, tx, applied| {
            let mut item = inner.current_in(id, scope)?.ok_or(Error::NotFound(id))?;
            let mut state = match inner.store.side(FEEDBACK, id)? {
                Some(bytes) => FeedbackState::decode(&inner.store, &bytes)?,
                None => FeedbackState::default(),
            };
            state.count += 1;
            state.sum += u32::from(level);
            state.last = level;
            let shift = match level {
                1 | 2 => -1,
                3 => 1,
                _ => 0,
            };
            state.precision_shift =
                (state.precision_shift + shift).clamp(*SHIFT_RANGE.start(), *SHIFT_RANGE.end());
            let policy = &inner.options.forgetting;
            if !item.pinned {
                match level {
                    1 => {
                        item.importance *= 0.5;
                        item.strength *= 0.5;
                    }
                    2 => item.importance *= 0.8,
                    _ => {
                        item.importance = (item.importance + 0.1 * f32::from(level - 3)).min(1.0);
                        policy.reinforce(&mut item, inner.now());
                    }
                }
            }
            item.updated = inner.now();
            tx.put(&item, None)?;
            let json = serde_json::to_vec(&state).expect("feedback always serialises");
            tx.put_side(FEEDBACK, id, &json)?;
            applied.items.push(item);
            Ok(state)
        })
    }

    /// The feedback memory `id` received so far (`None`: none yet), as seen by a caller
    /// confined to `scope`. Reads only.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for a memory that is not current in `scope`;
    /// [`crate::Error::Store`] / [`crate::Error::Corrupt`].
    pub fn feedback_state(&self, id: MemoryId) -> Result<Option<FeedbackState>> {
        let scope = &self.scope;
        self.memory
            .inner
            .current_in(id, scope)?
            .ok_or(Error::NotFound(id))?;
        match self.memory.inner.store.side(FEEDBACK, id)? {
            Some(bytes) => Ok(Some(FeedbackState::decode(
                &self.memory.inner.store,
                &bytes,
            )?)),
            None => Ok(None),
        }
    }
}
