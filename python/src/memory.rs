//! `memloop.Memory`: a store opened from Python. Every call that embeds, searches, writes,
//! sweeps or saves runs with the GIL released, so threads really run in parallel; a panic in
//! the engine is a `PanicError`, never a dead interpreter.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

use memloop::{items::Outcome, plug::InCall, requests::SubjectEvent, MemoryId, Task};
use parking_lot::RwLock;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::args::{self, arg, flag, int, optional_text, optional_texts, text};
use crate::errors::{self, invalid, panicked};
use crate::hooks::Callables;
use crate::items::{memory_of, memory_of_fields, optional_millis, scope_of};
use crate::options::OpenArgs;
use crate::time::millis;
use crate::values::{to_dict, Context, Hit, Item, Remembered};

/// An open store borrowed for one call: while it lives this thread is inside a call on it
/// (`memloop::plug::InCall`), so `close` from a callback of that call is refused.
struct InUse {
    memory: Arc<memloop::Memory>,
    _call: InCall,
}

/// A memory store in directory `path` (created if needed).
///
/// `model` is a model directory (default: the cached all-MiniLM-L6-v2, fetched by
/// `memloop model fetch`). `device` is where the model runs: "cpu" (default), or "cuda" /
/// "cuda:N" in a build with the `cuda` feature; `precision` the model's matrix products:
/// "f32" or "int8" (faster on the CPU, vectors slightly different, so a store is written in
/// one or the other; default: the store's own; for a new store int8 where the CPU has AVX2
/// and the model runs on memloop's encoder, else f32). `clock="manual"` makes time move only through
/// `set_time` (`start` is its first value, Unix seconds or an aware datetime; without it the
/// clock begins at the Unix epoch, so the first `set_time` puts it anywhere later).
/// `sync=False` groups writes until `close` or a checkpoint. `capacity` bounds how many
/// memories are kept, `capacity_per_user` how many of each user's; `dedup_threshold` (None: exact duplicates only) is the cosine at which
/// near-duplicates merge; `max_text_bytes` bounds one memory's text (default 512 KiB).
/// `recall_ef` is the index's search beam; `index_vectors` ("f32", "bf16" or "int8") how the
/// index stores the vectors searches read (compressed codes re-scored on the f32 vectors:
/// faster, same recall), recorded in the store (None keeps its choice: int8 for a new store,
/// f32 for a store made before that default that never chose).
/// `reranker_model` is a cross-encoder directory (a one-label BERT sequence classifier such as
/// ms-marco-MiniLM-L-6-v2): the "rerank" and "iterative" strategies then order their best
/// candidates by it, on memloop's own encoder.
/// `reranker`, `refiner`, `summarizer` and `token_counter` replace the built-in parts, and
/// `extractor(session, turns)` draws facts from conversation turns; they may be called from
/// any thread that uses this store. `hashing_embedder` (a dimension) replaces
/// the model with a deterministic one that knows no meaning, for tests of the plumbing.
///
/// Use it as a context manager, or call `close`. One `Memory` may be used from many threads.
#[pyclass(module = "memloop", frozen)]
pub(crate) struct Memory {
    store: RwLock<Option<Arc<memloop::Memory>>>,
    /// The directory, as given.
    #[pyo3(get)]
    path: String,
    token: usize,
}

/// `dedup_threshold`: absent (the engine's default, 0.95), `None` (off) or a cosine.
pub(crate) struct Threshold<'py>(Option<Bound<'py, PyAny>>);

impl<'a, 'py> FromPyObject<'a, 'py> for Threshold<'py> {
    type Error = PyErr;
    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Threshold(Some(obj.to_owned())))
    }
}

impl Memory {
    fn handle(&self) -> PyResult<InUse> {
        let memory = self
            .store
            .read()
            .clone()
            .ok_or_else(|| invalid("the memory is closed"))?;
        Ok(InUse {
            memory,
            _call: InCall::enter(self.token),
        })
    }

    /// Runs `op` on the store with the GIL released; engine errors, callback failures and
    /// panics become Python exceptions.
    fn run<T, F>(&self, py: Python<'_>, op: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&memloop::Memory) -> memloop::Result<T> + Send,
    {
        let store = self.handle()?;
        errors::begin();
        let memory = &store.memory;
        match py.detach(|| catch_unwind(AssertUnwindSafe(|| op(memory)))) {
            Ok(result) => errors::finish(py, result),
            Err(panic) => Err(panicked(&*panic)),
        }
    }
}

/// A recall's fields as Python gives them, each checked for its Python type only: the
/// defaults and the checks of their values are `memloop::requests::RecallRequest`'s.
struct RecallFields<'a, 'py> {
    query: &'a Bound<'py, PyAny>,
    k: Option<&'a Bound<'py, PyAny>>,
    namespace: Option<&'a Bound<'py, PyAny>>,
    kinds: Option<&'a Bound<'py, PyAny>>,
    tags: Option<&'a Bound<'py, PyAny>>,
    strategy: Option<&'a Bound<'py, PyAny>>,
    scope: [Option<&'a Bound<'py, PyAny>>; 3],
    as_of: Option<&'a Bound<'py, PyAny>>,
    history: Option<&'a Bound<'py, PyAny>>,
}

impl RecallFields<'_, '_> {
    fn request(self) -> PyResult<memloop::requests::RecallRequest> {
        Ok(memloop::requests::RecallRequest {
            query: text(self.query, "query")?,
            k: args::optional_int::<usize>(self.k, "k", &k_range())?,
            strategy: optional_text(self.strategy, "strategy")?,
            explain: false,
            selection: selection(
                [self.namespace, self.kinds, self.tags],
                self.history,
                self.as_of,
            )?,
            scope: scope(self.scope)?,
        })
    }
}

/// The filter fields (namespace, kinds, tags; history; as-of) as Python gives them.
fn selection(
    [namespace, kinds, tags]: [Option<&Bound<'_, PyAny>>; 3],
    history: Option<&Bound<'_, PyAny>>,
    as_of: Option<&Bound<'_, PyAny>>,
) -> PyResult<memloop::requests::Selection> {
    Ok(memloop::requests::Selection {
        namespace: optional_text(namespace, "namespace")?,
        kinds: optional_texts(kinds, "kinds")?,
        tags: optional_texts(tags, "tags")?,
        history: args::optional_flag(history)?,
        as_of: optional_millis(as_of, "as_of")?.map(memloop::requests::When::Millis),
    })
}

/// The scope (user, agent, session) as Python gives it.
fn scope([user, agent, session]: [Option<&Bound<'_, PyAny>>; 3]) -> PyResult<memloop::Scope> {
    Ok(memloop::Scope {
        user: optional_text(user, "user")?,
        agent: optional_text(agent, "agent")?,
        session: optional_text(session, "session")?,
    })
}

#[pymethods]
impl Memory {
    #[new]
    #[pyo3(signature = (path, model=None, clock=None, sync=None, *, start=None, capacity=None,
        capacity_per_user=None,
        dedup_threshold=Threshold(None), hashing_embedder=None, reranker=None, refiner=None,
        summarizer=None, token_counter=None, extractor=None, device=None, max_text_bytes=None,
        recall_ef=None, index_vectors=None, embedder=None, precision=None, key_file=None,
        passphrase=None, reranker_model=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        model: Option<&Bound<'_, PyAny>>,
        clock: Option<&Bound<'_, PyAny>>,
        sync: Option<&Bound<'_, PyAny>>,
        start: Option<&Bound<'_, PyAny>>,
        capacity: Option<&Bound<'_, PyAny>>,
        capacity_per_user: Option<&Bound<'_, PyAny>>,
        dedup_threshold: Threshold<'_>,
        hashing_embedder: Option<&Bound<'_, PyAny>>,
        reranker: Option<Py<PyAny>>,
        refiner: Option<Py<PyAny>>,
        summarizer: Option<Py<PyAny>>,
        token_counter: Option<Py<PyAny>>,
        extractor: Option<Py<PyAny>>,
        device: Option<&Bound<'_, PyAny>>,
        max_text_bytes: Option<&Bound<'_, PyAny>>,
        recall_ef: Option<&Bound<'_, PyAny>>,
        index_vectors: Option<&Bound<'_, PyAny>>,
        embedder: Option<Py<PyAny>>,
        precision: Option<&Bound<'_, PyAny>>,
        key_file: Option<&Bound<'_, PyAny>>,
        passphrase: Option<&Bound<'_, PyAny>>,
        reranker_model: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Memory> {
        let dir: PathBuf = arg(path, "path")?;
        let open = OpenArgs {
            model,
            clock,
            sync,
            start,
            capacity,
            capacity_per_user,
            dedup_threshold: dedup_threshold.0.as_ref(),
            hashing_embedder,
            device,
            precision,
            reranker_model,
            max_text_bytes,
            recall_ef,
            index_vectors,
            key_file,
            passphrase,
        };
        let mut options = open.options()?;
        let none = |f: Option<Py<PyAny>>| f.filter(|f| !f.is_none(py));
        Callables {
            reranker: none(reranker),
            refiner: none(refiner),
            summarizer: none(summarizer),
            token_counter: none(token_counter),
            extractor: none(extractor),
        }
        .install(py, &mut options.hooks)?;
        if let Some(embedder) = none(embedder) {
            if options.embedder.is_some() || model.is_some_and(|m| !m.is_none()) {
                return Err(invalid("embedder excludes model and hashing_embedder"));
            }
            options.embedder = Some(Arc::new(crate::embedder::PyEmbedder::new(py, embedder)?));
        }
        let opened =
            py.detach(|| catch_unwind(AssertUnwindSafe(|| memloop::Memory::open(&dir, options))));
        let memory = match opened {
            Ok(m) => m.map_err(errors::to_python)?,
            Err(panic) => return Err(panicked(&*panic)),
        };
        Ok(Memory {
            store: RwLock::new(Some(Arc::new(memory))),
            path: dir.to_string_lossy().into_owned(),
            token: InCall::new_token(),
        })
    }

    /// Remembers `text`; returns the id that holds it: a new id, an existing one when a memory
    /// already says the same (exactly, or up to case, spacing and punctuation), or a fact's new
    /// version when a near-duplicate fact said something else (`remember_explained` says which).
    /// `fields` are an item's keys (`kind`, `namespace`, `tags`, `importance`, `concise`,
    /// `brief`, `subject`, `source`, `pinned`, `user`, `agent`, `session`, `valid_from`,
    /// `valid_until`; for a triple `head`, `relation` and `tail` together), read as
    /// `remember_batch` reads a dict.
    #[pyo3(signature = (text, **fields))]
    fn remember(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<u64> {
        let item = memory_of_fields(text, fields)?;
        self.run(py, move |m| m.remember(item)).map(MemoryId::get)
    }

    /// As `remember` (the same arguments), saying what was done: `action` is "new", "merged"
    /// (into a memory that says the same) or "superseded" (`previous`, a near-duplicate fact or
    /// triple that said something else, is kept as history of the new `id`).
    #[pyo3(signature = (text, **fields))]
    fn remember_explained(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        fields: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Remembered> {
        let item = memory_of_fields(text, fields)?;
        self.run(py, move |m| m.remember_explained(item))
            .map(Remembered::from)
    }

    /// Remembers many texts in one transaction, all or none; returns their ids in order.
    /// Each item is a str or a dict of `remember`'s keyword arguments (`{"text": ..., "kind":
    /// "fact", "tags": [...]}`).
    fn remember_batch(&self, py: Python<'_>, items: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
        let mut batch = Vec::new();
        for entry in items
            .try_iter()
            .map_err(|_| invalid("items must be an iterable of str or dict"))?
        {
            batch.push(memory_of(&entry?, &[])?.0);
        }
        let ids = self.run(py, move |m| m.remember_batch(batch))?;
        Ok(ids.into_iter().map(MemoryId::get).collect())
    }

    /// The memory with this id, or None. Does not count as a recall.
    fn get(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<Option<Item>> {
        let id: u64 = int(id, "id", "0..2^64")?;
        Ok(self
            .run(py, move |m| m.get(MemoryId::new(id)))?
            .map(|item| Item { item }))
    }

    /// The `k` memories closest to `query`, best first (`strategy`: single, lexical, rerank,
    /// iterative), optionally only of a namespace, of some kinds, with all of some tags, of a
    /// scope, as of a time, or with superseded versions (`history`): the fields of
    /// `memloop::requests::RecallRequest`, its defaults and checks. Hits are reinforced: they decay more
    /// slowly.
    #[pyo3(signature = (query, k=None, namespace=None, kinds=None, tags=None, strategy=None,
        user=None, agent=None, session=None, as_of=None, history=None))]
    #[allow(clippy::too_many_arguments)]
    fn recall(
        &self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        k: Option<&Bound<'_, PyAny>>,
        namespace: Option<&Bound<'_, PyAny>>,
        kinds: Option<&Bound<'_, PyAny>>,
        tags: Option<&Bound<'_, PyAny>>,
        strategy: Option<&Bound<'_, PyAny>>,
        user: Option<&Bound<'_, PyAny>>,
        agent: Option<&Bound<'_, PyAny>>,
        session: Option<&Bound<'_, PyAny>>,
        as_of: Option<&Bound<'_, PyAny>>,
        history: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Hit>> {
        let request = RecallFields {
            query,
            k,
            namespace,
            kinds,
            tags,
            strategy,
            scope: [user, agent, session],
            as_of,
            history,
        }
        .request()?;
        let hits = self.run(py, move |m| {
            let (query, strategy) = request.into_query()?;
            m.retrieve(&query, strategy)
        })?;
        Ok(hits.into_iter().map(|hit| Hit { hit }).collect())
    }

    /// The best memories for `query` assembled into at most `budget` tokens (default 500),
    /// each at the precision (original, concise, brief) that fits: a recall's fields plus the
    /// budget, the `mode` (memories or documents) and the `key_share`, as
    /// `memloop::requests::ContextParams` takes them.
    #[pyo3(signature = (query, budget=None, k=None, strategy=None, user=None, agent=None,
        session=None, as_of=None, *, namespace=None, kinds=None, tags=None, history=None,
        mode=None, key_share=None))]
    #[allow(clippy::too_many_arguments)]
    fn context(
        &self,
        py: Python<'_>,
        query: &Bound<'_, PyAny>,
        budget: Option<&Bound<'_, PyAny>>,
        k: Option<&Bound<'_, PyAny>>,
        strategy: Option<&Bound<'_, PyAny>>,
        user: Option<&Bound<'_, PyAny>>,
        agent: Option<&Bound<'_, PyAny>>,
        session: Option<&Bound<'_, PyAny>>,
        as_of: Option<&Bound<'_, PyAny>>,
        namespace: Option<&Bound<'_, PyAny>>,
        kinds: Option<&Bound<'_, PyAny>>,
        tags: Option<&Bound<'_, PyAny>>,
        history: Option<&Bound<'_, PyAny>>,
        mode: Option<&Bound<'_, PyAny>>,
        key_share: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Context> {
        let mode = optional_text(mode, "mode")?
            .map(|m| serde_json::from_value(serde_json::Value::String(m)))
            .transpose()
            .map_err(|e| invalid(format!("mode: {e}")))?;
        let params = memloop::requests::ContextParams {
            budget: args::optional_int::<usize>(budget, "budget", "0..2^64")?,
            mode,
            key_share: key_share
                .filter(|v| !v.is_none())
                .map(|v| args::number(v, "key_share").map(|x| x as f32))
                .transpose()?,
            query: text(query, "query")?,
            k: args::optional_int::<usize>(k, "k", &k_range())?,
            strategy: optional_text(strategy, "strategy")?,
            selection: selection([namespace, kinds, tags], history, as_of)?,
            scope: scope([user, agent, session])?,
        };
        let c = self.run(py, move |m| m.context(&params.into_request()?))?;
        Context::new(py, c)
    }

    /// How useful memory `id` was, 1 (misleading) to 5 (essential).
    fn feedback(
        &self,
        py: Python<'_>,
        id: &Bound<'_, PyAny>,
        level: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let id: u64 = int(id, "id", "0..2^64")?;
        let level: i64 = int(level, "level", "1..=5")?;
        let level = u8::try_from(level)
            .ok()
            .filter(|l| (1..=5).contains(l))
            .ok_or_else(|| invalid(format!("level {level} is outside 1..=5")))?;
        self.run(py, move |m| m.feedback(MemoryId::new(id), level))
            .map(drop)
    }

    /// Records a task the agent carried out; returns the task memory's id. A failed task's
    /// reflection is remembered too.
    #[pyo3(signature = (request, steps, success, reflection=None))]
    fn record_task(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
        steps: &Bound<'_, PyAny>,
        success: &Bound<'_, PyAny>,
        reflection: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let outcome = if flag(success)? {
            Outcome::Success
        } else {
            Outcome::Failure
        };
        let mut task = Task::new(text(request, "request")?, outcome);
        task.steps = args::texts(steps, "steps")?;
        task.reflection = optional_text(reflection, "reflection")?;
        Ok(self.run(py, move |m| m.record_task(&task))?.task.get())
    }

    /// Records an event (created, modified, executed, deleted; or create, modify, execute,
    /// delete) about a subject such as a file; all of a subject's events merge into one
    /// memory, whose id is returned.
    #[pyo3(signature = (subject, event, content=None))]
    fn observe(
        &self,
        py: Python<'_>,
        subject: &Bound<'_, PyAny>,
        event: &Bound<'_, PyAny>,
        content: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let subject = text(subject, "subject")?;
        let event =
            SubjectEvent::named(&text(event, "event")?).map_err(|e| errors::to_python(e.into()))?;
        let content = optional_text(content, "content")?;
        self.run(py, move |m| m.observe(&subject, event, content.as_deref()))
            .map(MemoryId::get)
    }

    /// Deletes memory `id` now, durably (NotFoundError if there is none).
    fn forget(&self, py: Python<'_>, id: &Bound<'_, PyAny>) -> PyResult<()> {
        let id: u64 = int(id, "id", "0..2^64")?;
        self.run(py, move |m| m.forget(MemoryId::new(id)))
    }

    /// Erases every memory of a user, agent or session (each one given must match:
    /// `forget_scope(user="ana")` erases all of Ana's agents and sessions) from every file of
    /// the store: the database is rewritten and the index saved without them. Returns what
    /// went: `memories`, `log_events`, `database_bytes` (before, after).
    #[pyo3(signature = (*, user=None, agent=None, session=None))]
    fn forget_scope<'py>(
        &self,
        py: Python<'py>,
        user: Option<&Bound<'py, PyAny>>,
        agent: Option<&Bound<'py, PyAny>>,
        session: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let scope = scope_of([user, agent, session])?;
        let erased = self.run(py, move |m| m.scoped(&scope).erase())?;
        to_dict(py, &erased)
    }

    /// Remembers turns of conversation `session` (each a dict `{"speaker": str, "text": str,
    /// "time": Unix seconds or an aware datetime}`) for a user and agent: each turn a memory
    /// of kind `"turn"` ("speaker: text", valid from its time, numbered after the session's
    /// earlier turns), the session's summary rewritten, and the extractor (if given to
    /// `Memory(...)`) asked for facts sourced to their turn. Returns `session`, `turns` (ids in
    /// order), `first_turn`, `summary` (its id) and `extracted` (each `{"id", "action"}`).
    #[pyo3(signature = (session, turns, *, user=None, agent=None))]
    fn remember_conversation<'py>(
        &self,
        py: Python<'py>,
        session: &Bound<'py, PyAny>,
        turns: &Bound<'py, PyAny>,
        user: Option<&Bound<'py, PyAny>>,
        agent: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let session = text(session, "session")?;
        let turns = crate::conversation::turns_of(turns)?;
        let scope = scope_of([user, agent, None])?;
        let report = self.run(py, move |m| {
            m.remember_conversation(&session, &turns, &scope)
        })?;
        to_dict(py, &report)
    }

    /// The memories passing a filter (a namespace, kinds, all of some tags, a scope; with
    /// `history`, superseded versions too), by ascending id: `limit` of them (default 1000,
    /// at most 100000) after skipping `offset`. No query, no ranking, nothing reinforced: the
    /// fields of `memloop::requests::ListRequest`, its defaults and checks.
    #[pyo3(signature = (*, namespace=None, kinds=None, tags=None, user=None, agent=None,
        session=None, history=None, limit=None, offset=None))]
    #[allow(clippy::too_many_arguments)]
    fn list(
        &self,
        py: Python<'_>,
        namespace: Option<&Bound<'_, PyAny>>,
        kinds: Option<&Bound<'_, PyAny>>,
        tags: Option<&Bound<'_, PyAny>>,
        user: Option<&Bound<'_, PyAny>>,
        agent: Option<&Bound<'_, PyAny>>,
        session: Option<&Bound<'_, PyAny>>,
        history: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
        offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Item>> {
        let request = memloop::requests::ListRequest {
            selection: selection([namespace, kinds, tags], history, None)?,
            scope: scope([user, agent, session])?,
            // The limit's bounds are the engine's (`ListRequest::check`).
            limit: args::optional_int::<usize>(limit, "limit", "0..2^64")?,
            offset: args::optional_int::<usize>(offset, "offset", "0..2^64")?.unwrap_or(0),
        };
        let items = self.run(py, move |m| m.advanced().list(&request))?;
        Ok(items.into_iter().map(|item| Item { item }).collect())
    }

    /// The store's embedder on `texts` as documents: one vector each, of the store's
    /// dimension (what `remember` stores; for maximal-marginal-relevance and other
    /// re-ranking done outside memloop).
    fn embed_documents(&self, py: Python<'_>, texts: Vec<String>) -> PyResult<Vec<Vec<f32>>> {
        self.run(py, move |m| {
            let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
            m.admin().embedder().embed_documents(&texts)
        })
    }

    /// The store's embedder on `text` as a query (what `recall` searches with).
    fn embed_query(&self, py: Python<'_>, text: String) -> PyResult<Vec<f32>> {
        self.run(py, move |m| m.admin().embedder().embed_query(&text))
    }

    /// The turns of conversation `session` remembered for exactly this user and agent, in the
    /// order they were spoken.
    #[pyo3(signature = (session, *, user=None, agent=None))]
    fn conversation(
        &self,
        py: Python<'_>,
        session: &Bound<'_, PyAny>,
        user: Option<&Bound<'_, PyAny>>,
        agent: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<Item>> {
        let session = text(session, "session")?;
        let scope = scope_of([user, agent, None])?;
        let turns = self.run(py, move |m| m.scoped(&scope).conversation(&session))?;
        Ok(turns.into_iter().map(|item| Item { item }).collect())
    }

    /// Applies forgetting at the clock's current time; returns what moved. Given a user, agent
    /// or session, only that scope's memories move (and `capacity_per_user` applies to its
    /// user alone; the store-wide capacity waits for a sweep of everything).
    #[pyo3(signature = (*, user=None, agent=None, session=None))]
    fn sweep<'py>(
        &self,
        py: Python<'py>,
        user: Option<&Bound<'py, PyAny>>,
        agent: Option<&Bound<'py, PyAny>>,
        session: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let scope = scope([user, agent, session])?;
        let report = self.run(py, move |m| m.scoped(&scope).sweep())?;
        to_dict(py, &report)
    }

    /// Sets a manual clock (Unix seconds or an aware datetime); time only moves forward.
    fn set_time(&self, t: &Bound<'_, PyAny>) -> PyResult<()> {
        let ms = millis(t, "time")?;
        self.handle()?.memory.clock().set(ms).map_err(invalid)
    }

    /// Runs any operation of the registry (remember, update, remember_conversation, recall,
    /// context, feedback, record_task, observe, get, list, forget, explain_decay, stats, sweep,
    /// export, import) with `request`, a mapping of the fields every door takes (MCP's tool of
    /// the same name, `memloop call`), and returns its answer as a dict: the same JSON every
    /// door returns. An unknown operation or field raises `InvalidArgumentError`.
    #[pyo3(signature = (operation, request=None))]
    fn call<'py>(
        &self,
        py: Python<'py>,
        operation: &Bound<'py, PyAny>,
        request: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let name = text(operation, "operation")?;
        let fields: serde_json::Value = match request.filter(|r| !r.is_none()) {
            Some(r) => pythonize::depythonize(r).map_err(|e| invalid(format!("request: {e}")))?,
            None => serde_json::Value::Null,
        };
        let request = memloop::Request::parse(&name, fields)
            .map_err(|e| crate::errors::to_python(memloop::Error::from(e)))?;
        let answer = self.run(py, move |m| m.call(request))?;
        // Through its JSON value, so a Python answer has the JSON's shapes (a span is a list,
        // not a tuple), as every door's.
        to_dict(py, &answer.to_json())
    }

    /// Counts (memories, per tier, indexed), sequence numbers and the model.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let stats = self.run(py, |m| m.stats())?;
        to_dict(py, &stats)
    }

    /// Verifies the whole store now: the index file's checksums and links (rebuilt from the
    /// database when they fail), every record, and that both agree. Returns `memories`,
    /// `indexed`, `index_rebuilt` (the reason, or None) and `problems` (empty when sound).
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let report = self.run(py, |m| m.admin().check())?;
        to_dict(py, &report)
    }

    /// Saves the index and makes every write durable.
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, |m| m.admin().checkpoint())
    }

    /// Writes memories (with their vectors) to a file, as `memloop::requests::ExportRequest` asks: every
    /// memory to memloop's portable file by default, or those of a namespace and scope, or a
    /// change stream (`format="arrow"` / `"parquet"`, only what changed after `since`).
    /// Returns `exported` and `path` (and a change stream's `upserts`, `deletes`, `since`,
    /// `through`, `next_since`, `bytes`).
    #[pyo3(signature = (path, *, format=None, namespace=None, user=None, agent=None,
        session=None, since=None, plaintext=false))]
    #[allow(clippy::too_many_arguments)]
    fn export<'py>(
        &self,
        py: Python<'py>,
        path: &Bound<'py, PyAny>,
        format: Option<&Bound<'py, PyAny>>,
        namespace: Option<&Bound<'py, PyAny>>,
        user: Option<&Bound<'py, PyAny>>,
        agent: Option<&Bound<'py, PyAny>>,
        session: Option<&Bound<'py, PyAny>>,
        since: Option<&Bound<'py, PyAny>>,
        plaintext: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = memloop::requests::ExportRequest {
            path: arg(path, "path")?,
            format: optional_text(format, "format")?,
            selection: selection([namespace, None, None], None, None)?,
            scope: scope([user, agent, session])?,
            since: args::optional_int::<u64>(since, "since", "0..2^64")?,
            plaintext,
        };
        let done = self.run(py, move |m| m.transfer().export_request(&request))?;
        to_dict(py, &done)
    }

    /// Imports an export file (`format`: mlx by default, or arrow / parquet), re-embedding it if
    /// it came from another model; returns what was added, merged and skipped.
    #[pyo3(signature = (path, *, format=None))]
    fn import_<'py>(
        &self,
        py: Python<'py>,
        path: &Bound<'py, PyAny>,
        format: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = memloop::requests::ImportRequest {
            path: arg(path, "path")?,
            format: optional_text(format, "format")?,
        };
        let report = self.run(py, move |m| m.transfer().import_request(&request))?;
        to_dict(py, &report)
    }

    /// Pushes this device's changes to `remote` (``s3://bucket/prefix`` or ``file:///path``)
    /// and pulls and merges the other devices' (an encrypted store; the remote holds sealed,
    /// signed segments only). `endpoint` names an S3-compatible server other than AWS's;
    /// credentials come from ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY``. Returns what
    /// was pushed and pulled. `compact` then compacts the remote (a snapshot of this store;
    /// the segments every device applied deleted).
    #[pyo3(signature = (remote, *, endpoint=None, timeout_secs=None, compact=false))]
    fn sync<'py>(
        &self,
        py: Python<'py>,
        remote: &Bound<'py, PyAny>,
        endpoint: Option<&Bound<'py, PyAny>>,
        timeout_secs: Option<&Bound<'py, PyAny>>,
        compact: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let request = memloop::requests::SyncRequest {
            remote: arg(remote, "remote")?,
            endpoint: optional_text(endpoint, "endpoint")?,
            timeout_secs: args::optional_int::<u64>(timeout_secs, "timeout_secs", "1..3600")?,
            compact,
        };
        let report = self.run(py, move |m| m.transfer().sync(&request))?;
        to_dict(py, &report)
    }

    /// Saves and closes the store; further calls raise InvalidArgumentError. Idempotent. Calls
    /// running on other threads finish first. From inside a callback of a call on this store,
    /// it raises InvalidArgumentError and the store stays open.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        if InCall::is_inside(self.token) {
            return Err(invalid(
                "close was called from inside a callback of a call on the same store; close it after that call returns",
            ));
        }
        let Some(memory) = self.store.write().take() else {
            return Ok(());
        };
        // Calls in flight on other threads finish first.
        let closed = py.detach(move || {
            catch_unwind(AssertUnwindSafe(|| memloop::Memory::close_shared(memory)))
        });
        match closed {
            Ok(result) => result.map_err(errors::to_python),
            Err(panic) => Err(panicked(&*panic)),
        }
    }

    /// True after `close`.
    #[getter]
    fn closed(&self) -> bool {
        self.store.read().is_none()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
        self.close(py)
    }

    fn __repr__(&self) -> String {
        let state = if self.closed() { "closed" } else { "open" };
        format!("memloop.Memory({:?}, {state})", self.path)
    }
}

/// The range of `k` named in an error: the engine's own limit.
fn k_range() -> String {
    format!("1..={}", memloop::retrieve::MAX_K)
}
