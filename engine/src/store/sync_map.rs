//! What sync (`crate::sync`) keeps in the store: each memory's id on every device, with the
//! hybrid logical clock reading of its version and metadata, the change that a pull wrote
//! (so a push does not send it back), and whether it was forgotten (the tombstone a later
//! copy meets). Written in the transactions that apply a pull; kept after the memory goes.

use redb::ReadableTable;

use super::{db, Tx, SYNC_COUNTS, SYNC_GIDS, SYNC_LOCALS};
use crate::error::Result;
use crate::item::MemoryId;
use crate::merge::Counts;

/// What this store knows of one memory version by its id on every device.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct SyncEntry {
    /// Its id here (0: never held here, only its tombstone).
    pub(crate) local: MemoryId,
    /// When the version was made: (wall ms, counter, device) of a hybrid logical clock.
    pub(crate) made: (i64, u32, u64),
    /// When its metadata was last set, on the same clock.
    pub(crate) meta: (i64, u32, u64),
    /// The local change a pull wrote it at (0: none): a push skips the memory while its last
    /// change is this one.
    pub(crate) echo_seq: u64,
    /// Forgotten: no copy of it is written again.
    pub(crate) tomb: bool,
    /// A hash of what sync carries of it (text, metadata) as last sent or applied: a push
    /// skips a memory whose change touched only what each device keeps for itself (access
    /// times, decay state).
    pub(crate) carried: u64,
}

/// The metadata key marking receipt `n` of this store as an erasure a pull carried out (its
/// value: [`Echo`]; `1` before erasures were bound by their own time).
pub(crate) fn receipt_echo_key(n: u64) -> String {
    format!("sync_receipt_echo:{n}")
}

/// An erasure another device made, as a sync carrying it out names it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Carried {
    /// The metadata key marking it carried out here.
    pub(crate) key: String,
    /// The device that made it.
    pub(crate) device: u64,
    /// Its receipt number there.
    pub(crate) receipt: u64,
}

/// The erasure another device made that this store's receipt carried out: its time (the
/// bound), that device, and its receipt number there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Echo {
    pub(crate) at: i64,
    pub(crate) device: u64,
    pub(crate) receipt: u64,
}

impl Echo {
    /// 24 bytes: `at`, `device`, `receipt`, little-endian.
    pub(crate) fn encode(&self) -> Vec<u8> {
        [
            self.at.to_le_bytes(),
            self.device.to_le_bytes(),
            self.receipt.to_le_bytes(),
        ]
        .concat()
    }

    /// [`Echo::encode`]'s bytes; `None` for any other value (the `1` of an older store).
    pub(crate) fn decode(b: &[u8]) -> Option<Echo> {
        let b: &[u8; 24] = b.try_into().ok()?;
        let word = |i: usize| <[u8; 8]>::try_from(&b[i * 8..i * 8 + 8]).expect("8 bytes");
        Some(Echo {
            at: i64::from_le_bytes(word(0)),
            device: u64::from_le_bytes(word(1)),
            receipt: u64::from_le_bytes(word(2)),
        })
    }
}

/// The metadata key of the local version that local memory `id`, forgotten here, followed:
/// a sync's push sends it with the forget, so every device keeps the lineage whole.
pub(crate) fn forgotten_prev_key(id: MemoryId) -> String {
    format!("forgotten_prev:{id}")
}

/// The metadata key of the local version that followed local memory `id` when `id` was
/// forgotten here (it stands for `id`: for a first version, for its lineage).
pub(crate) fn forgotten_next_key(id: MemoryId) -> String {
    format!("forgotten_next:{id}")
}

/// The metadata key of the local version that local memory `id` was made from, kept when
/// that version was removed here (forgotten, swept or erased): a sync sends `id` with the
/// version it was made from, so every device places it in the same lineage.
pub(crate) fn lineage_prev_key(id: MemoryId) -> String {
    format!("lineage_prev:{id}")
}

// local, two clock readings (wall, counter, device), echo_seq, tomb, carried.
const ENTRY_LEN: usize = 8 + 2 * (8 + 4 + 8) + 8 + 1 + 8;

impl SyncEntry {
    fn encode(&self) -> [u8; ENTRY_LEN] {
        let mut out = [0u8; ENTRY_LEN];
        let mut at = 0;
        let mut put = |b: &[u8]| {
            out[at..at + b.len()].copy_from_slice(b);
            at += b.len();
        };
        put(&self.local.get().to_le_bytes());
        for (wall, counter, device) in [self.made, self.meta] {
            put(&wall.to_le_bytes());
            put(&counter.to_le_bytes());
            put(&device.to_le_bytes());
        }
        put(&self.echo_seq.to_le_bytes());
        put(&[u8::from(self.tomb)]);
        put(&self.carried.to_le_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Option<SyncEntry> {
        if bytes.len() != ENTRY_LEN {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        let clock = |at: usize| (u64_at(at) as i64, u32_at(at + 8), u64_at(at + 12));
        Some(SyncEntry {
            local: MemoryId::new(u64_at(0)),
            made: clock(8),
            meta: clock(28),
            echo_seq: u64_at(48),
            tomb: match bytes[56] {
                0 => false,
                1 => true,
                _ => return None,
            },
            carried: u64_at(57),
        })
    }
}

/// One device's counters on a version: only that device raises them, and a version's totals
/// are their sums over the devices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counter {
    /// The device.
    pub(crate) device: u64,
    /// Feedbacks it gave.
    pub(crate) count: u32,
    /// The sum of their levels.
    pub(crate) sum: u32,
    /// Reinforcements it made (a recall serving it, good feedback).
    pub(crate) reinforced: u32,
}

impl Counter {
    /// `device`'s counters, `counts`.
    pub(crate) fn of(device: u64, counts: Counts) -> Counter {
        Counter {
            device,
            count: counts.feedback,
            sum: counts.level_sum,
            reinforced: counts.reinforced,
        }
    }

    /// Its totals as the merge rules weigh them.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            feedback: self.count,
            level_sum: self.sum,
            reinforced: self.reinforced,
        }
    }

    /// The totals of `counters` over their devices ([`Counts::add`]; the device left 0).
    pub(crate) fn total<'a>(counters: impl IntoIterator<Item = &'a Counter>) -> Counter {
        let sum = counters
            .into_iter()
            .fold(Counts::default(), |t, c| t.add(c.counts()));
        Counter::of(0, sum)
    }
}

/// The counters of version `gid` in `t`.
fn counters(
    t: &impl redb::ReadableTable<(u64, u64, u64), (u32, u32, u32)>,
    gid: (u64, u64),
) -> Result<Vec<Counter>> {
    let mut out = Vec::new();
    for entry in t
        .range((gid.0, gid.1, 0)..=(gid.0, gid.1, u64::MAX))
        .map_err(db)?
    {
        let (k, v) = entry.map_err(db)?;
        let (count, sum, reinforced) = v.value();
        out.push(Counter {
            device: k.value().2,
            count,
            sum,
            reinforced,
        });
    }
    Ok(out)
}

impl super::Store {
    /// Each device's counters on version `gid`.
    pub(crate) fn sync_counts(&self, gid: (u64, u64)) -> Result<Vec<Counter>> {
        let tx = self.read_tx()?;
        match tx.open_table(SYNC_COUNTS) {
            Ok(t) => counters(&t, gid),
            Err(redb::TableError::TableDoesNotExist(_)) => Ok(Vec::new()),
            Err(e) => Err(db(e)),
        }
    }

    /// Every version sync knows of, by its id on every device (a compaction's snapshot).
    pub(crate) fn sync_entries(&self) -> Result<Vec<((u64, u64), SyncEntry)>> {
        let tx = self.read_tx()?;
        let t = match tx.open_table(SYNC_GIDS) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(db(e)),
        };
        let mut out = Vec::new();
        for entry in t.iter().map_err(db)? {
            let (k, v) = entry.map_err(db)?;
            let e = SyncEntry::decode(v.value())
                .ok_or_else(|| self.corrupt(format!("sync entry of {:?}", k.value())))?;
            out.push((k.value(), e));
        }
        Ok(out)
    }
}

impl Tx {
    /// Records `entry` for version `gid` (and, for one another device made and held here, the
    /// way back from its local id).
    pub(crate) fn set_sync_entry(&mut self, gid: (u64, u64), entry: &SyncEntry) -> Result<()> {
        let tx = self.raw();
        tx.open_table(SYNC_GIDS)
            .map_err(db)?
            .insert(gid, entry.encode().as_slice())
            .map_err(db)?;
        if entry.local != MemoryId::NONE {
            tx.open_table(SYNC_LOCALS)
                .map_err(db)?
                .insert(entry.local.get(), gid)
                .map_err(db)?;
        }
        Ok(())
    }

    /// What this store knows of the version `gid` (device, id there), if anything.
    pub(crate) fn sync_entry(&mut self, gid: (u64, u64)) -> Result<Option<SyncEntry>> {
        let t = self.raw().open_table(SYNC_GIDS).map_err(db)?;
        let v = t.get(gid).map_err(db)?;
        Ok(v.and_then(|v| SyncEntry::decode(v.value())))
    }

    /// Each device's counters on version `gid`.
    pub(crate) fn sync_counts(&mut self, gid: (u64, u64)) -> Result<Vec<Counter>> {
        let t = self.raw().open_table(SYNC_COUNTS).map_err(db)?;
        counters(&t, gid)
    }

    /// Sets `c.device`'s counters on version `gid`.
    pub(crate) fn set_sync_count(&mut self, gid: (u64, u64), c: &Counter) -> Result<()> {
        self.raw()
            .open_table(SYNC_COUNTS)
            .map_err(db)?
            .insert((gid.0, gid.1, c.device), (c.count, c.sum, c.reinforced))
            .map_err(db)?;
        Ok(())
    }

    /// Marks local memory `id` to be sent again by the next push, even if what sync carries
    /// of it did not change (it was sealed again under a new key).
    pub(crate) fn send_again(&mut self, id: MemoryId) -> Result<()> {
        if let Some(gid) = self.sync_gid_of(id)? {
            if let Some(mut e) = self.sync_entry(gid)? {
                e.carried = 0;
                e.echo_seq = 0;
                self.set_sync_entry(gid, &e)?;
            }
        }
        Ok(())
    }

    /// The id on every device of local memory `id`, when another device made it (or this
    /// one pushed it).
    pub(crate) fn sync_gid_of(&mut self, id: MemoryId) -> Result<Option<(u64, u64)>> {
        let t = self.raw().open_table(SYNC_LOCALS).map_err(db)?;
        let v = t.get(id.get()).map_err(db)?;
        Ok(v.map(|v| v.value()))
    }
}

#[cfg(test)]
mod tests {
    use super::SyncEntry;
    use crate::item::MemoryId;

    #[test]
    fn an_entry_reads_back_and_a_damaged_one_does_not() {
        let e = SyncEntry {
            local: MemoryId::new(7),
            made: (1_700_000_000_000, 3, u64::MAX),
            meta: (-5, 0, 9),
            echo_seq: 42,
            tomb: true,
            carried: 99,
        };
        assert_eq!(SyncEntry::decode(&e.encode()), Some(e));
        assert_eq!(SyncEntry::decode(&e.encode()[1..]), None);
        let mut bad = e.encode();
        bad[56] = 2;
        assert_eq!(SyncEntry::decode(&bad), None);
    }
}
