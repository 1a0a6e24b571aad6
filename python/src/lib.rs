//! # memloop for Python
//!
//! The `memloop._native` extension module: the engine called directly through pyo3, no JSON
//! and no C ABI in between. Built by maturin into one abi3 wheel (CPython ≥ 3.9); the pure
//! Python part of the package (`memloop/`: the exception tree, `AsyncMemory`, the stubs)
//! re-exports what is defined here.
//!
//! - [`memory::Memory`]: a store, usable from many threads; every call that embeds, searches,
//!   writes, sweeps or saves releases the GIL.
//! - [`values`]: `Item`, `Hit`, `Block`, `Context`, `Remembered`, built from the engine's types.
//! - [`hooks`]: Python callables as the engine's reranker, refiner, summarizer, token counter.
//! - [`errors`]: every engine error as a `memloop.MemloopError` subclass; [`args`]: argument
//!   conversion whose failures are `InvalidArgumentError`s, never a crash.

use pyo3::prelude::*;

mod args;
mod conversation;
mod embedder;
mod errors;
mod hooks;
mod items;
mod memory;
mod options;
mod time;
mod values;

/// The library's version (the Cargo package version).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The extension module `memloop._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<memory::Memory>()?;
    m.add_class::<values::Item>()?;
    m.add_class::<values::Hit>()?;
    m.add_class::<values::Block>()?;
    m.add_class::<values::Context>()?;
    m.add_class::<values::Remembered>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
