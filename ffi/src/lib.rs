//! # memloop-ffi
//!
//! The C ABI of memloop (`include/memloop.h`, generated from this crate by cbindgen).
//!
//! - An opaque handle, [`memloop_t`], from [`memloop_open`], released by [`memloop_close`].
//! - Every call returns a status code ([`MEMLOOP_OK`] or a `MEMLOOP_ERR_*`) and writes results
//!   through out-parameters; [`memloop_last_error`] explains the last failure on the thread.
//! - Structured inputs and outputs are JSON; strings returned by the library are freed with
//!   [`memloop_free_string`].
//! - Nothing from outside can crash it: NULL pointers, invalid UTF-8, malformed JSON, unknown
//!   fields, wrong types, closed or made-up handles are errors; panics are caught.
//! - Callbacks ([`memloop_hooks_t`]) replace the reranker, query refiner, summarizer and token
//!   counter.
//!
//! The ABI version ([`memloop_abi_version`]) changes when a signature or a layout changes.
#![allow(non_camel_case_types)]

mod calls;
mod handle;
mod hooks;
mod raw;
mod requests;
mod status;

use std::ffi::c_char;

pub use calls::*;
pub use handle::{memloop_close, memloop_open, memloop_t};
pub use hooks::{
    memloop_count_tokens_fn, memloop_hooks_t, memloop_refine_fn, memloop_rerank_fn,
    memloop_set_callback_error, memloop_summarize_fn,
};
pub use raw::memloop_free_string;
pub use status::*;

/// The version of this ABI; a program built against `MEMLOOP_ABI_VERSION` checks it at run time.
/// 2: `memloop_call` runs any operation of the registry, and `memloop_recall` writes the
/// registry's answer (`{"hits": [...]}`, an array in 1).
pub const MEMLOOP_ABI_VERSION: u32 = 2;

/// The ABI version of the loaded library (compare with `MEMLOOP_ABI_VERSION`). Any thread.
#[no_mangle]
pub extern "C" fn memloop_abi_version() -> u32 {
    MEMLOOP_ABI_VERSION
}

/// The library's version, e.g. "0.1.0" (a static string; do not free). Any thread.
#[no_mangle]
pub extern "C" fn memloop_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
