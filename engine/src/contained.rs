//! Panics contained on purpose: a third-party decoder (redb on a damaged file, arrow on a
//! malformed one) that panics is turned into a typed error by [`catch`]. Such a panic is an
//! expected outcome of bad input, so it must not print a panic message and a backtrace on the
//! embedding application's stderr as if memloop had crashed; every other panic still does.
//!
//! The process's panic hook is wrapped once: while the current thread runs inside [`catch`],
//! the message is not printed; otherwise the hook that was installed before runs.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many [`catch`] calls this thread is inside.
    static INSIDE: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

/// Runs `f`; `None` if it panicked (the panic printed nothing).
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Option<T> {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if INSIDE.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
    INSIDE.with(|n| n.set(n.get() + 1));
    let result = catch_unwind(AssertUnwindSafe(f));
    INSIDE.with(|n| n.set(n.get() - 1));
    result.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contained_panic_is_none_and_values_pass_through() {
        assert_eq!(catch(|| 7), Some(7));
        let caught: Option<()> = catch(|| panic!("a decoder gave up"));
        assert_eq!(caught, None);
        // Nested, and the count restored after a panic.
        assert_eq!(catch(|| catch(|| -> u8 { panic!("inner") })), Some(None));
        INSIDE.with(|n| assert_eq!(n.get(), 0));
    }
}
