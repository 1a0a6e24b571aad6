//! The content checksum of a change stream: sha256 over its rows as the importer decodes them,
//! kept in the file's metadata (`memloop.checksum`). Parquet and Arrow carry no checksum of
//! their own: without it a flipped bit changes a tag or a vector silently.

use sha2::{Digest, Sha256};

use crate::item::MemoryItem;
use crate::store::Change;

/// sha256 over rows, in file order.
#[derive(Default)]
pub(crate) struct RowDigest(Sha256);

impl RowDigest {
    /// Adds an upsert row: the memory's encoding and its vector's bytes.
    pub(crate) fn upsert(&mut self, item: &MemoryItem, vector: &[f32]) {
        let encoded = item.encode();
        self.0.update([1u8]);
        self.0.update((encoded.len() as u64).to_le_bytes());
        self.0.update(&encoded);
        self.0.update((vector.len() as u64).to_le_bytes());
        for x in vector {
            self.0.update(x.to_le_bytes());
        }
    }

    /// Adds a change as the exporter writes it.
    pub(crate) fn change(&mut self, change: &Change) {
        match change {
            Change::Upsert { item, vector, .. } => self.upsert(item, vector),
            Change::Delete { seq, id } => {
                self.0.update([2u8]);
                self.0.update(id.get().to_le_bytes());
                self.0.update(seq.to_le_bytes());
            }
        }
    }

    /// The digest, in hex.
    pub(crate) fn hex(self) -> String {
        hex(&self.0.finalize())
    }
}

/// `bytes` in lower-case hex (the digest, the store id in the metadata).
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
