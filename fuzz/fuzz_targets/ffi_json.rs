//! Arbitrary bytes as the JSON request of every C ABI entry point that takes one, on a real
//! store (a model-free embedder): each call returns a status, never crashes the host.
//! Run with `scripts/fuzz.sh ffi_json SECONDS`.
#![no_main]

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memloop_ffi::*;

/// An entry point taking a JSON request and returning a JSON string.
type JsonCall = unsafe extern "C" fn(*const memloop_t, *const c_char, *mut *mut c_char) -> i32;

/// One store for the whole run (opening per input would dominate the time).
fn store() -> usize {
    static STORE: OnceLock<usize> = OnceLock::new();
    *STORE.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("memloop-fuzz-ffi-{}", std::process::id()));
        let path = CString::new(dir.to_string_lossy().into_owned()).unwrap();
        let options =
            CString::new(r#"{"hashing_embedder": 32, "clock": "manual", "sync": false}"#).unwrap();
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid NUL-terminated strings and a writable out-pointer.
        let status = unsafe {
            memloop_open(
                path.as_ptr(),
                options.as_ptr(),
                std::ptr::null(),
                &mut handle,
            )
        };
        assert_eq!(status, 0, "the fuzz store opens");
        handle as usize
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(request) = CString::new(data) else {
        return;
    };
    let handle = store() as *const memloop_t;
    let r: *const c_char = request.as_ptr();
    let mut out: *mut c_char = std::ptr::null_mut();
    let mut id = 0u64;
    let mut ids = [0u64; 8];
    let mut count = 0usize;
    // SAFETY: every pointer is valid for the call; returned strings are freed.
    unsafe {
        let _ = memloop_remember(handle, r, &mut id);
        let _ = memloop_remember_batch(handle, r, ids.as_mut_ptr(), ids.len(), &mut count);
        let calls: [JsonCall; 4] = [
            memloop_recall,
            memloop_context,
            memloop_record_task,
            memloop_remember_explained,
        ];
        for call in calls {
            if call(handle, r, &mut out) == 0 {
                memloop_free_string(out);
            }
            out = std::ptr::null_mut();
        }
    }
});
