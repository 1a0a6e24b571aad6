//! Entry points for the fuzz targets in `fuzz/` (cargo fuzz): each runs one of the engine's
//! decoders on arbitrary bytes and says whether they were accepted. A decoder must return,
//! never panic, abort or allocate beyond the bounds of its input. Not a stable API.

use std::path::Path;

use crate::item::{MemoryItem, NewMemory};
use crate::options::DEFAULT_MAX_TEXT_BYTES;
use crate::store::manifest::Manifest;
use crate::store::CatalogRecord;

/// An item record, as stored in the `items` table and carried in export records.
pub fn item(bytes: &[u8]) -> bool {
    MemoryItem::decode(bytes).is_ok()
}

/// A catalog record (`catalog` table).
pub fn catalog_record(bytes: &[u8]) -> bool {
    CatalogRecord::decode(bytes).is_some()
}

/// A store's `manifest.json`.
pub fn manifest(bytes: &[u8]) -> bool {
    serde_json::from_slice::<Manifest>(bytes).is_ok()
}

/// A whole export file, checked and decoded as `import` does before writing anything.
pub fn export_file(bytes: &[u8]) -> bool {
    crate::transfer::parse(Path::new("fuzz.mlx"), bytes, None).is_ok()
}

/// One line of `memloop ingest --jsonl`: a memory object, validated as `remember` does.
pub fn ingest_line(line: &str) -> bool {
    serde_json::from_str::<NewMemory>(line)
        .is_ok_and(|m| m.validate(DEFAULT_MAX_TEXT_BYTES, 0).is_ok())
}

/// A change stream (an Arrow IPC stream or a Parquet file), read and checked whole as
/// `import_columnar` does before writing anything: every batch decoded within the file's
/// bounds, every row checked, the content checksum compared. The bytes go through a file in
/// the temporary directory, as the importer reads files.
pub fn columnar(bytes: &[u8]) -> bool {
    let path = std::env::temp_dir().join(format!("memloop-fuzz-columnar-{}", std::process::id()));
    if std::fs::write(&path, bytes).is_err() {
        return false;
    }
    let Ok(file) = std::fs::File::open(&path) else {
        return false;
    };
    crate::transfer::read_columnar(file).is_ok_and(|(_, _, rows)| {
        rows.iter()
            .all(|(item, _)| item.check(DEFAULT_MAX_TEXT_BYTES).is_ok())
    })
}
