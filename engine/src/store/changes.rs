//! What changed since a sequence number, read in one transaction: the rows of a change export
//! (`transfer/columnar`), consistent however many writers commit meanwhile.

use std::collections::BTreeMap;

use redb::{ReadableDatabase, ReadableTable};

use super::{db, decode_vector, Op, Store, CHANGES, FEEDBACK, ITEMS, META, VECTORS};
use crate::error::Result;
use crate::invalid::InvalidInput;
use crate::item::{MemoryId, MemoryItem};

/// One memory as it is now, or the news that it is gone.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// It exists: its item, vector and feedback record (JSON), if any.
    Upsert {
        /// The change that last touched it (0 in a full export).
        seq: u64,
        item: Box<MemoryItem>,
        vector: Vec<f32>,
        feedback: Option<String>,
    },
    /// It was deleted or forgotten at `seq`.
    Delete { seq: u64, id: MemoryId },
}

/// The changes of one export.
#[derive(Debug)]
pub(crate) struct Changes {
    /// The last sequence number they cover (pass it as `since` next time).
    pub(crate) through: u64,
    /// In id order.
    pub(crate) rows: Vec<Change>,
}

impl Store {
    /// Every memory passing `keep` (`since` = None), or every memory changed after `since`:
    /// those that exist as upserts (if they pass `keep`), those gone as deletes.
    ///
    /// # Errors
    /// [`InvalidInput::Options`] when the change log no longer reaches back to `since` (a store
    /// written before change logs were kept, checkpointed past it); [`Error::Store`],
    /// [`Error::Corrupt`].
    pub(crate) fn changes(
        &self,
        since: Option<u64>,
        dim: usize,
        keep: impl Fn(&MemoryItem) -> bool,
    ) -> Result<Changes> {
        let tx = self.db.read().begin_read().map_err(db)?;
        let meta = tx.open_table(META).map_err(db)?;
        let u64_of = |key: &str| -> Result<u64> {
            Ok(meta
                .get(key)
                .map_err(db)?
                .and_then(|v| v.value().try_into().ok().map(u64::from_le_bytes))
                .unwrap_or(0))
        };
        let through = u64_of("seq")?;
        let pruned = u64_of("pruned_through")?;
        let items = tx.open_table(ITEMS).map_err(db)?;
        let vectors = tx.open_table(VECTORS).map_err(db)?;
        let feedback = tx.open_table(FEEDBACK).map_err(db)?;
        // id -> (seq of its last change, gone?)
        let mut touched: BTreeMap<MemoryId, (u64, bool)> = BTreeMap::new();
        match since {
            None => {
                for row in items.iter().map_err(db)? {
                    touched.insert(row.map_err(db)?.0.value(), (0, false));
                }
            }
            Some(since) if since < pruned => {
                return Err(InvalidInput::Options(format!(
                    "changes up to {pruned} were pruned from this store's log (before it kept them); export in full, then use --since {through}"
                ))
                .into())
            }
            Some(since) if since > through => {
                return Err(InvalidInput::Options(format!(
                    "since {since} is past this store's last change {through}"
                ))
                .into())
            }
            Some(since) => {
                let changes = tx.open_table(CHANGES).map_err(db)?;
                for row in changes.range(since + 1..=through).map_err(db)? {
                    let (k, v) = row.map_err(db)?;
                    let (id, op) = v.value();
                    touched.insert(id, (k.value(), op == Op::Delete as u8));
                }
            }
        }
        let mut rows = Vec::with_capacity(touched.len());
        for (id, (seq, gone)) in touched {
            let Some(bytes) = items.get(id).map_err(db)? else {
                if gone || since.is_some() {
                    rows.push(Change::Delete { seq, id });
                }
                continue;
            };
            let item = MemoryItem::decode(bytes.value())
                .map_err(|e| self.corrupt(format!("item {id}: {e}")))?;
            if !keep(&item) {
                continue;
            }
            let vector = vectors
                .get(id)
                .map_err(db)?
                .and_then(|v| decode_vector(v.value()))
                .filter(|v| v.len() == dim)
                .ok_or_else(|| self.corrupt(format!("no vector of {dim} for {id}")))?;
            let feedback = match feedback.get(id).map_err(db)? {
                Some(v) => Some(
                    String::from_utf8(v.value().to_vec())
                        .map_err(|_| self.corrupt(format!("feedback of {id}")))?,
                ),
                None => None,
            };
            rows.push(Change::Upsert {
                seq,
                item: Box::new(item),
                vector,
                feedback,
            });
        }
        Ok(Changes { through, rows })
    }
}
