//! `Memory`: an open store. Every method returns a Promise whose work runs on libuv's thread
//! pool; a closed store, or one closing, answers every call with an `invalid_input` error.

use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, BigInt, Either, Env, Task};
use napi_derive::napi;
use parking_lot::RwLock;
use serde_json::Value;

use crate::call::{checked, checked_engine, invalid, via_serde, Call, Typed};
use crate::inputs::{
    conversation, id_of, new_memory, ExportOptions, OpenOptions, QueryOptions, RememberInput,
    ScopeOptions, TaskInput, TurnInput, UpdateInput,
};
use crate::outputs;

/// A call answered by a plain object.
type Answer = AsyncTask<Call<Value>>;

/// Opening a store, answered by a [`Memory`].
pub struct Opening {
    call: Call<memloop::Memory>,
    path: String,
}

impl Task for Opening {
    type Output = memloop::Memory;
    type JsValue = Memory;

    fn compute(&mut self) -> napi::Result<memloop::Memory> {
        self.call.run()
    }

    fn resolve(&mut self, _env: Env, m: memloop::Memory) -> napi::Result<Memory> {
        Ok(Memory {
            store: Arc::new(RwLock::new(Some(Arc::new(m)))),
            path: std::mem::take(&mut self.path),
        })
    }
}

/// A memory store, open on a directory. Open one with `await Memory.open(dir)`; close it with
/// `await mem.close()` (or `await using mem = await Memory.open(dir)`).
#[napi]
pub struct Memory {
    /// The open store; `None` once closed.
    store: Arc<RwLock<Option<Arc<memloop::Memory>>>>,
    path: String,
}

/// Runs `op` on the store off the JavaScript thread; its answer as a plain object.
fn answer<T, F>(store: Arc<memloop::Memory>, op: F) -> Answer
where
    T: serde::Serialize + Send + 'static,
    F: FnOnce(&memloop::Memory) -> memloop::Result<T> + Send + 'static,
{
    AsyncTask::new(Call::new(move || {
        op(&store).map(|out| serde_json::to_value(out).unwrap_or(Value::Null))
    }))
}

/// Runs `op` on the store off the JavaScript thread; its answer made the napi object `O` by
/// `to_js`.
fn answer_as<O, T, F>(
    store: Arc<memloop::Memory>,
    op: F,
    to_js: fn(T) -> napi::Result<O>,
) -> AsyncTask<Typed<T, O>>
where
    T: Send + 'static,
    F: FnOnce(&memloop::Memory) -> memloop::Result<T> + Send + 'static,
    Typed<T, O>: Task,
{
    AsyncTask::new(Typed::new(move || op(&store), to_js))
}

#[napi]
impl Memory {
    /// Opens (creating if needed) the store in directory `dir`; the model loads off the
    /// JavaScript thread. One process holds a store at a time: a second is refused with a
    /// `locked` error.
    #[napi(ts_return_type = "Promise<Memory>")]
    pub fn open(dir: String, options: Option<OpenOptions>) -> napi::Result<AsyncTask<Opening>> {
        let request = options.unwrap_or_default().request()?;
        let options = checked(memloop::Options::from_request(request))?;
        let path = dir.clone();
        Ok(AsyncTask::new(Opening {
            call: Call::new(move || memloop::Memory::open(&dir, options)),
            path,
        }))
    }

    /// The store's directory.
    #[napi(getter)]
    pub fn path(&self) -> String {
        self.path.clone()
    }

    /// Whether the store is closed.
    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.store.read().is_none()
    }

    fn open_store(&self) -> napi::Result<Arc<memloop::Memory>> {
        self.store
            .read()
            .clone()
            .ok_or_else(|| invalid("the store is closed"))
    }

    /// Saves and closes the store once the calls in flight finish; later calls are refused.
    /// Closing a closed store does nothing.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close(&self) -> AsyncTask<Call<()>> {
        let taken = self.store.write().take();
        AsyncTask::new(Call::new(move || match taken {
            Some(store) => memloop::Memory::close_shared(store),
            None => Ok(()),
        }))
    }

    /// Remembers one memory (a text, or a text with its fields); says what was done: `action`
    /// "new", "merged" (into a memory that says the same) or "superseded" (`previous`, a
    /// near-duplicate fact that said something else, kept as history of the new `id`).
    #[napi(ts_return_type = "Promise<Remembered>")]
    pub fn remember(
        &self,
        memory: Either<String, RememberInput>,
    ) -> napi::Result<AsyncTask<Typed<memloop::Remembered, outputs::Remembered>>> {
        let m = new_memory(memory)?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.remember_explained(m),
            via_serde,
        ))
    }

    /// Remembers many memories in one transaction, all or none; one answer per memory, in
    /// order.
    #[napi(ts_return_type = "Promise<Remembered[]>")]
    pub fn remember_batch(
        &self,
        memories: Vec<Either<String, RememberInput>>,
    ) -> napi::Result<AsyncTask<Typed<Vec<memloop::Remembered>, Vec<outputs::Remembered>>>> {
        let batch = memories
            .into_iter()
            .map(new_memory)
            .collect::<napi::Result<Vec<_>>>()?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.advanced().remember_batch_explained(batch),
            via_serde,
        ))
    }

    /// Remembers turns of a chat session (each with its speaker and time), recallable by
    /// meaning and in order; returns the turns' ids, the session summary's and what was drawn
    /// from them.
    #[napi(ts_return_type = "Promise<ConversationReport>")]
    pub fn remember_conversation(
        &self,
        session: String,
        turns: Vec<TurnInput>,
        scope: Option<ScopeOptions>,
    ) -> napi::Result<
        AsyncTask<Typed<memloop::answers::ConversationReport, outputs::ConversationReport>>,
    > {
        let (session, turns, scope) =
            checked_engine(conversation(session, turns, scope)?.into_parts())?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.remember_conversation(&session, &turns, &scope),
            via_serde,
        ))
    }

    /// The memories most related to `query`, best first.
    #[napi(ts_return_type = "Promise<Hit[]>")]
    pub fn recall(
        &self,
        query: String,
        options: Option<QueryOptions>,
    ) -> napi::Result<AsyncTask<Typed<Vec<memloop::Hit>, outputs::HitsAnswer>>> {
        let request = options.unwrap_or_default().recall(query)?;
        let to_js = if request.explain {
            outputs::hits_explained
        } else {
            outputs::hits
        };
        let (query, strategy) = checked_engine(request.into_query())?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.retrieve(&query, strategy),
            to_js,
        ))
    }

    /// [`Memory::recall`] on the JavaScript thread, for the lexical strategy only (BM25,
    /// no embedding: well under a millisecond on thousands of memories); any other strategy
    /// embeds the query and is refused here: use `recall`.
    #[napi(ts_return_type = "Hit[]")]
    pub fn recall_sync(
        &self,
        query: String,
        options: Option<QueryOptions>,
    ) -> napi::Result<outputs::HitsAnswer> {
        let request = options.unwrap_or_default().recall(query)?;
        let explain = request.explain;
        let (query, strategy) = checked_engine(request.into_query())?;
        if strategy != memloop::Strategy::Lexical {
            return Err(invalid("recallSync takes only the lexical strategy (the others embed the query: use recall)"));
        }
        let store = self.open_store()?;
        let hits = Call::new(move || store.retrieve(&query, strategy)).run()?;
        if explain {
            outputs::hits_explained(hits)
        } else {
            outputs::hits(hits)
        }
    }

    /// The memories relevant to `query` assembled into at most `budget` tokens, each at the
    /// precision (original, concise, brief) that fits.
    #[napi(ts_return_type = "Promise<Context>")]
    pub fn context(
        &self,
        query: String,
        options: Option<QueryOptions>,
    ) -> napi::Result<AsyncTask<Typed<memloop::Context, outputs::Context>>> {
        let params = options.unwrap_or_default().context(query)?;
        let request = checked_engine(params.into_request())?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.context(&request),
            via_serde,
        ))
    }

    /// Changes memory `id`: a new text makes a new version (the old one stays, superseded);
    /// returns the id of the version that now holds it.
    #[napi(ts_return_type = "Promise<number | bigint>")]
    pub fn update(&self, id: Either<f64, BigInt>, change: UpdateInput) -> napi::Result<Answer> {
        let id = id_of(&id, "id")?;
        let request = change.request(id)?;
        let (scope, update) = checked_engine(request.into_update())?;
        Ok(answer(self.open_store()?, move |s| {
            s.scoped(&scope).update(id, update)
        }))
    }

    /// Rates how much memory `id` helped: 1 harmful … 5 essential.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn feedback(
        &self,
        id: Either<f64, BigInt>,
        level: u32,
        scope: Option<ScopeOptions>,
    ) -> napi::Result<Answer> {
        let id = id_of(&id, "id")?;
        let level =
            u8::try_from(level).map_err(|_| invalid(format!("level {level} is not in 1..=5")))?;
        let scope = scope.unwrap_or_default().scope();
        Ok(answer(self.open_store()?, move |s| {
            s.scoped(&scope).feedback(id, level)
        }))
    }

    /// Records a finished task (and its reflection); returns their ids.
    #[napi(ts_return_type = "Promise<TaskIds>")]
    pub fn record_task(
        &self,
        task: TaskInput,
    ) -> napi::Result<AsyncTask<Typed<memloop::answers::TaskIds, outputs::TaskIds>>> {
        let task = task.task()?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.record_task(&task),
            via_serde,
        ))
    }

    /// Records an event about a subject (a file, a service): created, modified, executed or
    /// deleted; returns the id of the subject's one memory.
    #[napi(ts_return_type = "Promise<number | bigint>")]
    pub fn observe(
        &self,
        subject: String,
        event: String,
        content: Option<String>,
    ) -> napi::Result<Answer> {
        let event = checked(memloop::requests::SubjectEvent::named(&event))?;
        Ok(answer(self.open_store()?, move |s| {
            s.observe(&subject, event, content.as_deref())
        }))
    }

    /// Memory `id` with all its fields, or `null` when there is none (in `scope`).
    #[napi(ts_return_type = "Promise<Item | null>")]
    pub fn get(
        &self,
        id: Either<f64, BigInt>,
        scope: Option<ScopeOptions>,
    ) -> napi::Result<AsyncTask<Typed<Option<memloop::MemoryItem>, Option<outputs::Item>>>> {
        let id = id_of(&id, "id")?;
        let scope = scope.unwrap_or_default().scope();
        Ok(answer_as(
            self.open_store()?,
            move |s| s.scoped(&scope).get(id),
            outputs::maybe_item,
        ))
    }

    /// Deletes memory `id` for good (a `not_found` error when there is none in `scope`).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn forget(
        &self,
        id: Either<f64, BigInt>,
        scope: Option<ScopeOptions>,
    ) -> napi::Result<Answer> {
        let id = id_of(&id, "id")?;
        let scope = scope.unwrap_or_default().scope();
        Ok(answer(self.open_store()?, move |s| {
            s.scoped(&scope).forget(id)
        }))
    }

    /// Erases every memory of a user, agent or session (each one given must match) from
    /// every file of the store.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn erase_scope(&self, scope: ScopeOptions) -> napi::Result<Answer> {
        let scope = scope.scope();
        Ok(answer(self.open_store()?, move |s| {
            s.scoped(&scope).erase()
        }))
    }

    /// How well memory `id` is retained now, and when it will be demoted or forgotten.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn explain_decay(&self, id: Either<f64, BigInt>) -> napi::Result<Answer> {
        let id = id_of(&id, "id")?;
        Ok(answer(self.open_store()?, move |s| {
            s.admin().explain_decay(id)
        }))
    }

    /// Runs any operation of the registry (remember, update, rememberConversation's
    /// `remember_conversation`, recall, context, feedback, record_task, observe, get, list,
    /// forget, explain_decay, stats, sweep, export, import, sync) with `request`, its fields in
    /// camelCase as every method takes them, and resolves to its answer: the same JSON every
    /// door returns, with camelCase keys. An unknown operation or field rejects with
    /// `InvalidArgumentError`.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn call(
        &self,
        operation: String,
        #[napi(ts_arg_type = "Record<string, unknown>")] request: Option<Value>,
    ) -> napi::Result<Answer> {
        let fields = request.map_or(Value::Null, crate::js_value::from_js);
        let request = checked(memloop::Request::parse(&operation, fields))?;
        Ok(answer(self.open_store()?, move |s| s.call(request)))
    }

    /// The memories passing a filter, oldest id first, a page at a time: `namespace`,
    /// `kinds`, `tags`, `history`, `asOf`, `user`, `agent`, `session`, `limit` (default 1000,
    /// at most 100000), `offset`. No query, no ranking, nothing reinforced. Resolves to the
    /// memories as plain objects (the registry's `list` answer's `memories`).
    #[napi(
        ts_args_type = "filter?: Record<string, unknown>",
        ts_return_type = "Promise<Array<Record<string, unknown>>>"
    )]
    pub fn list(&self, filter: Option<Value>) -> napi::Result<Answer> {
        let fields = filter.map_or(Value::Null, crate::js_value::from_js);
        let request = checked(memloop::Request::parse("list", fields))?;
        Ok(answer(self.open_store()?, move |s| {
            s.call(request).map(|a| match a.to_json() {
                Value::Object(mut answer) => answer.remove("memories").unwrap_or(Value::Null),
                other => other,
            })
        }))
    }

    /// Counts: memories, per tier, indexed; sequence numbers; the model.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn stats(&self) -> napi::Result<Answer> {
        Ok(answer(self.open_store()?, |s| s.stats()))
    }

    /// Applies forgetting now, to every memory or to one scope's.
    #[napi(ts_return_type = "Promise<Record<string, unknown>>")]
    pub fn sweep(&self, scope: Option<ScopeOptions>) -> napi::Result<Answer> {
        let scope = scope.unwrap_or_default().scope();
        Ok(answer(self.open_store()?, move |s| {
            s.scoped(&scope).sweep()
        }))
    }

    /// Writes memories (with their vectors) to `path`: every memory to memloop's portable file
    /// by default, or a namespace's or scope's, or a change stream (arrow, parquet).
    #[napi(ts_return_type = "Promise<Exported>")]
    pub fn export(
        &self,
        path: String,
        options: Option<ExportOptions>,
    ) -> napi::Result<AsyncTask<Typed<memloop::answers::Exported, outputs::Exported>>> {
        let request = options.unwrap_or_default().request(path)?;
        Ok(answer_as(
            self.open_store()?,
            move |s| s.transfer().export_request(&request),
            via_serde,
        ))
    }

    /// Merges an export file (mlx by default, or arrow / parquet), re-embedding it if it came
    /// from another model; says what was added, merged and left as it was.
    #[napi(ts_return_type = "Promise<ImportReport>")]
    pub fn import(
        &self,
        path: String,
        format: Option<String>,
    ) -> napi::Result<AsyncTask<Typed<memloop::answers::ImportReport, outputs::ImportReport>>> {
        let request = crate::inputs::import(path, format);
        Ok(answer_as(
            self.open_store()?,
            move |s| s.transfer().import_request(&request),
            via_serde,
        ))
    }

    /// Pushes this device's changes to `remote` (`s3://bucket/prefix` or `file:///path`) and
    /// pulls and merges the other devices' (an encrypted store; the remote holds sealed,
    /// signed segments only). `endpoint` names an S3-compatible server other than AWS's;
    /// credentials come from `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`.
    #[napi(ts_return_type = "Promise<Synced>")]
    pub fn sync(
        &self,
        remote: String,
        options: Option<crate::inputs::SyncOptions>,
    ) -> napi::Result<AsyncTask<Typed<memloop::answers::Synced, outputs::Synced>>> {
        let request = crate::inputs::sync(remote, options.unwrap_or_default());
        Ok(answer_as(
            self.open_store()?,
            move |s| s.transfer().sync(&request),
            via_serde,
        ))
    }

    /// Sets a manual clock (time only moves forward); an error for the system clock.
    #[napi]
    pub fn set_time(&self, time: Either<f64, String>) -> napi::Result<()> {
        let when = match time {
            Either::A(ms) => memloop::requests::When::Millis(ms as i64),
            Either::B(text) => memloop::requests::When::Text(text),
        };
        let ms = checked(when.millis("time"))?;
        self.open_store()?.clock().set(ms).map_err(invalid)
    }
}
