//! The remote's compaction (`sync --compact`): a snapshot of this device's whole state, then
//! every segment that every device has applied (and every snapshot covers) is deleted.
//!
//! Each device writes its head (`heads/<device>`, signed: how far it applied each device's
//! segments) at the end of every sync. A compaction writes a snapshot
//! (`snapshots/<stamp>/<part>.snap`, then its manifest, `snapshots/<stamp>/manifest`, which
//! says how far it covers each device), reads the heads of every registered device and the
//! manifests of every snapshot, and deletes a device's segment only when every other device's
//! head and every snapshot cover it. A device registered but silent (no head yet) keeps every
//! segment. A device that never pulled starts from the latest complete snapshot. An erased
//! user's rows go with the segments that held them (and were unreadable before: their key is
//! gone); a snapshot holds only what is live.

use std::collections::BTreeMap;

use super::payload::{Counters, Gid, Payload};
use super::remote::Remote;
use super::segment::{self, Header, Kind, Row, RowKind};
use super::state::{self, SyncState};
use crate::crypt::ring::Label;
use crate::crypt::seal::{Sealer, Table};
use crate::error::Result;
use crate::item::MemoryId;
use crate::memory::Memory;

/// A snapshot read back: how far it covers each device, its parts, its size.
pub(crate) struct Snapshot {
    pub(crate) covers: Vec<(u64, String)>,
    pub(crate) parts: Vec<(Header, Vec<Row>)>,
    pub(crate) bytes: u64,
}

/// What a compaction did.
#[derive(Debug, Default)]
pub(super) struct Compacted {
    pub(super) deleted: usize,
    pub(super) snapshot_bytes: u64,
}

fn covers_of(h: &Header) -> BTreeMap<u64, String> {
    h.covers
        .iter()
        .filter_map(|(d, f)| u64::from_str_radix(d, 16).ok().map(|d| (d, f.clone())))
        .collect()
}

/// The latest complete snapshot (its manifest written, every part signed), if any.
pub(crate) fn latest_snapshot(
    remote: &Remote,
    seed: &[u8; 32],
) -> Result<Option<(String, Snapshot)>> {
    let listed = remote.list("snapshots")?;
    let mut stamps: Vec<&str> = listed
        .iter()
        .filter_map(|l| l.name.strip_prefix("snapshots/")?.strip_suffix("/manifest"))
        .collect();
    stamps.sort_unstable();
    'stamps: for stamp in stamps.into_iter().rev() {
        let manifest = format!("snapshots/{stamp}/manifest");
        let Some(m) = listed.iter().find(|l| l.name == manifest) else {
            continue;
        };
        let Some(bytes) = readable(remote.get(&m.name, m.size))? else {
            continue;
        };
        let head = match segment::decode(&bytes, seed) {
            Ok((h, _)) if h.is(Kind::Manifest) => h,
            _ => continue,
        };
        let mut snapshot = Snapshot {
            covers: covers_of(&head).into_iter().collect(),
            parts: Vec::new(),
            bytes: m.size,
        };
        let prefix = format!("snapshots/{stamp}/");
        let mut parts: Vec<_> = listed
            .iter()
            .filter(|l| l.name.starts_with(&prefix) && l.name.ends_with(".snap"))
            .collect();
        parts.sort_by(|a, b| a.name.cmp(&b.name));
        if parts.len() as u64 != head.through
            || (head.kind.is_some() && head.parts.len() != parts.len())
        {
            continue; // a part missing, or one too many
        }
        for (i, p) in parts.into_iter().enumerate() {
            let Some(bytes) = readable(remote.get(&p.name, p.size))? else {
                continue 'stamps;
            };
            // A manifest names its parts by digest (one written before it did: by kind).
            if head.kind.is_some() && head.parts[i] != segment::digest(&bytes) {
                continue 'stamps;
            }
            match segment::decode(&bytes, seed) {
                Ok(part) if part.0.is(Kind::Part) && part.0.device == head.device => {
                    snapshot.bytes += p.size;
                    snapshot.parts.push(part);
                }
                _ => continue 'stamps,
            }
        }
        return Ok(Some((manifest, snapshot)));
    }
    Ok(None)
}

/// The bytes `got` read, `None` for an object refused for itself (longer than any object a
/// device writes): it is passed over, and the sync goes on.
pub(crate) fn readable(got: Result<Vec<u8>>) -> Result<Option<Vec<u8>>> {
    match got {
        Ok(b) => Ok(Some(b)),
        Err(crate::error::Error::Corrupt { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Memory {
    /// How far this store applied each device's segments, its own included.
    fn cursors(&self, st: &SyncState) -> Result<BTreeMap<String, String>> {
        let mut covers: BTreeMap<String, String> = self
            .store()
            .meta_with_prefix(state::PULLED_PREFIX)?
            .into_iter()
            .map(|(k, v)| {
                (
                    k[state::PULLED_PREFIX.len()..].to_string(),
                    String::from_utf8_lossy(&v).into_owned(),
                )
            })
            .collect();
        if let Some(last) = &st.last_segment {
            covers.insert(state::hex(st.device), state::file_of(last).to_string());
        }
        Ok(covers)
    }

    /// A header of this device's, covering `covers` (a segment's is empty).
    pub(super) fn signed_header(
        &self,
        st: &SyncState,
        kind: Kind,
        through: u64,
        covers: BTreeMap<String, String>,
    ) -> Header {
        Header {
            device: state::hex(st.device),
            through,
            part: 0,
            kind: Some(kind),
            prev: None,
            parts: Vec::new(),
            model: self.admin().fingerprint().to_string(),
            dim: self.admin().embedder().dim(),
            covers,
        }
    }

    /// Writes this device's head: how far it applied each device's segments, and its own
    /// last segment.
    pub(super) fn write_head(
        &self,
        remote: &Remote,
        sealer: &Sealer,
        st: &SyncState,
    ) -> Result<()> {
        let mut header = self.signed_header(st, Kind::Head, st.pushed, self.cursors(st)?);
        // The last segment this device wrote (its number and digest): another device that
        // has applied less of it knows the tail it was not served.
        header.prev = st.last_chain_link();
        let bytes = segment::encode(&header, &[], &sealer.signing_seed()?);
        remote.put(&format!("heads/{}", state::hex(st.device)), bytes)
    }

    /// Whether a complete snapshot (its manifest signed by this ring) covers a device other
    /// than `me`.
    fn others_snapshot(&self, remote: &Remote, seed: &[u8; 32], me: u64) -> Result<bool> {
        for l in remote.list("snapshots")? {
            if !l.name.ends_with("/manifest") {
                continue;
            }
            if let Some(Ok((h, _))) =
                readable(remote.get(&l.name, l.size))?.map(|b| segment::decode(&b, seed))
            {
                if h.is(Kind::Manifest) && covers_of(&h).keys().any(|d| *d != me) {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Writes a snapshot of this store's state, then deletes what every device and every
    /// snapshot has passed (see the module's doc).
    pub(super) fn compact_remote(
        &self,
        remote: &Remote,
        sealer: &Sealer,
        st: &SyncState,
    ) -> Result<Compacted> {
        let store = self.store();
        let seed = sealer.signing_seed()?;
        if store.meta_with_prefix(state::PULLED_PREFIX)?.is_empty()
            && self.others_snapshot(remote, &seed, st.device)?
        {
            // This device never pulled (it waits for a snapshot's keys, or has not synced
            // since it joined) while a snapshot holds other devices' state: what compactions
            // deleted is in no store here, so a snapshot of this one would lack it, and a new
            // device starting from that snapshot would never get it. It compacts once it has
            // pulled.
            return Ok(Compacted::default());
        }
        let entries = store.sync_entries()?;
        let gid_of: BTreeMap<MemoryId, Gid> = entries
            .iter()
            .filter(|(_, e)| e.local != MemoryId::NONE)
            .map(|(g, e)| (e.local, *g))
            .collect();
        let mut rows: Vec<Row> = Vec::new();
        for (gid, e) in &entries {
            let payload = if e.tomb {
                match store
                    .meta(&state::tomb_prev_key(*gid))?
                    .and_then(|b| state::gid_of_bytes(&b))
                {
                    Some(supersedes) => Payload::ForgottenAfter {
                        gid: *gid,
                        at: e.meta,
                        supersedes,
                    },
                    None => Payload::Forgotten {
                        gid: *gid,
                        at: e.meta,
                    },
                }
            } else {
                let Some(item) = store.item(e.local)? else {
                    continue;
                };
                let Some((_, vector)) = store.vectors(&[e.local])?.pop() else {
                    continue;
                };
                let label = Label::of_user(item.user.as_deref());
                let p = Payload::Version {
                    gid: *gid,
                    // The version it was made from, as a push sends it (its predecessor here
                    // may have been forgotten since: the lineage still travels).
                    supersedes: crate::memory::lineage::stored_made_from(store, &item)?
                        .map(|l| gid_of.get(&l).copied().unwrap_or((st.device, l.get()))),
                    made: e.made,
                    meta: e.meta,
                    item: item.encode(),
                    vector: crate::store::encode_vector(&vector),
                    counters: Counters {
                        per_device: store
                            .sync_counts(*gid)?
                            .iter()
                            .map(|c| (c.device, c.count, c.sum, c.reinforced))
                            .collect(),
                        last: match store.side(crate::store::FEEDBACK, e.local)? {
                            Some(json) => {
                                serde_json::from_slice::<crate::vocabulary::FeedbackState>(&json)
                                    .map_err(|e| store.corrupt(format!("feedback record: {e}")))?
                                    .last
                            }
                            None => 0,
                        },
                    },
                };
                rows.push((
                    RowKind::Version,
                    sealer.seal(Table::Sync, state::ROW_RID, label, &p.encode())?,
                ));
                continue;
            };
            rows.push((
                RowKind::Forgotten,
                sealer.seal(
                    Table::Sync,
                    state::ROW_RID,
                    Label::of_user(None),
                    &payload.encode(),
                )?,
            ));
        }
        // The erasures this store made or carried out: a device that starts from the snapshot
        // carries them out too (the segments that brought them may be deleted below), so what
        // it wrote itself for an erased user before the erasure goes there as well.
        for (n, line) in store.receipts()? {
            let r = crate::crypt::verify_receipt(&line)
                .map_err(|e| store.corrupt(format!("erasure receipt {n}: {e}")))?;
            let scope = [r.user, r.agent, r.session];
            let payload = match store.meta(&state::receipt_echo_key(n))? {
                None => Payload::Erased {
                    scope,
                    at: r.at,
                    receipt: n,
                },
                Some(b) => match state::Echo::decode(&b) {
                    Some(e) => Payload::ErasedBy {
                        device: e.device,
                        scope,
                        at: e.at,
                        receipt: e.receipt,
                    },
                    // Carried out before erasures named their device here: its segment
                    // is still what brings it.
                    None => continue,
                },
            };
            rows.push((
                RowKind::Erased,
                sealer.seal(
                    Table::Sync,
                    state::ROW_RID,
                    Label::of_user(None),
                    &payload.encode(),
                )?,
            ));
        }
        let covers = self.cursors(st)?;
        let stamp = format!("{:020}-{}", self.inner.now().max(0), state::hex(st.device));
        let mut out = Compacted::default();
        let parts = segment::parts(&rows);
        let mut digests = Vec::with_capacity(parts.len());
        for (part, run) in parts.iter().enumerate() {
            let mut header = self.signed_header(st, Kind::Part, st.pushed, BTreeMap::new());
            header.part = part as u32;
            let bytes = segment::encode(&header, run, &seed);
            out.snapshot_bytes += bytes.len() as u64;
            digests.push(segment::digest(&bytes));
            remote.put(&format!("snapshots/{stamp}/{part:06}.snap"), bytes)?;
        }
        let part = parts.len() as u64;
        // The manifest last: a snapshot without one is not complete. Its `through` counts the
        // parts, and it signs each part's digest.
        let mut header = self.signed_header(st, Kind::Manifest, part, covers);
        header.parts = digests;
        let manifest = segment::encode(&header, &[], &seed);
        out.snapshot_bytes += manifest.len() as u64;
        remote.put(&format!("snapshots/{stamp}/manifest"), manifest)?;
        // What every other device's head and every snapshot cover, per device.
        let devices: Vec<u64> = remote
            .list("devices")?
            .iter()
            .filter_map(|l| u64::from_str_radix(state::file_of(&l.name), 16).ok())
            .collect();
        let mut views: Vec<(Option<u64>, BTreeMap<u64, String>)> = Vec::new();
        let heads = remote.list("heads")?;
        for d in &devices {
            let name = format!("heads/{}", state::hex(*d));
            let covers = match heads.iter().find(|l| l.name == name) {
                Some(l) => match readable(remote.get(&l.name, l.size))?
                    .map(|b| segment::decode(&b, &seed))
                {
                    Some(Ok((h, _))) if h.device == state::hex(*d) && h.is(Kind::Head) => {
                        covers_of(&h)
                    }
                    _ => BTreeMap::new(),
                },
                None => BTreeMap::new(), // silent so far: it keeps everything
            };
            views.push((Some(*d), covers));
        }
        let listed = remote.list("snapshots")?;
        for l in listed.iter().filter(|l| l.name.ends_with("/manifest")) {
            if let Some(Ok((h, _))) =
                readable(remote.get(&l.name, l.size))?.map(|b| segment::decode(&b, &seed))
            {
                if h.is(Kind::Manifest) {
                    views.push((None, covers_of(&h)));
                }
            }
        }
        for l in remote.list("segments")? {
            let Some((d, file)) = state::parse_segment_name(&l.name) else {
                continue;
            };
            let passed = views
                .iter()
                .filter(|(who, _)| *who != Some(d))
                .all(|(_, c)| c.get(&d).is_some_and(|f| file <= f.as_str()));
            if passed {
                remote.delete(&l.name)?;
                out.deleted += 1;
            }
        }
        // This device's older snapshots.
        let mine = format!("-{}", state::hex(st.device));
        for l in &listed {
            let Some(s) = l
                .name
                .strip_prefix("snapshots/")
                .and_then(|r| r.split('/').next())
            else {
                continue;
            };
            if s.ends_with(&mine) && s < stamp.as_str() {
                remote.delete(&l.name)?;
            }
        }
        Ok(out)
    }
}
