//! A pull: the other devices' segments this store has not applied yet, checked (signature,
//! then each row's seal), then applied by the merge rules (docs/sync.md, `merge.rs`):
//! erasures first, then versions and tombstones in clock order, in one transaction with the
//! cursors that say how far each device was applied. A pull killed anywhere applies the same
//! rows again next time, which changes nothing twice.

use std::collections::BTreeMap;

use memloop_index::UnitVector;
use rustc_hash::{FxHashMap, FxHashSet};

use super::payload::{Clock, Counters, Gid, Payload};
use super::remote::Remote;
use super::segment::{self, RowKind};
use super::state::{self, SyncState};
use crate::crypt::seal::{Opened, Sealer, Table};
use crate::crypt::KeyError;
use crate::error::{Error, Result};
use crate::item::{MemoryItem, Scope};
use crate::memory::Memory;
use crate::merge::{erases, scope_fields};
use crate::vocabulary::Synced;

mod writer;

use writer::Writer;

/// Texts embedded per call when a device used another model.
const EMBED_CHUNK: usize = 256;

/// Rows a pull holds before it applies them: past this many, what the segments read so far
/// hold is applied (with how far each device's chain got) in its own write, so a first pull
/// of a large store holds one part of it at a time, and a pull cut short keeps what it
/// applied.
const APPLY_ROWS: usize = 4096;

/// A version or tombstone to apply.
enum Act {
    Version {
        gid: Gid,
        supersedes: Option<Gid>,
        made: Clock,
        meta: Clock,
        item: Box<MemoryItem>,
        vector: Option<UnitVector>,
        counters: Counters,
    },
    Forgotten {
        gid: Gid,
        at: Clock,
        /// The version it followed, when its row says.
        prev: Option<Gid>,
    },
}

impl Act {
    /// Its place in a pull's order: a version by when it was made, so a lineage's versions
    /// arrive in the order they were made (a later metadata change does not move it after a
    /// version made from it); a tombstone by when it was set.
    fn when(&self) -> Clock {
        match self {
            Act::Version { made, .. } => *made,
            Act::Forgotten { at, .. } => *at,
        }
    }
}

impl Memory {
    pub(super) fn pull(
        &self,
        remote: &Remote,
        sealer: &Sealer,
        st: &mut SyncState,
        out: &mut Synced,
    ) -> Result<()> {
        let store = self.store();
        let seed = sealer.signing_seed()?;
        // How far each device says it pushed (its signed head, or the furthest head seen here
        // before), read before the segments are listed: a device writes its segments before
        // its head, so what a head names is listed unless the remote withholds it.
        let heads = self.heads_seen(remote, &seed, st.device)?;
        let mut by_device: BTreeMap<u64, Vec<super::remote::Listed>> = BTreeMap::new();
        for l in remote.list("segments")? {
            match state::parse_segment_name(&l.name) {
                Some((d, _)) if d != st.device => by_device.entry(d).or_default().push(l),
                _ => {}
            }
        }
        let corrupt = |name: &str, detail: String| Error::Corrupt {
            path: format!("{}/{name}", remote.url).into(),
            detail,
        };
        let mut c = Collected::default();
        let mut progress = Progress {
            cursors: Vec::new(),
            digests: Vec::new(),
            heads: &heads.newer,
        };
        // A device that never pulled starts from the latest snapshot, when a compaction left
        // one (the segments it covers may be gone). Never one that did: a listing that comes
        // back empty (a rolled-back or failing remote) must not move its cursors back.
        let fresh = store.meta_with_prefix(state::PULLED_PREFIX)?.is_empty();
        let mut covered: BTreeMap<u64, String> = BTreeMap::new();
        if fresh {
            if let Some((name, snapshot)) = super::compact::latest_snapshot(remote, &seed)? {
                out.pulled_bytes += snapshot.bytes;
                for (device, through) in &snapshot.covers {
                    if *device != st.device {
                        covered.insert(*device, through.clone());
                    }
                }
                let mut one = Collected::default();
                let mut missing = false;
                for (header, rows) in snapshot.parts {
                    let origin = u64::from_str_radix(&header.device, 16).unwrap_or_default();
                    missing |= self.read_rows(
                        sealer, &corrupt, &name, origin, &header, rows, &mut one, out,
                    )?;
                }
                if missing {
                    // Read again whole at the next sync, once the key directory has its keys;
                    // until then nothing is applied and no cursor recorded, so this device
                    // stays one that never pulled and starts from a snapshot then (applying
                    // another device's segments now would make it start from their cursors,
                    // and what the compaction deleted, which only the snapshot holds, would
                    // never reach it).
                    out.waiting.push(name);
                    return Ok(());
                } else {
                    c.take(one);
                    progress
                        .cursors
                        .extend(covered.iter().map(|(d, f)| (*d, f.clone())));
                }
            }
        }
        // Where each device's chain was applied up to before this pull (its last file name).
        let cursor_of = |device: u64| -> Result<String> {
            Ok(match store.meta(&state::pulled_key(device))? {
                Some(b) => String::from_utf8_lossy(&b).into_owned(),
                None => covered.get(&device).cloned().unwrap_or_default(),
            })
        };
        // How far each device's chain is applied here after this pull.
        let mut applied_to: BTreeMap<u64, u64> = BTreeMap::new();
        for (device, listed) in by_device {
            let cursor = cursor_of(device)?;
            let pending = listed.iter().filter(|l| {
                state::parse_segment_name(&l.name).is_some_and(|(_, f)| f > cursor.as_str())
            });
            let mut last_good = None;
            // How far this device's chain is applied: the number and digest of its last
            // segment applied here.
            let mut at = state::number_of(&cursor).map_or(0, |(n, _)| n);
            let mut digest = store
                .meta(&state::pulled_digest_key(device))?
                .map(|b| String::from_utf8_lossy(&b).into_owned());
            for l in pending {
                let Some((_, file)) = state::parse_segment_name(&l.name) else {
                    continue;
                };
                // Refused for itself (longer than any segment), not for the whole sync.
                let Some(bytes) = super::compact::readable(remote.get(&l.name, l.size))? else {
                    out.refused.push(l.name.clone());
                    break;
                };
                out.pulled_bytes += bytes.len() as u64;
                let (header, rows) = match segment::decode(&bytes, &seed) {
                    Ok(h) if bound_to(&h.0, device, file) => h,
                    _ => {
                        // Not believed: damaged, signed by another ring, or a signed object
                        // under a name its header does not give (a replay). Every push takes a
                        // number of its own, so no later segment holds its changes: this
                        // device's later segments wait behind it, and it is reported each
                        // time until it verifies.
                        out.refused.push(l.name.clone());
                        break;
                    }
                };
                // The chain: a segment names the last one its device recorded before it. One
                // past what is applied here was not served (withheld, or rolled back): this
                // device's later segments wait for it. The same number with another digest
                // is a second object where one was (a fork): refused.
                if let Some((n, d)) = &header.prev {
                    if *n > at {
                        out.missing
                            .push(format!("segments/{}/{n:020}", state::hex(device)));
                        break;
                    }
                    if *n == at && digest.as_ref().is_some_and(|have| have != d) {
                        out.refused.push(l.name.clone());
                        break;
                    }
                }
                // Its rows are applied together, or none of them: one sealed under a key this
                // ring does not hold yet (its key directory entry not read yet) holds the
                // segment, and this device's later ones, until the key arrives.
                let mut one = Collected::default();
                let missing = self.read_rows(
                    sealer, &corrupt, &l.name, device, &header, rows, &mut one, out,
                )?;
                if missing {
                    out.waiting.push(l.name.clone());
                    break;
                }
                c.take(one);
                out.pulled_segments += 1;
                last_good = Some(file.to_string());
                at = header.through;
                digest = Some(segment::digest(&bytes));
                if c.acts.len() >= APPLY_ROWS {
                    // Whole segments only: this device's chain is recorded up to this one.
                    progress.reached(device, file, digest.as_ref());
                    let part = progress.take();
                    self.apply_pulled(std::mem::take(&mut c), &part, st, out)?;
                }
            }
            applied_to.insert(device, at);
            if let Some(f) = last_good {
                progress.reached(device, &f, digest.as_ref());
            }
        }
        // The tail a head names but the remote did not serve (rolled back, or withheld with
        // nothing after it to reveal the gap): reported, unless this device's stream is
        // reported held back already.
        for (&device, &through) in &heads.through {
            let at = match applied_to.get(&device) {
                Some(&at) => at,
                None => state::number_of(&cursor_of(device)?).map_or(0, |(n, _)| n),
            };
            let hex = state::hex(device);
            let reported = out
                .refused
                .iter()
                .chain(&out.missing)
                .chain(&out.waiting)
                .any(|n| n.contains(&hex));
            if at < through && !reported {
                out.missing.push(format!("segments/{hex}/{through:020}"));
            }
        }
        self.apply_pulled(c, &progress, st, out)
    }

    /// Applies what a pull read (`c`): its erasures first, then its versions and tombstones
    /// in one write, which records `progress` too.
    fn apply_pulled(
        &self,
        c: Collected,
        progress: &Progress<'_>,
        st: &mut SyncState,
        out: &mut Synced,
    ) -> Result<()> {
        let store = self.store();
        let Collected {
            mut acts,
            erasures,
            reembed,
        } = c;
        // Vectors of another model: this store's model embeds their texts again.
        for chunk in reembed.chunks(EMBED_CHUNK) {
            let texts: Vec<&str> = chunk
                .iter()
                .map(|&i| match &acts[i] {
                    Act::Version { item, .. } => item.text.as_str(),
                    Act::Forgotten { .. } => "",
                })
                .collect();
            let vectors = self.inner.embed_documents(&texts)?;
            for (&i, v) in chunk.iter().zip(vectors) {
                if let Act::Version { vector, .. } = &mut acts[i] {
                    *vector = Some(v);
                }
            }
        }
        out.reembedded += reembed.len();
        // Erasures first: what they erase must not come back with this pull.
        for (device, scope, at, receipt, _) in erasures {
            let key = state::erasure_key(device, receipt);
            if store.meta(&key)?.is_none() {
                // Bound by the erasure's own time, not this device's: what was made after it
                // (here before this device saw it, or the user's new life, adopted in this
                // sync or an earlier one) stays, with the keys made after it.
                // Marked carried out (with the device and receipt that made it) in the
                // transaction that logs this store's receipt for it.
                self.forget_scope_before(
                    &scope,
                    at,
                    crate::store::Carried {
                        key,
                        device,
                        receipt,
                    },
                )?;
                self.inner.erasures_changed();
                out.erasures += 1;
            }
        }
        // Nor with any later pull: every erasure this store made or carried out (its receipts)
        // keeps out the versions of its scope made before it, whenever they arrive (another
        // device's row written before it saw the erasure, pulled after it). An erasure carried
        // out here is bound by the time the device that made it gave it.
        // Such a version stays only as a tombstone (with the version it followed), so the
        // versions made after the erasure that followed it find their lineage here as on the
        // devices that held it.
        let erased = self.inner.erasure_bounds()?;
        for a in &mut acts {
            if let Act::Version {
                gid,
                supersedes,
                made,
                item,
                ..
            } = a
            {
                if erased.iter().any(|(scope, at)| {
                    erases(scope_fields(scope), *at, item.scope_fields(), item.created)
                }) {
                    *a = Act::Forgotten {
                        gid: *gid,
                        at: *made,
                        prev: *supersedes,
                    };
                }
            }
        }
        acts.sort_by_key(Act::when);
        let now = self.inner.now();
        let device = st.device;
        let mut clock = st.clock;
        self.inner.write(|inner, tx, applied| {
            let mut w = Writer {
                tx,
                inner,
                staged: FxHashMap::default(),
                feedback: FxHashMap::default(),
                gone: FxHashSet::default(),
                device,
                now,
            };
            for act in acts {
                match act {
                    Act::Version {
                        gid,
                        supersedes,
                        made,
                        meta,
                        item,
                        vector,
                        counters,
                    } => {
                        clock.observe(state::hlc(made), now);
                        clock.observe(state::hlc(meta), now);
                        let vector = vector
                            .ok_or_else(|| inner.store.corrupt("a pulled memory has no vector"))?;
                        w.version(
                            gid,
                            supersedes,
                            (made, meta),
                            *item,
                            vector,
                            counters,
                            applied,
                        )?;
                    }
                    Act::Forgotten { gid, at, prev } => {
                        clock.observe(state::hlc(at), now);
                        w.forgotten(gid, at, prev, applied)?;
                    }
                }
            }
            for (d, f) in &progress.cursors {
                w.tx.set_meta(&state::pulled_key(*d), f.as_bytes())?;
            }
            for (d, h) in &progress.digests {
                w.tx.set_meta(&state::pulled_digest_key(*d), h.as_bytes())?;
            }
            for (d, t) in progress.heads {
                w.tx.set_meta(&head_seen_key(*d), &t.to_le_bytes())?;
            }
            st.save_clock(w.tx, clock)
        })?;
        st.clock = clock;
        Ok(())
    }
}

impl Memory {
    /// How far each other device says it pushed: the last segment its head names
    /// (`heads/<device>`, signed by this ring, its name bound to its header), or the furthest
    /// head of it seen here before, whichever is further (a head rolled back to an older one
    /// does not move it back), and which heads are further than those recorded (the pull
    /// records them with what it applies).
    fn heads_seen(&self, remote: &Remote, seed: &[u8; 32], me: u64) -> Result<HeadsSeen> {
        let store = self.store();
        let mut out = BTreeMap::new();
        for (k, v) in store.meta_with_prefix(HEAD_SEEN_PREFIX)? {
            let device = u64::from_str_radix(&k[HEAD_SEEN_PREFIX.len()..], 16).ok();
            let through = <[u8; 8]>::try_from(v.as_slice())
                .ok()
                .map(u64::from_le_bytes);
            if let (Some(d), Some(t)) = (device, through) {
                out.insert(d, t);
            }
        }
        let mut newer = Vec::new();
        for l in remote.list("heads")? {
            let Some(device) = l
                .name
                .strip_prefix("heads/")
                .filter(|h| h.len() == 16)
                .and_then(|h| u64::from_str_radix(h, 16).ok())
            else {
                continue;
            };
            if device == me {
                continue;
            }
            let Some(bytes) = super::compact::readable(remote.get(&l.name, l.size))? else {
                continue;
            };
            let Ok((h, _)) = segment::decode(&bytes, seed) else {
                continue; // not believed: says nothing
            };
            let Some((last, _)) = h.prev.as_ref().filter(|_| h.is(segment::Kind::Head)) else {
                continue;
            };
            if h.device == state::hex(device) && out.get(&device).is_none_or(|t| last > t) {
                out.insert(device, *last);
                newer.push((device, *last));
            }
        }
        Ok(HeadsSeen {
            through: out,
            newer,
        })
    }
}

/// What [`Memory::heads_seen`] read.
struct HeadsSeen {
    /// Per other device, the number of the last segment its furthest head seen names.
    through: BTreeMap<u64, u64>,
    /// The heads further than those recorded here: recorded by the pull's write.
    newer: Vec<(u64, u64)>,
}

/// The prefix of the metadata keys of the furthest head seen of each other device.
const HEAD_SEEN_PREFIX: &str = "sync_head_seen:";

/// The metadata key of the furthest head seen of `device`.
fn head_seen_key(device: u64) -> String {
    format!("{HEAD_SEEN_PREFIX}{}", state::hex(device))
}

/// What a pull read: versions and tombstones, erasures (with the device that made them), and
/// which versions need embedding again.
#[derive(Default)]
struct Collected {
    acts: Vec<Act>,
    erasures: Vec<(u64, Scope, i64, u64, Option<crate::crypt::ring::KeyId>)>,
    reembed: Vec<usize>,
}

impl Collected {
    /// Adds what `other` read after what this holds.
    fn take(&mut self, other: Collected) {
        let base = self.acts.len();
        self.acts.extend(other.acts);
        self.erasures.extend(other.erasures);
        self.reembed
            .extend(other.reembed.into_iter().map(|i| base + i));
    }
}

/// How far a pull got, recorded by the write that applies what it read up to there: each
/// device's last segment applied (its name and digest), and the heads further than those
/// recorded before.
struct Progress<'a> {
    cursors: Vec<(u64, String)>,
    digests: Vec<(u64, String)>,
    heads: &'a [(u64, u64)],
}

impl<'a> Progress<'a> {
    /// `device`'s chain is applied up to its segment `file`, whose digest is `digest`.
    fn reached(&mut self, device: u64, file: &str, digest: Option<&String>) {
        self.cursors.retain(|(d, _)| *d != device);
        self.cursors.push((device, file.to_string()));
        self.digests.retain(|(d, _)| *d != device);
        self.digests.extend(digest.map(|h| (device, h.clone())));
    }

    /// What is recorded so far, to be written with the part applied now; this starts again
    /// empty (the heads are written with every part).
    fn take(&mut self) -> Progress<'a> {
        Progress {
            cursors: std::mem::take(&mut self.cursors),
            digests: std::mem::take(&mut self.digests),
            heads: self.heads,
        }
    }
}

/// The scope an erasure row names (user, agent, session).
fn erased_scope([user, agent, session]: [Option<String>; 3]) -> Scope {
    Scope {
        user,
        agent,
        session,
    }
}

/// Whether `header` is what segment `file` of `device` must be: a segment (not a head or a
/// manifest) of that device, whose signed number and part are the name's. A signed object
/// copied under another name (a replay under a far-future number) is refused.
fn bound_to(header: &segment::Header, device: u64, file: &str) -> bool {
    header.is(segment::Kind::Segment)
        && header.device == state::hex(device)
        && state::number_of(file) == Some((header.through, header.part))
}

impl Memory {
    /// Opens the rows of segment `name` (pushed by `device`) and adds what they say to `c`:
    /// `true` when one is sealed under a key this ring does not hold (yet): `c` is then to be
    /// dropped, and the segment read again later. A row under an erased user's destroyed key
    /// is counted unreadable and passed over.
    #[allow(clippy::too_many_arguments)]
    fn read_rows(
        &self,
        sealer: &Sealer,
        corrupt: &dyn Fn(&str, String) -> Error,
        name: &str,
        device: u64,
        header: &segment::Header,
        rows: Vec<segment::Row>,
        c: &mut Collected,
        out: &mut Synced,
    ) -> Result<bool> {
        let dim = self.admin().embedder().dim();
        let (mut unreadable, mut pulled) = (0, 0);
        let max_text = self.inner.options.max_text_bytes;
        let same_model = header.model == self.admin().fingerprint() && header.dim == dim;
        for (kind, sealed) in rows {
            let plain = match sealer.open(Table::Sync, state::ROW_RID, &sealed) {
                Ok(Opened::Plain(p)) => p,
                // An erased user's key: its rows are gone for good.
                Ok(Opened::Erased) => {
                    unreadable += 1;
                    continue;
                }
                // A key this ring does not hold yet.
                Err(KeyError::Wrong { .. }) => return Ok(true),
                Err(e) => return Err(e.into()),
            };
            let payload =
                Payload::decode(&plain).map_err(|e| corrupt(name, format!("a row: {e}")))?;
            match (kind, payload) {
                (
                    RowKind::Version,
                    Payload::Version {
                        gid,
                        supersedes,
                        made,
                        meta,
                        item,
                        vector,
                        counters,
                    },
                ) => {
                    let item = MemoryItem::decode(&item)
                        .map_err(|e| corrupt(name, format!("a memory: {e}")))?;
                    item.check(max_text)
                        .map_err(|e| corrupt(name, format!("a memory: {e}")))?;
                    let vector = if same_model {
                        let v = crate::store::decode_vector(&vector)
                            .ok_or_else(|| corrupt(name, "a vector".into()))?;
                        Some(
                            UnitVector::with_dim(v, dim)
                                .map_err(|e| corrupt(name, format!("a vector: {e}")))?,
                        )
                    } else {
                        c.reembed.push(c.acts.len());
                        None
                    };
                    c.acts.push(Act::Version {
                        gid,
                        supersedes,
                        made,
                        meta,
                        item: Box::new(item),
                        vector,
                        counters,
                    });
                }
                (RowKind::Forgotten, Payload::Forgotten { gid, at }) => {
                    c.acts.push(Act::Forgotten {
                        gid,
                        at,
                        prev: None,
                    })
                }
                (
                    RowKind::Forgotten,
                    Payload::ForgottenAfter {
                        gid,
                        at,
                        supersedes,
                    },
                ) => c.acts.push(Act::Forgotten {
                    gid,
                    at,
                    prev: Some(supersedes),
                }),
                (RowKind::Erased, Payload::Erased { scope, at, receipt }) => {
                    c.erasures
                        .push((device, erased_scope(scope), at, receipt, None))
                }
                (
                    RowKind::Erased,
                    Payload::ErasedKey {
                        scope,
                        at,
                        receipt,
                        destroyed,
                    },
                ) => c
                    .erasures
                    .push((device, erased_scope(scope), at, receipt, Some(destroyed))),
                (
                    RowKind::Erased,
                    Payload::ErasedBy {
                        device: by,
                        scope,
                        at,
                        receipt,
                    },
                ) => c
                    .erasures
                    .push((by, erased_scope(scope), at, receipt, None)),
                _ => return Err(corrupt(name, "a row's kind and payload differ".into())),
            }
            pulled += 1;
        }
        out.unreadable += unreadable;
        out.pulled += pulled;
        Ok(false)
    }
}
