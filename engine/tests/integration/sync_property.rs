//! A seeded property test of sync against an adversarial remote: three devices (clocks apart)
//! remember, update, forget, sync and compact in random order through a real shared folder,
//! while the remote, between steps, fails pushes (its segment or head folder unwritable),
//! replays signed objects under other names, tampers with a byte of a segment, withholds a
//! segment for a sync, serves the key directory late, and holds junk and oversized objects in
//! devices' folders. Once it is
//! honest again (every attack undone) and every device has synced twice:
//! - every device holds the same memories and versions (convergence);
//! - every acknowledged write is there, unless its version was forgotten (nothing lost);
//! - no forgotten version is anywhere (nothing comes back);
//! - every attack was harmless or reported while it lasted (`refused`, `waiting`, or an
//!   error from the failed push).
//!
//! A second run adds erasures of a user (an erasure is bound by the time of the device that
//! made it, docs/sync.md): what was made for that user at or before it (by the clock of the
//! device that made it) is gone from every device and never comes back, what was made after
//! it (a write on a device that had not seen it yet, the user's new life, a write on a device
//! whose clock runs an hour behind after it carried the erasure out) is kept everywhere.
//!
//! `MEMLOOP_SYNC_SEEDS` seeds each (default 6; `scripts/test-sync.sh --full` runs 10,000 in
//! its own script), `MEMLOOP_SYNC_STEPS` steps each (default 40).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use memloop::requests::Update;
use memloop::{MemoryFilter, NewMemory, Scope};

use crate::encryption::files;
use crate::sync::{devices, remote_of, view, Device};

/// SplitMix64: a seeded stream with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What the adversary did that must be undone before the remote is honest again.
#[derive(Default)]
struct Undo {
    /// Objects it added (replays, junk).
    added: Vec<PathBuf>,
    /// Objects it changed, with their bytes before.
    changed: Vec<(PathBuf, Vec<u8>)>,
}

impl Undo {
    fn honest(&mut self) {
        for p in self.added.drain(..) {
            let _ = std::fs::remove_file(p);
        }
        for (p, b) in self.changed.drain(..).rev() {
            // A compaction may have deleted it meanwhile (it was covered): then it stays gone.
            if p.exists() {
                std::fs::write(p, b).unwrap();
            }
        }
    }
}

fn segments(bucket: &Path) -> Vec<PathBuf> {
    let dir = bucket.join("segments");
    if !dir.exists() {
        return Vec::new();
    }
    let mut s: Vec<PathBuf> = files(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    s.sort();
    s
}

/// Runs `f` while `bucket/<dir>` cannot be written (a file stands where the folder was).
fn unwritable<T>(bucket: &Path, dir: &str, f: impl FnOnce() -> T) -> T {
    let path = bucket.join(dir);
    let aside = bucket.join(format!("{dir}.aside"));
    let had = path.exists();
    if had {
        std::fs::rename(&path, &aside).unwrap();
    }
    std::fs::create_dir_all(bucket).unwrap();
    std::fs::write(&path, b"not a folder").unwrap();
    let out = f();
    std::fs::remove_file(&path).unwrap();
    if had {
        std::fs::rename(&aside, &path).unwrap();
    }
    out
}

/// Every text held on `d` (current or history).
fn held(d: &Device) -> BTreeSet<String> {
    view(&d.memory).into_iter().map(|v| v.0).collect()
}

fn run(seed: u64, steps: usize, erasures: bool) {
    let root = crate::common::tempdir();
    let bucket = root.path().join("bucket");
    let remote = remote_of(&bucket);
    let mut compact = remote.clone();
    compact.compact = true;
    let hour = 3_600_000;
    let d = devices(root.path(), &[0, -hour, 45_000]);
    let mut rng = Rng(seed);
    let mut written: BTreeSet<String> = BTreeSet::new();
    // Each text's user and the time it was made; the texts an erasure took.
    let mut made: Vec<(String, Option<String>, i64)> = Vec::new();
    let mut erasures_made: Vec<(&str, i64)> = Vec::new();
    let mut forgotten: BTreeSet<String> = BTreeSet::new();
    let mut undo = Undo::default();
    let mut n = 0;
    let users = [None, Some("ana"), Some("bo"), Some("cy")];
    let trace = std::env::var_os("MEMLOOP_SYNC_TRACE").is_some();
    for step in 0..steps {
        let xi = rng.below(d.len());
        let x = &d[xi];
        x.clock.advance(1 + rng.below(5_000) as i64).unwrap();
        let current = x
            .memory
            .advanced()
            .scan(&MemoryFilter::new(), usize::MAX)
            .unwrap();
        let op = rng.below(if erasures { 14 } else { 13 });
        if trace {
            let names: Vec<String> = segments(&bucket)
                .iter()
                .map(|p| p.strip_prefix(&bucket).unwrap().display().to_string())
                .filter(|n| !n.contains("deadbeef") && !n.contains("/09"))
                .collect();
            eprintln!("  segments: {names:?}");
        }
        if trace {
            eprintln!(
                "step {step}: device {xi} op {op}; key directory {} files",
                if bucket.join("keys").is_dir() {
                    files(&bucket.join("keys")).len()
                } else {
                    0
                }
            );
        }
        match op {
            0..=2 => {
                n += 1;
                let text = format!("seed {seed} note {n} about parcel {}", rng.below(1000));
                let mut m = NewMemory::new(&text);
                let user = users[rng.below(users.len())];
                if let Some(u) = user {
                    m = m.scope(Scope::user(u));
                }
                let id = x.memory.remember(m).unwrap();
                let created = x.memory.get(id).unwrap().unwrap().created;
                if trace {
                    eprintln!("  remember {text:?} for {user:?} created {created}");
                }
                made.push((text.clone(), user.map(str::to_string), created));
                written.insert(text);
            }
            3 if !current.is_empty() => {
                n += 1;
                let old = &current[rng.below(current.len())];
                let text = format!("seed {seed} update {n} of {}", old.id);
                if trace {
                    eprintln!("  update {:?} -> {text:?}", old.text);
                }
                let id = x
                    .memory
                    .update(
                        old.id,
                        Update {
                            text: Some(text.clone()),
                            ..Update::default()
                        },
                    )
                    .unwrap();
                let created = x.memory.get(id).unwrap().unwrap().created;
                made.push((text.clone(), old.user.clone(), created));
                written.insert(text);
            }
            4 if !current.is_empty() => {
                let old = &current[rng.below(current.len())];
                if trace {
                    eprintln!("  forget {:?}", old.text);
                }
                x.memory.forget(old.id).unwrap();
                forgotten.insert(old.text.clone());
            }
            5 => {
                // A push that fails at its segment, or after it at the head.
                let dir = if rng.below(2) == 0 {
                    "segments"
                } else {
                    "heads"
                };
                // It fails (or, with nothing to push and the head writable, has nothing the
                // broken folder takes): either way nothing is recorded as sent that was not.
                let r = unwritable(&bucket, dir, || x.memory.transfer().sync(&remote));
                if trace {
                    eprintln!("  failing push: {r:?}");
                }
            }
            6 => {
                // A replay: a signed object under another name of its device's folder.
                let segs = segments(&bucket);
                if let Some(src) = (!segs.is_empty()).then(|| &segs[rng.below(segs.len())]) {
                    let far = src.with_file_name(format!(
                        "{:020}-000000.seg",
                        9_000_000_000_000_000_000u64 + rng.below(1000) as u64
                    ));
                    // (Not onto itself: a copy onto its own name empties it.)
                    if far != *src {
                        std::fs::copy(src, &far).unwrap();
                        undo.added.push(far);
                    }
                }
            }
            7 => {
                // A tampered byte (of an object that has one).
                let mut segs = segments(&bucket);
                segs.retain(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
                if let Some(p) = (!segs.is_empty()).then(|| segs[rng.below(segs.len())].clone()) {
                    let before = std::fs::read(&p).unwrap();
                    let mut b = before.clone();
                    let i = rng.below(b.len());
                    b[i] ^= 1 << rng.below(8);
                    std::fs::write(&p, b).unwrap();
                    undo.changed.push((p, before));
                }
            }
            8 => {
                // Junk, and an oversized object, in a folder no device of the ring owns.
                let dir = bucket.join("segments/00000000deadbeef");
                std::fs::create_dir_all(&dir).unwrap();
                let junk = dir.join(format!("{:020}-000000.seg", rng.below(100)));
                if rng.below(2) == 0 {
                    std::fs::write(&junk, b"MLSYNC01 junk").unwrap();
                } else {
                    std::fs::File::create(&junk)
                        .unwrap()
                        .set_len(70 << 20)
                        .unwrap();
                }
                undo.added.push(junk);
            }
            9 => {
                // The key directory served late: hidden for one sync.
                let keys = bucket.join("keys");
                let aside = bucket.join("keys.aside");
                let had = keys.exists();
                if had {
                    std::fs::rename(&keys, &aside).unwrap();
                }
                let r = x.memory.transfer().sync(&remote);
                if had {
                    if keys.exists() {
                        // This sync published keys of its own meanwhile: merge them back.
                        for f in files(&keys) {
                            let to = aside.join(f.strip_prefix(&keys).unwrap());
                            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
                            std::fs::rename(&f, &to).unwrap();
                        }
                        std::fs::remove_dir_all(&keys).unwrap();
                    }
                    std::fs::rename(&aside, &keys).unwrap();
                }
                if trace {
                    eprintln!("  sync without keys: {r:?}");
                }
                r.unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            }
            11 => {
                // A segment withheld for one sync (served again after it).
                let segs = segments(&bucket);
                let hidden = (!segs.is_empty()).then(|| segs[rng.below(segs.len())].clone());
                let aside = bucket.join("withheld");
                if let Some(h) = &hidden {
                    std::fs::rename(h, &aside).unwrap();
                }
                let r = x.memory.transfer().sync(&remote);
                if let Some(h) = &hidden {
                    std::fs::rename(&aside, h).unwrap();
                }
                if trace {
                    eprintln!("  sync withheld {hidden:?}: {r:?}");
                }
                r.unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
            }
            13 => {
                // An erasure of a user: everything made for them until now, wherever it was
                // made, goes.
                let u = users[1 + rng.below(users.len() - 1)].unwrap();
                x.memory.scoped(&Scope::user(u)).erase().unwrap();
                // Its bound: its time, or the newest thing it covered here (from a device whose
                // clock runs ahead), as its receipt says.
                let log = x.memory.admin().receipt_log().unwrap();
                let receipt: serde_json::Value = serde_json::from_str(log.last().unwrap()).unwrap();
                let at = receipt["at"].as_i64().unwrap();
                if trace {
                    eprintln!("  erase {u} at {at} (clock {})", x.clock.now());
                }
                erasures_made.push((u, at));
            }
            10 => {
                let r = x
                    .memory
                    .transfer()
                    .sync(&compact)
                    .unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
                if trace {
                    eprintln!("  compacting sync: {r:?}");
                }
            }
            _ => {
                let r = x
                    .memory
                    .transfer()
                    .sync(&remote)
                    .unwrap_or_else(|e| panic!("seed {seed} step {step}: {e}"));
                if trace {
                    eprintln!("  sync: {r:?}");
                }
            }
        }
    }
    // What the erasures took: everything made for their user at or before them, by the
    // clock of the device that made it, before or after the erasure in the run's order (a
    // device that had not seen it yet).
    let erased: BTreeSet<String> = made
        .iter()
        .filter(|(_, user, when)| {
            erasures_made
                .iter()
                .any(|(u, at)| user.as_deref() == Some(*u) && *when <= *at)
        })
        .map(|(t, _, _)| t.clone())
        .collect();
    // Honest again.
    undo.honest();
    for round in 0..2 {
        for x in &d {
            let r = x
                .memory
                .transfer()
                .sync(&remote)
                .unwrap_or_else(|e| panic!("seed {seed}: honest sync: {e}"));
            if trace {
                eprintln!("honest sync: {r:?}");
            }
            let foreign: Vec<&String> = r
                .refused
                .iter()
                .filter(|n| !n.contains("00000000deadbeef"))
                .collect();
            assert!(
                foreign.is_empty(),
                "seed {seed}: refused once honest: {r:?}"
            );
            // Rows may wait in the first round for a key a device publishes later in it (a
            // new key of a user an erasure carried out in this round made); none in the last.
            assert!(
                (erasures && round == 0) || r.waiting.is_empty(),
                "seed {seed}: waiting once honest: {r:?}; the key directory: {:?}",
                ["keks", "keys", "gone"]
                    .iter()
                    .flat_map(|d| files(&bucket.join(d)))
                    .map(|f| f.strip_prefix(&bucket).unwrap().display().to_string())
                    .collect::<Vec<_>>()
            );
        }
    }
    let first = view(&d[0].memory);
    for (i, x) in d.iter().enumerate().skip(1) {
        let other = view(&x.memory);
        assert!(
            first == other,
            "seed {seed}: device 0 and device {i} differ: only on 0 {:?}, only on {i} {:?}",
            first.difference(&other).collect::<Vec<_>>(),
            other.difference(&first).collect::<Vec<_>>()
        );
    }
    for x in &d {
        let h = held(x);
        for t in written.difference(&forgotten) {
            if !erased.contains(t) {
                assert!(h.contains(t), "seed {seed}: lost {t:?}");
            }
        }
        for t in &forgotten {
            assert!(!h.contains(t), "seed {seed}: forgotten and back: {t:?}");
        }
        for t in &erased {
            assert!(!h.contains(t), "seed {seed}: erased and back: {t:?}");
        }
    }
}

/// The seeds, steps and first seed the environment asks for.
fn plan() -> (u64, usize, u64) {
    let seeds: u64 = std::env::var("MEMLOOP_SYNC_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let steps: usize = std::env::var("MEMLOOP_SYNC_STEPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let first: u64 = std::env::var("MEMLOOP_SYNC_FIRST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    (seeds, steps, first)
}

#[test]
fn devices_converge_and_lose_nothing_under_an_adversarial_remote() {
    let (seeds, steps, first) = plan();
    for seed in first..first + seeds {
        run(seed, steps, false);
    }
}

#[test]
fn with_erasures_what_an_erasure_took_stays_gone_and_the_rest_converges() {
    let (seeds, steps, first) = plan();
    for seed in first..first + seeds {
        run(seed, steps, true);
    }
}
