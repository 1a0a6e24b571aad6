//! Change streams attacked (round-3 findings F6 and F8): random bit flips never panic the
//! importer nor change a field silently, a decompression bomb is refused in bounded memory,
//! and the `large_string` text that DuckDB and Polars write is read.

use memloop::MemoryId;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, UInt32Array};
use memloop::{answers::ColumnarFormat, Clock, Error, Memory, MemoryFilter, MemoryItem, NewMemory};
use rand::{Rng, SeedableRng};

use crate::common::{hashing, open, sentences};

fn source(dir: &std::path::Path, clock: &Clock) -> Memory {
    source_of(open(dir, clock))
}

fn source_of(m: Memory) -> Memory {
    m.remember_batch(
        sentences(24)
            .iter()
            .enumerate()
            .map(|(i, t)| NewMemory::new(t.as_str()).tag(format!("t{}", i % 3)))
            .collect(),
    )
    .unwrap();
    m
}

/// What an import must reproduce exactly: every field but the id, which may be renumbered.
fn contents(m: &Memory) -> Vec<MemoryItem> {
    let mut items = m
        .advanced()
        .scan(&MemoryFilter::new().include_superseded(true), usize::MAX)
        .unwrap();
    for i in &mut items {
        i.id = MemoryId::new(0);
    }
    items.sort_by(|a, b| a.text.cmp(&b.text));
    items
}

/// 1,000 single bit flips in each format: the import is refused with a typed error (no
/// panic), or it brings exactly the exported memories, never a changed field.
#[test]
fn a_thousand_bit_flips_per_format_never_panic_nor_change_a_field() {
    let root = crate::common::tempdir();
    let clock = Clock::manual(1_700_000_000_000);
    let src = source(&root.path().join("src"), &clock);
    let expected = contents(&src);
    let mut rng = rand::rngs::StdRng::seed_from_u64(33);
    for format in [ColumnarFormat::Arrow, ColumnarFormat::Parquet] {
        let good = root.path().join(format!("good-{format:?}"));
        src.transfer()
            .export_changes(&good, None, &MemoryFilter::new(), format)
            .unwrap();
        let bytes = std::fs::read(&good).unwrap();
        let dst = open(&root.path().join(format!("dst-{format:?}")), &clock);
        let flipped = root.path().join(format!("flipped-{format:?}"));
        let (mut imported, mut refused) = (0, 0);
        for _ in 0..1000 {
            let mut b = bytes.clone();
            let at = rng.gen_range(0..b.len());
            b[at] ^= 1 << rng.gen_range(0..8);
            std::fs::write(&flipped, &b).unwrap();
            match dst.transfer().import_columnar(&flipped) {
                Ok(_) => {
                    imported += 1;
                    assert_eq!(contents(&dst), expected, "flip at {at} changed a field");
                    for item in dst
                        .advanced()
                        .scan(&MemoryFilter::new().include_superseded(true), 100)
                        .unwrap()
                    {
                        dst.forget(item.id).unwrap();
                    }
                }
                Err(e) => {
                    refused += 1;
                    assert!(
                        matches!(
                            e,
                            Error::Corrupt { .. } | Error::Io { .. } | Error::InvalidInput(_)
                        ),
                        "flip at {at}: {e}"
                    );
                    assert_eq!(dst.stats().unwrap().memories, 0, "flip at {at}");
                }
            }
        }
        assert!(
            refused > 0 && imported + refused == 1000,
            "{format:?}: {imported} imported"
        );
    }
}

/// One row repeated `rows` times (in batches of 10,000), written as Parquet with
/// dictionary and run-length encoding: a file far smaller than what it decodes to.
fn bomb(good: &std::path::Path, out: &std::path::Path, rows: usize) {
    let builder = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(good).unwrap(),
    )
    .unwrap();
    let schema = builder.schema().clone();
    let one = builder
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .slice(0, 1);
    let chunk = 10_000;
    let repeated: RecordBatch =
        arrow_select::take::take_record_batch(&one, &UInt32Array::from(vec![0u32; chunk])).unwrap();
    let props = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(out).unwrap(),
        schema.clone(),
        Some(props),
    )
    .unwrap();
    for _ in 0..rows / chunk {
        w.write(&RecordBatch::try_new(schema.clone(), repeated.columns().to_vec()).unwrap())
            .unwrap();
    }
    w.close().unwrap();
}

/// The peak resident memory of this process so far, in bytes (Linux `VmHWM`).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// F6: a million identical rows in under a megabyte are refused, and reading them never
/// holds more than a small multiple of the file.
#[test]
fn a_parquet_bomb_is_refused_in_bounded_memory() {
    let root = crate::common::tempdir();
    let clock = Clock::manual(1_700_000_000_000);
    // Small vectors: the rows themselves, not their vectors, must be what is refused.
    let small = |dir: &str| Memory::open(root.path().join(dir), hashing(8, &clock)).unwrap();
    let src = source_of(small("src"));
    let good = root.path().join("good.parquet");
    src.transfer()
        .export_changes(&good, None, &MemoryFilter::new(), ColumnarFormat::Parquet)
        .unwrap();
    let out = root.path().join("bomb.parquet");
    bomb(&good, &out, 1_000_000);
    let size = std::fs::metadata(&out).unwrap().len();
    assert!(size < 1 << 20, "the bomb is {size} bytes");
    let dst = small("dst");
    let err = dst.transfer().import_columnar(&out).unwrap_err();
    assert!(err.to_string().contains("decompression bomb"), "{err}");
    assert_eq!(dst.stats().unwrap().memories, 0);
    let peak = peak_rss();
    assert!(peak < 1 << 30, "peak RSS {peak} bytes");
    eprintln!(
        "parquet bomb: {size} bytes, 1,000,000 rows, refused; peak RSS {} MiB",
        peak >> 20
    );
}

/// The `large_string` text columns DuckDB and Polars write are read like `string` ones.
#[test]
fn large_string_columns_are_read() {
    let root = crate::common::tempdir();
    let clock = Clock::manual(1_700_000_000_000);
    let src = source(&root.path().join("src"), &clock);
    let good = root.path().join("good.parquet");
    src.transfer()
        .export_changes(&good, None, &MemoryFilter::new(), ColumnarFormat::Parquet)
        .unwrap();
    let large = root.path().join("large.parquet");
    crate::columnar::rewrite(
        &good,
        &large,
        |batch| {
            let mut fields = Vec::new();
            let mut columns = Vec::new();
            for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
                match c.data_type() {
                    arrow_schema::DataType::Utf8 => {
                        let s = c
                            .as_any()
                            .downcast_ref::<arrow_array::StringArray>()
                            .unwrap();
                        let l: arrow_array::LargeStringArray = s.iter().collect();
                        fields.push(arrow_schema::Field::new(
                            f.name(),
                            arrow_schema::DataType::LargeUtf8,
                            true,
                        ));
                        columns.push(Arc::new(l) as arrow_array::ArrayRef);
                    }
                    _ => {
                        fields.push(f.as_ref().clone());
                        columns.push(c.clone());
                    }
                }
            }
            RecordBatch::try_new(Arc::new(arrow_schema::Schema::new(fields)), columns).unwrap()
        },
        |_| {},
    );
    let dst = open(&root.path().join("dst"), &clock);
    let report = dst.transfer().import_columnar(&large).unwrap();
    assert_eq!(report.added, 24);
    assert_eq!(contents(&dst), contents(&src));
}

/// The input the `columnar_parquet` fuzz target found: a dictionary page header declaring
/// ~400 million values in a 16 KB file, which made the `parquet` crate allocate 3.2 GB before
/// reading a byte. The page headers are checked before the reader sees them: refused, in
/// bounded memory.
#[test]
fn a_dictionary_page_declaring_more_values_than_its_bytes_is_refused() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions/columnar_parquet-dictionary-count.parquet");
    let dir = crate::common::tempdir();
    let dst = open(dir.path(), &Clock::manual(0));
    let err = dst.transfer().import_columnar(&path).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "{err}");
    assert!(
        err.to_string().contains("dictionary page declares"),
        "{err}"
    );
    assert!(!memloop::fuzzing::columnar(&std::fs::read(&path).unwrap()));
    assert!(peak_rss() < 1 << 30);
}
