//! What JavaScript passes, as napi objects (camelCase fields in TypeScript), each read into
//! the engine's request type: the defaults and the checks are the vocabulary's, not these.

use chrono::{DateTime, Utc};
use memloop::{
    requests::ContextParams, requests::ConversationRequest, requests::ExportRequest,
    requests::ImportRequest, requests::OpenRequest, requests::RecallRequest,
    requests::RememberRequest, requests::TurnRequest, requests::UpdateRequest, requests::When,
    MemoryId,
};
use napi::bindgen_prelude::{BigInt, Either, Either3};
use napi_derive::napi;

use crate::call::invalid;

/// A memory id from JavaScript: a safe integer `number` or a `bigint`.
pub type JsId = Either<f64, BigInt>;

/// A time from JavaScript: a `Date`, an RFC 3339 or Unix-seconds string, or milliseconds.
type JsTime = Either3<DateTime<Utc>, String, f64>;

/// The id `id`, refused unless it is a whole number from 0 to 2^64 − 1 held exactly.
pub fn id_of(id: &JsId, field: &str) -> napi::Result<MemoryId> {
    let number = match id {
        Either::A(n) if n.fract() == 0.0 && *n >= 0.0 && *n <= 9_007_199_254_740_991.0 => {
            Ok(*n as u64)
        }
        Either::A(n) => Err(invalid(format!(
            "{field} {n} is not a whole number from 0 to 2^53 - 1 (pass a bigint above it)"
        ))),
        Either::B(b) => match b.get_u64() {
            (false, v, true) => Ok(v),
            _ => Err(invalid(format!(
                "{field} is not a bigint from 0 to 2^64 - 1"
            ))),
        },
    };
    number.map(MemoryId::new)
}

/// The time `t` as the vocabulary's [`When`].
fn when(t: Option<JsTime>) -> napi::Result<Option<When>> {
    Ok(match t {
        None => None,
        Some(Either3::A(date)) => Some(When::Millis(date.timestamp_millis())),
        Some(Either3::B(text)) => Some(When::Text(text)),
        Some(Either3::C(ms)) if ms.is_finite() && ms.fract() == 0.0 => {
            Some(When::Millis(ms as i64))
        }
        Some(Either3::C(ms)) => return Err(invalid(format!("{ms} is not whole milliseconds"))),
    })
}

/// A count from JavaScript, refused unless whole and non-negative.
fn count(n: Option<f64>, field: &str) -> napi::Result<Option<usize>> {
    match n {
        Some(v) if v.is_finite() && v.fract() == 0.0 && v >= 0.0 => Ok(Some(v as usize)),
        Some(v) => Err(invalid(format!(
            "{field} {v} is not a whole number of 0 or more"
        ))),
        None => Ok(None),
    }
}

/// How to open a store.
#[napi(object)]
#[derive(Default)]
pub struct OpenOptions {
    /// The model directory (default: the default model, fetched by `fetchModel()` or
    /// `memloop model fetch`).
    pub model: Option<String>,
    /// "cpu" (default), "cuda" or "cuda:N" in a build with CUDA.
    pub device: Option<String>,
    /// The model's matrix products: "f32" or "int8" (faster on the CPU; its vectors differ
    /// slightly, so a store is written in one or the other). Default: the store's own; for a
    /// new store int8 where the CPU has AVX2 and the model runs on memloop's encoder, else f32.
    pub precision: Option<String>,
    /// A cross-encoder directory (a one-label BERT sequence classifier such as
    /// ms-marco-MiniLM-L-6-v2): the "rerank" and "iterative" strategies then order their best
    /// candidates by it. Default: none (score fusion).
    pub reranker_model: Option<String>,
    /// "synced" (default: every write is fsynced before its Promise resolves) or "grouped"
    /// (writes made durable together, at least every second and at close).
    pub durability: Option<String>,
    /// "system" (default) or "manual" (time moves only by `setTime`).
    pub clock: Option<String>,
    /// A manual clock's start.
    pub start: Option<Either3<DateTime<Utc>, String, f64>>,
    /// Cosine at which near-duplicates merge; `null` merges exact duplicates only.
    pub dedup_threshold: Option<Either<f64, napi::bindgen_prelude::Null>>,
    /// The most memories kept.
    pub capacity: Option<f64>,
    /// The most memories kept per user.
    pub capacity_per_user: Option<f64>,
    /// The longest text one memory may hold, in bytes (default 512 KiB).
    pub max_text_bytes: Option<f64>,
    /// A model-free deterministic embedder of this dimension (tests; no notion of meaning).
    pub hashing_embedder: Option<f64>,
    /// Encrypt the store at rest with the key ring in this file (made, with a random 256-bit
    /// key, when the store is created; needed at every open after). Keep it outside the store
    /// and back it up: without it the store cannot be read.
    pub key_file: Option<String>,
    /// The passphrase that unlocks `keyFile` (Argon2id), for a ring made with one.
    pub passphrase: Option<String>,
}

impl OpenOptions {
    /// The vocabulary's open request.
    pub fn request(self) -> napi::Result<OpenRequest> {
        let sync = match self.durability.as_deref() {
            None | Some("synced") => None,
            Some("grouped") => Some(false),
            Some(other) => {
                return Err(invalid(format!(
                    "durability {other:?} is neither \"synced\" nor \"grouped\""
                )))
            }
        };
        let start_ms = match when(self.start)? {
            Some(w) => Some(crate::call::checked(w.millis("start"))?),
            None => None,
        };
        Ok(OpenRequest {
            model: self.model.map(Into::into),
            device: self.device,
            precision: self.precision,
            reranker_model: self.reranker_model.map(Into::into),
            clock: self.clock,
            start_ms,
            sync,
            dedup_threshold: self.dedup_threshold.map(|t| match t {
                Either::A(v) => Some(v as f32),
                Either::B(_) => None,
            }),
            hashing_embedder: count(self.hashing_embedder, "hashingEmbedder")?,
            capacity: count(self.capacity, "capacity")?,
            capacity_per_user: count(self.capacity_per_user, "capacityPerUser")?,
            recall_ef: None,
            index_vectors: None,
            max_text_bytes: count(self.max_text_bytes, "maxTextBytes")?,
            key_file: self.key_file.map(Into::into),
            passphrase: self.passphrase,
        })
    }
}

/// Whose memories a call may reach: a user, an agent, a session (each optional).
#[napi(object)]
#[derive(Default)]
pub struct ScopeOptions {
    /// The user.
    pub user: Option<String>,
    /// The agent.
    pub agent: Option<String>,
    /// The session.
    pub session: Option<String>,
}

impl ScopeOptions {
    /// The engine's scope.
    pub fn scope(self) -> memloop::Scope {
        memloop::Scope {
            user: self.user,
            agent: self.agent,
            session: self.session,
        }
    }
}

/// A memory to remember.
#[napi(object)]
pub struct RememberInput {
    /// The memory in full: a fact, an observation, a decision, a chunk of a document.
    pub text: String,
    /// chunk (default), fact, triple, summary, task, reflection, subject or document; a fact or
    /// triple that says something new about the same thing replaces the old version.
    pub kind: Option<String>,
    /// A shorter version, served when the context is tight.
    pub concise: Option<String>,
    /// The shortest version, served when the context is tighter still.
    pub brief: Option<String>,
    /// Labels to filter by later.
    pub tags: Option<Vec<String>>,
    /// A separate space of memories (default "default").
    pub namespace: Option<String>,
    /// How much it matters, 0 to 1 (default 0.5).
    pub importance: Option<f64>,
    /// For a triple: the subject entity (head, relation and tail together).
    pub head: Option<String>,
    /// For a triple: the relation.
    pub relation: Option<String>,
    /// For a triple: the object entity.
    pub tail: Option<String>,
    /// The user it belongs to (one user's memories never reach another's recall).
    pub user: Option<String>,
    /// The agent it belongs to.
    pub agent: Option<String>,
    /// The session it belongs to.
    pub session: Option<String>,
    /// When what it says became true (default now).
    pub valid_from: Option<Either3<DateTime<Utc>, String, f64>>,
    /// When it stopped being true, if it did.
    pub valid_until: Option<Either3<DateTime<Utc>, String, f64>>,
}

impl RememberInput {
    /// The vocabulary's remember request.
    pub fn request(self) -> napi::Result<RememberRequest> {
        Ok(RememberRequest {
            text: self.text,
            kind: self.kind,
            concise: self.concise,
            brief: self.brief,
            tags: self.tags.unwrap_or_default(),
            namespace: self.namespace,
            importance: self.importance.map(|i| i as f32),
            head: self.head,
            relation: self.relation,
            tail: self.tail,
            scope: memloop::Scope {
                user: self.user,
                agent: self.agent,
                session: self.session,
            },
            valid_from: when(self.valid_from)?,
            valid_until: when(self.valid_until)?,
        })
    }
}

/// The memory `m` (a text, or a text with its fields) as the engine's new memory.
pub fn new_memory(m: Either<String, RememberInput>) -> napi::Result<memloop::NewMemory> {
    let request = match m {
        Either::A(text) => RememberRequest {
            text,
            ..RememberRequest::default()
        },
        Either::B(input) => input.request()?,
    };
    crate::call::checked_engine(request.into_new_memory())
}

/// What a recall or a context asks for: the recall's options, and the context's own (a
/// recall refuses those, as the vocabulary's recall request does).
#[napi(object)]
#[derive(Default)]
pub struct QueryOptions {
    /// How many memories (absent: the engine's default for a recall or a context; too many is
    /// refused by the engine's limit).
    pub k: Option<f64>,
    /// single, lexical, rerank (default: single) or iterative.
    pub strategy: Option<String>,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only these kinds.
    pub kinds: Option<Vec<String>>,
    /// Only memories with all these tags.
    pub tags: Option<Vec<String>>,
    /// Only this user's memories.
    pub user: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only this session's.
    pub session: Option<String>,
    /// As the store stood at this time (what was valid then).
    pub as_of: Option<Either3<DateTime<Utc>, String, f64>>,
    /// Also superseded versions (history).
    pub history: Option<bool>,
    /// Recall only: give each hit the parts of its score (`explain`).
    pub explain: Option<bool>,
    /// Context only: the most tokens the context may take (default 500).
    pub budget: Option<f64>,
    /// Context only: "memories" (default) or "documents" (the documents the memories come
    /// from).
    pub mode: Option<String>,
    /// Context only: the share of the memories labelled "Key Reference", in (0, 1]
    /// (default 1/3).
    pub key_share: Option<f64>,
}

impl QueryOptions {
    /// The vocabulary's recall request for `query`.
    ///
    /// # Errors
    /// A context's own option given to a recall, named.
    pub fn recall(self, query: String) -> napi::Result<RecallRequest> {
        let own = [
            ("budget", self.budget.is_some()),
            ("mode", self.mode.is_some()),
            ("keyShare", self.key_share.is_some()),
        ];
        if let Some((name, _)) = own.iter().find(|(_, given)| *given) {
            return Err(invalid(format!(
                "{name} is a context's option, not a recall's"
            )));
        }
        self.recall_fields(query)
    }

    /// The recall's fields, the context's own left aside.
    fn recall_fields(self, query: String) -> napi::Result<RecallRequest> {
        Ok(RecallRequest {
            query,
            k: count(self.k, "k")?,
            strategy: self.strategy,
            explain: self.explain.unwrap_or(false),
            selection: memloop::requests::Selection {
                namespace: self.namespace,
                kinds: self.kinds.unwrap_or_default(),
                tags: self.tags.unwrap_or_default(),
                history: self.history.unwrap_or(false),
                as_of: when(self.as_of)?,
            },
            scope: memloop::Scope {
                user: self.user,
                agent: self.agent,
                session: self.session,
            },
        })
    }
}

impl QueryOptions {
    /// The vocabulary's context parameters for `query`.
    pub fn context(mut self, query: String) -> napi::Result<ContextParams> {
        if self.explain.take().is_some() {
            return Err(invalid(
                "explain is a recall's option: a context's blocks carry their scores",
            ));
        }
        let budget = count(self.budget.take(), "budget")?;
        let key_share = self.key_share.take().map(|s| s as f32);
        let mode = match self.mode.take() {
            None => None,
            Some(name) => Some(
                serde_json::from_value(serde_json::Value::String(name.clone())).map_err(|_| {
                    invalid(format!(
                        "mode {name:?} is neither \"memories\" nor \"documents\""
                    ))
                })?,
            ),
        };
        let recall = self.recall_fields(query)?;
        Ok(ContextParams {
            query: recall.query,
            budget,
            mode,
            key_share,
            k: recall.k,
            strategy: recall.strategy,
            selection: recall.selection,
            scope: recall.scope,
        })
    }
}

/// One turn of a conversation.
#[napi(object)]
pub struct TurnInput {
    /// Who spoke (user, assistant, a name).
    pub speaker: String,
    /// What was said.
    pub text: String,
    /// When.
    pub time: Either3<DateTime<Utc>, String, f64>,
}

/// The vocabulary's conversation request.
pub fn conversation(
    session: String,
    turns: Vec<TurnInput>,
    scope: Option<ScopeOptions>,
) -> napi::Result<ConversationRequest> {
    let scope = scope.unwrap_or_default();
    let turns = turns
        .into_iter()
        .map(|t| {
            Ok(TurnRequest {
                speaker: t.speaker,
                text: t.text,
                time: when(Some(t.time))?.unwrap_or(When::Millis(0)),
            })
        })
        .collect::<napi::Result<_>>()?;
    Ok(ConversationRequest {
        session,
        turns,
        scope: memloop::Scope {
            session: None,
            ..scope.scope()
        },
    })
}

/// A change to a memory: a new text makes a new version (the old one kept as history).
#[napi(object)]
#[derive(Default)]
pub struct UpdateInput {
    /// The new text.
    pub text: Option<String>,
    /// A new concise version.
    pub concise: Option<String>,
    /// A new brief version.
    pub brief: Option<String>,
    /// The new tags (replacing the old).
    pub tags: Option<Vec<String>>,
    /// The new importance, 0 to 1.
    pub importance: Option<f64>,
    /// Pin (never forgotten) or unpin.
    pub pinned: Option<bool>,
    /// When what it says became true.
    pub valid_from: Option<Either3<DateTime<Utc>, String, f64>>,
    /// When it stopped being true.
    pub valid_until: Option<Either3<DateTime<Utc>, String, f64>>,
    /// The user whose memory it must be.
    pub user: Option<String>,
    /// The agent whose memory it must be.
    pub agent: Option<String>,
    /// The session whose memory it must be.
    pub session: Option<String>,
}

impl UpdateInput {
    /// The vocabulary's update request for memory `id`.
    pub fn request(self, id: MemoryId) -> napi::Result<UpdateRequest> {
        Ok(UpdateRequest {
            id,
            text: self.text,
            concise: self.concise,
            brief: self.brief,
            tags: self.tags,
            importance: self.importance.map(|i| i as f32),
            pinned: self.pinned,
            valid_from: when(self.valid_from)?,
            valid_until: when(self.valid_until)?,
            scope: memloop::Scope {
                user: self.user,
                agent: self.agent,
                session: self.session,
            },
        })
    }
}

/// A finished task an agent records.
#[napi(object)]
pub struct TaskInput {
    /// What was asked.
    pub request: String,
    /// The steps taken.
    pub steps: Option<Vec<String>>,
    /// "success" or "failure".
    pub outcome: String,
    /// What was learned.
    pub reflection: Option<String>,
    /// The namespace (default "default").
    pub namespace: Option<String>,
    /// Labels.
    pub tags: Option<Vec<String>>,
}

impl TaskInput {
    /// The vocabulary's task.
    pub fn task(self) -> napi::Result<memloop::Task> {
        let outcome = serde_json::from_value(serde_json::Value::String(self.outcome.clone()))
            .map_err(|_| {
                invalid(format!(
                    "outcome {:?} is neither \"success\" nor \"failure\"",
                    self.outcome
                ))
            })?;
        Ok(memloop::Task {
            request: self.request,
            steps: self.steps.unwrap_or_default(),
            outcome,
            reflection: self.reflection,
            namespace: self.namespace,
            tags: self.tags.unwrap_or_default(),
        })
    }
}

/// What to export.
#[napi(object)]
#[derive(Default)]
pub struct ExportOptions {
    /// "mlx" (default, memloop's portable file), "arrow" or "parquet" (a change stream).
    pub format: Option<String>,
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only this user's memories.
    pub user: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only this session's.
    pub session: Option<String>,
    /// With arrow or parquet: only what changed after this sequence number.
    pub since: Option<f64>,
    /// From an encrypted store: write the file in the clear (mlx exports are otherwise sealed
    /// with its key ring; change streams are refused).
    pub plaintext: Option<bool>,
}

impl ExportOptions {
    /// The vocabulary's export request to `path`.
    pub fn request(self, path: String) -> napi::Result<ExportRequest> {
        Ok(ExportRequest {
            path: path.into(),
            format: self.format,
            selection: memloop::requests::Selection {
                namespace: self.namespace,
                ..Default::default()
            },
            scope: memloop::Scope {
                user: self.user,
                agent: self.agent,
                session: self.session,
            },
            since: count(self.since, "since")?.map(|s| s as u64),
            plaintext: self.plaintext.unwrap_or(false),
        })
    }
}

/// Where and how to sync (`memory.sync(remote, options)`).
#[napi(object)]
#[derive(Default)]
pub struct SyncOptions {
    /// An S3-compatible endpoint other than AWS's (`http://127.0.0.1:9000`).
    pub endpoint: Option<String>,
    /// Seconds one request to the remote may take, retries included (default 60).
    pub timeout_secs: Option<u32>,
    /// Then compact the remote (a snapshot; the segments every device applied deleted).
    pub compact: Option<bool>,
}

/// The vocabulary's sync request.
pub fn sync(remote: String, o: SyncOptions) -> memloop::requests::SyncRequest {
    memloop::requests::SyncRequest {
        remote,
        endpoint: o.endpoint,
        timeout_secs: o.timeout_secs.map(u64::from),
        compact: o.compact.unwrap_or(false),
    }
}

/// The vocabulary's import request.
pub fn import(path: String, format: Option<String>) -> ImportRequest {
    ImportRequest {
        path: path.into(),
        format,
    }
}
