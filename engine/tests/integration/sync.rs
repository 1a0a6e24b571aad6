//! Sync between devices through a real shared folder (`file://`): three stores sharing one key
//! ring converge whatever they do and in whatever order they sync, with clocks an hour apart;
//! the remote holds nothing in the clear; an erasure travels and holds against a copy of the
//! remote taken before it; a damaged segment is refused and a repeat push heals it.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memloop::requests::{SyncRequest, Update};
use memloop::{Clock, Encryption, Memory, MemoryFilter, MemoryId, NewMemory, Options, Scope};

use crate::encryption::{assert_sealed, files, vector_runs, Dense};

pub(crate) const START: i64 = 1_700_000_000_000;

pub(crate) struct Device {
    pub(crate) memory: Memory,
    pub(crate) clock: Clock,
}

pub(crate) fn options(key: &Path, clock: &Clock) -> Options {
    Options {
        encryption: Some(Encryption::key_file(key)),
        clock: clock.clone(),
        ..Options::with_embedder(Arc::new(Dense))
    }
}

/// `n` devices on one key ring (the first makes it; the others import it), device `i`'s clock
/// `skew[i]` ms off.
pub(crate) fn devices(root: &Path, skew: &[i64]) -> Vec<Device> {
    let first_key = root.join("d0.key");
    let mut out = Vec::new();
    for (i, s) in skew.iter().enumerate() {
        let key = root.join(format!("d{i}.key"));
        if i > 0 {
            let text = Encryption::key_file(&first_key)
                .export_ring("ring pass")
                .unwrap();
            Encryption::key_file(&key)
                .import_ring(&text, "ring pass")
                .unwrap();
        }
        let clock = Clock::manual(START + s);
        let memory = Memory::open(root.join(format!("d{i}")), options(&key, &clock)).unwrap();
        out.push(Device { memory, clock });
    }
    out
}

pub(crate) fn remote_of(dir: &Path) -> SyncRequest {
    SyncRequest::to(format!("file://{}", dir.display()))
}

/// One version as a user sees it: text, user, tags, current, the text it follows.
type Seen = (String, Option<String>, Vec<String>, bool, Option<String>);

/// What a user sees on a device: every version and which are current.
pub(crate) fn view(m: &Memory) -> BTreeSet<Seen> {
    let all = m
        .advanced()
        .scan(&MemoryFilter::new().include_superseded(true), usize::MAX)
        .unwrap();
    let text_of = |id: Option<memloop::MemoryId>| {
        id.and_then(|id| all.iter().find(|i| i.id == MemoryId::new(id.get())))
            .map(|i| i.text.clone())
    };
    all.iter()
        .map(|i| {
            (
                i.text.clone(),
                i.user.clone(),
                i.tags.clone(),
                i.superseded_by.is_none(),
                text_of(i.supersedes),
            )
        })
        .collect()
}

/// The first current memory device `x` holds.
fn first_held(x: &Device) -> MemoryId {
    x.memory
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap()[0]
        .id
}

/// Device `x`, its clock two seconds on, updates memory `id` to `text`; the new version's id.
fn update_text(x: &Device, id: MemoryId, text: &str) -> MemoryId {
    x.clock.advance(2_000).unwrap();
    x.memory
        .update(
            id,
            Update {
                text: Some(text.into()),
                ..Update::default()
            },
        )
        .unwrap()
}

/// Every device syncs `rounds` times in turn; each must then see what device 0 sees. The texts
/// of the current versions, and everything device 0 sees.
fn settle(d: &[Device], remote: &SyncRequest, rounds: usize) -> (Vec<String>, BTreeSet<Seen>) {
    for _ in 0..rounds {
        for x in d {
            sync(x, remote);
        }
    }
    let seen = view(&d[0].memory);
    for (i, x) in d.iter().enumerate().skip(1) {
        assert_eq!(view(&x.memory), seen, "device {i} differs from device 0");
    }
    let current = seen.iter().filter(|v| v.3).map(|v| v.0.clone()).collect();
    (current, seen)
}

pub(crate) fn sync(d: &Device, remote: &SyncRequest) -> memloop::answers::Synced {
    d.memory.transfer().sync(remote).unwrap()
}

#[test]
fn three_devices_converge_with_clocks_an_hour_apart() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    let hour = 3_600_000;
    let d = devices(root.path(), &[0, -hour, 90_000]);
    let mut made: Vec<String> = Vec::new();
    // Device 0 starts; the others learn it.
    for i in 0..20 {
        let t = format!("note {i} of the first device about parcel {i}");
        let m = NewMemory::new(&t);
        let m = if i % 3 == 0 {
            m.scope(Scope::user("ana"))
        } else {
            m
        };
        d[0].memory.remember(m).unwrap();
        made.push(t);
    }
    sync(&d[0], &remote);
    for x in &d[1..] {
        let r = sync(x, &remote);
        assert_eq!(r.pulled, 20, "{r:?}");
    }
    let id_on = |dev: &Device, text: &str| -> u64 {
        (dev.memory
            .advanced()
            .scan(&MemoryFilter::new(), usize::MAX)
            .unwrap()
            .into_iter()
            .find(|i| i.text == text)
            .unwrap_or_else(|| panic!("{text:?} missing"))
            .id)
            .get()
    };
    // Concurrent work: two devices update the same memory, one tags another, one forgets a
    // third, each remembers its own; device 1's clock is an hour behind.
    for (n, x) in d.iter().enumerate() {
        x.clock.advance(60_000).unwrap();
        for i in 0..5 {
            let t = format!("device {n} remembers item {i} of its own");
            x.memory.remember(NewMemory::new(&t)).unwrap();
            made.push(t);
        }
    }
    let note1 = "note 1 of the first device about parcel 1";
    let v0 = d[0]
        .memory
        .update(
            MemoryId::new(id_on(&d[0], note1)),
            Update {
                text: Some("parcel 1 went to the post office".into()),
                ..Update::default()
            },
        )
        .unwrap();
    d[1].clock.advance(5_000).unwrap();
    let v1 = d[1]
        .memory
        .update(
            MemoryId::new(id_on(&d[1], note1)),
            Update {
                text: Some("parcel 1 went back to the sender".into()),
                ..Update::default()
            },
        )
        .unwrap();
    assert!(v0 > MemoryId::new(0) && v1 > MemoryId::new(0));
    let note2 = "note 2 of the first device about parcel 2";
    d[2].memory
        .update(
            MemoryId::new(id_on(&d[2], note2)),
            Update {
                tags: Some(vec!["urgent".into()]),
                ..Update::default()
            },
        )
        .unwrap();
    // Two devices' feedback on the same memory adds up.
    let note5 = "note 5 of the first device about parcel 5";
    d[0].memory
        .feedback(MemoryId::new(id_on(&d[0], note5)), 5)
        .unwrap();
    d[2].memory
        .feedback(MemoryId::new(id_on(&d[2], note5)), 4)
        .unwrap();
    d[2].memory
        .feedback(MemoryId::new(id_on(&d[2], note5)), 3)
        .unwrap();
    let note4 = "note 4 of the first device about parcel 4";
    d[1].memory
        .forget(MemoryId::new(id_on(&d[1], note4)))
        .unwrap();
    // Syncs in a scrambled order, some devices more often.
    for &i in &[2, 1, 2, 0, 1] {
        sync(&d[i], &remote);
    }
    for x in &d {
        sync(x, &remote);
    }
    for x in &d {
        sync(x, &remote);
    }
    let views: Vec<_> = d.iter().map(|x| view(&x.memory)).collect();
    assert_eq!(views[0], views[1], "devices 0 and 1 differ");
    assert_eq!(views[0], views[2], "devices 0 and 2 differ");
    let texts: HashSet<&str> = views[0].iter().map(|v| v.0.as_str()).collect();
    // No acknowledged write lost: every memory made anywhere is held, but the forgotten one.
    for t in &made {
        assert_eq!(texts.contains(t.as_str()), t != note4, "{t:?}");
    }
    // Both updates are kept: the later by clock is current, the other its history. Device
    // 1's update was made 5 s after device 0's in real time but on a clock an hour behind:
    // neither device had seen the other's, so the clock orders them, device 0's last.
    let current: Vec<_> = views[0]
        .iter()
        .filter(|v| v.0.starts_with("parcel 1 went"))
        .map(|v| (v.0.as_str(), v.3, v.4.as_deref()))
        .collect();
    assert_eq!(current.len(), 2, "{current:?}");
    assert!(
        current.contains(&(
            "parcel 1 went to the post office",
            true,
            Some("parcel 1 went back to the sender")
        )),
        "{current:?}"
    );
    assert!(
        current.contains(&("parcel 1 went back to the sender", false, Some(note1))),
        "{current:?}"
    );
    assert!(views[0]
        .iter()
        .any(|v| v.0 == note2 && v.2 == vec!["urgent".to_string()]));
    // Two devices' feedback on one memory adds up, and so do the reinforcements each good
    // feedback made on its device.
    for x in &d {
        let id = id_on(x, note5);
        let fb = x
            .memory
            .scoped(&Scope::default())
            .feedback_state(MemoryId::new(id))
            .unwrap()
            .expect("feedback travelled");
        assert_eq!((fb.count, fb.sum), (3, 12), "{fb:?}");
        let item = x.memory.get(MemoryId::new(id)).unwrap().unwrap();
        assert_eq!(item.reinforced, 3, "reinforcements of {note5:?}");
    }
    // A device that saw the other's update orders its own after it, whatever its clock says.
    sync(&d[1], &remote);
    let cur = id_on(&d[1], "parcel 1 went to the post office");
    d[1].memory
        .update(
            MemoryId::new(cur),
            Update {
                text: Some("parcel 1 was finally delivered".into()),
                ..Update::default()
            },
        )
        .unwrap();
    for x in [&d[1], &d[0], &d[2], &d[1]] {
        sync(x, &remote);
    }
    for x in &d {
        let v = view(&x.memory);
        assert!(
            v.iter()
                .any(|v| v.0 == "parcel 1 was finally delivered" && v.3),
            "{v:?}"
        );
        assert!(v
            .iter()
            .any(|v| v.0 == "parcel 1 went to the post office" && !v.3));
    }
    // A sync with nothing new moves nothing.
    let quiet = sync(&d[0], &remote);
    assert_eq!((quiet.pushed, quiet.pulled), (0, 0), "{quiet:?}");
}

#[test]
fn the_remote_holds_no_text_tag_or_vector_and_an_erasure_travels() {
    let root = crate::common::tempdir();
    let bucket = root.path().join("bucket");
    let remote = remote_of(&bucket);
    let d = devices(root.path(), &[0, 0]);
    let text = |i: usize| format!("memo zq{i:06}x: the courier left parcel {i} with the neighbour");
    let batch: Vec<NewMemory> = (0..300)
        .map(|i| {
            let m = NewMemory::new(text(i)).tag(format!("tg{i:06}"));
            if i % 2 == 0 {
                m.scope(Scope::user("ana"))
            } else {
                m.scope(Scope::user("bo"))
            }
        })
        .collect();
    d[0].memory.remember_batch(batch).unwrap();
    sync(&d[0], &remote);
    assert_eq!(sync(&d[1], &remote).pulled, 300);
    // Byte by byte: no text marker, no tag marker, no 16-byte run of any vector.
    let runs = vector_runs((0..300).map(text));
    let found = files(&bucket);
    assert!(found.len() >= 3, "{found:?}");
    for f in &found {
        assert_sealed(f, &std::fs::read(f).unwrap(), &runs);
    }
    // A copy of the remote taken before the erasure.
    let copy = root.path().join("bucket-copy");
    copy_dir(&bucket, &copy);
    d[0].memory.scoped(&Scope::user("ana")).erase().unwrap();
    sync(&d[0], &remote);
    let r = sync(&d[1], &remote);
    assert_eq!(r.erasures, 1, "{r:?}");
    for x in &d {
        let left = x
            .memory
            .advanced()
            .scan(&MemoryFilter::new().scope(Scope::user("ana")), usize::MAX)
            .unwrap();
        assert!(left.is_empty(), "ana's memories left: {}", left.len());
        assert_eq!(
            x.memory
                .advanced()
                .scan(&MemoryFilter::new(), usize::MAX)
                .unwrap()
                .len(),
            150
        );
        assert_eq!(
            x.memory.admin().receipt_log().unwrap().len(),
            1,
            "a receipt on each device"
        );
    }
    // Device 0's erasure came back to it through device 1's push: carried out once.
    assert_eq!(sync(&d[0], &remote).erasures, 0);
    // A new device given the ring as it is now, reading the copy from before the erasure:
    // ana's rows are sealed under a key no ring holds any more.
    let key = root.path().join("late.key");
    let text_ring = Encryption::key_file(root.path().join("d0.key"))
        .export_ring("p")
        .unwrap();
    Encryption::key_file(&key)
        .import_ring(&text_ring, "p")
        .unwrap();
    let clock = Clock::manual(START);
    let late = Memory::open(root.path().join("late"), options(&key, &clock)).unwrap();
    let r = late.transfer().sync(&remote_of(&copy)).unwrap();
    assert_eq!((r.pulled, r.unreadable), (150, 150), "{r:?}");
    assert!(late
        .advanced()
        .scan(&MemoryFilter::new().scope(Scope::user("ana")), usize::MAX)
        .unwrap()
        .is_empty());
}

#[test]
fn a_damaged_segment_is_refused_and_a_repeat_push_heals_it() {
    let root = crate::common::tempdir();
    let bucket = root.path().join("bucket");
    let remote = remote_of(&bucket);
    let d = devices(root.path(), &[0, 0]);
    d[0].memory
        .remember(NewMemory::new("the first thing"))
        .unwrap();
    sync(&d[0], &remote);
    assert_eq!(sync(&d[1], &remote).pulled, 1);
    d[0].memory
        .remember(NewMemory::new("the second thing"))
        .unwrap();
    sync(&d[0], &remote);
    // Its newest segment cut in half (a writer that is not atomic, killed).
    let newest = newest_segment(&bucket);
    let bytes = std::fs::read(&newest).unwrap();
    std::fs::write(&newest, &bytes[..bytes.len() / 2]).unwrap();
    let r = sync(&d[1], &remote);
    assert_eq!((r.pulled, r.refused.len()), (0, 1), "{r:?}");
    // The same again until it is whole: the last segment of a device is waited on.
    assert_eq!(sync(&d[1], &remote).refused.len(), 1);
    std::fs::write(&newest, &bytes).unwrap();
    let r = sync(&d[1], &remote);
    assert_eq!((r.pulled, r.refused.len()), (1, 0), "{r:?}");
    // A segment signed by another ring is refused too, and skipped once a later one exists.
    std::fs::create_dir_all(root.path().join("other")).unwrap();
    let foreign = devices(&root.path().join("other"), &[0]);
    foreign[0]
        .memory
        .remember(NewMemory::new("not of this ring"))
        .unwrap();
    let fb = root.path().join("foreign-bucket");
    sync(&foreign[0], &remote_of(&fb));
    let theirs = newest_segment(&fb);
    let mine = newest_segment(&bucket);
    let forged = mine.with_file_name("00000000000000000099-000000.seg");
    std::fs::copy(&theirs, &forged).unwrap();
    d[0].memory
        .remember(NewMemory::new("the third thing"))
        .unwrap();
    sync(&d[0], &remote);
    let r = sync(&d[1], &remote);
    assert_eq!(r.refused.len(), 1, "{r:?}");
    let texts: Vec<String> = d[1]
        .memory
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap()
        .into_iter()
        .map(|i| i.text)
        .collect();
    assert!(texts.contains(&"the third thing".to_string()), "{texts:?}");
    assert!(!texts.contains(&"not of this ring".to_string()));
}

#[test]
#[cfg_attr(
    feature = "test-encryption",
    ignore = "opens a plain store, which the matrix encrypts"
)]
fn a_plain_store_is_refused() {
    let root = crate::common::tempdir();
    let clock = Clock::manual(START);
    let plain = Memory::open(
        root.path().join("plain"),
        Options {
            clock: clock.clone(),
            ..Options::with_embedder(Arc::new(Dense))
        },
    )
    .unwrap();
    let e = plain
        .transfer()
        .sync(&remote_of(&root.path().join("b")))
        .unwrap_err();
    assert_eq!(e.code(), memloop::ErrorCode::InvalidInput, "{e}");
    assert!(
        !root.path().join("b").exists(),
        "nothing written to the remote"
    );
}

#[test]
fn a_bad_remote_is_a_typed_error() {
    let root = crate::common::tempdir();
    let d = devices(root.path(), &[0]);
    for bad in ["", "ftp://host/x", "not a url"] {
        let e = d[0]
            .memory
            .transfer()
            .sync(&SyncRequest::to(bad))
            .unwrap_err();
        assert_eq!(e.code(), memloop::ErrorCode::InvalidInput, "{bad}: {e}");
    }
}

#[test]
fn a_compaction_deletes_what_every_device_applied_and_a_new_device_starts_from_its_snapshot() {
    let root = crate::common::tempdir();
    let bucket = root.path().join("bucket");
    let remote = remote_of(&bucket);
    let d = devices(root.path(), &[0, 0, 0]);
    let (a, b, late) = (&d[0], &d[1], &d[2]);
    for round in 0..3 {
        for x in [a, b] {
            x.memory
                .remember(
                    NewMemory::new(format!("round {round} note zq{round:06}x"))
                        .scope(Scope::user("ana")),
                )
                .unwrap();
            x.memory
                .remember(
                    NewMemory::new(format!(
                        "round {round} note of {}",
                        x.memory
                            .advanced()
                            .scan(&MemoryFilter::new(), usize::MAX)
                            .unwrap()
                            .len()
                    ))
                    .scope(Scope::user("bo")),
                )
                .unwrap();
            sync(x, &remote);
        }
    }
    sync(a, &remote);
    sync(b, &remote);
    let segments = |dir: &Path| {
        files(dir)
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "seg"))
            .count()
    };
    let before = segments(&bucket);
    // The third device registered but never told how far it got: nothing may go.
    late.memory.transfer().sync(&remote).unwrap();
    std::fs::remove_file(bucket.join("heads").join(sync(late, &remote).device)).unwrap();
    let mut compact = remote.clone();
    compact.compact = true;
    let kept = a.memory.transfer().sync(&compact).unwrap();
    assert_eq!(kept.deleted_segments, 0, "{kept:?}");
    assert!(kept.snapshot_bytes > 0);
    // Once it has: everything every device applied goes.
    sync(late, &remote);
    sync(b, &remote);
    let r = a.memory.transfer().sync(&compact).unwrap();
    assert!(
        r.deleted_segments >= before - 2,
        "{r:?}, {before} segments before"
    );
    assert!(
        segments(&bucket) <= 2,
        "{} segments left",
        segments(&bucket)
    );
    // A device that never synced starts from the snapshot and holds what the others hold.
    let key = root.path().join("new.key");
    let ring = Encryption::key_file(root.path().join("d0.key"))
        .export_ring("p")
        .unwrap();
    Encryption::key_file(&key).import_ring(&ring, "p").unwrap();
    let clock = Clock::manual(START);
    let new = Memory::open(root.path().join("new"), options(&key, &clock)).unwrap();
    let got = new.transfer().sync(&remote).unwrap();
    assert!(got.pulled >= 12, "{got:?}");
    for x in [a, b] {
        sync(x, &remote);
    }
    sync(&Device { memory: new, clock }, &remote);
    let views: Vec<_> = d.iter().map(|x| view(&x.memory)).collect();
    assert_eq!(views[0], views[1]);
    assert_eq!(views[0], views[2]);
    let new = Memory::open(
        root.path().join("new"),
        options(&key, &Clock::manual(START)),
    )
    .unwrap();
    assert_eq!(
        view(&new),
        views[0],
        "the device that started from the snapshot"
    );
    // The erased user's rows leave the remote with the next compaction, once every device
    // (the new one too) applied the erasure.
    a.memory.scoped(&Scope::user("ana")).erase().unwrap();
    let new = Device {
        memory: new,
        clock: Clock::manual(START),
    };
    for x in [a, b, late, &new, a, b, late, &new] {
        sync(x, &remote);
    }
    let r = a.memory.transfer().sync(&compact).unwrap();
    assert!(r.deleted_segments > 0, "{r:?}");
    let runs = vector_runs((0..3).map(|r| format!("round {r} note zq{r:06}x")));
    for f in files(&bucket) {
        assert_sealed(&f, &std::fs::read(&f).unwrap(), &runs);
    }
}

pub(crate) fn newest_segment(bucket: &Path) -> PathBuf {
    let mut segs: Vec<PathBuf> = files(bucket)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    segs.sort();
    segs.pop().unwrap()
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    for f in files(from) {
        let dest = to.join(f.strip_prefix(from).unwrap());
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::copy(&f, &dest).unwrap();
    }
}

#[test]
fn a_device_with_another_model_embeds_what_it_pulls_again() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    let d = devices(root.path(), &[0, 0]);
    d[0].memory
        .remember(NewMemory::new("the heron nests by the old mill"))
        .unwrap();
    sync(&d[0], &remote);
    // A third device on the same ring with another model (another fingerprint).
    let key = root.path().join("other-model.key");
    let ring = Encryption::key_file(root.path().join("d0.key"))
        .export_ring("p")
        .unwrap();
    Encryption::key_file(&key).import_ring(&ring, "p").unwrap();
    let other = Memory::open(
        root.path().join("other-model"),
        Options {
            encryption: Some(Encryption::key_file(&key)),
            clock: Clock::manual(START),
            ..Options::with_embedder(Arc::new(memloop::HashingEmbedder::new(32)))
        },
    )
    .unwrap();
    let r = other.transfer().sync(&remote).unwrap();
    assert_eq!((r.pulled, r.reembedded), (1, 1), "{r:?}");
    let hits = other
        .recall(&memloop::Query::new("the heron nests by the old mill").k(1))
        .unwrap();
    assert_eq!(hits[0].item.text, "the heron nests by the old mill");
}

#[test]
fn a_new_device_from_a_snapshot_keeps_a_lineage_whose_first_version_was_tagged_last() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    let d = devices(root.path(), &[0, 0, 0]);
    let first = d[0]
        .memory
        .remember(NewMemory::new("the boat is moored at pier 4"))
        .unwrap();
    sync(&d[0], &remote);
    sync(&d[1], &remote);
    // Device 1 updates it; device 0, not having seen that yet, tags the first version
    // afterwards: its metadata is newer than the update.
    let on_1 = d[1]
        .memory
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap()[0]
        .id;
    d[1].clock.advance(1_000).unwrap();
    d[1].memory
        .update(
            on_1,
            Update {
                text: Some("the boat is moored at pier 9".into()),
                ..Update::default()
            },
        )
        .unwrap();
    sync(&d[1], &remote);
    d[0].clock.advance(5_000).unwrap();
    d[0].memory
        .update(
            first,
            Update {
                tags: Some(vec!["harbour".into()]),
                ..Update::default()
            },
        )
        .unwrap();
    sync(&d[0], &remote);
    sync(&d[1], &remote);
    let mut compact = remote.clone();
    compact.compact = true;
    d[2].memory.transfer().sync(&remote).unwrap();
    d[0].memory.transfer().sync(&compact).unwrap();
    // A device that never synced reads the snapshot: one lineage, the update current.
    let key = root.path().join("new.key");
    let ring = Encryption::key_file(root.path().join("d0.key"))
        .export_ring("p")
        .unwrap();
    Encryption::key_file(&key).import_ring(&ring, "p").unwrap();
    let new = Memory::open(
        root.path().join("new"),
        options(&key, &Clock::manual(START)),
    )
    .unwrap();
    new.transfer().sync(&remote).unwrap();
    let seen = view(&new);
    assert_eq!(
        seen,
        view(&d[0].memory),
        "the new device differs from device 0"
    );
    let current: Vec<_> = seen.iter().filter(|v| v.3).map(|v| v.0.as_str()).collect();
    assert_eq!(current, ["the boat is moored at pier 9"], "{seen:?}");
}

/// The lineage of a version whose predecessor was forgotten (on another device) before the
/// version's first push travels in a snapshot as a push sends it: with the version it was
/// made from. (Found by the erasure property run, seed 3,110: a snapshot sent the version
/// as a lineage of its own, so a device holding a concurrent update of the forgotten first
/// version kept both current, and the devices diverged.)
#[test]
fn a_snapshot_keeps_the_lineage_of_an_update_whose_first_version_was_forgotten_elsewhere() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    let mut compact = remote.clone();
    compact.compact = true;
    let hour = 3_600_000;
    let d = devices(root.path(), &[0, -hour, 45_000]);
    let first = d[1]
        .memory
        .remember(NewMemory::new("the spare key is under the blue pot"))
        .unwrap();
    sync(&d[1], &remote);
    sync(&d[0], &remote);
    sync(&d[2], &remote);
    // Device 0 updates it; device 2 forgets the first version and sends that; device 1, its
    // clock an hour behind and having seen neither, updates the first version too.
    update_text(
        &d[0],
        first_held(&d[0]),
        "the spare key is under the red pot",
    );
    d[2].clock.advance(2_000).unwrap();
    d[2].memory.forget(first_held(&d[2])).unwrap();
    sync(&d[2], &remote);
    update_text(&d[1], first, "the spare key is with the neighbour");
    // Device 0 learns of the forget before its update's first push, then compacts.
    sync(&d[0], &remote);
    d[0].memory.transfer().sync(&compact).unwrap();
    let (current, seen) = settle(&d, &remote, 2);
    // One lineage: the update made last (by device 0, an hour ahead of device 1) is current.
    assert_eq!(current, ["the spare key is under the red pot"], "{seen:?}");
}

/// A device that joins after a compaction deleted segments, while the key directory is not
/// served, gets everything once it is: it applies nothing until it can read the snapshot
/// (applying other devices' segments first would leave it behind the deleted ones for good),
/// and it writes no snapshot meanwhile (one of its near-empty state would be what a newer
/// device starts from). Found by the erasure property run, seeds 4,431 and 4,504.
#[test]
fn a_device_that_joins_while_keys_are_late_after_a_compaction_gets_everything() {
    let root = crate::common::tempdir();
    let bucket = root.path().join("bucket");
    let remote = remote_of(&bucket);
    let mut compact = remote.clone();
    compact.compact = true;
    let d = devices(root.path(), &[0, 0, 0, 0]);
    d[0].memory
        .remember(NewMemory::new("ana's locker code is 4711").scope(Scope::user("ana")))
        .unwrap();
    d[0].memory
        .remember(NewMemory::new("the boiler is serviced in May"))
        .unwrap();
    sync(&d[0], &remote);
    sync(&d[1], &remote);
    // Device 0 compacts: every registered device applied device 0's segments, so they go.
    let c = d[0].memory.transfer().sync(&compact).unwrap();
    assert!(c.deleted_segments > 0, "{c:?}");
    // Device 1's first segment, after the snapshot: an erasure (of a user with nothing here),
    // which needs no data key to be read.
    d[1].memory.scoped(&Scope::user("bo")).erase().unwrap();
    sync(&d[1], &remote);
    // Device 2 joins while the key directory is not served: the snapshot's rows wait.
    let keys = bucket.join("keys");
    let aside = bucket.join("keys.aside");
    std::fs::rename(&keys, &aside).unwrap();
    let r = sync(&d[2], &remote);
    assert!(!r.waiting.is_empty(), "{r:?}");
    let c = d[2].memory.transfer().sync(&compact).unwrap();
    assert_eq!(
        c.snapshot_bytes, 0,
        "a snapshot of a store that waits: {c:?}"
    );
    if keys.exists() {
        std::fs::remove_dir_all(&keys).unwrap();
    }
    std::fs::rename(&aside, &keys).unwrap();
    for x in &d[..3] {
        sync(x, &remote);
    }
    // Device 3, new, starts from the latest snapshot.
    sync(&d[3], &remote);
    let want = view(&d[0].memory);
    assert_eq!(want.len(), 2, "{want:?}");
    for (i, x) in d.iter().enumerate().skip(1) {
        let r = sync(x, &remote);
        assert!(
            r.missing.is_empty() && r.waiting.is_empty(),
            "device {i}: {r:?}"
        );
        assert_eq!(view(&x.memory), want, "device {i}");
    }
}

/// A version that arrives after the version it follows was forgotten here (its tombstone not
/// sent yet) keeps its lineage: a snapshot sends it with the version it was made from, and
/// what follows the forgotten one later joins it. (Found by the plain property run, seed
/// 3,401: a device starting from such a snapshot kept a concurrent update of the forgotten
/// first version current beside it.)
#[test]
fn a_version_pulled_after_its_predecessor_was_forgotten_here_keeps_its_lineage() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    let mut compact = remote.clone();
    compact.compact = true;
    let d = devices(root.path(), &[0, -3_600_000, 45_000]);
    let first = d[0]
        .memory
        .remember(NewMemory::new("the gate code is 1234"))
        .unwrap();
    sync(&d[0], &remote);
    sync(&d[1], &remote);
    sync(&d[2], &remote);
    // Device 1 updates it and sends that; device 0 updates the first version too, unsent.
    update_text(&d[1], first_held(&d[1]), "the gate code is 5678");
    sync(&d[1], &remote);
    update_text(&d[0], first, "the gate code is 9012");
    // Device 2 forgets the first version, then pulls device 1's update and compacts.
    d[2].clock.advance(2_000).unwrap();
    d[2].memory.forget(first_held(&d[2])).unwrap();
    d[2].memory.transfer().sync(&compact).unwrap();
    let (current, seen) = settle(&d, &remote, 2);
    assert_eq!(current.len(), 1, "one lineage: {seen:?}");
}

/// A version that stood here for a lineage whose first version was forgotten (it arrived after
/// that forget was sent), forgotten here in turn, is sent forgotten with the version it was made
/// from: a version made from it elsewhere then joins the lineage here as on every device. Sent
/// without it, the version made from it stood here for a lineage of its own, current beside the
/// lineage's concurrent update (the plain property run's seed 4,875).
#[test]
fn a_forgotten_heir_of_a_forgotten_first_version_keeps_the_versions_made_from_it_in_its_lineage() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    let d = devices(root.path(), &[0, -3_600_000, 45_000]);
    let first = d[0]
        .memory
        .remember(NewMemory::new("the gate code is 1234"))
        .unwrap();
    for x in &d {
        sync(x, &remote);
    }
    // Device 1 updates the first version and sends that, then updates its update, unsent.
    let second = update_text(&d[1], first_held(&d[1]), "the gate code is 5678");
    sync(&d[1], &remote);
    update_text(&d[1], second, "the gate code is 4321");
    // Device 2 forgets the first version and sends that, pulling device 1's update after it
    // (the update stands for the lineage here); then forgets the update and sends that.
    d[2].clock.advance(2_000).unwrap();
    d[2].memory.forget(first_held(&d[2])).unwrap();
    sync(&d[2], &remote);
    d[2].clock.advance(2_000).unwrap();
    d[2].memory.forget(first_held(&d[2])).unwrap();
    sync(&d[2], &remote);
    // Device 0 updates the first version, concurrently, and sends that; device 2 pulls it (it
    // stands for the lineage there now), and only then device 1 sends the version it made from
    // the update device 2 forgot.
    update_text(&d[0], first, "the gate code is 9012");
    sync(&d[0], &remote);
    sync(&d[2], &remote);
    sync(&d[1], &remote);
    let (current, seen) = settle(&d, &remote, 3);
    assert_eq!(current.len(), 1, "one lineage: {seen:?}");
}

/// A version that stood here for a lineage whose first version was forgotten, and that came to
/// follow concurrent updates pulled after it (made earlier), is forgotten by a tombstone sent
/// with the forgotten first version: the version the lineage's forgotten first version is
/// found through here is then itself forgotten, and the lineage is found through the version
/// it followed here. A version made from it elsewhere joins that lineage. Without that, the
/// way back ended at the forgotten first version, whose stand-in was forgotten too: the version
/// stood alone, current beside the concurrent updates (the plain property run's seed 1,944).
#[test]
fn a_version_made_from_a_forgotten_stand_in_joins_the_updates_it_followed() {
    let root = crate::common::tempdir();
    let remote = remote_of(&root.path().join("bucket"));
    // Device 2's clock runs 45 s ahead: what it makes follows what the others make meanwhile.
    let d = devices(root.path(), &[0, 0, 45_000]);
    let first = d[2]
        .memory
        .remember(NewMemory::new("the spare key is under the mat"))
        .unwrap();
    sync(&d[2], &remote);
    for x in &d[..2] {
        sync(x, &remote);
    }
    // Device 1 forgets the first version and sends that; device 2 updates it and pulls the
    // forget (its update stands for the lineage there); device 1 pulls the update (it stands
    // for the lineage there too).
    d[1].memory.forget(first_held(&d[1])).unwrap();
    sync(&d[1], &remote);
    update_text(&d[2], first, "the spare key is in the shed");
    sync(&d[2], &remote);
    sync(&d[1], &remote);
    // Device 0, which pulled nothing since, updates the first version twice (made before
    // device 2's update by the clocks) and sends that; device 2 pulls both: they come before
    // its update in the lineage.
    let second = update_text(
        &d[0],
        first_held(&d[0]),
        "the spare key is with the neighbour",
    );
    update_text(&d[0], second, "the spare key is in the letterbox");
    sync(&d[0], &remote);
    sync(&d[2], &remote);
    // Device 1 forgets device 2's update (a lineage of its own there, sent with the forgotten
    // first version it was made from); device 2 pulls the forget.
    d[1].clock.advance(2_000).unwrap();
    d[1].memory.forget(first_held(&d[1])).unwrap();
    sync(&d[1], &remote);
    sync(&d[2], &remote);
    // Device 0, which still holds device 2's update as current, updates it and sends that.
    let held = d[0]
        .memory
        .advanced()
        .scan(&MemoryFilter::new(), usize::MAX)
        .unwrap();
    assert_eq!(held.len(), 1, "device 0: one current version");
    assert_eq!(held[0].text, "the spare key is in the shed");
    update_text(&d[0], held[0].id, "the spare key is on the hook");
    sync(&d[0], &remote);
    let (current, seen) = settle(&d, &remote, 2);
    assert_eq!(
        current,
        vec!["the spare key is on the hook".to_string()],
        "one lineage: {seen:?}"
    );
}

/// A device whose snapshot waits for a key applies no other device's chain meanwhile: had it
/// applied one (recording how far), it would be a device that has pulled, which never reads a
/// snapshot, and what the compaction deleted would never reach it.
#[test]
fn a_device_waiting_for_a_snapshots_key_applies_nothing_until_it_can_read_it() {
    let root = crate::common::tempdir();
    let bucket = root.path().join("bucket");
    let remote = remote_of(&bucket);
    let mut compact = remote.clone();
    compact.compact = true;
    let d = devices(root.path(), &[0, 0, 0]);
    let keys = bucket.join("keys");
    let listed = || -> BTreeSet<PathBuf> {
        if keys.exists() {
            files(&keys).into_iter().collect()
        } else {
            BTreeSet::new()
        }
    };
    // Device 0 alone: a memory under the shared key, then one under a user's key (made after
    // the ring was exported, so only the key directory has it); its compaction deletes its
    // segments (no other device is registered yet).
    d[0].memory
        .remember(NewMemory::new("the boiler is serviced in May"))
        .unwrap();
    sync(&d[0], &remote);
    let before = listed();
    d[0].memory
        .remember(NewMemory::new("ana's locker code is 4711").scope(Scope::user("ana")))
        .unwrap();
    let c = d[0].memory.transfer().sync(&compact).unwrap();
    assert!(c.deleted_segments > 0, "{c:?}");
    let ana: Vec<PathBuf> = listed().difference(&before).cloned().collect();
    assert!(!ana.is_empty(), "ana's key is published");
    // Device 1 joins and writes a chain of its own, under keys the directory serves.
    d[1].memory
        .remember(NewMemory::new("the spare tyre is in the garage"))
        .unwrap();
    sync(&d[1], &remote);
    // Device 2 joins while the directory does not serve ana's key yet: the snapshot waits,
    // and device 1's chain, readable, is not applied either.
    let aside = root.path().join("aside");
    std::fs::create_dir_all(&aside).unwrap();
    for (n, f) in ana.iter().enumerate() {
        std::fs::rename(f, aside.join(n.to_string())).unwrap();
    }
    let r = sync(&d[2], &remote);
    assert!(!r.waiting.is_empty(), "{r:?}");
    assert_eq!(r.pulled, 0, "{r:?}");
    for (n, f) in ana.iter().enumerate() {
        std::fs::rename(aside.join(n.to_string()), f).unwrap();
    }
    for x in &d {
        sync(x, &remote);
    }
    let want = view(&d[1].memory);
    assert_eq!(want.len(), 3, "{want:?}");
    for (i, x) in d.iter().enumerate() {
        let r = sync(x, &remote);
        assert!(
            r.missing.is_empty() && r.waiting.is_empty(),
            "device {i}: {r:?}"
        );
        assert_eq!(view(&x.memory), want, "device {i}");
    }
}
