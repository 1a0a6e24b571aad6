//! Memory transfer: one portable, checksummed file per export; import merges it.
//!
//! File layout (little-endian):
//! ```text
//! magic     8 bytes  \x89MLEXP\r\n
//! version   u32      1
//! model     u32 length + UTF-8 fingerprint of the embedding model
//! dim       u32      vector dimension
//! records   repeated: tag u8 = 1, length u32, xxh3-64 of the payload u64, payload
//!           payload = item length u32, item (versioned encoding), dim × f32 vector
//! end       tag u8 = 0, record count u64, xxh3-64 of every byte before the end tag
//! ```
//! A file that is truncated, altered or has trailing bytes is rejected before anything is
//! imported.

use std::path::Path;

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::error::{Error, Result};
use crate::filter::MemoryFilter;
use crate::item::{MemoryId, MemoryItem};
use crate::memory::Memory;
use crate::store::decode_vector;

const MAGIC: &[u8; 8] = b"\x89MLEXP\r\n";
const VERSION: u32 = 1;
/// Texts re-embedded per call when a file comes from another model.
const EMBED_CHUNK: usize = 512;

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct ImportReport {
    /// Records in the file.
    pub records: usize,
    /// New memories added.
    pub added: usize,
    /// Existing memories whose metadata the (newer) imported record replaced.
    pub merged: usize,
    /// Records already present with metadata at least as new.
    pub unchanged: usize,
    /// True if the file came from another model and its texts were re-embedded.
    pub reembedded: bool,
}

impl Memory {
    /// Writes the memories passing `filter` (superseded versions included: history travels
    /// with them) to one portable file at `path`, atomically. Returns how many were written.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a path that would replace one of the store's own files
    /// (`store.redb`, `index.mlx`, …); [`Error::Io`] or [`Error::Store`]; `path` is then
    /// untouched.
    pub fn export(&self, path: impl AsRef<Path>, filter: &MemoryFilter) -> Result<usize> {
        let path = path.as_ref();
        self.refuse_inside_store(path)?;
        let filter = filter.clone().include_superseded(true);
        let items = self.scan(&filter, usize::MAX)?;
        let dim = self.embedder().dim();
        let mut out = ExportWriter::new(self.fingerprint(), dim, items.len());
        let ids: Vec<MemoryId> = items.iter().map(|i| i.id).collect();
        for (item, vector) in items.iter().zip(self.store().vector_bytes(&ids)?) {
            out.record(&item.encode(), &vector);
        }
        let out = out.finish();
        crate::store::write_atomic(path, &out, self.store().faults.as_ref())?;
        Ok(items.len())
    }

    /// Merges an export file into this store, all or nothing: the whole file is read, checked
    /// (checksums, every record decoded within its bounds, every vector finite) and, if it
    /// came from another model, re-embedded with this store's model before one transaction
    /// writes it. Memories already here (same namespace, kind and text) are not copied: their
    /// metadata is replaced when the imported record is newer. New memories keep their ids
    /// when those are free here; version links follow the ids.
    ///
    /// # Errors
    /// [`Error::Corrupt`] / [`Error::UnsupportedVersion`] for a bad file; [`Error::Embed`],
    /// [`Error::Store`], [`Error::Index`]. On any error nothing was imported.
    pub fn import(&self, path: impl AsRef<Path>) -> Result<ImportReport> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, "read", e))?;
        let file = parse(path, &bytes)?;
        let dim = self.embedder().dim();
        let reembedded = file.model != self.fingerprint();
        if !reembedded && file.dim != dim {
            return Err(corrupt(path, "dimension differs from the model it names"));
        }
        let mut report = ImportReport {
            records: file.records.len(),
            reembedded,
            ..Default::default()
        };
        // Everything is checked before anything is written, and everything is written in one
        // transaction: a file that fails anywhere leaves the store exactly as it was.
        let mut records = Vec::with_capacity(file.records.len());
        if reembedded {
            for chunk in file.records.chunks(EMBED_CHUNK) {
                let texts: Vec<&str> = chunk.iter().map(|(i, _)| i.text.as_str()).collect();
                let vectors = self.embedder().embed_documents(&texts)?;
                records.extend(chunk.iter().map(|(i, _)| i.clone()).zip(vectors));
            }
        } else {
            records = file.records;
        }
        for (n, (item, vector)) in records.iter_mut().enumerate() {
            if item.text.trim().is_empty() {
                return Err(corrupt(path, format!("record {n}: empty text")));
            }
            let v = crate::memory::unit(std::mem::take(vector), dim)
                .map_err(|e| corrupt(path, format!("record {n}: {e}")))?;
            *vector = v;
        }
        let mut history = self.superseded_versions()?;
        self.import_records(records, &mut history, &mut report)?;
        Ok(report)
    }
}

impl Memory {
    /// Fails if writing `path` (or its temporary file) would replace one of this store's own
    /// files: the database, the index, the manifest or the lock.
    fn refuse_inside_store(&self, path: &Path) -> Result<()> {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let (Ok(parent), Ok(store)) = (parent.canonicalize(), self.dir().canonicalize()) else {
            return Ok(()); // a missing folder: the write fails with its own clear error
        };
        let tmp = path.with_extension("tmp");
        let names = [path.file_name(), tmp.file_name()];
        let clash = names.iter().flatten().find(|n| {
            crate::store::OWN_FILES
                .iter()
                .any(|own| n.to_str() == Some(own))
        });
        if let (true, Some(name)) = (parent == store, clash) {
            return Err(Error::InvalidInput(format!(
                "{}: an export cannot be written over {} in the store directory {} (it is the store's own file)",
                path.display(),
                name.to_string_lossy(),
                store.display()
            )));
        }
        Ok(())
    }
}

/// A parsed export file.
pub(crate) struct ExportFile {
    model: String,
    dim: usize,
    records: Vec<(MemoryItem, Vec<f32>)>,
}

fn corrupt(path: &Path, detail: impl Into<String>) -> Error {
    Error::Corrupt {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

/// Builds an export file in memory, record by record.
pub(crate) struct ExportWriter {
    out: Vec<u8>,
    count: u64,
}

impl ExportWriter {
    /// A file for vectors of `dim` from model `model`, sized for about `records` records.
    pub(crate) fn new(model: &str, dim: usize, records: usize) -> Self {
        let mut out = Vec::with_capacity(64 + records * (dim * 4 + 256));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        put_bytes(&mut out, model.as_bytes());
        out.extend_from_slice(&(dim as u32).to_le_bytes());
        ExportWriter { out, count: 0 }
    }

    /// Appends one record: an encoded item and its stored vector bytes.
    pub(crate) fn record(&mut self, item: &[u8], vector: &[u8]) {
        let mut payload = Vec::with_capacity(4 + item.len() + vector.len());
        put_bytes(&mut payload, item);
        payload.extend_from_slice(vector);
        self.out.push(1);
        self.out
            .extend_from_slice(&(payload.len() as u32).to_le_bytes());
        self.out.extend_from_slice(&xxh3_64(&payload).to_le_bytes());
        self.out.extend_from_slice(&payload);
        self.count += 1;
    }

    /// The whole file, end record included.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        let sum = xxh3_64(&self.out);
        self.out.push(0);
        self.out.extend_from_slice(&self.count.to_le_bytes());
        self.out.extend_from_slice(&sum.to_le_bytes());
        self.out
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.bytes.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// Checks and decodes a whole export file.
pub(crate) fn parse(path: &Path, bytes: &[u8]) -> Result<ExportFile> {
    let mut c = Cursor { bytes, pos: 0 };
    if c.take(8) != Some(MAGIC.as_slice()) {
        return Err(corrupt(
            path,
            "not a memloop export file (wrong magic bytes)",
        ));
    }
    let truncated = || corrupt(path, "truncated");
    let version = c.u32().ok_or_else(truncated)?;
    if version != VERSION {
        return Err(Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            supported: VERSION,
        });
    }
    let model = std::str::from_utf8(c.bytes().ok_or_else(truncated)?)
        .map_err(|_| corrupt(path, "model fingerprint is not UTF-8"))?
        .to_string();
    let dim = c.u32().ok_or_else(truncated)? as usize;
    let mut records = Vec::new();
    loop {
        let at = c.pos;
        match c.take(1).ok_or_else(truncated)?[0] {
            1 => {
                let len = c.u32().ok_or_else(truncated)? as usize;
                let sum = c.u64().ok_or_else(truncated)?;
                let payload = c.take(len).ok_or_else(truncated)?;
                if xxh3_64(payload) != sum {
                    return Err(corrupt(
                        path,
                        format!("record {} checksum mismatch", records.len()),
                    ));
                }
                let mut p = Cursor {
                    bytes: payload,
                    pos: 0,
                };
                let bad = || corrupt(path, format!("record {} is malformed", records.len()));
                let item = MemoryItem::decode(p.bytes().ok_or_else(bad)?)
                    .map_err(|e| corrupt(path, format!("record {}: {e}", records.len())))?;
                let vector = decode_vector(&payload[p.pos..])
                    .filter(|v| v.len() == dim)
                    .ok_or_else(bad)?;
                records.push((item, vector));
            }
            0 => {
                let count = c.u64().ok_or_else(truncated)?;
                let sum = c.u64().ok_or_else(truncated)?;
                if count != records.len() as u64 {
                    return Err(corrupt(
                        path,
                        format!("end says {count} records, found {}", records.len()),
                    ));
                }
                let mut h = Xxh3::new();
                h.update(&bytes[..at]);
                if h.digest() != sum {
                    return Err(corrupt(path, "file checksum mismatch"));
                }
                if c.pos != bytes.len() {
                    return Err(corrupt(path, "trailing bytes after the end record"));
                }
                return Ok(ExportFile {
                    model,
                    dim,
                    records,
                });
            }
            t => {
                return Err(corrupt(
                    path,
                    format!("unknown record tag {t} at byte {at}"),
                ))
            }
        }
    }
}

/// The key a superseded version is recognised by across stores: content and creation time.
pub(crate) fn version_key(item: &MemoryItem) -> [u8; 40] {
    let mut k = [0u8; 40];
    k[..32].copy_from_slice(&item.content_hash());
    k[32..].copy_from_slice(&item.created.to_le_bytes());
    k
}

impl Memory {
    /// Superseded versions in this store, by version key.
    pub(crate) fn superseded_versions(&self) -> Result<FxHashMap<[u8; 40], MemoryId>> {
        let filter = MemoryFilter::new().include_superseded(true);
        Ok(self
            .scan(&filter, usize::MAX)?
            .into_iter()
            .filter(MemoryItem::is_superseded)
            .map(|i| (version_key(&i), i.id))
            .collect())
    }
}

/// Copies the metadata of `newer` onto `local` (content and id stay).
pub(crate) fn take_metadata(local: &mut MemoryItem, newer: &MemoryItem) {
    local.concise = newer.concise.clone();
    local.brief = newer.brief.clone();
    local.triple = newer.triple.clone();
    local.subject = newer.subject.clone();
    local.tags = newer.tags.clone();
    local.importance = newer.importance;
    local.outcome = newer.outcome;
    local.pinned = newer.pinned;
    local.updated = newer.updated;
    local.accessed = local.accessed.max(newer.accessed);
    local.count = local.count.max(newer.count);
    for s in &newer.sources {
        if !local.sources.contains(s) {
            local.sources.push(s.clone());
        }
    }
}
