//! Salvage: every readable memory of a damaged database, handed on one at a time (the export
//! file they go into is written by `transfer/salvage.rs`).
//!
//! Opens `store.redb` read-only (no lock, no write, no model), walks the items table one entry
//! at a time and keeps each item that decodes and has a vector of the store's dimension. An
//! entry redb cannot read, or that panics inside redb, is skipped and counted, not fatal.

use std::path::Path;

use redb::{ReadOnlyDatabase, ReadableDatabase, ReadableTable};

use super::db;
use super::{decode_vector, ITEMS, META, VECTORS};
use crate::error::{Error, Result};
use crate::item::MemoryItem;

/// What [`crate::salvage`] recovered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SalvageReport {
    /// Memories written to the export file.
    pub saved: usize,
    /// Entries that could not be read or decoded (or had no usable vector).
    pub skipped: usize,
    /// Why each was skipped (the first 100).
    pub problems: Vec<String>,
}

/// Hands every readable memory of the store in `dir` to `keep` (the store's model name, the
/// vectors' dimension, the item's and the vector's stored bytes), in id order, and returns
/// what was kept and skipped with the store's model name.
///
/// # Errors
/// [`Error::Corrupt`] when the database cannot be opened at all.
pub(crate) fn read_salvageable(
    dir: &Path,
    mut keep: impl FnMut(&str, usize, &[u8], &[u8]),
) -> Result<(SalvageReport, String)> {
    let path = dir.join("store.redb");
    let corrupt = |detail: String| Error::Corrupt {
        path: path.clone(),
        detail,
    };
    let database = crate::contained::catch(|| ReadOnlyDatabase::open(&path))
        .ok_or_else(|| corrupt("redb could not open the file".into()))?
        .map_err(|e| corrupt(format!("cannot open: {e}")))?;
    let tx = database.begin_read().map_err(db)?;
    let meta = tx.open_table(META).map_err(db)?;
    let model = meta
        .get("model")
        .ok()
        .flatten()
        .map(|v| String::from_utf8_lossy(v.value()).into_owned())
        .unwrap_or_else(|| "unknown".into());
    let items = tx.open_table(ITEMS).map_err(db)?;
    let vectors = tx.open_table(VECTORS).map_err(db)?;
    let mut report = SalvageReport {
        saved: 0,
        skipped: 0,
        problems: Vec::new(),
    };
    let skip = |report: &mut SalvageReport, why: String| {
        report.skipped += 1;
        if report.problems.len() < 100 {
            report.problems.push(why);
        }
    };
    let mut dim = None;
    let mut entries = items.iter().map_err(db)?;
    loop {
        let next = crate::contained::catch(|| entries.next());
        let entry = match next {
            Some(None) => break,
            Some(Some(Ok(entry))) => entry,
            Some(Some(Err(e))) => {
                skip(&mut report, format!("unreadable entry: {e}"));
                continue;
            }
            None => {
                // redb's iterator cannot go on past a page it panicked on.
                skip(
                    &mut report,
                    "redb failed reading the rest of the items".into(),
                );
                break;
            }
        };
        let id = entry.0.value();
        let item = match MemoryItem::decode(entry.1.value()) {
            Ok(item) => item,
            Err(e) => {
                skip(&mut report, format!("memory {id}: {e}"));
                continue;
            }
        };
        let vector = crate::contained::catch(|| vectors.get(id))
            .and_then(|r| r.ok().flatten())
            .map(|v| v.value().to_vec());
        let usable = vector.as_deref().and_then(decode_vector).filter(|v| {
            !v.is_empty() && dim.is_none_or(|d| d == v.len()) && v.iter().all(|x| x.is_finite())
        });
        let (Some(bytes), Some(v)) = (vector, usable) else {
            skip(&mut report, format!("memory {id}: no usable vector"));
            continue;
        };
        dim = Some(v.len());
        keep(&model, v.len(), &item.encode(), &bytes);
        report.saved += 1;
    }
    Ok((report, model))
}
