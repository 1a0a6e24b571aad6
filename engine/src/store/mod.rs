//! The source of truth: a redb database (items, vectors, content hashes, change log, metadata).
//!
//! Tables:
//! - `items`: id → versioned item encoding ([`crate::MemoryItem`]).
//! - `vectors`: id → the item's embedding, little-endian `f32`s (so the index can always be
//!   rebuilt without the model).
//! - `catalog`: id → the few fields filters need ([`CatalogRecord`]), loaded into memory on open.
//! - `hashes`: content hash → id, for exact de-duplication.
//! - `changes`: sequence number → (id, op): the change log the index replays past its
//!   checkpoint and change exports read back (kept; stores written before it was kept pruned
//!   it at checkpoints, up to `pruned_through`).
//! - `sentences`: id → the vectors of the item's sentences, 8-bit (`sentences.rs`), for a text
//!   pooled from several.
//! - `meta`: next id, last sequence number, model fingerprint, format version.
//!
//! Every write is one redb transaction; its durability is [`redb::Durability::Immediate`]
//! (fsync) unless the store is in grouped mode.

mod changes;
mod check;
pub(crate) mod dir;
pub(crate) mod faults;
mod files;
pub(crate) mod lock;
pub(crate) mod manifest;
mod read_view;
pub(crate) mod record;
pub(crate) mod salvage;
mod scan;
pub(crate) mod sealing;
pub(crate) mod sentences;
mod sync_map;
mod tx;
mod vacuum;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use redb::{
    Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition, TableHandle,
};

pub(crate) use changes::Change;
pub(crate) use files::{decode_vector, encode_vector, open_database, write_atomic};
pub(crate) use record::CatalogRecord;
pub(crate) use sync_map::{
    forgotten_next_key, forgotten_prev_key, lineage_prev_key, receipt_echo_key, Carried, Counter,
    Echo, SyncEntry,
};
pub(crate) use tx::Tx;

use faults::StorageFaults;

use crate::error::{Error, Result, StoreError};
use crate::item::{MemoryId, MemoryItem};

/// Converts any of redb's error types into [`Error::Store`].
pub(crate) fn db(e: impl Into<redb::Error>) -> Error {
    Error::Store(StoreError(Box::new(e.into())))
}

/// Every table's name, in the order of the definitions below (a store missing one gets it on
/// open).
const TABLES: [&str; 15] = [
    "items",
    "vectors",
    "catalog",
    "hashes",
    "changes",
    "meta",
    "forget_log",
    "feedback",
    "subjects",
    "subject_state",
    "receipts",
    "sync_gids",
    "sync_locals",
    "sync_counts",
    "sentences",
];
pub(crate) const ITEMS: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[0]);
pub(crate) const VECTORS: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[1]);
pub(crate) const CATALOG: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[2]);
pub(crate) const HASHES: TableDefinition<&[u8], u64> = TableDefinition::new(TABLES[3]);
pub(crate) const CHANGES: TableDefinition<u64, (u64, u8)> = TableDefinition::new(TABLES[4]);
pub(crate) const META: TableDefinition<&str, &[u8]> = TableDefinition::new(TABLES[5]);
pub(crate) const FORGET_LOG: TableDefinition<(i64, u64), &[u8]> = TableDefinition::new(TABLES[6]);
/// Feedback per memory: JSON [`crate::FeedbackState`].
pub(crate) const FEEDBACK: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[7]);
/// Subject and document keys → the memory that holds them (derived from items, like hashes).
pub(crate) const SUBJECTS: TableDefinition<&str, u64> = TableDefinition::new(TABLES[8]);
/// Merge state of subject memories: JSON.
pub(crate) const SUBJECT_STATE: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[9]);
/// The `meta` key counting the data keys an encrypted store's erasures destroyed: a key
/// file that knows of fewer is older than the store (rolled back past an erasure), and the
/// open refuses it.
pub(crate) const RING_DESTROYED: &str = "ring_destroyed";

/// The `meta` key of an erasure under way ([`Tx::set_pending_erasure`]).
pub(crate) const PENDING_ERASURE: &str = "erasure_pending";
/// Its record key when sealed.
pub(crate) const PENDING_ERASURE_RID: &[u8] = b"erasure_pending";

/// Erasure receipts, in order: number → the receipt's file (signed JSON line).
pub(crate) const RECEIPTS: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[10]);

/// Sync (`sync_map.rs`): a memory's id on every device (the device that made it, its id
/// there) → what this store knows of it ([`SyncEntry`], fixed width). Kept after the memory
/// is gone: it is the tombstone a later copy meets.
pub(crate) const SYNC_GIDS: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new(TABLES[11]);
/// Sync: a local id → its id on every device, for the memories another device made.
pub(crate) const SYNC_LOCALS: TableDefinition<u64, (u64, u64)> = TableDefinition::new(TABLES[12]);
/// Sync: each device's counters on a version ((device that made it, id there, device that
/// counted) → (feedbacks, sum of their levels, reinforcements)): counters that only their
/// device raises, summed.
pub(crate) const SYNC_COUNTS: TableDefinition<(u64, u64, u64), (u32, u32, u32)> =
    TableDefinition::new(TABLES[13]);
/// A memory's sentences' own vectors, 8-bit (`sentences.rs`): derived, like `vectors`, from
/// its text; absent for a text of one sentence.
pub(crate) const SENTENCES: TableDefinition<u64, &[u8]> = TableDefinition::new(TABLES[14]);

/// What a logged change did to an item's vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    /// The item was added or its vector replaced.
    Put = 1,
    /// The item was removed.
    Delete = 2,
    /// Only metadata changed (the index is unaffected).
    Meta = 3,
}

/// The files a store directory holds (with their temporary names): nothing else may write them.
pub(crate) const OWN_FILES: [&str; 9] = [
    "store.redb",
    "store.redb.rewrite",
    "index.mlx",
    "index.mlx.tmp",
    // An encrypted store's index file on its way in.
    "index.tmp",
    "manifest.json",
    "manifest.tmp",
    "LOCK",
    // The socket through which `memloop mcp` shares the store with other processes.
    "memloop.sock",
];

/// True for a later index generation's name, `index-<n>.mlx` (or its temporary file,
/// `index-<n>.tmp` or `index-<n>.mlx.tmp`), written beside `index.mlx` where a mapped file
/// cannot be renamed over.
pub(crate) fn is_index_generation(name: &str) -> bool {
    let stem = name
        .strip_suffix(".mlx.tmp")
        .or_else(|| name.strip_suffix(".mlx"))
        .or_else(|| name.strip_suffix(".tmp"));
    stem.and_then(|s| s.strip_prefix("index-"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// True for the name of one of a store directory's own files.
pub(crate) fn is_own_file(name: &str) -> bool {
    OWN_FILES.contains(&name) || is_index_generation(name)
}

/// True if `dir` holds a store (its database file exists).
pub(crate) fn is_store(dir: &Path) -> bool {
    dir.join("store.redb").is_file()
}

/// The database of one store directory.
pub(crate) struct Store {
    /// Shared for transactions (which do not borrow it), exclusive for compaction.
    pub(crate) db: parking_lot::RwLock<Database>,
    pub(crate) path: PathBuf,
    /// The fault seam, when a test installed one.
    pub(crate) faults: Option<Arc<StorageFaults>>,
    /// Set by a failed commit: a failed fsync is never retried, and nothing is written until
    /// the database is reopened ([`Store::recover`]).
    poisoned: Arc<Mutex<Option<String>>>,
    /// What `db` is ([`Attached`] as a number): the file, a read view of it, or a stand-in.
    attached: std::sync::atomic::AtomicU8,
    /// The key ring's sealer of an encrypted store (set once at open, before any record is
    /// read).
    pub(crate) sealing: sealing::Sealing,
}

/// What a store's `db` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Attached {
    /// The database file, open for reading and writing.
    Live = 0,
    /// A read-only view recovered in memory after a failed commit ([`Store::recover`]).
    ReadView = 1,
    /// A stand-in while neither could be opened: nothing may be read or written.
    Detached = 2,
}

impl Store {
    /// Opens or creates `dir/store.redb`, creating every table; file operations go through
    /// `faults` when given.
    pub(crate) fn open(dir: &Path, faults: Option<Arc<StorageFaults>>) -> Result<Store> {
        let path = dir.join("store.redb");
        // An interrupted rewrite left its unfinished copy; the old file is intact.
        vacuum::remove_if_exists(&vacuum::rewrite_path(&path))?;
        let database = open_database(&path, faults.as_ref())?;
        let store = |database| Store {
            db: parking_lot::RwLock::new(database),
            path: path.clone(),
            faults: faults.clone(),
            poisoned: Arc::default(),
            attached: std::sync::atomic::AtomicU8::new(Attached::Live as u8),
            sealing: sealing::Sealing::default(),
        };
        if Self::has_tables(&database)? {
            return Ok(store(database));
        }
        let tx = database.begin_write().map_err(db)?;
        tx.open_table(ITEMS).map_err(db)?;
        tx.open_table(VECTORS).map_err(db)?;
        tx.open_table(CATALOG).map_err(db)?;
        tx.open_table(HASHES).map_err(db)?;
        tx.open_table(CHANGES).map_err(db)?;
        tx.open_table(META).map_err(db)?;
        tx.open_table(FORGET_LOG).map_err(db)?;
        tx.open_table(FEEDBACK).map_err(db)?;
        tx.open_table(SUBJECTS).map_err(db)?;
        tx.open_table(SUBJECT_STATE).map_err(db)?;
        tx.open_table(RECEIPTS).map_err(db)?;
        tx.open_table(SYNC_GIDS).map_err(db)?;
        tx.open_table(SYNC_LOCALS).map_err(db)?;
        tx.open_table(SYNC_COUNTS).map_err(db)?;
        tx.open_table(SENTENCES).map_err(db)?;
        tx.commit().map_err(db)?;
        Ok(store(database))
    }

    /// The metadata values `keys` (in order) of the database in `dir`, read without opening
    /// it for writing (redb's open for writing may write its header): `None` when there is no
    /// database yet, or it cannot be read so (it needs the recovery only a writer does, or a
    /// writer holds it).
    pub(crate) fn peek_meta(dir: &Path, keys: &[&str]) -> Option<Vec<Option<Vec<u8>>>> {
        let path = dir.join("store.redb");
        if !path.is_file() {
            return None;
        }
        let read = || -> std::result::Result<Vec<Option<Vec<u8>>>, redb::Error> {
            use redb::ReadableDatabase;
            let database = redb::ReadOnlyDatabase::open(&path)?;
            let tx = database.begin_read()?;
            let table = match tx.open_table(META) {
                Ok(t) => t,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(vec![None; keys.len()]),
                Err(e) => return Err(e.into()),
            };
            keys.iter()
                .map(|k| Ok(table.get(*k)?.map(|v| v.value().to_vec())))
                .collect()
        };
        crate::contained::catch(read).and_then(|r| r.ok())
    }

    /// A read transaction on the last committed state. After a failed commit the database
    /// is first reopened ([`Store::recover`]), so reads go on, from a read-only view in
    /// memory if the disk is still full.
    pub(crate) fn read_tx(&self) -> Result<redb::ReadTransaction> {
        if self.is_poisoned() && self.attached() != Attached::ReadView {
            // A failure here is retried by the next call; a read view keeps reads going.
            let _ = self.recover();
        }
        let database = self.db.read();
        if self.attached() == Attached::Detached {
            return Err(
                self.poisoned_error("reopening the database failed, retried at the next call")
            );
        }
        database.begin_read().map_err(db)
    }

    /// What `db` is now.
    fn attached(&self) -> Attached {
        match self.attached.load(std::sync::atomic::Ordering::Acquire) {
            0 => Attached::Live,
            1 => Attached::ReadView,
            _ => Attached::Detached,
        }
    }

    fn set_attached(&self, a: Attached) {
        self.attached
            .store(a as u8, std::sync::atomic::Ordering::Release);
    }

    /// [`Error::Poisoned`] with the failure that poisoned the store and `then`.
    fn poisoned_error(&self, then: &str) -> Error {
        let cause = self.poisoned.lock().clone().unwrap_or_default();
        Error::Poisoned {
            path: self.path.clone(),
            cause: format!("{cause}; {then}"),
        }
    }

    /// Fails unless `db` is the database file itself, open for writing.
    fn ensure_writable(&self) -> Result<()> {
        if self.is_poisoned() {
            self.recover()?;
        }
        match self.attached() {
            Attached::Live => Ok(()),
            _ => Err(self.poisoned_error("the database could not be reopened for writing")),
        }
    }

    /// After a failed commit: opens the database file again, so redb recovers its last
    /// committed state (what a failed fsync left on disk is known only then), and clears the
    /// poisoning: writes resume once the cause (a full disk) is gone, with no restart. While
    /// the file cannot be reopened for writing (its recovery writes, and the disk is full),
    /// reads go on from a view that recovers in memory ([`read_view::ReadView`]) and this
    /// fails, to be tried again by the next write.
    pub(crate) fn recover(&self) -> Result<()> {
        let mut guard = self.db.write();
        if !self.is_poisoned() {
            return Ok(());
        }
        if self.attached() == Attached::Live {
            // The failed database writes nothing more (redb refuses every operation after
            // an I/O error) but holds the file's lock: it closes before the file reopens.
            let stand_in = Database::builder()
                .create_with_backend(redb::backends::InMemoryBackend::new())
                .map_err(db)?;
            self.set_attached(Attached::Detached);
            drop(std::mem::replace(&mut *guard, stand_in));
        }
        // A read view holds no lock: the file can reopen beside it.
        let failure = match open_database(&self.path, self.faults.as_ref()) {
            Ok(reopened) => {
                *guard = reopened;
                self.set_attached(Attached::Live);
                *self.poisoned.lock() = None;
                return Ok(());
            }
            Err(e) => e,
        };
        if self.attached() == Attached::Detached {
            let view = read_view::ReadView::open(&self.path)
                .map_err(|e| Error::io(&self.path, "open a read view", e))
                .and_then(|v| Database::builder().create_with_backend(v).map_err(db));
            if let Ok(view) = view {
                *guard = view;
                self.set_attached(Attached::ReadView);
            }
        }
        Err(self.poisoned_error(&format!(
            "reopening the database for writing failed ({failure}); reads go on from the last committed state"
        )))
    }

    /// True after a failed commit, until the database was reopened.
    pub(crate) fn is_poisoned(&self) -> bool {
        self.poisoned.lock().is_some()
    }

    /// Counts one file operation of the engine's own (not redb's) through the fault seam.
    pub(crate) fn file_op(&self, path: &Path, op: &'static str) -> Result<()> {
        faults::file_op(self.faults.as_ref(), path, op)
    }

    /// True if every table exists (a store created before), so open needs no write.
    fn has_tables(database: &Database) -> Result<bool> {
        let tx = database.begin_read().map_err(db)?;
        let names: Vec<String> = tx
            .list_tables()
            .map_err(db)?
            .map(|t| t.name().to_string())
            .collect();
        Ok(TABLES.iter().all(|n| names.iter().any(|x| x == n)))
    }

    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            detail: detail.into(),
        }
    }

    /// A metadata value.
    pub(crate) fn meta(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(META).map_err(db)?;
        Ok(t.get(key).map_err(db)?.map(|v| v.value().to_vec()))
    }

    /// Every metadata value whose key starts with `prefix`, by key.
    pub(crate) fn meta_with_prefix(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>)>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(META).map_err(db)?;
        let mut out = Vec::new();
        for entry in t.range(prefix..).map_err(db)? {
            let (k, v) = entry.map_err(db)?;
            if !k.value().starts_with(prefix) {
                break;
            }
            out.push((k.value().to_string(), v.value().to_vec()));
        }
        Ok(out)
    }

    /// A u64 metadata value (0 when absent).
    pub(crate) fn meta_u64(&self, key: &str) -> Result<u64> {
        self.decode_meta_u64(key, self.meta(key)?.as_deref())
    }

    /// The u64 in metadata value `bytes` of `key` (0 when absent).
    pub(crate) fn decode_meta_u64(&self, key: &str, bytes: Option<&[u8]>) -> Result<u64> {
        match bytes {
            None => Ok(0),
            Some(b) => {
                Ok(u64::from_le_bytes(b.try_into().map_err(|_| {
                    self.corrupt(format!("meta `{key}` is not a u64"))
                })?))
            }
        }
    }

    /// The item `id`, if present.
    pub(crate) fn item(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        Ok(self.items(&[id])?.pop())
    }

    /// The item stored as `bytes` under `id`; `None` if its scope was erased (its key
    /// destroyed).
    pub(crate) fn decode_item(&self, id: MemoryId, bytes: &[u8]) -> Result<Option<MemoryItem>> {
        let Some(plain) = self.sealing.open(
            crate::crypt::seal::Table::Items,
            &sealing::rid(id.get()),
            bytes,
        )?
        else {
            return Ok(None);
        };
        MemoryItem::decode(&plain)
            .map(Some)
            .map_err(|e| self.corrupt(format!("item {id}: {e}")))
    }

    /// The vector stored as `bytes` under `id`; `None` if its scope was erased.
    pub(crate) fn decode_vector_of(&self, id: MemoryId, bytes: &[u8]) -> Result<Option<Vec<f32>>> {
        let Some(plain) = self.sealing.open(
            crate::crypt::seal::Table::Vectors,
            &sealing::rid(id.get()),
            bytes,
        )?
        else {
            return Ok(None);
        };
        decode_vector(&plain)
            .map(Some)
            .ok_or_else(|| self.corrupt(format!("vector of memory {id}")))
    }

    /// The items `ids` (missing ones skipped), read in one transaction.
    pub(crate) fn items(&self, ids: &[MemoryId]) -> Result<Vec<MemoryItem>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(ITEMS).map_err(db)?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if let Some(v) = t.get(id.get()).map_err(db)? {
                out.extend(self.decode_item(id, v.value())?);
            }
        }
        Ok(out)
    }

    /// A side-table value (feedback or subject state) of memory `id`.
    pub(crate) fn side(
        &self,
        table: TableDefinition<u64, &[u8]>,
        id: MemoryId,
    ) -> Result<Option<Vec<u8>>> {
        Ok(self.sides(table, &[id])?.remove(0))
    }

    /// Side-table values of `ids`, in one transaction (`None` where absent).
    pub(crate) fn sides(
        &self,
        table: TableDefinition<u64, &[u8]>,
        ids: &[MemoryId],
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(table).map_err(db)?;
        let which = sealing::side_table(table);
        ids.iter()
            .map(|&id| match t.get(id.get()).map_err(db)? {
                None => Ok(None),
                Some(v) => Ok(self
                    .sealing
                    .open(which, &sealing::rid(id.get()), v.value())?
                    .map(|p| p.into_owned())),
            })
            .collect()
    }

    /// The current memory holding subject (or document) `subject` of `kind` in `namespace`
    /// and exactly `scope` (user, agent, session: a field left out must be absent too), so
    /// one user's document or subject never answers for another's. A key written before
    /// keys carried the scope is still found, when its memory has that scope.
    pub(crate) fn by_subject(
        &self,
        namespace: &str,
        kind: crate::item::Kind,
        subject: &str,
        scope: [Option<&str>; 3],
    ) -> Result<Option<MemoryId>> {
        let keys = [
            Some(key_of(namespace, kind, subject, scope)),
            scope
                .iter()
                .any(Option::is_some)
                .then(|| key_of(namespace, kind, subject, [None; 3])),
        ];
        let tx = self.read_tx()?;
        let t = tx.open_table(SUBJECTS).map_err(db)?;
        let user = scope[0];
        for key in keys
            .into_iter()
            .flatten()
            .filter_map(|k| self.sealing.subject_key(user, k))
        {
            let Some(id) = t.get(key.as_str()).map_err(db)?.map(|v| v.value()) else {
                continue;
            };
            let owns = self.item(MemoryId::new(id))?.is_some_and(|i| {
                i.namespace == namespace
                    && i.kind == kind
                    && i.subject.as_deref() == Some(subject)
                    && i.scope_fields() == scope
            });
            if owns {
                return Ok(Some(MemoryId::new(id)));
            }
        }
        Ok(None)
    }

    /// Stored vectors of `ids` (missing ones skipped), in one transaction.
    pub(crate) fn vectors(&self, ids: &[MemoryId]) -> Result<Vec<(MemoryId, Vec<f32>)>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(VECTORS).map_err(db)?;
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            if let Some(v) = t.get(id.get()).map_err(db)? {
                if let Some(v) = self.decode_vector_of(id, v.value())? {
                    out.push((id, v));
                }
            }
        }
        Ok(out)
    }

    /// Calls `f` with every stored memory, by id, in one read transaction.
    pub(crate) fn for_each_item(&self, mut f: impl FnMut(MemoryItem)) -> Result<()> {
        let tx = self.read_tx()?;
        let t = tx.open_table(ITEMS).map_err(db)?;
        for entry in t.iter().map_err(db)? {
            let (k, v) = entry.map_err(db)?;
            if let Some(item) = self.decode_item(MemoryId::new(k.value()), v.value())? {
                f(item);
            }
        }
        Ok(())
    }

    /// The last erasure receipt and its number, if any (its file, opened).
    pub(crate) fn last_receipt(&self) -> Result<Option<(u64, Vec<u8>)>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(RECEIPTS).map_err(db)?;
        let last = t.last().map_err(db)?;
        last.map(|(k, v)| Ok((k.value(), self.open_receipt(k.value(), v.value())?)))
            .transpose()
    }

    /// The erasure a crash interrupted, if any (what [`Tx::set_pending_erasure`] recorded).
    pub(crate) fn pending_erasure(&self) -> Result<Option<Vec<u8>>> {
        let Some(stored) = self.meta(PENDING_ERASURE)? else {
            return Ok(None);
        };
        match self.sealing.open(
            crate::crypt::seal::Table::Receipts,
            PENDING_ERASURE_RID,
            &stored,
        )? {
            Some(plain) => Ok(Some(plain.into_owned())),
            None => Err(self.corrupt("the pending erasure is sealed under a destroyed key")),
        }
    }

    /// Every erasure receipt of the log with its number, in order (their files, opened).
    pub(crate) fn receipts(&self) -> Result<Vec<(u64, Vec<u8>)>> {
        let tx = self.read_tx()?;
        let t = tx.open_table(RECEIPTS).map_err(db)?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(db)? {
            let (k, v) = entry.map_err(db)?;
            out.push((k.value(), self.open_receipt(k.value(), v.value())?));
        }
        Ok(out)
    }

    /// The file of receipt `n` as stored: sealed in an encrypted store (a receipt names the
    /// user erased), under the store-wide key, which no erasure destroys. A receipt an
    /// encrypted store logged before receipts were sealed is plain JSON, read as it is.
    fn open_receipt(&self, n: u64, stored: &[u8]) -> Result<Vec<u8>> {
        if self.sealing.on() && stored.first() == Some(&b'{') {
            return Ok(stored.to_vec());
        }
        match self.sealing.open(
            crate::crypt::seal::Table::Receipts,
            &n.to_le_bytes(),
            stored,
        )? {
            Some(plain) => Ok(plain.into_owned()),
            None => Err(self.corrupt(format!("receipt {n} is sealed under a destroyed key"))),
        }
    }

    /// Number of stored memories (O(1)).
    pub(crate) fn count(&self) -> Result<usize> {
        let tx = self.read_tx()?;
        let t = tx.open_table(ITEMS).map_err(db)?;
        Ok(t.len().map_err(db)? as usize)
    }

    /// The id holding `hash` (the content hash of a memory of `user`), if any.
    pub(crate) fn by_hash(&self, hash: &[u8; 32], user: Option<&str>) -> Result<Option<MemoryId>> {
        let Some(hash) = self.sealing.hash_key(user, hash) else {
            return Ok(None);
        };
        let tx = self.read_tx()?;
        let t = tx.open_table(HASHES).map_err(db)?;
        Ok(t.get(hash.as_slice())
            .map_err(db)?
            .map(|v| MemoryId::new(v.value())))
    }
}

/// The key under which a subject or document memory is found (namespace, kind, subject and,
/// for a scoped memory, its scope).
fn subject_key(item: &MemoryItem) -> Option<String> {
    use crate::item::Kind;
    match (item.kind, &item.subject) {
        (Kind::Subject | Kind::Document, Some(s)) => {
            Some(key_of(&item.namespace, item.kind, s, item.scope_fields()))
        }
        _ => None,
    }
}

/// The key an older store wrote for a scoped subject (no scope in it).
fn legacy_subject_key(item: &MemoryItem) -> Option<String> {
    match (subject_key(item), &item.subject) {
        (Some(_), Some(s)) if item.scope_fields().iter().any(Option::is_some) => {
            Some(key_of(&item.namespace, item.kind, s, [None; 3]))
        }
        _ => None,
    }
}

/// `namespace` 0x1F `kind` 0x1F `subject`, then for a scoped memory 0x1E and its scope as a
/// JSON array (`["ana",null,null]`). Lookups check the memory found, so no crafted name can
/// make one key answer for another.
fn key_of(
    namespace: &str,
    kind: crate::item::Kind,
    subject: &str,
    scope: [Option<&str>; 3],
) -> String {
    let mut key = format!("{namespace}\u{1f}{}\u{1f}{subject}", kind.name());
    if scope.iter().any(Option::is_some) {
        key.push('\u{1e}');
        key.push_str(&serde_json::to_string(&scope).expect("strings always serialise"));
    }
    key
}
