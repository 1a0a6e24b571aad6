//! # memloop-wasm
//!
//! memloop in the browser: the C ABI of [`memloop_ffi`] (`memloop_open`, `memloop_call`,
//! `memloop_close`, `memloop_last_error`, `memloop_free_string`, …) built for WebAssembly with
//! WASI (`wasm32-wasip1`), plus the two calls a JavaScript host needs to pass strings in:
//! [`memloop_alloc`] and [`memloop_dealloc`]. The store's files reach the engine through the
//! host's WASI layer: in the browser, `wasm/js/wasi.js` over the Origin Private File System
//! (`wasm/js/opfs.js`), in a dedicated Worker. Built by `scripts/build-wasm.sh`.

// The C ABI, exported from this module: linking the crate keeps every `#[no_mangle]` entry
// point of memloop-ffi.
pub use memloop_ffi::*;

/// Allocates `len` bytes (at least one) aligned to 8 for the host to write a string or a
/// request into; NULL when the memory cannot grow. Free with [`memloop_dealloc`] and the same
/// `len`.
#[no_mangle]
pub extern "C" fn memloop_alloc(len: usize) -> *mut u8 {
    match std::alloc::Layout::from_size_align(len.max(1), 8) {
        // SAFETY: the layout's size is non-zero.
        Ok(layout) => unsafe { std::alloc::alloc(layout) },
        Err(_) => std::ptr::null_mut(),
    }
}

/// Frees what [`memloop_alloc`] returned for the same `len`; NULL is ignored.
///
/// # Safety
/// `ptr` is NULL or came from `memloop_alloc(len)` and was not freed before.
#[no_mangle]
pub unsafe extern "C" fn memloop_dealloc(ptr: *mut u8, len: usize) {
    if ptr.is_null() {
        return;
    }
    if let Ok(layout) = std::alloc::Layout::from_size_align(len.max(1), 8) {
        // SAFETY: by the caller's contract `ptr` came from `memloop_alloc` with this layout.
        unsafe { std::alloc::dealloc(ptr, layout) }
    }
}

/// The encoder [`memloop_wasm_embed`] ran last, kept for the next call with the same folder
/// and precision (loading reads the whole weights file).
type Loaded = Option<(String, String, Box<dyn memloop::TextEmbedder>)>;

thread_local! {
    static ENCODER: std::cell::RefCell<Loaded> = const { std::cell::RefCell::new(None) };
}

/// Embeds texts with the model in a folder, without a store: the vectors a store's recall
/// would compare (documents' vectors, normalised), for an application's own use and for the
/// browser's golden-vector test. `model_dir` is the model's folder, `precision` `"f32"` or
/// `"int8"` (NULL: f32), `texts_json` a JSON array of strings. Returns a string to free with
/// `memloop_free_string`: `{"vectors": [[…], …], "fingerprint": "…"}`, or
/// `{"error": {"code": "invalid_input" | "embed" | …, "message": "…"}}`; NULL only when a
/// string cannot be allocated.
///
/// # Safety
/// Each pointer is NULL or a NUL-terminated string valid for the call.
#[no_mangle]
pub unsafe extern "C" fn memloop_wasm_embed(
    model_dir: *const std::ffi::c_char,
    precision: *const std::ffi::c_char,
    texts_json: *const std::ffi::c_char,
) -> *mut std::ffi::c_char {
    // SAFETY: the caller's contract, forwarded.
    let answer = match unsafe { embed(model_dir, precision, texts_json) } {
        Ok(v) => v,
        Err((code, message)) => serde_json::json!({"error": {"code": code, "message": message}}),
    };
    std::ffi::CString::new(answer.to_string()).map_or(std::ptr::null_mut(), |s| s.into_raw())
}

/// An error of [`memloop_wasm_embed`]: the engine's code name and a message.
type Refusal = (&'static str, String);

/// Reads a C string argument.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for `'a`.
unsafe fn text<'a>(ptr: *const std::ffi::c_char, name: &str) -> Result<Option<&'a str>, Refusal> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null, NUL-terminated by the caller's contract.
    let s = unsafe { std::ffi::CStr::from_ptr(ptr) };
    s.to_str()
        .map(Some)
        .map_err(|_| ("invalid_input", format!("{name} is not valid UTF-8")))
}

/// [`memloop_wasm_embed`]'s work.
///
/// # Safety
/// As [`memloop_wasm_embed`].
unsafe fn embed(
    model_dir: *const std::ffi::c_char,
    precision: *const std::ffi::c_char,
    texts_json: *const std::ffi::c_char,
) -> Result<serde_json::Value, Refusal> {
    use memloop::model::EncoderPrecision;
    // SAFETY: forwarded contract.
    let dir = unsafe { text(model_dir, "model_dir") }?
        .ok_or(("invalid_input", "model_dir is NULL".to_string()))?;
    // SAFETY: forwarded contract.
    let precision = unsafe { text(precision, "precision") }?.unwrap_or("f32");
    let parsed = EncoderPrecision::parse(precision).ok_or((
        "invalid_input",
        format!("precision {precision:?}: \"f32\" or \"int8\""),
    ))?;
    // SAFETY: forwarded contract.
    let texts = unsafe { text(texts_json, "texts_json") }?.unwrap_or("[]");
    let texts: Vec<String> = serde_json::from_str(texts).map_err(|e| {
        (
            "invalid_input",
            format!("texts_json: a JSON array of strings ({e})"),
        )
    })?;
    let refused = |e: memloop::Error| (e.code().name(), e.to_string());
    ENCODER.with(|slot| {
        let mut slot = slot.borrow_mut();
        let encoder = match &mut *slot {
            Some((d, p, encoder)) if d == dir && p == precision => encoder,
            other => {
                *other = None;
                let loaded = memloop::model::load_model_at(
                    Some(std::path::Path::new(dir)),
                    memloop::model::DeviceChoice::Cpu,
                    parsed,
                )
                .map_err(refused)?;
                &mut other
                    .insert((dir.to_string(), precision.to_string(), Box::new(loaded)))
                    .2
            }
        };
        let borrowed: Vec<&str> = texts.iter().map(String::as_str).collect();
        let vectors = encoder.embed_documents(&borrowed).map_err(refused)?;
        Ok(serde_json::json!({"vectors": vectors, "fingerprint": encoder.fingerprint()}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_handed_out_is_writable_and_freed() {
        let p = memloop_alloc(0);
        assert!(!p.is_null());
        // SAFETY: `p` came from memloop_alloc(0), which holds at least one byte.
        unsafe {
            p.write(7);
            memloop_dealloc(p, 0);
            memloop_dealloc(std::ptr::null_mut(), 3);
        }
        assert!(memloop_alloc(usize::MAX).is_null());
    }
}
