//! Change streams in Arrow or Parquet, for engines past one machine (LanceDB, DuckDB, Spark):
//! [`crate::Transfer::export_changes`] writes every memory, or what changed since a sequence number
//! (deleted and forgotten memories as `delete` rows), one read transaction, to one Arrow IPC
//! stream or Parquet file; [`crate::Transfer::import_columnar`] rebuilds memories from such a file. The
//! `arrow` and `parquet` crates write and read the formats; `rows.rs` maps the columns.

mod digest;
mod pages;
mod read;
mod rows;

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_ipc::writer::StreamWriter;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;

use super::ImportReport;
use crate::error::{Error, Result};
use crate::filter::MemoryFilter;
use crate::item::MemoryItem;
use crate::memory::views::Transfer;
use crate::memory::Memory;
use crate::store::Change;

/// The columnar file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnarFormat {
    /// An Arrow IPC stream.
    Arrow,
    /// A Parquet file (Snappy-compressed).
    Parquet,
}

impl ColumnarFormat {
    /// Parses `arrow` or `parquet`.
    pub fn parse(name: &str) -> Option<ColumnarFormat> {
        match name {
            "arrow" => Some(ColumnarFormat::Arrow),
            "parquet" => Some(ColumnarFormat::Parquet),
            _ => None,
        }
    }
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangeExport {
    /// Memories written as they are now.
    pub upserts: usize,
    /// Memories deleted or forgotten since `since`.
    pub deletes: usize,
    /// The sequence number the export started after (0 for a full export).
    pub since: u64,
    /// The last sequence number it covers: pass it as `since` next time.
    pub through: u64,
    /// Bytes written.
    pub bytes: u64,
}

/// Schema metadata keys.
const MODEL: &str = "memloop.model";
const DIM: &str = "memloop.dim";
const STORE: &str = "memloop.store_id";
const SINCE: &str = "memloop.since";
const THROUGH: &str = "memloop.through";
const VERSION: &str = "memloop.version";
const CHECKSUM: &str = "memloop.checksum";
/// The file version written: 2 adds [`CHECKSUM`] (version 1 files, without it, still import).
const FILE_VERSION: u32 = 2;
/// Rows per record batch (and Parquet row group page flush).
const BATCH_ROWS: usize = 8_192;

impl Memory {}

/// The rows of a change stream, read and checked whole (every batch bounded and fenced, the
/// content checksum compared): its model, its vectors' dimension and its upsert rows.
pub(crate) fn read_stream(
    file: File,
) -> std::result::Result<(String, usize, Vec<rows::Row>), String> {
    let mut stream = read::Stream::open(file)?;
    let metadata = std::mem::take(&mut stream.metadata);
    let model = metadata
        .get(MODEL)
        .ok_or_else(|| format!("no `{MODEL}` in the schema metadata: not a memloop export"))?
        .clone();
    let file_dim: usize = metadata
        .get(DIM)
        .and_then(|d| d.parse().ok())
        .filter(|&d| (1..=65_536).contains(&d))
        .ok_or_else(|| format!("no `{DIM}` in the schema metadata"))?;
    let version: u32 = match metadata.get(VERSION) {
        Some(v) => v
            .parse()
            .map_err(|_| format!("`{VERSION}` is {v:?}, not a number"))?,
        None => 1,
    };
    if version > FILE_VERSION {
        return Err(format!(
            "file version {version} is newer than this memloop reads ({FILE_VERSION})"
        ));
    }
    let checksum = metadata.get(CHECKSUM);
    if version >= 2 && checksum.is_none() {
        return Err(format!("no `{CHECKSUM}` in a version {version} file"));
    }
    let mut digest = digest::RowDigest::default();
    let mut rows = Vec::new();
    while let Some(batch) = stream.next_rows(file_dim)? {
        for (item, vector) in &batch {
            digest.upsert(item, vector);
        }
        rows.extend(batch);
    }
    if let Some(want) = checksum {
        let got = digest.hex();
        if &got != want {
            return Err(format!(
                "content checksum {got} is not the {want} the file was written with: the file was changed or damaged"
            ));
        }
    }
    Ok((model, file_dim, rows))
}

impl<'a> Transfer<'a> {
    /// Writes the memories passing `filter` (superseded versions included) as they are now — all of
    /// them, or with `since` only those changed after that sequence number, plus a `delete` row for
    /// each memory deleted or forgotten meanwhile (whatever its namespace) — to `path`, atomically.
    /// The schema metadata names the model, the store and the sequence range.
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for a path over the store's own files, or a `since` the
    /// change log no longer reaches; [`crate::Error::Io`], [`crate::Error::Store`].
    pub fn export_changes(
        &self,
        path: impl AsRef<Path>,
        since: Option<u64>,
        filter: &MemoryFilter,
        format: ColumnarFormat,
    ) -> Result<ChangeExport> {
        let path = path.as_ref();
        self.memory.refuse_inside_store(path)?;
        let dim = self.memory.admin().embedder().dim();
        let filter = filter.clone().include_superseded(true);
        let changes = self
            .memory
            .inner
            .store
            .changes(since, dim, |i| filter.matches(i))?;
        let policy = &self.memory.inner.options.forgetting;
        let deadlines = |item: &MemoryItem| {
            (
                policy.crossing(item, policy.working_threshold),
                policy.crossing(item, policy.forget_threshold),
            )
        };
        let metadata = HashMap::from([
            (
                MODEL.to_string(),
                self.memory.admin().fingerprint().to_string(),
            ),
            (DIM.to_string(), dim.to_string()),
            (STORE.to_string(), digest::hex(&self.memory.inner.store_id)),
            (SINCE.to_string(), since.unwrap_or(0).to_string()),
            (THROUGH.to_string(), changes.through.to_string()),
            (VERSION.to_string(), FILE_VERSION.to_string()),
            (CHECKSUM.to_string(), {
                let mut d = digest::RowDigest::default();
                changes.rows.iter().for_each(|c| d.change(c));
                d.hex()
            }),
        ]);
        let schema = Arc::new(rows::schema(dim, metadata));
        let arrow =
            |e: arrow_schema::ArrowError| Error::io(path, "write", std::io::Error::other(e));
        let pq =
            |e: parquet::errors::ParquetError| Error::io(path, "write", std::io::Error::other(e));
        // Built in memory, then saved as every other file of the engine is (temporary file,
        // fsync, rename, directory fsync, through the fault seam), as `.mlx` exports are.
        let batches = changes.rows.chunks(BATCH_ROWS);
        let bytes = match format {
            ColumnarFormat::Arrow => {
                let mut w = StreamWriter::try_new(Vec::new(), &schema).map_err(arrow)?;
                for chunk in batches {
                    w.write(&rows::batch(&schema, dim, chunk, &deadlines).map_err(arrow)?)
                        .map_err(arrow)?;
                }
                w.finish().map_err(arrow)?;
                w.into_inner().map_err(arrow)?
            }
            ColumnarFormat::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(Compression::SNAPPY)
                    .build();
                let mut w =
                    ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).map_err(pq)?;
                for chunk in batches {
                    w.write(&rows::batch(&schema, dim, chunk, &deadlines).map_err(arrow)?)
                        .map_err(pq)?;
                }
                w.into_inner().map_err(pq)?
            }
        };
        crate::store::write_atomic(path, &bytes, self.memory.inner.store.faults.as_ref())?;
        let deletes = changes
            .rows
            .iter()
            .filter(|r| matches!(r, Change::Delete { .. }))
            .count();
        Ok(ChangeExport {
            upserts: changes.rows.len() - deletes,
            deletes,
            since: since.unwrap_or(0),
            through: changes.through,
            bytes: bytes.len() as u64,
        })
    }

    /// Merges the memories of an Arrow IPC stream or Parquet file written by
    /// [`Transfer::export_changes`] (a full export: only upsert rows), all or nothing, as
    /// [`Transfer::import`] merges an export file: checked whole first, re-embedded when it names
    /// another model.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] for a file that is not such a stream (a missing or mistyped
    /// column, a vector of the wrong length, no model in its metadata, a truncated file, a delete
    /// row); [`crate::Error::Io`], [`crate::Error::Embed`], [`crate::Error::Store`]. On error
    /// nothing was imported.
    pub fn import_columnar(&self, path: impl AsRef<Path>) -> Result<ImportReport> {
        let path = path.as_ref();
        let corrupt = |detail: String| Error::Corrupt {
            path: path.to_path_buf(),
            detail,
        };
        let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        let (model, file_dim, rows) = read_stream(file).map_err(corrupt)?;
        self.memory.import_parsed(path, &model, file_dim, rows)
    }
}
