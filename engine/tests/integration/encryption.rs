//! Encryption at rest: nothing readable in any file, erasure that holds for old copies, typed
//! errors for every bad key, and tampering caught.

use memloop::MemoryId;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memloop::{
    faults::Fault, faults::StorageFaults, privacy::verify_receipt, privacy::verify_receipt_chain,
    privacy::KeyError, Clock, Encryption, Error, ErrorCode, Memory, MemoryFilter, NewMemory,
    Options, Query, Scope, TextEmbedder,
};

/// A dense deterministic embedder: every float of every vector is non-zero, so a 16-byte run
/// of one is distinctive (a sparse vector's runs of zeros are in every file).
pub(crate) struct Dense;

impl TextEmbedder for Dense {
    fn fingerprint(&self) -> String {
        "dense-test:64".into()
    }
    fn dim(&self) -> usize {
        64
    }
    fn embed_documents(&self, texts: &[&str]) -> memloop::Result<Vec<Vec<f32>>> {
        texts.iter().map(|t| self.embed_query(t)).collect()
    }
    fn embed_query(&self, text: &str) -> memloop::Result<Vec<f32>> {
        let seed = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        Ok((0..64u64)
            .map(|i| {
                let h = xxhash_rust::xxh3::xxh3_64_with_seed(&i.to_le_bytes(), seed);
                0.05 + (h % 1000) as f32 / 1000.0
            })
            .collect())
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}

fn options(key: &Path) -> Options {
    Options {
        encryption: Some(Encryption::key_file(key)),
        clock: Clock::manual(1_700_000_000_000),
        ..Options::with_embedder(Arc::new(Dense))
    }
}

fn text(i: usize) -> String {
    format!("memo zq{i:06}x: the courier left parcel {i} with the neighbour")
}

/// Every file under `dir`, recursively.
pub(crate) fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// Fails if `bytes` hold a memory's marker (`zq` and six digits), a tag marker (`tg` and six
/// digits), or any 16-byte run of a vector in `runs`.
pub(crate) fn assert_sealed(name: &Path, bytes: &[u8], runs: &HashSet<[u8; 16]>) {
    for w in bytes.windows(8) {
        let marker =
            (&w[..2] == b"zq" || &w[..2] == b"tg") && w[2..].iter().all(u8::is_ascii_digit);
        assert!(
            !marker,
            "{}: holds {:?}",
            name.display(),
            String::from_utf8_lossy(w)
        );
    }
    for w in bytes.windows(16) {
        assert!(
            !runs.contains(<&[u8; 16]>::try_from(w).unwrap()),
            "{}: holds 16 bytes of a stored vector",
            name.display()
        );
    }
}

/// Every 16-byte run (four floats in a row) of the vectors of `texts`, raw and normalised.
pub(crate) fn vector_runs(texts: impl Iterator<Item = String>) -> HashSet<[u8; 16]> {
    let mut runs = HashSet::new();
    for t in texts {
        let v = Dense.embed_query(&t).unwrap();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        for form in [v.clone(), v.iter().map(|x| x / norm).collect::<Vec<f32>>()] {
            let bytes: Vec<u8> = form.iter().flat_map(|x| x.to_le_bytes()).collect();
            for w in bytes.chunks_exact(4).collect::<Vec<_>>().windows(4) {
                runs.insert(<[u8; 16]>::try_from(w.concat()).unwrap());
            }
        }
    }
    runs
}

/// Copies a key file into a new file private to this user, as a key file must be (a plain
/// copy takes the source's mode on Unix; under Wine it is readable by everyone).
pub(crate) fn copy_private(from: &std::path::Path, to: &std::path::Path) {
    std::io::Write::write_all(
        &mut memloop::privacy::create_new_private(to).unwrap(),
        &std::fs::read(from).unwrap(),
    )
    .unwrap();
}

#[test]
fn an_encrypted_store_keeps_no_text_tag_or_vector_in_the_clear() {
    let root = crate::common::tempdir();
    let (dir, key, export) = (
        root.path().join("store"),
        root.path().join("store.key"),
        root.path().join("out.mlx"),
    );
    let n = 10_000;
    let memory = Memory::open(&dir, options(&key)).unwrap();
    let batch: Vec<NewMemory> = (0..n)
        .map(|i| {
            let m = NewMemory::new(text(i)).tag(format!("tg{i:06}"));
            match i % 4 {
                0 => m,
                u => m.scope(Scope::user(format!("user-{u}"))),
            }
        })
        .collect();
    memory.remember_batch(batch).unwrap();
    // Reads decrypt: an exact text comes back first.
    let hits = memory
        .recall(
            &Query::new(text(4242))
                .k(1)
                .filter(MemoryFilter::new().scope(Scope::user("user-2"))),
        )
        .unwrap();
    assert_eq!(hits[0].item.text, text(4242));
    memory
        .transfer()
        .export(&export, &MemoryFilter::new())
        .unwrap();
    let stream = memloop::requests::ExportRequest {
        format: Some("arrow".into()),
        ..memloop::requests::ExportRequest::to(root.path().join("changes.arrow"))
    };
    assert_eq!(
        memory
            .transfer()
            .export_request(&stream)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidInput
    );
    memory.close().unwrap();

    let runs = vector_runs((0..n).map(text));
    let mut scanned = files(&dir);
    scanned.push(export.clone());
    scanned.push(key.clone());
    for path in &scanned {
        assert_sealed(path, &std::fs::read(path).unwrap(), &runs);
    }
    // The sealed export imports into a store opened with the same key file.
    let again = Memory::open(root.path().join("restored"), options(&key)).unwrap();
    assert_eq!(again.transfer().import(&export).unwrap().added, n);
    assert_eq!(again.get(MemoryId::new(1)).unwrap().unwrap().text, text(0));
}

#[test]
fn erasing_a_user_destroys_its_key_for_every_copy_and_signs_a_receipt() {
    let root = crate::common::tempdir();
    let (dir, key) = (root.path().join("store"), root.path().join("store.key"));
    let memory = Memory::open(&dir, options(&key)).unwrap();
    for i in 0..50 {
        let user = if i % 2 == 0 { "ana" } else { "bob" };
        memory
            .remember(NewMemory::new(text(i)).scope(Scope::user(user)))
            .unwrap();
    }
    memory.admin().checkpoint().unwrap();
    let old_export = root.path().join("before.mlx");
    memory
        .transfer()
        .export(&old_export, &MemoryFilter::new())
        .unwrap();
    // A backup of the directory, taken while the store is open (as a backup tool would).
    let backup = root.path().join("backup");
    std::fs::create_dir(&backup).unwrap();
    for f in files(&dir) {
        std::fs::copy(&f, backup.join(f.file_name().unwrap())).unwrap();
    }
    let erased = memory.scoped(&Scope::user("ana")).erase().unwrap();
    assert_eq!(erased.memories, 25);
    let receipt = erased.receipt;
    assert!(receipt.encrypted && receipt.destroyed_key.is_some());
    assert_eq!(
        Some(receipt.public_key.clone()),
        memory.admin().receipt_public_key().unwrap()
    );
    let line = receipt.to_line().into_bytes();
    assert_eq!(verify_receipt(&line).unwrap(), receipt);
    for i in 0..line.len() {
        let mut bad = line.clone();
        bad[i] ^= 0x01;
        assert!(verify_receipt(&bad).is_err(), "byte {i}");
    }
    // A second erasure chains to the first.
    let second = memory
        .scoped(&Scope::user("nobody"))
        .erase()
        .unwrap()
        .receipt;
    assert_eq!(second.previous, receipt.digest());
    memory.close().unwrap();

    // The backup, opened with today's key file: Ana's records cannot be read, Bob's can.
    let old = Memory::open(&backup, options(&key)).unwrap();
    let left = old
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap();
    assert_eq!(left.len(), 25);
    assert!(left.iter().all(|m| m.user.as_deref() == Some("bob")));
    let hits = old.recall(&Query::new(text(0)).k(50)).unwrap();
    assert!(hits.iter().all(|h| h.item.user.as_deref() == Some("bob")));
    old.close().unwrap();
    // So is the export made before the erasure.
    let restored = Memory::open(root.path().join("restored"), options(&key)).unwrap();
    assert_eq!(restored.transfer().import(&old_export).unwrap().added, 25);
}

#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "opens a plain store, which the matrix encrypts"
)]
fn bad_keys_are_typed_errors_and_write_nothing() {
    let root = crate::common::tempdir();
    let (dir, key) = (root.path().join("store"), root.path().join("store.key"));
    let pass = |p: &str| Options {
        encryption: Some(Encryption::passphrase(&key, p)),
        ..options(&key)
    };
    let memory = Memory::open(&dir, pass("correct horse")).unwrap();
    memory.remember(NewMemory::new(text(1))).unwrap();
    memory.close().unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> = files(&dir)
        .into_iter()
        .filter(|p| !p.ends_with("LOCK"))
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    let code = |r: memloop::Result<Memory>| match r {
        Ok(_) => panic!("opened"),
        Err(e) => (e.code(), e),
    };
    // No key, a wrong passphrase, the passphrase of another ring, a truncated key file.
    let plain = Options::with_embedder(Arc::new(Dense));
    let (c, e) = code(Memory::open(&dir, plain.clone()));
    assert!(matches!(e, Error::Key(KeyError::Missing { .. })), "{e}");
    assert_eq!(c, ErrorCode::Key);
    assert!(matches!(
        code(Memory::open(&dir, pass("wrong"))).1,
        Error::Key(KeyError::Wrong { .. })
    ));
    let ring = std::fs::read(&key).unwrap();
    std::fs::write(&key, &ring[..ring.len() / 2]).unwrap();
    assert!(matches!(
        code(Memory::open(&dir, pass("correct horse"))).1,
        Error::Key(KeyError::Malformed { .. })
    ));
    std::fs::write(&key, &ring).unwrap();
    let other_key = root.path().join("other.key");
    let other = Memory::open(root.path().join("other"), options(&other_key)).unwrap();
    other.close().unwrap();
    assert!(matches!(
        code(Memory::open(&dir, options(&other_key))).1,
        Error::Key(KeyError::Wrong { .. })
    ));
    for (path, bytes) in &before {
        assert!(
            &std::fs::read(path).unwrap() == bytes,
            "{} changed",
            path.display()
        );
    }
    // A key for a plain store is refused, and no key file is made.
    let plain_dir = root.path().join("plain");
    Memory::open(&plain_dir, plain).unwrap().close().unwrap();
    let new_key = root.path().join("new.key");
    assert!(matches!(
        code(Memory::open(&plain_dir, options(&new_key))).1,
        Error::Key(KeyError::NotEncrypted { .. })
    ));
    assert!(!new_key.exists());
    // Rotation: a new passphrase unlocks the same store, the old one no longer does.
    let memory = Memory::open(&dir, pass("correct horse")).unwrap();
    memory
        .admin()
        .rotate_key(&Encryption::passphrase(&key, "battery staple"))
        .unwrap();
    memory.close().unwrap();
    assert!(matches!(
        code(Memory::open(&dir, pass("correct horse"))).1,
        Error::Key(KeyError::Wrong { .. })
    ));
    let memory = Memory::open(&dir, pass("battery staple")).unwrap();
    assert_eq!(memory.get(MemoryId::new(1)).unwrap().unwrap().text, text(1));
}

#[test]
fn a_flipped_byte_in_a_sealed_record_is_an_error_never_a_wrong_answer() {
    let root = crate::common::tempdir();
    let (dir, key) = (root.path().join("store"), root.path().join("store.key"));
    let memory = Memory::open(&dir, options(&key)).unwrap();
    for i in 0..200 {
        memory
            .remember(NewMemory::new(text(i)).scope(Scope::user("ana")))
            .unwrap();
    }
    memory.close().unwrap();
    // Sealed records start 0xA1 and their key's id: the most frequent such 9 bytes.
    let path = dir.join("store.redb");
    let bytes = std::fs::read(&path).unwrap();
    let mut counts = std::collections::HashMap::<&[u8], usize>::new();
    for (i, _) in bytes.iter().enumerate().filter(|(_, b)| **b == 0xA1) {
        if let Some(w) = bytes.get(i..i + 9) {
            *counts.entry(w).or_default() += 1;
        }
    }
    let (prefix, n) = counts.into_iter().max_by_key(|(_, n)| *n).unwrap();
    assert!(n >= 200, "{n}");
    let prefix = prefix.to_vec();
    let mut flipped = 0;
    let mut tampered = bytes.clone();
    for at in (0..bytes.len() - 40)
        .filter(|&i| bytes[i..i + 9] == prefix[..])
        .step_by(7)
    {
        tampered[at + 30] ^= 0x40; // inside the nonce
        flipped += 1;
    }
    assert!(flipped > 10);
    std::fs::write(&path, &tampered).unwrap();
    let outcome = Memory::open(&dir, options(&key)).and_then(|m| {
        let all = m.advanced().scan(&MemoryFilter::new(), usize::MAX)?;
        Ok((all.len(), m.admin().check()?))
    });
    match outcome {
        Err(e) => assert!(
            matches!(e.code(), ErrorCode::Corrupt | ErrorCode::Store),
            "{e}"
        ),
        Ok((n, report)) => panic!("read {n} memories, check said {report:?}"),
    }
}

/// The scope of one user, current and superseded memories alike.
fn of_user(m: &Memory, user: &str) -> usize {
    m.advanced()
        .scan(
            &MemoryFilter::new()
                .scope(Scope::user(user))
                .include_superseded(true),
            usize::MAX,
        )
        .unwrap()
        .len()
}

#[test]
fn an_erasure_cut_short_at_any_write_is_completed_at_the_next_open() {
    // Every storage operation of an erasure fails in turn. After reopening: either nothing
    // of it happened (Ana's rows, no receipt) or all of it did (no row, her key destroyed for
    // every old copy, its receipt in the log), never rows gone with the key alive.
    let mut completed_at_open = 0;
    let mut not_started = 0;
    for op in 1.. {
        let root = crate::common::tempdir();
        let (dir, key) = (root.path().join("store"), root.path().join("store.key"));
        let faults = StorageFaults::new();
        let memory = Memory::open(
            &dir,
            Options {
                storage_faults: Some(Arc::clone(&faults)),
                ..options(&key)
            },
        )
        .unwrap();
        for i in 0..6 {
            let user = if i % 2 == 0 { "ana" } else { "bob" };
            memory
                .remember(NewMemory::new(text(i)).scope(Scope::user(user)))
                .unwrap();
        }
        memory.admin().checkpoint().unwrap();
        let backup = root.path().join("backup");
        std::fs::create_dir(&backup).unwrap();
        for f in files(&dir) {
            std::fs::copy(&f, backup.join(f.file_name().unwrap())).unwrap();
        }
        faults.fail_from(op, Fault::Io); // counted from here
        let result = memory.scoped(&Scope::user("ana")).erase();
        let fired = faults.fired();
        drop(memory);
        let m = Memory::open(&dir, options(&key)).unwrap();
        let log = m.admin().receipt_log().unwrap();
        let chain = verify_receipt_chain(&log).unwrap();
        let (ana, bob) = (of_user(&m, "ana"), of_user(&m, "bob"));
        assert_eq!(bob, 3, "op {op}");
        if result.is_ok() || ana == 0 {
            assert_eq!(ana, 0, "op {op}: an acknowledged erasure left rows");
            assert_eq!(chain.len(), 1, "op {op}: no receipt");
            assert!(chain[0].destroyed_key.is_some(), "op {op}");
            assert_eq!(
                Some(&chain[0].public_key),
                m.admin().receipt_public_key().unwrap().as_ref()
            );
            completed_at_open += usize::from(result.is_err());
        } else {
            assert_eq!(ana, 3, "op {op}: half an erasure");
            assert!(chain.is_empty(), "op {op}");
            not_started += 1;
        }
        m.close().unwrap();
        // A copy taken before: Ana's records are unreadable once the erasure completed.
        let old = Memory::open(&backup, options(&key)).unwrap();
        assert_eq!(
            of_user(&old, "ana"),
            if ana == 0 { 0 } else { 3 },
            "op {op}"
        );
        old.close().unwrap();
        if !fired {
            assert!(result.is_ok());
            break;
        }
    }
    assert!(
        completed_at_open > 0 && not_started > 0,
        "{completed_at_open} {not_started}"
    );
}

#[test]
fn a_key_file_older_than_the_store_is_a_key_error_and_the_receipt_log_is_sealed() {
    let root = crate::common::tempdir();
    let (dir, key) = (root.path().join("store"), root.path().join("store.key"));
    let user = "anaqx.lopez@example.com";
    let memory = Memory::open(&dir, options(&key)).unwrap();
    memory
        .remember(NewMemory::new(text(1)).scope(Scope::user("bob")))
        .unwrap();
    memory.admin().checkpoint().unwrap();
    // A copy of the key file from before Ana had a key.
    let before_ana = root.path().join("before-ana.key");
    copy_private(&key, &before_ana);
    memory
        .remember(NewMemory::new(text(2)).scope(Scope::user(user)))
        .unwrap();
    memory.close().unwrap();
    // Opened with it, the store reads Ana's memory as a key error naming the cause (it used
    // to read as tampering).
    let stale = Memory::open(&dir, options(&before_ana)).unwrap();
    let read = stale.advanced().scan(&MemoryFilter::new(), usize::MAX);
    assert!(
        matches!(&read, Err(Error::Key(KeyError::Wrong { detail, .. })) if detail.contains("older than the store")),
        "{:?}",
        read.err()
    );
    drop(stale);
    // A copy from before the erasure, put back after it: refused, as older than the store.
    let memory = Memory::open(&dir, options(&key)).unwrap();
    let before_erasure = root.path().join("before-erasure.key");
    copy_private(&key, &before_erasure);
    let line = memory
        .scoped(&Scope::user(user))
        .erase()
        .unwrap()
        .receipt_line;
    assert_eq!(memory.admin().receipt_log().unwrap(), vec![line]);
    memory.close().unwrap();
    let before: Vec<(PathBuf, Vec<u8>)> = files(&dir)
        .into_iter()
        .filter(|p| !p.ends_with("LOCK"))
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    let rolled_back = Memory::open(&dir, options(&before_erasure));
    assert!(
        matches!(&rolled_back, Err(Error::Key(KeyError::Wrong { detail, .. })) if detail.contains("older than the store")),
        "{:?}",
        rolled_back.err()
    );
    // L3: the refused open wrote nothing: every byte of the store is as it was.
    for (path, bytes) in &before {
        assert!(
            &std::fs::read(path).unwrap() == bytes,
            "{} changed",
            path.display()
        );
    }
    // The erased user's name is in no file of the store: the receipt log is sealed.
    for f in files(&dir) {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(user.len()).any(|w| w == user.as_bytes()),
            "{} names the erased user",
            f.display()
        );
    }
    let memory = Memory::open(&dir, options(&key)).unwrap();
    assert_eq!(
        verify_receipt_chain(&memory.admin().receipt_log().unwrap())
            .unwrap()
            .len(),
        1
    );
}
