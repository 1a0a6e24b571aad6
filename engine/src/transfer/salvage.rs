//! Salvage into an export file: what `store/salvage.rs` can still read of a damaged
//! database, written in the export format so a new store can import it.

use std::path::Path;

use super::format::ExportWriter;
use crate::error::Result;
use crate::store::salvage::{read_salvageable, SalvageReport};
use crate::store::write_atomic;

/// Writes every readable memory of the store in `dir` to the export file `out` (importable
/// into a new store with `import`).
///
/// # Errors
/// [`crate::Error::Corrupt`] when the database cannot be opened at all; [`crate::Error::Io`]
/// when `out` cannot be written.
pub fn salvage(dir: &Path, out: &Path) -> Result<SalvageReport> {
    let mut writer: Option<ExportWriter> = None;
    let (report, model) = read_salvageable(dir, |model, dim, item, vector| {
        writer
            .get_or_insert_with(|| ExportWriter::new(model, dim, 1024, None))
            .record(item, vector);
    })?;
    let file = writer
        .unwrap_or_else(|| ExportWriter::new(&model, 0, 0, None))
        .finish();
    write_atomic(out, &file, None)?;
    Ok(report)
}
