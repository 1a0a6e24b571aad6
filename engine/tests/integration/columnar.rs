//! Arrow / Parquet change streams: a full export, a delta with deletes, a round trip bit for
//! bit, and files that are not what they claim refused with the store unchanged.

use memloop::MemoryId;
use std::fs::File;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, UInt64Type};
use arrow_array::RecordBatch;
use memloop::{
    answers::ColumnarFormat, items::Outcome, requests::Update, Clock, Error, Kind, Memory,
    MemoryFilter, NewMemory, Task,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;

use crate::common::{open, sentences};

/// Every batch of a Parquet file, and its schema's metadata.
fn read(path: &std::path::Path) -> (Vec<RecordBatch>, Arc<arrow_schema::Schema>) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let schema = builder.schema().clone();
    let batches = builder.build().unwrap().map(Result::unwrap).collect();
    (batches, schema)
}

/// (id, vector bits) of every row, sorted by id.
fn vectors(path: &std::path::Path) -> Vec<(u64, Vec<u32>)> {
    let (batches, _) = read(path);
    let mut out = Vec::new();
    for b in &batches {
        let ids = b.column_by_name("id").unwrap().as_primitive::<UInt64Type>();
        let v = b.column_by_name("vector").unwrap().as_fixed_size_list();
        for r in 0..b.num_rows() {
            let row = v.value(r);
            let bits = row
                .as_primitive::<Float32Type>()
                .values()
                .iter()
                .map(|x| x.to_bits())
                .collect();
            out.push((ids.value(r), bits));
        }
    }
    out.sort();
    out
}

fn filled(dir: &std::path::Path, clock: &Clock) -> Memory {
    let m = open(dir, clock);
    m.remember_batch(
        sentences(300)
            .iter()
            .enumerate()
            .map(|(i, t)| {
                NewMemory::new(t.as_str())
                    .tag(format!("t{}", i % 3))
                    .importance(0.1 + (i % 9) as f32 / 10.0)
            })
            .collect(),
    )
    .unwrap();
    let fact = m
        .remember(NewMemory::new("the cafe opens at eight").kind(Kind::Fact))
        .unwrap();
    m.update(
        fact,
        Update {
            text: Some("the cafe opens at nine".into()),
            ..Default::default()
        },
    )
    .unwrap();
    m.remember(
        NewMemory::new("Paris is the capital of France")
            .kind(Kind::Triple)
            .triple("Paris", "capital of", "France"),
    )
    .unwrap();
    m.record_task(&Task {
        request: "rotate the key".into(),
        steps: vec!["open vault".into()],
        outcome: Outcome::Failure,
        reflection: Some("ask for the token first".into()),
        namespace: Some("ops".into()),
        tags: vec!["ops".into()],
    })
    .unwrap();
    m.feedback(fact, 5).unwrap();
    m
}

#[test]
fn parquet_round_trip_is_equal_field_for_field_and_bit_for_bit() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(1_700_000_000_000);
    let src = filled(a.path(), &clock);
    let file = a.path().join("all.parquet");
    let r = src
        .transfer()
        .export_changes(&file, None, &MemoryFilter::new(), ColumnarFormat::Parquet)
        .unwrap();
    let all = MemoryFilter::new().include_superseded(true);
    let items = src.advanced().scan(&all, usize::MAX).unwrap();
    assert_eq!((r.upserts, r.deletes), (items.len(), 0));
    assert_eq!(r.through, src.stats().unwrap().seq);
    let (_, schema) = read(&file);
    assert_eq!(
        schema.metadata()["memloop.model"],
        src.admin().fingerprint()
    );
    assert_eq!(schema.metadata()["memloop.through"], r.through.to_string());

    let dst = open(b.path(), &clock);
    let imported = dst.transfer().import_columnar(&file).unwrap();
    assert_eq!((imported.added, imported.reembedded), (items.len(), false));
    assert_eq!(dst.advanced().scan(&all, usize::MAX).unwrap(), items);
    // The vectors the new store holds, exported again, are the same bits.
    let again = b.path().join("again.parquet");
    dst.transfer()
        .export_changes(&again, None, &MemoryFilter::new(), ColumnarFormat::Parquet)
        .unwrap();
    assert_eq!(vectors(&again), vectors(&file));
    // Arrow IPC carries the same rows.
    let ipc = a.path().join("all.arrows");
    src.transfer()
        .export_changes(&ipc, None, &MemoryFilter::new(), ColumnarFormat::Arrow)
        .unwrap();
    let c = crate::common::tempdir();
    let third = open(c.path(), &clock);
    third.transfer().import_columnar(&ipc).unwrap();
    assert_eq!(third.advanced().scan(&all, usize::MAX).unwrap(), items);
}

#[test]
fn a_delta_since_a_sequence_number_has_upserts_and_deletes() {
    let a = crate::common::tempdir();
    let clock = Clock::manual(1_700_000_000_000);
    let m = filled(a.path(), &clock);
    let full = m
        .transfer()
        .export_changes(
            a.path().join("full.parquet"),
            None,
            &MemoryFilter::new(),
            ColumnarFormat::Parquet,
        )
        .unwrap();
    m.admin().checkpoint().unwrap(); // a checkpoint must not cut the log a delta reads
    let ids: Vec<MemoryId> = m
        .advanced()
        .scan(&MemoryFilter::new(), 3)
        .unwrap()
        .iter()
        .map(|i| i.id)
        .collect();
    m.forget(MemoryId::new((ids[0]).get())).unwrap();
    m.update(
        MemoryId::new((ids[1]).get()),
        Update {
            tags: Some(vec!["changed".into()]),
            ..Default::default()
        },
    )
    .unwrap();
    let new = m
        .remember(NewMemory::new("a memory after the full export"))
        .unwrap();
    let file = a.path().join("delta.parquet");
    let delta = m
        .transfer()
        .export_changes(
            &file,
            Some(full.through),
            &MemoryFilter::new(),
            ColumnarFormat::Parquet,
        )
        .unwrap();
    assert_eq!(
        (delta.since, delta.upserts, delta.deletes),
        (full.through, 2, 1)
    );
    let (batches, _) = read(&file);
    let mut rows = Vec::new();
    for b in &batches {
        let id = b.column_by_name("id").unwrap().as_primitive::<UInt64Type>();
        let op = b.column_by_name("op").unwrap().as_string::<i32>();
        for r in 0..b.num_rows() {
            rows.push((MemoryId::new(id.value(r)), op.value(r).to_string()));
        }
    }
    rows.sort();
    assert_eq!(
        rows,
        vec![
            (ids[0], "delete".to_string()),
            (ids[1], "upsert".to_string()),
            (new, "upsert".to_string())
        ]
    );
    // Nothing changed since: an empty delta; a future sequence number is refused.
    let none = m
        .transfer()
        .export_changes(
            a.path().join("none.parquet"),
            Some(delta.through),
            &MemoryFilter::new(),
            ColumnarFormat::Parquet,
        )
        .unwrap();
    assert_eq!((none.upserts, none.deletes), (0, 0));
    let err = m
        .transfer()
        .export_changes(
            a.path().join("x.parquet"),
            Some(delta.through + 5),
            &MemoryFilter::new(),
            ColumnarFormat::Parquet,
        )
        .unwrap_err();
    assert!(matches!(err, Error::InvalidInput(_)), "{err}");
}

/// Rewrites a Parquet file with `change` applied to its batches and schema.
pub(crate) fn rewrite(
    from: &std::path::Path,
    to: &std::path::Path,
    change: impl Fn(RecordBatch) -> RecordBatch,
    metadata: impl Fn(&mut std::collections::HashMap<String, String>),
) {
    let (batches, file_schema) = read(from);
    let batches: Vec<RecordBatch> = batches.into_iter().map(change).collect();
    let mut md: std::collections::HashMap<String, String> = file_schema.metadata().clone().into();
    metadata(&mut md);
    let schema = Arc::new(batches[0].schema().as_ref().clone().with_metadata(md));
    let mut w = ArrowWriter::try_new(File::create(to).unwrap(), schema.clone(), None).unwrap();
    for b in batches {
        w.write(&RecordBatch::try_new(schema.clone(), b.columns().to_vec()).unwrap())
            .unwrap();
    }
    w.close().unwrap();
}

#[test]
fn bad_files_are_refused_and_change_nothing() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(1_700_000_000_000);
    let src = filled(a.path(), &clock);
    let good = a.path().join("good.parquet");
    src.transfer()
        .export_changes(&good, None, &MemoryFilter::new(), ColumnarFormat::Parquet)
        .unwrap();
    let dst = open(b.path(), &clock);
    dst.remember(NewMemory::new("already here")).unwrap();
    let before = dst.stats().unwrap();

    let no_text = a.path().join("no-text.parquet");
    rewrite(
        &good,
        &no_text,
        |b| {
            let mut b = b;
            let i = b.schema().index_of("text").unwrap();
            b.remove_column(i);
            b
        },
        |_| {},
    );
    let wrong_dim = a.path().join("wrong-dim.parquet");
    rewrite(
        &good,
        &wrong_dim,
        |b| b,
        |m| {
            m.insert("memloop.dim".into(), "255".into());
        },
    );
    let not_ours = a.path().join("not-ours.parquet");
    rewrite(
        &good,
        &not_ours,
        |b| b,
        |m| {
            m.remove("memloop.model");
        },
    );
    let truncated = a.path().join("truncated.parquet");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let delta = a.path().join("delta.parquet");
    let seq = src.stats().unwrap().seq;
    src.forget(src.advanced().scan(&MemoryFilter::new(), 1).unwrap()[0].id)
        .unwrap();
    src.transfer()
        .export_changes(
            &delta,
            Some(seq),
            &MemoryFilter::new(),
            ColumnarFormat::Parquet,
        )
        .unwrap();

    for (path, says) in [
        (&no_text, "text"),
        (&wrong_dim, "255"),
        (&not_ours, "memloop.model"),
        (&truncated, "Parquet"),
        (&delta, "upsert"),
    ] {
        let err = dst.transfer().import_columnar(path).unwrap_err();
        assert!(
            matches!(err, Error::Corrupt { .. }),
            "{}: {err}",
            path.display()
        );
        assert!(err.to_string().contains(says), "{}: {err}", path.display());
        assert_eq!(dst.stats().unwrap(), before, "{}", path.display());
    }
}
