//! What a store remembers of its syncs, in its metadata: its device id, its clock, how far it
//! pushed, and how far it pulled each other device.

use super::payload::Clock;
use super::remote::Remote;
use crate::error::Result;
use crate::memory::Memory;
use crate::merge::{Hlc, HlcClock};
use crate::store::Tx;

/// The record key every sealed row of a segment is sealed under (its associated data).
pub(crate) const ROW_RID: &[u8] = b"sync-row";

const DEVICE: &str = "sync_device";
const CLOCK: &str = "sync_hlc";
const PUSHED: &str = "sync_pushed";
const RECEIPTS_PUSHED: &str = "sync_receipts_pushed";
const LAST_SEGMENT: &str = "sync_last_segment";
const SEQ: &str = "sync_seq";
const LAST_DIGEST: &str = "sync_last_digest";
/// The prefix of the metadata keys of how far each device was pulled.
pub(crate) const PULLED_PREFIX: &str = "sync_pulled:";

/// A store's sync state.
#[derive(Debug, Clone)]
pub(crate) struct SyncState {
    /// This store's device id.
    pub(crate) device: u64,
    /// Its hybrid logical clock.
    pub(crate) clock: HlcClock,
    /// The last local change pushed.
    pub(crate) pushed: u64,
    /// The last erasure receipt pushed.
    pub(crate) receipts_pushed: u64,
    /// The last segment this device wrote (`segments/…`), if any.
    pub(crate) last_segment: Option<String>,
    /// The last number a push of this device took for its segments' names (recorded before
    /// they are written, so no two pushes, a repeat of a failed one included, share one).
    pub(crate) seq: u64,
    /// The SHA-256 (hex) of [`SyncState::last_segment`]'s bytes, when recorded.
    pub(crate) last_digest: Option<String>,
}

/// A clock reading as rows and the store carry it.
pub(crate) fn reading(h: Hlc) -> Clock {
    (h.wall, h.counter, h.device)
}

/// The clock reading of `c`.
pub(crate) fn hlc(c: Clock) -> Hlc {
    Hlc {
        wall: c.0,
        counter: c.1,
        device: c.2,
    }
}

/// A device id as names carry it.
pub(crate) fn hex(device: u64) -> String {
    format!("{device:016x}")
}

/// The segment of `device`'s push through local change `through`, part `part`: names sort
/// in the order they must be applied.
pub(crate) fn segment_name(device: u64, through: u64, part: u32) -> String {
    format!("segments/{}/{through:020}-{part:06}.seg", hex(device))
}

/// The number and part a segment's file name (`<number>-<part>.seg`) carries.
pub(crate) fn number_of(file: &str) -> Option<(u64, u32)> {
    let number = file.get(..20)?.parse().ok()?;
    let part = file.get(21..27)?.parse().ok()?;
    Some((number, part))
}

/// The segment name's device and sortable rest, if it is one.
pub(crate) fn parse_segment_name(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_prefix("segments/")?;
    let (dev, file) = rest.split_once('/')?;
    let ok = file.len() == 20 + 1 + 6 + 4
        && file.ends_with(".seg")
        && file[..20].bytes().all(|b| b.is_ascii_digit())
        && &file[20..21] == "-"
        && file[21..27].bytes().all(|b| b.is_ascii_digit());
    (dev.len() == 16 && ok)
        .then(|| u64::from_str_radix(dev, 16).ok().map(|d| (d, file)))
        .flatten()
}

/// The metadata key of how far `device`'s segments were applied here (its last file name).
pub(crate) fn pulled_key(device: u64) -> String {
    format!("{PULLED_PREFIX}{}", hex(device))
}

/// The metadata key of the version forgotten version `gid` followed (its lineage after it is
/// forgotten): 16 bytes, device then id, little-endian.
pub(crate) fn tomb_prev_key(gid: (u64, u64)) -> String {
    format!("sync_tomb_prev:{}:{}", hex(gid.0), gid.1)
}

/// The metadata key of a version that stood beside forgotten version `gid` in its lineage
/// here when it was forgotten (an heir: the one after it, else the one before it; for a first
/// version any later version of the same lineage), so the versions that followed `gid` stay
/// one lineage wherever `gid` was forgotten first, and a way to the lineage through a
/// forgotten first version's heir goes on when that heir is forgotten in turn.
pub(crate) fn tomb_heir_key(gid: (u64, u64)) -> String {
    format!("sync_tomb_heir:{}:{}", hex(gid.0), gid.1)
}

/// The metadata key of a version that arrived here following version `gid` before `gid`
/// did (another device relayed it first): when `gid` arrives, the two lineages are one.
pub(crate) fn awaited_key(gid: (u64, u64)) -> String {
    format!("sync_awaited:{}:{}", hex(gid.0), gid.1)
}

/// A version id as [`tomb_prev_key`]'s value holds it.
pub(crate) fn gid_bytes(gid: (u64, u64)) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&gid.0.to_le_bytes());
    b[8..].copy_from_slice(&gid.1.to_le_bytes());
    b
}

/// The version id of [`gid_bytes`]'s bytes.
pub(crate) fn gid_of_bytes(b: &[u8]) -> Option<(u64, u64)> {
    let d = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
    let i = u64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
    (b.len() == 16).then_some((d, i))
}

/// The metadata key of the SHA-256 of the last segment of `device` applied here.
pub(crate) fn pulled_digest_key(device: u64) -> String {
    format!("sync_pulled_digest:{}", hex(device))
}

pub(crate) use crate::store::{receipt_echo_key, Echo};

/// The metadata key marking `device`'s erasure (its receipt `n`) as carried out here.
pub(crate) fn erasure_key(device: u64, n: u64) -> String {
    format!("sync_erasure:{}:{n}", hex(device))
}

impl SyncState {
    /// The last segment this device wrote, as the next one (and its head) name it: its number
    /// and the SHA-256 of its bytes.
    pub(crate) fn last_chain_link(&self) -> Option<(u64, String)> {
        self.last_segment
            .as_deref()
            .and_then(|n| number_of(file_of(n)))
            .zip(self.last_digest.clone())
            .map(|((n, _), d)| (n, d))
    }

    /// The state of `memory`'s store, its device id made (and registered in `remote`,
    /// create-if-absent, so no two devices take one) at its first sync.
    pub(crate) fn load(memory: &Memory, remote: &Remote) -> Result<SyncState> {
        let store = memory.store();
        let device = match store.meta(DEVICE)? {
            Some(b) => u64::from_le_bytes(
                b.as_slice()
                    .try_into()
                    .map_err(|_| store.corrupt(format!("meta `{DEVICE}` is not a u64")))?,
            ),
            None => {
                let device = loop {
                    let d = u64::from_le_bytes(crate::crypt::ring::random::<8>());
                    if d != 0
                        && remote
                            .put_new(&format!("devices/{}", hex(d)), b"memloop device\n".to_vec())?
                    {
                        break d;
                    }
                };
                memory
                    .inner
                    .write(|_, tx, _| tx.set_meta(DEVICE, &device.to_le_bytes()))?;
                device
            }
        };
        // A remote this device has not met yet learns of it (a second remote, or a bucket
        // made again): its registration is written if absent.
        remote.put_new(
            &format!("devices/{}", hex(device)),
            b"memloop device\n".to_vec(),
        )?;
        let last = match store.meta(CLOCK)? {
            Some(b) if b.len() == 20 => Hlc {
                wall: i64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
                counter: u32::from_le_bytes(b[8..12].try_into().unwrap_or_default()),
                device,
            },
            Some(_) => return Err(store.corrupt(format!("meta `{CLOCK}` is not a clock reading"))),
            None => Hlc::default(),
        };
        let last_segment = store
            .meta(LAST_SEGMENT)?
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        let pushed = store.meta_u64(PUSHED)?;
        // A store that synced before numbers were kept named its segments by the last change
        // they covered: its next number is past both.
        let named = last_segment
            .as_deref()
            .and_then(|n| number_of(file_of(n)))
            .map_or(0, |(n, _)| n);
        Ok(SyncState {
            device,
            clock: HlcClock::new(device, last),
            pushed,
            receipts_pushed: store.meta_u64(RECEIPTS_PUSHED)?,
            last_segment,
            seq: store.meta_u64(SEQ)?.max(named).max(pushed),
            last_digest: store
                .meta(LAST_DIGEST)?
                .map(|b| String::from_utf8_lossy(&b).into_owned()),
        })
    }

    /// Records `clock`'s last reading in `tx`.
    pub(crate) fn save_clock(&self, tx: &mut Tx, clock: HlcClock) -> Result<()> {
        let h = clock.last();
        let mut b = Vec::with_capacity(20);
        b.extend_from_slice(&h.wall.to_le_bytes());
        b.extend_from_slice(&h.counter.to_le_bytes());
        b.extend_from_slice(&h.device.to_le_bytes());
        tx.set_meta(CLOCK, &b)
    }

    /// Takes the next number for a push's segments and records it in `tx` (the number is
    /// `self.seq` once `tx` commits).
    pub(crate) fn take_number(&mut self, tx: &mut Tx) -> Result<u64> {
        self.seq += 1;
        tx.set_meta(SEQ, &self.seq.to_le_bytes())?;
        Ok(self.seq)
    }

    /// Records how far pushes got in `tx`.
    pub(crate) fn save_cursors(&self, tx: &mut Tx) -> Result<()> {
        tx.set_meta(PUSHED, &self.pushed.to_le_bytes())?;
        if let Some(name) = &self.last_segment {
            tx.set_meta(LAST_SEGMENT, name.as_bytes())?;
        }
        if let Some(d) = &self.last_digest {
            tx.set_meta(LAST_DIGEST, d.as_bytes())?;
        }
        tx.set_meta(RECEIPTS_PUSHED, &self.receipts_pushed.to_le_bytes())
    }
}

/// The file name part of segment name `name` (`segments/<device>/<file>`).
pub(crate) fn file_of(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segment_names_sort_in_push_order_and_parse_back() {
        let a = segment_name(0xab, 9, 0);
        let b = segment_name(0xab, 10, 0);
        let c = segment_name(0xab, 10, 1);
        assert!(a < b && b < c);
        assert_eq!(parse_segment_name(&c).map(|(d, _)| d), Some(0xab));
        assert_eq!(parse_segment_name("segments/00000000000000ab/x.seg"), None);
        assert_eq!(parse_segment_name("devices/00000000000000ab"), None);
        assert_eq!(number_of(file_of(&c)), Some((10, 1)));
    }
}
