//! Where the store meets the key ring: every value of an encrypted store passes through
//! [`Sealing`] on its way in and out; an unencrypted store's pass through unchanged.

use std::borrow::Cow;
use std::sync::Arc;

use crate::crypt::ring::Label;
use crate::crypt::seal::{Opened, Sealer, Table};
use crate::error::Result;

/// The store's sealer, if it is encrypted.
#[derive(Clone, Default)]
pub(crate) struct Sealing(pub(crate) Option<Arc<Sealer>>);

impl Sealing {
    /// True for an encrypted store.
    pub(crate) fn on(&self) -> bool {
        self.0.is_some()
    }

    /// The bytes to store for `plain`, a value of `table` under record key `rid`, of a memory
    /// of `user`.
    pub(crate) fn seal<'a>(
        &self,
        table: Table,
        rid: &[u8],
        user: Option<&str>,
        plain: &'a [u8],
    ) -> Result<Cow<'a, [u8]>> {
        match &self.0 {
            None => Ok(Cow::Borrowed(plain)),
            Some(s) => Ok(Cow::Owned(s.seal(
                table,
                rid,
                Label::of_user(user),
                plain,
            )?)),
        }
    }

    /// The bytes to store for a side value of the memory whose item is stored as `item` (it
    /// is sealed under the same key).
    pub(crate) fn seal_beside<'a>(
        &self,
        table: Table,
        rid: &[u8],
        item: &[u8],
        plain: &'a [u8],
    ) -> Result<Cow<'a, [u8]>> {
        match &self.0 {
            None => Ok(Cow::Borrowed(plain)),
            Some(s) => {
                let key = Sealer::key_of(item).ok_or_else(|| crate::crypt::KeyError::Tampered {
                    what: format!("item {}", hex::encode(rid)),
                })?;
                Ok(Cow::Owned(s.seal_under(table, rid, key, plain)?))
            }
        }
    }

    /// The plaintext of `stored`; `None` when its key was destroyed (an erased scope's record
    /// in a copy taken before the erasure).
    pub(crate) fn open<'a>(
        &self,
        table: Table,
        rid: &[u8],
        stored: &'a [u8],
    ) -> Result<Option<Cow<'a, [u8]>>> {
        match &self.0 {
            None => Ok(Some(Cow::Borrowed(stored))),
            Some(s) => Ok(match s.open(table, rid, stored)? {
                Opened::Plain(p) => Some(Cow::Owned(p)),
                Opened::Erased => None,
            }),
        }
    }

    /// The key under which the `hashes` table holds content hash `hash` of a memory of
    /// `user`; `None` when the store cannot hold one (an encrypted store without a key for
    /// that scope yet).
    pub(crate) fn hash_key(&self, user: Option<&str>, hash: &[u8; 32]) -> Option<[u8; 32]> {
        match &self.0 {
            None => Some(*hash),
            Some(s) => s.lookup(user, hash),
        }
    }

    /// The key under which the `subjects` table holds subject key `key` of a memory of
    /// `user` (hex of its HMAC in an encrypted store).
    pub(crate) fn subject_key(&self, user: Option<&str>, key: String) -> Option<String> {
        match &self.0 {
            None => Some(key),
            Some(s) => s.lookup(user, key.as_bytes()).map(hex::encode),
        }
    }
}

/// A memory id as a record key.
pub(crate) fn rid(id: u64) -> [u8; 8] {
    id.to_le_bytes()
}

/// The record key of a forgetting event: its time and memory id.
pub(crate) fn forget_rid(at: i64, id: u64) -> [u8; 16] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&at.to_le_bytes());
    k[8..].copy_from_slice(&id.to_le_bytes());
    k
}

/// The sealed-table code of a side table (`feedback` or `subject_state`).
pub(crate) fn side_table(table: redb::TableDefinition<u64, &[u8]>) -> Table {
    use redb::TableHandle;
    if table.name() == super::FEEDBACK.name() {
        Table::Feedback
    } else {
        Table::SubjectState
    }
}
