//! The key directory: the data keys a device made after the ring was carried to the others
//! (a user first seen there), published in the remote wrapped under the ring's sync
//! key-encryption key, which travels only inside an exported ring.
//!
//! After an erasure the sync key-encryption key is replaced: the new one is published
//! wrapped under the old, then the old is destroyed. Every device that applies the erasure
//! replaces it too. So once the devices have synced, none holds a key that unwraps what a
//! copy of the remote taken before the erasure holds: the erased user's data key is
//! unreadable in it. Two devices that replaced it at once are joined by the next device that
//! holds both: it replaces them by one, published under each.
//!
//! Layout: `keks/<old>/<new>` (a new sync key wrapped under an old one),
//! `keys/<kek>/<key>` (a data key, with its label, wrapped under sync key `kek`) and
//! `gone/<kek>/<key>` (a data key's id destroyed by an erasure, sealed under sync key `kek`).

use super::remote::Remote;
use crate::crypt::ring::{key_of_plain, key_plain, open_with, seal_with, DataKey, KeyId, Label};
use crate::crypt::seal::Sealer;
use crate::error::Result;
use crate::memory::Memory;
use crate::merge::key_erased;

/// The metadata key holding how many erasure receipts the store had at its last replacement
/// of the sync key.
const ROTATED: &str = "sync_rotated_receipts";

/// Longest chain of replacements followed in one sync.
const MAX_CHAIN: usize = 256;

fn kek_aad(ring: &[u8; 16], old: &KeyId, new: &KeyId) -> Vec<u8> {
    [b"memloop-sync-kek\0".as_slice(), ring, old, new].concat()
}

fn key_aad(ring: &[u8; 16], kek: &KeyId, key: &KeyId) -> Vec<u8> {
    [b"memloop-sync-key\0".as_slice(), ring, kek, key].concat()
}

fn gone_aad(ring: &[u8; 16], kek: &KeyId, key: &KeyId) -> Vec<u8> {
    [b"memloop-sync-gone\0".as_slice(), ring, kek, key].concat()
}

/// What `gone/<kek>/<key>` holds, sealed under the sync key (only a device of the ring makes
/// one, and its name is bound to it): a device that never held the key then reads the rows
/// sealed under it as erased, instead of waiting for it for good; a device that holds it (the
/// erasure's segment not reached it yet: withheld, or not pulled) never publishes it again.
const DESTROYED: &[u8] = b"memloop-sync-destroyed-key";

/// What [`Memory::take_keys`] read from the remote's key directory.
#[derive(Debug, Default)]
pub(super) struct TakenKeys {
    /// Keys held here that another device says an erasure destroyed: never published from
    /// here again, whether or not the erasure has been applied here yet.
    pub(super) gone: Vec<KeyId>,
}

fn id_of(hex_id: &str) -> Option<KeyId> {
    let mut id = [0u8; 8];
    hex::decode_to_slice(hex_id, &mut id).ok().map(|()| id)
}

/// The old and new sync key of replacement `keks/<old>/<new>`.
fn link_of(name: &str) -> Option<(KeyId, KeyId)> {
    let mut parts = name.split('/').skip(1);
    Some((parts.next().and_then(id_of)?, parts.next().and_then(id_of)?))
}

impl Memory {
    /// Takes in the sync keys and data keys the remote holds for this ring, and the keys it
    /// says were destroyed.
    pub(super) fn take_keys(&self, remote: &Remote, sealer: &Sealer) -> Result<TakenKeys> {
        let ring = sealer.ring_id();
        let mut taken = TakenKeys::default();
        // 1. Sync keys: follow the chains of replacements from the ones held.
        for _ in 0..MAX_CHAIN {
            let mut progress = false;
            for l in remote.list("keks")? {
                let Some((old, new)) = link_of(&l.name) else {
                    continue;
                };
                let Some(kek) = sealer.key(&old).filter(|k| k.label == Label::SyncKek) else {
                    continue;
                };
                if sealer.knows(&new) {
                    continue;
                }
                let Some(sealed) = super::compact::readable(remote.get(&l.name, l.size))? else {
                    continue; // refused for itself: too long, or behind a link
                };
                if let Some(plain) = open_with(&kek.key, &kek_aad(&ring, &old, &new), &sealed) {
                    if plain.len() == 32 {
                        let mut key = zeroize::Zeroizing::new([0u8; 32]);
                        key.copy_from_slice(&plain);
                        progress |= sealer.adopt(DataKey {
                            id: new,
                            label: Label::SyncKek,
                            key,
                            since: 0,
                        })?;
                    }
                }
            }
            if !progress {
                break;
            }
        }
        // 2. Data keys published under a sync key held.
        let bounds = self.inner.erasure_bounds()?;
        for kek in sealer.sync_keks()? {
            for l in remote.list(&format!("keys/{}", hex::encode(kek.id)))? {
                let Some(id) = l.name.rsplit('/').next().and_then(id_of) else {
                    continue;
                };
                if sealer.knows(&id) {
                    continue;
                }
                let Some(sealed) = super::compact::readable(remote.get(&l.name, l.size))? else {
                    continue; // refused for itself: too long, or behind a link
                };
                let plain = open_with(&kek.key, &key_aad(&ring, &kek.id, &id), &sealed);
                let key = plain
                    .and_then(|plain| key_of_plain(id, &zeroize::Zeroizing::new(plain)))
                    .filter(|k| matches!(k.label, Label::Unscoped | Label::User(_)));
                if let Some(key) = key {
                    // A key of a user made before an erasure of theirs seen here (another
                    // device made it before it saw the erasure): destroyed by that erasure,
                    // here as where it was made once that device carries it out, so nothing
                    // is sealed under it from here.
                    let erased = match &key.label {
                        Label::User(u) => key_erased(&bounds, u, key.since),
                        _ => false,
                    };
                    if erased {
                        sealer.note_destroyed(id, self.inner.now())?;
                    } else {
                        sealer.adopt(key)?;
                    }
                }
            }
            // 3. Keys destroyed by an erasure: noted when never held here; when held, kept
            // (until this device applies the erasure) but never published again.
            for l in remote.list(&format!("gone/{}", hex::encode(kek.id)))? {
                let Some(id) = l.name.rsplit('/').next().and_then(id_of) else {
                    continue;
                };
                let held = sealer.key(&id).is_some();
                if !held && sealer.knows(&id) {
                    continue; // destroyed here already
                }
                let Some(sealed) = super::compact::readable(remote.get(&l.name, l.size))? else {
                    continue;
                };
                if open_with(&kek.key, &gone_aad(&ring, &kek.id, &id), &sealed).as_deref()
                    != Some(DESTROYED)
                {
                    continue; // not sealed under this sync key for this name: believed not
                }
                if held {
                    taken.gone.push(id);
                } else {
                    sealer.note_destroyed(id, self.inner.now())?;
                }
            }
        }
        Ok(taken)
    }

    /// Replaces the sync key when an erasure happened here since the last replacement (or two
    /// are held), and publishes the data keys the remote lacks, but those `gone` (another
    /// device destroyed them: [`TakenKeys::gone`]). Run after the pull: an erasure it carried
    /// out has destroyed its user's key by then, so that key is never published under a sync
    /// key made after the erasure.
    pub(super) fn publish_keys(
        &self,
        remote: &Remote,
        sealer: &Sealer,
        gone: &[KeyId],
    ) -> Result<()> {
        let ring = sealer.ring_id();
        // 4. A new sync key after an erasure here, or to join two. Sync keys held on one chain
        // (an old one and the successor another device published for it, the link opened and
        // checked) are not two: the newest stands, and the ones it replaced are destroyed here
        // too. Only heads of different chains are joined, so the key settles after one
        // replacement instead of being replaced at every sync.
        let store = self.store();
        let receipts = store.receipts()?.len() as u64;
        let held = sealer.sync_keks()?;
        let heads = if held.len() > 1 {
            let links = self.held_links(remote, &ring, &held)?;
            held.iter()
                .filter(|k| !links.iter().any(|(old, _)| *old == k.id))
                .cloned()
                .collect()
        } else {
            held.clone()
        };
        let mut current = heads.first().cloned().unwrap_or_else(|| held[0].clone());
        if receipts <= store.meta_u64(ROTATED)? && heads.len() == 1 && held.len() > 1 {
            sealer.destroy_sync_keks_but(&current.id, self.inner.now())?;
        }
        if receipts > store.meta_u64(ROTATED)? || heads.len() != 1 {
            let new = sealer.add_sync_kek()?;
            for old in &held {
                let mut sealed = Vec::new();
                seal_with(
                    &old.key,
                    &kek_aad(&ring, &old.id, &new.id),
                    new.key.as_slice(),
                    &mut sealed,
                );
                let name = format!("keks/{}/{}", hex::encode(old.id), hex::encode(new.id));
                remote.put_new(&name, sealed)?;
            }
            sealer.destroy_sync_keks_but(&new.id, self.inner.now())?;
            self.inner
                .write(|_, tx, _| tx.set_meta(ROTATED, &receipts.to_le_bytes()))?;
            current = new;
        }
        // 5. Every data key of memories, under the current sync key, but those destroyed
        // elsewhere.
        let names = |dir: &str| -> Result<std::collections::HashSet<String>> {
            Ok(remote
                .list(dir)?
                .into_iter()
                .filter_map(|l| l.name.rsplit('/').next().map(str::to_string))
                .collect())
        };
        let dir = format!("keys/{}", hex::encode(current.id));
        let listed = names(&dir)?;
        for key in sealer.memory_keys() {
            if listed.contains(&hex::encode(key.id)) || gone.contains(&key.id) {
                continue;
            }
            let mut sealed = Vec::new();
            seal_with(
                &current.key,
                &key_aad(&ring, &current.id, &key.id),
                &key_plain(&key),
                &mut sealed,
            );
            remote.put_new(&format!("{dir}/{}", hex::encode(key.id)), sealed)?;
        }
        // 6. Every key destroyed here or said destroyed elsewhere, as destroyed, under the
        // current sync key: a device that never held one (its rows arrived before its key,
        // which an erasure destroyed before it was published) stops waiting for it, and one
        // that holds it never publishes it.
        let dir = format!("gone/{}", hex::encode(current.id));
        let listed = names(&dir)?;
        let mut ids = sealer.destroyed_ids();
        for id in gone {
            if !ids.contains(id) {
                ids.push(*id);
            }
        }
        for id in ids {
            if listed.contains(&hex::encode(id)) {
                continue;
            }
            let mut sealed = Vec::new();
            seal_with(
                &current.key,
                &gone_aad(&ring, &current.id, &id),
                DESTROYED,
                &mut sealed,
            );
            remote.put_new(&format!("{dir}/{}", hex::encode(id)), sealed)?;
        }
        Ok(())
    }

    /// The replacements `keks/<old>/<new>` between sync keys both held here whose wrapped key
    /// opens under the old one and is the new one: a name alone proves nothing.
    fn held_links(
        &self,
        remote: &Remote,
        ring: &[u8; 16],
        held: &[DataKey],
    ) -> Result<Vec<(KeyId, KeyId)>> {
        let mut out = Vec::new();
        for l in remote.list("keks")? {
            let Some((old, new)) = link_of(&l.name) else {
                continue;
            };
            let (Some(o), Some(n)) = (
                held.iter().find(|k| k.id == old),
                held.iter().find(|k| k.id == new),
            ) else {
                continue;
            };
            if old == new {
                continue;
            }
            let Some(sealed) = super::compact::readable(remote.get(&l.name, l.size))? else {
                continue;
            };
            let opened = open_with(&o.key, &kek_aad(ring, &old, &new), &sealed);
            if opened.is_some_and(|p| p.as_slice() == n.key.as_slice()) {
                out.push((old, new));
            }
        }
        Ok(out)
    }
}
