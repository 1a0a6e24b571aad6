//! Caller-supplied reranker, query refiner, summarizer, token counter and conversation
//! extractor as C function pointers.
//!
//! Each adapter implements the engine's trait by calling the function pointer with the
//! caller's `user_data`. A callback reports failure by its return value (and may explain it
//! with `memloop_set_callback_error`); the call in progress then fails with
//! `MEMLOOP_ERR_CALLBACK` and that message.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::Arc;

use memloop::context::{Summarizer, Summary, TokenCounter};
use memloop::retrieve::{QueryRefiner, RefineInput, Refinement, Reranker};
use memloop::{plug::Extracted, plug::Extractor, plug::Turn, Hit, Hooks};
use serde::Deserialize;

use crate::status::{note_callback_error, set_callback_message, take_callback_message, Outcome};

/// Scores `count` candidates for `query`: writes one finite score per candidate (higher is
/// better) to `scores[0..count]` and returns 0, or returns non-zero on failure.
/// `candidates_json` is a JSON array of hits (`id`, `score`, `rank`, `kind`, `text`, `item`, …),
/// best vector match first.
pub type memloop_rerank_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        query: *const c_char,
        candidates_json: *const c_char,
        scores: *mut f32,
        count: usize,
    ) -> i32,
>;

/// Rewrites the query after round `round` (from 0) of an iterative retrieval, given that
/// round's hits as a JSON array. Writes the new query's UTF-8 bytes to `out` when they fit in
/// `capacity` bytes (no terminating NUL needed) and returns their length; when the length is
/// larger than `capacity` it is called again with a buffer that large. A negative return is
/// a failure.
pub type memloop_refine_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        query: *const c_char,
        hits_json: *const c_char,
        round: u32,
        out: *mut c_char,
        capacity: usize,
    ) -> i64,
>;

/// Summarises `text` into `{"concise": "...", "brief": "..."}` (JSON), written to `out` as
/// for `memloop_refine_fn`: returns the length, is called again when it exceeds `capacity`,
/// negative on failure.
pub type memloop_summarize_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        text: *const c_char,
        out: *mut c_char,
        capacity: usize,
    ) -> i64,
>;

/// The number of tokens of `text` for the model that reads the contexts; negative on failure.
pub type memloop_count_tokens_fn =
    Option<unsafe extern "C" fn(user_data: *mut c_void, text: *const c_char) -> i64>;

/// Draws facts from new turns of conversation `session`: `turns_json` is a JSON array of
/// `{"speaker", "text", "time"}` (time in ms). Writes a JSON array to `out` as for
/// `memloop_refine_fn` (returns the length, is called again when it exceeds `capacity`,
/// negative on failure): each element a memory as `memloop_remember` takes it plus `"turn"`,
/// the index of the turn it comes from.
pub type memloop_extract_fn = Option<
    unsafe extern "C" fn(
        user_data: *mut c_void,
        session: *const c_char,
        turns_json: *const c_char,
        out: *mut c_char,
        capacity: usize,
    ) -> i64,
>;

/// Callbacks that replace memloop's built-in parts; NULL members keep the built-in. They may
/// be called from any thread that calls into the handle, concurrently when the handle is used
/// from several threads, so they must be thread-safe.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy)]
pub struct memloop_hooks_t {
    /// Passed as the first argument of every callback.
    pub user_data: *mut c_void,
    /// Orders the candidates of the rerank and iterative strategies (default: fusion of the
    /// vector and BM25 rankings).
    pub rerank: memloop_rerank_fn,
    /// Refines iterative queries (default: Rocchio pseudo-relevance feedback).
    pub refine: memloop_refine_fn,
    /// Makes the concise and brief versions of texts (default: extractive).
    pub summarize: memloop_summarize_fn,
    /// Counts context tokens (default: the embedding model's tokenizer).
    pub count_tokens: memloop_count_tokens_fn,
    /// Draws facts from conversation turns (`memloop_remember_conversation`; default: none).
    pub extract: memloop_extract_fn,
}

/// Records a message for the failing callback the current thread is running, shown by
/// `memloop_last_error` when the call returns `MEMLOOP_ERR_CALLBACK`. Call it from inside a
/// callback before returning a failure. NULL is ignored; invalid UTF-8 is shown with
/// replacement characters.
///
/// Thread safety: call it on the thread that runs the callback (the message is per thread).
///
/// # Safety
/// `message` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn memloop_set_callback_error(message: *const c_char) {
    if message.is_null() {
        return;
    }
    // SAFETY: non-null and NUL-terminated by contract.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    set_callback_message(text.into_owned());
}

/// The caller's user data, shared by the adapters.
#[derive(Clone, Copy)]
struct UserData(*mut c_void);
// SAFETY: memloop never dereferences the pointer; it only hands it back to the caller's
// callbacks, which the header requires to be thread-safe.
unsafe impl Send for UserData {}
// SAFETY: as above.
unsafe impl Sync for UserData {}

/// Replaces the hooks for which `hooks` has a callback.
///
/// # Safety
/// `hooks` is NULL or points to a valid `memloop_hooks_t` whose callbacks are callable with its
/// user data.
pub(crate) unsafe fn install(hooks: *const memloop_hooks_t, into: &mut Hooks) -> Outcome {
    if hooks.is_null() {
        return Ok(());
    }
    // SAFETY: non-null and valid by contract; the struct is Copy, so it is read once here.
    let h = unsafe { hooks.read() };
    let user = UserData(h.user_data);
    if let Some(f) = h.rerank {
        into.reranker = Arc::new(CReranker { f, user });
    }
    if let Some(f) = h.refine {
        into.refiner = Arc::new(CRefiner { f, user });
    }
    if let Some(f) = h.summarize {
        into.summarizer = Arc::new(CSummarizer { f, user });
    }
    if let Some(f) = h.count_tokens {
        into.token_counter = Some(Arc::new(CTokenCounter { f, user }));
    }
    if let Some(f) = h.extract {
        into.extractor = Some(Arc::new(CExtractor { f, user }));
    }
    Ok(())
}

/// The engine's view of a callback failure, after recording the caller's message.
fn failed(which: &str, what: String) -> memloop::Error {
    let detail = take_callback_message().unwrap_or(what);
    let message = format!("{which} callback failed: {detail}");
    note_callback_error(message.clone());
    memloop::Error::InvalidInput(memloop::InvalidInput::Hook(message))
}

fn c_string(s: &str, which: &str) -> memloop::Result<CString> {
    CString::new(s).map_err(|_| failed(which, "argument has an interior NUL".into()))
}

fn hits_json(hits: &[Hit], which: &str) -> memloop::Result<CString> {
    let json = serde_json::to_string(hits).map_err(|e| failed(which, e.to_string()))?;
    c_string(&json, which)
}

/// Calls a string-returning callback, growing the buffer once if the result did not fit.
fn call_for_string(
    which: &str,
    mut call: impl FnMut(*mut c_char, usize) -> i64,
) -> memloop::Result<String> {
    let mut buf = vec![0u8; 4096];
    for _ in 0..2 {
        let n = call(buf.as_mut_ptr().cast(), buf.len());
        if n < 0 {
            return Err(failed(which, format!("returned {n}")));
        }
        let n = n as usize;
        if n <= buf.len() {
            buf.truncate(n);
            return String::from_utf8(buf)
                .map_err(|_| failed(which, "result is not valid UTF-8".into()));
        }
        buf = vec![0u8; n];
    }
    Err(failed(
        which,
        "result grew again after the buffer was enlarged".into(),
    ))
}

struct CReranker {
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut f32, usize) -> i32,
    user: UserData,
}

impl Reranker for CReranker {
    fn rerank(&self, query: &str, candidates: &[Hit]) -> memloop::Result<Vec<f32>> {
        let q = c_string(query, "reranker")?;
        let json = hits_json(candidates, "reranker")?;
        let mut scores = vec![f32::NAN; candidates.len()];
        // SAFETY: the caller registered `f` for `user`; the strings live across the call and
        // `scores` has exactly `count` writable elements.
        let rc = unsafe {
            (self.f)(
                self.user.0,
                q.as_ptr(),
                json.as_ptr(),
                scores.as_mut_ptr(),
                scores.len(),
            )
        };
        if rc != 0 {
            return Err(failed("reranker", format!("returned {rc}")));
        }
        if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
            return Err(failed(
                "reranker",
                format!("score {i} is not a finite number"),
            ));
        }
        Ok(scores)
    }
}

struct CRefiner {
    f: unsafe extern "C" fn(
        *mut c_void,
        *const c_char,
        *const c_char,
        u32,
        *mut c_char,
        usize,
    ) -> i64,
    user: UserData,
}

impl QueryRefiner for CRefiner {
    fn refine(&self, input: &RefineInput<'_>) -> memloop::Result<Refinement> {
        let q = c_string(input.query, "refiner")?;
        let json = hits_json(input.hits, "refiner")?;
        let round = u32::try_from(input.round).unwrap_or(u32::MAX);
        let text = call_for_string("refiner", |out, cap| {
            // SAFETY: as for the reranker; `out` has `cap` writable bytes.
            unsafe { (self.f)(self.user.0, q.as_ptr(), json.as_ptr(), round, out, cap) }
        })?;
        if text.trim().is_empty() {
            return Err(failed("refiner", "returned an empty query".into()));
        }
        Ok(Refinement::Text(text))
    }
}

struct CSummarizer {
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_char, usize) -> i64,
    user: UserData,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryJson {
    concise: String,
    brief: String,
}

impl Summarizer for CSummarizer {
    fn summarize(&self, text: &str) -> memloop::Result<Summary> {
        let t = c_string(text, "summarizer")?;
        let json = call_for_string("summarizer", |out, cap| {
            // SAFETY: as for the reranker; `out` has `cap` writable bytes.
            unsafe { (self.f)(self.user.0, t.as_ptr(), out, cap) }
        })?;
        let s: SummaryJson = serde_json::from_str(&json).map_err(|e| {
            failed(
                "summarizer",
                format!("result is not {{\"concise\", \"brief\"}} JSON: {e}"),
            )
        })?;
        Ok(Summary {
            concise: s.concise,
            brief: s.brief,
        })
    }
}

struct CTokenCounter {
    f: unsafe extern "C" fn(*mut c_void, *const c_char) -> i64,
    user: UserData,
}

impl TokenCounter for CTokenCounter {
    fn count(&self, text: &str) -> usize {
        // A failure cannot be returned through `count`: it is recorded (the call then fails)
        // and the text is made too large to fit any budget meanwhile.
        let Ok(t) = c_string(text, "token counter") else {
            return usize::MAX / 4;
        };
        // SAFETY: the caller registered `f` for `user`; `t` lives across the call.
        let n = unsafe { (self.f)(self.user.0, t.as_ptr()) };
        usize::try_from(n).unwrap_or_else(|_| {
            failed("token counter", format!("returned {n}"));
            usize::MAX / 4
        })
    }
}

struct CExtractor {
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut c_char, usize) -> i64,
    user: UserData,
}

impl Extractor for CExtractor {
    fn extract(&self, session: &str, turns: &[Turn]) -> memloop::Result<Vec<Extracted>> {
        let which = "extractor";
        let s = c_string(session, which)?;
        let given = serde_json::to_string(turns).map_err(|e| failed(which, e.to_string()))?;
        let given = c_string(&given, which)?;
        let json = call_for_string(which, |out, cap| {
            // SAFETY: as for the reranker; `out` has `cap` writable bytes.
            unsafe { (self.f)(self.user.0, s.as_ptr(), given.as_ptr(), out, cap) }
        })?;
        let bad = |e: String| {
            failed(
                which,
                format!("result is not a JSON array of memories with \"turn\": {e}"),
            )
        };
        let items: Vec<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_str(&json).map_err(|e| bad(e.to_string()))?;
        items
            .into_iter()
            .enumerate()
            .map(|(i, mut item)| {
                let turn = item
                    .remove("turn")
                    .and_then(|t| t.as_u64())
                    .and_then(|t| usize::try_from(t).ok())
                    .ok_or_else(|| bad(format!("element {i} has no \"turn\" index")))?;
                let memory = serde_json::from_value(serde_json::Value::Object(item))
                    .map_err(|e| bad(format!("element {i}: {e}")))?;
                Ok(Extracted { turn, memory })
            })
            .collect()
    }
}

impl std::fmt::Debug for memloop_hooks_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("memloop_hooks_t")
            .field("rerank", &self.rerank.is_some())
            .field("refine", &self.refine.is_some())
            .field("summarize", &self.summarize.is_some())
            .field("count_tokens", &self.count_tokens.is_some())
            .field("extract", &self.extract.is_some())
            .finish()
    }
}
