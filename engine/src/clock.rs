//! The injectable clock: every time the engine records comes from here.
//!
//! [`Clock::System`] reads the wall clock; [`Clock::manual`] is set by the caller, for tests and
//! for simulations of forgetting over months in milliseconds.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

/// Milliseconds since the Unix epoch.
pub type Timestamp = i64;

/// Where the engine's times come from. Cloning a manual clock shares it.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The system's wall clock.
    #[default]
    System,
    /// A clock that only moves when told to.
    Manual(Arc<AtomicI64>),
}

impl Clock {
    /// A manual clock starting at `start` (milliseconds since the Unix epoch).
    pub fn manual(start: Timestamp) -> Self {
        Clock::Manual(Arc::new(AtomicI64::new(start)))
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::System => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as i64),
            Clock::Manual(t) => t.load(Ordering::Acquire),
        }
    }

    /// True for a manual clock.
    pub fn is_manual(&self) -> bool {
        matches!(self, Clock::Manual(_))
    }

    /// Sets a manual clock to `t`.
    ///
    /// # Errors
    /// A message if this is the system clock, or if `t` is earlier than the current time (time
    /// only moves forward: forgetting depends on it).
    pub fn set(&self, t: Timestamp) -> Result<(), String> {
        match self {
            Clock::System => Err("the system clock cannot be set; open with a manual clock".into()),
            Clock::Manual(now) => {
                let prev = now.fetch_max(t, Ordering::AcqRel);
                if t < prev {
                    Err(format!(
                        "time {t} is before the clock's current time {prev}"
                    ))
                } else {
                    Ok(())
                }
            }
        }
    }

    /// Moves a manual clock forward by `ms` milliseconds.
    ///
    /// # Errors
    /// As [`Clock::set`].
    pub fn advance(&self, ms: i64) -> Result<(), String> {
        if ms < 0 {
            return Err(format!("cannot move the clock backwards ({ms} ms)"));
        }
        self.set(self.now().saturating_add(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_forward_and_is_shared() {
        let c = Clock::manual(1_000);
        let shared = c.clone();
        c.advance(500).unwrap();
        assert_eq!(shared.now(), 1_500);
        assert!(c.set(1_000).is_err());
        assert_eq!(c.now(), 1_500);
        assert!(c.advance(-1).is_err());
        assert!(Clock::System.set(5).is_err());
        assert!(Clock::System.now() > 1_600_000_000_000);
    }
}
