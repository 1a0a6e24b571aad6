//! The opaque handle: opening and closing a store, and finding the store behind a handle.
//!
//! A handle is a token, never dereferenced: live stores are kept in a registry keyed by the
//! token, so a NULL, closed or made-up handle is an error, not a crash, and `memloop_close`
//! waits for calls in flight on other threads before it closes the store.

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::{Arc, LazyLock};

use memloop::{plug::InCall, Memory, Options};
use parking_lot::RwLock;

use crate::hooks::{install, memloop_hooks_t};
use crate::raw;
use crate::status::{guard, Failure, Outcome};

/// An open store. Opaque: create with `memloop_open`, release with `memloop_close`.
#[allow(non_camel_case_types)]
pub struct memloop_t {
    _private: [u8; 0],
}

static STORES: LazyLock<RwLock<HashMap<usize, Arc<Memory>>>> = LazyLock::new(Default::default);
// A handle is an `InCall` token: never reused, so a stale handle cannot reach a newer store.

/// A store borrowed for one call. While it lives, this thread is inside a call on its handle,
/// so `memloop_close` on the same thread (from a callback) can refuse instead of waiting for
/// itself forever.
pub(crate) struct InUse {
    memory: Arc<Memory>,
    _call: InCall,
}

impl std::ops::Deref for InUse {
    type Target = Memory;
    fn deref(&self) -> &Memory {
        &self.memory
    }
}

/// The store behind `handle`, borrowed for one call.
pub(crate) fn store(handle: *const memloop_t) -> Outcome<InUse> {
    if handle.is_null() {
        return Err(Failure::invalid("handle is NULL"));
    }
    let token = handle as usize;
    let memory =
        STORES.read().get(&token).cloned().ok_or_else(|| {
            Failure::invalid("handle is not an open memloop store (closed already?)")
        })?;
    Ok(InUse {
        memory,
        _call: InCall::enter(token),
    })
}

/// Opens (creating if needed) the store in directory `path`.
///
/// `options_json` may be NULL (all defaults) or a JSON object with any of: `"model"` (model
/// directory; default the cached all-MiniLM-L6-v2), `"device"` (`"cpu"`, the default, or
/// `"cuda"` / `"cuda:N"` in a library built with the `cuda` feature), `"clock"` (`"system"` or `"manual"`),
/// `"start_ms"` (a manual clock's start, ms since the Unix epoch; default the epoch, so the
/// first `memloop_set_time` puts it anywhere later), `"sync"` (default true:
/// every write is fsynced before it returns), `"dedup_threshold"` (cosine at which
/// near-duplicates merge, null for exact duplicates only), `"capacity"` (most memories kept),
/// `"capacity_per_user"` (most memories kept per user),
/// `"recall_ef"`, `"index_vectors"` (`"f32"`, `"bf16"` or `"int8"`: how the index stores the
/// vectors searches read, recorded in the store; absent keeps the store's choice, f32 for a new
/// store; compressed codes are re-scored on the f32 vectors),
/// `"max_text_bytes"` (longest text of one memory, default 512 KiB),
/// `"reranker_model"` (a cross-encoder directory, such as ms-marco-MiniLM-L-6-v2's: the rerank
/// and iterative strategies then order their best candidates by it; not with a `rerank` hook),
/// `"hashing_embedder"` (dimension of a model-free test embedder). Unknown
/// fields are an error.
///
/// `hooks` may be NULL (built-in reranker, refiner, summarizer and token counter) or point to
/// a `memloop_hooks_t` whose non-NULL callbacks replace them; it is copied, so it need not
/// outlive the call, but its `user_data` must stay valid until `memloop_close`.
///
/// On success writes the handle to `*out`. Thread safety: any thread; the handle may then be
/// used from many threads at once.
///
/// # Safety
/// `path` and `options_json` are NULL or NUL-terminated strings; `hooks` is NULL or points to
/// a `memloop_hooks_t`; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_open(
    path: *const c_char,
    options_json: *const c_char,
    hooks: *const memloop_hooks_t,
    out: *mut *mut memloop_t,
) -> i32 {
    guard(|| {
        raw::require(out, "out")?;
        // SAFETY: the caller's contract for `path` and `options_json`.
        let path = unsafe { raw::text(path, "path") }?;
        // SAFETY: as above.
        let request = match unsafe { raw::optional_text(options_json, "options_json") }? {
            Some(s) => raw::parse_json::<memloop::requests::OpenRequest>(s, "options_json")?,
            None => memloop::requests::OpenRequest::default(),
        };
        let mut options = Options::from_request(request)
            .map_err(|e| Failure::invalid(format!("options_json: {e}")))?;
        // SAFETY: the caller's contract for `hooks`.
        unsafe { install(hooks, &mut options.hooks) }?;
        let memory = Memory::open(path, options)?;
        let token = InCall::new_token();
        STORES.write().insert(token, Arc::new(memory));
        // SAFETY: checked non-null above; writable by contract.
        unsafe { raw::write(out, token as *mut memloop_t, "out") }
    })
}

/// Closes the store: saves the index, makes every write durable and releases the directory.
/// The handle is invalid afterwards (using it again is an error, not a crash). Calls still
/// running on other threads finish first; calls started after this one fail. Called from a
/// callback of a call on the same handle, it fails (`MEMLOOP_ERR_INVALID_ARGUMENT`) and the
/// store stays open.
///
/// Thread safety: any thread, once per handle.
#[no_mangle]
pub extern "C" fn memloop_close(handle: *mut memloop_t) -> i32 {
    guard(|| {
        if handle.is_null() {
            return Err(Failure::invalid("handle is NULL"));
        }
        if InCall::is_inside(handle as usize) {
            return Err(Failure::invalid(
                "memloop_close was called from inside a callback of a call on the same handle; close the store after that call returns",
            ));
        }
        let memory = STORES.write().remove(&(handle as usize)).ok_or_else(|| {
            Failure::invalid("handle is not an open memloop store (closed already?)")
        })?;
        // Calls in flight on other threads finish first.
        Memory::close_shared(memory)?;
        Ok(())
    })
}
