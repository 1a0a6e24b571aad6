//! Reading a change stream without trusting it: batch by batch, every decoder call fenced so
//! that no input can panic the importer, and what it may decode bounded by the file's size
//! (a compressed page that expands without bound is refused, not allocated).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek};

use arrow_array::RecordBatch;
use arrow_ipc::reader::StreamReader;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};

use super::rows::{self, Row};

/// Rows per decoded batch: small, so one batch of crafted pages stays small too.
const READ_ROWS: usize = 64;
/// A file may decode to at most this many times its size, plus [`DECODE_SLACK`]: real exports
/// decode to about their size (vectors do not compress; Snappy halves text at best).
const DECODE_RATIO: u64 = 16;
/// Bytes any file may decode to whatever its size.
const DECODE_SLACK: u64 = 64 << 20;

/// An open change stream: its schema metadata, then its rows.
pub(super) struct Stream {
    pub(super) metadata: HashMap<String, String>,
    batches: Batches,
    size: u64,
    decoded: u64,
    rows_seen: u64,
}

enum Batches {
    Parquet(ParquetRecordBatchReader),
    Arrow(StreamReader<BufReader<File>>),
}

/// Runs a decoder call; a panic inside it (arrow's readers assert on some malformed input)
/// becomes an error naming `what`.
fn fenced<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    crate::contained::catch(f).unwrap_or_else(|| {
        Err(format!(
            "{what}: the file is malformed (its decoder gave up)"
        ))
    })
}

impl Stream {
    /// Opens `file`: Parquet when it begins with `PAR1`, else an Arrow IPC stream.
    pub(super) fn open(mut file: File) -> Result<Stream, String> {
        let size = file.metadata().map_err(|e| e.to_string())?.len();
        let mut magic = [0u8; 4];
        let parquet = file.read_exact(&mut magic).is_ok() && &magic == b"PAR1";
        file.rewind().map_err(|e| e.to_string())?;
        let (metadata, batches) = if parquet {
            fenced("Parquet footer", || {
                let scan = file.try_clone().map_err(|e| e.to_string())?;
                let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                    .map_err(|e| format!("not a readable Parquet file: {e}"))?;
                // Before the reader believes any page header's sizes.
                super::pages::prescan(&scan, builder.metadata(), size, budget(size))?;
                let metadata: HashMap<String, String> =
                    builder.schema().metadata().clone().into_iter().collect();
                let reader = builder
                    .with_batch_size(READ_ROWS)
                    .build()
                    .map_err(|e| format!("not a readable Parquet file: {e}"))?;
                Ok((metadata, Batches::Parquet(reader)))
            })?
        } else {
            fenced("Arrow stream header", || {
                let reader = StreamReader::try_new(BufReader::new(file), None)
                    .map_err(|e| format!("neither Parquet nor an Arrow IPC stream: {e}"))?;
                let metadata: HashMap<String, String> =
                    reader.schema().metadata().clone().into_iter().collect();
                Ok((metadata, Batches::Arrow(reader)))
            })?
        };
        Ok(Stream {
            metadata,
            batches,
            size,
            decoded: 0,
            rows_seen: 0,
        })
    }

    /// The next batch's rows (vectors of `dim`), or `None` at the end. Refuses a file whose
    /// rows would decode to more than [`DECODE_RATIO`] times its size (plus slack), and one
    /// whose vectors alone would be more than twice its size: float vectors do not compress,
    /// so such a file is a decompression bomb, not an export.
    pub(super) fn next_rows(&mut self, dim: usize) -> Result<Option<Vec<Row>>, String> {
        let batch = fenced("a record batch", || match &mut self.batches {
            Batches::Parquet(r) => r.next().transpose().map_err(|e| e.to_string()),
            Batches::Arrow(r) => r.next().transpose().map_err(|e| e.to_string()),
        })?;
        let Some(batch) = batch else {
            return Ok(None);
        };
        self.rows_seen += batch.num_rows() as u64;
        let vector_bytes = self.rows_seen.saturating_mul(dim as u64 * 4);
        if vector_bytes > self.size.saturating_mul(2).saturating_add(DECODE_SLACK) {
            return Err(format!(
                "{} rows of {dim} floats cannot come from {} bytes: a decompression bomb, not an export",
                self.rows_seen, self.size
            ));
        }
        self.decoded += batch.get_array_memory_size() as u64;
        self.check_budget()?;
        let rows = fenced("a record batch", || {
            let batch: RecordBatch = rows::normalize(batch)?;
            rows::read_batch(&batch, dim)
        })?;
        self.decoded += rows
            .iter()
            .map(|(i, v)| row_bytes(i) + 4 * v.len() as u64)
            .sum::<u64>();
        self.check_budget()?;
        Ok(Some(rows))
    }

    fn check_budget(&self) -> Result<(), String> {
        let budget = budget(self.size);
        if self.decoded > budget {
            return Err(format!(
                "decodes to more than {budget} bytes from a {}-byte file: a decompression bomb, not an export",
                self.size
            ));
        }
        Ok(())
    }
}

/// What a file of `size` bytes may decode to.
fn budget(size: u64) -> u64 {
    size.saturating_mul(DECODE_RATIO)
        .saturating_add(DECODE_SLACK)
}

/// About what a decoded memory holds in memory.
fn row_bytes(item: &crate::item::MemoryItem) -> u64 {
    let texts = [&item.concise, &item.brief, &item.subject]
        .iter()
        .filter_map(|t| t.as_ref().map(String::len))
        .sum::<usize>();
    let tags: usize = item.tags.iter().map(|t| t.len() + 24).sum();
    (256 + item.text.len() + texts + tags) as u64
}
