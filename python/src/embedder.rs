//! A Python object as the engine's embedder: any object with `embed_documents(texts) ->
//! list[list[float]]` and `embed_query(text) -> list[float]` (a LangChain `Embeddings`, for
//! one), of any dimension. Its dimension is learned at open from one `embed_query`; its
//! fingerprint (which names the store's vector space, checked at every open) is its class's
//! module and name with that dimension, or its `fingerprint` attribute when it has one. Every
//! vector it returns is checked: the dimension, finite numbers. A failure fails the call that
//! needed it with `CallbackError`.

use memloop::TextEmbedder;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::callback_failed;

/// The embedder object, with what was learned of it at open.
pub(crate) struct PyEmbedder {
    object: Py<PyAny>,
    dim: usize,
    fingerprint: String,
}

impl PyEmbedder {
    /// Checks `object`'s two methods and learns its dimension by embedding one query.
    pub(crate) fn new(py: Python<'_>, object: Py<PyAny>) -> PyResult<PyEmbedder> {
        let bound = object.bind(py);
        for method in ["embed_documents", "embed_query"] {
            if !bound.hasattr(method)? || !bound.getattr(method)?.is_callable() {
                return Err(crate::errors::invalid(format!(
                    "embedder must have a callable {method} (a LangChain Embeddings, for one)"
                )));
            }
        }
        let probe = vector(bound.call_method1("embed_query", ("dimension",))?, None)?;
        let dim = probe.len();
        let fingerprint = match bound.getattr("fingerprint") {
            Ok(f) if f.is_instance_of::<pyo3::types::PyString>() => f.extract::<String>()?,
            _ => {
                let class = bound.get_type();
                format!("python:{}.{}:{dim}", class.module()?, class.qualname()?)
            }
        };
        Ok(PyEmbedder {
            object,
            dim,
            fingerprint,
        })
    }
}

/// A returned vector: a sequence of finite floats, of `dim` numbers when `dim` is known.
fn vector(v: Bound<'_, PyAny>, dim: Option<usize>) -> PyResult<Vec<f32>> {
    let numbers: Vec<f64> = v
        .extract()
        .map_err(|_| PyTypeError::new_err("an embedding must be a sequence of floats"))?;
    if numbers.is_empty() || dim.is_some_and(|d| d != numbers.len()) {
        return Err(PyValueError::new_err(format!(
            "an embedding has {} numbers, not {}",
            numbers.len(),
            dim.map_or("at least 1".to_string(), |d| d.to_string())
        )));
    }
    if numbers.iter().any(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(
            "an embedding holds a non-finite number",
        ));
    }
    Ok(numbers.into_iter().map(|x| x as f32).collect())
}

impl TextEmbedder for PyEmbedder {
    fn fingerprint(&self) -> String {
        self.fingerprint.clone()
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed_documents(&self, texts: &[&str]) -> memloop::Result<Vec<Vec<f32>>> {
        Python::attach(|py| {
            let out = self
                .object
                .bind(py)
                .call_method1("embed_documents", (texts.to_vec(),))?;
            let rows: Vec<Bound<'_, PyAny>> = out.extract().map_err(|_| {
                PyTypeError::new_err("embed_documents must return a list of embeddings")
            })?;
            if rows.len() != texts.len() {
                return Err(PyValueError::new_err(format!(
                    "embed_documents returned {} embeddings for {} texts",
                    rows.len(),
                    texts.len()
                )));
            }
            rows.into_iter()
                .map(|r| vector(r, Some(self.dim)))
                .collect()
        })
        .map_err(|e| callback_failed("embedder", e))
    }
    fn embed_query(&self, text: &str) -> memloop::Result<Vec<f32>> {
        Python::attach(|py| {
            let out = self.object.bind(py).call_method1("embed_query", (text,))?;
            vector(out, Some(self.dim))
        })
        .map_err(|e| callback_failed("embedder", e))
    }
    fn count_tokens(&self, text: &str) -> usize {
        // No tokenizer comes with the object: words, as a token counter hook may refine.
        text.split_whitespace().count()
    }
}
