//! Engine errors as the Python exception tree defined in `memloop/_errors.py`, and the cause a
//! failing Python callback leaves for the call that ran it.

use std::cell::RefCell;

use pyo3::prelude::*;

pyo3::import_exception!(memloop._errors, MemloopError);
pyo3::import_exception!(memloop._errors, InvalidInputError);
pyo3::import_exception!(memloop._errors, NotFoundError);
pyo3::import_exception!(memloop._errors, LockedError);
pyo3::import_exception!(memloop._errors, ModelMismatchError);
pyo3::import_exception!(memloop._errors, CorruptError);
pyo3::import_exception!(memloop._errors, UnsupportedVersionError);
pyo3::import_exception!(memloop._errors, StorageIOError);
pyo3::import_exception!(memloop._errors, StoreError);
pyo3::import_exception!(memloop._errors, VectorIndexError);
pyo3::import_exception!(memloop._errors, EmbedError);
pyo3::import_exception!(memloop._errors, CallbackError);
pyo3::import_exception!(memloop._errors, PanicError);
pyo3::import_exception!(memloop._errors, PoisonedError);
pyo3::import_exception!(memloop._errors, BackgroundError);
pyo3::import_exception!(memloop._errors, StoreKeyError);

thread_local! {
    /// The first callback failure of the call in progress on this thread: its message and the
    /// Python exception that caused it. Taken by [`finish`] when the call returns.
    static CALLBACK_FAILURE: RefCell<Option<(String, PyErr)>> = const { RefCell::new(None) };
}

/// An [`InvalidInputError`] with this message.
pub(crate) fn invalid(message: impl Into<String>) -> PyErr {
    InvalidInputError::new_err(message.into())
}

/// Records a callback's failure for the call in progress on this thread (the first one wins)
/// and returns the engine's view of it, which aborts the engine's work.
pub(crate) fn callback_failed(which: &str, cause: PyErr) -> memloop::Error {
    let message = Python::attach(|py| {
        let kind = cause
            .get_type(py)
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "Exception".into());
        format!("{which} callback failed: {kind}: {}", cause.value(py))
    });
    CALLBACK_FAILURE.with(|f| {
        let mut f = f.borrow_mut();
        if f.is_none() {
            *f = Some((message.clone(), cause));
        }
    });
    memloop::Error::InvalidInput(memloop::InvalidInput::Hook(message))
}

/// Forgets a callback failure left by an earlier call on this thread.
pub(crate) fn begin() {
    CALLBACK_FAILURE.with(|f| f.borrow_mut().take());
}

/// The Python result of an engine call: a callback's failure wins over whatever the engine
/// made of it (a token counter's failure cannot abort the engine, so it fails the call here).
pub(crate) fn finish<T>(py: Python<'_>, result: memloop::Result<T>) -> PyResult<T> {
    if let Some((message, cause)) = CALLBACK_FAILURE.with(|f| f.borrow_mut().take()) {
        let error = CallbackError::new_err(message);
        error.set_cause(py, Some(cause));
        return Err(error);
    }
    result.map_err(to_python)
}

/// The exception for an engine error.
pub(crate) fn to_python(e: memloop::Error) -> PyErr {
    use memloop::ErrorCode as C;
    let message = e.to_string();
    // The engine's code, one class per code: no fallback, so a new code fails to build.
    match e.code() {
        C::InvalidInput => InvalidInputError::new_err(message),
        C::NotFound => NotFoundError::new_err(message),
        C::Locked => LockedError::new_err(message),
        C::ModelMismatch => ModelMismatchError::new_err(message),
        C::Corrupt => CorruptError::new_err(message),
        C::UnsupportedVersion => UnsupportedVersionError::new_err(message),
        C::Io => StorageIOError::new_err(message),
        C::Store => StoreError::new_err(message),
        C::Index => VectorIndexError::new_err(message),
        C::Embed => EmbedError::new_err(message),
        C::Poisoned => PoisonedError::new_err(message),
        C::Background => BackgroundError::new_err(message),
        C::Key => StoreKeyError::new_err(message),
    }
}

/// The exception for a panic caught at the boundary: the call had no effect on stored data.
pub(crate) fn panicked(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    PanicError::new_err(format!("memloop panicked: {what}"))
}
