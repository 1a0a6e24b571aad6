//! Which stores this thread is inside a call on. A binding (C, Python) marks each call it
//! makes on a store, so that a callback of that call (a reranker or token counter written in
//! the caller's language) that tries to close the same store is refused at once instead of
//! waiting for its own call forever. Stores are told apart by tokens never reused.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

static NEXT_TOKEN: AtomicUsize = AtomicUsize::new(1);

thread_local! {
    /// The tokens this thread is inside a call on, innermost last.
    static INSIDE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// This thread is inside a call on one store until the mark drops.
#[derive(Debug)]
pub struct InCall {
    token: usize,
    /// A mark belongs to the thread that made it.
    _not_send: std::marker::PhantomData<*const ()>,
}

impl InCall {
    /// A token for a store just opened: never 0, never reused in this process.
    pub fn new_token() -> usize {
        NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)
    }

    /// Marks this thread as inside a call on the store with `token`.
    pub fn enter(token: usize) -> InCall {
        INSIDE.with(|inside| inside.borrow_mut().push(token));
        InCall {
            token,
            _not_send: std::marker::PhantomData,
        }
    }

    /// True if this thread is inside a call on the store with `token`.
    pub fn is_inside(token: usize) -> bool {
        INSIDE.with(|inside| inside.borrow().contains(&token))
    }
}

impl Drop for InCall {
    fn drop(&mut self) {
        INSIDE.with(|inside| {
            let mut inside = inside.borrow_mut();
            if let Some(i) = inside.iter().rposition(|&t| t == self.token) {
                inside.remove(i);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_nest_and_end_with_their_guards() {
        let (a, b) = (InCall::new_token(), InCall::new_token());
        assert_ne!(a, b);
        assert!(!InCall::is_inside(a));
        let outer = InCall::enter(a);
        {
            let _inner = InCall::enter(b);
            assert!(InCall::is_inside(a) && InCall::is_inside(b));
        }
        assert!(InCall::is_inside(a) && !InCall::is_inside(b));
        drop(outer);
        assert!(!InCall::is_inside(a));
        // Another thread is inside nothing.
        let _mark = InCall::enter(a);
        assert!(!std::thread::spawn(move || InCall::is_inside(a))
            .join()
            .unwrap());
    }
}
