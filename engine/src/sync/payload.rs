//! What a segment's row holds once opened: a memory version with its vector, a forgotten
//! version, or an erasure. Encoded with bincode, decoded within the bounds of its bytes, and
//! sealed by the caller (no field of it is ever in the clear in a remote).

use bincode::{Decode, Encode};

/// A hybrid logical clock reading as a row carries it: (wall ms, counter, device).
pub(crate) type Clock = (i64, u32, u64);

/// A version's id on every device: (device that made it, its id there).
pub(crate) type Gid = (u64, u64);

/// One row, opened.
#[derive(Debug, Clone, PartialEq, Encode, Decode)]
pub(crate) enum Payload {
    /// A memory version: new to the receiver, or with newer metadata.
    Version {
        /// Its id on every device.
        gid: Gid,
        /// The version it follows, if any (which lineage it belongs to).
        supersedes: Option<Gid>,
        /// When it was made.
        made: Clock,
        /// When its metadata was last set.
        meta: Clock,
        /// The item, as the store encodes it.
        item: Vec<u8>,
        /// Its vector, little-endian f32s.
        vector: Vec<u8>,
        /// Its counters: each device's feedback and reinforcements, and the latest level.
        counters: Counters,
    },
    /// A version forgotten: a tombstone.
    Forgotten {
        /// Its id on every device.
        gid: Gid,
        /// When.
        at: Clock,
    },
    /// A scope erased on the pushing device.
    Erased {
        /// The user, agent and session it named.
        scope: [Option<String>; 3],
        /// When (the pushing device's clock, ms).
        at: i64,
        /// The receipt's number in the pushing store (an erasure is carried out once).
        receipt: u64,
    },
    /// A scope erased on the pushing device, with the user key that erasure destroyed there
    /// (a device carrying it out destroys that key, and its own keys of the user, but keeps
    /// a key of the user's new life it adopted with it). Written instead of `Erased` when the
    /// erasure destroyed a key.
    ErasedKey {
        /// The user, agent and session it named.
        scope: [Option<String>; 3],
        /// When (the pushing device's clock, ms).
        at: i64,
        /// The receipt's number in the pushing store (an erasure is carried out once).
        receipt: u64,
        /// The user key it destroyed there.
        destroyed: [u8; 8],
    },
    /// A version forgotten, with the version it followed: a device that never held it still
    /// places a later version that followed it in its lineage (after the one before it).
    /// Written instead of `Forgotten` when the forgotten version followed one; last of the
    /// variants, so rows written before it decode as they did.
    ForgottenAfter {
        /// Its id on every device.
        gid: Gid,
        /// When.
        at: Clock,
        /// The version it followed.
        supersedes: Gid,
    },
    /// An erasure another device made and the writing device carried out, relayed by a
    /// snapshot (the segment that brought it may be compacted away): a device that starts from
    /// the snapshot carries it out too, once, as if it came from `device`.
    ErasedBy {
        /// The device that made it.
        device: u64,
        /// The user, agent and session it named.
        scope: [Option<String>; 3],
        /// When (that device's clock, ms): its bound.
        at: i64,
        /// The receipt's number in that device's store.
        receipt: u64,
    },
}

/// A version's counters as they travel: each device's, raised only by that device (its
/// feedbacks, their levels' sum, its reinforcements), so two devices' feedback and use add up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Encode, Decode)]
pub(crate) struct Counters {
    /// (device, feedbacks, sum of levels, reinforcements).
    pub(crate) per_device: Vec<(u64, u32, u32, u32)>,
    /// The latest feedback level (last writer wins, with the metadata); 0 for none.
    pub(crate) last: u8,
}

impl Payload {
    /// Its bytes.
    pub(crate) fn encode(&self) -> Vec<u8> {
        bincode::encode_to_vec(self, bincode::config::standard())
            .expect("encoding into memory cannot fail")
    }

    /// The payload of `bytes`, all of them.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Payload, String> {
        let (p, used) = crate::codec::decode_bounded::<Payload>(bytes)?;
        if used != bytes.len() {
            return Err(format!("{} trailing bytes", bytes.len() - used));
        }
        Ok(p)
    }
}

/// A hash of what sync carries of `item`: its text and the metadata devices share (not its
/// access times or decay state, which each device keeps for itself), its feedback and how often
/// it was reinforced.
pub(crate) fn carried(item: &crate::item::MemoryItem, feedback: Option<&str>) -> u64 {
    let shared = serde_json::json!([
        feedback,
        item.reinforced,
        item.text,
        item.kind,
        item.concise,
        item.brief,
        item.triple,
        item.subject,
        item.namespace,
        item.tags,
        item.importance,
        item.outcome,
        item.pinned,
        item.user,
        item.agent,
        item.session,
        item.valid_from,
        item.valid_until,
        item.sources,
    ]);
    xxhash_rust::xxh3::xxh3_64(shared.to_string().as_bytes())
}
