//! Files crafted by an attacker who can recompute every checksum (they are plain xxh3): a
//! length field claiming more than the file holds is a typed error, never an allocation that
//! kills the process; an import that fails anywhere leaves the store exactly as it was.

use memloop::MemoryId;
use std::path::{Path, PathBuf};

use memloop::{Clock, Error, Memory, MemoryFilter, NewMemory, Options};
use xxhash_rust::xxh3::xxh3_64;

use crate::common::{hashing, open, sentences};

const MARKER: &str = "CRAFTED-TEXT-MARKER";

/// The byte offset where an export's records start (after magic, version, model, dim).
fn records_start(file: &[u8]) -> usize {
    let model_len = u32::from_le_bytes(file[12..16].try_into().unwrap()) as usize;
    16 + model_len + 4
}

/// Reassembles an export from its header and record payloads, recomputing every checksum.
fn reassemble(header: &[u8], payloads: &[Vec<u8>]) -> Vec<u8> {
    let mut out = header.to_vec();
    for p in payloads {
        out.push(1);
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        out.extend_from_slice(&xxh3_64(p).to_le_bytes());
        out.extend_from_slice(p);
    }
    let sum = xxh3_64(&out);
    out.push(0);
    out.extend_from_slice(&(payloads.len() as u64).to_le_bytes());
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The record payloads of an export.
fn payloads(file: &[u8]) -> Vec<Vec<u8>> {
    let mut at = records_start(file);
    let mut out = Vec::new();
    while file[at] == 1 {
        let len = u32::from_le_bytes(file[at + 1..at + 5].try_into().unwrap()) as usize;
        out.push(file[at + 13..at + 13 + len].to_vec());
        at += 13 + len;
    }
    out
}

/// An export of one memory (64-d hashing embedder, manual clock at 0) whose text's length
/// field claims `len` bytes, every checksum recomputed: what `ffi/tests/data/huge-length.mlx`
/// holds for 2^62.
fn huge_length_export(len: u64) -> Vec<u8> {
    let dir = crate::common::tempdir();
    let m = Memory::open(dir.path(), hashing(64, &Clock::manual(0))).unwrap();
    m.remember(NewMemory::new(MARKER)).unwrap();
    let file = dir.path().join("one.mlx");
    m.transfer().export(&file, &MemoryFilter::new()).unwrap();
    let good = std::fs::read(&file).unwrap();
    let payload = &payloads(&good)[0];
    let at = payload
        .windows(MARKER.len())
        .position(|w| w == MARKER.as_bytes())
        .unwrap();
    assert_eq!(
        payload[at - 1] as usize,
        MARKER.len(),
        "a one-byte varint length"
    );
    let mut crafted = payload[..at - 1].to_vec();
    crafted.push(253); // bincode varint: a u64 follows
    crafted.extend_from_slice(&len.to_le_bytes());
    crafted.extend_from_slice(&payload[at..]);
    let item_len = u32::from_le_bytes(crafted[..4].try_into().unwrap()) + 8;
    crafted[..4].copy_from_slice(&item_len.to_le_bytes());
    reassemble(&good[..records_start(&good)], &[crafted])
}

#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "crafts a plaintext export; sealed records are covered by encryption::a_flipped_byte_in_a_sealed_record"
)]
fn a_crafted_length_is_a_typed_error_and_the_process_lives() {
    let dir = crate::common::tempdir();
    let m = open(dir.path(), &Clock::manual(0));
    m.remember(NewMemory::new("already here")).unwrap();
    for len in [1u64 << 62, u64::MAX, 1 << 40, 1 << 31] {
        let path = dir.path().join("crafted.mlx");
        std::fs::write(&path, huge_length_export(len)).unwrap();
        let err = m.transfer().import(&path).unwrap_err();
        assert!(
            matches!(&err, Error::Corrupt { detail, .. } if detail.contains("record 0")),
            "{len}: {err}"
        );
    }
    assert_eq!(m.stats().unwrap().memories, 1);
}

/// The FFI's and Python's tests import this file; it must stay what the crafter makes.
#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "compares a plaintext export byte for byte"
)]
fn the_ffi_fixture_is_the_crafted_file() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ffi/tests/data/huge-length.mlx");
    let crafted = huge_length_export(1 << 62);
    if std::env::var_os("MEMLOOP_BLESS").is_some() {
        std::fs::create_dir_all(fixture.parent().unwrap()).unwrap();
        std::fs::write(&fixture, &crafted).unwrap();
    }
    assert_eq!(
        std::fs::read(&fixture).expect("run with MEMLOOP_BLESS=1 to write the fixture"),
        crafted
    );
}

/// Record 600 of 700 carries a NaN vector: the import fails naming it, and not one of the
/// 599 records before it was committed.
#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "crafts a plaintext export; a sealed one fails authentication instead"
)]
fn a_failing_import_leaves_the_store_exactly_as_it_was() {
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let clock = Clock::manual(0);
    let src = open(a.path(), &clock);
    src.remember_batch(sentences(700).iter().map(NewMemory::new).collect())
        .unwrap();
    let file = a.path().join("all.mlx");
    src.transfer().export(&file, &MemoryFilter::new()).unwrap();
    let good = std::fs::read(&file).unwrap();
    let mut records = payloads(&good);
    assert_eq!(records.len(), 700);
    let r = &mut records[600];
    let vector_at = r.len() - 256 * 4;
    r[vector_at..vector_at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let bad = reassemble(&good[..records_start(&good)], &records);
    std::fs::write(&file, bad).unwrap();

    let dst = open(b.path(), &clock);
    dst.remember(NewMemory::new("the one memory before the import"))
        .unwrap();
    let before = dst.stats().unwrap();
    let err = dst.transfer().import(&file).unwrap_err();
    assert!(
        matches!(&err, Error::Corrupt { detail, .. } if detail.contains("record 600")),
        "{err}"
    );
    let after = dst.stats().unwrap();
    assert_eq!(after.memories, before.memories);
    assert_eq!(after.seq, before.seq, "not one change was logged");
    drop(dst);
    let dst = open(b.path(), &clock);
    assert_eq!(dst.stats().unwrap().memories, 1);
}

/// `export` onto the live `store.redb` (or another of the store's own files) is refused before
/// anything is written; the store stays intact. Other names in the folder are fine.
#[test]
fn an_export_into_the_store_directory_is_refused() {
    let dir = crate::common::tempdir();
    let m = open(dir.path(), &Clock::manual(0));
    m.remember(NewMemory::new("keep me")).unwrap();
    let before = std::fs::read(dir.path().join("store.redb")).unwrap();
    for target in [
        "store.redb",
        "index.mlx",
        "LOCK",
        "manifest.json",
        "index.mlx.bak",
    ] {
        let err = m
            .transfer()
            .export(dir.path().join(target), &MemoryFilter::new())
            .unwrap_err();
        assert!(matches!(err, Error::InvalidInput(_)), "{target}: {err}");
    }
    assert_eq!(
        std::fs::read(dir.path().join("store.redb")).unwrap(),
        before
    );
    assert_eq!(
        m.transfer()
            .export(dir.path().join("backup.mlx"), &MemoryFilter::new())
            .unwrap(),
        1
    );
    drop(m);
    let m = open(dir.path(), &Clock::manual(0));
    assert_eq!(m.stats().unwrap().memories, 1);
}

/// Top-hit ids of `queries` with a wide beam (the same answers as an exact search here).
fn top_hits(m: &Memory, queries: &[String]) -> Vec<MemoryId> {
    queries
        .iter()
        .map(|q| {
            let mut query = memloop::Query::new(q.as_str()).k(1);
            query.ef = Some(400);
            let hits = m.recall(&query).unwrap();
            assert!(
                hits[0].score <= 1.0 + 1e-4,
                "score {} of a unit cosine",
                hits[0].score
            );
            hits[0].item.id
        })
        .collect()
}

/// A store of 400 memories, closed (index saved); returns its top hits for `queries`.
fn saved_store(dir: &Path, texts: &[String], queries: &[String]) -> Vec<MemoryId> {
    let m = open(dir, &Clock::manual(0));
    m.remember_batch(texts.iter().map(NewMemory::new).collect())
        .unwrap();
    let hits = top_hits(&m, queries);
    m.close().unwrap();
    hits
}

/// A saved store of `n` sentences: its directory, every `step`-th text as a query, their top
/// hits, and the path of its index file.
fn saved(n: usize, step: usize) -> (tempfile::TempDir, Vec<String>, Vec<MemoryId>, PathBuf) {
    let texts = sentences(n);
    let queries: Vec<String> = texts.iter().step_by(step).cloned().collect();
    let dir = crate::common::tempdir();
    let want = saved_store(dir.path(), &texts, &queries);
    let path = crate::common::index_file(dir.path());
    (dir, queries, want, path)
}

/// Opens `dir` checking every checksum of its index file on open (`verify_index`).
fn open_verified(dir: &Path) -> Memory {
    let options = Options {
        verify_index: true,
        ..hashing(256, &Clock::manual(0))
    };
    Memory::open(dir, options).unwrap()
}

/// Damage that passes every cheap check (a 4 KiB flip in the vectors, one vector negated, the
/// id section swapped, garbled level-0 links): the full check catches it before the first
/// search, the index is rebuilt from the database, answers are right, and the damage is never
/// saved: the next open finds a file that passes every checksum.
#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "flips bytes at plaintext index offsets; a sealed index fails authentication and is rebuilt"
)]
fn a_damaged_index_is_rebuilt_before_it_is_believed_or_saved() {
    let (dir, queries, want, _) = saved(400, 37);
    /// (offset, length) of section `i`, read from the header's section table.
    fn section(file: &[u8], i: usize) -> (usize, usize) {
        let at = 96 + i * 24;
        let word = |o: usize| u64::from_le_bytes(file[at + o..at + o + 8].try_into().unwrap());
        (word(0) as usize, word(8) as usize)
    }
    type Damage = fn(&mut Vec<u8>);
    let cases: [(&str, Damage); 4] = [
        ("4 KiB flipped", |f| {
            let (vectors, len) = section(f, 0);
            let mid = vectors + len / 2;
            f[mid..mid + 4096].iter_mut().for_each(|b| *b ^= 0x5a);
        }),
        ("a vector negated", |f| {
            let (vectors, _) = section(f, 0);
            for x in f[vectors..vectors + 256 * 4].chunks_mut(4) {
                let v = -f32::from_le_bytes(x.try_into().unwrap());
                x.copy_from_slice(&v.to_le_bytes());
            }
        }),
        ("ids swapped", |f| {
            let (ids, len) = section(f, 5);
            assert!(len >= 16);
            let (a, b) = (f[ids..ids + 8].to_vec(), f[ids + 8..ids + 16].to_vec());
            f[ids..ids + 8].copy_from_slice(&b);
            f[ids + 8..ids + 16].copy_from_slice(&a);
        }),
        ("level-0 links garbled", |f| {
            let (level0, len) = section(f, 1);
            for w in f[level0 + 4..level0 + len.min(4096)].chunks_mut(4) {
                w.copy_from_slice(&3u32.to_le_bytes());
            }
        }),
    ];
    for (name, damage) in cases {
        // Each case damages the file the previous one left (current with the store).
        let path = crate::common::index_file(dir.path());
        let mut bytes = std::fs::read(&path).unwrap();
        damage(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        let m = open(dir.path(), &Clock::manual(0));
        assert!(
            !m.admin().open_report().index_trusted_by_stamp,
            "{name}: a rewritten file is not the file the store saved"
        );
        assert_eq!(top_hits(&m, &queries), want, "{name}: answers after open");
        let report = m.admin().check().unwrap();
        assert!(report.is_sound(), "{name}: {report:?}");
        assert!(
            report
                .index_rebuilt
                .as_deref()
                .is_some_and(|why| why.contains("verification")),
            "{name}: {report:?}"
        );
        m.close().unwrap();
        let m = open_verified(dir.path());
        assert_eq!(
            m.admin().open_report().index,
            memloop::answers::IndexRecovery::Clean,
            "{name}: the saved file passes every checksum"
        );
        assert_eq!(top_hits(&m, &queries), want, "{name}");
    }
}

/// The file a store saved, unchanged, is searched at once (its stamp is the one recorded at
/// the save; the full check follows in the background). The same bytes written again are a
/// new version of the file: checked before they are searched.
#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "an encrypted index is decrypted and checked at every open, never trusted by a stamp"
)]
#[cfg_attr(
    windows,
    ignore = "no file stamp off Unix (docs/limits.md): every open verifies the index first"
)]
fn an_unchanged_index_is_trusted_by_its_stamp_and_a_rewritten_one_is_not() {
    let (dir, queries, want, path) = saved(300, 29);
    let m = open(dir.path(), &Clock::manual(0));
    assert!(m.admin().open_report().index_trusted_by_stamp);
    assert_eq!(
        m.admin().open_report().index,
        memloop::answers::IndexRecovery::Clean
    );
    assert_eq!(top_hits(&m, &queries), want);
    assert!(m.admin().check().unwrap().is_sound());
    m.close().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    let m = open(dir.path(), &Clock::manual(0));
    assert!(!m.admin().open_report().index_trusted_by_stamp);
    assert_eq!(
        m.admin().open_report().index,
        memloop::answers::IndexRecovery::Clean
    );
    assert_eq!(top_hits(&m, &queries), want);
}

/// Closing right after opening a damaged file must not save the damage as a new file.
#[test]
fn a_close_before_any_search_does_not_save_an_unverified_index() {
    let (dir, queries, want, path) = saved(300, 31);
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    bytes[n / 3..n / 3 + 4096]
        .iter_mut()
        .for_each(|b| *b ^= 0xff);
    std::fs::write(&path, &bytes).unwrap();
    let m = open(dir.path(), &Clock::manual(0));
    m.remember(NewMemory::new("a write that makes the next close save"))
        .unwrap();
    m.close().unwrap();
    let m = open_verified(dir.path());
    assert!(
        !matches!(
            m.admin().open_report().index,
            memloop::answers::IndexRecovery::Rebuilt(_)
        ),
        "{:?}",
        m.admin().open_report().index
    );
    assert_eq!(top_hits(&m, &queries), want);
}

/// An `index.mlx` copied from another store with the same count and sequence is recognised by
/// the store id in its header and rebuilt, not believed.
#[test]
fn an_index_from_another_store_is_rebuilt() {
    let texts = sentences(400);
    let (a, b) = (crate::common::tempdir(), crate::common::tempdir());
    let queries_a: Vec<String> = texts[..200].iter().step_by(23).cloned().collect();
    let queries_b: Vec<String> = texts[200..].iter().step_by(23).cloned().collect();
    saved_store(a.path(), &texts[..200], &queries_a);
    let want = saved_store(b.path(), &texts[200..], &queries_b);
    std::fs::copy(
        crate::common::index_file(a.path()),
        crate::common::index_file(b.path()),
    )
    .unwrap();
    let m = open(b.path(), &Clock::manual(0));
    assert!(
        // A sealed index names its store in its associated data: it fails authentication.
        matches!(&m.admin().open_report().index, memloop::answers::IndexRecovery::Rebuilt(why)
            if why.contains("another store") || why.contains("fails authentication")),
        "{:?}",
        m.admin().open_report().index
    );
    assert_eq!(top_hits(&m, &queries_b), want);
}

/// A database with a damaged item: `salvage` exports every other memory, which a new store
/// imports; the damaged one is reported, not fatal.
#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "salvage reads raw records and cannot decrypt them (docs/privacy.md)"
)]
fn salvage_exports_every_readable_memory_of_a_damaged_database() {
    let dir = crate::common::tempdir();
    let texts = sentences(50);
    {
        let m = open(dir.path(), &Clock::manual(0));
        m.remember_batch(texts.iter().map(NewMemory::new).collect())
            .unwrap();
        m.remember(NewMemory::new("DAMAGED-MEMORY-MARKER")).unwrap();
        m.close().unwrap();
    }
    let db = dir.path().join("store.redb");
    let mut bytes = std::fs::read(&db).unwrap();
    let marker = b"DAMAGED-MEMORY-MARKER";
    let mut hits = 0;
    while let Some(at) = bytes.windows(marker.len()).position(|w| w == marker) {
        bytes[at..at + marker.len()].fill(0xff); // not UTF-8 any more
        hits += 1;
    }
    assert!(hits >= 1);
    std::fs::write(&db, &bytes).unwrap();

    let out = dir.path().join("salvaged.mlx");
    let report = memloop::salvage(dir.path(), &out).unwrap();
    assert_eq!((report.saved, report.skipped), (50, 1), "{report:?}");
    let fresh = crate::common::tempdir();
    let m = open(fresh.path(), &Clock::manual(0));
    assert_eq!(m.transfer().import(&out).unwrap().added, 50);
    let mut got: Vec<String> = m
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|i| i.text)
        .collect();
    got.sort();
    let mut want = texts.clone();
    want.sort();
    assert_eq!(got, want);
}
