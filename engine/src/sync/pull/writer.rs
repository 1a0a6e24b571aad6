//! One pull's transaction ([`Writer`]): the rows of other devices written into this store by
//! the merge rules, with the items it changed so far, lineages joined and counters merged.

use memloop_index::UnitVector;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::Result;
use crate::item::{MemoryId, MemoryItem};
use crate::memory::lineage::removed_between;
use crate::memory::Inner;
use crate::merge::{setting_wins, Counts};
use crate::store::{Counter, SyncEntry, Tx};
use crate::sync::payload::{Clock, Counters, Gid};
use crate::sync::state;

/// One pull's transaction, with the items it changed so far.
pub(super) struct Writer<'a> {
    pub(super) tx: &'a mut Tx,
    /// The store's handle: its database and its forgetting policy, which applies other
    /// devices' reinforcements.
    pub(super) inner: &'a Inner,
    pub(super) staged: FxHashMap<MemoryId, MemoryItem>,
    /// Feedback records written so far (JSON), by local id.
    pub(super) feedback: FxHashMap<MemoryId, Vec<u8>>,
    pub(super) gone: FxHashSet<MemoryId>,
    pub(super) now: crate::clock::Timestamp,
    pub(super) device: u64,
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
            None => self.inner.store.item(id),
        }
    }

    fn gid(&mut self, id: MemoryId) -> Result<Gid> {
        Ok(self.tx.sync_gid_of(id)?.unwrap_or((self.device, id.get())))
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
            None => self.inner.store.side(crate::store::FEEDBACK, id),
        }
    }

    /// What sync carries of `item`, its feedback record included.
    fn carried(&self, item: &MemoryItem) -> Result<u64> {
        let fb = self.feedback_of(item.id)?;
        let fb = fb
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned());
        Ok(crate::sync::payload::carried(item, fb.as_deref()))
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
                    .map_err(|e| self.inner.store.corrupt(format!("feedback record: {e}")))?,
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
                self.inner.options.forgetting.reinforce(&mut item, self.now);
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
        Ok(e.local == MemoryId::NONE || e.carried == 0 || e.carried != self.carried(&item)?)
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
    pub(super) fn version(
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
            if e.local != MemoryId::NONE {
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
                Some(e) if e.local != MemoryId::NONE => Some(e.local),
                _ if g.0 == self.device => Some(MemoryId::new(g.1)),
                _ => None,
            };
            if let Some(l) = local.filter(|&l| Some(l) != item.supersedes) {
                self.tx
                    .set_meta(&crate::store::lineage_prev_key(id), &l.get().to_le_bytes())?;
            }
        }
        let e = SyncEntry {
            local: id,
            made,
            meta,
            echo_seq: self.tx.seq_after(),
            tomb: false,
            carried: crate::sync::payload::carried(&item, None),
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
                Some(e) if e.local != MemoryId::NONE => e.local,
                // One of this device's own versions never pushed.
                _ if g.0 == self.device => MemoryId::new(g.1),
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
            Some(e) if !e.tomb && e.local != MemoryId::NONE && self.get(e.local)?.is_some() => {
                Some(e.local)
            }
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
                Some(e) if e.local != MemoryId::NONE => e.local,
                _ if h.0 == self.device => MemoryId::new(h.1),
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

    pub(super) fn forgotten(
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
        if e.local != MemoryId::NONE {
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
                        self.tx.set_meta(&made_from, &it.id.get().to_le_bytes())?;
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
        let awaiting = if e.local == MemoryId::NONE {
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
