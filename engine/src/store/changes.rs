//! What changed since a sequence number, read in one transaction: the rows of a change export
//! (`transfer/columnar`), consistent however many writers commit meanwhile.

use std::collections::BTreeMap;

use redb::ReadableTable;

use super::{db, Store, CHANGES, FEEDBACK, ITEMS, META, VECTORS};
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
        let tx = self.read_tx()?;
        let meta = tx.open_table(META).map_err(db)?;
        let u64_of = |key: &str| -> Result<u64> {
            let value = meta.get(key).map_err(db)?;
            self.decode_meta_u64(key, value.as_ref().map(|v| v.value()))
        };
        let through = u64_of("seq")?;
        let pruned = u64_of("pruned_through")?;
        let items = tx.open_table(ITEMS).map_err(db)?;
        let vectors = tx.open_table(VECTORS).map_err(db)?;
        let feedback = tx.open_table(FEEDBACK).map_err(db)?;
        // The row of memory `id`, last changed at `seq`, stored as `bytes` (None: it is gone).
        let row = |id: MemoryId, seq: u64, bytes: Option<&[u8]>| -> Result<Option<Change>> {
            let Some(bytes) = bytes else {
                return Ok(Some(Change::Delete { seq, id }));
            };
            let Some(item) = self.decode_item(id, bytes)? else {
                return Ok(None); // an erased scope's, in a copy taken before the erasure
            };
            if !keep(&item) {
                return Ok(None);
            }
            let vector = match vectors.get(id.get()).map_err(db)? {
                Some(v) => self.decode_vector_of(id, v.value())?,
                None => None,
            }
            .filter(|v| v.len() == dim)
            .ok_or_else(|| self.corrupt(format!("no vector of {dim} for {id}")))?;
            let feedback = match feedback.get(id.get()).map_err(db)? {
                Some(v) => {
                    let plain = self.sealing.open(
                        crate::crypt::seal::Table::Feedback,
                        &super::sealing::rid(id.get()),
                        v.value(),
                    )?;
                    plain
                        .map(|p| String::from_utf8(p.into_owned()))
                        .transpose()
                        .map_err(|_| self.corrupt(format!("feedback of {id}")))?
                }
                None => None,
            };
            Ok(Some(Change::Upsert {
                seq,
                item: Box::new(item),
                vector,
                feedback,
            }))
        };
        let mut rows = Vec::new();
        match since {
            // Every memory, read once in id order.
            None => {
                for entry in items.iter().map_err(db)? {
                    let (k, v) = entry.map_err(db)?;
                    rows.extend(row(MemoryId::new(k.value()), 0, Some(v.value()))?);
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
            // The memories the log names, each once with its last change: as they are now, or
            // a delete when they are gone.
            Some(since) => {
                let changes = tx.open_table(CHANGES).map_err(db)?;
                let mut last: BTreeMap<MemoryId, u64> = BTreeMap::new();
                for entry in changes.range(since + 1..=through).map_err(db)? {
                    let (k, v) = entry.map_err(db)?;
                    last.insert(MemoryId::new(v.value().0), k.value());
                }
                for (id, seq) in last {
                    let stored = items.get(id.get()).map_err(db)?;
                    rows.extend(row(id, seq, stored.as_ref().map(|v| v.value()))?);
                }
            }
        }
        Ok(Changes { through, rows })
    }
}
