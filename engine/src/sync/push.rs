//! A push: this device's changes since its last push, as sealed rows in signed segments.
//!
//! Order, so that a push killed anywhere loses nothing and the next one repeats it:
//! 1. one transaction records each new version's clock reading and each forgotten one's
//!    tombstone (so a repeat sends the same readings), and takes the push's number in this
//!    device's log;
//! 2. the segments are written, each atomically, under names of that number, which no other
//!    push of this device takes (a repeat takes a new one: an object another device may have
//!    read is never replaced);
//! 3. one transaction records how far the push got. Until it does, every change past the last
//!    recorded push, a forget included, is sent again by the next push.

use super::payload::{Counters, Gid, Payload};
use super::remote::Remote;
use super::segment::{self, Kind, RowKind};
use super::state::{self, SyncState};
use crate::crypt::ring::Label;
use crate::crypt::seal::{Sealer, Table};
use crate::error::Result;
use crate::item::MemoryId;
use crate::memory::Memory;
use crate::store::{Change, Counter};

/// What a push did.
#[derive(Debug, Default)]
pub(super) struct Pushed {
    pub(super) rows: usize,
    pub(super) segments: usize,
    pub(super) bytes: u64,
}

impl Memory {
    pub(super) fn push(
        &self,
        remote: &Remote,
        sealer: &Sealer,
        st: &mut SyncState,
    ) -> Result<Pushed> {
        let store = self.store();
        let dim = self.admin().embedder().dim();
        // Every change after the last push, from the change log; the whole store at a first
        // push of a store whose log was pruned before it was kept.
        let since = (st.pushed > 0 || store.meta_u64("pruned_through")? == 0).then_some(st.pushed);
        let changes = store.changes(since, dim, |_| true)?;
        let receipts: Vec<(u64, Vec<u8>)> = store
            .receipts()?
            .into_iter()
            .filter(|(n, _)| *n > st.receipts_pushed)
            .collect();
        let device = st.device;
        let now = self.inner.now();
        let mut rows: Vec<(RowKind, Vec<u8>)> = Vec::new();
        let mut clock = st.clock;
        let mut sent: Vec<(Gid, u64)> = Vec::new();
        let mut number = 0;
        self.inner.write(|_, tx, _| {
            for change in &changes.rows {
                match change {
                    Change::Upsert {
                        seq,
                        item,
                        vector,
                        feedback,
                    } => {
                        let gid = tx.sync_gid_of(item.id)?.unwrap_or((device, item.id.get()));
                        let mut entry = tx.sync_entry(gid)?.unwrap_or_default();
                        let carried = super::payload::carried(item, feedback.as_deref());
                        if entry.tomb
                            || (*seq != 0 && entry.echo_seq == *seq)
                            || (entry.local != MemoryId::NONE && entry.carried == carried)
                        {
                            // Forgotten; written here by a pull as it is; or only what each
                            // device keeps for itself changed (a recall's access time).
                            continue;
                        }
                        // What was carried is recorded once the segment holding it is
                        // written (step 3): a push killed before that sends it again.
                        sent.push((gid, carried));
                        if entry.local == MemoryId::NONE {
                            entry.local = item.id;
                            entry.made = state::reading(clock.tick(now));
                        }
                        entry.meta = state::reading(clock.tick(now));
                        let supersedes = match crate::memory::lineage::made_from(tx, item)? {
                            Some(l) => Some(gid_of(tx, l, device)?),
                            None => None,
                        };
                        let payload = Payload::Version {
                            gid,
                            supersedes,
                            made: entry.made,
                            meta: entry.meta,
                            item: item.encode(),
                            vector: crate::store::encode_vector(vector),
                            counters: own_counts(
                                store,
                                tx,
                                gid,
                                device,
                                item,
                                feedback.as_deref(),
                            )?,
                        };
                        rows.push((
                            RowKind::Version,
                            seal(sealer, Label::of_user(item.user.as_deref()), &payload)?,
                        ));
                        tx.set_sync_entry(gid, &entry)?;
                    }
                    Change::Delete { seq, id } => {
                        let gid = tx.sync_gid_of(*id)?.unwrap_or((device, id.get()));
                        let mut entry = tx.sync_entry(gid)?.unwrap_or_default();
                        if entry.tomb && entry.echo_seq == *seq {
                            continue; // a pull's tombstone: its device sent it
                        }
                        // Set by an earlier push that did not finish (the change is still
                        // past the last push recorded): sent again, with the same reading.
                        if !entry.tomb {
                            entry.tomb = true;
                            entry.meta = state::reading(clock.tick(now));
                        }
                        // The version it followed, recorded by the forget: sent with it, and kept
                        // here too, so a later version that followed it finds its lineage.
                        let prev = match tx.meta(&crate::store::forgotten_prev_key(*id))? {
                            Some(b) => match <[u8; 8]>::try_from(b.as_slice()) {
                                Ok(b) => {
                                    Some(gid_of(tx, MemoryId::new(u64::from_le_bytes(b)), device)?)
                                }
                                Err(_) => None,
                            },
                            None => None,
                        };
                        // The version after it, recorded by the forget: it stands for it
                        // here (for a first version, for the lineage).
                        if let Some(b) = tx.meta(&crate::store::forgotten_next_key(*id))? {
                            if let Ok(b) = <[u8; 8]>::try_from(b.as_slice()) {
                                let heir =
                                    gid_of(tx, MemoryId::new(u64::from_le_bytes(b)), device)?;
                                tx.set_meta(&state::tomb_heir_key(gid), &state::gid_bytes(heir))?;
                            }
                        }
                        let payload = match prev {
                            Some(supersedes) => {
                                tx.set_meta(
                                    &state::tomb_prev_key(gid),
                                    &state::gid_bytes(supersedes),
                                )?;
                                Payload::ForgottenAfter {
                                    gid,
                                    at: entry.meta,
                                    supersedes,
                                }
                            }
                            None => Payload::Forgotten {
                                gid,
                                at: entry.meta,
                            },
                        };
                        rows.push((
                            RowKind::Forgotten,
                            seal(sealer, Label::of_user(None), &payload)?,
                        ));
                        tx.set_sync_entry(gid, &entry)?;
                    }
                }
            }
            for (n, line) in &receipts {
                if tx_flag(tx, &state::receipt_echo_key(*n))? {
                    continue; // an erasure a pull carried out here: its device sent it
                }
                let r = crate::crypt::verify_receipt(line)
                    .map_err(|e| store.corrupt(format!("erasure receipt {n}: {e}")))?;
                let destroyed = r.destroyed_key.as_deref().and_then(|h| {
                    let mut id = [0u8; 8];
                    hex::decode_to_slice(h, &mut id).ok().map(|()| id)
                });
                let scope = [r.user, r.agent, r.session];
                let payload = match destroyed {
                    Some(destroyed) => Payload::ErasedKey {
                        scope,
                        at: r.at,
                        receipt: *n,
                        destroyed,
                    },
                    None => Payload::Erased {
                        scope,
                        at: r.at,
                        receipt: *n,
                    },
                };
                rows.push((
                    RowKind::Erased,
                    seal(sealer, Label::of_user(None), &payload)?,
                ));
            }
            if !rows.is_empty() {
                // Taken before anything is written: a repeat of this push, should it fail,
                // names its segments anew and never replaces one another device may have read.
                number = st.take_number(tx)?;
            }
            st.save_clock(tx, clock)
        })?;
        st.clock = clock;
        let mut pushed = Pushed {
            rows: rows.len(),
            ..Pushed::default()
        };
        let seed = sealer.signing_seed()?;
        // The chain: every part names the last segment of the last push recorded.
        let prev = st.last_chain_link();
        let mut written = Vec::new();
        for (part, run) in segment::parts(&rows).into_iter().enumerate() {
            let mut header = self.signed_header(st, Kind::Segment, number, Default::default());
            header.part = part as u32;
            header.prev = prev.clone();
            let bytes = segment::encode(&header, run, &seed);
            pushed.bytes += bytes.len() as u64;
            let name = state::segment_name(device, number, part as u32);
            let digest = segment::digest(&bytes);
            let size = bytes.len() as u64;
            remote.put(&name, bytes)?;
            written.push((name.clone(), size));
            st.last_segment = Some(name);
            st.last_digest = Some(digest);
            pushed.segments += 1;
        }
        // Recorded as sent only once the remote lists every segment whole.
        if !written.is_empty() {
            let listed = remote.list(&format!("segments/{}", state::hex(device)))?;
            for (name, size) in &written {
                if !listed.iter().any(|l| &l.name == name && l.size == *size) {
                    return Err(crate::error::Error::io(
                        std::path::Path::new(&format!("{}/{name}", remote.url)),
                        "confirm a write",
                        std::io::Error::other(
                            "the remote does not list the segment just written: it is sent again at the next sync",
                        ),
                    ));
                }
            }
        }
        let last_receipt = receipts.last().map_or(st.receipts_pushed, |(n, _)| *n);
        st.pushed = changes.through;
        st.receipts_pushed = last_receipt;
        self.inner.write(|_, tx, _| {
            for (gid, carried) in &sent {
                if let Some(mut e) = tx.sync_entry(*gid)? {
                    e.carried = *carried;
                    tx.set_sync_entry(*gid, &e)?;
                }
            }
            st.save_cursors(tx)
        })?;
        Ok(pushed)
    }
}

/// The counters of version `gid` as they travel: this device's (what the store counts beyond
/// the other devices' known counters: feedbacks, their levels, reinforcements) beside theirs.
fn own_counts(
    store: &crate::store::Store,
    tx: &mut crate::store::Tx,
    gid: Gid,
    device: u64,
    item: &crate::item::MemoryItem,
    feedback: Option<&str>,
) -> Result<Counters> {
    let state: crate::vocabulary::FeedbackState = match feedback {
        Some(json) => serde_json::from_str(json)
            .map_err(|e| store.corrupt(format!("feedback record: {e}")))?,
        None => Default::default(),
    };
    let mut known = tx.sync_counts(gid)?;
    known.retain(|c| c.device != device);
    let others = Counter::total(&known);
    let own = Counter {
        device,
        count: state.count.saturating_sub(others.count),
        sum: state.sum.saturating_sub(others.sum),
        reinforced: item.reinforced.saturating_sub(others.reinforced),
    };
    if own
        != (Counter {
            device,
            ..Counter::default()
        })
    {
        tx.set_sync_count(gid, &own)?;
        known.push(own);
    }
    Ok(Counters {
        per_device: known
            .iter()
            .map(|c| (c.device, c.count, c.sum, c.reinforced))
            .collect(),
        last: state.last,
    })
}

/// The id on every device of local version `id`.
fn gid_of(tx: &mut crate::store::Tx, id: MemoryId, device: u64) -> Result<Gid> {
    Ok(tx.sync_gid_of(id)?.unwrap_or((device, id.get())))
}

fn tx_flag(tx: &mut crate::store::Tx, key: &str) -> Result<bool> {
    Ok(tx.meta(key)?.is_some())
}

fn seal(sealer: &Sealer, label: Label, payload: &Payload) -> Result<Vec<u8>> {
    Ok(sealer.seal(Table::Sync, state::ROW_RID, label, &payload.encode())?)
}
