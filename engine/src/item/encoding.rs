//! The item's stable on-disk encoding: one version byte, then its bincode (`=2.0.1`, standard
//! config) encoding. Versions 1 and 2 are still read; a later format adds a version and keeps
//! decoding the old ones.

use bincode::Decode;

use super::{Kind, MemoryId, MemoryItem, Outcome, Source, Tier, Triple};
use crate::clock::Timestamp;

/// Version 1 of the item encoding (before forgetting), still read.
#[derive(Decode)]
struct ItemV1 {
    id: MemoryId,
    kind: Kind,
    text: String,
    concise: Option<String>,
    brief: Option<String>,
    triple: Option<Triple>,
    subject: Option<String>,
    sources: Vec<Source>,
    namespace: String,
    tags: Vec<String>,
    created: Timestamp,
    updated: Timestamp,
    accessed: Timestamp,
    importance: f32,
    outcome: Option<Outcome>,
    count: u32,
    pinned: bool,
    supersedes: Option<MemoryId>,
    superseded_by: Option<MemoryId>,
}

/// Version 2 (before scopes), still read: version 1's fields, then the decay fields (bincode
/// writes a nested struct's fields in place, unprefixed, so this is that layout).
#[derive(Decode)]
struct ItemV2 {
    v1: ItemV1,
    tier: Tier,
    strength: f64,
    decay_anchor: Timestamp,
    reinforced: u32,
}

impl From<ItemV1> for ItemV2 {
    fn from(v1: ItemV1) -> Self {
        ItemV2 {
            decay_anchor: v1.created,
            v1,
            tier: Tier::Working,
            strength: 0.0, // unset: the policy's default for its kind and importance
            reinforced: 0,
        }
    }
}

impl From<ItemV2> for MemoryItem {
    fn from(v2: ItemV2) -> Self {
        let ItemV2 {
            v1,
            tier,
            strength,
            decay_anchor,
            reinforced,
        } = v2;
        MemoryItem {
            id: v1.id,
            kind: v1.kind,
            text: v1.text,
            concise: v1.concise,
            brief: v1.brief,
            triple: v1.triple,
            subject: v1.subject,
            sources: v1.sources,
            namespace: v1.namespace,
            tags: v1.tags,
            created: v1.created,
            updated: v1.updated,
            accessed: v1.accessed,
            importance: v1.importance,
            outcome: v1.outcome,
            count: v1.count,
            pinned: v1.pinned,
            supersedes: v1.supersedes,
            superseded_by: v1.superseded_by,
            tier,
            strength,
            decay_anchor,
            reinforced,
            user: None,
            agent: None,
            session: None,
            valid_from: v1.created,
            valid_until: None,
        }
    }
}

/// The encoding version written by this build.
pub(crate) const ITEM_VERSION: u8 = 3;

impl MemoryItem {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = vec![ITEM_VERSION];
        // Encoding into a Vec cannot fail for these types (no maps with failing keys, no limits).
        bincode::encode_into_std_write(self, &mut out, bincode::config::standard())
            .expect("encoding an item into memory cannot fail");
        out
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<MemoryItem, String> {
        fn exact<T: Decode<()>>(rest: &[u8]) -> Result<T, String> {
            let (item, used) =
                crate::codec::decode_bounded(rest).map_err(|e| format!("undecodable item: {e}"))?;
            if used != rest.len() {
                return Err(format!("{} trailing bytes after item", rest.len() - used));
            }
            Ok(item)
        }
        match bytes.split_first() {
            Some((&ITEM_VERSION, rest)) => exact(rest),
            Some((2, rest)) => exact::<ItemV2>(rest).map(MemoryItem::from),
            Some((1, rest)) => exact::<ItemV1>(rest).map(|v| ItemV2::from(v).into()),
            Some((v, _)) => Err(format!("item encoding version {v} is not supported")),
            None => Err("empty item record".into()),
        }
    }
}
