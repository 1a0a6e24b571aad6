//! Storage faults injected through the seam (`Options::storage_faults`): each file operation of
//! a workload (remember, update, forget, checkpoint, the database rewrite, import) fails in
//! turn, with each kind of fault. After reopening, every acknowledged write is there, and
//! nothing unacknowledged is half there.

use std::path::Path;
use std::sync::Arc;

use memloop::{
    faults::Fault, faults::StorageFaults, requests::Update, Clock, Error, Memory, MemoryFilter,
    MemoryId, NewMemory,
};

use crate::common::{hashing, open};

const FAULTS: [Fault; 4] = [
    Fault::NoSpace,
    Fault::Io,
    Fault::ShortWrite,
    Fault::FailedSync,
];

/// An export of 12 memories from another store, to import.
fn export_file(dir: &Path) -> std::path::PathBuf {
    let src = open(&dir.join("src"), &Clock::manual(0));
    src.remember_batch(
        (0..12)
            .map(|i| NewMemory::new(format!("imported note {i} about harbor {}", i * 13)))
            .collect(),
    )
    .unwrap();
    let file = dir.join("notes.mlx");
    src.transfer().export(&file, &MemoryFilter::new()).unwrap();
    file
}

/// What the workload was told, step by step; `None` once a step failed.
#[derive(Default, Debug)]
struct Told {
    batch: Option<Vec<MemoryId>>,
    updated: Option<MemoryId>,
    forgot: Option<()>,
    checkpointed: Option<()>,
    compacted: Option<()>,
    imported: Option<()>,
    /// The first step that failed (its effect must be all or nothing).
    failed: Option<&'static str>,
}

/// Runs the workload until a step fails.
fn workload(m: &Memory, import: &Path) -> Told {
    let mut told = Told::default();
    macro_rules! step {
        ($name:literal, $slot:expr, $e:expr) => {
            match $e {
                Ok(v) => $slot = Some(v),
                Err(_) => {
                    told.failed = Some($name);
                    return told;
                }
            }
        };
    }
    step!(
        "remember",
        told.batch,
        m.remember_batch(vec![
            NewMemory::new("the deploy key lives in vault prod"),
            NewMemory::new("the staging database listens on port 5433"),
            NewMemory::new("alice prefers tea over coffee"),
        ])
    );
    let batch = told.batch.clone().unwrap();
    step!(
        "update",
        told.updated,
        m.update(
            batch[0],
            Update {
                text: Some("the deploy key moved to vault ops".into()),
                ..Default::default()
            },
        )
    );
    step!("forget", told.forgot, m.forget(batch[2]));
    step!("checkpoint", told.checkpointed, m.admin().checkpoint());
    step!("compact", told.compacted, m.admin().compact());
    step!(
        "import",
        told.imported,
        m.transfer().import(import).map(|_| ())
    );
    told
}

/// Texts of the current (not superseded) memories.
fn current_texts(m: &Memory) -> Vec<String> {
    let mut t: Vec<String> = m
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|i| i.text)
        .collect();
    t.sort();
    t
}

fn check(m: &Memory, told: &Told, fault: Fault, op: u64) {
    let at = format!("{fault:?} at operation {op}, failed step {:?}", told.failed);
    let texts = current_texts(m);
    let has = |t: &str| texts.iter().any(|x| x == t);
    let (port, prod, tea, ops) = (
        "the staging database listens on port 5433",
        "the deploy key lives in vault prod",
        "alice prefers tea over coffee",
        "the deploy key moved to vault ops",
    );
    // remember: all three or none.
    if told.batch.is_some() {
        assert!(has(port), "{at}: acknowledged batch lost: {texts:?}");
    } else {
        let n = [port, prod, tea].iter().filter(|t| has(t)).count();
        assert!(n == 0 || n == 3, "{at}: half a batch: {texts:?}");
    }
    // update: a new version linked to the old one, or nothing.
    if let Some(new) = told.updated {
        assert!(has(ops) && !has(prod), "{at}: {texts:?}");
        let n = m.get(new).unwrap().expect("acknowledged update lost");
        let old = m.get(n.supersedes.expect("linked")).unwrap().unwrap();
        assert_eq!(old.superseded_by, Some(new), "{at}");
    } else if has(port) {
        assert!(
            has(ops) != has(prod),
            "{at}: one current version: {texts:?}"
        );
    }
    // forget: gone if acknowledged.
    if told.forgot.is_some() {
        assert!(!has(tea), "{at}: {texts:?}");
    }
    // import: all twelve or none.
    let imported = texts
        .iter()
        .filter(|t| t.starts_with("imported note"))
        .count();
    if told.imported.is_some() {
        assert_eq!(imported, 12, "{at}");
    } else {
        assert!(
            imported == 0 || imported == 12,
            "{at}: {imported} of 12 imported"
        );
    }
    // The database and the index agree, and every record decodes.
    let report = m.admin().check().unwrap();
    assert!(report.is_sound(), "{at}: {report:?}");
}

/// Opens `dir` again after a drop. Another test of this binary that spawns a process may hold a
/// duplicate of the lock file's descriptor for the instant between its fork and its exec
/// (flock locks follow the open file description), so a `Locked` is retried briefly.
fn reopen(dir: &Path) -> Memory {
    for _ in 0..200 {
        match Memory::open(dir, hashing(256, &Clock::manual(0))) {
            Err(Error::Locked { .. }) => std::thread::sleep(std::time::Duration::from_millis(5)),
            other => return other.expect("reopen"),
        }
    }
    panic!("{} stayed locked", dir.display());
}

#[test]
fn every_failed_file_operation_loses_nothing_acknowledged() {
    let scratch = crate::common::tempdir();
    let import = export_file(scratch.path());
    let faults = StorageFaults::new();
    let mut op = 1;
    let mut injected = 0;
    loop {
        let fault = FAULTS[op as usize % FAULTS.len()];
        let dir = scratch.path().join(format!("run{op}"));
        let options = memloop::Options {
            storage_faults: Some(Arc::clone(&faults)),
            ..hashing(256, &Clock::manual(0))
        };
        let m = Memory::open(&dir, options).unwrap();
        faults.fail_at(op, fault);
        let told = workload(&m, &import);
        drop(m); // closing saves too: a fault may land there
        let fired = faults.fired();
        faults.disarm();
        if !fired {
            assert!(told.failed.is_none(), "{told:?}");
            break;
        }
        injected += 1;
        let m = reopen(&dir);
        check(&m, &told, fault, op);
        drop(m);
        std::fs::remove_dir_all(&dir).unwrap();
        op += 1;
    }
    eprintln!("{injected} file operations failed in turn");
    assert!(
        injected >= 20,
        "the workload made only {injected} file operations"
    );
}

/// After a failed commit the engine reopens its database itself (redb recovers the last
/// committed state): reads go on, the write that failed was not acknowledged and is not there,
/// and writes resume as soon as the disk works again, with no restart.
#[test]
fn a_failed_commit_recovers_inside_the_engine() {
    let dir = crate::common::tempdir();
    let faults = StorageFaults::new();
    let options = memloop::Options {
        storage_faults: Some(Arc::clone(&faults)),
        ..hashing(256, &Clock::manual(0))
    };
    let m = Memory::open(dir.path(), options).unwrap();
    let kept = m
        .remember(NewMemory::new("written before the fault"))
        .unwrap();
    // Fail the fsync of the next commit (its writes come first; try each op until a sync).
    faults.fail_at(1, Fault::FailedSync);
    let lost = m.remember(NewMemory::new("the write whose fsync failed"));
    assert!(lost.is_err() && faults.fired());
    faults.disarm();
    assert_eq!(
        m.get(kept).unwrap().unwrap().text,
        "written before the fault"
    );
    let hits = m
        .recall(&memloop::Query::new("written before the fault").k(1))
        .unwrap();
    assert_eq!(hits[0].item.id, kept);
    let again = m
        .remember(NewMemory::new("writable again without a restart"))
        .unwrap();
    assert_eq!(
        current_texts(&m),
        [
            "writable again without a restart",
            "written before the fault"
        ]
    );
    assert!(m.admin().check().unwrap().is_sound());
    drop(m);
    let m = open(dir.path(), &Clock::manual(0));
    assert_eq!(
        m.get(again).unwrap().unwrap().text,
        "writable again without a restart"
    );
    assert_eq!(current_texts(&m).len(), 2);
}

/// A full disk that stays full, then frees up: after the failed commit, recall and get keep
/// answering from the last committed state; erasure and writes succeed once there is room.
#[test]
fn writes_resume_when_a_full_disk_frees_up() {
    let dir = crate::common::tempdir();
    let faults = StorageFaults::new();
    let options = memloop::Options {
        storage_faults: Some(Arc::clone(&faults)),
        ..hashing(256, &Clock::manual(0))
    };
    let m = Memory::open(dir.path(), options).unwrap();
    let texts: Vec<String> = (0..12)
        .map(|i| format!("note {i} about the harbor"))
        .collect();
    for t in &texts {
        m.remember(NewMemory::new(t.as_str()).scope(memloop::Scope::user("carol")))
            .unwrap();
    }
    faults.fail_from(1, Fault::NoSpace);
    for (i, text) in texts.iter().take(3).enumerate() {
        assert!(m.remember(NewMemory::new(format!("no room {i}"))).is_err());
        let hits = m.recall(&memloop::Query::new(text.as_str()).k(1)).unwrap();
        assert_eq!(&hits[0].item.text, text);
    }
    faults.disarm();
    m.remember(NewMemory::new("room again")).unwrap();
    let erased = m.scoped(&memloop::Scope::user("carol")).erase().unwrap();
    assert_eq!(erased.memories, 12);
    assert_eq!(current_texts(&m), ["room again"]);
}

/// A disk that is full and stays full: reads go on (recall, get, scan, stats, check), writes
/// fail with a typed error, closing loses nothing acknowledged, and the store opens again.
#[test]
fn a_full_disk_does_not_break_reads() {
    let dir = crate::common::tempdir();
    let texts: Vec<String> = (0..40)
        .map(|i| format!("full disk note {i} about canyon {}", i * 3))
        .collect();
    {
        let m = open(dir.path(), &Clock::manual(0));
        m.remember_batch(texts.iter().map(NewMemory::new).collect())
            .unwrap();
    }
    let faults = StorageFaults::new();
    let options = memloop::Options {
        storage_faults: Some(Arc::clone(&faults)),
        ..hashing(256, &Clock::manual(0))
    };
    let m = Memory::open(dir.path(), options).unwrap();
    faults.fail_from(1, Fault::NoSpace);
    for t in texts.iter().step_by(7) {
        let hits = m.recall(&memloop::Query::new(t.as_str()).k(1)).unwrap();
        assert_eq!(&hits[0].item.text, t);
        assert!(m.get(hits[0].item.id).unwrap().is_some());
    }
    assert_eq!(m.stats().unwrap().memories, 40);
    assert_eq!(
        m.advanced().scan(&MemoryFilter::new(), 100).unwrap().len(),
        40
    );
    assert!(m.admin().check().unwrap().is_sound());
    assert!(m.remember(NewMemory::new("no room for this")).is_err());
    let _ = m.close(); // the access times of the recalls may not be saved; nothing else is lost
    faults.disarm();
    let m = open(dir.path(), &Clock::manual(0));
    assert_eq!(current_texts(&m).len(), 40);
    m.remember(NewMemory::new("room again")).unwrap();
}

/// Temporary files a crash or a full disk left behind are removed on the next open.
#[test]
fn stale_temporary_files_are_removed_on_open() {
    let dir = crate::common::tempdir();
    drop(open(dir.path(), &Clock::manual(0)));
    for name in ["index.mlx.tmp", "manifest.tmp", "store.redb.rewrite"] {
        std::fs::write(dir.path().join(name), b"half a file").unwrap();
    }
    drop(open(dir.path(), &Clock::manual(0)));
    for name in ["index.mlx.tmp", "manifest.tmp", "store.redb.rewrite"] {
        assert!(!dir.path().join(name).exists(), "{name} left behind");
    }
}

/// A text over the size limit is refused with a typed error before anything is embedded.
#[test]
fn an_oversized_text_is_a_typed_error() {
    let dir = crate::common::tempdir();
    let m = open(dir.path(), &Clock::manual(0));
    let big = "x".repeat(memloop::items::DEFAULT_MAX_TEXT_BYTES + 1);
    let err = m.remember(NewMemory::new(big)).unwrap_err();
    assert!(
        matches!(&err, Error::InvalidInput(e) if matches!(
            e.reason(),
            memloop::InvalidInput::TextTooLong { limit, .. } if *limit == memloop::items::DEFAULT_MAX_TEXT_BYTES
        )),
        "{err}"
    );
    assert!(m.remember(NewMemory::new("\u{0}")).is_err());
    assert_eq!(m.stats().unwrap().memories, 0);
}

/// A background checkpoint that fails (the index cannot be saved) is reported by the next
/// `flush`, and no longer once a later one succeeded.
#[test]
fn a_failed_background_checkpoint_is_reported_by_flush() {
    let dir = crate::common::tempdir();
    let faults = StorageFaults::new();
    let options = memloop::Options {
        storage_faults: Some(Arc::clone(&faults)),
        checkpoint_every: 1,
        ..hashing(256, &Clock::manual(0))
    };
    let m = Memory::open(dir.path(), options).unwrap();
    faults.fail_from(1, Fault::NoSpace);
    // The write itself fails on the full disk; the next one, with room again, commits.
    assert!(m.remember(NewMemory::new("no room")).is_err());
    drop(m);
    faults.disarm();
    let options = memloop::Options {
        storage_faults: Some(Arc::clone(&faults)),
        checkpoint_every: 1,
        ..hashing(256, &Clock::manual(0))
    };
    let m = Memory::open(dir.path(), options).unwrap();
    m.remember(NewMemory::new("a change for the background checkpoint"))
        .unwrap();
    faults.fail_from(1, Fault::NoSpace);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let reported = loop {
        match m.admin().flush() {
            Err(Error::Background(why)) => break why,
            Ok(()) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => panic!("expected a background failure, got {other:?}"),
        }
    };
    assert!(reported.contains("checkpoint"), "{reported}");
    faults.disarm();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline && m.stats().unwrap().checkpoint == 0 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    m.admin().flush().unwrap();
    assert!(
        m.stats().unwrap().checkpoint > 0,
        "the retried checkpoint saved the index"
    );
}
