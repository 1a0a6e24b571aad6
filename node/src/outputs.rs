//! What the calls answer, as napi objects (camelCase fields in TypeScript). Each is read from
//! the engine's own serde output (`answer_as`), so these types say what the engine sends,
//! field for field; fields left out here are left out of the answer. Ids are a `number`, or a
//! `bigint` above 2^53 − 1, never rounded.

use napi::bindgen_prelude::{BigInt, Either};
use napi_derive::napi;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A memory id as JavaScript gets it.
pub type OutId = Either<f64, BigInt>;

use crate::js_value::MAX_SAFE;

fn id_value(id: impl Into<u64>) -> OutId {
    let v: u64 = id.into();
    if v <= MAX_SAFE {
        Either::A(v as f64)
    } else {
        Either::B(BigInt::from(v))
    }
}

fn id<'de, D: Deserializer<'de>>(d: D) -> Result<OutId, D::Error> {
    u64::deserialize(d).map(id_value)
}

fn optional_id<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OutId>, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.map(id_value))
}

/// A safe id as a JSON number; an id above 2^53 − 1 cannot be one (JSON.parse would round it),
/// so it fails the encoding and the answer is built by napi instead ([`hits_json`]).
fn json_id<S: Serializer>(id: &OutId, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Either::A(v) => s.serialize_u64(*v as u64),
        Either::B(_) => Err(serde::ser::Error::custom("an id above 2^53 - 1")),
    }
}

fn json_optional_id<S: Serializer>(id: &Option<OutId>, s: S) -> Result<S::Ok, S::Error> {
    match id {
        Some(id) => json_id(id, s),
        None => s.serialize_none(),
    }
}

fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<OutId>, D::Error> {
    Ok(Vec::<u64>::deserialize(d)?
        .into_iter()
        .map(id_value)
        .collect())
}

/// What `remember` did with one memory.
#[napi(object)]
#[derive(Deserialize)]
pub struct Remembered {
    /// The memory that now holds the text: a new id, the id merged into, or the new version.
    #[napi(ts_type = "number | bigint")]
    #[serde(deserialize_with = "id")]
    pub id: OutId,
    /// "new", "merged" or "superseded".
    pub action: String,
    /// The version a supersession replaced.
    #[napi(ts_type = "number | bigint | null")]
    #[serde(deserialize_with = "optional_id")]
    pub previous: Option<OutId>,
}

/// One stored memory.
#[napi(object)]
#[derive(Deserialize, Serialize)]
#[serde(rename_all(serialize = "camelCase"))]
pub struct Item {
    /// The id.
    #[napi(ts_type = "number | bigint")]
    #[serde(deserialize_with = "id", serialize_with = "json_id")]
    pub id: OutId,
    /// chunk, fact, triple, summary, task, reflection, subject, document or turn.
    pub kind: String,
    /// The original text.
    pub text: String,
    /// A concise version, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub concise: Option<String>,
    /// A brief version, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brief: Option<String>,
    /// The subject key (a file path, a tool name); a turn's speaker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// The namespace.
    pub namespace: String,
    /// Tags, sorted and unique.
    pub tags: Vec<String>,
    /// When it was first remembered (ms since the Unix epoch).
    pub created: i64,
    /// When its content or metadata last changed (ms).
    pub updated: i64,
    /// When a recall last returned it (ms).
    pub accessed: i64,
    /// Importance in [0, 1].
    pub importance: f64,
    /// How many times it was remembered (duplicates merged into it).
    pub count: u32,
    /// Pinned memories are never forgotten.
    pub pinned: bool,
    /// The older version this one replaced.
    #[napi(ts_type = "number | bigint | null")]
    #[serde(
        deserialize_with = "optional_id",
        serialize_with = "json_optional_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub supersedes: Option<OutId>,
    /// The newer version that replaced this one.
    #[napi(ts_type = "number | bigint | null")]
    #[serde(
        deserialize_with = "optional_id",
        serialize_with = "json_optional_id",
        skip_serializing_if = "Option::is_none"
    )]
    pub superseded_by: Option<OutId>,
    /// working, long_term or forgotten.
    pub tier: String,
    /// The user it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The agent it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The session it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// When what it says became true (ms).
    pub valid_from: i64,
    /// When it stopped being true (ms), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valid_until: Option<i64>,
}

/// One memory a recall found.
#[napi(object)]
#[derive(Deserialize, Serialize)]
#[serde(rename_all(serialize = "camelCase"))]
pub struct Hit {
    /// The memory's id.
    #[napi(ts_type = "number | bigint")]
    #[serde(deserialize_with = "id", serialize_with = "json_id")]
    pub id: OutId,
    /// Its score (higher is better).
    pub score: f64,
    /// Its position, from 0.
    pub rank: u32,
    /// Its text.
    pub text: String,
    /// Its kind.
    pub kind: String,
    /// Why it surfaced, the parts of its score (with `explain: true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<serde_json::Value>,
    /// The whole memory.
    pub item: Item,
}

/// One memory of a context.
#[napi(object)]
#[derive(Deserialize)]
pub struct Block {
    /// "Key Reference" or "General Reference".
    pub label: String,
    /// The memory.
    #[napi(ts_type = "number | bigint")]
    #[serde(deserialize_with = "id")]
    pub id: OutId,
    /// original, concise or brief.
    pub precision: String,
    /// Its text at that precision.
    pub text: String,
    /// Its relevance score.
    pub score: f64,
}

/// An assembled context.
#[napi(object)]
#[derive(Deserialize)]
pub struct Context {
    /// The text, ready for a prompt.
    pub text: String,
    /// Its tokens, never more than the budget.
    pub tokens: u32,
    /// Its memories, most relevant first.
    pub blocks: Vec<Block>,
    /// Memories that did not fit even at brief precision.
    #[napi(ts_type = "Array<number | bigint>")]
    #[serde(deserialize_with = "ids")]
    pub dropped: Vec<OutId>,
}

/// A recorded task's memories.
#[napi(object)]
#[derive(Deserialize)]
pub struct TaskIds {
    /// The task memory.
    #[napi(ts_type = "number | bigint")]
    #[serde(deserialize_with = "id")]
    pub task: OutId,
    /// The reflection memory, if one was kept.
    #[napi(ts_type = "number | bigint | null")]
    #[serde(deserialize_with = "optional_id")]
    pub reflection: Option<OutId>,
}

/// What remembering a conversation stored.
#[napi(object)]
#[derive(Deserialize)]
pub struct ConversationReport {
    /// The session.
    pub session: String,
    /// The turns' memories, in the order given.
    #[napi(ts_type = "Array<number | bigint>")]
    #[serde(deserialize_with = "ids")]
    pub turns: Vec<OutId>,
    /// The number of the first new turn in the session (from 0).
    pub first_turn: f64,
    /// The session summary's current version.
    #[napi(ts_type = "number | bigint")]
    #[serde(deserialize_with = "id")]
    pub summary: OutId,
    /// What the extractor drew from the turns, each as remembered.
    pub extracted: Vec<Remembered>,
}

/// What an export wrote.
#[napi(object)]
#[derive(Deserialize)]
pub struct Exported {
    /// Memories written (upserts and deletes of a change stream).
    pub exported: f64,
    /// The file.
    pub path: String,
    /// A change stream's memories written as they are now.
    pub upserts: Option<f64>,
    /// A change stream's deletes.
    pub deletes: Option<f64>,
    /// What to pass as `since` next time (a change stream).
    pub next_since: Option<f64>,
}

/// What an import did.
#[napi(object)]
#[derive(Deserialize)]
pub struct ImportReport {
    /// Records in the file.
    pub records: f64,
    /// New memories added.
    pub added: f64,
    /// Memories whose metadata the newer imported record replaced.
    pub merged: f64,
    /// Records already present with metadata at least as new.
    pub unchanged: f64,
    /// Whether the file came from another model and was re-embedded.
    pub reembedded: bool,
}

/// What a sync did.
#[napi(object)]
#[derive(Deserialize)]
pub struct Synced {
    /// This store's device id (hex).
    pub device: String,
    /// Rows pushed: memory versions, forgotten versions, erasures.
    pub pushed: f64,
    /// Segments written.
    pub pushed_segments: f64,
    /// Bytes written.
    pub pushed_bytes: f64,
    /// Rows pulled from the other devices and applied.
    pub pulled: f64,
    /// Segments read.
    pub pulled_segments: f64,
    /// Bytes read.
    pub pulled_bytes: f64,
    /// Rows sealed under keys this key file does not hold (an erased user's).
    pub unreadable: f64,
    /// Erasures another device made, carried out here.
    pub erasures: f64,
    /// Objects not believed (damaged, not signed with this key ring, or a replay under
    /// another name): nothing of that device after one is applied until it verifies.
    pub refused: Vec<String>,
    /// Segments waiting for a key this key file does not hold yet.
    pub waiting: Vec<String>,
    /// Segments the remote withheld or rolled back (a later one names them).
    pub missing: Vec<String>,
    /// Pulled memories embedded again (their device used another model).
    pub reembedded: f64,
    /// With `compact`: segments deleted from the remote.
    pub deleted_segments: f64,
    /// With `compact`: the bytes of the snapshot written.
    pub snapshot_bytes: f64,
}

impl From<&memloop::MemoryItem> for Item {
    fn from(m: &memloop::MemoryItem) -> Item {
        Item {
            id: id_value(m.id),
            kind: m.kind.name().to_string(),
            text: m.text.clone(),
            concise: m.concise.clone(),
            brief: m.brief.clone(),
            subject: m.subject.clone(),
            namespace: m.namespace.clone(),
            tags: m.tags.clone(),
            created: m.created,
            updated: m.updated,
            accessed: m.accessed,
            importance: f64::from(m.importance),
            count: m.count,
            pinned: m.pinned,
            supersedes: m.supersedes.map(id_value),
            superseded_by: m.superseded_by.map(id_value),
            tier: m.tier.name().to_string(),
            user: m.user.clone(),
            agent: m.agent.clone(),
            session: m.session.clone(),
            valid_from: m.valid_from,
            valid_until: m.valid_until,
        }
    }
}

/// A recall's hits, converted directly (the hot path: no serde round trip).
pub fn hits(hits: Vec<memloop::Hit>) -> napi::Result<HitsAnswer> {
    convert_hits(hits, false).map(hits_answer)
}

/// A recall's hits with the parts of their scores.
pub fn hits_explained(hits: Vec<memloop::Hit>) -> napi::Result<HitsAnswer> {
    convert_hits(hits, true).map(hits_answer)
}

fn convert_hits(hits: Vec<memloop::Hit>, explain: bool) -> napi::Result<Vec<Hit>> {
    hits.into_iter()
        .map(|h| {
            Ok(Hit {
                id: id_value(h.item.id),
                score: f64::from(h.score),
                rank: u32::try_from(h.rank).unwrap_or(u32::MAX),
                text: h.item.text.clone(),
                kind: h.item.kind.name().to_string(),
                explain: explain
                    .then(|| crate::js_value::plain(&h.explain))
                    .transpose()?,
                item: Item::from(&h.item),
            })
        })
        .collect()
}

/// The hits as one JSON text, for `index.js` to `JSON.parse`: V8 builds objects from JSON
/// several times faster than napi sets their properties one by one, and the result is the same
/// plain objects (absent fields absent, numbers the same doubles). `None` when a number in
/// them is not a safe integer or a double (an id above 2^53 − 1, which must stay a `bigint`):
/// napi builds those objects.
pub fn hits_json(hits: &[Hit]) -> Option<String> {
    let explained_safe = hits
        .iter()
        .all(|h| h.explain.as_ref().is_none_or(crate::js_value::all_doubles));
    explained_safe
        .then(|| serde_json::to_string(hits).ok())
        .flatten()
}

/// A recall's answer: JSON text when [`hits_json`] can write it, the napi objects otherwise.
pub type HitsAnswer = Either<String, Vec<Hit>>;

/// `hits` answered as [`hits_json`] writes them where it can.
pub fn hits_answer(hits: Vec<Hit>) -> HitsAnswer {
    match hits_json(&hits) {
        Some(text) => Either::A(text),
        None => Either::B(hits),
    }
}

/// A memory, or `null`.
pub fn maybe_item(m: Option<memloop::MemoryItem>) -> napi::Result<Option<Item>> {
    Ok(m.as_ref().map(Item::from))
}
