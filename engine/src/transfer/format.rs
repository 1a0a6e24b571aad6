//! The export file format: [`ExportWriter`] builds one, [`parse`] checks and decodes one.
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

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::error::{Error, Result};
use crate::item::MemoryItem;
use crate::store::decode_vector;

const MAGIC: &[u8; 8] = b"\x89MLEXP\r\n";
const VERSION: u32 = 1;
/// A parsed export file.
pub(crate) struct ExportFile {
    /// The model fingerprint the vectors come from.
    pub(crate) model: String,
    /// Their dimension.
    pub(crate) dim: usize,
    /// Every record, checked.
    pub(crate) records: Vec<(MemoryItem, Vec<f32>)>,
}

/// A [`Error::Corrupt`] about the export file at `path`.
pub(super) fn corrupt(path: &Path, detail: impl Into<String>) -> Error {
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
