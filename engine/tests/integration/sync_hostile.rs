//! Sync against a failing network and a hostile remote (the round-5 sync audit's scenarios,
//! issue 82, rebuilt from their descriptions): a forget whose
//! push failed is sent again (C6, F1); an erasure that deleted nothing here takes a segment
//! of its own and travels (E2/E3, F2); a signed object replayed under another name is
//! refused and blinds no one (R3/R3b, F3); a damaged segment holds back its device's later
//! ones instead of being skipped (R4b, F7); a row sealed under a key not read yet waits for it
//! (R5b, F4); an oversized object is refused for itself (R6, F14); the sync key settles after
//! an erasure (K7, F8); a device the erasure's segment was withheld from never publishes the
//! erased key; a tail rolled back is reported from the writer's head; an erasure carried out
//! is bound by its own time, keeps a new-life key adopted before it (K5, F5) and a write made
//! before the device saw it (K5b, F12); a device that starts from a snapshot carries out the
//! erasures it relays. Each failed on the code before these fixes; a pull larger than one
//! part applies every part once (a regression test of applying in parts).

use std::path::{Path, PathBuf};

use memloop::{Clock, Encryption, Memory, MemoryFilter, NewMemory, Scope};

use crate::encryption::files;
use crate::sync::{devices, newest_segment, options, remote_of, sync, Device, START};

/// Devices of one ring (their clocks `skew` ms apart) syncing through a `file://` bucket, in a
/// temporary folder (`root`) that lives as long as this.
struct Bucket {
    root: tempfile::TempDir,
    bucket: PathBuf,
    remote: memloop::requests::SyncRequest,
    d: Vec<Device>,
}

impl Bucket {
    fn new(skew: &[i64]) -> Bucket {
        let root = crate::common::tempdir();
        let bucket = root.path().join("bucket");
        let remote = remote_of(&bucket);
        let d = devices(root.path(), skew);
        Bucket {
            root,
            bucket,
            remote,
            d,
        }
    }
}

/// The texts of the current memories of `d`.
fn texts(d: &Memory) -> Vec<String> {
    let mut t: Vec<String> = d
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|i| i.text)
        .collect();
    t.sort();
    t
}

/// A device that joins now, with the ring as device 0's key file holds it now.
fn join(root: &Path, name: &str) -> Device {
    let key = root.join(format!("{name}.key"));
    let ring = Encryption::key_file(root.join("d0.key"))
        .export_ring("p")
        .unwrap();
    Encryption::key_file(&key).import_ring(&ring, "p").unwrap();
    let clock = Clock::manual(START);
    let memory = Memory::open(root.join(name), options(&key, &clock)).unwrap();
    Device { memory, clock }
}

/// The segments of device `hex` in `bucket`, in name order.
fn segments_of(bucket: &Path, hex: &str) -> Vec<PathBuf> {
    let mut s = files(&bucket.join("segments").join(hex));
    s.sort();
    s
}

/// Runs `f` while `bucket/segments` cannot be written (a file stands where the folder was):
/// every push fails at its first segment, as a remote that errors would make it.
fn with_segments_unwritable<T>(bucket: &Path, f: impl FnOnce() -> T) -> T {
    let dir = bucket.join("segments");
    let aside = bucket.join("segments.aside");
    std::fs::rename(&dir, &aside).unwrap();
    std::fs::write(&dir, b"not a folder").unwrap();
    let out = f();
    std::fs::remove_file(&dir).unwrap();
    std::fs::rename(&aside, &dir).unwrap();
    out
}

#[test]
fn a_forget_whose_push_failed_is_sent_by_the_next_sync() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let gone = d[0]
        .memory
        .remember(NewMemory::new("to be forgotten"))
        .unwrap();
    d[0].memory.remember(NewMemory::new("to stay")).unwrap();
    sync(&d[0], &remote);
    sync(&d[1], &remote);
    assert_eq!(texts(&d[1].memory), ["to be forgotten", "to stay"]);
    d[0].memory.forget(gone).unwrap();
    let failed = with_segments_unwritable(&bucket, || d[0].memory.transfer().sync(&remote));
    assert!(failed.is_err(), "the push must fail: {failed:?}");
    // Again, failing: still not recorded as sent.
    let failed = with_segments_unwritable(&bucket, || d[0].memory.transfer().sync(&remote));
    assert!(failed.is_err());
    let r = sync(&d[0], &remote);
    assert_eq!(r.pushed, 1, "the forget is sent again: {r:?}");
    sync(&d[1], &remote);
    assert_eq!(texts(&d[1].memory), ["to stay"]);
    // Sent once it took effect: the next push has nothing.
    assert_eq!(sync(&d[0], &remote).pushed, 0);
}

#[test]
fn an_erasure_that_deleted_nothing_here_takes_its_own_segment_and_travels() {
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    b.memory
        .remember(NewMemory::new("ana's note on b").scope(Scope::user("ana")))
        .unwrap();
    a.memory.remember(NewMemory::new("a's first note")).unwrap();
    let hex = sync(a, &remote).device;
    let first = segments_of(&bucket, &hex);
    assert_eq!(first.len(), 1);
    let bytes = std::fs::read(&first[0]).unwrap();
    // A holds none of ana's memories: the erasure deletes nothing here.
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    let r = sync(a, &remote);
    assert_eq!(r.pushed, 1, "the receipt travels: {r:?}");
    let now = segments_of(&bucket, &hex);
    assert_eq!(now.len(), 2, "a segment of its own: {now:?}");
    assert_eq!(
        std::fs::read(&first[0]).unwrap(),
        bytes,
        "the earlier segment is never replaced"
    );
    // B carries the erasure out (its note of ana goes), and a new device gets A's note.
    let r = sync(b, &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["a's first note"]);
    let c = join(root.path(), "c");
    let r = c.memory.transfer().sync(&remote).unwrap();
    assert_eq!(r.erasures, 1, "{r:?}");
    assert_eq!(texts(&c.memory), ["a's first note"]);
    sync(a, &remote);
    assert_eq!(texts(&a.memory), ["a's first note"]);
}

#[test]
fn a_signed_object_replayed_under_another_name_is_refused_and_blinds_no_one() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory.remember(NewMemory::new("written first")).unwrap();
    let hex = sync(a, &remote).device;
    sync(b, &remote);
    let dir = bucket.join("segments").join(&hex);
    // R3: an old segment under a far-future name; R3b: A's signed head as a segment.
    let old = segments_of(&bucket, &hex)[0].clone();
    std::fs::copy(&old, dir.join("99999999999999999999-000000.seg")).unwrap();
    std::fs::copy(
        bucket.join("heads").join(&hex),
        dir.join("99999999999999999998-000000.seg"),
    )
    .unwrap();
    let r = sync(b, &remote);
    assert_eq!(r.pulled, 0, "{r:?}");
    assert_eq!(
        r.refused.len(),
        1,
        "the first replay, and what waits behind it: {r:?}"
    );
    // The remote turns honest; A writes after the replay.
    std::fs::remove_file(dir.join("99999999999999999999-000000.seg")).unwrap();
    std::fs::remove_file(dir.join("99999999999999999998-000000.seg")).unwrap();
    a.memory
        .remember(NewMemory::new("written after the replay"))
        .unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert!(r.refused.is_empty(), "{r:?}");
    assert_eq!(
        texts(&b.memory),
        ["written after the replay", "written first"]
    );
    // Compaction by A deletes nothing B has not applied (B's head covers what it read).
    a.memory
        .remember(NewMemory::new("written before the compaction"))
        .unwrap();
    sync(a, &remote);
    let mut compact = remote.clone();
    compact.compact = true;
    let r = a.memory.transfer().sync(&compact).unwrap();
    assert!(r.deleted_segments <= 2, "{r:?}");
    sync(b, &remote);
    assert_eq!(
        texts(&b.memory),
        [
            "written after the replay",
            "written before the compaction",
            "written first"
        ]
    );
}

#[test]
fn a_damaged_segment_holds_back_its_devices_later_ones_until_it_verifies() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory.remember(NewMemory::new("in the first")).unwrap();
    let hex = sync(a, &remote).device;
    a.memory.remember(NewMemory::new("in the second")).unwrap();
    sync(a, &remote);
    let segs = segments_of(&bucket, &hex);
    assert_eq!(segs.len(), 2);
    let good = std::fs::read(&segs[0]).unwrap();
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 5] ^= 1;
    std::fs::write(&segs[0], &bad).unwrap();
    for _ in 0..2 {
        let r = sync(b, &remote);
        assert_eq!((r.pulled, r.refused.len()), (0, 1), "{r:?}");
    }
    std::fs::write(&segs[0], &good).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.refused.len()), (2, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["in the first", "in the second"]);
}

#[test]
fn rows_under_a_key_not_read_yet_wait_for_it() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    sync(b, &remote);
    // A user new to the ring B holds: bo's key is made on A after the ring was carried.
    a.memory
        .remember(NewMemory::new("bo's first note").scope(Scope::user("bo")))
        .unwrap();
    a.memory.remember(NewMemory::new("a plain note")).unwrap();
    sync(a, &remote);
    // The key directory hidden from B for one sync (a remote that serves segments first).
    let keys = bucket.join("keys");
    let aside = bucket.join("keys.aside");
    std::fs::rename(&keys, &aside).unwrap();
    let r = sync(b, &remote);
    assert_eq!(
        (r.pulled, r.unreadable, r.waiting.len()),
        (0, 0, 1),
        "{r:?}"
    );
    std::fs::rename(&aside, &keys).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.waiting.len()), (2, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["a plain note", "bo's first note"]);
}

#[test]
fn an_oversized_object_is_refused_for_itself_not_for_the_sync() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    d[0].memory.remember(NewMemory::new("a note")).unwrap();
    sync(&d[0], &remote);
    // 70 MiB (sparse) in a device folder no ring holder wrote.
    let junk = bucket.join("segments/00000000deadbeef/00000000000000000001-000000.seg");
    std::fs::create_dir_all(junk.parent().unwrap()).unwrap();
    std::fs::File::create(&junk)
        .unwrap()
        .set_len(70 << 20)
        .unwrap();
    let r = sync(&d[1], &remote);
    assert_eq!(r.refused.len(), 1, "{r:?}");
    assert_eq!(texts(&d[1].memory), ["a note"]);
    assert!(newest_segment(&bucket).ends_with("00000000000000000001-000000.seg"));
}

#[test]
fn the_sync_key_settles_after_one_erasure() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory
        .remember(NewMemory::new("ana's note").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    sync(b, &remote);
    let published_before: Vec<PathBuf> = files(&bucket.join("keys"));
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    let receipt: serde_json::Value =
        serde_json::from_str(&a.memory.admin().receipt_log().unwrap()[0]).unwrap();
    let destroyed = receipt["destroyed_key"].as_str().unwrap().to_string();
    let count = |dir: &str| {
        let p = bucket.join(dir);
        if p.exists() {
            files(&p).len()
        } else {
            0
        }
    };
    for _ in 0..3 {
        sync(a, &remote);
        sync(b, &remote);
    }
    let settled = (count("keks"), count("keys"), count("gone"));
    for _ in 0..10 {
        sync(a, &remote);
        sync(b, &remote);
    }
    assert_eq!(
        (count("keks"), count("keys"), count("gone")),
        settled,
        "no new key objects once settled"
    );
    // K3a: the erased user's key is published under no sync key made after the erasure; only
    // its "destroyed" marker is (in gone/).
    assert!(files(&bucket.join("gone"))
        .iter()
        .any(|f| f.ends_with(&destroyed)));
    let again: Vec<PathBuf> = files(&bucket.join("keys"))
        .into_iter()
        .filter(|f| !published_before.contains(f) && f.ends_with(&destroyed))
        .collect();
    assert!(
        again.is_empty(),
        "ana's destroyed key published again: {again:?}"
    );
    // Still one memory key directory both read: a note written now reaches the other.
    b.memory
        .remember(NewMemory::new("after the keys settled").scope(Scope::user("cy")))
        .unwrap();
    sync(b, &remote);
    sync(a, &remote);
    assert_eq!(texts(&a.memory), ["after the keys settled"]);
}

#[test]
fn forgetting_a_current_version_means_the_same_on_every_device() {
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    let v1 = a.memory.remember(NewMemory::new("V2 v1 text")).unwrap();
    a.clock.advance(1_000).unwrap();
    let v2 = a
        .memory
        .update(
            v1,
            memloop::requests::Update {
                text: Some("V2 v2 text".into()),
                ..Default::default()
            },
        )
        .unwrap();
    a.memory.remember(NewMemory::new("first")).unwrap();
    sync(a, &remote);
    sync(b, &remote);
    a.memory.forget(v2).unwrap();
    // Here as there: the version before it is current again.
    assert_eq!(texts(&a.memory), ["V2 v1 text", "first"]);
    sync(a, &remote);
    sync(b, &remote);
    assert_eq!(crate::sync::view(&a.memory), crate::sync::view(&b.memory));
    assert_eq!(texts(&b.memory), ["V2 v1 text", "first"]);
}

#[cfg(unix)]
#[test]
fn a_file_remote_follows_no_symbolic_link_out_of_its_folder() {
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    d[0].memory.remember(NewMemory::new("a note")).unwrap();
    sync(&d[0], &remote);
    // R7c: `heads/` a link to a folder outside the remote.
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(bucket.join("heads")).unwrap();
    std::os::unix::fs::symlink(&outside, bucket.join("heads")).unwrap();
    let r = d[1].memory.transfer().sync(&remote);
    assert!(r.is_err(), "a write through the link must fail: {r:?}");
    assert!(
        std::fs::read_dir(&outside).unwrap().next().is_none(),
        "nothing written outside the remote"
    );
    std::fs::remove_file(bucket.join("heads")).unwrap();
    // R7a: an object that is a link to a file outside is refused for itself, not read.
    let secret = root.path().join("secret.seg");
    std::fs::write(&secret, b"MLSYNC01 not a segment").unwrap();
    let dir = bucket.join("segments/00000000000000aa");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("00000000000000000001-000000.seg")).unwrap();
    let r = sync(&d[1], &remote);
    assert_eq!(r.refused.len(), 1, "{r:?}");
    assert_eq!(texts(&d[1].memory), ["a note"]);
}

#[test]
fn a_lineage_stays_whole_when_a_forked_version_is_forgotten_before_its_successor_arrives() {
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 0, 0]);
    let (a, b, c) = (&d[0], &d[1], &d[2]);
    let step = |x: &Device| {
        x.clock.advance(1_000).unwrap();
    };
    let id_of = |x: &Device, text: &str| {
        x.memory
            .advanced()
            .scan(&MemoryFilter::new().include_superseded(true), usize::MAX)
            .unwrap()
            .into_iter()
            .find(|i| i.text == text)
            .unwrap()
            .id
    };
    let update = |x: &Device, from: &str, to: &str| {
        step(x);
        x.memory
            .update(
                id_of(x, from),
                memloop::requests::Update {
                    text: Some(to.into()),
                    ..Default::default()
                },
            )
            .unwrap();
    };
    a.memory.remember(NewMemory::new("n")).unwrap();
    for x in [a, b, c] {
        sync(x, &remote);
    }
    update(a, "n", "u1");
    for x in [a, b, c] {
        sync(x, &remote);
    }
    // A fork: B and A each update u1, neither having seen the other's.
    update(b, "u1", "u2 by b");
    sync(b, &remote);
    update(a, "u1", "u3 by a");
    // C forgets u1 (the fork point) before it has seen A's successor of it.
    sync(c, &remote);
    step(c);
    c.memory.forget(id_of(c, "u1")).unwrap();
    sync(c, &remote);
    for _ in 0..2 {
        for x in [a, b, c] {
            sync(x, &remote);
        }
    }
    let va = crate::sync::view(&a.memory);
    assert_eq!(va, crate::sync::view(&b.memory));
    assert_eq!(va, crate::sync::view(&c.memory));
    // One lineage, one current version: the one made last.
    assert_eq!(texts(&a.memory), ["u3 by a"]);
}

#[test]
fn a_withheld_segment_is_reported_and_holds_back_the_later_ones_until_served() {
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    let mut hex = String::new();
    for t in ["one", "two", "three"] {
        a.memory.remember(NewMemory::new(t)).unwrap();
        hex = sync(a, &remote).device;
    }
    let segs = segments_of(&bucket, &hex);
    assert_eq!(segs.len(), 3);
    // R2b/F10: the middle one withheld while the later one is served.
    let aside = root.path().join("withheld.seg");
    std::fs::rename(&segs[1], &aside).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.missing.len()), (1, 1), "{r:?}");
    assert_eq!(texts(&b.memory), ["one"]);
    std::fs::rename(&aside, &segs[1]).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.missing.len()), (2, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["one", "three", "two"]);
    // R1b: a rolled-back remote (A's last segment gone) met by a device that joins later.
    a.memory.remember(NewMemory::new("four")).unwrap();
    sync(a, &remote);
    a.memory.remember(NewMemory::new("five")).unwrap();
    sync(a, &remote);
    let segs = segments_of(&bucket, &hex);
    std::fs::rename(&segs[3], &aside).unwrap();
    let c = join(root.path(), "c");
    let r = c.memory.transfer().sync(&remote).unwrap();
    assert_eq!(r.missing.len(), 1, "{r:?}");
    assert!(!texts(&c.memory).contains(&"five".to_string()));
}

#[test]
fn a_users_new_life_after_an_erasure_reaches_the_other_devices() {
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory
        .remember(NewMemory::new("ana's old life").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    sync(b, &remote);
    assert_eq!(texts(&b.memory), ["ana's old life"]);
    a.clock.advance(1_000).unwrap();
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("new life 1").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["new life 1"]);
    // K5: the key of the new life stays on B, so what follows reads too.
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("new life 2").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert_eq!(
        (r.pulled, r.unreadable, r.waiting.len()),
        (1, 0, 0),
        "{r:?}"
    );
    assert_eq!(texts(&b.memory), ["new life 1", "new life 2"]);
    // The old life's key is gone on both: a copy of B's key ring reads none of it.
    let receipt: serde_json::Value =
        serde_json::from_str(&b.memory.admin().receipt_log().unwrap()[0]).unwrap();
    assert!(receipt["destroyed_key"].is_string(), "{receipt}");
}

#[test]
fn an_erasure_is_bound_by_its_own_time_not_the_clock_of_the_device_carrying_it_out() {
    // B's clock runs 5 s ahead of A's: it carries A's erasure out at a time later than ana's
    // new life on A, which must stay all the same.
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 5_000]);
    let (a, b) = (&d[0], &d[1]);
    a.memory
        .remember(NewMemory::new("ana's old life").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    sync(b, &remote);
    a.clock.advance(1_000).unwrap();
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("new life 1").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["new life 1"]);
    // And a later pull keeps what the erasure's time keeps, not what B's clock would.
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("new life 2").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    sync(b, &remote);
    assert_eq!(texts(&b.memory), ["new life 1", "new life 2"]);
}

#[test]
fn a_new_life_key_adopted_in_an_earlier_sync_than_the_erasure_stays() {
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory
        .remember(NewMemory::new("ana's old life").scope(Scope::user("ana")))
        .unwrap();
    let hex = sync(a, &remote).device;
    sync(b, &remote);
    a.clock.advance(1_000).unwrap();
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("new life 1").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    // The erasure's segment (new life 1 with it) withheld: B adopts the new life's key from
    // the key directory in this sync, and sees the erasure only in the next.
    let erasure = segments_of(&bucket, &hex).pop().unwrap();
    let aside = root.path().join("withheld.seg");
    std::fs::rename(&erasure, &aside).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.erasures, r.missing.len()), (0, 1), "{r:?}");
    std::fs::rename(&aside, &erasure).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.erasures, r.unreadable), (1, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["new life 1"]);
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("new life 2").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.unreadable), (1, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["new life 1", "new life 2"]);
}

#[test]
fn a_write_made_before_the_device_saw_an_erasure_stays_on_every_device() {
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory
        .remember(NewMemory::new("ana's old life").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    sync(b, &remote);
    assert_eq!(texts(&b.memory), ["ana's old life"]);
    // A erases ana; a second later B, which has not seen it, writes for her (under the key
    // the erasure destroys).
    a.clock.advance(1_000).unwrap();
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    b.clock.advance(2_000).unwrap();
    b.memory
        .remember(NewMemory::new("b's note for ana").scope(Scope::user("ana")))
        .unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["b's note for ana"]);
    // B's old key for ana is destroyed all the same (its receipt names it).
    let receipt: serde_json::Value =
        serde_json::from_str(&b.memory.admin().receipt_log().unwrap()[0]).unwrap();
    assert!(receipt["destroyed_key"].is_string(), "{receipt}");
    // A reads the copy B pushed before the erasure reached it as erased, and the one B sent
    // again in the same sync, under ana's new key, as the note.
    let r = sync(a, &remote);
    assert_eq!(r.unreadable, 1, "the copy under the destroyed key: {r:?}");
    assert_eq!(texts(&a.memory), ["b's note for ana"]);
    // Sent once: B's next push has nothing.
    assert_eq!(sync(b, &remote).pushed, 0);
    assert_eq!(texts(&b.memory), ["b's note for ana"]);
}

#[test]
fn a_device_that_starts_from_a_snapshot_carries_out_the_erasures_it_relays() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0, 0]);
    let (a, b, c) = (&d[0], &d[1], &d[2]);
    let mut compact = remote.clone();
    compact.compact = true;
    // B, offline, writes for ana; C then erases her (nothing of hers held there: the erasure
    // travels all the same), A carries it out and compacts: C's segment is deleted.
    b.memory
        .remember(NewMemory::new("ana's note on b").scope(Scope::user("ana")))
        .unwrap();
    b.memory.remember(NewMemory::new("a plain note")).unwrap();
    for x in &d {
        x.clock.advance(1_000).unwrap();
    }
    c.memory.scoped(&Scope::user("ana")).erase().unwrap();
    let hex = sync(c, &remote).device;
    assert_eq!(sync(a, &remote).erasures, 1);
    sync(c, &remote);
    let r = sync(a, &compact);
    assert!(r.deleted_segments > 0, "{r:?}");
    assert!(files(&bucket.join("segments").join(&hex)).is_empty());
    // B starts from A's snapshot: it carries out C's erasure, once.
    let r = sync(b, &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["a plain note"]);
    assert_eq!(sync(b, &remote).erasures, 0);
    for x in [a, c] {
        sync(x, &remote);
        assert_eq!(texts(&x.memory), ["a plain note"]);
    }
}

#[test]
fn rows_under_a_key_destroyed_before_it_was_published_are_erased_not_waited_for() {
    let Bucket {
        root: _root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory.remember(NewMemory::new("a plain note")).unwrap();
    sync(a, &remote);
    sync(b, &remote);
    let before = files(&bucket.join("keys"));
    // A's push of a new user's note lands, but her key never reaches B (a kill between the
    // push and the key directory's write leaves it so; here the entry is taken away).
    a.memory
        .remember(NewMemory::new("erin's note").scope(Scope::user("erin")))
        .unwrap();
    sync(a, &remote);
    let erin_key: Vec<PathBuf> = files(&bucket.join("keys"))
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    assert_eq!(erin_key.len(), 1, "{erin_key:?}");
    std::fs::remove_file(&erin_key[0]).unwrap();
    let r = sync(b, &remote);
    assert_eq!(r.waiting.len(), 1, "{r:?}");
    // A erases erin: her key is destroyed without B ever holding it. B then stops waiting:
    // the key directory says the key is destroyed, so her row reads as erased.
    a.memory.scoped(&Scope::user("erin")).erase().unwrap();
    sync(a, &remote);
    let r = sync(b, &remote);
    assert!(r.waiting.is_empty(), "{r:?}");
    assert_eq!(r.unreadable, 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["a plain note"]);
    assert!(sync(b, &remote).waiting.is_empty());
}

#[test]
fn a_lineage_whose_first_version_is_forgotten_before_its_forks_arrive_stays_one() {
    // B's clock an hour behind: its update orders before A's.
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, -3_600_000, 0]);
    let (a, b, c) = (&d[0], &d[1], &d[2]);
    let first = a.memory.remember(NewMemory::new("n")).unwrap();
    for x in [a, b, c] {
        sync(x, &remote);
    }
    let id_on = |x: &Device| {
        x.memory
            .advanced()
            .scan(&MemoryFilter::new(), usize::MAX)
            .unwrap()
            .into_iter()
            .find(|i| i.text == "n")
            .unwrap()
            .id
    };
    a.clock.advance(1_000).unwrap();
    a.memory
        .update(
            first,
            memloop::requests::Update {
                text: Some("u3 by a".into()),
                ..Default::default()
            },
        )
        .unwrap();
    sync(a, &remote);
    // C forgets the first version before it has seen any version after it.
    c.memory.forget(id_on(c)).unwrap();
    sync(c, &remote);
    b.clock.advance(5_000).unwrap();
    b.memory
        .update(
            id_on(b),
            memloop::requests::Update {
                text: Some("u6 by b".into()),
                ..Default::default()
            },
        )
        .unwrap();
    sync(b, &remote);
    for _ in 0..2 {
        for x in [a, b, c] {
            sync(x, &remote);
        }
    }
    let va = crate::sync::view(&a.memory);
    assert_eq!(va, crate::sync::view(&b.memory));
    assert_eq!(va, crate::sync::view(&c.memory));
    assert_eq!(texts(&c.memory).len(), 1, "one lineage: {va:?}");
}

#[test]
fn a_device_the_erasure_was_withheld_from_never_publishes_the_erased_key() {
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory
        .remember(NewMemory::new("ana's note").scope(Scope::user("ana")))
        .unwrap();
    b.memory
        .remember(NewMemory::new("bo's note").scope(Scope::user("bo")))
        .unwrap();
    let hex = sync(a, &remote).device;
    sync(b, &remote);
    sync(a, &remote);
    assert_eq!(texts(&b.memory), ["ana's note", "bo's note"]);
    let published_before = files(&bucket.join("keys"));
    // A erases ana; the remote then withholds that erasure's segment from B.
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    let receipt: serde_json::Value =
        serde_json::from_str(&a.memory.admin().receipt_log().unwrap()[0]).unwrap();
    let ana_key = receipt["destroyed_key"].as_str().unwrap().to_string();
    sync(a, &remote);
    let erasure = segments_of(&bucket, &hex).pop().unwrap();
    let aside = root.path().join("withheld.seg");
    std::fs::rename(&erasure, &aside).unwrap();
    a.memory.remember(NewMemory::new("a later note")).unwrap();
    sync(a, &remote);
    // B erases bo (its own reason to replace the sync key) and syncs: it still holds ana's key
    // (it has not seen her erasure), but publishes it under no sync key, old or new.
    b.memory.scoped(&Scope::user("bo")).erase().unwrap();
    let r = sync(b, &remote);
    assert_eq!(r.missing.len(), 1, "{r:?}");
    assert_eq!(texts(&b.memory), ["ana's note"]);
    let again: Vec<PathBuf> = files(&bucket.join("keys"))
        .into_iter()
        .filter(|f| !published_before.contains(f) && f.ends_with(&ana_key))
        .collect();
    assert!(
        again.is_empty(),
        "ana's erased key published again: {again:?}"
    );
    // Served at last, the erasure applies on B.
    std::fs::rename(&aside, &erasure).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.erasures, r.missing.len()), (1, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["a later note"]);
    sync(a, &remote);
    assert_eq!(texts(&a.memory), ["a later note"]);
}

#[test]
fn a_tail_rolled_back_is_reported_from_the_writers_head_even_when_the_head_rolls_back_too() {
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0]);
    let (a, b) = (&d[0], &d[1]);
    a.memory.remember(NewMemory::new("one")).unwrap();
    let hex = sync(a, &remote).device;
    sync(b, &remote);
    let old_head = std::fs::read(bucket.join("heads").join(&hex)).unwrap();
    // A's newest segment rolled back, nothing after it to reveal the gap: its head names it.
    a.memory.remember(NewMemory::new("two")).unwrap();
    sync(a, &remote);
    let newest = segments_of(&bucket, &hex).pop().unwrap();
    let aside = root.path().join("rolled-back.seg");
    std::fs::rename(&newest, &aside).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.missing.len()), (0, 1), "{r:?}");
    // The head rolled back to the one before: B remembers the furthest it saw.
    std::fs::write(bucket.join("heads").join(&hex), &old_head).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.missing.len()), (0, 1), "{r:?}");
    // Served again: applied, nothing missing.
    std::fs::rename(&aside, &newest).unwrap();
    let r = sync(b, &remote);
    assert_eq!((r.pulled, r.missing.len()), (1, 0), "{r:?}");
    assert_eq!(texts(&b.memory), ["one", "two"]);
    assert!(sync(b, &remote).missing.is_empty());
}

#[test]
fn a_pull_larger_than_one_part_applies_every_part_once() {
    let two = Bucket::new(&[0, 0]);
    let (a, b, remote) = (&two.d[0], &two.d[1], &two.remote);
    let n = 5000;
    let many: Vec<NewMemory> = (0..n)
        .map(|i| NewMemory::new(format!("note {i} about parcel {}", i * 7919 % 10007)))
        .collect();
    let ids = a.memory.remember_batch(many).unwrap();
    sync(a, remote);
    // Changes to memories of the first part and of the last, in a later segment.
    a.memory.forget(ids[0]).unwrap();
    a.memory.forget(ids[n - 1]).unwrap();
    a.memory.remember(NewMemory::new("the last note")).unwrap();
    sync(a, remote);
    // More rows than one part: applied in parts, each with how far it got.
    let r = sync(b, remote);
    assert!(r.missing.is_empty() && r.refused.is_empty(), "{r:?}");
    assert_eq!(r.pulled_segments, 2, "{r:?}");
    assert_eq!(texts(&b.memory), texts(&a.memory));
    assert_eq!(texts(&b.memory).len(), n - 1);
    assert_eq!(
        sync(b, remote).pulled_segments,
        0,
        "nothing is applied twice"
    );
}

#[test]
fn versions_made_after_an_erasure_from_an_erased_one_stay_one_lineage_on_every_device() {
    // Bo's note is on every device; C erases bo; A and B, not having seen it, each update the
    // note a moment later (two versions made from it, after the erasure's bound). The note
    // goes everywhere; the two updates stay, one lineage on every device (the one made last
    // current), whatever each device held when the others' versions arrived.
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 0, 0]);
    let (a, b, c) = (&d[0], &d[1], &d[2]);
    let id = a
        .memory
        .remember(NewMemory::new("bo's note").scope(Scope::user("bo")))
        .unwrap();
    for x in &d {
        sync(x, &remote);
    }
    for x in &d {
        x.clock.advance(1_000).unwrap();
    }
    c.memory.scoped(&Scope::user("bo")).erase().unwrap();
    sync(c, &remote);
    let update = |x: &Device, text: &str| {
        x.clock.advance(1_000).unwrap();
        let local = x
            .memory
            .advanced()
            .scan(&MemoryFilter::new(), usize::MAX)
            .unwrap()
            .into_iter()
            .find(|i| i.text == "bo's note")
            .map_or(id, |i| i.id);
        x.memory
            .update(
                local,
                memloop::requests::Update {
                    text: Some(text.into()),
                    ..Default::default()
                },
            )
            .unwrap();
    };
    update(a, "a's update");
    // B's a second later by the clocks (equal readings would be ordered by the devices'
    // random ids).
    b.clock.advance(1_000).unwrap();
    update(b, "b's update");
    for _ in 0..2 {
        for x in &d {
            sync(x, &remote);
        }
    }
    let first = crate::sync::view(&a.memory);
    let texts: Vec<&str> = first.iter().map(|v| v.0.as_str()).collect();
    assert_eq!(texts, ["a's update", "b's update"], "{first:?}");
    assert!(
        first
            .iter()
            .any(|v| v.0 == "b's update" && v.3 && v.4.as_deref() == Some("a's update")),
        "one lineage, the later update current: {first:?}"
    );
    for x in [b, c] {
        assert_eq!(crate::sync::view(&x.memory), first);
    }
}

#[test]
fn a_key_made_before_an_erasure_and_learned_after_it_seals_nothing_new() {
    // B writes for bo (under a key B makes now) and has not synced when A, which never held
    // a key of bo's, erases bo. A then learns B's key: the erasure destroyed it (made before
    // the erasure), so A's new life for bo is sealed under a key of its own, which C, having
    // destroyed B's key when it carried the erasure out, reads.
    let Bucket {
        root: _root,
        bucket: _,
        remote,
        d,
    } = Bucket::new(&[0, 0, 0]);
    let (a, b, c) = (&d[0], &d[1], &d[2]);
    b.memory
        .remember(NewMemory::new("b's old note for bo").scope(Scope::user("bo")))
        .unwrap();
    a.clock.advance(1_000).unwrap();
    a.memory.scoped(&Scope::user("bo")).erase().unwrap();
    sync(b, &remote);
    sync(a, &remote);
    let r = sync(c, &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    a.clock.advance(1_000).unwrap();
    a.memory
        .remember(NewMemory::new("bo's new life").scope(Scope::user("bo")))
        .unwrap();
    sync(a, &remote);
    let r = sync(c, &remote);
    assert_eq!((r.pulled, r.unreadable), (1, 0), "{r:?}");
    assert_eq!(texts(&c.memory), ["bo's new life"]);
    sync(b, &remote);
    assert_eq!(texts(&b.memory), ["bo's new life"]);
    assert_eq!(texts(&a.memory), ["bo's new life"]);
}

#[test]
fn a_version_relayed_before_the_one_it_follows_joins_its_lineage_when_that_arrives() {
    // A makes a memory and updates it; C, having pulled both, gives the update feedback, so
    // its push carries the update again. B reads C's push while A's segments are withheld
    // from it: the update arrives before the version it follows. Once A's segments are
    // served, B holds one lineage, as A and C do.
    let Bucket {
        root,
        bucket,
        remote,
        d,
    } = Bucket::new(&[0, 0, 0]);
    let (a, b, c) = (&d[0], &d[1], &d[2]);
    let first = a
        .memory
        .remember(NewMemory::new("the parcel is in the shed"))
        .unwrap();
    a.clock.advance(1_000).unwrap();
    a.memory
        .update(
            first,
            memloop::requests::Update {
                text: Some("the parcel is in the garage".into()),
                ..Default::default()
            },
        )
        .unwrap();
    let hex = sync(a, &remote).device;
    sync(c, &remote);
    let current = c
        .memory
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap();
    assert_eq!(current.len(), 1);
    c.memory.feedback(current[0].id, 5).unwrap();
    sync(c, &remote);
    let folder = bucket.join("segments").join(&hex);
    let aside = root.path().join("withheld");
    std::fs::rename(&folder, &aside).unwrap();
    let r = sync(b, &remote);
    std::fs::rename(&aside, &folder).unwrap();
    assert_eq!(texts(&b.memory), ["the parcel is in the garage"], "{r:?}");
    for _ in 0..2 {
        for x in &d {
            sync(x, &remote);
        }
    }
    let view = crate::sync::view(&a.memory);
    assert!(
        view.iter().any(|v| v.0 == "the parcel is in the garage"
            && v.3
            && v.4.as_deref() == Some("the parcel is in the shed")),
        "{view:?}"
    );
    for x in [b, c] {
        assert_eq!(crate::sync::view(&x.memory), view);
    }
}
