//! `Memory`'s public face on one page: the calls most programs make, each delegating to the
//! feature folder that carries it out, and four views for the rest, so the handle itself stays
//! small (tantivy's `Index` and redb's `Database` show their faces the same way):
//!
//! - [`Memory::scoped`]: a caller confined to a user, agent or session, every call enforced
//!   in the engine (a memory outside the scope is not found);
//! - [`Memory::admin`]: the store's upkeep: checkpoints, checks, sweeps, keys, receipts, what
//!   opening found;
//! - [`Memory::advanced`]: the lower-level calls tools, importers and benchmarks make (a raw
//!   filter scan, recall by vector, contexts of given hits, documents);
//! - [`Memory::transfer`]: exports and imports.
//!
//! Every operation of the registry is also one call: [`Memory::call`].

#![allow(clippy::too_many_arguments)]

use std::path::Path;
use std::sync::Arc;

use crate::agent::{Task, TaskIds};
use crate::clock::{Clock, Timestamp};
use crate::context::{Context, ContextMode, ContextRequest, DocumentIds, DocumentRef, Structures};
use crate::conversation::{ConversationReport, Turn};
use crate::embedder::TextEmbedder;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::forget::{DecayReport, ForgetEvent, ScopeErasure, SweepReport};
use crate::item::{MemoryId, MemoryItem, NewMemory, Scope};
use crate::memory::{CheckReport, DiskUsage, Memory, OpenReport, Stats};
use crate::options::Options;
use crate::remember::dedup::Remembered;
use crate::retrieve::{FeedbackState, Hit, Query, Strategy};
use crate::transfer::{ChangeExport, ColumnarFormat, ImportReport};
use crate::vocabulary::{
    ExportRequest, Exported, ImportRequest, ListRequest, SubjectEvent, SyncRequest, Synced, Update,
};

use super::registry::{self, Answer, Request, Told};

impl Memory {
    /// Opens the store in `dir`, creating it if needed.
    ///
    /// # Errors
    /// [`crate::Error::Locked`] at once if another process has it open; [`crate::Error::ModelMismatch`] if
    /// it was built with another model; [`crate::Error::UnsupportedVersion`] for a newer format;
    /// [`crate::Error::Embed`] if the model cannot be loaded; [`crate::Error::Store`] / [`crate::Error::Io`].
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Memory> {
        Memory::do_open(dir, options)
    }

    /// True if `dir` holds a store (so opening it reads it rather than creating one).
    pub fn exists(dir: impl AsRef<Path>) -> bool {
        Memory::do_exists(dir)
    }

    /// Stops the background checkpointer and writes a final checkpoint.
    ///
    /// # Errors
    /// As [`Admin::checkpoint`]; the store is closed either way and nothing acknowledged is
    /// lost (the next open replays what the checkpoint missed).
    pub fn close(self) -> crate::error::Result<()> {
        self.do_close()
    }

    /// Closes a store shared through an [`Arc`] once every other holder has let it go: calls
    /// in flight on other threads finish first (what a binding's close does).
    ///
    /// # Errors
    /// As [`Memory::close`].
    pub fn close_shared(memory: Arc<Memory>) -> crate::error::Result<()> {
        Memory::do_close_shared(memory)
    }

    /// The store directory.
    pub fn dir(&self) -> &Path {
        self.do_dir()
    }

    /// The clock all times come from.
    pub fn clock(&self) -> &Clock {
        self.do_clock()
    }

    /// Counts.
    ///
    /// # Errors
    /// [`crate::Error::Store`].
    pub fn stats(&self) -> crate::error::Result<Stats> {
        self.do_stats()
    }

    /// Remembers one memory; returns the id that now holds its text: a new memory's, the
    /// existing memory's it merged into, or the new version's when it superseded a fact (see
    /// [`Memory::remember_explained`] for which, and [`crate::dedup`] for the rule: nothing is
    /// merged that says something else).
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for bad input; [`crate::Error::Embed`] / [`crate::Error::Store`] /
    /// [`crate::Error::Index`]. On error nothing was written.
    pub fn remember(&self, memory: NewMemory) -> Result<MemoryId> {
        self.do_remember(memory)
    }

    /// Remembers one memory and says what was done: stored as new, merged into an existing
    /// memory that says the same (exactly, or up to case, spacing and punctuation; its count
    /// grows, its metadata takes the newest values, the new source joins its provenance), or
    /// stored as a new version superseding a near-duplicate fact or triple that said
    /// something else.
    ///
    /// # Errors
    /// As [`Memory::remember`].
    pub fn remember_explained(&self, memory: NewMemory) -> Result<Remembered> {
        self.do_remember_explained(memory)
    }

    /// Remembers many memories: embedded together (the embedder batches and parallelises),
    /// written in one transaction (one fsync in synced mode). Returns one id per input, in
    /// order; duplicates inside the batch merge like duplicates of stored memories.
    ///
    /// # Errors
    /// As [`Memory::remember`]; any invalid input rejects the whole batch.
    pub fn remember_batch(&self, memories: Vec<NewMemory>) -> Result<Vec<MemoryId>> {
        self.do_remember_batch(memories)
    }

    /// Remembers turns of conversation `session` for `scope` (its user and agent; its session,
    /// if set, must be `session`). Each turn becomes a [`crate::Kind::Turn`] memory ("speaker: text",
    /// valid from the turn's time, numbered after the session's earlier turns); the session's
    /// summary memory is rewritten over all its turns by the summarizer hook; the
    /// [`crate::plug::Extractor`] hook, if set, turns the new turns into facts sourced to their turn.
    ///
    /// The hooks run before anything is written, so their errors store nothing. The turns are
    /// written in one transaction, the extracted facts in a second (with the usual
    /// de-duplication: a new value of a fact supersedes the old), the summary in a third.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty session, no turns, an empty speaker or
    /// text, a scope of another session, or an extractor output naming no given turn;
    /// the hooks' errors; [`crate::Error::Embed`], [`crate::Error::Store`],
    /// [`crate::Error::Index`].
    pub fn remember_conversation(
        &self,
        session: &str,
        turns: &[Turn],
        scope: &Scope,
    ) -> Result<ConversationReport> {
        self.do_remember_conversation(session, turns, scope)
    }

    /// The memory `id`, if it exists.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        self.do_get(id)
    }

    /// Changes memory `id`. A new text makes a new version: the old one stays, superseded
    /// (out of default ranking, found with [`crate::MemoryFilter::include_superseded`]), and
    /// the returned id is the new version's. Otherwise the memory is changed in place and its
    /// id returned.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`]; [`crate::Error::InvalidInput`] for bad values or when `id` was already
    /// superseded (update the current version).
    pub fn update(&self, id: MemoryId, update: Update) -> Result<MemoryId> {
        self.do_update(id, update)
    }

    /// Deletes memory `id` from the store and the index, durably.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] if there is no such memory.
    pub fn forget(&self, id: MemoryId) -> Result<()> {
        self.do_forget(id)
    }

    /// Records how much memory `id` contributed to a task, from 1 to 5, durably:
    ///
    /// | level | meaning | decay | precision served next time |
    /// |---|---|---|---|
    /// | 1 | harmful, noise | importance × 0.5, strength × 0.5 | one step lower |
    /// | 2 | not useful | importance × 0.8 | one step lower |
    /// | 3 | useful, but should have contributed more | reinforced (like a recall hit) | one step higher |
    /// | 4 | useful | reinforced, importance + 0.1 | unchanged: fine where it was |
    /// | 5 | decisive | reinforced, importance + 0.2 | unchanged |
    ///
    /// Pinned memories keep their decay; their precision still moves. Returns the memory's
    /// feedback so far.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a level outside 1..=5; [`crate::Error::NotFound`].
    pub fn feedback(&self, id: MemoryId, level: u8) -> Result<FeedbackState> {
        self.do_feedback(id, level)
    }

    /// Single-step recall: embeds the query and returns the `k` most similar memories that
    /// pass the filter, best first. Records the access time of each hit. The same as
    /// [`Memory::retrieve`] with [`crate::Strategy::Single`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty query or `k` outside
    /// 1..=[`crate::retrieve::MAX_K`]; [`crate::Error::Embed`], [`crate::Error::Index`],
    /// [`crate::Error::Store`].
    pub fn recall(&self, query: &Query) -> Result<Vec<Hit>> {
        self.do_recall(query)
    }

    /// Recall by `strategy` (see [`crate::retrieve`]): every hit explains its score; the final
    /// hits are reinforced like recall hits.
    ///
    /// # Errors
    /// As [`Memory::recall`]; a reranker or refiner error is returned as is, a reranker
    /// returning the wrong number of scores or a non-finite one, or a refiner returning an
    /// empty query or a bad vector, as [`crate::Error::InvalidInput`].
    pub fn retrieve(&self, query: &Query, strategy: Strategy) -> Result<Vec<Hit>> {
        self.do_retrieve(query, strategy)
    }

    /// Retrieves for `request.query` and assembles the hits into at most `request.budget`
    /// tokens (see [`crate::context`]).
    ///
    /// # Errors
    /// As [`Memory::retrieve`]; [`crate::Error::InvalidInput`] for a key share outside (0, 1].
    pub fn context(&self, request: &ContextRequest) -> Result<Context> {
        self.do_context(request)
    }

    /// Records a finished task as a task memory at three precisions (made by the summarizer,
    /// [`crate::context::Extractive`] by default) labelled with its outcome, and for a failure a
    /// reflection memory sourced to it (`task/<id>`), so later contexts can say "this approach
    /// failed". Both outcomes are kept.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty request or step; the summarizer's error; as
    /// [`Memory::remember`].
    pub fn record_task(&self, task: &Task) -> Result<TaskIds> {
        self.do_record_task(task)
    }

    /// Records an event about `subject` (a file path, a service) in the default namespace and
    /// returns the id of its one subject memory, created on the first event and updated in
    /// place (re-embedded) on the next: its summary merges the events, newer content replacing
    /// the stale, a deletion leaving a short "deleted at …" summary; its count is the number of
    /// events.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty subject; as [`Memory::remember`].
    pub fn observe(
        &self,
        subject: &str,
        event: SubjectEvent,
        content: Option<&str>,
    ) -> Result<MemoryId> {
        self.do_observe(subject, event, content)
    }

    /// Runs one operation of the registry: the one entry every door's generic call goes
    /// through, so each door returns the same answer. Scoped requests act within the scope
    /// they name (a memory outside it is not found).
    ///
    /// # Errors
    /// The operation's own: [`crate::Error::InvalidInput`] for a request that does not check,
    /// [`crate::Error::NotFound`] for an id outside the store or the scope, and the store's.
    pub fn call(&self, request: Request) -> Result<Answer> {
        registry::run(self, request)
    }

    /// Runs one operation as [`Memory::call`] does, and writes its answer as text for a model
    /// too (what MCP sends beside the structured answer), from the operation's own rendering.
    ///
    /// # Errors
    /// As [`Memory::call`].
    pub fn call_told(&self, request: Request) -> Result<Told> {
        registry::run_told(self, request)
    }

    /// A view of this store confined to `scope`: every call made through it acts within the
    /// scope, enforced in the engine (a memory of another scope is not found, not changed).
    pub fn scoped(&self, scope: &Scope) -> Scoped<'_> {
        Scoped {
            memory: self,
            scope: scope.clone(),
        }
    }

    /// The store's upkeep: checkpoints, checks, sweeps, keys and receipts, what opening found.
    pub fn admin(&self) -> Admin<'_> {
        Admin { memory: self }
    }

    /// The lower-level calls tools, importers and benchmarks make: a raw filter scan, a
    /// listing, recall by vector, contexts of given hits, documents, pre-embedded writes.
    pub fn advanced(&self) -> Advanced<'_> {
        Advanced { memory: self }
    }

    /// Exports and imports: memloop's portable file and the Arrow and Parquet change streams.
    pub fn transfer(&self) -> Transfer<'_> {
        Transfer { memory: self }
    }
}

/// A store seen by a caller confined to one scope ([`Memory::scoped`]).
#[derive(Debug)]
pub struct Scoped<'a> {
    memory: &'a Memory,
    scope: Scope,
}

impl<'a> Scoped<'a> {
    /// The scope every call acts within.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// [`Memory::get`] for a caller confined to `scope`: a memory outside it is `None`, as if
    /// it did not exist.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        self.memory.get_in(&self.scope, id)
    }

    /// [`Memory::update`] for a caller confined to `scope`: a memory outside it is
    /// [`crate::Error::NotFound`] and stays as it is.
    ///
    /// # Errors
    /// As [`Memory::update`].
    pub fn update(&self, id: MemoryId, update: Update) -> Result<MemoryId> {
        self.memory.update_in(&self.scope, id, update)
    }

    /// [`Memory::forget`] for a caller confined to `scope`: a memory outside it is
    /// [`crate::Error::NotFound`] and stays.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] if there is no such memory in `scope`.
    pub fn forget(&self, id: MemoryId) -> Result<()> {
        self.memory.forget_in(&self.scope, id)
    }

    /// [`Memory::feedback`] for a caller confined to `scope`: a memory outside it is
    /// [`crate::Error::NotFound`], as if it did not exist.
    ///
    /// # Errors
    /// As [`Memory::feedback`].
    pub fn feedback(&self, id: MemoryId, level: u8) -> Result<FeedbackState> {
        self.memory.feedback_in(&self.scope, id, level)
    }

    /// The feedback memory `id` received so far (`None`: none yet), as seen by a caller
    /// confined to `scope`. Reads only.
    ///
    /// # Errors
    /// [`crate::Error::NotFound`] for a memory that is not current in `scope`;
    /// [`crate::Error::Store`] / [`crate::Error::Corrupt`].
    pub fn feedback_state(&self, id: MemoryId) -> Result<Option<FeedbackState>> {
        self.memory.feedback_state_in(&self.scope, id)
    }

    /// [`Admin::explain_decay`] for a caller confined to `scope`: a memory outside it is
    /// not found.
    ///
    /// # Errors
    /// [`crate::error::Error::NotFound`].
    pub fn explain_decay(&self, id: MemoryId) -> Result<DecayReport> {
        self.memory.explain_decay_in(&self.scope, id)
    }

    /// A sweep as every door asks for it: [`Scoped::sweep`] for the scope `scope` names, or
    /// [`Admin::sweep`] when it names none.
    ///
    /// # Errors
    /// As [`Scoped::sweep`] and [`Admin::sweep`].
    pub fn sweep(&self) -> Result<SweepReport> {
        self.memory.sweep_request(&self.scope)
    }

    /// Erases every memory of `scope` (each field it sets must match; `Scope::user("ana")`
    /// erases all of Ana's agents and sessions) in every namespace, superseded versions
    /// included, then makes it physical: the forgetting log loses their events, the index is
    /// saved without them and the database file is rewritten, so no file of the store keeps
    /// their text or vectors. Durable on return.
    ///
    /// # Errors
    /// [`crate::InvalidInput::EmptyScope`] for an empty name, [`crate::InvalidInput::Options`] for a scope
    /// with no field (that would erase everything: use a new store); as
    /// [`Admin::checkpoint`] and [`Admin::compact`].
    pub fn erase(&self) -> Result<ScopeErasure> {
        self.memory.forget_scope(&self.scope)
    }

    /// The turns of conversation `session` remembered for `scope` (exactly that user and
    /// agent), in the order they were spoken.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty session or a scope of another session;
    /// [`crate::Error::Store`].
    pub fn conversation(&self, session: &str) -> Result<Vec<MemoryItem>> {
        self.memory.conversation(session, &self.scope)
    }
}

/// The store's upkeep ([`Memory::admin`]).
#[derive(Debug, Clone, Copy)]
pub struct Admin<'a> {
    memory: &'a Memory,
}

impl<'a> Admin<'a> {
    /// Makes every write durable, saves the index (compacted, atomically replacing the old
    /// file) and prunes the change log it covers. Writes wait while it runs; reads do not.
    /// Also runs in the background (see [`crate::Options::checkpoint_every`]) and on close.
    /// When live data fills less than a third of the database file (after much forgetting), the
    /// file is rewritten here and on close (reads and writes wait meanwhile).
    ///
    /// # Errors
    /// [`crate::Error::Index`] or [`crate::Error::Store`]; the previous checkpoint then stays
    /// valid and nothing is lost.
    pub fn checkpoint(&self) -> Result<()> {
        self.memory.checkpoint()
    }

    /// Checkpoints, then rewrites the database file now whatever its free space (checkpoints
    /// do it on their own when live data fills under a third of a file of 4 MiB or more):
    /// every table is copied into a fresh file, which is synced and renamed over the old one.
    /// A crash leaves the old file or the new one. Reads and writes wait meanwhile.
    ///
    /// # Errors
    /// As [`Admin::checkpoint`]; [`crate::Error::Io`] for the rename.
    pub fn compact(&self) -> Result<()> {
        self.memory.compact()
    }

    /// Makes every write so far durable (a no-op in synced mode).
    ///
    /// # Errors
    /// [`crate::Error::Store`] / [`crate::Error::Poisoned`] when the writes could not be made durable;
    /// [`crate::Error::Background`] when the background thread's last checkpoint or flush failed and
    /// nothing has succeeded since.
    pub fn flush(&self) -> Result<()> {
        self.memory.flush()
    }

    /// Verifies the whole store now: the index file's checksums and links (rebuilding the
    /// index from the database if they fail), then every item and vector in the database,
    /// and that the index holds one vector per memory. Reads the whole store.
    ///
    /// # Errors
    /// [`crate::Error::Store`] / [`crate::Error::Index`] when the check itself cannot run;
    /// damage it finds is reported in [`crate::answers::CheckReport::problems`].
    pub fn check(&self) -> Result<CheckReport> {
        self.memory.check()
    }

    /// How the current memories divide by kind, tier, user and namespace (from the in-memory
    /// catalog: no database read).
    ///
    /// # Errors
    /// [`crate::Error::Store`] when the catalog failed to load.
    pub fn census(&self) -> crate::error::Result<crate::catalog::Census> {
        self.memory.census()
    }

    /// Bytes on disk, by file.
    ///
    /// # Errors
    /// [`crate::Error::Io`] when the database file cannot be read.
    pub fn disk_usage(&self) -> crate::error::Result<DiskUsage> {
        self.memory.disk_usage()
    }

    /// The demotions and deletions recorded at or after `since`, oldest first.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn forgotten(&self, since: Timestamp) -> Result<Vec<ForgetEvent>> {
        self.memory.forgotten(since)
    }

    /// Every erasure receipt this store logged, oldest first, each exactly as signed (one
    /// JSON line): what `memloop receipt list` prints again, and what
    /// [`crate::privacy::verify_receipt_chain`] checks.
    ///
    /// # Errors
    /// [`crate::Error::Store`]; [`crate::Error::Key`] for a log entry that fails authentication.
    pub fn receipt_log(&self) -> Result<Vec<String>> {
        self.memory.receipt_log()
    }

    /// The store's receipt public key (hex): compare it with a receipt's `public_key` to know
    /// this store signed it. `None` for a plain store that never erased anything (its key is
    /// made at its first erasure; asking writes nothing).
    ///
    /// # Errors
    /// [`crate::Error::Key`] for a damaged key ring; [`crate::Error::Store`].
    pub fn receipt_public_key(&self) -> Result<Option<String>> {
        self.memory.receipt_public_key()
    }

    /// Replaces the key that unlocks this encrypted store's key ring: a new random key in a
    /// key file, or a new passphrase (`new` may also name another key file: the ring moves
    /// there, and the old file still unlocks the data keys it held, so destroy it). Data keys
    /// are rewrapped, records are not touched.
    ///
    /// # Errors
    /// [`crate::privacy::KeyError::NotEncrypted`] for a plain store; [`crate::privacy::KeyError::Io`].
    pub fn rotate_key(&self, new: &crate::crypt::Encryption) -> Result<()> {
        self.memory.rotate_key(new)
    }

    /// What opening found.
    pub fn open_report(&self) -> &'a OpenReport {
        self.memory.open_report()
    }

    /// The longest text one memory may hold here ([`crate::Options::max_text_bytes`]).
    pub fn max_text_bytes(&self) -> usize {
        self.memory.max_text_bytes()
    }

    /// The embedding model's fingerprint recorded in the store.
    pub fn fingerprint(&self) -> &'a str {
        self.memory.fingerprint()
    }

    /// The embedder.
    pub fn embedder(&self) -> &'a Arc<dyn TextEmbedder> {
        self.memory.embedder()
    }

    /// Applies the forgetting policy at the clock's current time: demotes memories below θ1,
    /// deletes those below θ2 and, over capacity, the least retained — durably, recording each
    /// move (see [`Admin::forgotten`]). Also runs after writes when something is due.
    ///
    /// # Errors
    /// [`crate::Error::Store`] / [`crate::Error::Index`]; nothing moved then.
    pub fn sweep(&self) -> Result<SweepReport> {
        self.memory.sweep()
    }

    /// Memory `id`'s retention now, tier, and when it will cross θ1 and θ2.
    ///
    /// # Errors
    /// [`crate::error::Error::NotFound`].
    pub fn explain_decay(&self, id: MemoryId) -> Result<DecayReport> {
        self.memory.explain_decay(id)
    }
}

/// The lower-level calls ([`Memory::advanced`]).
#[derive(Debug, Clone, Copy)]
pub struct Advanced<'a> {
    memory: &'a Memory,
}

impl<'a> Advanced<'a> {
    /// The memories passing `filter`, by ascending id, at most `limit`.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn scan(&self, filter: &MemoryFilter, limit: usize) -> Result<Vec<MemoryItem>> {
        self.memory.scan(filter, limit)
    }

    /// The memories `r` asks for, by ascending id: `r.limit` of them after skipping
    /// `r.offset`. Reads only: no access time is recorded.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] as [`crate::requests::ListRequest::check`]; [`crate::Error::Store`] or
    /// [`crate::Error::Corrupt`].
    pub fn list(&self, r: &ListRequest) -> Result<Vec<MemoryItem>> {
        self.memory.list_request(r)
    }

    /// Recall by a query vector made with this store's model.
    ///
    /// # Errors
    /// As [`Memory::recall`]; [`crate::Error::Index`] for a vector of the wrong dimension, or
    /// zero, or not finite.
    pub fn recall_vector(
        &self,
        vector: &[f32],
        k: usize,
        filter: &MemoryFilter,
        ef: Option<usize>,
    ) -> Result<Vec<Hit>> {
        self.memory.recall_vector(vector, k, filter, ef)
    }

    /// Assembles given hits (best first) into at most `budget` tokens.
    ///
    /// # Errors
    /// [`crate::Error::Store`]; the summarizer's error.
    pub fn context_of(
        &self,
        hits: &[Hit],
        budget: usize,
        key_share: f32,
        mode: ContextMode,
    ) -> Result<Context> {
        self.memory.context_of(hits, budget, key_share, mode)
    }

    /// Memory-Doc: the source documents the hits point to, in the order of their best hit,
    /// each once. A hit without a source stands for itself.
    ///
    /// # Errors
    /// [`crate::Error::Store`].
    pub fn documents(&self, hits: &[Hit]) -> Result<Vec<DocumentRef>> {
        self.memory.documents(hits)
    }

    /// [`Memory::remember_batch`], saying for each input what was done.
    ///
    /// # Errors
    /// As [`Memory::remember_batch`].
    pub fn remember_batch_explained(&self, memories: Vec<NewMemory>) -> Result<Vec<Remembered>> {
        self.memory.remember_batch_explained(memories)
    }

    /// Remembers memories whose embeddings the caller computed with this store's model (bulk
    /// loads, benchmarks). Vectors are normalised; de-duplication applies as in
    /// [`Memory::remember_batch`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a vector of the wrong dimension or that cannot be
    /// normalised; otherwise as [`Memory::remember_batch`].
    pub fn remember_embedded(&self, memories: Vec<(NewMemory, Vec<f32>)>) -> Result<Vec<MemoryId>> {
        self.memory.remember_embedded(memories)
    }

    /// Mixed memory: stores document `text` under `key` (a [`crate::Kind::Document`] memory), its
    /// chunks ([`crate::context::CHUNK_TOKENS`] tokens with [`crate::context::CHUNK_OVERLAP`] overlap, each sourced to the
    /// document with its byte span), and the caller's triples, facts and summaries, all sourced
    /// to the document, in one transaction. Only exact duplicates merge (overlapping chunks stay
    /// apart).
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty key or text; as [`Memory::remember_batch`].
    pub fn remember_document(
        &self,
        key: &str,
        text: &str,
        structures: &Structures,
    ) -> Result<DocumentIds> {
        self.memory.remember_document(key, text, structures)
    }
}

/// Exports and imports ([`Memory::transfer`]).
#[derive(Debug, Clone, Copy)]
pub struct Transfer<'a> {
    memory: &'a Memory,
}

impl<'a> Transfer<'a> {
    /// Writes the memories passing `filter` (superseded versions included: history travels
    /// with them) to one portable file at `path`, atomically. Returns how many were written.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a path that would replace one of the store's own files
    /// (`store.redb`, `index.mlx`, …); [`crate::Error::Io`] or [`crate::Error::Store`]; `path` is then
    /// untouched.
    pub fn export(&self, path: impl AsRef<Path>, filter: &MemoryFilter) -> Result<usize> {
        self.memory.export(path, filter)
    }

    /// [`Transfer::export`] in the clear from an encrypted store (whose exports are otherwise
    /// sealed with its key ring: only a store opened with the same key file imports them).
    /// Only on explicit request: the file holds every exported memory's text and vector.
    ///
    /// # Errors
    /// As [`Transfer::export`].
    pub fn export_plaintext(&self, path: impl AsRef<Path>, filter: &MemoryFilter) -> Result<usize> {
        self.memory.export_plaintext(path, filter)
    }

    /// Merges an export file into this store, all or nothing: the whole file is read, checked
    /// (checksums, every record decoded within its bounds, every vector finite) and, if it
    /// came from another model, re-embedded with this store's model before one transaction
    /// writes it. Memories already here (same namespace, kind and text) are not copied: their
    /// metadata is replaced when the imported record is newer. New memories keep their ids
    /// when those are free here; version links follow the ids.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] / [`crate::Error::UnsupportedVersion`] for a bad file; [`crate::Error::Embed`],
    /// [`crate::Error::Store`], [`crate::Error::Index`]. On any error nothing was imported.
    pub fn import(&self, path: impl AsRef<Path>) -> Result<ImportReport> {
        self.memory.import(path)
    }

    /// Writes the memories passing `filter` (superseded versions included) as they are now —
    /// all of them, or with `since` only those changed after that sequence number, plus a
    /// `delete` row for each memory deleted or forgotten meanwhile (whatever its namespace) —
    /// to `path`, atomically. The schema metadata names the model, the store and the sequence
    /// range.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a path over the store's own files, or a `since` the change
    /// log no longer reaches; [`crate::Error::Io`], [`crate::Error::Store`].
    pub fn export_changes(
        &self,
        path: impl AsRef<Path>,
        since: Option<u64>,
        filter: &MemoryFilter,
        format: ColumnarFormat,
    ) -> Result<ChangeExport> {
        self.memory.export_changes(path, since, filter, format)
    }

    /// Merges the memories of an Arrow IPC stream or Parquet file written by
    /// [`Transfer::export_changes`] (a full export: only upsert rows), all or nothing, as
    /// [`Transfer::import`] merges an export file: checked whole first, re-embedded when it names
    /// another model.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] for a file that is not such a stream (a missing or mistyped column,
    /// a vector of the wrong length, no model in its metadata, a truncated file, a delete
    /// row); [`crate::Error::Io`], [`crate::Error::Embed`], [`crate::Error::Store`]. On error nothing was imported.
    pub fn import_columnar(&self, path: impl AsRef<Path>) -> Result<ImportReport> {
        self.memory.import_columnar(path)
    }

    /// Carries out an [`crate::requests::ExportRequest`]: an mlx file of the memories it selects, or a change
    /// stream (arrow, parquet) of what changed after `since`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a request that [`crate::requests::ExportRequest::format`] refuses or
    /// a path inside the store; as [`Transfer::export`] and [`Transfer::export_changes`].
    pub fn export_request(&self, r: &ExportRequest) -> Result<Exported> {
        self.memory.export_request(r)
    }

    /// Carries out an [`crate::requests::ImportRequest`]: merges the file in its format.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an unknown format; as [`Transfer::import`] and
    /// [`Transfer::import_columnar`].
    pub fn import_request(&self, r: &ImportRequest) -> Result<ImportReport> {
        self.memory.import_request(r)
    }

    /// Pushes this device's changes since its last push to the remote `r` names (an
    /// S3-compatible bucket, or a shared folder) as sealed, signed segments, then pulls the
    /// other devices' and merges them by the rules of docs/sync.md. Either step may be
    /// killed: the next sync repeats what did not finish, and nothing is applied twice.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a store that is not encrypted or a remote memloop
    /// cannot use; [`crate::Error::Io`] when the remote fails or stalls (the next sync
    /// completes this one); [`crate::Error::Corrupt`] for a signed segment holding a row no
    /// device writes.
    pub fn sync(&self, r: &SyncRequest) -> Result<Synced> {
        self.memory.sync(r)
    }
}
