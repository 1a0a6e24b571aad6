//! Status codes, the thread-local error message, and the guard every entry point runs in.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The call succeeded.
pub const MEMLOOP_OK: i32 = 0;
/// An argument is wrong: a null pointer, invalid UTF-8, malformed JSON, an unknown field, a
/// value of the wrong type or out of range, a closed handle.
pub const MEMLOOP_ERR_INVALID_ARGUMENT: i32 = 1;
/// No memory has the given id.
pub const MEMLOOP_ERR_NOT_FOUND: i32 = 2;
/// Another process holds the store open.
pub const MEMLOOP_ERR_LOCKED: i32 = 3;
/// The store was built with another embedding model.
pub const MEMLOOP_ERR_MODEL_MISMATCH: i32 = 4;
/// A file of the store is corrupt.
pub const MEMLOOP_ERR_CORRUPT: i32 = 5;
/// A file was written by a newer memloop.
pub const MEMLOOP_ERR_UNSUPPORTED_VERSION: i32 = 6;
/// An I/O operation failed.
pub const MEMLOOP_ERR_IO: i32 = 7;
/// The embedded database failed.
pub const MEMLOOP_ERR_STORE: i32 = 8;
/// The vector index failed.
pub const MEMLOOP_ERR_INDEX: i32 = 9;
/// The embedding model failed (or could not be loaded).
pub const MEMLOOP_ERR_EMBED: i32 = 10;
/// A caller-supplied callback reported an error or returned something invalid.
pub const MEMLOOP_ERR_CALLBACK: i32 = 11;
/// memloop panicked; the call had no effect on stored data, and the handle stays usable.
pub const MEMLOOP_ERR_PANIC: i32 = 12;
/// A commit failed and the database could not be reopened for writing yet (a full disk):
/// reads go on, writes are refused until storage recovers.
pub const MEMLOOP_ERR_POISONED: i32 = 13;
/// The background thread's last checkpoint or flush failed (returned by `memloop_flush`).
pub const MEMLOOP_ERR_BACKGROUND: i32 = 14;
/// The store is encrypted and its key file is missing, wrong or damaged, or a passphrase is
/// wrong; nothing was written.
pub const MEMLOOP_ERR_KEY: i32 = 15;

/// A failed call: its status code and message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            code: MEMLOOP_ERR_INVALID_ARGUMENT,
            message: message.into(),
        }
    }
}

impl From<memloop::Error> for Failure {
    fn from(e: memloop::Error) -> Failure {
        use memloop::ErrorCode as C;
        // The engine's code, one status per code: no fallback, so a new code fails to build.
        let code = match e.code() {
            C::InvalidInput => MEMLOOP_ERR_INVALID_ARGUMENT,
            C::NotFound => MEMLOOP_ERR_NOT_FOUND,
            C::Locked => MEMLOOP_ERR_LOCKED,
            C::ModelMismatch => MEMLOOP_ERR_MODEL_MISMATCH,
            C::Corrupt => MEMLOOP_ERR_CORRUPT,
            C::UnsupportedVersion => MEMLOOP_ERR_UNSUPPORTED_VERSION,
            C::Io => MEMLOOP_ERR_IO,
            C::Store => MEMLOOP_ERR_STORE,
            C::Index => MEMLOOP_ERR_INDEX,
            C::Embed => MEMLOOP_ERR_EMBED,
            C::Poisoned => MEMLOOP_ERR_POISONED,
            C::Background => MEMLOOP_ERR_BACKGROUND,
            C::Key => MEMLOOP_ERR_KEY,
        };
        debug_assert_eq!(code as u32, e.code() as u32);
        Failure {
            code,
            message: e.to_string(),
        }
    }
}

/// The result of an entry point's body.
pub(crate) type Outcome<T = ()> = Result<T, Failure>;

thread_local! {
    /// This thread's last error message, NUL-terminated for `memloop_last_error`.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// A callback's failure during the current call on this thread (set by the hook adapters,
    /// taken by [`guard`]).
    static CALLBACK_ERROR: RefCell<Option<String>> = const { RefCell::new(None) };
    /// The message a callback left with `memloop_set_callback_error`, not yet used.
    static CALLBACK_MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Keeps a callback's own explanation of its failure.
pub(crate) fn set_callback_message(message: String) {
    CALLBACK_MESSAGE.with(|m| *m.borrow_mut() = Some(message));
}

/// Takes the explanation a callback left, if any.
pub(crate) fn take_callback_message() -> Option<String> {
    CALLBACK_MESSAGE.with(|m| m.borrow_mut().take())
}

/// Records a callback's failure for the call in progress on this thread (the first one wins).
pub(crate) fn note_callback_error(message: String) {
    CALLBACK_ERROR.with(|c| {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(message);
        }
    });
}

fn set_last_error(message: &str) {
    // Interior NULs cannot be carried by a C string: show them as U+2400.
    let text = CString::new(message.replace('\0', "\u{2400}")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// Runs an entry point's body: catches panics, turns failures into a status code and this
/// thread's last error message (cleared on success), and lets a callback's failure win over
/// whatever the engine made of it.
pub(crate) fn guard(body: impl FnOnce() -> Outcome) -> i32 {
    CALLBACK_ERROR.with(|c| c.borrow_mut().take());
    take_callback_message();
    let result = catch_unwind(AssertUnwindSafe(body));
    let callback = CALLBACK_ERROR.with(|c| c.borrow_mut().take());
    let failure = match (result, callback) {
        (_, Some(message)) => Some(Failure {
            code: MEMLOOP_ERR_CALLBACK,
            message,
        }),
        (Ok(Ok(())), None) => None,
        (Ok(Err(f)), None) => Some(f),
        (Err(panic), None) => Some(Failure {
            code: MEMLOOP_ERR_PANIC,
            message: format!("memloop panicked: {}", panic_message(&*panic)),
        }),
    };
    match failure {
        None => {
            set_last_error("");
            MEMLOOP_OK
        }
        Some(f) => {
            set_last_error(&f.message);
            f.code
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// The message of this thread's most recent failed call, or an empty string when its most
/// recent call succeeded. Never NULL. The pointer stays valid until the next memloop call on
/// this thread; copy the text to keep it.
///
/// Thread safety: each thread has its own message.
#[no_mangle]
pub extern "C" fn memloop_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status_and_a_message() {
        let code = guard(|| panic!("boom"));
        assert_eq!(code, MEMLOOP_ERR_PANIC);
        let msg = LAST_ERROR.with(|e| e.borrow().to_str().unwrap().to_owned());
        assert_eq!(msg, "memloop panicked: boom");
        assert_eq!(guard(|| Ok(())), MEMLOOP_OK);
        assert!(LAST_ERROR.with(|e| e.borrow().is_empty()));
    }

    #[test]
    fn a_callback_failure_wins_over_the_engines_error() {
        let code = guard(|| {
            note_callback_error("reranker: it broke".into());
            note_callback_error("second".into());
            Err(Failure::invalid("engine view"))
        });
        assert_eq!(code, MEMLOOP_ERR_CALLBACK);
        let msg = LAST_ERROR.with(|e| e.borrow().to_str().unwrap().to_owned());
        assert_eq!(msg, "reranker: it broke");
    }
}
