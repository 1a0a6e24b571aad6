//! The catalog record: the fields filters need, in a compact encoding that loads fast.
//!
//! Layout (little-endian): version u8 (2), kind u8, flags u8 (bit 0 superseded, bit 1
//! pinned), created i64, namespace (u16 length + UTF-8), tag count u16, tags (u16 length +
//! UTF-8 each), then the decay fields: importance f32, strength f64 (seconds), decay anchor
//! i64, tier u8, then (version 3) the scope: user, agent, session, each a presence byte, then
//! the name (u16 length + UTF-8) when the byte is 1; then the validity: valid_from i64 and a
//! presence byte followed by valid_until i64 when it is 1. Version 1 records (without decay
//! fields) and version 2 records (without scope and validity) are still read.

use crate::clock::Timestamp;
use crate::decay::DecayFields;
use crate::item::{Kind, MemoryItem, Tier};

const VERSION: u8 = 3;
pub(crate) const SUPERSEDED: u8 = 1;
pub(crate) const PINNED: u8 = 2;

/// The filterable fields of one item, borrowed from its encoding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CatalogRecord<'a> {
    pub(crate) kind: Kind,
    pub(crate) flags: u8,
    pub(crate) created: Timestamp,
    pub(crate) namespace: &'a str,
    pub(crate) tags: Vec<&'a str>,
    pub(crate) decay: DecayFields,
    /// User, agent, session.
    pub(crate) scope: [Option<&'a str>; 3],
    /// Valid from, ms.
    pub(crate) valid_from: Timestamp,
    /// Valid until, ms, if it ended.
    pub(crate) valid_until: Option<Timestamp>,
}

impl<'a> CatalogRecord<'a> {
    pub(crate) fn of(item: &'a MemoryItem) -> Self {
        let mut flags = 0;
        if item.is_superseded() {
            flags |= SUPERSEDED;
        }
        if item.pinned {
            flags |= PINNED;
        }
        CatalogRecord {
            kind: item.kind,
            flags,
            created: item.created,
            namespace: &item.namespace,
            tags: item.tags.iter().map(String::as_str).collect(),
            decay: DecayFields::of(item),
            scope: item.scope_fields(),
            valid_from: item.valid_from,
            valid_until: item.valid_until,
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = vec![VERSION, self.kind.code(), self.flags];
        out.extend_from_slice(&self.created.to_le_bytes());
        put_str(&mut out, self.namespace);
        out.extend_from_slice(&(self.tags.len().min(u16::MAX as usize) as u16).to_le_bytes());
        for t in self.tags.iter().take(u16::MAX as usize) {
            put_str(&mut out, t);
        }
        out.extend_from_slice(&self.decay.importance.to_le_bytes());
        out.extend_from_slice(&self.decay.strength.to_le_bytes());
        out.extend_from_slice(&self.decay.anchor.to_le_bytes());
        out.push(self.decay.tier as u8);
        for field in self.scope {
            match field {
                Some(name) => {
                    out.push(1);
                    put_str(&mut out, name);
                }
                None => out.push(0),
            }
        }
        out.extend_from_slice(&self.valid_from.to_le_bytes());
        match self.valid_until {
            Some(until) => {
                out.push(1);
                out.extend_from_slice(&until.to_le_bytes());
            }
            None => out.push(0),
        }
        out
    }

    pub(crate) fn decode(b: &'a [u8]) -> Option<Self> {
        let mut r = Reader(b);
        let version = r.u8()?;
        if !(1..=VERSION).contains(&version) {
            return None;
        }
        let kind = Kind::from_code(r.u8()?)?;
        let flags = r.u8()?;
        let created = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
        let namespace = r.str()?;
        let n = u16::from_le_bytes(r.take(2)?.try_into().ok()?);
        let tags = (0..n).map(|_| r.str()).collect::<Option<Vec<_>>>()?;
        let mut decay = if version == 1 {
            DecayFields {
                kind,
                importance: 0.5,
                strength: 0.0,
                anchor: created,
                pinned: flags & PINNED != 0,
                tier: Tier::Working,
                valid_until: None,
            }
        } else {
            DecayFields {
                kind,
                importance: f32::from_le_bytes(r.take(4)?.try_into().ok()?),
                strength: f64::from_le_bytes(r.take(8)?.try_into().ok()?),
                anchor: i64::from_le_bytes(r.take(8)?.try_into().ok()?),
                pinned: flags & PINNED != 0,
                tier: match r.u8()? {
                    0 => Tier::Working,
                    1 => Tier::LongTerm,
                    _ => return None,
                },
                valid_until: None,
            }
        };
        let mut scope = [None; 3];
        let (mut valid_from, mut valid_until) = (created, None);
        if version >= 3 {
            for field in &mut scope {
                *field = match r.u8()? {
                    0 => None,
                    1 => Some(r.str()?),
                    _ => return None,
                };
            }
            valid_from = i64::from_le_bytes(r.take(8)?.try_into().ok()?);
            valid_until = match r.u8()? {
                0 => None,
                1 => Some(i64::from_le_bytes(r.take(8)?.try_into().ok()?)),
                _ => return None,
            };
            decay.valid_until = valid_until.filter(|_| flags & SUPERSEDED == 0);
        }
        r.0.is_empty().then_some(CatalogRecord {
            kind,
            flags,
            created,
            namespace,
            tags,
            decay,
            scope,
            valid_from,
            valid_until,
        })
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // Namespaces and tags are short; anything longer than 64 KiB is cut at a char boundary.
    let mut end = s.len().min(u16::MAX as usize);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    out.extend_from_slice(&(end as u16).to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..end]);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn str(&mut self) -> Option<&'a str> {
        let n = u16::from_le_bytes(self.take(2)?.try_into().ok()?) as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MemoryId;
    use crate::item::NewMemory;

    #[test]
    fn round_trips_and_rejects_truncation() {
        let item = NewMemory::new("x")
            .kind(Kind::Task)
            .namespace("proj/ü")
            .tag("a")
            .tag("bb")
            .pinned(true)
            .scope(crate::item::Scope {
                user: Some("ana".into()),
                agent: None,
                session: Some("s1".into()),
            })
            .into_item(MemoryId::new(3), -5);
        let rec = CatalogRecord::of(&item);
        let bytes = rec.encode();
        assert_eq!(CatalogRecord::decode(&bytes), Some(rec));
        for cut in 0..bytes.len() {
            assert_eq!(CatalogRecord::decode(&bytes[..cut]), None);
        }
    }
}
