//! Every read of a caller's pointer and every write through one. The only dereferences of
//! caller memory in the crate are here and in the callback calls of `hooks.rs`; the entry
//! points (`calls.rs`, `handle.rs`) are `unsafe extern "C"` and hold `unsafe` blocks only to
//! pass the caller's pointers on to these functions, under the contract the header states.
//!
//! The contract with the caller (stated in the header): a non-null string pointer points to a
//! NUL-terminated string that stays valid for the call; a non-null out-pointer points to
//! writable memory of its type. Null pointers are detected and reported, never dereferenced.

use std::ffi::{c_char, CStr, CString};

use serde::de::DeserializeOwned;

use crate::status::{Failure, Outcome};

/// Borrows a required C string argument as UTF-8.
///
/// # Safety
/// `ptr` is null or points to a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn text<'a>(ptr: *const c_char, name: &str) -> Outcome<&'a str> {
    if ptr.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    // SAFETY: non-null, and the caller guarantees a NUL-terminated string living for 'a.
    let bytes = unsafe { CStr::from_ptr(ptr) };
    bytes.to_str().map_err(|e| {
        Failure::invalid(format!(
            "{name} is not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// Borrows an optional C string argument (NULL means absent).
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn optional_text<'a>(ptr: *const c_char, name: &str) -> Outcome<Option<&'a str>> {
    if ptr.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { text(ptr, name) }.map(Some)
    }
}

/// Parses a required JSON argument into `T`, naming the argument in every error.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn json<T: DeserializeOwned>(ptr: *const c_char, name: &str) -> Outcome<T> {
    // SAFETY: forwarded contract.
    let s = unsafe { text(ptr, name) }?;
    parse_json(s, name)
}

/// Parses JSON text into `T`, naming the argument in every error.
pub(crate) fn parse_json<T: DeserializeOwned>(s: &str, name: &str) -> Outcome<T> {
    serde_json::from_str(s).map_err(|e| Failure::invalid(format!("{name}: {e}")))
}

/// Writes `value` through a required out-pointer.
///
/// # Safety
/// `out` is null or points to writable memory for a `T`.
pub(crate) unsafe fn write<T>(out: *mut T, value: T, name: &str) -> Outcome {
    if out.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    // SAFETY: non-null and, by the caller's contract, valid for writes of a T.
    unsafe { out.write(value) };
    Ok(())
}

/// Checks a required out-pointer before any work is done, so that a call which would fail on
/// its output never changes the store.
pub(crate) fn require<T>(out: *mut T, name: &str) -> Outcome {
    if out.is_null() {
        Err(Failure::invalid(format!("{name} is NULL")))
    } else {
        Ok(())
    }
}

/// Hands `value`, serialised as JSON, to the caller as a string it frees with
/// `memloop_free_string`.
///
/// # Safety
/// As [`write`].
pub(crate) unsafe fn write_json<T: serde::Serialize>(
    out: *mut *mut c_char,
    value: &T,
    name: &str,
) -> Outcome {
    require(out, name)?;
    // Through a JSON value, as every door writes an answer: a number prints as the same digits
    // here as in MCP's structured content and the CLI's `--json` (an f32 score widened to f64).
    let text = serde_json::to_value(value)
        .map(|v| v.to_string())
        .map_err(|e| Failure::invalid(format!("result not representable as JSON: {e}")))?;
    // serde_json escapes NUL as \u0000, so the text has no interior NUL.
    let owned = CString::new(text).map_err(|e| Failure::invalid(e.to_string()))?;
    // SAFETY: checked non-null above; the caller's contract makes it writable.
    unsafe { write(out, owned.into_raw(), name) }
}

/// Writes `values` into a caller array of `capacity` elements.
///
/// # Safety
/// `out` is null or points to `capacity` writable `T`s.
pub(crate) unsafe fn write_slice<T: Copy>(
    out: *mut T,
    capacity: usize,
    values: &[T],
    name: &str,
) -> Outcome {
    require(out, name)?;
    if values.len() > capacity {
        return Err(Failure::invalid(format!(
            "{name} holds {capacity} elements, {} needed",
            values.len()
        )));
    }
    // SAFETY: non-null, the caller guarantees `capacity` writable elements, and we write at
    // most that many; source and destination cannot overlap (ours is a Rust slice).
    unsafe { std::ptr::copy_nonoverlapping(values.as_ptr(), out, values.len()) };
    Ok(())
}

/// Frees a string returned by memloop (a JSON result). NULL is ignored.
///
/// Thread safety: any thread (not necessarily the one that received the string).
///
/// # Safety
/// `s` is NULL or a pointer this library returned through a `char **` out-parameter that was not
/// freed yet. Passing anything else (a string from `malloc`, `memloop_last_error`'s pointer)
/// is undefined behaviour.
#[no_mangle]
pub unsafe extern "C" fn memloop_free_string(s: *mut c_char) {
    if !s.is_null() {
        // SAFETY: by contract, `s` came from `CString::into_raw` in `write_json` and was not
        // freed before.
        drop(unsafe { CString::from_raw(s) });
    }
}
