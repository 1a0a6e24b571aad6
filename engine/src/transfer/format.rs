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
//! Version 2 (an encrypted store's export) adds the key ring's id (16 bytes) after `dim`, and
//! each payload is sealed under its memory's scope key (table code 8, the record's number as
//! the record key): only the same key ring opens it, and an erased scope's records stay
//! unreadable in every export made before the erasure.
//! A file that is truncated, altered or has trailing bytes is rejected before anything is
//! imported.

use std::path::Path;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use crate::crypt::seal::{Opened, Sealer, Table};
use crate::error::{Error, Result};
use crate::item::MemoryItem;
use crate::store::decode_vector;

const MAGIC: &[u8; 8] = b"\x89MLEXP\r\n";
const VERSION: u32 = 1;
const SEALED_VERSION: u32 = 2;
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
    /// A file for vectors of `dim` from model `model`, sized for about `records` records;
    /// sealed (version 2) when `ring` names the key ring its records are sealed with.
    pub(crate) fn new(model: &str, dim: usize, records: usize, ring: Option<[u8; 16]>) -> Self {
        let mut out = Vec::with_capacity(64 + records * (dim * 4 + 256));
        out.extend_from_slice(MAGIC);
        let version = if ring.is_some() {
            SEALED_VERSION
        } else {
            VERSION
        };
        out.extend_from_slice(&version.to_le_bytes());
        put_bytes(&mut out, model.as_bytes());
        out.extend_from_slice(&(dim as u32).to_le_bytes());
        if let Some(ring) = ring {
            out.extend_from_slice(&ring);
        }
        ExportWriter { out, count: 0 }
    }

    /// The number the next record gets (its record key when sealed).
    pub(crate) fn next_record(&self) -> u64 {
        self.count
    }

    /// A record's payload: an encoded item and its stored vector bytes.
    pub(crate) fn payload(item: &[u8], vector: &[u8]) -> Vec<u8> {
        let mut payload = Vec::with_capacity(4 + item.len() + vector.len());
        put_bytes(&mut payload, item);
        payload.extend_from_slice(vector);
        payload
    }

    /// Appends one record: an encoded item and its stored vector bytes.
    pub(crate) fn record(&mut self, item: &[u8], vector: &[u8]) {
        self.push(&Self::payload(item, vector));
    }

    /// Appends one record's payload (sealed, in a version 2 file).
    pub(crate) fn push(&mut self, payload: &[u8]) {
        self.out.push(1);
        self.out
            .extend_from_slice(&(payload.len() as u32).to_le_bytes());
        self.out.extend_from_slice(&xxh3_64(payload).to_le_bytes());
        self.out.extend_from_slice(payload);
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

/// Checks and decodes a whole export file; a sealed one needs the `sealer` of its key ring
/// (records of an erased scope are left out).
pub(crate) fn parse(path: &Path, bytes: &[u8], sealer: Option<&Sealer>) -> Result<ExportFile> {
    let mut c = Cursor { bytes, pos: 0 };
    if c.take(8) != Some(MAGIC.as_slice()) {
        return Err(corrupt(
            path,
            "not a memloop export file (wrong magic bytes)",
        ));
    }
    let truncated = || corrupt(path, "truncated");
    let version = c.u32().ok_or_else(truncated)?;
    if version != VERSION && version != SEALED_VERSION {
        return Err(Error::UnsupportedVersion {
            path: path.to_path_buf(),
            found: version,
            supported: SEALED_VERSION,
        });
    }
    let model = std::str::from_utf8(c.bytes().ok_or_else(truncated)?)
        .map_err(|_| corrupt(path, "model fingerprint is not UTF-8"))?
        .to_string();
    let dim = c.u32().ok_or_else(truncated)? as usize;
    let sealer = if version == SEALED_VERSION {
        let ring = c.take(16).ok_or_else(truncated)?;
        match sealer {
            Some(s) if s.ring_id().as_slice() == ring => Some(s),
            _ => {
                return Err(crate::crypt::KeyError::Wrong {
                    path: path.to_path_buf(),
                    detail: format!(
                        "this export is sealed with key ring {}: import it into a store opened with that key file",
                        hex::encode(ring)
                    ),
                }
                .into())
            }
        }
    } else {
        None
    };
    let mut records = Vec::new();
    let mut number = 0u64;
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
                let opened;
                let payload = match sealer {
                    None => payload,
                    Some(s) => match s.open(Table::Export, &number.to_le_bytes(), payload)? {
                        Opened::Plain(p) => {
                            opened = p;
                            &opened[..]
                        }
                        Opened::Erased => {
                            number += 1;
                            continue;
                        }
                    },
                };
                number += 1;
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
                if count != number {
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
