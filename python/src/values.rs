//! The values a store hands back: stored memories, recall hits, contexts and what a remember
//! did. Each keeps the engine's value and builds Python objects only for the fields read, so
//! a recall costs little more than the engine's own work.

use memloop::{context::Precision, MemoryId, MemoryItem, RememberAction};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::invalid;

/// A stored memory. `data` holds every field as a dict (sources, triple, times, strength…).
#[pyclass(module = "memloop", frozen, eq)]
#[derive(PartialEq)]
pub(crate) struct Item {
    pub(crate) item: MemoryItem,
}

#[pymethods]
impl Item {
    /// The memory's id.
    #[getter]
    fn id(&self) -> u64 {
        self.item.id.get()
    }
    /// Its kind: chunk, triple, fact, summary, task, reflection, subject or document.
    #[getter]
    fn kind(&self) -> &'static str {
        self.item.kind.name()
    }
    /// The original text.
    #[getter]
    fn text(&self) -> &str {
        &self.item.text
    }
    /// Its namespace.
    #[getter]
    fn namespace(&self) -> &str {
        &self.item.namespace
    }
    /// Its tags, sorted.
    #[getter]
    fn tags(&self) -> Vec<String> {
        self.item.tags.clone()
    }
    /// Importance in [0, 1].
    #[getter]
    fn importance(&self) -> f32 {
        self.item.importance
    }
    /// `"working"` or `"long_term"`.
    #[getter]
    fn tier(&self) -> &'static str {
        self.item.tier.name()
    }
    /// Never forgotten when true.
    #[getter]
    fn pinned(&self) -> bool {
        self.item.pinned
    }
    /// How many times it was remembered (merges count).
    #[getter]
    fn count(&self) -> u32 {
        self.item.count
    }
    /// The concise version, if any.
    #[getter]
    fn concise(&self) -> Option<&str> {
        self.item.concise.as_deref()
    }
    /// The brief version, if any.
    #[getter]
    fn brief(&self) -> Option<&str> {
        self.item.brief.as_deref()
    }
    /// The subject key, if any.
    #[getter]
    fn subject(&self) -> Option<&str> {
        self.item.subject.as_deref()
    }
    /// Creation time, ms since the Unix epoch.
    #[getter]
    fn created(&self) -> i64 {
        self.item.created
    }
    /// Last update time, ms since the Unix epoch.
    #[getter]
    fn updated(&self) -> i64 {
        self.item.updated
    }
    /// The user it belongs to, if any.
    #[getter]
    fn user(&self) -> Option<&str> {
        self.item.user.as_deref()
    }
    /// The agent it belongs to, if any.
    #[getter]
    fn agent(&self) -> Option<&str> {
        self.item.agent.as_deref()
    }
    /// The session it belongs to, if any.
    #[getter]
    fn session(&self) -> Option<&str> {
        self.item.session.as_deref()
    }
    /// When what it says became true, ms since the Unix epoch.
    #[getter]
    fn valid_from(&self) -> i64 {
        self.item.valid_from
    }
    /// When it stopped being true (ms), or None while it holds.
    #[getter]
    fn valid_until(&self) -> Option<i64> {
        self.item.valid_until
    }
    /// Every field, as a dict.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.item)
    }
    fn __repr__(&self) -> String {
        format!(
            "Item(id={}, kind={:?}, tier={:?}, text={:?})",
            self.item.id,
            self.item.kind.name(),
            self.item.tier.name(),
            self.item.text
        )
    }
}

/// A recalled memory: its score (cosine similarity, or the reranker's), rank and why.
#[pyclass(module = "memloop", frozen)]
pub(crate) struct Hit {
    pub(crate) hit: memloop::Hit,
}

#[pymethods]
impl Hit {
    /// The memory's id.
    #[getter]
    fn id(&self) -> u64 {
        self.hit.item.id.get()
    }
    /// Its score: cosine similarity, or the reranker's score.
    #[getter]
    fn score(&self) -> f32 {
        self.hit.score
    }
    /// Its position in the result, from 0.
    #[getter]
    fn rank(&self) -> usize {
        self.hit.rank
    }
    /// The memory's text.
    #[getter]
    fn text(&self) -> &str {
        &self.hit.item.text
    }
    /// The memory's kind.
    #[getter]
    fn kind(&self) -> &'static str {
        self.hit.item.kind.name()
    }
    /// The memory's tier.
    #[getter]
    fn tier(&self) -> &'static str {
        self.hit.item.tier.name()
    }
    /// The whole stored memory.
    #[getter]
    fn item(&self) -> Item {
        Item {
            item: self.hit.item.clone(),
        }
    }
    /// Why it surfaced: vector and lexical scores and ranks, reinforcement, as a dict.
    #[getter]
    fn explain<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_dict(py, &self.hit.explain)
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<Hit>().is_ok_and(|o| {
            let o = &o.get().hit;
            (o.item.id, o.score, o.rank, &o.item)
                == (
                    self.hit.item.id,
                    self.hit.score,
                    self.hit.rank,
                    &self.hit.item,
                )
        })
    }
    fn __repr__(&self) -> String {
        format!(
            "Hit(id={}, score={:.4}, rank={}, kind={:?}, tier={:?}, text={:?})",
            self.hit.item.id,
            self.hit.score,
            self.hit.rank,
            self.hit.item.kind.name(),
            self.hit.item.tier.name(),
            self.hit.item.text
        )
    }
}

/// One memory in a context, at the precision it is served at.
#[pyclass(module = "memloop", frozen, get_all)]
pub(crate) struct Block {
    /// "Key Reference" or "General Reference".
    label: &'static str,
    /// The memory's id.
    id: u64,
    /// "original", "concise" or "brief".
    precision: &'static str,
    /// Its text at that precision.
    text: String,
    /// Its relevance score.
    score: f32,
}

#[pymethods]
impl Block {
    fn __repr__(&self) -> String {
        format!(
            "Block(label={:?}, id={}, precision={:?}, score={:.4}, text={:?})",
            self.label, self.id, self.precision, self.score, self.text
        )
    }
}

/// An assembled context: `tokens` never exceeds the budget asked for.
#[pyclass(module = "memloop", frozen, get_all)]
pub(crate) struct Context {
    /// The rendered context, ready to paste into a prompt.
    text: String,
    /// Tokens in `text`.
    tokens: usize,
    /// Its memories, most relevant first.
    blocks: Vec<Py<Block>>,
    /// Ids of memories that did not fit even at brief precision.
    dropped: Vec<u64>,
}

impl Context {
    pub(crate) fn new(py: Python<'_>, c: memloop::Context) -> PyResult<Context> {
        let blocks = c
            .blocks
            .into_iter()
            .map(|b| {
                let precision = match b.precision {
                    Precision::Original => "original",
                    Precision::Concise => "concise",
                    Precision::Brief => "brief",
                };
                Py::new(
                    py,
                    Block {
                        label: b.label,
                        id: b.id.get(),
                        precision,
                        text: b.text,
                        score: b.score,
                    },
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        Ok(Context {
            text: c.text,
            tokens: c.tokens,
            blocks,
            dropped: c.dropped.into_iter().map(MemoryId::get).collect(),
        })
    }
}

#[pymethods]
impl Context {
    fn __repr__(&self) -> String {
        format!(
            "Context(tokens={}, blocks={}, dropped={})",
            self.tokens,
            self.blocks.len(),
            self.dropped.len()
        )
    }
}

/// What `Memory.remember_explained` did: the id holding the text, `action` (`"new"`,
/// `"merged"` or `"superseded"`) and the superseded version's id, if any. Unpacks as
/// `(id, action, previous)`.
#[pyclass(module = "memloop", frozen, get_all, eq)]
#[derive(PartialEq)]
pub(crate) struct Remembered {
    /// The memory that now holds the text.
    id: u64,
    /// "new", "merged" or "superseded".
    action: &'static str,
    /// The version it replaced (superseded only).
    previous: Option<u64>,
}

impl From<memloop::Remembered> for Remembered {
    fn from(r: memloop::Remembered) -> Remembered {
        let (action, previous) = match r.action {
            RememberAction::New => ("new", None),
            RememberAction::Merged => ("merged", None),
            RememberAction::Superseded { previous } => ("superseded", Some(previous.get())),
        };
        Remembered {
            id: r.id.get(),
            action,
            previous,
        }
    }
}

#[pymethods]
impl Remembered {
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let t = PyTuple::new(
            py,
            [
                self.id.into_pyobject(py)?.into_any(),
                self.action.into_pyobject(py)?.into_any(),
                self.previous.into_pyobject(py)?.into_any(),
            ],
        )?;
        t.try_iter().map(|i| i.into_any())
    }
    fn __repr__(&self) -> String {
        let previous = self.previous.map_or("None".into(), |p| p.to_string());
        format!(
            "Remembered(id={}, action={:?}, previous={previous})",
            self.id, self.action
        )
    }
}

/// A serialisable engine value (report, explanation, item) as plain Python dicts and lists.
pub(crate) fn to_dict<'py, T: serde::Serialize>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| invalid(format!("cannot convert a result: {e}")))
}
