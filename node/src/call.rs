//! One engine call as a Promise: the work runs on libuv's thread pool (`Task::compute`), its
//! answer becomes a JavaScript value back on the JavaScript thread (`Task::resolve`).

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::bindgen_prelude::{Env, Unknown};
use napi::ScopedTask;
use serde::Serialize;

pub use crate::errors::{checked, checked_engine, engine_error, failure, invalid};
use crate::js_value::plain;

/// The work of one call.
type Work<T> = Box<dyn FnOnce() -> memloop::Result<T> + Send>;

/// An engine call run off the JavaScript thread; its answer becomes a plain object.
pub struct Call<T: Send + 'static> {
    work: Option<Work<T>>,
}

impl<T: Send + 'static> Call<T> {
    /// A call doing `work`.
    pub fn new(work: impl FnOnce() -> memloop::Result<T> + Send + 'static) -> Self {
        Call {
            work: Some(Box::new(work)),
        }
    }

    /// Runs the work (once), a panic in it reported as an error, never unwinding into Node.
    pub fn run(&mut self) -> napi::Result<T> {
        let work = self
            .work
            .take()
            .ok_or_else(|| failure("invalid_input", "the call already ran"))?;
        match catch_unwind(AssertUnwindSafe(work)) {
            Ok(Ok(out)) => Ok(out),
            Ok(Err(e)) => Err(engine_error(&e)),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                Err(failure("panic", &format!("memloop panicked: {what}")))
            }
        }
    }
}

impl<'task, T: Serialize + Send + 'static> ScopedTask<'task> for Call<T> {
    type Output = T;
    type JsValue = Unknown<'task>;

    fn compute(&mut self) -> napi::Result<T> {
        self.run()
    }

    fn resolve(&mut self, env: &'task Env, out: T) -> napi::Result<Unknown<'task>> {
        env.to_js_value(&plain(&out)?)
    }
}

/// An engine call whose answer becomes the napi object `O` (see `outputs.rs`) by `to_js`.
pub struct Typed<T: Send + 'static, O> {
    call: Call<T>,
    to_js: fn(T) -> napi::Result<O>,
}

impl<T: Send + 'static, O> Typed<T, O> {
    /// A call doing `work`, answered as `to_js` makes it.
    pub fn new(
        work: impl FnOnce() -> memloop::Result<T> + Send + 'static,
        to_js: fn(T) -> napi::Result<O>,
    ) -> Self {
        Typed {
            call: Call::new(work),
            to_js,
        }
    }
}

impl<T, O> napi::Task for Typed<T, O>
where
    T: Send + 'static,
    O: napi::bindgen_prelude::ToNapiValue + napi::bindgen_prelude::TypeName,
{
    type Output = T;
    type JsValue = O;

    fn compute(&mut self) -> napi::Result<T> {
        self.call.run()
    }

    fn resolve(&mut self, _env: Env, out: T) -> napi::Result<O> {
        (self.to_js)(out)
    }
}

/// `out` read into `O` through its serde form (for answers without a direct conversion).
pub fn via_serde<T: Serialize, O: serde::de::DeserializeOwned>(out: T) -> napi::Result<O> {
    serde_json::to_value(out)
        .and_then(serde_json::from_value)
        .map_err(|e| failure("store", &format!("an answer failed to encode: {e}")))
}
