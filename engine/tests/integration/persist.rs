//! Reopening, process lock, model check, index recovery (replay after a crash, rebuild of a
//! bad index file).

use memloop::MemoryId;
use std::process::Command;

use memloop::{
    answers::IndexRecovery, model::VectorEncoding, Clock, Error, Memory, NewMemory, Options, Query,
};

use crate::common::{hashing, open, sentences};

/// The current index file's name in `dir`.
fn index_name(dir: &std::path::Path) -> String {
    let path = crate::common::index_file(dir);
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn results(m: &Memory, queries: &[String]) -> Vec<Vec<(MemoryId, u32)>> {
    queries
        .iter()
        .map(|q| {
            m.recall(&Query::new(q.as_str()).k(10))
                .unwrap()
                .iter()
                .map(|h| (h.item.id, (h.score * 1e5) as u32))
                .collect()
        })
        .collect()
}

#[test]
fn reopen_returns_identical_recall_results() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let texts = sentences(600);
    let queries: Vec<String> = texts
        .iter()
        .step_by(37)
        .map(|t| t.replace("the ", ""))
        .collect();
    let before = {
        let m = open(dir.path(), &clock);
        m.remember_batch(texts.iter().map(NewMemory::new).collect())
            .unwrap();
        results(&m, &queries)
    };
    let m = open(dir.path(), &clock);
    assert_eq!(m.admin().open_report().index, IndexRecovery::Clean);
    assert_eq!(results(&m, &queries), before);
    assert_eq!(m.stats().unwrap().memories, 600);
}

#[test]
fn the_index_vector_encoding_is_recorded_kept_and_changed_by_a_rebuild() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let texts = sentences(400);
    let queries: Vec<String> = texts.iter().step_by(41).cloned().collect();
    let with = |v: Option<VectorEncoding>| Options {
        index_vectors: v,
        ..hashing(256, &clock)
    };
    let exact = {
        let m = Memory::open(dir.path(), with(Some(VectorEncoding::Int8))).unwrap();
        m.remember_batch(texts.iter().map(NewMemory::new).collect())
            .unwrap();
        let got = results(&m, &queries);
        for (hits, q) in got.iter().zip(&queries) {
            // The query's own text is its best match, found through the int8 codes.
            let top = m.get(MemoryId::new((hits[0].0).get())).unwrap().unwrap();
            assert_eq!(&top.text, q);
        }
        got
    };
    // Reopened without a choice: the store's int8 is kept, the file believed as it is.
    {
        let m = Memory::open(dir.path(), with(None)).unwrap();
        assert_eq!(m.admin().open_report().index, IndexRecovery::Clean);
        assert_eq!(results(&m, &queries), exact);
    }
    // Asked for f32: recorded, and the int8 file is rebuilt once; the same answers (scores
    // were exact re-scores already).
    {
        let m = Memory::open(dir.path(), with(Some(VectorEncoding::F32))).unwrap();
        assert!(
            matches!(&m.admin().open_report().index, IndexRecovery::Rebuilt(why) if why.contains("int8")),
            "{:?}",
            m.admin().open_report().index
        );
        assert_eq!(results(&m, &queries), exact);
    }
    let m = Memory::open(dir.path(), with(None)).unwrap();
    assert_eq!(m.admin().open_report().index, IndexRecovery::Clean);
}

#[test]
fn a_second_writer_gets_a_clear_locked_error_at_once() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let m = open(dir.path(), &clock);
    let started = std::time::Instant::now();
    let err = Memory::open(dir.path(), hashing(64, &clock)).unwrap_err();
    assert!(started.elapsed().as_secs() < 2);
    match &err {
        Error::Locked { pid, .. } => assert_eq!(*pid, Some(std::process::id())),
        e => panic!("expected Locked, got {e}"),
    }
    assert!(err.to_string().contains("locked by process"));
    drop(m);
    open(dir.path(), &clock);
}

#[test]
fn another_model_is_a_typed_error() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    drop(open(dir.path(), &clock));
    match Memory::open(dir.path(), hashing(32, &clock)) {
        Err(Error::ModelMismatch { store, loaded, .. }) => {
            assert!(store.contains("256") && loaded.contains("32"));
        }
        other => panic!("expected ModelMismatch, got {other:?}"),
    }
    let manifest = std::fs::read_to_string(dir.path().join("manifest.json")).unwrap();
    assert!(manifest.contains("hashing-v1:256"));
}

/// A damaged index is rebuilt from the stored vectors; a stale one (an older checkpoint of this
/// store) is brought up to date from the change log, which is kept across checkpoints.
#[test]
fn a_garbage_truncated_or_stale_index_is_rebuilt_or_replayed_from_the_store() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(0);
    let texts = sentences(300);
    let queries: Vec<String> = texts.iter().step_by(29).cloned().collect();
    let (before, stale) = {
        let m = open(dir.path(), &clock);
        m.remember_batch(texts[..150].iter().map(NewMemory::new).collect())
            .unwrap();
        m.admin().checkpoint().unwrap();
        let stale = std::fs::read(crate::common::index_file(dir.path())).unwrap();
        m.remember_batch(texts[150..].iter().map(NewMemory::new).collect())
            .unwrap();
        (results(&m, &queries), stale)
    };
    let good = std::fs::read(crate::common::index_file(dir.path())).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"this is not an index at all".repeat(100)),
        ("truncated", good[..good.len() / 2].to_vec()),
        ("stale", stale),
        ("empty", Vec::new()),
    ];
    for (name, bytes) in cases {
        // The file the previous case's close left (a new generation where one is written).
        std::fs::write(crate::common::index_file(dir.path()), &bytes).unwrap();
        let m = open(dir.path(), &clock);
        let recovered = match name {
            "stale" => m.admin().open_report().index == IndexRecovery::Replayed(150),
            _ => matches!(m.admin().open_report().index, IndexRecovery::Rebuilt(_)),
        };
        assert!(recovered, "{name}: {:?}", m.admin().open_report().index);
        let after = results(&m, &queries);
        for (a, b) in after.iter().zip(&before) {
            assert_eq!(a[0], b[0], "{name}: top hit differs after recovery");
        }
        drop(m);
        // The recovered index was checkpointed: the next open is clean.
        assert_eq!(
            open(dir.path(), &clock).admin().open_report().index,
            IndexRecovery::Clean,
            "{name}"
        );
    }
    std::fs::remove_file(crate::common::index_file(dir.path())).unwrap();
    let m = open(dir.path(), &clock);
    assert!(matches!(
        m.admin().open_report().index,
        IndexRecovery::Rebuilt(_)
    ));
    assert_eq!(m.stats().unwrap().indexed, 300);
}

/// Run as a child process by `changes_after_a_crash_are_replayed`: writes past a checkpoint,
/// then aborts without closing.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os("MEMLOOP_TEST_CRASH_DIR") else {
        return;
    };
    let m = open(std::path::Path::new(&dir), &Clock::manual(0));
    let texts = sentences(50);
    m.remember_batch(texts[..30].iter().map(NewMemory::new).collect())
        .unwrap();
    m.admin().checkpoint().unwrap();
    for t in &texts[30..] {
        m.remember(NewMemory::new(t.as_str())).unwrap();
    }
    m.forget(MemoryId::new(1)).unwrap();
    std::process::abort();
}

#[test]
fn changes_after_a_crash_are_replayed() {
    let dir = crate::common::tempdir();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "persist::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("MEMLOOP_TEST_CRASH_DIR", dir.path())
        .output()
        .unwrap()
        .status;
    assert!(!status.success(), "the child must die by abort");
    let m = open(dir.path(), &Clock::manual(0));
    assert_eq!(m.admin().open_report().index, IndexRecovery::Replayed(21));
    assert_eq!(m.stats().unwrap().memories, 49);
    assert!(m.get(MemoryId::new(1)).unwrap().is_none());
    for (i, t) in sentences(50).iter().enumerate().skip(1) {
        let hits = m.recall(&Query::new(t.as_str()).k(1)).unwrap();
        assert_eq!(hits[0].item.text, *t, "memory {i}");
    }
}

#[test]
fn forgetting_half_the_memories_halves_the_files_after_a_checkpoint() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let options = Options {
        durability: memloop::Durability::Grouped,
        dedup_threshold: None,
        ..hashing(384, &clock)
    };
    let m = Memory::open(dir.path(), options).unwrap();
    let mut ids = Vec::new();
    for chunk in sentences(6_000).chunks(500) {
        ids.extend(
            m.remember_batch(chunk.iter().map(NewMemory::new).collect())
                .unwrap(),
        );
    }
    m.admin().checkpoint().unwrap();
    let size = |f: &str| {
        let path = dir.path().join(f);
        if cfg!(feature = "test-encryption") && f == "store.redb" {
            // redb sizes a rewritten file in regions that double: sealed records (49 bytes
            // more each) can land a half-emptied store's file just past one, so what shrinks
            // is counted as the pages that hold anything.
            let bytes = std::fs::read(&path).unwrap();
            return bytes
                .chunks(4096)
                .filter(|p| p.iter().any(|b| *b != 0))
                .count() as f64
                * 4096.0;
        }
        std::fs::metadata(path).unwrap().len() as f64
    };
    let (store_full, index_full) = (size("store.redb"), size(&index_name(dir.path())));
    for id in ids.iter().step_by(2) {
        m.forget(*id).unwrap();
    }
    m.admin().checkpoint().unwrap();
    if cfg!(feature = "test-encryption") {
        // Sealed records fill pages differently: the sparse-file heuristic (live bytes under
        // a third of the file) is tuned on plain ones, so the rewrite is asked for here.
        m.admin().compact().unwrap();
    }
    let (store_half, index_half) = (size("store.redb"), size(&index_name(dir.path())));
    assert!(
        store_half < store_full * 0.6,
        "store {store_full} -> {store_half}"
    );
    assert!(
        index_half < index_full * 0.6,
        "index {index_full} -> {index_half}"
    );
    assert!(!dir.path().join("store.redb.rewrite").exists());
    // The rewritten file holds every remaining memory and nothing forgotten.
    m.close().unwrap();
    let m = Memory::open(dir.path(), hashing(384, &clock)).unwrap();
    assert_eq!(m.stats().unwrap().memories, 3_000);
    assert!(m.get(ids[0]).unwrap().is_none());
    let kept = m.get(ids[1]).unwrap().expect("odd ids are kept");
    assert_eq!(kept.text, sentences(2)[1]);
    let hits = m
        .recall(&Query::new(sentences(4)[3].as_str()).k(1))
        .unwrap();
    assert_eq!(hits[0].item.id, ids[3]);
}

/// A store under a path of non-ASCII names (accents, CJK, an emoji) checkpoints while its
/// index is mapped, again and again, and reopens clean with one index file. Where a mapped file
/// cannot be renamed over (Windows), each checkpoint writes the next generation beside the
/// mapped one; the open after the last removes the older ones.
#[test]
fn a_non_ascii_path_checkpoints_while_mapped_and_reopens_with_one_index_file() {
    let root = crate::common::tempdir();
    let dir = root.path().join("mémoire 記憶 🧠");
    let clock = Clock::manual(0);
    let texts = sentences(500);
    let queries: Vec<String> = texts.iter().step_by(29).cloned().collect();
    let before = {
        let m = open(&dir, &clock);
        for chunk in texts.chunks(125) {
            m.remember_batch(chunk.iter().map(NewMemory::new).collect())
                .unwrap();
            // The index the last checkpoint saved is mapped and searched meanwhile.
            assert!(!m
                .recall(&Query::new(chunk[0].as_str()).k(3))
                .unwrap()
                .is_empty());
            m.admin().checkpoint().unwrap();
        }
        results(&m, &queries)
    };
    let m = open(&dir, &clock);
    assert_eq!(m.admin().open_report().index, IndexRecovery::Clean);
    assert_eq!(results(&m, &queries), before);
    let index_files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index"))
        .collect();
    assert_eq!(index_files.len(), 1, "{index_files:?}");
}
