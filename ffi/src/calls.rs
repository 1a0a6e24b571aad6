//! The entry points on an open store. Every one returns a status code (`MEMLOOP_OK` or an
//! error, with `memloop_last_error` explaining it) and writes its result through
//! out-parameters; JSON results are freed with `memloop_free_string`.
//!
//! Thread safety: unless said otherwise, every call may run on any thread, concurrently with
//! other calls on the same handle (reads run in parallel; writes are serialised inside).

use std::ffi::c_char;

use memloop::{requests::SubjectEvent, MemoryId, NewMemory};

use crate::handle::{memloop_t, store};
use crate::raw;
use crate::requests::TaskJson;
use crate::status::{guard, Failure, Outcome};

/// The shape of the entry points with a result: the store behind `handle`, the out-pointer
/// checked before any work (so a call that cannot report its result changes nothing), the
/// operation, its result written by `put`.
fn with_out<O, R>(
    handle: *const memloop_t,
    out: *mut O,
    name: &'static str,
    op: impl FnOnce(&memloop::Memory) -> Outcome<R>,
    put: impl FnOnce(*mut O, R) -> Outcome,
) -> i32 {
    guard(|| {
        let memory = store(handle)?;
        raw::require(out, name)?;
        let result = op(&memory)?;
        put(out, result)
    })
}

/// [`with_out`] for a plain value (an id, a count).
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn value_result<T>(
    handle: *const memloop_t,
    out: *mut T,
    name: &'static str,
    op: impl FnOnce(&memloop::Memory) -> Outcome<T>,
) -> i32 {
    // SAFETY: `with_out` checked `out` non-null; writable by the caller's contract.
    with_out(handle, out, name, op, |o, v| unsafe {
        raw::write(o, v, name)
    })
}

/// [`with_out`] for a result handed over as JSON.
///
/// # Safety
/// `out_json` is NULL or writable.
unsafe fn json_result<R: serde::Serialize>(
    handle: *const memloop_t,
    out_json: *mut *mut c_char,
    op: impl FnOnce(&memloop::Memory) -> Outcome<R>,
) -> i32 {
    // SAFETY: `with_out` checked `out_json` non-null; writable by the caller's contract.
    with_out(handle, out_json, "out_json", op, |o, r| unsafe {
        raw::write_json(o, &r, "out_json")
    })
}

/// As [`json_result`], with a JSON request parsed first (its errors name `arg`).
///
/// # Safety
/// `request` is NULL or a NUL-terminated string; `out_json` is NULL or writable.
unsafe fn json_call<T: serde::de::DeserializeOwned, R: serde::Serialize>(
    handle: *const memloop_t,
    request: *const c_char,
    arg: &'static str,
    out_json: *mut *mut c_char,
    op: impl FnOnce(&memloop::Memory, T) -> Outcome<R>,
) -> i32 {
    let parse_then_op = |memory: &memloop::Memory| {
        // SAFETY: the caller's contract for `request`.
        let parsed: T = unsafe { raw::json(request, arg) }?;
        op(memory, parsed)
    };
    // SAFETY: forwarded contract for `out_json`.
    unsafe { json_result(handle, out_json, parse_then_op) }
}

/// Remembers one memory. `item_json` is an object: `"text"` (required), `"kind"` (chunk,
/// triple, fact, summary, task, reflection, subject, document), `"namespace"`, `"tags"`,
/// `"importance"` (0..1), `"concise"`, `"brief"`, `"subject"`, `"source"`
/// (`{"document": …, "span": [start, end]}`), `"pinned"`, `"triple"`, and the scope it belongs
/// to: `"user"`, `"agent"`, `"session"` (memories of two scopes never merge), and when it held:
/// `"valid_from"`, `"valid_until"` (ms since the Unix epoch; default from now, open-ended). Writes the id that holds
/// the text to `*out_id`: a new id, an existing one when it merged into a memory saying the
/// same, or a fact's new version (`memloop_remember_explained` says which). Durable on return
/// when the store was opened with `"sync": true`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `item_json` is NULL or a NUL-terminated string; `out_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_remember(
    handle: *const memloop_t,
    item_json: *const c_char,
    out_id: *mut u64,
) -> i32 {
    let remember = |m: &memloop::Memory| {
        // SAFETY: the caller's contract for `item_json`.
        let item: NewMemory = unsafe { raw::json(item_json, "item_json") }?;
        Ok(m.remember(item)?.get())
    };
    // SAFETY: forwarded contract for `out_id`.
    unsafe { value_result(handle, out_id, "out_id", remember) }
}

/// Remembers one memory (`item_json` as for `memloop_remember`) and writes what was done to
/// `*out_json`: `{"id": N, "action": "new" | "merged" | "superseded", "previous": M | null}`.
/// `merged`: an existing memory said the same (exactly, or up to case, spacing and
/// punctuation); `superseded`: a near-duplicate fact or triple said something else and `id` is
/// its new version, `previous` the old one, kept as history.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `item_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable; free the
/// string with `memloop_free_string`.
#[no_mangle]
pub unsafe extern "C" fn memloop_remember_explained(
    handle: *const memloop_t,
    item_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    let remember = |m: &memloop::Memory, item: NewMemory| Ok(m.remember_explained(item)?);
    // SAFETY: forwarded contracts for `item_json` and `out_json`.
    unsafe { json_call(handle, item_json, "item_json", out_json, remember) }
}

/// Remembers a JSON array of items (as for `memloop_remember`) in one transaction: all or
/// none. Writes their ids, in order, to `out_ids[0..n]` and `n` to `*out_count`; fails
/// before changing anything when `capacity` is smaller than the array.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `items_json` is NULL or a NUL-terminated string; `out_ids` is NULL or has `capacity`
/// writable elements; `out_count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_remember_batch(
    handle: *const memloop_t,
    items_json: *const c_char,
    out_ids: *mut u64,
    capacity: usize,
    out_count: *mut usize,
) -> i32 {
    guard(|| {
        let memory = store(handle)?;
        raw::require(out_ids, "out_ids")?;
        raw::require(out_count, "out_count")?;
        // SAFETY: the caller's contract for `items_json`.
        let items: Vec<NewMemory> = unsafe { raw::json(items_json, "items_json") }?;
        if items.len() > capacity {
            return Err(Failure::invalid(format!(
                "out_ids holds {capacity} ids, {} items given",
                items.len()
            )));
        }
        let ids: Vec<u64> = memory
            .remember_batch(items)?
            .into_iter()
            .map(MemoryId::get)
            .collect();
        // SAFETY: checked non-null; `capacity` elements by contract, and ids.len() <= capacity.
        unsafe { raw::write_slice(out_ids, capacity, &ids, "out_ids") }?;
        // SAFETY: checked non-null; writable by contract.
        unsafe { raw::write(out_count, ids.len(), "out_count") }
    })
}

/// Writes memory `id` as a JSON object to `*out_json`, or the JSON text `null` when there is
/// no such memory. Does not count as a recall (no reinforcement).
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_get(
    handle: *const memloop_t,
    id: u64,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { json_result(handle, out_json, |m| Ok(m.get(MemoryId::new(id))?)) }
}

/// Erases every memory of a scope, from every file of the store: `scope_json` is
/// `{"user": …, "agent": …, "session": …}` (at least one; each given field must match, so
/// `{"user": "ana"}` erases all of Ana's agents and sessions). Writes the report to
/// `*out_json`: `{"scope": {…}, "memories": N, "log_events": N, "database_bytes": [before,
/// after]}`. Durable on return; the database file is rewritten, so it takes time on a large
/// store.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `scope_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable; free the
/// string with `memloop_free_string`.
#[no_mangle]
pub unsafe extern "C" fn memloop_forget_scope(
    handle: *const memloop_t,
    scope_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    let erase = |m: &memloop::Memory, scope: memloop::Scope| Ok(m.scoped(&scope).erase()?);
    // SAFETY: forwarded contracts for `scope_json` and `out_json`.
    unsafe { json_call(handle, scope_json, "scope_json", out_json, erase) }
}

/// Remembers turns of a conversation. `request_json`: `{"session": "…", "turns": [{"speaker":
/// "…", "text": "…", "time": ms}, …], "user": …, "agent": …}`. Each turn becomes a memory of
/// kind `turn` ("speaker: text", valid from its time, numbered after the session's earlier
/// turns), the session's summary is rewritten, and the `extract` hook (if set) draws facts
/// sourced to their turn. Writes `{"session", "turns": [ids], "first_turn", "summary": id,
/// "extracted": [{"id", "action"}]}` to `*out_json`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `request_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable; free
/// the string with `memloop_free_string`.
#[no_mangle]
pub unsafe extern "C" fn memloop_remember_conversation(
    handle: *const memloop_t,
    request_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    let remember = |m: &memloop::Memory, r: memloop::requests::ConversationRequest| {
        let (session, turns, scope) = r.into_parts()?;
        Ok(m.remember_conversation(&session, &turns, &scope)?)
    };
    // SAFETY: forwarded contracts for `request_json` and `out_json`.
    unsafe { json_call(handle, request_json, "request_json", out_json, remember) }
}

/// Forgets memory `id` now, durably. `MEMLOOP_ERR_NOT_FOUND` when there is no such memory.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
#[no_mangle]
pub extern "C" fn memloop_forget(handle: *const memloop_t, id: u64) -> i32 {
    guard(|| Ok(store(handle)?.forget(MemoryId::new(id))?))
}

/// Recalls memories. `query_json` (`memloop::requests::RecallRequest`, as the MCP `recall` tool takes
/// it): `{"query": "...", "k": 5, "namespace": …, "kinds": […], "tags": […], "strategy":
/// "single" | "lexical" | "rerank" | "iterative", "history": false (or "include_superseded"),
/// "user": …, "agent": …, "session": …, "as_of": ms or "RFC 3339"}`; all but `query` may be
/// left out (a scope field given: only that scope's memories; `as_of`: what was valid then,
/// superseded versions included).
/// Writes the registry's recall answer to `*out_json` (since ABI 2; the same JSON every door
/// returns): `{"hits": [...]}`, best first, each `{"id", "score", "rank", "kind",
/// "namespace", "tier", "text", "explain": {…}, "item": {…}}`. Hits are reinforced (they decay
/// more slowly).
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `query_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_recall(
    handle: *const memloop_t,
    query_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe {
        json_call(
            handle,
            query_json,
            "query_json",
            out_json,
            |m, r: memloop::requests::RecallRequest| Ok(m.call(memloop::Request::Recall(r))?),
        )
    }
}

/// Runs any operation of the registry (`memloop::Operation`: remember, update,
/// remember_conversation, recall, context, feedback, record_task, observe, get, list, forget,
/// explain_decay, stats, sweep, export, import) with its request `request_json` (a JSON object
/// of the fields MCP's tool of the same name and `memloop call` take; NULL: no fields), and
/// writes its answer, the same JSON every door returns, to `*out_json`. An unknown operation or
/// field is `MEMLOOP_ERR_INVALID_ARGUMENT`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `operation` is NULL or a NUL-terminated string; `request_json` is NULL or a NUL-terminated
/// string; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_call(
    handle: *const memloop_t,
    operation: *const c_char,
    request_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    let run = |memory: &memloop::Memory| {
        // SAFETY: the caller's contract for `operation` and `request_json`.
        let name = unsafe { raw::text(operation, "operation") }?;
        // SAFETY: as above.
        let fields = match unsafe { raw::optional_text(request_json, "request_json") }? {
            Some(text) => raw::parse_json(text, "request_json")?,
            None => serde_json::Value::Null,
        };
        let request = memloop::Request::parse(name, fields).map_err(memloop::Error::from)?;
        Ok(memory.call(request)?)
    };
    // SAFETY: forwarded contract for `out_json`.
    unsafe { json_result(handle, out_json, run) }
}

/// Assembles a context under a token budget. `request_json` (`memloop::requests::ContextParams`, as the
/// MCP `context` tool takes it): `{"query": "...", "budget": 500, "k": 8, "strategy": …,
/// "namespace": …, "kinds": […], "tags": […], "history": false, "key_share": 0.33,
/// "mode": "memories" | "documents", "user": …, "agent": …, "session": …, "as_of": ms or
/// "RFC 3339"}`; all but `query` may be left out. Writes `{"text", "tokens", "blocks": [{"label", "id",
/// "precision", "text", "score"}], "dropped": [ids]}` to `*out_json`; `tokens` never exceeds
/// the budget.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `request_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_context(
    handle: *const memloop_t,
    request_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe {
        json_call(
            handle,
            request_json,
            "request_json",
            out_json,
            |m, r: memloop::requests::ContextParams| Ok(m.context(&r.into_request()?)?),
        )
    }
}

/// Records how useful memory `id` was, `level` 1 (misleading) to 5 (essential): 1–2 weaken it
/// and serve it at a lower precision, 3 reinforces it at a higher one, 4–5 reinforce it and
/// raise its importance. Durable.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
#[no_mangle]
pub extern "C" fn memloop_feedback(handle: *const memloop_t, id: u64, level: i32) -> i32 {
    guard(|| {
        let memory = store(handle)?;
        let level = u8::try_from(level)
            .ok()
            .filter(|l| (1..=5).contains(l))
            .ok_or_else(|| Failure::invalid(format!("level {level} is outside 1..=5")))?;
        memory.feedback(MemoryId::new(id), level)?;
        Ok(())
    })
}

/// Records a task the agent carried out. `task_json`: `{"request": "...", "steps": […],
/// "success": true | false, "reflection": "…", "namespace": …, "tags": […]}`. A failed task
/// with a reflection also stores the reflection. Writes `{"task": id, "reflection": id | null}`
/// to `*out_json`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `task_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_record_task(
    handle: *const memloop_t,
    task_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe {
        json_call(
            handle,
            task_json,
            "task_json",
            out_json,
            |m, t: TaskJson| Ok(m.record_task(&t.into_task("task_json")?)?),
        )
    }
}

/// Records an event about a subject (a file, a tool): `event` is `"created"`, `"modified"`,
/// `"executed"` or `"deleted"`; `content` may be NULL. All events of a subject merge into one
/// memory, whose id is written to `*out_id`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `subject`, `event` and `content` are NULL or NUL-terminated strings; `out_id` is NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_observe(
    handle: *const memloop_t,
    subject: *const c_char,
    event: *const c_char,
    content: *const c_char,
    out_id: *mut u64,
) -> i32 {
    let observe = |m: &memloop::Memory| {
        // SAFETY: the caller's contract for the three strings.
        let (subject, event, content) = unsafe {
            (
                raw::text(subject, "subject")?,
                raw::text(event, "event")?,
                raw::optional_text(content, "content")?,
            )
        };
        let event = SubjectEvent::named(event).map_err(memloop::Error::from)?;
        Ok(m.observe(subject, event, content)?.get())
    };
    // SAFETY: forwarded contract for `out_id`.
    unsafe { value_result(handle, out_id, "out_id", observe) }
}

/// Applies forgetting at the clock's current time; writes the report (`{"demoted",
/// "forgotten", …}`) to `*out_json`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_sweep(
    handle: *const memloop_t,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { json_result(handle, out_json, |m| Ok(m.admin().sweep()?)) }
}

/// Applies forgetting to one scope's memories: `scope_json` is `{"user": …, "agent": …,
/// "session": …}` (at least one). Demotions and deletions due to its memories happen, and
/// `"capacity_per_user"` for its user; the namespace and store-wide capacities are left to
/// `memloop_sweep`. Writes the report as `memloop_sweep` does.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `scope_json` is NULL or a NUL-terminated string; `out_json` is NULL or writable; free the
/// string with `memloop_free_string`.
#[no_mangle]
pub unsafe extern "C" fn memloop_sweep_scope(
    handle: *const memloop_t,
    scope_json: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    let sweep = |m: &memloop::Memory, scope: memloop::Scope| {
        scope
            .require_named("memloop_sweep_scope (memloop_sweep sweeps all)")
            .map_err(memloop::Error::from)?;
        Ok(m.scoped(&scope).sweep()?)
    };
    // SAFETY: forwarded contracts for `scope_json` and `out_json`.
    unsafe { json_call(handle, scope_json, "scope_json", out_json, sweep) }
}

/// Writes the store's statistics (`{"memories", "working", "long_term", "indexed", "seq",
/// "checkpoint", "model"}`) to `*out_json`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_stats(
    handle: *const memloop_t,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { json_result(handle, out_json, |m| Ok(m.stats()?)) }
}

/// Verifies the whole store now: the index file's checksums and links (the index is rebuilt
/// from the database when they fail), every record of the database, and that both agree.
/// Writes `{"memories", "indexed", "index_rebuilt": reason or null, "problems": [...]}` to
/// `*out_json`; the store is sound when `problems` is empty. Reads the whole store.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_check(
    handle: *const memloop_t,
    out_json: *mut *mut c_char,
) -> i32 {
    // SAFETY: forwarded contract.
    unsafe { json_result(handle, out_json, |m| Ok(m.admin().check()?)) }
}

/// Saves the index and makes every write durable (compacting the files when much is free).
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
#[no_mangle]
pub extern "C" fn memloop_checkpoint(handle: *const memloop_t) -> i32 {
    guard(|| Ok(store(handle)?.admin().checkpoint()?))
}

/// Exports every memory (with its vector) to the file `path`; writes how many to `*out_count`.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out_count` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_export(
    handle: *const memloop_t,
    path: *const c_char,
    out_count: *mut u64,
) -> i32 {
    let export = |m: &memloop::Memory| {
        // SAFETY: the caller's contract for `path`.
        let path = unsafe { raw::text(path, "path") }?;
        Ok(m.transfer()
            .export_request(&memloop::requests::ExportRequest::to(path))?
            .exported as u64)
    };
    // SAFETY: forwarded contract for `out_count`.
    unsafe { value_result(handle, out_count, "out_count", export) }
}

/// Imports an export file; writes `{"records", "added", "merged", "unchanged", "reembedded"}`
/// to `*out_json`. A file from another model is re-embedded.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out_json` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn memloop_import(
    handle: *const memloop_t,
    path: *const c_char,
    out_json: *mut *mut c_char,
) -> i32 {
    let import = |m: &memloop::Memory| {
        // SAFETY: the caller's contract for `path`.
        let path = unsafe { raw::text(path, "path") }?;
        Ok(m.transfer()
            .import_request(&memloop::requests::ImportRequest {
                path: path.into(),
                format: None,
            })?)
    };
    // SAFETY: forwarded contract for `out_json`.
    unsafe { json_result(handle, out_json, import) }
}

/// Sets a manual clock to `unix_ms` (milliseconds since the Unix epoch). An error for the
/// system clock, or for a time before the clock's current time.
///
/// Thread safety: any thread, concurrently with other calls on the same handle.
#[no_mangle]
pub extern "C" fn memloop_set_time(handle: *const memloop_t, unix_ms: i64) -> i32 {
    guard(|| {
        let memory = store(handle)?;
        memory.clock().set(unix_ms).map_err(Failure::invalid)
    })
}
