//! Python callables as the engine's replaceable parts: reranker, query refiner, summarizer,
//! token counter and conversation extractor. They run on the thread of the call that needs them, holding the GIL
//! only while the callable runs. A callable that raises, or returns something unusable, fails
//! that call with `CallbackError` whose `__cause__` is its exception.

use std::sync::Arc;

use memloop::context::{Summarizer, Summary, TokenCounter};
use memloop::retrieve::{QueryRefiner, RefineInput, Refinement, Reranker};
use memloop::Hooks;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use crate::errors::callback_failed;
use crate::values::Hit;

/// The callables given to `Memory(...)`; `None` keeps the built-in part.
pub(crate) struct Callables {
    pub reranker: Option<Py<PyAny>>,
    pub refiner: Option<Py<PyAny>>,
    pub summarizer: Option<Py<PyAny>>,
    pub token_counter: Option<Py<PyAny>>,
    pub extractor: Option<Py<PyAny>>,
}

impl Callables {
    /// Replaces the engine's parts for which a callable was given.
    pub(crate) fn install(self, py: Python<'_>, hooks: &mut Hooks) -> PyResult<()> {
        for (name, f) in [
            ("reranker", &self.reranker),
            ("refiner", &self.refiner),
            ("summarizer", &self.summarizer),
            ("token_counter", &self.token_counter),
            ("extractor", &self.extractor),
        ] {
            if let Some(f) = f {
                if !f.bind(py).is_callable() {
                    return Err(crate::errors::invalid(format!("{name} must be callable")));
                }
            }
        }
        if let Some(f) = self.reranker {
            hooks.reranker = Arc::new(PyReranker(f));
        }
        if let Some(f) = self.refiner {
            hooks.refiner = Arc::new(PyRefiner(f));
        }
        if let Some(f) = self.summarizer {
            hooks.summarizer = Arc::new(PySummarizer(f));
        }
        if let Some(f) = self.token_counter {
            hooks.token_counter = Some(Arc::new(PyTokenCounter(f)));
        }
        if let Some(f) = self.extractor {
            hooks.extractor = Some(Arc::new(crate::conversation::PyExtractor(f)));
        }
        Ok(())
    }
}

/// The hits as Python `Hit`s.
fn hits(py: Python<'_>, hits: &[memloop::Hit]) -> PyResult<Vec<Py<Hit>>> {
    hits.iter()
        .map(|h| Py::new(py, Hit { hit: h.clone() }))
        .collect()
}

/// `reranker(query, candidates) -> one float per candidate`, higher is better.
struct PyReranker(Py<PyAny>);

impl Reranker for PyReranker {
    fn rerank(&self, query: &str, candidates: &[memloop::Hit]) -> memloop::Result<Vec<f32>> {
        Python::attach(|py| {
            let result = self.0.call1(py, (query, hits(py, candidates)?))?;
            let scores: Vec<f64> = result
                .extract(py)
                .map_err(|_| PyTypeError::new_err("reranker must return a sequence of floats"))?;
            if scores.len() != candidates.len() {
                return Err(PyValueError::new_err(format!(
                    "reranker returned {} scores for {} candidates",
                    scores.len(),
                    candidates.len()
                )));
            }
            if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "score {i} is not a finite number"
                )));
            }
            Ok(scores.into_iter().map(|s| s as f32).collect())
        })
        .map_err(|e| callback_failed("reranker", e))
    }
}

/// `refiner(query, hits, round) -> the next round's query text`.
struct PyRefiner(Py<PyAny>);

impl QueryRefiner for PyRefiner {
    fn refine(&self, input: &RefineInput<'_>) -> memloop::Result<Refinement> {
        Python::attach(|py| {
            let result = self
                .0
                .call1(py, (input.query, hits(py, input.hits)?, input.round))?;
            let text: String = result.extract(py).map_err(|_| {
                PyTypeError::new_err(format!(
                    "refiner returned {}, not str",
                    result
                        .bind(py)
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?;
            if text.trim().is_empty() {
                return Err(PyValueError::new_err("refiner returned an empty query"));
            }
            Ok(Refinement::Text(text))
        })
        .map_err(|e| callback_failed("refiner", e))
    }
}

/// `summarizer(text) -> (concise, brief)`.
struct PySummarizer(Py<PyAny>);

impl Summarizer for PySummarizer {
    fn summarize(&self, text: &str) -> memloop::Result<Summary> {
        Python::attach(|py| {
            let result = self.0.call1(py, (text,))?;
            let (concise, brief): (String, String) = result.extract(py).map_err(|_| {
                PyTypeError::new_err("summarizer must return a (concise, brief) pair of str")
            })?;
            Ok(Summary { concise, brief })
        })
        .map_err(|e| callback_failed("summarizer", e))
    }
}

/// `token_counter(text) -> int ≥ 0`.
struct PyTokenCounter(Py<PyAny>);

impl TokenCounter for PyTokenCounter {
    fn count(&self, text: &str) -> usize {
        let counted = Python::attach(|py| {
            let result = self.0.call1(py, (text,))?;
            let bound = result.bind(py);
            if bound.is_instance_of::<pyo3::types::PyBool>() {
                return Err(PyValueError::new_err(format!(
                    "token counter returned {bound}, not a count"
                )));
            }
            bound.extract::<usize>().map_err(|_| {
                PyValueError::new_err(format!("token counter returned {bound}, not a count"))
            })
        });
        // A failure cannot be returned through `count`: it is recorded (the call then fails)
        // and the text is made too large to fit any budget meanwhile.
        counted.unwrap_or_else(|e| {
            callback_failed("token counter", e);
            usize::MAX / 4
        })
    }
}
