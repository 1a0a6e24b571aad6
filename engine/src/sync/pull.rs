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
use crate::item::{MemoryId, MemoryItem, Scope};
use crate::memory::lineage::removed_between;
use crate::memory::Memory;
use crate::merge::{erases, scope_fields, setting_wins, Counts};
use crate::store::{Counter, SyncEntry, Tx};
use crate::vocabulary::Synced;

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
                store: &inner.store,
                staged: FxHashMap::default(),
                feedback: FxHashMap::default(),
                gone: FxHashSet::default(),
                device,
                policy: &inner.options.forgetting,
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

/// One pull's transaction, with the items it changed so far.
struct Writer<'a> {
    tx: &'a mut Tx,
    store: &'a crate::store::Store,
    staged: FxHashMap<MemoryId, MemoryItem>,
    /// Feedback records written so far (JSON), by local id.
    feedback: FxHashMap<MemoryId, Vec<u8>>,
    gone: FxHashSet<MemoryId>,
    /// This store's forgetting policy, which applies other devices' reinforcements.
    policy: &'a crate::decay::ForgetPolicy,
    now: crate::clock::Timestamp,
    device: u64,
}

/// The longest lineage walked (a longer chain is a damaged one).
const MAX_CHAIN: usize = 100_000;

/// Where a version following a given one goes here ([`Writer::live_before`]).
#[derive(Default)]
struct Before {
    /// The held version it follows (local id).
    held: Option<MemoryId>,
    /// The first version of its lineage, forgotten here with no version after it held: the
    /// new version stands for that lineage.
    heirless: Option<Gid>,
    /// The version it follows, not arrived here yet (nor any version following it).
    unknown: Option<Gid>,
}

impl Before {
    fn held(id: MemoryId) -> Before {
        Before {
            held: Some(id),
            ..Before::default()
        }
    }
}

impl Writer<'_> {
    fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        if self.gone.contains(&id) {
            return Ok(None);
        }
        match self.staged.get(&id) {
            Some(i) => Ok(Some(i.clone())),
            None => self.store.item(id),
        }
    }

    fn gid(&mut self, id: MemoryId) -> Result<Gid> {
        Ok(self.tx.sync_gid_of(id)?.unwrap_or((self.device, id)))
    }

    fn made_of(&mut self, item: &MemoryItem) -> Result<Clock> {
        let gid = self.gid(item.id)?;
        Ok(match self.tx.sync_entry(gid)? {
            Some(e) if e.made != (0, 0, 0) => e.made,
            _ => (item.created, 0, self.device),
        })
    }

    /// The feedback record of local memory `id` (JSON), as this transaction left it.
    fn feedback_of(&self, id: MemoryId) -> Result<Option<Vec<u8>>> {
        match self.feedback.get(&id) {
            Some(j) => Ok(Some(j.clone())),
            None => self.store.side(crate::store::FEEDBACK, id),
        }
    }

    /// What sync carries of `item`, its feedback record included.
    fn carried(&self, item: &MemoryItem) -> Result<u64> {
        let fb = self.feedback_of(item.id)?;
        let fb = fb
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        Ok(super::payload::carried(item, fb.as_deref()))
    }

    /// Takes in the counters of version `gid` (held here as `local`): each device's by their
    /// maxima (each only ever grows), then the feedback record's count and sum become their
    /// totals (its latest level the row's when `newer`), and the reinforcements other devices
    /// made that this one has not taken in yet are applied by this store's forgetting policy.
    fn merge_counters(
        &mut self,
        gid: Gid,
        local: MemoryId,
        counters: &Counters,
        newer: bool,
        applied: &mut crate::memory::Applied,
    ) -> Result<()> {
        let unsent = self.unsent(gid, local)?;
        let known = self.tx.sync_counts(gid)?;
        for &(device, count, sum, reinforced) in &counters.per_device {
            let had = known
                .iter()
                .find(|k| k.device == device)
                .copied()
                .unwrap_or(Counter::of(device, Counts::default()));
            let read = Counts {
                feedback: count,
                level_sum: sum,
                reinforced,
            };
            let joined = Counter::of(device, had.counts().join(read));
            if joined != had {
                self.tx.set_sync_count(gid, &joined)?;
            }
        }
        let total = Counter::total(&self.tx.sync_counts(gid)?);
        let Some(mut item) = self.get(local)? else {
            return Ok(());
        };
        let mut changed = false;
        if total.count > 0 {
            let mut state: crate::vocabulary::FeedbackState = match self.feedback_of(local)? {
                Some(j) => serde_json::from_slice(&j)
                    .map_err(|e| self.store.corrupt(format!("feedback record: {e}")))?,
                None => Default::default(),
            };
            let before = (state.count, state.sum, state.last);
            state.count = total.count;
            state.sum = total.sum;
            if newer || state.last == 0 {
                state.last = counters.last;
            }
            if before != (state.count, state.sum, state.last) {
                let json = serde_json::to_vec(&state).expect("feedback always serialises");
                self.tx.put_side(crate::store::FEEDBACK, local, &json)?;
                self.feedback.insert(local, json);
                changed = true;
            }
        }
        if total.reinforced > item.reinforced {
            for _ in item.reinforced..total.reinforced {
                self.policy.reinforce(&mut item, self.now);
            }
            return self.put_as(item, None, unsent, applied);
        }
        if changed && !unsent {
            let mut e = self.tx.sync_entry(gid)?.unwrap_or_default();
            e.carried = self.carried(&item)?;
            self.tx.set_sync_entry(gid, &e)?;
        }
        Ok(())
    }

    /// Whether held version `id` (of sync id `gid`) has a change of this device's own that
    /// no push has sent yet: it was never pushed, what sync carries of it changed since it
    /// was last sent or applied, or it is marked to be sent again. Such a change is sent by
    /// the next push whatever a pull writes to the version meanwhile.
    fn unsent(&mut self, gid: Gid, id: MemoryId) -> Result<bool> {
        let Some(e) = self.tx.sync_entry(gid)? else {
            return Ok(true);
        };
        let Some(item) = self.get(id)? else {
            return Ok(false);
        };
        Ok(e.local == 0 || e.carried == 0 || e.carried != self.carried(&item)?)
    }

    /// Writes `item` (a pull's doing: a push does not send it back, unless it holds a change
    /// of this device's own not sent yet).
    fn put(
        &mut self,
        item: MemoryItem,
        vector: Option<&UnitVector>,
        applied: &mut crate::memory::Applied,
    ) -> Result<()> {
        let gid = self.gid(item.id)?;
        let unsent = self.unsent(gid, item.id)?;
        self.put_as(item, vector, unsent, applied)
    }

    /// [`Writer::put`], told whether the version holds a change not sent yet.
    fn put_as(
        &mut self,
        item: MemoryItem,
        vector: Option<&UnitVector>,
        unsent: bool,
        applied: &mut crate::memory::Applied,
    ) -> Result<()> {
        self.tx.put(&item, vector.map(|v| v.as_slice()))?;
        if !unsent {
            let gid = self.gid(item.id)?;
            let mut e = self.tx.sync_entry(gid)?.unwrap_or_default();
            e.local = item.id;
            e.echo_seq = self.tx.seq_after();
            e.carried = self.carried(&item)?;
            self.tx.set_sync_entry(gid, &e)?;
        }
        applied.items.push(item.clone());
        self.staged.insert(item.id, item);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn version(
        &mut self,
        gid: Gid,
        supersedes: Option<Gid>,
        (made, meta): (Clock, Clock),
        mut item: MemoryItem,
        vector: UnitVector,
        counters: Counters,
        applied: &mut crate::memory::Applied,
    ) -> Result<()> {
        if let Some(e) = self.tx.sync_entry(gid)? {
            if e.tomb {
                return Ok(()); // forgotten: a tombstone beats every copy
            }
            if e.local != 0 {
                // Held already: its metadata, last writer wins; its feedback counters join.
                let newer = setting_wins(state::hlc(meta), state::hlc(e.meta));
                if newer {
                    if let Some(mut local) = self.get(e.local)? {
                        crate::transfer::take_metadata(&mut local, &item);
                        local.valid_until = item.valid_until;
                        self.put(local, None, applied)?;
                        let mut e = self.tx.sync_entry(gid)?.unwrap_or(e);
                        e.meta = meta;
                        self.tx.set_sync_entry(gid, &e)?;
                    }
                }
                self.merge_counters(gid, e.local, &counters, newer, applied)?;
                return Ok(());
            }
        }
        item.id = self.tx.allocate_id()?;
        item.supersedes = None;
        item.superseded_by = None;
        // Its lineage: the versions before and after it by clock reading.
        let Before {
            held: pred,
            heirless,
            unknown,
        } = self.live_before(supersedes)?;
        let mut before = match pred {
            Some(p) => self.get(p)?,
            None => None,
        };
        let mut after: Option<MemoryItem> = None;
        if let Some(mut cur) = before.take() {
            for _ in 0..MAX_CHAIN {
                match cur
                    .superseded_by
                    .map(|n| self.get(n))
                    .transpose()?
                    .flatten()
                {
                    Some(next) => cur = next,
                    None => break,
                }
            }
            let mut at = Some(cur);
            for _ in 0..MAX_CHAIN {
                let Some(b) = at.take() else { break };
                if self.made_of(&b)? < made {
                    at = Some(b);
                    break;
                }
                let prev = b.supersedes;
                after = Some(b);
                at = match prev {
                    Some(p) => self.get(p)?,
                    None => None,
                };
            }
            before = at;
        }
        item.supersedes = before.as_ref().map(|b| b.id);
        item.superseded_by = after.as_ref().map(|a| a.id);
        let id = item.id;
        if let Some(mut b) = before {
            if !b.is_superseded() {
                self.tx
                    .unhash(&b.content_hash(), b.id, b.scope_fields()[0])?;
            }
            b.superseded_by = Some(id);
            self.put(b, None, applied)?;
        }
        if let Some(mut a) = after {
            a.supersedes = Some(id);
            self.put(a, None, applied)?;
        }
        self.tx.put(&item, Some(vector.as_slice()))?;
        // The version it was made from, where that one has a place here (held, or removed
        // here since): what a push or a snapshot sends it with, as its origin did, whatever
        // this store chains it after (`lineage::made_from`).
        if let Some(g) = supersedes {
            let local = match self.tx.sync_entry(g)? {
                Some(e) if e.local != 0 => Some(e.local),
                _ if g.0 == self.device => Some(g.1),
                _ => None,
            };
            if let Some(l) = local.filter(|&l| Some(l) != item.supersedes) {
                self.tx
                    .set_meta(&crate::store::lineage_prev_key(id), &l.to_le_bytes())?;
            }
        }
        let e = SyncEntry {
            local: id,
            made,
            meta,
            echo_seq: self.tx.seq_after(),
            tomb: false,
            carried: super::payload::carried(&item, None),
        };
        self.tx.set_sync_entry(gid, &e)?;
        if let Some(root) = heirless {
            // The first version of a lineage forgotten here before any version after it was:
            // this one stands for the lineage from now on.
            self.tx
                .set_meta(&state::tomb_heir_key(root), &state::gid_bytes(gid))?;
        }
        if let Some(u) = unknown {
            // Its predecessor has not arrived yet: it finds this lineage when it does.
            if self.tx.meta(&state::awaited_key(u))?.is_none() {
                self.tx
                    .set_meta(&state::awaited_key(u), &state::gid_bytes(gid))?;
            }
        }
        applied.inserted.push((id, vector));
        applied.items.push(item.clone());
        self.staged.insert(id, item);
        self.merge_counters(gid, id, &counters, true, applied)?;
        // Versions that arrived before this one, following it: one lineage with it.
        if let Some(f) = self.awaiting(gid)? {
            self.join(id, f, applied)?;
        }
        Ok(())
    }

    /// The local version a version following `gid` follows here: `gid`'s own, or, when it
    /// was forgotten, the one it followed (and so on), so a lineage stays whole whichever of
    /// its versions were forgotten and whichever device never held them.
    ///
    /// Where the way back ends at a forgotten first version, the lineage is found through
    /// its heir (a version that followed it); with none yet, that first version is returned
    /// beside `None`, and the caller's version becomes its heir.
    fn live_before(&mut self, mut at: Option<Gid>) -> Result<Before> {
        for _ in 0..MAX_CHAIN {
            let Some(g) = at else {
                return Ok(Before::default());
            };
            let local = match self.tx.sync_entry(g)? {
                Some(e) if e.tomb => {
                    at = self.meta_gid(&state::tomb_prev_key(g))?;
                    if at.is_none() {
                        return Ok(match self.heir_of(g)? {
                            Some(h) => Before::held(h),
                            None => Before {
                                heirless: Some(g),
                                ..Before::default()
                            },
                        });
                    }
                    continue;
                }
                Some(e) if e.local != 0 => e.local,
                // One of this device's own versions never pushed.
                _ if g.0 == self.device => g.1,
                // Not arrived here yet (another device relayed a version after it first): the
                // lineage of a version that arrived following it before, if any.
                _ => {
                    return Ok(match self.awaiting(g)? {
                        Some(f) => Before::held(f),
                        None => Before {
                            unknown: Some(g),
                            ..Before::default()
                        },
                    })
                }
            };
            // Held; or removed here (forgotten, swept or erased) before a push sent its
            // tombstone: then the one it followed, as the removal recorded it, or for a first
            // version the one after it.
            if self.get(local)?.is_some() {
                return Ok(Before::held(local));
            }
            at = match removed_between(self.tx, local)? {
                (Some(p), _) => Some(self.gid(p)?),
                (None, next) => {
                    let held = match next {
                        Some(n) => self.get(n)?.map(|_| n),
                        None => None,
                    };
                    // A first version removed here with no version after it held: the new
                    // version stands for its lineage (as for one forgotten by a tombstone),
                    // so versions that follow it later, from anywhere, join this one.
                    return Ok(Before {
                        heirless: held.is_none().then_some(g),
                        held,
                        ..Before::default()
                    });
                }
            };
        }
        Ok(Before::default())
    }

    /// A version id as a lineage key (`sync_tomb_*`, `sync_awaited`) holds it.
    fn meta_gid(&mut self, key: &str) -> Result<Option<Gid>> {
        Ok(self.tx.meta(key)?.and_then(|b| state::gid_of_bytes(&b)))
    }

    /// The held version (local id) that arrived here following version `gid` before `gid`
    /// did, if any.
    fn awaiting(&mut self, gid: Gid) -> Result<Option<MemoryId>> {
        let Some(f) = self.meta_gid(&state::awaited_key(gid))? else {
            return Ok(None);
        };
        Ok(match self.tx.sync_entry(f)? {
            Some(e) if !e.tomb && e.local != 0 && self.get(e.local)?.is_some() => Some(e.local),
            _ => None,
        })
    }

    /// Every version of the lineage of held version `id`, first to last (bounded: a longer
    /// chain is a damaged one).
    fn chain_of(&mut self, id: MemoryId) -> Result<Vec<MemoryItem>> {
        let Some(mut first) = self.get(id)? else {
            return Ok(Vec::new());
        };
        for _ in 0..MAX_CHAIN {
            match first.supersedes.map(|p| self.get(p)).transpose()?.flatten() {
                Some(p) if p.id != id => first = p,
                _ => break,
            }
        }
        let mut out = vec![first];
        for _ in 0..MAX_CHAIN {
            let next = match out.last().and_then(|l| l.superseded_by) {
                Some(n) => self.get(n)?,
                None => None,
            };
            match next {
                Some(n) if !out.iter().any(|o| o.id == n.id) => out.push(n),
                _ => break,
            }
        }
        Ok(out)
    }

    /// Makes the lineages of held versions `a` and `b` one: their versions chained by when
    /// each was made (the one made last current), as a device that saw them arrive in order
    /// chained them.
    fn join(
        &mut self,
        a: MemoryId,
        b: MemoryId,
        applied: &mut crate::memory::Applied,
    ) -> Result<()> {
        let mut chain = self.chain_of(a)?;
        if chain.is_empty() || chain.iter().any(|i| i.id == b) {
            return Ok(());
        }
        let other = self.chain_of(b)?;
        if other.is_empty() {
            return Ok(());
        }
        chain.extend(other);
        let mut keyed = Vec::with_capacity(chain.len());
        for item in chain {
            keyed.push((self.made_of(&item)?, item));
        }
        keyed.sort_by(|x, y| x.0.cmp(&y.0).then(x.1.id.cmp(&y.1.id)));
        let ids: Vec<MemoryId> = keyed.iter().map(|(_, i)| i.id).collect();
        for (k, (_, mut item)) in keyed.into_iter().enumerate() {
            let supersedes = k.checked_sub(1).map(|j| ids[j]);
            let superseded_by = ids.get(k + 1).copied();
            if item.supersedes == supersedes && item.superseded_by == superseded_by {
                continue;
            }
            if !item.is_superseded() && superseded_by.is_some() {
                self.tx
                    .unhash(&item.content_hash(), item.id, item.scope_fields()[0])?;
            }
            item.supersedes = supersedes;
            item.superseded_by = superseded_by;
            self.put(item, None, applied)?;
        }
        Ok(())
    }

    /// A live version of the lineage whose first version, `root`, was forgotten: its heir,
    /// or, as far as the heirs were forgotten or removed here too, the version that stood
    /// beside each when it went (its own heir, else the version it followed), each version
    /// visited once.
    fn heir_of(&mut self, root: Gid) -> Result<Option<MemoryId>> {
        let mut seen = FxHashSet::default();
        seen.insert(root);
        let mut at = self.meta_gid(&state::tomb_heir_key(root))?;
        for _ in 0..MAX_CHAIN {
            let Some(h) = at.filter(|h| seen.insert(*h)) else {
                return Ok(None);
            };
            let local = match self.tx.sync_entry(h)? {
                Some(e) if e.tomb => {
                    at = match self.meta_gid(&state::tomb_heir_key(h))? {
                        Some(n) => Some(n),
                        None => self.meta_gid(&state::tomb_prev_key(h))?,
                    };
                    continue;
                }
                Some(e) if e.local != 0 => e.local,
                _ if h.0 == self.device => h.1,
                _ => return Ok(None),
            };
            if self.get(local)?.is_some() {
                return Ok(Some(local));
            }
            // Removed here, its tombstone not sent yet: the version after it, else the one
            // before it, as the removal recorded them.
            at = match removed_between(self.tx, local)? {
                (_, Some(n)) | (Some(n), None) => Some(self.gid(n)?),
                (None, None) => None,
            };
        }
        Ok(None)
    }

    fn forgotten(
        &mut self,
        gid: Gid,
        at: Clock,
        prev: Option<Gid>,
        applied: &mut crate::memory::Applied,
    ) -> Result<()> {
        let mut e = self.tx.sync_entry(gid)?.unwrap_or_default();
        if e.tomb {
            return Ok(());
        }
        // The version it followed, kept for the versions that followed it.
        let mut before = prev;
        if e.local != 0 {
            if let Some(it) = self.get(e.local)? {
                if before.is_none() {
                    if let Some(p) = it.supersedes {
                        before = Some(self.gid(p)?);
                    }
                }
                // Its neighbours in the lineage close the gap it leaves.
                let prev = it.supersedes.map(|p| self.get(p)).transpose()?.flatten();
                let next = it.superseded_by.map(|n| self.get(n)).transpose()?.flatten();
                // The one after it, else the one before it, stands for it here: for a first
                // version, for its lineage; for any version, on the way to the lineage
                // through a forgotten first version whose heir it was (the version it was
                // sent with may be that first version, not its neighbour here).
                if let Some(s) = next.as_ref().or(prev.as_ref()) {
                    let heir = self.gid(s.id)?;
                    self.tx
                        .set_meta(&state::tomb_heir_key(gid), &state::gid_bytes(heir))?;
                }
                if let Some(mut p) = prev {
                    p.superseded_by = next.as_ref().map(|n| n.id);
                    self.put(p, None, applied)?;
                }
                if let Some(mut n) = next {
                    let made_from = crate::store::lineage_prev_key(n.id);
                    if self.tx.meta(&made_from)?.is_none() {
                        self.tx.set_meta(&made_from, &it.id.to_le_bytes())?;
                    }
                    n.supersedes = it.supersedes;
                    self.put(n, None, applied)?;
                }
                self.tx.delete(&it)?;
                applied.removed.push(it.id);
                self.staged.remove(&it.id);
                self.gone.insert(it.id);
            } else {
                // Removed here already (forgotten, swept or erased) and not sent yet: its
                // lineage as the removal recorded it.
                let (p, n) = removed_between(self.tx, e.local)?;
                if let (None, Some(p)) = (before, p) {
                    before = Some(self.gid(p)?);
                }
                if let Some(n) = n {
                    let heir = self.gid(n)?;
                    self.tx
                        .set_meta(&state::tomb_heir_key(gid), &state::gid_bytes(heir))?;
                }
            }
        }
        if let Some(b) = before {
            self.tx
                .set_meta(&state::tomb_prev_key(gid), &state::gid_bytes(b))?;
        }
        // Versions that arrived following it before it did (it never arrived here): they
        // follow the version it followed, or stand for its lineage.
        let awaiting = if e.local == 0 {
            self.awaiting(gid)?
        } else {
            None
        };
        e.tomb = true;
        e.meta = at;
        e.echo_seq = self.tx.seq_after();
        self.tx.set_sync_entry(gid, &e)?;
        if let Some(f) = awaiting {
            match before {
                Some(b) => {
                    if let Some(p) = self.live_before(Some(b))?.held {
                        self.join(p, f, applied)?;
                    }
                }
                // A first version: they stand for its lineage.
                None if self.tx.meta(&state::tomb_heir_key(gid))?.is_none() => {
                    let heir = self.gid(f)?;
                    self.tx
                        .set_meta(&state::tomb_heir_key(gid), &state::gid_bytes(heir))?;
                }
                None => {}
            }
        }
        Ok(())
    }
}
