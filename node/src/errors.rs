//! Errors as JavaScript sees them: `memloop:<code>: <message>`, the code one of the engine's
//! `ErrorCode` names (or `panic`), which `index.js` turns into the matching `MemloopError`.

use napi::bindgen_prelude::Status;

/// An engine error as JavaScript sees it: `memloop:<code>: <message>`, the code one of the
/// engine's `ErrorCode` names, which `index.js` turns into the matching `MemloopError`.
pub fn engine_error(e: &memloop::Error) -> napi::Error {
    failure(e.code().name(), &e.to_string())
}

/// An error with `code` (an `ErrorCode` name, or `panic`).
pub fn failure(code: &str, message: &str) -> napi::Error {
    napi::Error::new(Status::GenericFailure, format!("memloop:{code}: {message}"))
}

/// The typed error for a bad argument, before any work.
pub fn invalid(message: impl std::fmt::Display) -> napi::Error {
    failure("invalid_input", &message.to_string())
}

/// An engine `InvalidInput` (a vocabulary check) as the typed error.
pub fn checked<T>(r: Result<T, memloop::InvalidInput>) -> napi::Result<T> {
    r.map_err(|e| engine_error(&e.into()))
}

/// An engine result, its error typed.
pub fn checked_engine<T>(r: memloop::Result<T>) -> napi::Result<T> {
    r.map_err(|e| engine_error(&e))
}
